"""The relay's words: why a connection or a room closes, why a request is refused, and its statuses and modes.

Each is a :class:`~enum.StrEnum` whose values are the wire strings (spec/relay.md), so a member goes into a
message or a log line as the string it is; each set of texts is one registry here (:data:`CLOSE_MESSAGES`,
:data:`ROOM_CLOSE_MESSAGES`, :data:`REFUSAL_TEXTS`), never a copy at a call site.
"""

from __future__ import annotations

from enum import Enum, StrEnum
from typing import Any

from ..errors import RemoteError
from . import codes

__all__ = [
    "CLOSE_CODES",
    "CLOSE_MESSAGES",
    "DEFAULT_MOVE_TIME_S",
    "MAX_MOVE_TIME_S",
    "REFUSAL_TEXTS",
    "ROOM_CLOSE_MESSAGES",
    "WATCH_CLOSE_MESSAGES",
    "CloseReason",
    "PasswordOp",
    "PeerEvent",
    "Presence",
    "Refusal",
    "Refused",
    "RoomDeck",
    "RoomEnd",
    "RoomState",
    "TimerKind",
    "refuse",
    "say",
]

DEFAULT_MOVE_TIME_S = 120
"""A room's move time when its creator does not say (0 means no clock)."""
MAX_MOVE_TIME_S = 86_400


class CloseReason(StrEnum):
    """Why the relay closes a connection: ``bye.reason``, and the WebSocket close reason."""

    BYE = "bye"
    SHUTDOWN = "shutdown"
    BINARY_ONLY = "binary_only"
    OVERSIZED_FRAME = "oversized_frame"
    PROTOCOL_ERROR = "protocol_error"
    RATE_LIMITED = "rate_limited"
    IDLE_TIMEOUT = "idle_timeout"
    TOO_MANY_CONNECTIONS = "too_many_connections"
    RELAY_FULL = "relay_full"
    SLOW_CONSUMER = "slow_consumer"
    REPLACED = "replaced"
    TOO_MANY_ATTEMPTS = "too_many_attempts"


CLOSE_CODES: dict[str, int] = {
    CloseReason.BYE: 1000,
    CloseReason.SHUTDOWN: 1001,
    CloseReason.BINARY_ONLY: 1003,
    CloseReason.OVERSIZED_FRAME: 1009,
    CloseReason.PROTOCOL_ERROR: 4000,
    CloseReason.RATE_LIMITED: 4001,
    CloseReason.IDLE_TIMEOUT: 4002,
    CloseReason.TOO_MANY_CONNECTIONS: 4003,
    CloseReason.RELAY_FULL: 4004,
    CloseReason.SLOW_CONSUMER: 4005,
    CloseReason.REPLACED: 4006,
    CloseReason.TOO_MANY_ATTEMPTS: 4007,
}
"""WebSocket close code for each close reason (the reason text is the key)."""

CLOSE_MESSAGES: dict[str, str] = {
    CloseReason.SHUTDOWN: "the relay is shutting down",
    CloseReason.BINARY_ONLY: "the relay takes binary WebSocket messages only",
    CloseReason.OVERSIZED_FRAME: "a frame was over the size limit",
    CloseReason.RATE_LIMITED: "too many frames per second",
    CloseReason.IDLE_TIMEOUT: "no answer to pings",
    CloseReason.TOO_MANY_CONNECTIONS: "too many connections from this address",
    CloseReason.RELAY_FULL: "the relay has too many connections",
    CloseReason.SLOW_CONSUMER: "the connection did not read its frames fast enough",
    CloseReason.REPLACED: "the seat was taken back by its holder on another connection",
    CloseReason.TOO_MANY_ATTEMPTS: "too many failed attempts (wrong password, unknown room or bad token)",
}
"""The ``bye`` message's text for each close reason (``bye`` itself: the reason)."""


class RoomEnd(StrEnum):
    """Why a room closed: ``room_closed.reason`` (spec/relay.md "Room close reasons")."""

    OPPONENT_LEFT = "opponent_left"
    OPPONENT_QUIT = "opponent_quit"
    MATCH_OVER = "match_over"
    FINISHED = "finished"
    ABANDONED = "abandoned"
    SHUTDOWN = "shutdown"
    REMOVED = "removed"


