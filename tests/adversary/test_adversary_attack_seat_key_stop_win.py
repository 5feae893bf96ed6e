"""Attack: the seat-key check (0abb260, client/match_loop.py ``_check_seat_key``) made into a win on time. The
honest host stops "before anything is at stake, nobody winning" when the relay's ``peer_key`` differs from the
joiner's HELLO — but it stops with the line waiting for its own COMMIT, and the cheater then takes the seat
back with its HELLO's key and has the host certified silent: ``on_time``, the cheater the winner.

Steps (a modified client with a second address — an accomplice, a phone, a VPN; an honest relay; an honest
host; the host's room has a move time under what is left of the grace, here 60 s):
1. The cheater joins the honest host's room from its second address proving an *alias* key. The host's
   client gets ``peer joined`` with ``peer_key`` = the alias; it has no joiner HELLO yet, so nothing to compare.
2. The cheater sends its HELLO (signed with its real key K) with the ``ctl`` flag: the host takes it (a
   flagged frame is applied) and the witness records nothing new for seat 1. The host's client now compares:
   the HELLO binds K, the seat was proved with the alias, ``s.match`` is None — it stops
   (``relay_seat_mismatch``, keep_seat False) before it sends its COMMIT, and closes. Its seat goes away: the
   grace (120 s) runs.
3. The alias seat sent no witnessed frame: after ``first_frame_timeout`` (30 s) the relay removes it and
   forgets its key; the room is back in the lobby.
4. The cheater joins from its own address proving K, and sends its HELLO again, unflagged. Its line (both
   HELLOs: the match id is bound) waits for the host's COMMIT (SEQ 2); the witness: seat 0's last frame its
   HELLO, seat 1's last frame the joiner's HELLO; both seat keys are the HELLOs' keys.
5. A move time later the witness certifies the host silent (or the grace ends ``opponent_left`` with the same
   certificate). Every step of §7.3 holds on the cheater's line: its TIMEOUT ends it ``on_time``
   (``opponent_left``), the cheater the winner; its transcript audits so. The host's own file holds its HELLO
   only; it was told nobody won.

Harm: an honest host loses on time a match it was told had stopped with no loser — at the cheater's will, for
any room whose move time is under about 90 s (the grace less the 30 s removal). Issue 10: a loss on time of
the honest player, caused by the check meant to protect it. (An honest joiner is safe: it stops on the host's
HELLO before signing its own, and no claim holds before both HELLOs bind the match id; the host, which owes the
COMMIT once it has taken the joiner's HELLO, is not.)

Suggested fix: a client that stops for ``relay_seat_mismatch`` must not leave a line that waits for it: stop
before taking the joiner's HELLO (compare the HELLO's key with ``peer_key`` before accepting it, and drop a
HELLO whose key is not the bound one), or check as soon as the HELLO arrives and *end* the match with nobody
winning (an end message, like ``settings_mismatch``'s abandoned line) instead of falling silent; and/or the
relay forgets nothing when it removes a joiner that sent frames (ctl or not), so the seat cannot be re-proved
with another key.
"""

from __future__ import annotations

import random

from relay_world import ROOM, World

from koikoi.engine import Settings
from koikoi.engine.bots import make_bot
from koikoi.protocol.audit import audit
from koikoi.protocol.session import MatchDecided, Session
from koikoi.testing import fixed_key

HONEST, CHEAT = 0, 1
MOVE = 60
ACCOMPLICE = "203.0.113.9"


def test_a_host_that_stopped_for_a_seat_key_mismatch_never_loses_on_time() -> None:
    w = World(b"x10i-seat-key-stop", MOVE)
    h, c = w.ends
    hide = [True]
    send = w.send

    def sender(end: object, d: bytes, ctl: bool) -> None:
        send(end, d, ctl or (end is c and hide[0]))  # type: ignore[arg-type]

    w.send = sender  # type: ignore[method-assign]
    w.connect(h)  # the honest host's room
    create = {"t": "create", "rounds": 6, "double_at_8": True, "move_time_s": MOVE, "room": ROOM}
    r = w.request(h, create, "created")
    assert r is not None
    w.room, h.token = r["room"], r["token"]
    alias = fixed_key(w.seed + b"-alias", CHEAT)
    c.cid = w.connect_raw(ACCOMPLICE)  # 1. the cheater joins from its second address with an alias key
    r = w.request(c, {"t": "join", "room": w.room} | w.prove(c.cid, alias), "joined")
    assert r is not None
    c.token, c.peer_check = r["token"], r["peer_check"]
    h.peer_check = next(x for x in h.replies if x.get("event") == "joined")["peer_check"]
    pk = bytes(w.key.verify_key)
    h.session = hs = Session.create(
        fixed_key(w.seed, 0), w.room, Settings(6), bytes(32), move_time_s=MOVE, relay_key=pk
    )
    c.session = cs = Session.join(fixed_key(w.seed, 1), w.room, bytes([1]) * 32, relay_key=pk)
    rng = random.Random(7)
    for end in w.ends:
        end.bot = make_bot("greedy", random.Random(rng.getrandbits(64)))
        assert end.session is not None
        w.note(end, end.session.start())
    for _ in range(20):  # 2. HELLOs (the cheater's flagged); the host compares and stops
        w.step()
    if h.stopped is None:  # (a client that does not stop here leaves the cheater nothing to work with)
        assert not cs.is_finished
        return
    assert h.stopped == "relay_seat_mismatch" and hs.match is None
    exp = cs.referee.expected()
    assert exp is not None and exp[0] == HONEST, "the cheater's line waits for the host"
    w.core.disconnected(w.now, h.cid)  # the host's program stops and closes
    h.cid = 0
    w.pump()
    t = w.now + w.core.cfg.first_frame_timeout + 1
    while w.now < t:  # 3. the alias seat is removed as silent
        w.now += 0.5
        w.core.tick(w.now)
        w.pump()
    if not any(x.get("reason") == "removed" for x in c.replies):  # (a relay that keeps a joiner that sent frames)
        assert not cs.is_finished
        return
    w.core.disconnected(w.now, c.cid)
    hide[0] = False
    w.connect(c)  # 4. it joins with its HELLO's key, from its own address
    r = w.request(c, {"t": "join", "room": w.room}, "joined")
    assert r is not None
    c.token, c.peer_check, c.received, c.sent = r["token"], r["peer_check"], 0, 0
    c.log.clear()
    w.note(c, cs.reconnected())  # its HELLO again, unflagged (its last frame)
    w.pump()
    t_end = w.now + w.core.cfg.grace
    while w.now < t_end and not cs.is_finished:  # 5. a move time later: the certificate
        w.now += 0.5
        w.core.tick(w.now)
        w.pump()
        closed = next((x for x in c.replies if x.get("t") == "room_closed"), None)
        if closed is not None:
            if isinstance(closed.get("cert"), bytes):
                w.note(c, cs.witnessed(closed["cert"]))
            break
        w.tick(c)  # (its session asks for certificates: relay_world requests them)
    e = cs.ended
    rep = audit(bytes(c.file))
    assert not (isinstance(e, MatchDecided) and e.outcome.winner == CHEAT), (
        f"the honest host stopped 'nobody winning' for a seat-key mismatch, and lost on time: the cheater's"
        f" transcript audits {rep.status}, winner {rep.result['winner']}, {rep.ending}"
    )
