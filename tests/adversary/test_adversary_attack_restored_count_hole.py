"""Attack: in a room the relay rebuilt after a restart, a count set forward and then back leaves a hole in the
honest client's frame numbering that nothing mends (relay/core.py ``_attach``, relay/client.py ``resume`` /
``_resend``), with an honest relay (restarted by a deploy: no relay lie).

1. The relay restarts (same key; rooms are rebuilt from the first ``resume``). The cheater resumes first and says
   it got ``received`` = S + 100, S being the number of frames the honest seat really sent. In a rebuilt room the
   honest seat's count is unknown (``in_count`` None), so the clamp of 4b74d2d (``min(received, other.in_count)``)
   does not apply: the relay sets the honest seat's count to S + 100.
2. The honest client resumes; the relay says ``received`` = S + 100, more than it sent, and the client "numbers
   on from there" (``ticket.sent = received``, relay/client.py ``resume``) — keeping its resend log 1 … S:
   S+1 … S+100 are numbers it never used (the hole). Its session's RESEND and re-sent messages go out as
   S+101 … and are witnessed.
3. The cheater resumes again saying ``received`` = 0. ``_attach`` sets the honest seat's count back to
   ``max(0, highest - MAX_REWIND)``, inside the hole, and tells it (``peer back``) to send again from there.
4. The honest client resends what its log holds past that point: only S+101 … (its log's first entry is 1, so
   no ``resume_gap``), which the relay drops as "ahead of a resend" (n != in_count + 1) — and so every frame it
   sends from then on, for ever: a later resume of its own gets the same count back and resends the same
   frames. Nothing of the honest seat reaches the witness again.
5. After 3 move times the witness certifies the honest seat silent; the cheater's session sends the TIMEOUT: its
   file audits valid, the cheater the winner.

Harm: a false WIN on time for a modified client whenever the relay restarts during a match (a deploy); the
honest side could not have been silent by choice.

The fix (relay/core.py): a seat's count as the relay told it at its last resume is a floor (``Seat.floor``):
its client numbers on from there, so the other seat's resume never sets the count back below it.
"""

from __future__ import annotations

from relay_world import World

from koikoi.protocol.audit import audit
from koikoi.relay.core import RelayConfig, RelayCore

HONEST, CHEAT = 0, 1
MOVE = 20


def test_a_count_set_forward_then_back_in_a_rebuilt_room_never_wins_on_time() -> None:
    world = World(b"x10e-restored-count-hole", MOVE)
    world.open()
    h, c = world.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None
    for _ in range(20_000):  # a while into the match
        if h.sent >= 12 and not world.core.out:
            break
        assert world.step()
    assert not hs.is_finished
    s = h.sent

    world.core = RelayCore(RelayConfig(), key=world.key)  # 1. the relay restarts (same key, rooms rebuilt)
    h.cid = c.cid = 0
    world.now += 1
    c.silent = True  # (the rebuilt room does not know the cheater's count yet: it numbers on when told)
    r1 = world.resume(c, received=s + 100)
    c.silent = False
    world.now += 1
    world.resume(h)  # 2. told S + 100, it numbers on from there
    assert h.sent > s + 100 and not any(s < n <= s + 100 for n, _, _ in h.log)
    world.note(c, cs.reconnected(own_frames=r1["frames"]))  # (the cheater's session as after any resume)
    world.pump()

    world.core.disconnected(world.now, c.cid)  # 3. it resumes again, saying it got nothing
    c.cid = 0
    world.now += 1
    world.resume(c, received=0)

    t_end = world.now + 8 * MOVE  # 4./5. both play on as their sessions say
    while world.now < t_end and not cs.is_finished and not hs.is_finished:
        if not world.step():
            world.now += 0.25
        world.tick(h)
        world.tick(c)
        world.core.tick(world.now)
        world.pump()
    rep = audit(bytes(c.file))
    room = world.core.rooms.get(world.room)
    count = room.seats[HONEST].in_count if room is not None else None
    assert not (rep.valid and rep.status == "on_time" and rep.result["winner"] == CHEAT), (
        f"the cheater's file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending}; honest:"
        f" ended {hs.ended}, sent up to {h.sent} (really {s} before the restart), the relay's count of its"
        f" frames stuck at {count}"
    )
