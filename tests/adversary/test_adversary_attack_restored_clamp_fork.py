"""Attack: in a room the relay rebuilt after a restart, 4b74d2d's clamp (``received = min(received,
other.in_count)``, relay/core.py ``_attach``) sets the honest seat's ``received`` back to the cheater's count;
the cheater's frames numbered up to the honest client's real count are then witnessed (in ``recent``) but the
honest client drops them as duplicates (relay/client.py ``_pump``: ``n <= ticket.received``), and no later
resume takes them out of ``recent``: the "undelivered fork" false win (test_adversary_attack_undelivered_fork.py)
again, with an honest relay (restarted by a deploy: no relay lie).

1. At its turn (SEQ i) taking two or more messages, the cheater signs its whole turn f1 … fk on its own line.
2. The relay restarts. The cheater resumes first (the room is rebuilt: counts unknown) and sends one frame,
   numbered 1 (f1): its count is now 1.
3. The honest seat resumes with ``received`` = R (what it really got, R > k). The clamp makes it 1: the
   waiting frame 1 is dropped as delivered (and leaves ``recent``), the cheater's count stays 1 and it is told
   to send again from there. The honest client still holds ``received`` = R.
4. The cheater sends f1 … f(k-1) numbered 2 …, then repeats of them up to R: the relay witnesses each (in order,
   in ``recent``, ``sent_at`` 2 …) and forwards it; the honest client drops each (n <= R). Then fk as R + 1:
   delivered; the honest session buffers it (ahead of its line) and asks RESEND(i) for ever; the cheater
   answers each request with fk again (to the witness, an answer).
5. After 3 move times the witness certifies the honest seat silent with f1 … fk in the cheater's ``recent``;
   the cheater's session sends the TIMEOUT: its file audits valid, on_time, the cheater the winner.

Harm: a false WIN on time for a modified client whenever the relay restarts during a turn of two or more
messages of the cheater.

The fix (relay/core.py ``_attach``): in a room rebuilt after a restart, a seat's first resume is the only
word on how far the other seat's numbering had gone, so the clamp of ``received`` to the relay's count does not
apply to it (the frames the cheater numbered from 1 are then behind it and dropped, and leave ``recent``).
"""

from __future__ import annotations

from relay_world import World

from koikoi.protocol.audit import audit
from koikoi.relay.core import RelayConfig, RelayCore

HONEST, CHEAT = 0, 1
MOVE = 20


def test_a_clamped_received_in_a_rebuilt_room_never_wins_on_time() -> None:
    world = World(b"x10e-restored-clamp-fork", MOVE)
    world.open()
    h, c = world.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None and c.bot is not None
    i, fork = world.fork_a_turn(CHEAT, ready=lambda: h.received >= 8)  # 1. its whole turn, on its own line only

    world.core = RelayCore(RelayConfig(), key=world.key)  # 2. the relay restarts (same key, rooms rebuilt)
    h.cid = c.cid = 0
    world.now += 1
    world.resume(c)
    c.sent = 0
    world.send(c, fork[0], False)  # numbered 1
    world.now += 1
    r_honest = h.received
    world.resume(h)  # 3. its received R is clamped to 1
    assert h.received == r_honest > len(fork)
    k = 0
    while c.sent < r_honest:  # 4. f1 … f(k-1), then repeats, numbered 2 … R: witnessed, dropped by the client
        world.send(c, fork[k % (len(fork) - 1)], False)
        k += 1
    world.send(c, fork[-1], False)  # fk as R + 1: delivered
    world.pump()
    assert hs.referee.next_seq == i, "the honest seat got the cheater's first message"

    t_end, again = world.now + 6 * MOVE, world.now + MOVE / 4
    while world.now < t_end and not cs.is_finished and not hs.is_finished:
        if world.now >= again:
            world.send(c, fork[-1], False)  # "answers" each request with fk again
            again = world.now + MOVE / 4
            if world.now > t_end - 3 * MOVE:  # 5. its session asks for a certificate now and then
                r = world.request(c, {"t": "certify"}, "certificate")
                if r is not None:  # (none in a room rebuilt after a restart)
                    world.note(c, cs.witnessed(r["cert"]))
        world.pump()
        world.tick(h)
        world.now += 0.25
        world.core.tick(world.now)
    assert hs.referee.next_seq == i, "the honest seat got the cheater's first message after all"
    rep = audit(bytes(c.file))
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the cheater's file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending}; honest side:"
        f" {hs.ended}, line at {hs.referee.next_seq}, fork at {i}…{i + len(fork) - 1}"
    )
