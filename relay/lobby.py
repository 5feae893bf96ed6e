"""The lobby (:class:`Lobby`): ``create``, ``list``, ``info`` and ``join`` — a room made, shown, and its
second seat taken (with password work when the room has a password)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..protocol.witness import seat_proof_ok
from . import codes
from .admission import Admission
from .config import RelayConfig
from .effects import Effects, HashPassword, Timers, VerifyPassword
from .room import Conn, Room
from .rooms import Rooms, doubling_label
from .vocabulary import (
    DEFAULT_MOVE_TIME_S,
    MAX_MOVE_TIME_S,
    PasswordOp,
    PeerEvent,
    Refusal,
    RoomDeck,
    RoomState,
    TimerKind,
    refuse,
)

__all__ = ["DECKS", "Lobby", "proven_key"]

DECKS = frozenset(d.value for d in RoomDeck)
"""A room's deck modes, as a request names them."""


def proven_key(obj: dict[Any, Any], re: str, relay_key: bytes, nonce: bytes) -> bytes:
    """The player key ``obj`` proves (``key``, and ``proof``: its signature of ``witness.seat_claim`` over
    ``relay_key`` and the connection's ``nonce``), or a refusal: a seat is always bound to a proven key."""
    key, proof = obj.get("key"), obj.get("proof")
    if type(key) is not bytes or len(key) != 32 or type(proof) is not bytes or len(proof) != 64:
        raise refuse(Refusal.BAD_REQUEST, "key", re=re)
    if not seat_proof_ok(key, proof, relay_key, nonce):
        raise refuse(Refusal.BAD_PROOF)
    return key