ROOM_CLOSE_MESSAGES: dict[str, str] = {
    RoomEnd.OPPONENT_LEFT: "the opponent did not come back within the grace period",
    RoomEnd.OPPONENT_QUIT: "the opponent left the room",
    RoomEnd.MATCH_OVER: "the opponent left the room: the match is over",
    RoomEnd.FINISHED: "the match was over and nobody came back to the room within the grace period",
    RoomEnd.ABANDONED: "nobody came back to the room within the grace period",
    RoomEnd.SHUTDOWN: "the relay is shutting down",
    RoomEnd.REMOVED: "you sent nothing within the handshake time: the seat was given back to the lobby",
}

WATCH_CLOSE_MESSAGES: dict[str, str] = {
    RoomEnd.OPPONENT_LEFT: "a player did not come back within the grace period",
    RoomEnd.OPPONENT_QUIT: "the host left the room before anyone joined",
    RoomEnd.MATCH_OVER: "both players left the room: the match is over",
    RoomEnd.FINISHED: "the match was over and nobody came back to the room within the grace period",
    RoomEnd.ABANDONED: "both players left and nobody came back to the room within the grace period",
    RoomEnd.SHUTDOWN: "the relay is shutting down",
    RoomEnd.REMOVED: "the joiner was removed",
}
"""``room_closed.message`` as a watcher is told it (the reason is the same as the seats')."""


class Refusal(StrEnum):
    """The ``code`` of an ``error`` answer (spec/relay.md "Errors"); its texts are in :data:`REFUSAL_TEXTS`."""

    BAD_REQUEST = "bad_request"
    ALREADY_SEATED = "already_seated"
    NOT_SEATED = "not_seated"
    BAD_PROOF = "bad_proof"
    ROOM_TAKEN = "room_taken"
    TOO_MANY_ROOMS = "too_many_rooms"
    TOO_MANY_OPEN_ROOMS = "too_many_open_rooms"
    TOO_MANY_WAITING_ROOMS = "too_many_waiting_rooms"
    TOO_MANY_PASSWORD_CHECKS = "too_many_password_checks"
    TOO_MANY_ATTEMPTS = "too_many_attempts"
    ROOM_NOT_FOUND = "room_not_found"
    ROOM_FULL = "room_full"
    SETTINGS_MISMATCH = "settings_mismatch"
    WRONG_PASSWORD = "wrong_password"
    ROOM_CLOSED = "room_closed"
    BAD_TOKEN = "bad_token"
    WRONG_KEY = "wrong_key"
    NO_OPPONENT = "no_opponent"
    REBUILT_ROOM = "rebuilt_room"
    SEAT_LOCKED_OUT = "seat_locked_out"
    TOO_MANY_REQUESTS = "too_many_requests"
    WATCHERS_OFF = "watchers_off"
    TOO_MANY_WATCHERS = "too_many_watchers"
    TOO_MANY_WATCHING = "too_many_watching"
    WATCHING = "watching"


