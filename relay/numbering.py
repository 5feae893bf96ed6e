"""Frame numbering, sans-IO: how far the relay took one seat's frames (:class:`Numbering`), and the frames
waiting for an absent seat (:class:`Buffer`). Each keeps its invariants and checks them (``check``).

Ordering and exactly-once delivery (spec/relay.md): a seat numbers its frames 1, 2, …; the relay takes the
next one only (a duplicate, or a frame ahead of a gap, is dropped: the sender resends), and a seat's
``resume`` says how many of the other seat's frames it got, which sets that seat's count back (a *rewind*,
bounded) so that it sends the rest again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import NamedTuple

from ..protocol.witness import RECENT_HASHES, SeatClock, witness_frame

__all__ = ["MAX_REWIND", "Buffer", "Numbering", "Waiting"]

MAX_REWIND = 64
"""How many frames back a seat's ``resume`` may set the other seat's count (frames lost in flight with a
dead connection, which the other seat then sends again): well inside the per-connection burst."""


class Numbering:
    """The frames the relay took from one seat, and the witness's record of them.

    - ``in_count``: the number of the last frame taken from the seat, in order (None: unknown, in a room rebuilt
      after a restart, until the seat's first frame or the other seat's resume); the next one taken is
      ``in_count + 1``.
    - ``highest``: the highest number ever taken; it never moves back.
    - ``floor``: the count the seat was told at its last resume (its client numbers on from there: it may have
      no frames below).
    - ``sent_at``: for each hash in ``clock.recent``, the number of the frame that first brought it.
    - ``clock``: what a silence certificate says about this seat (``koikoi.protocol.witness``).

    Invariants (:meth:`check`), ``in_count`` known:

    1. ``0 <= floor <= in_count``: the other seat's resume never sets the count back below the floor;
    2. ``highest - MAX_REWIND <= in_count``: a rewind is bounded from ``highest`` (so that resuming again and
       again cannot walk it back in steps);
    3. ``in_count <= highest``, unless the room was rebuilt (``rebuilt``: its count came from a resumer's word);
    4. every hash in ``clock.recent`` is in ``sent_at``; ``sent_at`` names frames taken (``1..highest``) and
       holds at most ``2 * RECENT_HASHES``.

    A hash leaves ``clock.recent`` (:meth:`unlist`) when the frame that brought it will never be delivered, so
    no certificate vouches that the other seat got it (spec/protocol.md §7.3)."""

    __slots__ = ("clock", "floor", "highest", "in_count", "rebuilt", "sent_at")

    def __init__(self) -> None:
        self.in_count: int | None = 0
        self.highest = 0
        self.floor = 0
        self.sent_at: dict[bytes, int] = {}
        self.clock = SeatClock()
        self.rebuilt = False

    def check(self) -> None:
        """Assert the invariants above."""
        c = self.in_count
        if c is not None:
            assert 0 <= self.floor <= c, (self.floor, c)
            assert self.highest - MAX_REWIND <= c, (self.highest, c)
            assert self.rebuilt or c <= self.highest, (c, self.highest)
        assert all(h in self.sent_at for h in self.clock.recent)
        assert len(self.sent_at) <= 2 * RECENT_HASHES
        assert all(1 <= n <= self.highest for n in self.sent_at.values())

    def unknown(self) -> None:
        """A room rebuilt after a restart: the count is unknown until the seat's first frame or the other seat's
        first resume."""
        self.in_count = None
        self.rebuilt = True

    def take(self, n: int) -> bool:
        """Take frame ``n`` if it is the next in order (delivered or not, the numbering goes on); False: a
        duplicate (``n <= in_count``) or one ahead of a resend, not taken."""
        c = self.in_count
        if c is not None and n != c + 1:
            return False
        self.in_count = n
        if n > self.highest:
            self.highest = n
        return True

    def witness(self, h: bytes, n: int, other: SeatClock, now: float, *, ctl: bool, frame: bytes) -> None:
        """Frame ``n`` (just taken), of hash ``h``, goes to the witness's record (``witness_frame``)."""
        witness_frame(self.clock, other, h, now, ctl=ctl, frame=frame)
        self.sent_at.setdefault(h, n)
        if len(self.sent_at) > 2 * RECENT_HASHES:
            self.sent_at = {x: at for x, at in self.sent_at.items() if x in self.clock.recent}

    def unlist(self, h: bytes, n: int) -> None:
        """Frame ``n`` (hash ``h``) will never be delivered: unless a later copy of it was (``sent_at`` names the
        frame that first brought it), its hash leaves ``recent``, so no certificate vouches that the other seat
        got it."""
        if self.sent_at.get(h) == n:
            self.clock.recent.pop(h, None)
            del self.sent_at[h]

    def clamp(self, received: int) -> int:
        """The other seat cannot have got frames the relay never had: a count set forward would make the relay
        drop this seat's frames on their way as duplicates, unwitnessed."""
        return received if self.in_count is None else min(received, self.in_count)

    def rewind(self, received: int) -> None:
        """The other seat got this seat's frames up to ``received`` and none waits for it: this seat sends again
        from there, never more than ``MAX_REWIND`` frames back from ``highest`` (a seat that says it got far fewer
        frames than it did would make the other resend its whole log, past the relay's burst, again and again)
        and never below ``floor``."""
        self.in_count = max(received, self.highest - MAX_REWIND, self.floor)
        self.check()

    def missed(self, received: int, dropped: set[int], kept: set[int]) -> None:
        """The other seat, resuming, got frames up to ``received``: those of this seat's frames it never got
        (``dropped`` from its buffer, or past ``received`` and not ``kept`` waiting for it, also those the rewind
        bound keeps from being sent again) leave ``recent`` until they are sent again."""
        for h, n in list(self.sent_at.items()):
            if n in dropped or (n > received and n not in kept):
                self.clock.recent.pop(h, None)
                del self.sent_at[h]

    def resumed(self) -> None:
        """The seat resumed and was told ``in_count``: that is its floor now."""
        self.floor = self.in_count or 0
        self.check()

    def restart_witness(self) -> None:
        """The other seat's holder was removed before it sent a frame: what the witness knew of this seat's frames
        was about that holder's connection (it may have got junk the next holder never will), so this seat's
        timing starts again with the next one. Its count and its copies stay."""
        c = self.clock
        c.last_hash, c.last_at, c.ask_at, c.open_ask_at = b"", None, None, None
        c.seen.clear()
        c.recent.clear()
        self.sent_at.clear()
        self.check()

    def forget(self) -> None:
        """The seat is freed before it sent any frame: nothing of it counts any more."""
        assert self.highest == 0, "only a seat that never sent a frame is freed"
        self.in_count = 0
        self.floor = 0
        self.sent_at.clear()
        self.clock.forget()
        self.check()


class Waiting(NamedTuple):
    """A frame waiting in a buffer: its number, its envelope as it came, and its hash if it was flagged."""

    n: int
    raw: bytes
    flagged: bytes | None


class Buffer:
    """Frames from the other seat waiting for this (absent) seat, in the order taken, within a cap of frames
    and bytes.

    Invariants (:meth:`check`): ``size`` is the bytes waiting; at most ``max_frames`` frames and ``max_bytes``
    bytes wait; their numbers strictly increase (the sender's count is set back only when none waits)."""

    __slots__ = ("_p", "full", "max_bytes", "max_frames", "size")

    def __init__(self, max_frames: int, max_bytes: int) -> None:
        self._p: deque[Waiting] = deque()
        self.size = 0
        self.max_frames = max_frames
        self.max_bytes = max_bytes
        self.full = False
        """Frames were refused because it was full (logged once until a delivery drains it)."""

    def check(self) -> None:
        p = self._p
        assert self.size == sum(len(w.raw) for w in p)
        assert len(p) <= self.max_frames and self.size <= self.max_bytes
        assert all(a.n < b.n for a, b in zip(p, list(p)[1:], strict=False))

    def __len__(self) -> int:
        return len(self._p)

    def __iter__(self) -> Iterator[Waiting]:
        return iter(self._p)

    def _fits(self, size: int) -> bool:
        return len(self._p) < self.max_frames and self.size + size <= self.max_bytes

    def make_room(self, size: int, witnessed: bool, sender: Numbering) -> bool:
        """Whether a frame of ``size`` bytes from ``sender`` fits. When it is full, a flagged (``ctl``) frame does
        not fit; an unflagged one — a seat's newest message, its end, its ENDED — makes room by dropping the
        oldest flagged frames waiting (answers to requests, resends: never delivered, they leave the sender's
        ``recent``, and this seat asks for what it lacks). Else a cheater that asks the honest side for old
        messages, then leaves, could fill its own buffer with the answers so that the honest side's next move or
        winning TIMEOUT is refused (tests/adversary/test_adversary_attack_refused_timeout.py)."""
        if self._fits(size):
            return True
        if not witnessed:
            return False
        p = self._p
        flagged = [w for w in p if w.flagged is not None]
        while not self._fits(size) and flagged:
            old = flagged.pop(0)
            p.remove(old)
            self.size -= len(old.raw)
            assert old.flagged is not None
            sender.unlist(old.flagged, old.n)
        return self._fits(size)

    def push(self, n: int, raw: bytes, flagged: bytes | None) -> None:
        """Frame ``n`` (``raw``; ``flagged``: its hash if it was flagged) waits; :meth:`make_room` said it fits."""
        p = self._p
        assert self._fits(len(raw)) and (not p or p[-1].n < n), n
        p.append(Waiting(n, raw, flagged))
        self.size += len(raw)

    def drop_through(self, received: int) -> tuple[set[int], set[int]]:
        """The seat is back and got frames up to ``received``: what waits up to there goes (a sender that numbered
        on from the wrong place: not delivered), and all of it if the rest does not follow on (frames were lost
        with a dead connection: the sender resends). ``(dropped, kept)``: the numbers that went, and stay."""
        p = self._p
        dropped: set[int] = set()
        while p and p[0].n <= received:
            w = p.popleft()
            self.size -= len(w.raw)
            dropped.add(w.n)
        if p and p[0].n != received + 1:
            dropped.update(w.n for w in p)
            self.clear()
        self.check()
        return dropped, {w.n for w in p}

    def drain(self) -> list[bytes]:
        """Everything waiting, to deliver now (the buffer is no longer full)."""
        out = [w.raw for w in self._p]
        self.clear()
        self.full = False
        return out

    def clear(self) -> None:
        """Drop what waits, undelivered (whether it was full stays: it is logged once until a delivery)."""
        self._p.clear()
        self.size = 0
