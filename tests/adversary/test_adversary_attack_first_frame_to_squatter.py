"""Attack: a seat's first frame, even flagged, is its last at the witness (``witness_frame``, 651abad) — but a
cheating HOST's first frame can go to someone else than the honest joiner: it sends it while its room waits,
has its own accomplice take the joiner seat (the frame is flushed to it), and lets the relay remove the
accomplice as a silent joiner after 30 s. The host's witness clock is not reset (only the joiner's is,
``_remove_silent_joiner``), so that frame stays the host's last; the honest joiner that comes next never got
it, and the host sends every later frame flagged: no certificate of its silence can ever be cited.

Steps (a modified host with a second connection; an honest relay; an honest joiner):
1. The cheater creates a room and sends one small junk frame (flagged or not: the witness makes the seat's
   first frame its last either way). It waits in the room's buffer for seat 1.
2. Its accomplice joins from another connection (any key) — the junk is flushed to it — and says nothing.
   After ``first_frame_timeout`` (30 s) the relay removes it; the room is back in the lobby; nothing the honest
   joiner can see.
3. The honest player joins and plays; the host plays normally but with every frame flagged (HELLO, COMMIT,
   REVEAL, moves): the honest session applies them (§5.2); the witness's last frame of seat 0 stays the junk.
4. When losing, the host stops at its turn (``silent``) or leaves (``gone``). Every certificate names the junk
   as seat 0's last frame; the honest joiner never had it (its ``_dropped`` stores are empty of it): rejected for
   ever, and the room's ``opponent_left`` certificate fails the same way.

Control (checked by hand): with no accomplice (step 2 left out) the junk is delivered to the honest joiner, who
cites it, and the host loses on time.

Harm: a cheating host escapes every loss on time at will (issue 10), at the cost of 30 s of waiting before the
match.

Suggested fix: when the relay removes a silent joiner (or lets the joiner seat again for any reason), forget
the host's witness state too — at least its ``last_hash``/``last_at``/``seen``/``recent``/``copies`` — so that a
frame delivered to an earlier occupant never names the host's last frame against a later one (the host's next
frame, flagged or not, then becomes its last, and an honest host always sends its HELLO again unflagged to the
new joiner); or refuse (drop, undelivered and unwitnessed) frames from the host while no joiner holds seat 1.
"""

from __future__ import annotations

import random

import pytest
from relay_world import End, World

from koikoi.engine import Settings
from koikoi.engine.bots import make_bot
from koikoi.protocol.framing import encode
from koikoi.protocol.session import CertificateRejected, MatchDecided, Session
from koikoi.testing import fixed_key

CHEAT, HONEST = 0, 1
MOVE = 20


@pytest.mark.parametrize("how", ["silent", "gone"])
def test_a_host_whose_first_frame_went_to_a_squatter_still_loses_on_time(how: str) -> None:
    w = World(b"x10j-first-frame-squatter-" + how.encode(), MOVE)
    c, h = w.ends[CHEAT], w.ends[HONEST]
    send = w.send

    def sender(end: End, d: bytes, ctl: bool) -> None:
        send(end, d, ctl or end is c)  # 3. every frame of the host flagged

    w.send = sender  # type: ignore[method-assign]
    w.connect(c)  # 1. the cheater's room, and its first frame
    create = {"t": "create", "rounds": 6, "double_at_8": True, "move_time_s": MOVE, "room": w.room}
    r = w.request(c, create, "created")
    assert r is not None
    w.room, c.token = r["room"], r["token"]
    send(c, b"\x01junk", True)
    w.pump()
    squat = w.connect_raw("203.0.113.9")  # 2. its accomplice takes seat 1, gets the junk, says nothing
    w.core.message(w.now, squat, encode({"t": "join", "room": w.room} | w.prove(squat, fixed_key(b"squat", 1))))
    w.pump()
    t = w.now + w.core.cfg.first_frame_timeout + 1
    while w.now < t:
        w.now += 0.5
        w.core.tick(w.now)
        w.pump()
    assert w.core.rooms[w.room].seats[1].token_hash is None, "the relay removed the silent joiner"
    c.log.clear()  # (the relay numbers the host's frames from 0 again for the next joiner: a modified client
    c.sent = 0  # sends its HELLO there, not the junk again)
    pk = bytes(w.key.verify_key)
    c.session = cs = Session.create(
        fixed_key(w.seed, 0), w.room, Settings(6), bytes(32), move_time_s=MOVE, relay_key=pk
    )
    h.session = hs = Session.join(fixed_key(w.seed, 1), w.room, bytes([1]) * 32, relay_key=pk)
    w.connect(h)  # 3. the honest player joins (its session started before it reads any frame: client/match_loop.py)
    h.held = []
    r = w.request(h, {"t": "join", "room": w.room}, "joined")
    assert r is not None
    h.token, h.peer_check = r["token"], r["peer_check"]
    c.peer_check = [x for x in c.replies if x.get("event") == "joined"][-1]["peer_check"]
    rng = random.Random(7)
    for x in w.ends:
        x.bot = make_bot("greedy", random.Random(rng.getrandbits(64)))
    w.note(h, hs.start())
    held, h.held = h.held, None
    for d, ctl in held:
        w.note(h, hs.receive(d, ctl=ctl))
    w.note(c, cs.start())
    for _ in range(20_000):  # the host plays, then stops at one of its turns in play
        if cs.my_turn and cs.referee.next_seq >= 12 and not w.core.out:
            break
        assert w.step()
    c.silent = True  # 4.
    if how == "gone":
        w.core.disconnected(w.now, c.cid)
        c.cid = 0
    t_end = w.now + w.core.cfg.grace + 10 * MOVE
    while w.now < t_end and not hs.is_finished:  # the honest joiner asks for certificates
        w.now += 0.5
        w.core.tick(w.now)
        w.pump()
        closed = [x for x in h.replies if x.get("t") == "room_closed"]
        if closed:
            if isinstance(closed[0].get("cert"), bytes):
                w.note(h, hs.witnessed(closed[0]["cert"]))
            break
        w.tick(h)
    e = hs.ended
    why = [ev.reason for ev in h.events if isinstance(ev, CertificateRejected)]
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"the host's first frame went to a squatter the relay then removed; every later frame flagged, silent"
        f" ({how}) for {10 * MOVE} s, it never lost: the honest session ended {e}; last of {len(why)}"
        f" certificates rejected: {why[-1] if why else None!r}"
    )
