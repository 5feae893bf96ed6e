"""The sealed line's vocabulary: its message kinds (:class:`LineKind`), a message (:class:`Sent`), a refusal
(:class:`LineError`), a round's verdict (:class:`Verdict`), each kind's body shape (:func:`check_shape`)
and a seat's match secret (:func:`match_secret`).

Sans-IO, and no state: the line's judge (:mod:`.line_judge`), a seat (:mod:`.line_seat`) and the round's
verification (:mod:`.line_round`) all speak it.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..engine.actions import Action, ActionKind, NotationError, from_code
from ..engine.deal import Deal
from ..errors import RemoteError
from .codes import Code
from .framing import encode
from .messages import private_bytes
from .sealed import (
    DEALER_HAND,
    OTHER_HAND,
    Claim,
    Disclose,
    Lock,
    Role,
    SealedFault,
    SealedFormatError,
    Shuffle,
    ShuffleLock,
)
from .steps import Step

__all__ = [
    "AUTOMATIC",
    "LINE_RULES",
    "MATCH_SECRET_LABEL",
    "LineError",
    "LineKind",
    "Sent",
    "Verdict",
    "check_shape",
    "draw_key",
    "hand_positions",
    "key_pair",
    "match_secret",
    "move_body",
    "move_keys",
    "play_keys",
]

MATCH_SECRET_LABEL: Final = b"koikoi/sealed/match-secret/v1\x00"

LINE_RULES: Final = frozenset({Code.WRONG_CARD, Code.UNFOUNDED_STOP})
"""Faults of the line itself, beyond :data:`koikoi.protocol.sealed.RULES` (their texts:
:data:`~koikoi.protocol.codes.CODES`)."""


def match_secret(key: Ed25519PrivateKey, sid: bytes, seat: int) -> bytes:
    """A seat's sealed match secret: ``SHA-256(MATCH_SECRET_LABEL ‖ private key ‖ session id ‖ seat)``.

    Derived like :func:`koikoi.protocol.messages.commit_value`, so a resumed seat re-derives every key
    with nothing new stored; never sent (only the round secrets derived from it are disclosed)."""
    return hashlib.sha256(MATCH_SECRET_LABEL + private_bytes(key) + sid + bytes([seat])).digest()


class LineKind(enum.Enum):
    """A message of the sealed line (one envelope type each: the session maps them)."""

    SHUFFLE = "shuffle"
    SHUFFLE_LOCK = "shuffle_lock"
    LOCK = "lock"
    CLAIM = "claim"
    MOVE = "move"
    DRAW = "draw"
    DISCLOSE = "disclose"


AUTOMATIC: Final = frozenset(LineKind) - {LineKind.MOVE}
"""The kinds a seat sends by itself (every kind but a player's decision)."""


@dataclass(frozen=True, slots=True)
class Sent:
    """One message of the sealed line: its signer, its kind and its body (the envelope's fields)."""

    seat: int
    kind: LineKind
    body: tuple[Any, ...]

    def encode(self) -> bytes:
        """The body's canonical msgpack bytes (what the envelope carries)."""
        return encode(list(self.body))


class LineError(RemoteError):
    """A message the line refuses (out of turn, unexpected, illegal, out of sync): ``code`` is a protocol
    error code (``out_of_turn``, ``unexpected_message``, ``illegal_move``, ``desync``,
    ``malformed_message``); the state is unchanged."""

    def __init__(self, code: Code, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")


@dataclass(frozen=True, slots=True)
class Verdict:
    """A round's verification. ``fault``: the proven fault (its ``seat`` filled in), or None.
    ``stopped_by``: the seat that stopped the round early, if one did (no fault: its resignation).
    ``attempt``: the deal attempt the verdict is about (the fault's, else the round's last): an ABORT cites
    the accused's messages of that attempt and its disclosure (spec/sealed-line.md §3)."""

    round: int
    fault: SealedFault | None
    stopped_by: int | None
    deal: Deal | None
    attempt: int = 0

    @property
    def loser(self) -> int | None:
        if self.fault is not None:
            return self.fault.seat
        return self.stopped_by


def hand_positions(role: Role) -> range:
    """The deck positions of ``role``'s hand."""
    return DEALER_HAND if role is Role.DEALER else OTHER_HAND


def key_pair(key: bytes, other: bytes, role: Role) -> tuple[bytes, bytes]:
    """``key`` (``role``'s key for a position) and ``other`` (the other role's) in the order
    :func:`~koikoi.protocol.sealed.open_card` takes them: K's, then O's."""
    return (key, other) if role is Role.OTHER else (other, key)


def move_body(msg: Sent) -> tuple[int, bytes, Sequence[Any]]:
    """A MOVE's ``[action, state_hash, keys]`` (:class:`SealedFormatError`, or :class:`LineError` for a code
    that is no action)."""
    body = msg.body
    if len(body) != 3 or not isinstance(body[2], list | tuple):
        raise SealedFormatError(Step.MOVE, "a move is [action, state_hash, keys]")
    code, state_hash, keys = body
    try:
        from_code(code)
    except NotationError:
        raise LineError(Code.ILLEGAL_MOVE, f"move code {code!r} is no action") from None
    return code, state_hash, keys


def play_keys(keys: Sequence[Any], mover_role: Role) -> tuple[int, bytes, bytes]:
    """A play's ``[position in the mover's hand, hand key, deck key]`` (else :class:`SealedFormatError`)."""
    if len(keys) != 3 or type(keys[0]) is not int or keys[0] not in hand_positions(mover_role):
        raise SealedFormatError(Step.MOVE, "a play carries [position in the mover's hand, hand key, deck key]")
    pos, hand_key, deck_key = keys
    if not (isinstance(hand_key, bytes) and isinstance(deck_key, bytes)):
        raise SealedFormatError(Step.MOVE, "a play's keys are byte strings")
    return pos, hand_key, deck_key


def move_keys(action: Action, keys: Sequence[Any], mover_role: Role) -> tuple[int, bytes, bytes] | None:
    """A play's keys (:func:`play_keys`), or None for any other move, which carries none (else
    :class:`SealedFormatError`)."""
    if action.kind is ActionKind.PLAY:
        return play_keys(keys, mover_role)
    if keys:
        raise SealedFormatError(Step.MOVE, "only a play carries keys")
    return None


def draw_key(msg: Sent) -> bytes:
    """A DRAW's one key (else :class:`SealedFormatError`)."""
    if len(msg.body) != 1 or not isinstance(msg.body[0], bytes):
        raise SealedFormatError(Step.DRAW, "a draw is [key]")
    key: bytes = msg.body[0]
    return key


def check_shape(msg: Sent, dealer: int) -> None:
    """Raise :class:`SealedFormatError` when ``msg``'s body is not its kind's shape (the signer's ``bad_shape``
    fault; ``dealer`` places a play's position). What the shape cannot say (turn, keys, cards) is not checked."""
    if msg.kind is LineKind.SHUFFLE:
        Shuffle.from_body(msg.body)
    elif msg.kind is LineKind.SHUFFLE_LOCK:
        ShuffleLock.from_body(msg.body)
    elif msg.kind is LineKind.LOCK:
        Lock.from_body(msg.body)
    elif msg.kind is LineKind.CLAIM:
        Claim.from_body(msg.body)
    elif msg.kind is LineKind.DISCLOSE:
        Disclose.from_body(msg.body)
    elif msg.kind is LineKind.DRAW:
        draw_key(msg)
    else:
        code, _, keys = move_body(msg)
        move_keys(from_code(code), keys, Role.DEALER if msg.seat == dealer else Role.OTHER)
