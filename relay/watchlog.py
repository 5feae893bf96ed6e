"""A room's watchers and its log (spec/relay.md "Watchers"): :class:`RoomLog`, the distinct frames the relay took
from the room's seats, and :class:`RoomWatch`, whether the room allows watchers, who watches, and its log.

Sans-IO state only; :class:`koikoi.relay.watchers.Watchers` acts on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .room import Conn

__all__ = ["LATE_HASHES", "RoomLog", "RoomWatch"]

LATE_HASHES = 1024
"""Once a log is full, the hashes of the frames it did not keep that it still recognises as repeats (the most
recent): its memory stays bounded, and a repeat of an older one goes to the watchers again (they drop it)."""


class RoomLog:
    """The distinct frames (by ``frame_hash``) the relay took from a room's two seats, in the order it took them.

    Each has an index, ``0, 1, 2, …`` (``count`` is the next one). The first ones are kept (``entries[i]`` is
    ``(seat, d)`` of frame ``i``) up to ``max_frames`` frames and ``max_bytes`` bytes; once one does not fit the
    log is ``full`` and keeps no more (its entries stay the frames ``0 .. len(entries) - 1``, with no hole),
    though later frames still get their index (live watchers get them).

    Invariants (:meth:`check`): ``len(entries) <= count``; ``size`` is the bytes kept, within the caps; entries
    are kept only while the log is not full, and a log that is not full kept every frame it indexed."""

    __slots__ = ("_hashes", "_late", "count", "entries", "full", "max_bytes", "max_frames", "size")

    def __init__(self, max_frames: int, max_bytes: int) -> None:
        self.entries: list[tuple[int, bytes]] = []
        self.count = 0
        self.size = 0
        self.max_frames = max_frames
        self.max_bytes = max_bytes
        self.full = False
        self._hashes: set[bytes] = set()
        self._late: dict[bytes, None] = {}

    def check(self) -> None:
        assert len(self.entries) <= self.count
        assert self.size == sum(len(d) for _, d in self.entries)
        assert len(self.entries) <= self.max_frames and self.size <= self.max_bytes
        assert self.full or len(self.entries) == self.count
        assert len(self._late) <= LATE_HASHES

    def take(self, seat: int, d: bytes, h: bytes, budget: int) -> int | None:
        """Frame ``d`` (of hash ``h``) taken from ``seat``: its index if the room had none like it, else None.
        ``budget``: the bytes every room's log may still keep together (the frame is kept only within it too)."""
        if h in self._hashes or h in self._late:
            return None
        i = self.count
        self.count = i + 1
        n = len(d)
        if not self.full and len(self.entries) < self.max_frames and self.size + n <= self.max_bytes and n <= budget:
            self.entries.append((seat, d))
            self.size += n
            self._hashes.add(h)
            return i
        self.full = True
        late = self._late
        late[h] = None
        if len(late) > LATE_HASHES:
            del late[next(iter(late))]
        return i

    def since(self, first: int) -> tuple[tuple[int, bytes], ...]:
        """The kept frames from index ``first`` on."""
        return tuple(self.entries[first:])

    def frames(self) -> tuple[tuple[int, bytes], ...]:
        return tuple(self.entries)


@dataclass(eq=False)
class RoomWatch:
    """Whether a room allows watchers (``allowed``: its creator's setting), the connections watching it (by id,
    in the order they came), its log (None: not kept, neither watchers nor the archive want it), and whether it
    was handed to the archive (``archived``: once)."""

    allowed: bool = False
    log: RoomLog | None = None
    conns: dict[int, Conn] = field(default_factory=dict)
    archived: bool = False
