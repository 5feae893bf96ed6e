"""Restore: a room rebuilt from a seat's ticket after a relay restart (spec/relay.md "Relay restarts").

The relay keeps no state across restarts; a seat holder that comes back to a room the relay does not know
(and that did not close lately) brings what it knows: its seat and token, the other seat's ``peer_check`` and the
settings. The rebuilt room is never listed, its counts are unknown until the seats speak, and the witness
certifies no silence in it (:meth:`koikoi.relay.certify.Certifier.refusal`).
"""

from __future__ import annotations

from typing import Any

from .admission import Admission
from .config import RelayConfig
from .effects import Effects, Timers
from .lobby import DECKS
from .room import Conn, Room
from .rooms import Rooms
from .vocabulary import MAX_MOVE_TIME_S, Refusal, RoomDeck, TimerKind, refuse

__all__ = ["Restorer"]


class Restorer:
    """Rebuilds a room from a ``resume`` (when ``cfg.restore``)."""

    def __init__(self, cfg: RelayConfig, outbox: Effects, timers: Timers, rooms: Rooms, admission: Admission) -> None:
        self.cfg = cfg
        self._out = outbox
        self._timers = timers
        self._rooms = rooms
        self._admission = admission

    def rebuild(self, conn: Conn, obj: dict[Any, Any], code: str | None, s: int, token_hash: bytes) -> Room:
        """The room ``code`` that ``conn`` resumes seat ``s`` of (with a token of ``token_hash``) as its ``resume``
        ``obj`` tells it, or a failed attempt (``room_not_found``) when it cannot be rebuilt."""
        peer_check = obj.get("peer_check")
        if not self.cfg.restore or code is None or type(peer_check) is not bytes or len(peer_check) != 32:
            raise self._admission.fail(conn, "resume", refuse(Refusal.ROOM_NOT_FOUND, room=obj.get("room")))
        self._rooms.check_count(conn)
        self._admission.check_address_rooms(conn, "resume")
        settings = obj.get("settings")
        rounds = double = move_time = deck = None
        watchers = False  # (unless the resumer says so: a rebuilt room's log begins at the restart anyway)
        if type(settings) is dict:
            r, d, mt = settings.get("rounds"), settings.get("double_at_8"), settings.get("move_time_s")
            rounds = r if r in (6, 12) and type(r) is int else None
            double = d if type(d) is bool else None
            move_time = mt if type(mt) is int and 0 <= mt <= MAX_MOVE_TIME_S else None
            dk = settings.get("deck")
            deck = RoomDeck(dk) if type(dk) is str and dk in DECKS else None
            watchers = settings.get("watchers") is True
        room = self._rooms.new_room(True, rounds, double, None, conn.addr, code=code, watchers=watchers)
        room.move_time_s = move_time
        room.deck = deck
        room.restored = True
        me, other = room.seats[s], room.seats[1 - s]
        me.take(token_hash, None, room.created)  # (each seat's first resume binds its key)
        other.take(peer_check, None, room.created)
        for seat in room.seats:
            seat.line.unknown()
        self._out.log("room_restored", **room.log_id(), seat=s)
        # the other seat gets the usual grace period to come back
        now = self._out.now
        self._timers.schedule(now + self.cfg.grace, TimerKind.GRACE, room, 1 - s, other.awaited(now))
        return room
