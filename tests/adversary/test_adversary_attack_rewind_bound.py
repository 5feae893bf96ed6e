"""Attack (relay/core.py ``_attach``): the rewind bound on its own. A seat's ``resume`` sets the other seat's
frame count back to no less than ``MAX_REWIND`` (64) frames below the highest count that seat ever reached
(``Seat.highest``; spec/relay.md, "Ordering and exactly-once delivery"). The rewound_count and rewind_steps
attacks (tests/adversary/test_adversary_attack_rewound_count.py, ``…_rewind_steps.py``) make the honest
client resend its log at once, past the relay's burst: the relay cuts it (``rate_limited``), and the witness
certifies no silence of a seat away from an address a limit refused (``seat_locked_out``), which stops
those attacks even without the bound. Here the honest client resends at a pace the relay allows (45 frames a
second; the relay lets 50 through), so it is never cut and that rule never applies: only the bound stands
between the cheater and a false win on time.

1. During its own turn the cheater makes the honest side's resend log long (``World.grow_log``: RESEND
   requests for old parts of the line; a long match does it alone).
2. Every 2 s the cheater resumes its seat twice in a row, on new connections from one address (within the
   per-address limits), saying it got nothing (``received`` = 0): each ``peer back`` sends the honest client
   back to the count the relay set. After the first two it plays its turn; the honest client gets it at once
   and answers, at the end of what it has to send again.
3. The cheater sends its last message again every quarter move time (an answer to the honest seat's
   requests) and, once the honest seat could be a move time silent, asks for a certificate of that silence
   and claims with it when it fits.

With the bound, the two resumes leave 64 frames (and the honest answer) to send again: 1.5 s at 45 frames
a second, less than the 2 s till the next two, so the answer reaches the witness, the cheater is the one
silent, and the honest side wins on time. Without it — the count set back to what the cheater says it got
(``max(received, floor)``: 0 here), or 64 frames back from wherever the count is (``in_count - MAX_REWIND``:
128 a round of two resumes, more than the honest client sends in 2 s) — the honest client sends the start
of its log again and again, never its answer, and the cheater's certificate fits: its file audits ``valid``,
``on_time``, the cheater the winner.

The real client resends at once (relay/client.py ``_resend``); this paced one keeps within the relay's
limits, as any client may.
"""

from __future__ import annotations

from relay_world import End, World, envelope

from koikoi.protocol.audit import audit
from koikoi.protocol.witness import EXTENSION_MOVES

HONEST, CHEAT = 0, 1
MOVE = 60
PACE = 45
"""Frames a second the honest client resends (the relay's ``frames_per_s`` is 50)."""
EVERY, BURST = 2.0, 2
"""Every ``EVERY`` seconds the cheater resumes ``BURST`` times back to back."""
CHEAT_IP = "203.0.113.7"
DT = 0.05


class PacedWorld(World):
    """relay_world's World, with the honest seat's client resending at ``PACE`` frames a second: a ``peer``
    event or a ``resumed`` reply (``resend(received)``) points its resend at ``received + 1``; its new frames
    wait behind the resend; :meth:`drain` sends what its pace allows."""

    def __init__(self, seed: bytes, move_time_s: int) -> None:
        super().__init__(seed, move_time_s)
        self.paced = False
        """Set once the log has grown: till then the honest client resends at once, as World's does."""
        self.cursor: int | None = None
        """The next frame number the honest client sends (None: nothing waits)."""
        self.budget = 0.0
        self.sent_again = 0
        """Frames the honest client sent again, in all."""

    def send(self, end: End, d: bytes, ctl: bool) -> None:
        if end.seat != HONEST or not self.paced or self.cursor is None:
            super().send(end, d, ctl)
            return
        end.sent += 1
        end.log.append((end.sent, d, ctl))  # (sent when the resend gets to it)

    def resend(self, end: End, received: int) -> None:
        if end.seat != HONEST or not self.paced:
            super().resend(end, received)
            return
        self.cursor = received + 1 if received < end.sent else None
        self.budget = min(self.budget, 1.0)

    def drain(self, end: End, dt: float) -> None:
        """``dt`` seconds of the honest client's paced resend."""
        if self.cursor is None:
            self.budget = 0.0
            return
        self.budget += PACE * dt
        while self.cursor is not None and self.budget >= 1 and end.cid:
            n = self.cursor
            m, d, ctl = end.log[n - 1]
            assert m == n
            self.core.message(self.now, end.cid, envelope(n, d, ctl))
            self.sent_again += 1
            self.budget -= 1
            self.cursor = n + 1 if n < end.sent else None
        self.pump()


def test_a_cheater_rewinding_a_paced_honest_seat_again_and_again_never_wins_on_time() -> None:
    world = PacedWorld(b"x10g-rewind-bound", MOVE)
    world.open()
    h, c = world.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None and c.bot is not None and h.bot is not None
    world.grow_log(CHEAT)  # 1. the honest side's log grows
    assert 400 < h.sent < 4096, f"the honest side sent {h.sent} frames"
    world.paced = True
    core = world.core
    room = core.rooms[world.room]
    resumes = 0

    def rewind() -> None:
        """The cheater resumes its seat on a new connection, through the relay's per-address limits, saying it
        got nothing."""
        nonlocal resumes
        c.sent = world.resume_from(c, CHEAT_IP, 0)["received"]
        resumes += 1

    turn: list[bytes] = []
    turn_at, line_at = 0.0, 0
    next_rewind, again, t_end = world.now, 0.0, world.now + 10 * MOVE
    while world.now < t_end and not cs.is_finished and not hs.is_finished:
        if world.now >= next_rewind:  # 2.
            for _ in range(BURST):
                rewind()
            next_rewind += EVERY
            if not turn:  # its turn, on the line both sides hold
                while cs.my_turn:
                    cs.play(c.bot.choose(cs.view()))
                    turn += cs.frames_to_send()
                world.flush(c)
                for f in turn:
                    world.send(c, f, False)
                line_at, turn_at = cs.referee.next_seq, world.now
                t_end, again = turn_at + (EXTENSION_MOVES + 2) * MOVE, world.now + MOVE / 4
        if world.now >= again:  # 3.
            world.send(c, turn[-1], False)  # "answers" the honest seat's requests
            again = world.now + MOVE / 4
            if world.now >= turn_at + MOVE:  # (silent since the turn, if the honest answer never came)
                r = world.request(c, {"t": "certify"}, "certificate")
                if r is not None:
                    world.note(c, cs.witnessed(r["cert"]))
        if hs.my_turn:
            world.note(h, hs.play(h.bot.choose(hs.view())))
        world.drain(h, DT)
        world.tick(h)
        world.now += DT
        core.tick(world.now)
    assert h.kicked == 0 and h.cid, "the honest client was cut: this test is for a client within the limits"
    rep = audit(bytes(c.file))
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the cheater's file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending}; {resumes}"
        f" resumes of the cheater; the honest client sent {world.sent_again} frames again, its line at"
        f" {hs.referee.next_seq} (the cheater's turn ended at {line_at}), it numbered {h.sent} frames, the relay"
        f" got {room.seats[HONEST].in_count} (highest {room.seats[HONEST].highest})"
    )
    won = audit(bytes(h.file))
    assert won.valid and won.result["winner"] == HONEST, (
        f"the honest side's file audits {won.status}, winner {won.result['winner']}: the honest answer reached the"
        f" relay (highest {room.seats[HONEST].highest} of {h.sent}), the silent cheater should lose on time"
    )
