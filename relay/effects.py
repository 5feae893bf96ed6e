"""What the relay core asks its driver to do (effects), the outbox its parts queue them in, and its timers.

Every part of the core (admission, rooms, lobby, seating, frames, certification) acts on the world only
through one :class:`Effects` (send, answer with an error, close, log, count a limit) and one :class:`Timers`:
none of them holds the facade (:class:`koikoi.relay.core.RelayCore`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from ..protocol.framing import encode
from . import codes
from .observe import Metrics
from .vocabulary import CloseReason, Refused, TimerKind

if TYPE_CHECKING:
    from .room import Conn, Room

__all__ = [
    "Archive",
    "Close",
    "Effect",
    "Effects",
    "HashPassword",
    "Log",
    "Replay",
    "Send",
    "Timer",
    "Timers",
    "VerifyPassword",
    "seen",
]


def seen(i: int, seat: int, d: bytes) -> bytes:
    """The ``seen`` message a watcher gets for the room log's frame ``i``: ``d``, taken from seat ``seat``."""
    return encode({"t": "seen", "i": i, "seat": seat, "d": d})


@dataclass(slots=True)
class Send:
    """Queue ``data`` for connection ``conn`` (``frame``: a forwarded player frame, for the metrics)."""

    conn: int
    data: bytes
    frame: bool = False


@dataclass(slots=True)
class Close:
    """Close connection ``conn`` with ``reason`` (a key of CLOSE_CODES): ``bye`` first when ``flush``."""

    conn: int
    reason: str
    flush: bool = True


@dataclass(slots=True)
class Log:
    event: str
    fields: dict[str, Any]


@dataclass(slots=True)
class HashPassword:
    """scrypt ``password`` (``codes.hash_password``), then ``core.work_done(now, conn, hash)``."""

    conn: int
    password: str


@dataclass(slots=True)
class VerifyPassword:
    """Check ``password`` against ``stored`` (``codes.verify_password``), then ``core.work_done(now, conn, ok)``."""

    conn: int
    password: str
    stored: codes.PasswordHash


@dataclass(frozen=True, slots=True)
class Replay:
    """Queue for connection ``conn`` (a watcher) the room log's ``frames``, ``(seat, d)`` each, as ``seen``
    messages numbered from ``first`` (:func:`seen`), in order and in one place of its outbox: a late watcher's
    catch-up (up to ``watch_log_frames``) is one item there, encoded as it is written."""

    conn: int
    first: int
    frames: tuple[tuple[int, bytes], ...]


@dataclass(frozen=True, slots=True)
class Archive:
    """A room both seats took closed with a non-empty log: hand it to the driver's ``on_archive`` hook.

    ``room`` is its code, ``private`` whether it was private, ``frames`` the room's log: the distinct frames the
    relay took from both seats, ``(seat, d)``, in the order it took them (at most ``watch_log_frames`` and
    ``watch_log_bytes``: a log that filled up holds the first of them)."""

    room: str
    private: bool
    frames: tuple[tuple[int, bytes], ...]


Effect = Send | Close | Log | HashPassword | VerifyPassword | Replay | Archive


class Effects:
    """The effects of the call being handled, in order (:attr:`out`, which the driver carries out and clears),
    the metrics, and the time of that call (:attr:`now`).

    Closing a connection also takes it from its seat: :attr:`on_close` (the rooms' ``detach``) is called for
    every connection :meth:`kick` closes."""

    def __init__(self, metrics: Metrics) -> None:
        self.out: list[Effect] = []
        self.metrics = metrics
        self.now = 0.0
        self.on_close: Callable[[Conn], None] = lambda conn: None

    def log(self, event: str, **fields: Any) -> None:
        self.out.append(Log(event, fields))

    def send(self, conn: Conn, obj: dict[str, Any]) -> None:
        if conn.closing is None:
            self.out.append(Send(conn.id, encode(obj)))

    def forward(self, conn: Conn, raw: bytes, *, frame: bool = True) -> None:
        """A player frame (``raw``, as it came; ``frame`` False: a ``seen`` message) to ``conn``."""
        self.out.append(Send(conn.id, raw, frame))

    def replay(self, conn: Conn, first: int, frames: tuple[tuple[int, bytes], ...]) -> None:
        """A room log's ``frames`` from index ``first`` to the watcher ``conn`` (:class:`Replay`)."""
        if conn.closing is None:
            self.metrics.watch_frames_total += len(frames)
            self.out.append(Replay(conn.id, first, frames))

    def archive(self, effect: Archive) -> None:
        self.out.append(effect)

    def error(self, conn: Conn, re: str, code: str, message: str, **extra: Any) -> None:
        self.send(conn, {"t": "error", "re": re, "code": code, "message": message, **extra})

    def refused(self, conn: Conn, re: str, r: Refused) -> None:
        self.error(conn, re, r.code, r.message, **r.extra)

    def kick(self, conn: Conn, reason: CloseReason, *, flush: bool = True) -> None:
        """Close ``conn``: tell it why (``bye``), then a WebSocket close with code and reason."""
        if conn.closing is not None:
            return
        conn.closing = reason
        self.out.append(Close(conn.id, reason, flush))
        self.on_close(conn)

    def limit(self, conn: Conn, limit: str, reason: str, **extra: Any) -> None:
        """A limit ``conn`` hit, counted and logged.

        (A connection let in and then refused or cut for what it did itself kept no seat holder out, so its
        address is not "refused" for ``seat_locked_out``: else a cheater could get its own seat there.)"""
        self.metrics.limit_hit(limit)
        self.log("limit_hit", limit=limit, reason=reason, conn=conn.id, ip=conn.ip, **extra)

    def password_work(self, effect: HashPassword | VerifyPassword) -> None:
        self.out.append(effect)


class Timer(NamedTuple):
    """A deadline: at ``when``, ``kind`` for seat ``seat`` of ``room``, if ``gen`` is still that seat's (grace)
    or the room's (first frame) generation: a later one voids it. ``seq`` orders timers of one instant."""

    when: float
    seq: int
    kind: TimerKind
    room: Room
    seat: int
    gen: int


class Timers:
    """The relay's deadlines, soonest first."""

    def __init__(self) -> None:
        self._heap: list[Timer] = []
        self._seq = 0

    def schedule(self, when: float, kind: TimerKind, room: Room, seat: int, gen: int) -> None:
        self._seq += 1
        heapq.heappush(self._heap, Timer(when, self._seq, kind, room, seat, gen))

    def next_deadline(self) -> float | None:
        return self._heap[0].when if self._heap else None

    def due(self, now: float) -> Iterator[Timer]:
        """Each timer due at ``now``, taken off (also those scheduled meanwhile, if due)."""
        heap = self._heap
        while heap and heap[0].when <= now:
            yield heapq.heappop(heap)