@dataclass(eq=False)
class Lobby:
    """Rooms made, listed, described and joined."""

    cfg: RelayConfig
    out: Effects
    timers: Timers
    rooms: Rooms
    admission: Admission
    relay_key: bytes

    def _proven_key(self, conn: Conn, obj: dict[Any, Any], re: str) -> bytes:
        return proven_key(obj, re, self.relay_key, conn.nonce)

    # ------------------------------------------------------------------ create

    def on_create(self, conn: Conn, obj: dict[Any, Any]) -> None:
        if conn.room is not None:
            raise refuse(Refusal.ALREADY_SEATED)
        rounds = obj.get("rounds", 6)
        double = obj.get("double_at_8", True)
        private = obj.get("private", False)
        password = obj.get("password")
        move_time = obj.get("move_time_s", DEFAULT_MOVE_TIME_S)
        deck = obj.get("deck", RoomDeck.SHARED.value)
        if rounds not in (6, 12) or type(rounds) is not int:
            raise refuse(Refusal.BAD_REQUEST, "rounds")
        if type(deck) is not str or deck not in DECKS:
            raise refuse(Refusal.BAD_REQUEST, "deck")
        if type(move_time) is not int or not 0 <= move_time <= MAX_MOVE_TIME_S:
            raise refuse(Refusal.BAD_REQUEST, "move_time")
        watchers = obj.get("watchers", False)
        if type(double) is not bool or type(private) is not bool or type(watchers) is not bool:
            raise refuse(Refusal.BAD_REQUEST, "flags")
        if password is not None and (
            type(password) is not str or not password or len(password.encode()) > codes.MAX_PASSWORD_BYTES
        ):
            raise refuse(Refusal.BAD_REQUEST, "password")
        self._proven_key(conn, obj, "create")
        rooms = self.rooms
        if "room" in obj:  # a code the creator drew itself (to route by it, spec/relay.md "More than one relay")
            want = codes.normalize_code(obj["room"]) if isinstance(obj["room"], str) else None
            length = codes.PRIVATE_CODE_LENGTH if private else codes.PUBLIC_CODE_LENGTH
            if want is None or len(want) != length:
                raise refuse(Refusal.BAD_REQUEST, "code", length=length)
            if rooms.taken(want):
                raise refuse(Refusal.ROOM_TAKEN)
            if self.cfg.chosen_codes_after_s and (
                rooms.started is None or self.out.now - rooms.started < self.cfg.chosen_codes_after_s
            ):
                # a relay that started lately cannot know whether the code is a match's from before its start
                # (a cheater could create it anew and take both seats of that match)
                raise refuse(Refusal.ROOM_TAKEN, "lately")
        rooms.check_count(conn)
        self.admission.check_address_rooms(conn, "create")
        if password is not None:
            self.admission.start_password_work(conn, PasswordOp.CREATE, obj, HashPassword(conn.id, password))
            return
        self.create(conn, obj, None)

    def create(self, conn: Conn, obj: dict[Any, Any], pw: codes.PasswordHash | None) -> None:
        """Make the room ``obj`` asked for (its checks done, ``pw`` its password's hash) with ``conn`` at seat 0."""
        if conn.room is not None:
            return
        rooms = self.rooms
        rooms.check_count(conn)
        private = obj.get("private", False)
        self.admission.check_address_rooms(conn, "create")
        want = codes.normalize_code(obj["room"]) if isinstance(obj.get("room"), str) else None
        if want is not None and rooms.taken(want):
            raise refuse(Refusal.ROOM_TAKEN)
        deck = RoomDeck(obj.get("deck", RoomDeck.SHARED))
        watchers = obj.get("watchers", deck is RoomDeck.SEALED)  # (by default: sealed rooms, whose watchers see
        # only public cards; in a shared room a watcher could compute every hand)
        room = rooms.new_room(
            private, obj.get("rounds", 6), obj.get("double_at_8", True), pw, conn.addr, code=want, watchers=watchers
        )
        room.move_time_s = obj.get("move_time_s", DEFAULT_MOVE_TIME_S)
        room.deck = deck
        token = codes.new_token()
        room.seats[0].take(codes.token_hash(token), self._proven_key(conn, obj, "create"), room.created)
        rooms.attach(room, 0, conn, 0)
        self.out.log(
            "room_created",
            **room.log_id(),
            conn=conn.id,
            private=private,
            rounds=room.rounds,
            double_at_8=room.double_at_8,
            move_time_s=room.move_time_s,
            deck=room.deck,
            watchers=watchers,
            password=pw is not None,
        )
        self.out.send(
            conn,
            {
                "t": "created",
                "room": room.code,
                "display": codes.format_code(room.code),
                "seat": 0,
                "token": token,
                "private": private,
                "password": pw is not None,
                "settings": rooms.settings(room),
                "archive": self.cfg.archive,
            },
        )

    # ------------------------------------------------------------------ list, info

    def on_list(self, conn: Conn, obj: dict[Any, Any]) -> None:
        now = self.out.now
        public = [
            r
            for r in self.rooms.rooms.values()
            if not r.private and r.waiting and r.closed is None and r.seats[0].conn is not None
        ]
        public.sort(key=lambda r: r.created)
        self.out.send(
            conn,
            {
                "t": "rooms",
                "total": len(public),
                "rooms": [
                    {
                        "room": r.code,
                        "rounds": r.rounds,
                        "double_at_8": r.double_at_8,
                        "doubling": doubling_label(r.double_at_8),
                        "move_time_s": r.move_time_s,
                        "deck": r.deck,
                        "watchers": r.watch.allowed,
                        "watching": len(r.watch.conns),
                        "password": r.password is not None,
                        "waiting_s": int(now - r.created),
                    }
                    for r in public[: self.cfg.max_list]
                ],
                "archive": self.cfg.archive,
            },
        )

    def on_info(self, conn: Conn, obj: dict[Any, Any]) -> None:
        room = self.rooms.find(conn, "info", obj.get("room"))
        self.out.send(
            conn,
            {
                "t": "room",
                "room": room.code,
                "display": codes.format_code(room.code),
                **self.rooms.settings(room),
                "password": room.password is not None,
                "private": room.private,
                "state": RoomState.WAITING if room.waiting else RoomState.PLAYING,
                "waiting_s": int(self.out.now - room.created),
                "watching": len(room.watch.conns),
                "archive": self.cfg.archive,
            },
        )

    # ------------------------------------------------------------------ join

    def on_join(self, conn: Conn, obj: dict[Any, Any]) -> None:
        if conn.room is not None:
            raise refuse(Refusal.ALREADY_SEATED)
        player_key = self._proven_key(conn, obj, "join")
        room = self.rooms.find(conn, "join", obj.get("room"))
        metrics = self.out.metrics
        if not room.waiting:
            metrics.join_failed(Refusal.ROOM_FULL)
            raise refuse(Refusal.ROOM_FULL)
        for key in ("rounds", "double_at_8", "move_time_s", "watchers"):
            want = obj.get(key)
            have = room.watch.allowed if key == "watchers" else getattr(room, key)
            if want is not None and want != have:
                metrics.join_failed(Refusal.SETTINGS_MISMATCH)
                raise refuse(
                    Refusal.SETTINGS_MISMATCH,
                    key=key,
                    have=have,
                    want=want,
                    extra={"settings": self.rooms.settings(room)},
                )
        admission = self.admission
        admission.check_room_attempts(conn, room)  # also bars a joiner removed for silence from this room
        if room.password is None:
            self._seat_joiner(conn, room, player_key)
            return
        password = obj.get("password")
        if type(password) is not str or not password:
            metrics.join_failed(Refusal.WRONG_PASSWORD)
            raise refuse(Refusal.WRONG_PASSWORD, "none")
        admission.check_room_attempts(conn, room)
        if len(password.encode()) > codes.MAX_PASSWORD_BYTES:
            self.join_checked(conn, obj, False)
            return
        admission.start_password_work(conn, PasswordOp.JOIN, obj, VerifyPassword(conn.id, password, room.password))

    def join_checked(self, conn: Conn, obj: dict[Any, Any], ok: bool) -> None:
        """The password of the ``join`` ``obj`` was checked: ``ok``, right."""
        code = codes.normalize_code(obj["room"])
        room = self.rooms.rooms.get(code) if code is not None else None
        if not ok:
            raise self.admission.wrong_password(conn, room)
        if room is None or room.closed is not None:
            raise refuse(Refusal.ROOM_NOT_FOUND, "gone")
        if not room.waiting:
            raise refuse(Refusal.ROOM_FULL)
        if conn.room is None:
            self._seat_joiner(conn, room, self._proven_key(conn, obj, "join"))

    def _seat_joiner(self, conn: Conn, room: Room, key: bytes) -> None:
        now, timers = self.out.now, self.timers
        token = codes.new_token()
        th = codes.token_hash(token)
        room.seats[1].take(th, key, now)
        room.join_gen += 1
        timers.schedule(now + self.cfg.first_frame_timeout, TimerKind.FIRST_FRAME, room, 1, room.join_gen)
        first = room.seats[0]
        if first.conn is None and first.away_since is not None:
            # the creator left a waiting room (short grace) and someone joined: now somebody waits on it,
            # so the creator gets the full grace from when it left
            timers.schedule(first.away_since + self.cfg.grace, TimerKind.GRACE, room, 0, first.void_grace())
        self.rooms.attach(room, 1, conn, 0)
        self.out.metrics.joins_total += 1
        self.out.log("room_joined", **room.log_id(), conn=conn.id)
        assert first.token_hash is not None
        self.out.send(
            conn,
            {
                "t": "joined",
                "room": room.code,
                "display": codes.format_code(room.code),
                "seat": 1,
                "token": token,
                "settings": self.rooms.settings(room),
                "peer_check": first.token_hash,
                "peer": first.presence,
                "peer_key": first.player_key,
            },
        )
        self.rooms.flush(room, 1)
        if first.conn is not None:
            self.out.send(
                first.conn,
                {
                    "t": "peer",
                    "event": PeerEvent.JOINED,
                    "peer_check": th,
                    "received": first.in_count,
                    "peer_key": key,
                },
            )
