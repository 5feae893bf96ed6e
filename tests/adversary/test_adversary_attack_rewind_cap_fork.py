"""Attack (relay/core.py ``_attach``, 432b5fc): the rewind bound undoes the undelivered-frames fix. When a seat
resumes with ``received`` more than ``MAX_REWIND`` (64) frames behind the other seat's count, the relay sets
that count back by only 64 and then treats every frame numbered up to the new count as *delivered*: their
hashes stay in the sender's ``clock.recent`` (only numbers past the new count, or dropped from the buffer,
leave it) — although the resuming seat said plainly it never got them. The client takes the gap
(relay/client.py ``_pump``), and the match protocol "asks for what it lacks" — but a cheater answers every
request with its last message, which to the witness is an answer (tests/.../undelivered_fork's step 2).

1. At its turn (SEQ i) taking two or more messages, the cheater signs its whole turn f1 … fk (its line then
   waits for the honest seat) and sends f1 … f(k-1) unflagged while the honest seat's connection is dying
   (a hostile network; or, with no network help, the cheater floods 64 KiB frames until the relay kicks
   the honest seat as a ``slow_consumer``, which throws its outbox away; or, after an honest relay restart,
   the cheater rebuilds the room first and numbers them wrong, so that the honest seat's resume drops them
   from the buffer): the witness records them, the honest session never sees them.
2. Right behind them it sends 64 copies of one flagged junk frame (a RESEND; for ``slow_consumer`` a 60 KB
   one): lost too, one hash in ``recent``. Its count is now more than 64 past what the honest seat got.
3. The honest seat resumes with the truth (``received``). The relay sets the cheater's count back by 64
   only (to just past f(k-1), or past the buffer) and drops only the junk's hash from ``recent``
   (``Seat.numbered`` holds the last 64 frames: all junk). f1 … f(k-1) stay in ``recent``.
4. The cheater (told ``peer back``) sends fk at the next number; the honest client takes the gap, its session
   buffers fk (ahead of its line) and asks RESEND(id, i) for ever; the cheater answers each with fk.
5. After 3 move times the witness certifies the honest seat silent; f1 … fk are all in ``recent`` (step 6b
   holds). The cheater's unmodified session sends the TIMEOUT; its file audits ``valid``, ``on_time``,
   cheater the winner.

Harm: a false WIN for a modified client with an honest relay, whenever the honest seat's connection drops
during a cheater's turn of two or more messages (the fix for undelivered_fork is bypassed by 64 junk frames).

The fix (relay/core.py ``_attach``): which frames were not delivered is judged from the resuming seat's own
``received``, not from the count the rewind bound leaves, and by the number of the frame that first brought
each hash (``Seat.sent_at``), so no run of junk can push that record out.
"""

from __future__ import annotations

import pytest
from relay_world import World

from koikoi.protocol.audit import audit
from koikoi.protocol.messages import resend_frame
from koikoi.relay.core import MAX_REWIND, RelayConfig, RelayCore

HONEST, CHEAT = 0, 1
MOVE = 20


@pytest.mark.parametrize("how", ["connection_lost", "slow_consumer", "relay_restart"])
def test_a_capped_rewind_never_vouches_for_frames_the_honest_seat_never_got(how: str) -> None:
    world = World(b"x10d-rewind-cap-fork", MOVE)
    world.open()
    h, c = world.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None and c.bot is not None
    i, fork = world.fork_a_turn(CHEAT)  # 1. its whole turn, on its own line only
    sid = cs.referee.sid
    assert sid is not None

    junk = resend_frame(sid, 0) if how != "slow_consumer" else bytes(60_000)  # one hash, whatever the count
    if how == "relay_restart":
        world.core = RelayCore(RelayConfig(), key=world.key)  # an honest relay restarts (same key, rooms rebuilt)
        h.cid = c.cid = 0
        world.now += 1
        world.resume(c)  # the cheater rebuilds the room: its frame count is unknown there, any number goes
        c.sent = 10**6
        for f in fork[:-1]:
            world.send(c, f, False)  # (they wait for the honest seat, which drops them: misnumbered)
        for _ in range(MAX_REWIND):  # 2.
            world.send(c, junk, True)
    else:
        # the honest seat's connection is dying: what the relay writes to it is lost (connection_lost: its
        # network; slow_consumer: the cheater's 64 KiB frames fill its outbox, and the relay throws it away)
        world.lost.add(h.cid)
        for f in fork[:-1]:
            world.send(c, f, False)
        for _ in range(MAX_REWIND):  # 2.
            world.send(c, junk, True)
        world.pump()
        if how == "connection_lost":
            world.core.disconnected(world.now, h.cid)
            h.cid = 0
        else:
            world.core.slow_consumer(world.now, h.cid)  # (the driver found its outbox full)
            world.pump()
            assert not h.cid
    world.now += 1
    world.resume(h)  # 3. the truth: it got nothing of the turn
    back = next(x for x in c.replies if x.get("event") == "back")
    c.sent = back["received"]  # 4. told to send again from there, it sends fk
    world.send(c, fork[-1], False)
    world.pump()
    assert hs.referee.next_seq == i, "the honest seat got the cheater's first message"

    t_end, again = world.now + 6 * MOVE, world.now + MOVE / 4
    while world.now < t_end and not cs.is_finished and not hs.is_finished:
        if world.now >= again:
            world.send(c, fork[-1], False)  # "answers" each request with fk again
            again = world.now + MOVE / 4
            if world.now > t_end - 3 * MOVE:  # 5.
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
        f"the cheater's file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending};"
        f" honest side: {hs.ended}; honest line at {hs.referee.next_seq}, fork at {i}…{i + len(fork) - 1}"
    )
