"""The relay's rooms (:class:`Rooms`): the open ones by code, the closed ones remembered a while (tombstones),
and a connection taking a seat or leaving it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import codes
from .admission import Addr, Admission
from .certify import Certifier
from .config import RelayConfig
from .effects import Effects, Timers
from .room import Conn, Room, Seat, Tombstone
from .vocabulary import (
    ROOM_CLOSE_MESSAGES,
    PeerEvent,
    Refusal,
    RoomEnd,
    TimerKind,
    refuse,
)
from .watchlog import RoomLog, RoomWatch

__all__ = ["Rooms", "doubling_label"]


def doubling_label(double_at_8: bool | None) -> str | None:
    if double_at_8 is None:
        return None
    return "×2 at 8+" if double_at_8 else "No ×2 at 8+"


class Rooms:
    """The open rooms (:attr:`rooms`, by code) and the tombstones of closed ones; seating a connection
    (:meth:`attach`), losing it (:meth:`detach`) and closing a room (:meth:`close`)."""

    def __init__(
        self, cfg: RelayConfig, outbox: Effects, timers: Timers, admission: Admission, certifier: Certifier
    ) -> None:
        self.cfg = cfg
        self._out = outbox
        self._timers = timers
        self._admission = admission
        self._certifier = certifier
        self.rooms: dict[str, Room] = {}
        self.tombstones: dict[str, Tombstone] = {}
        self.stopping = False
        """The relay is shutting down: seats no longer go away (no grace timers)."""
        self.started: float | None = None
        """When the first connection came (this process's start, as far as rooms can tell)."""
        self._next_room = 0
        self.on_closed: Callable[[Room, RoomEnd], None] = lambda room, reason: None
        """Called at the end of :meth:`close` (the watchers' ``room_closed``: they are told, then the archive)."""

    def new_room(
        self,
        private: bool,
        rounds: int | None,
        double_at_8: bool | None,
        password: codes.PasswordHash | None,
        owner: Addr,
        code: str | None = None,
        watchers: bool = False,
    ) -> Room:
        """A new open room; ``watchers``: it allows watchers. Its log (:class:`RoomLog`) is kept when it allows
        watchers or this relay keeps an archive."""
        if code is None:
            while True:
                code = codes.new_code(private)
                if code not in self.rooms and code not in self.tombstones:
                    break
        self._next_room += 1
        cap_n, cap_b = self.cfg.seat_buffer_frames, self.cfg.seat_buffer_bytes
        seats = (Seat.new(cap_n, cap_b), Seat.new(cap_n, cap_b))
        room = Room(self._next_room, code, private, rounds, double_at_8, password, self._out.now, seats)
        room.creator = owner.key
        cfg = self.cfg
        keep = watchers or cfg.archive
        room.watch = RoomWatch(watchers, RoomLog(cfg.watch_log_frames, cfg.watch_log_bytes) if keep else None)
        owner.rooms.add(room)
        room.owner = owner
        self.rooms[code] = room
        self._out.metrics.rooms_created_total += 1
        return room

    def settings(self, room: Room) -> dict[str, Any]:
        return {
            "rounds": room.rounds,
            "double_at_8": room.double_at_8,
            "doubling": doubling_label(room.double_at_8),
            "move_time_s": room.move_time_s,
            "deck": room.deck,
            "watchers": room.watch.allowed,
        }

    def check_count(self, conn: Conn) -> None:
        if len(self.rooms) >= self.cfg.max_rooms:
            self._out.limit(conn, "rooms", "too_many_rooms")
            raise refuse(Refusal.TOO_MANY_ROOMS, max_rooms=self.cfg.max_rooms)

    def find(self, conn: Conn, re: str, text: Any) -> Room:
        """The open room ``text`` names, or a failed attempt (``room_not_found``)."""
        self._admission.check_attempts(conn, re)
        code = codes.normalize_code(text) if isinstance(text, str) else None
        room = self.rooms.get(code) if code is not None else None
        if room is None or room.closed is not None:
            raise self._admission.fail(conn, re, refuse(Refusal.ROOM_NOT_FOUND, room=text))
        return room

    def taken(self, code: str) -> bool:
        """A room with ``code`` is open or closed lately."""
        return code in self.rooms or self.tombstone(code) is not None

    def tombstone(self, code: str) -> Tombstone | None:
        t = self.tombstones.get(code)
        if t is None:
            return None
        if t.at < self._out.now - self.cfg.tombstone_s:
            del self.tombstones[code]
            return None
        return t

    def counts(self) -> tuple[int, int]:
        """``(rooms waiting for a joiner, seats away)``."""
        waiting = sum(1 for r in self.rooms.values() if r.waiting)
        away = sum(1 for r in self.rooms.values() for s in r.seats if s.token_hash is not None and s.conn is None)
        return waiting, away

    # ------------------------------------------------------------------ seating

    def attach(self, room: Room, s: int, conn: Conn, received: int) -> None:
        """Seat ``conn`` at seat ``s``, which got the other seat's frames up to ``received``: drop what waited for
        it up to there, and set the other seat's numbering to send on from there."""
        seat, other = room.seats[s], room.seats[1 - s]
        seat.attach(conn)
        # (in a room rebuilt after a restart, a seat's first resume is the only word on how far the other
        # seat's numbering had gone: the relay's count for it, made up or from frames sent meanwhile, gives way)
        if not (room.restored and seat.attaches == 1):
            received = other.line.clamp(received)
        conn.room = room
        conn.seat = s
        dropped, kept = seat.buffer.drop_through(received)
        if not kept:  # (a client skips a gap; the match protocol asks for what it lacks)
            other.line.rewind(received)
        # also those the rewind bound keeps from being sent again (a certificate's recent must not vouch for a
        # message the claimant never got: spec/protocol.md §7.3)
        other.line.missed(received, dropped, kept)

    def flush(self, room: Room, s: int) -> None:
        """Deliver what waited for seat ``s``, which a connection holds again."""
        seat = room.seats[s]
        conn = seat.conn
        assert conn is not None
        for raw in seat.buffer.drain():
            self._out.forward(conn, raw)

    def detach(self, conn: Conn) -> None:
        """``conn`` is gone (or closing): its seat goes away, and its grace period starts."""
        room = conn.room
        if room is None:
            return
        conn.room = None
        seat = room.seats[conn.seat]
        if seat.conn is not conn or room.closed is not None:
            return
        if self.stopping:
            seat.release()
            return
        now = self._out.now
        gen = seat.go_away(now)
        # a creator who left before anyone joined gets a short grace: nobody waits on that room
        grace = self.cfg.waiting_grace if room.waiting and conn.seat == 0 else self.cfg.grace
        self._timers.schedule(now + grace, TimerKind.GRACE, room, conn.seat, gen)
        self._out.log("seat_away", **room.log_id(), seat=conn.seat, grace_s=grace)
        other = room.seats[1 - conn.seat].conn
        if other is not None:
            self._out.send(other, {"t": "peer", "event": PeerEvent.AWAY, "grace_ms": int(self.cfg.grace * 1000)})

    def close(self, room: Room, reason: RoomEnd) -> None:
        if room.closed is not None:
            return
        room.closed = reason
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]
        if room.owner is not None:
            room.owner.rooms.discard(room)
        now = self._out.now
        # the seat still there gets the witness's word
        certs = self._certifier.closing(room) if reason == RoomEnd.OPPONENT_LEFT else {}
        kept = next(iter(certs.items()), None)
        self.tombstones[room.code] = Tombstone(
            reason, now, room.seats[kept[0]].token_hash if kept else None, kept[1] if kept else None
        )
        most = 4 * self.cfg.max_rooms + 1000
        if len(self.tombstones) > most:
            horizon = now - self.cfg.tombstone_s
            for code in [c for c, t in self.tombstones.items() if t.at < horizon]:
                del self.tombstones[code]
            while len(self.tombstones) > most:
                del self.tombstones[next(iter(self.tombstones))]
        self._out.metrics.room_closed(reason)
        self._out.log("room_closed", **room.log_id(), reason=reason)
        for i, seat in enumerate(room.seats):
            conn = seat.close()
            if conn is not None and conn.room is room:
                conn.room = None
                notice: dict[str, Any] = {
                    "t": "room_closed",
                    "room": room.code,
                    "reason": reason,
                    "message": ROOM_CLOSE_MESSAGES[reason],
                }
                if i in certs:
                    notice["cert"] = certs[i]
                self._out.send(conn, notice)
        self.on_closed(room, reason)