REFUSAL_TEXTS: dict[Refusal, dict[str, str]] = {
    # per code, its texts by the case each names (the first: the code's usual one); ``{name}`` is filled in
    Refusal.BAD_REQUEST: {
        "type": "unknown message type {t!r}",
        "rounds": "rounds must be 6 or 12",
        "deck": "deck must be sealed or shared",
        "move_time": f"move_time_s must be a whole number of seconds, 0 to {MAX_MOVE_TIME_S}",
        "flags": "double_at_8, private and watchers must be true or false",
        "password": f"a password is 1 to {codes.MAX_PASSWORD_BYTES} bytes of text",
        "key": "{re} needs the player's key (32 bytes) and proof (64 bytes)",
        "code": "room must be a {length}-character room code",
        "resume": "resume needs room, seat (0 or 1), token and received (>= 0)",
        "watch": "watch needs room (a code), and if given from (a whole number >= 0) and password (text)",
    },
    Refusal.ALREADY_SEATED: {
        "": "this connection already holds a seat; leave first",
        "watch": "this connection holds a seat: a player does not watch; use another connection",
    },
    Refusal.NOT_SEATED: {
        "": "this connection holds no seat",
        "frame": "frames need a seat: create, join or resume a room first",
        "certify": "certificates are for seated players: create, join or resume a room first",
    },
    Refusal.BAD_PROOF: {"": "the proof is not that key's signature of this relay's key and nonce"},
    Refusal.ROOM_TAKEN: {
        "": "a room with that code exists or closed lately; draw another",
        "lately": "this relay started lately: it takes no chosen codes yet; draw none",
    },
    Refusal.TOO_MANY_ROOMS: {"": "the relay holds its maximum of {max_rooms} rooms; try later"},
    Refusal.TOO_MANY_OPEN_ROOMS: {"": "this address already holds {rooms} open; finish or leave one first"},
    Refusal.TOO_MANY_WAITING_ROOMS: {"": "this address already has {rooms} waiting for an opponent"},
    Refusal.TOO_MANY_PASSWORD_CHECKS: {"": "too many password checks from this address at once; try again shortly"},
    Refusal.TOO_MANY_ATTEMPTS: {
        "": "too many failed attempts from this address; try later",
        "room": "too many wrong passwords for this room from this address lately; try later",
    },
    Refusal.ROOM_NOT_FOUND: {"": "no room {room!r} on this relay", "gone": "the room closed meanwhile"},
    Refusal.ROOM_FULL: {"": "both seats of this room are taken"},
    Refusal.SETTINGS_MISMATCH: {"": "the room's {key} is {have!r}, not {want!r}"},
    Refusal.WRONG_PASSWORD: {"": "wrong password for this room", "none": "this room needs a password"},
    Refusal.ROOM_CLOSED: {},  # the message is the room's close message (ROOM_CLOSE_MESSAGES)
    Refusal.BAD_TOKEN: {"": "that token does not hold this seat"},
    Refusal.WRONG_KEY: {"": "this seat belongs to another player's key"},
    Refusal.NO_OPPONENT: {"": "nobody has taken the other seat yet"},
    Refusal.REBUILT_ROOM: {"": "this room was rebuilt after a relay restart: no silence is certified here"},
    Refusal.SEAT_LOCKED_OUT: {"": "the other seat's address is being refused connections: no silence certified"},
    Refusal.TOO_MANY_REQUESTS: {
        "": "too many certificate requests for this seat; ask again in a second",
        "watch": "too many watch requests from this address; ask again in a second",
    },
    Refusal.WATCHERS_OFF: {"": "this room does not allow watchers"},
    Refusal.TOO_MANY_WATCHERS: {"": "this room already has its maximum of {most} watchers; try later"},
    Refusal.TOO_MANY_WATCHING: {"": "this address already has {most} connections watching; leave one first"},
    Refusal.WATCHING: {
        "": "this connection watches a room (read-only): {re} is refused; leave first",
        "frame": "a watcher sends no frames: watching is read-only",
    },
}


def say(code: Refusal, case: str = "", **fields: Any) -> str:
    """The text of refusal ``code`` in ``case`` (its usual one when not named), with ``fields`` filled in."""
    texts = REFUSAL_TEXTS[code]
    return (texts[case] if case else next(iter(texts.values()))).format(**fields)


class Refused(RemoteError):
    """A request refused: the ``error`` answer's ``code``, ``message`` and extra fields."""

    def __init__(self, code: Refusal, message: str, **extra: Any) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.extra = extra


def refuse(code: Refusal, case: str = "", *, extra: dict[str, Any] | None = None, **fields: Any) -> Refused:
    """The refusal ``code`` with its text in ``case`` (:func:`say`) and ``extra`` fields in the answer."""
    return Refused(code, say(code, case, **fields), **(extra or {}))


class RoomDeck(StrEnum):
    """A room's deck mode (spec/sealed.md); a creator that names none: ``shared``."""

    SEALED = "sealed"
    SHARED = "shared"


class RoomState(StrEnum):
    """``info``'s ``state``: whether a room waits for its second player."""

    WAITING = "waiting"
    PLAYING = "playing"


class Presence(StrEnum):
    """The other seat, as ``joined`` and ``resumed`` name it (``peer``)."""

    WAITING = "waiting"
    """Nobody took it yet."""
    PRESENT = "present"
    AWAY = "away"


class PeerEvent(StrEnum):
    """``peer.event``: what the other seat did."""

    JOINED = "joined"
    AWAY = "away"
    BACK = "back"
    LEFT = "left"


class PasswordOp(StrEnum):
    """The request a connection's password work is for (its ``re`` if refused)."""

    CREATE = "create"
    JOIN = "join"
    WATCH = "watch"


class TimerKind(Enum):
    """What a relay timer is for."""

    GRACE = "grace"
    """A seat away: its room closes unless it comes back (or the other seat also left)."""
    FIRST_FRAME = "first_frame"
    """A joiner that never sent a frame is removed."""
