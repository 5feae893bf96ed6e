"""Attack: a stranger squats the joiner seat of an honest host's room and sends a few hundred flagged frames
before the relay removes it as a joiner that "sent nothing"; the host's client now counts those frames as
received (``SeatTicket.received``) and drops the next joiner's frames, which the relay numbers from 1 again,
as duplicates — while the witness records them as sent. The honest joiner then wins ON TIME against the
honest host, who never heard it. Only the ``seat_let_again`` refusal (relay/core.py ``_no_certificate``)
stops it today: the seat keys alone do not (``keys_only``), so that refusal cannot simply be dropped (the fix
``test_adversary_attack_let_again_untimed.py`` suggests) before the count is fixed.

Steps (a stranger, or a cheater's accomplice, from any address; an honest relay; two honest players):
1. The honest host creates its room.
2. The stranger joins (its own key) and sends 600 frames, all with the ``ctl`` flag (paced under its rate
   limit), which the relay forwards to the host: the host's client counts ``received`` = 600. None is news to
   the witness, so after ``first_frame_timeout`` (30 s) the relay removes the stranger (``_remove_silent_joiner``
   sets seat 1's count back to 0) and the room is back in the lobby.
3. The honest joiner joins and plays: its frames are numbered 1, 2, … again. The relay takes and witnesses
   them; the host's client drops every one numbered up to 600 (``n <= ticket.received``, relay/client.py
   ``_pump``; the same in relay_world.py): the host never gets the joiner's HELLO.
4. The joiner's line waits for the host's COMMIT (SEQ 2). The host keeps asking for the joiner's HELLO
   (flagged RESENDs); the joiner answers each with its HELLO again (a repeat of its last frame: to the witness,
   an answer), burning a few numbers each time. The host is asked-and-answered, so after three move times the
   witness certifies it silent; the joiner's unmodified session claims: the honest host loses on time, and its
   opponent's file audits valid.

Harm (``keys_only``): a false loss on time for an honest player, caused by a stranger, through an honest relay
(both seats proved their HELLO keys: the key check cannot see it). Today (``relay_refuses``) the room certifies
nothing, so nobody loses — but the stranger's squat still leaves the honest pair deaf for hundreds of frames
and untimed for good.

Suggested fix: when a seat is let again, the other seat's client must forget its count: the relay's ``peer
joined`` event could carry ``sent`` (the count the relay will give the new seat's first frame, i.e. 0) and
``RelayClient`` set ``ticket.received`` from it (a client that sees ``peer joined`` after ``peer left`` resets
it); or the relay numbers the new joiner's frames on from the removed joiner's count. Then ``seat_let_again``
can go (see ``test_adversary_attack_let_again_untimed.py``).
"""

from __future__ import annotations

import random

import pytest
from relay_world import ROOM, World, envelope

from koikoi.engine import Settings
from koikoi.engine.bots import make_bot
from koikoi.protocol.audit import audit
from koikoi.protocol.framing import encode
from koikoi.protocol.session import MatchDecided, Session
from koikoi.relay.certify import Certifier
from koikoi.testing import fixed_key

HOST, JOINER = 0, 1
MOVE = 20
SQUAT = 600


@pytest.mark.parametrize("guard", ["relay_refuses", "keys_only"])
def test_a_squatter_s_frames_never_make_the_honest_host_deaf_to_the_next_joiner(
    guard: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if guard == "keys_only":  # the relay certifies here after all: the seat keys alone must defeat the attack
        monkeypatch.setattr(Certifier, "refusal", lambda self, room, silent: None)
    w = World(b"x10h-stale-count", MOVE)
    h, j = w.ends
    w.connect(h)  # 1. the honest host's room
    create = {"t": "create", "rounds": 6, "double_at_8": True, "move_time_s": MOVE, "room": ROOM}
    r = w.request(h, create, "created")
    assert r is not None
    w.room, h.token = r["room"], r["token"]
    squat = w.connect_raw("203.0.113.9")  # 2. the stranger, its frames all flagged
    w.core.message(w.now, squat, encode({"t": "join", "room": w.room} | w.prove(squat, fixed_key(b"squat", 1))))
    for n in range(1, SQUAT + 1):
        w.now += 0.04
        w.core.message(w.now, squat, envelope(n, b"squat" + n.to_bytes(2, "big"), True))
        w.pump()
    t = w.now + w.core.cfg.first_frame_timeout + 1
    while w.now < t:
        w.now += 0.5
        w.core.tick(w.now)
        w.pump()
    if not any(x.get("event") == "left" for x in h.replies):
        # the relay keeps a joiner that sent any frame, flagged or not (since the x10i attacks): no second
        # joiner, nothing stale. (With the removal back, the rest of the test checks the count's reset.)
        assert w.core.rooms[w.room].seats[1].in_count == SQUAT
        return
    assert h.received == SQUAT, "the host's client counted the stranger's frames"
    w.connect(j)  # 3. the honest joiner
    r = w.request(j, {"t": "join", "room": w.room}, "joined")
    assert r is not None
    j.token, j.peer_check = r["token"], r["peer_check"]
    pk = bytes(w.key.verify_key)
    h.session = hs = Session.create(
        fixed_key(w.seed, 0), w.room, Settings(6), bytes(32), move_time_s=MOVE, relay_key=pk
    )
    j.session = js = Session.join(fixed_key(w.seed, 1), w.room, bytes([1]) * 32, relay_key=pk)
    rng = random.Random(7)
    for end in w.ends:
        end.bot = make_bot("greedy", random.Random(rng.getrandbits(64)))
        assert end.session is not None
        w.note(end, end.session.start())
    t_end = w.now + 20 * MOVE
    while w.now < t_end and not (hs.is_finished or js.is_finished):  # 4. both honest clients, on the clock
        if w.step():
            continue
        w.core.tick(w.now)
        w.tick(h)
        w.tick(j)
    lost = [
        (end.seat, ev.outcome)
        for end in w.ends
        for ev in end.events
        if isinstance(ev, MatchDecided) and ev.outcome.status == "on_time"
    ]
    rep = audit(bytes(j.file)) if lost else None
    assert not lost, (
        f"an honest player lost on time after a stranger's squat ({guard}): {lost[0]}; the joiner's file audits"
        f" {rep.status if rep else None}; the host heard {hs.referee.next_seq} messages, the joiner"
        f" {js.referee.next_seq}; the host's client dropped frames numbered up to {SQUAT}"
    )
