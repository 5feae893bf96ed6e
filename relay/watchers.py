"""Watchers (:class:`Watchers`): ``watch`` (with its refusals, limits and password work), the room's log sent to
a late watcher from ``from``, every frame a seat sends after it as ``seen``, ``leave``, the room's close told to
its watchers, and the room handed to the archive (spec/relay.md "Watchers", "The archive").

A watcher is a connection without a seat that reads a room's frames: it sends none (``watching``), and it
never slows a seat (its outbox is its own; a full one closes it as a slow consumer).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import codes
from .admission import Admission
from .config import RelayConfig
from .effects import Archive, Effects, VerifyPassword, seen
from .room import Conn, Room
from .rooms import Rooms
from .vocabulary import WATCH_CLOSE_MESSAGES, PasswordOp, Refusal, RoomEnd, refuse

__all__ = ["Watchers"]


class Watchers:
    """Who watches which room; every room's log and its archive hand-over."""

    def __init__(self, cfg: RelayConfig, outbox: Effects, rooms: Rooms, admission: Admission) -> None:
        self.cfg = cfg
        self._out = outbox
        self._rooms = rooms
        self._admission = admission
        self.count = 0
        """Connections watching a room now (the ``watchers`` gauge)."""
        self.log_bytes = 0
        """Bytes of player frames the open rooms' logs keep, together (within ``watch_log_total_bytes``)."""

    # ------------------------------------------------------------------ watch

    def on_watch(self, conn: Conn, obj: dict[Any, Any]) -> None:
        if conn.room is not None:
            raise refuse(Refusal.ALREADY_SEATED, "watch")
        if conn.watching is not None:
            raise refuse(Refusal.WATCHING, re="watch")
        first = obj.get("from", 0)
        password = obj.get("password")
        if type(first) is not int or first < 0 or (password is not None and type(password) is not str):
            raise refuse(Refusal.BAD_REQUEST, "watch")
        room = self._rooms.find(conn, "watch", obj.get("room"))  # (an unknown code: a failed attempt)
        self._check(conn, room)
        if room.password is None:
            self._start(conn, room, first)
            return
        admission = self._admission
        if not password:
            self._out.metrics.join_failed(Refusal.WRONG_PASSWORD)
            raise refuse(Refusal.WRONG_PASSWORD, "none")
        admission.check_room_attempts(conn, room)
        if len(password.encode()) > codes.MAX_PASSWORD_BYTES:
            self.watch_checked(conn, obj, False)
            return
        admission.start_password_work(conn, PasswordOp.WATCH, obj, VerifyPassword(conn.id, password, room.password))

    def watch_checked(self, conn: Conn, obj: dict[Any, Any], ok: bool) -> None:
        """The password of the ``watch`` ``obj`` was checked: ``ok``, right."""
        code = codes.normalize_code(obj["room"])
        room = self._rooms.rooms.get(code) if code is not None else None
        if not ok:
            raise self._admission.wrong_password(conn, room, "watch")
        if room is None or room.closed is not None:
            raise refuse(Refusal.ROOM_NOT_FOUND, "gone")
        if conn.room is None and conn.watching is None:
            self._check(conn, room)  # (again: the room and the address may have more watchers by now)
            self._start(conn, room, obj.get("from", 0))

    def _check(self, conn: Conn, room: Room) -> None:
        w = room.watch
        if not w.allowed:
            raise refuse(Refusal.WATCHERS_OFF)
        most = self.cfg.max_watchers_per_room
        if len(w.conns) >= most:
            self._out.limit(conn, "watchers_per_room", "too_many_watchers", **room.log_id())
            raise refuse(Refusal.TOO_MANY_WATCHERS, most=most)
        self._admission.check_watching(conn)

    def _start(self, conn: Conn, room: Room, first: int) -> None:
        w, out = room.watch, self._out
        log = w.log
        assert log is not None  # (a room that allows watchers keeps its log)
        self._admission.take_watch(conn)  # (each watch sends the log again: a watch-leave loop is budgeted)
        conn.watching = room
        w.conns[conn.id] = conn
        conn.addr.watching += 1
        self.count += 1
        out.metrics.watches_total += 1
        out.log("watch_started", **room.log_id(), conn=conn.id, ip=conn.ip, first=first)
        out.send(
            conn,
            {
                "t": "watching",
                "room": room.code,
                "display": codes.format_code(room.code),
                "settings": self._rooms.settings(room),
                "seats": [seat.presence for seat in room.seats],
                "frames": log.count,
                "watchers": len(w.conns),
            },
        )
        frames = log.since(first)
        if frames:
            out.replay(conn, first, frames)

    # ------------------------------------------------------------------ leaving

    def _stop(self, conn: Conn) -> Room | None:
        room = conn.watching
        if room is None:
            return None
        conn.watching = None
        del room.watch.conns[conn.id]
        conn.addr.watching -= 1
        self.count -= 1
        return room

    def on_leave(self, conn: Conn, obj: dict[Any, Any]) -> None:
        """``leave`` from a watcher: it stops watching (``left``) and is back in the lobby."""
        room = self._stop(conn)
        assert room is not None
        self._out.log("watch_stopped", **room.log_id(), conn=conn.id, reason="left")
        self._out.send(conn, {"t": "left", "room": room.code})

    def detach(self, conn: Conn) -> None:
        """``conn`` is gone (or closing): if it watched, it no longer does."""
        room = self._stop(conn)
        if room is not None:
            self._out.log("watch_stopped", **room.log_id(), conn=conn.id, reason=conn.closing or "client_closed")

    # ------------------------------------------------------------------ frames

    def taken(self, room: Room, seat: int, d: bytes, h: bytes) -> None:
        """The relay took frame ``d`` (hash ``h``) from ``seat`` of ``room``, which keeps a log: a frame new to the
        room goes into it (while it has room) and to every watcher (``seen``)."""
        w, out = room.watch, self._out
        log = w.log
        assert log is not None
        was_full, size, budget = log.full, log.size, self.cfg.watch_log_total_bytes - self.log_bytes
        i = log.take(seat, d, h, budget)
        if i is None:
            return
        self.log_bytes += log.size - size
        if log.full and not was_full:  # (logged once: the log keeps nothing more, live frames still flow)
            scope = "relay" if len(d) > budget else "room"
            out.metrics.limit_hit("watch_log")
            out.log(
                "limit_hit",
                limit="watch_log",
                reason="watch_log_full",
                scope=scope,
                **room.log_id(),
                frames=log.count - 1,
            )
        if w.conns:
            msg = seen(i, seat, d)
            out.metrics.watch_frames_total += len(w.conns)
            for conn in w.conns.values():
                out.forward(conn, msg, frame=False)

    # ------------------------------------------------------------------ the room's end

    def room_closed(self, room: Room, reason: RoomEnd) -> None:
        """``room`` closed: its watchers are told (``room_closed``) and back in the lobby; then the archive."""
        out = self._out
        if room.watch.log is not None:
            self.log_bytes -= room.watch.log.size  # (its frames go with it: an Archive holds them until handed over)
        for conn in list(room.watch.conns.values()):
            self._stop(conn)
            out.send(
                conn, {"t": "room_closed", "room": room.code, "reason": reason, "message": WATCH_CLOSE_MESSAGES[reason]}
            )
        self._archive(room)

    def archive_open(self, rooms: Iterable[Room]) -> None:
        """The relay stops: the open rooms both seats took go to the archive as they are (its hook keeps only
        those whose match is over)."""
        for room in rooms:
            self._archive(room)

    def _archive(self, room: Room) -> None:
        w = room.watch
        log = w.log
        if (
            not self.cfg.archive
            or w.archived
            or log is None
            or not log.entries
            or room.restored  # (its log began at the restart: never a whole match)
            or room.seats[1].token_hash is None  # (nobody joined: no match)
        ):
            return
        w.archived = True
        self._out.metrics.archives_total += 1
        self._out.log("room_archived", **room.log_id(), frames=len(log.entries), full=log.full)
        self._out.archive(Archive(room.code, room.private, log.frames()))
