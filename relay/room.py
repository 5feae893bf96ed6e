"""A room, its two seats and the connections that hold them, as the relay's rules see them.

A seat's lifecycle (:class:`SeatState`): EMPTY (nobody took it) → AWAY (taken, no connection) ⇄ PRESENT (a
connection holds it) → CLOSED (its room closed); a joiner removed before its first frame goes back to EMPTY.
Each transition is a method of :class:`Seat`, which keeps the fields it names in step (:meth:`Seat.check`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..support import TokenBucket
from . import codes
from .numbering import Buffer, Numbering
from .vocabulary import DEFAULT_MOVE_TIME_S, CloseReason, PasswordOp, Presence, RoomDeck, RoomEnd
from .watchlog import RoomWatch

if TYPE_CHECKING:
    from .admission import Addr

__all__ = ["Conn", "PasswordWork", "Room", "Seat", "SeatState", "Tombstone"]


@dataclass(frozen=True, slots=True)
class PasswordWork:
    """A request waiting for password work (scrypt, in the driver's thread): which one, and its message."""

    op: PasswordOp
    request: dict[Any, Any]


@dataclass(eq=False)
class Conn:
    """One accepted connection, as the rules see it."""

    id: int
    ip: str
    addr: Addr
    bucket: TokenBucket
    room: Room | None = None
    seat: int = 0
    closing: CloseReason | None = None
    failures: deque[float] = field(default_factory=deque)
    work: PasswordWork | None = None
    nonce: bytes = b""
    """The nonce announced on this connection: a seat proof signs it (``witness.seat_claim``)."""
    watching: Room | None = None
    """The room this connection watches (read-only; a watcher holds no seat: ``room`` is None)."""


class SeatState(Enum):
    EMPTY = "empty"
    """Nobody holds its token (a room waiting for a joiner, or its joiner removed)."""
    AWAY = "away"
    """Taken, and no connection holds it: its holder may come back with its token (``away_since``: when it
    left, and the grace period runs; None while it is being seated, or when the relay is stopping)."""
    PRESENT = "present"
    """A connection holds it (``conn``)."""
    CLOSED = "closed"
    """Its room closed."""


@dataclass(eq=False)
class Seat:
    line: Numbering
    """The frames the relay took from this seat, and the witness's record of them."""
    buffer: Buffer
    """Frames from the other seat waiting for this seat while it is away."""
    state: SeatState = SeatState.EMPTY
    token_hash: bytes | None = None
    conn: Conn | None = None
    away_since: float | None = None
    grace_gen: int = 0
    """Bumped whenever the seat's grace timer is set or cancelled: older timers are void."""
    attaches: int = 0
    """How often a connection took this seat in this room (created, joined, resumed, rebuilt)."""
    addr: Addr | None = None
    """The address the seat was last held from."""
    certify_bucket: TokenBucket | None = None
    left_done: bool = False
    """This seat's last ``leave`` said ``done`` (the match is over): when the other seat says so too, the room
    closes at once instead of after the grace period."""
    player_key: bytes | None = None
    """The player key that proved this seat when it was taken (created or joined; in a rebuilt room, at the
    seat's first resume): every later resume must prove the same key, and certificates name it."""

    @classmethod
    def new(cls, max_frames: int, max_bytes: int) -> Seat:
        return cls(Numbering(), Buffer(max_frames, max_bytes))

    def check(self) -> None:
        """The lifecycle invariants: only an EMPTY seat (or a CLOSED one that was) holds no token, and no
        time away; only a PRESENT one a connection."""
        st = self.state
        assert st is SeatState.CLOSED or (st is SeatState.EMPTY) == (self.token_hash is None), st
        assert (st is SeatState.PRESENT) == (self.conn is not None), st
        assert st is not SeatState.EMPTY or self.away_since is None, st

    # the numbering's counts, read-only (the numbering keeps them)
    @property
    def in_count(self) -> int | None:
        return self.line.in_count

    @property
    def highest(self) -> int:
        return self.line.highest

    @property
    def pending(self) -> Buffer:
        return self.buffer

    @property
    def presence(self) -> Presence:
        """This seat as the other seat is told of it."""
        if self.state is SeatState.EMPTY:
            return Presence.WAITING
        return Presence.PRESENT if self.conn is not None else Presence.AWAY

    # ------------------------------------------------------------------ transitions

    def take(self, token_hash: bytes, player_key: bytes | None, seated_at: float) -> None:
        """EMPTY → AWAY: the seat is given to the holder of a token (``player_key``: None in a rebuilt room, where
        the seat's first resume binds it)."""
        assert self.state is SeatState.EMPTY
        self.state = SeatState.AWAY
        self.token_hash = token_hash
        self.player_key = player_key
        self.line.clock.seated_at = seated_at
        self.check()

    def attach(self, conn: Conn) -> None:
        """AWAY → PRESENT: ``conn`` holds the seat; a grace timer running for it is void."""
        assert self.state is SeatState.AWAY and self.conn is None, self.state
        self.state = SeatState.PRESENT
        self.attaches += 1
        self.left_done = False
        self.addr = conn.addr
        self.grace_gen += 1
        self.conn = conn
        self.away_since = None
        self.check()

    def release(self) -> None:
        """PRESENT → AWAY with no grace: its connection is being replaced, or the relay is stopping."""
        assert self.state is SeatState.PRESENT
        self.state = SeatState.AWAY
        self.conn = None
        self.check()

    def go_away(self, now: float) -> int:
        """PRESENT → AWAY: its connection went, and its grace period starts (the timer's generation returned)."""
        self.release()
        return self.awaited(now)

    def awaited(self, now: float) -> int:
        """AWAY: its holder is awaited from ``now`` (the grace period starts: the timer's generation returned)."""
        assert self.state is SeatState.AWAY
        self.away_since = now
        return self.void_grace()

    def void_grace(self) -> int:
        """Void the grace timer running for this seat (the new generation is returned, for a new timer)."""
        self.grace_gen += 1
        return self.grace_gen

    def free(self) -> None:
        """→ EMPTY: its joiner is removed before it sent a frame; nothing of it counts any more."""
        assert self.state is not SeatState.CLOSED
        self.state = SeatState.EMPTY
        self.token_hash = None
        self.conn = None
        self.away_since = None
        self.void_grace()
        self.buffer.clear()
        self.line.forget()
        self.certify_bucket = None
        self.player_key = None
        self.check()

    def close(self) -> Conn | None:
        """→ CLOSED: its room closed; the connection that held it (if any) is returned."""
        conn = self.conn
        self.state = SeatState.CLOSED
        self.void_grace()
        self.buffer.clear()
        self.conn = None
        return conn


@dataclass(eq=False)
class Room:
    rid: int
    code: str
    private: bool
    rounds: int | None
    double_at_8: bool | None
    password: codes.PasswordHash | None
    created: float
    seats: tuple[Seat, Seat]
    move_time_s: int | None = DEFAULT_MOVE_TIME_S
    deck: RoomDeck | None = RoomDeck.SHARED
    """``sealed`` or ``shared`` as the creator named it (none named: ``shared``); None in a restored room.
    For the lobby only: the players' HELLOs bind it (spec/relay.md)."""
    restored: bool = False
    closed: RoomEnd | None = None
    creator: str = ""
    """The creator's address key (rooms, and waiting rooms, are counted per address)."""
    join_gen: int = 0
    """Bumped at every join and removal: a first-frame timer for an earlier joiner is void."""
    owner: Addr | None = None
    """The creator's :class:`Addr` (it counts the room while it is open)."""
    watch: RoomWatch = field(default_factory=RoomWatch)
    """Its watchers and its log (spec/relay.md "Watchers")."""

    @property
    def waiting(self) -> bool:
        return self.seats[1].token_hash is None

    def log_id(self) -> dict[str, Any]:
        return {"room_id": self.rid} if self.private else {"room_id": self.rid, "room": self.code}


@dataclass(frozen=True, slots=True)
class Tombstone:
    """What the relay remembers of a closed room: why, when, and the closing certificate for the seat
    that was still there (``opponent_left``), given again to that seat's token holder on ``resume``."""

    reason: RoomEnd
    at: float
    cert_for: bytes | None = None
    cert: bytes | None = None
