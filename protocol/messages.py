"""Signed envelopes: the wire format of every message between the two players.

A message is one frame (see :mod:`koikoi.protocol.framing`): a canonical
msgpack **array**, positional::

    [VERSION, TYPE, MATCH, SEQ, PREV, SEAT, *BODY, SIG]

``VERSION`` is :data:`PROTOCOL_VERSION`; ``TYPE`` a :class:`MsgType`;
``MATCH`` the 32-byte match id (the session id; empty before both HELLOs);
``SEQ`` the message's place in the match's one line of messages (from 0);
``PREV`` the hash of the message before it (32 zero bytes for the first);
``SEAT`` the signer (0 = the room's creator, 1 = the joiner); ``BODY`` the
type's fields (see :data:`BODY_SCHEMA`); ``SIG`` the signer's Ed25519
signature (64 bytes).

The signature covers ``context(TYPE) ‖ frame[:-66]``: the exact received bytes
up to the signature (the signature is always the last element, encoded
``c4 40`` + 64 bytes), never a re-serialisation. ``context`` is
``b"koikoi/v1/<type name>\\0"``, one per message type and protocol version.
A message's hash is ``SHA-256(b"koikoi/msg/v1\\0" ‖ frame)``.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from nacl.bindings import crypto_sign_open
from nacl.exceptions import BadSignatureError

from ..engine.match import Settings
from .errors import ProtocolError
from .framing import MAX_FRAME_BYTES, FrameError, decode, encode
from .witness import fingerprint, frame_hash

__all__ = [
    "DECKS",
    "END_TYPES",
    "HELLO_KEY_INDEX",
    "MAX_MOVE_TIME_S",
    "PROTOCOL_VERSION",
    "RESEND_TYPE",
    "RULES_VERSION",
    "SEALED_TYPES",
    "SIG_TRAILER",
    "ZERO_HASH",
    "Msg",
    "MsgType",
    "build",
    "commit_value",
    "commitment_of",
    "context",
    "fingerprint",
    "load_public",
    "match_seed",
    "msg_hash",
    "parse",
    "parse_resend",
    "private_bytes",
    "public_bytes",
    "resend_frame",
    "session_id",
    "settings_digest",
    "verify",
]

PROTOCOL_VERSION = 3
"""The wire protocol's version (the first element of every message). Version 2: HELLO binds the move
time and the relay's key; TIMEOUT carries the relay's certificate; ABORT may carry two messages.
Version 3: HELLO binds the deck (``"sealed"`` or ``"shared"``, :data:`DECKS`); the sealed line's
messages (SHUFFLE … DISCLOSE, and MOVE's ``keys``; spec/protocol.md §14, spec/sealed-line.md)."""

DECKS = ("sealed", "shared")
"""The values of HELLO's ``deck`` field (spec/protocol.md §14)."""

RULES_VERSION = 1
"""The version of the rules (spec/rules.md) both players must run."""

ZERO_HASH = bytes(32)
SIG_TRAILER = b"\xc4\x40"  # msgpack bin8 header of a 64-byte signature


class MsgType(enum.IntEnum):
    HELLO = 1
    COMMIT = 2
    VALUE = 3
    REVEAL = 4
    MOVE = 5
    RESULT = 6
    RESIGN = 7
    TIMEOUT = 8
    ABORT = 9
    ENDED = 10
    SHUFFLE = 11
    SHUFFLE_LOCK = 12
    LOCK = 13
    CLAIM = 14
    DRAW = 15
    DISCLOSE = 16

    @property
    def label(self) -> str:
        return self.name.lower()


END_TYPES = frozenset({MsgType.RESIGN, MsgType.TIMEOUT, MsgType.ABORT})
"""Messages either seat may send at any time; each ends the match."""
SEALED_TYPES = frozenset(
    {MsgType.SHUFFLE, MsgType.SHUFFLE_LOCK, MsgType.LOCK, MsgType.CLAIM, MsgType.DRAW, MsgType.DISCLOSE}
)
"""The sealed line's own messages (a sealed match only; spec/sealed-line.md §2). Their fields' inner shape
(48 points, 16 keys, ...) is the sealed line's to check: a wrong one is the signer's ``bad_shape`` fault."""

# Field kinds: "int" (non-negative int, not bool), "bool", "str", "b32" (32 bytes), "bin" (any bytes),
# "winner" (0, 1 or nil), "any" (any value: the sealed line checks its shape).
BODY_SCHEMA: dict[MsgType, tuple[tuple[str, str], ...]] = {
    MsgType.HELLO: (
        ("rules_version", "int"),
        ("room", "str"),
        ("rounds", "int"),
        ("double_at_8", "bool"),
        ("move_time_s", "int"),
        ("deck", "str"),
        ("relay_key", "b32"),
        ("public_key", "b32"),
        ("nonce", "b32"),
    ),
    MsgType.COMMIT: (("commitment", "b32"),),
    MsgType.VALUE: (("value", "b32"),),
    MsgType.REVEAL: (("value", "b32"),),
    MsgType.MOVE: (("action", "int"), ("state_hash", "b32")),
    MsgType.RESULT: (("points0", "int"), ("points1", "int"), ("winner", "winner"), ("state_hash", "b32")),
    MsgType.RESIGN: (),
    MsgType.TIMEOUT: (("certificate", "bin"), ("silent_frame", "bin")),
    MsgType.ABORT: (("code", "str"), ("message", "str"), ("evidence", "bin"), ("evidence2", "bin")),
    MsgType.ENDED: (("end", "b32"),),
    MsgType.SHUFFLE: (("points", "any"),),
    MsgType.SHUFFLE_LOCK: (("points", "any"), ("keys", "any")),
    MsgType.LOCK: (("points", "any"), ("keys", "any"), ("claim", "any")),
    MsgType.CLAIM: (("claim", "any"),),
    MsgType.DRAW: (("key", "any"),),
    MsgType.DISCLOSE: (("secrets", "any"),),
}
SEALED_MOVE_SCHEMA: tuple[tuple[str, str], ...] = (*BODY_SCHEMA[MsgType.MOVE], ("keys", "any"))
"""A sealed match's MOVE: ``[action, state_hash, keys]`` (``keys``: ``[position, hand key, deck key]`` for
a play, ``[]`` otherwise). A shared match's MOVE has no ``keys``; which one a match takes is its deck's."""

_HEADER_LEN = 6
_CONTEXT = {t: b"koikoi/v%d/%s\x00" % (PROTOCOL_VERSION, t.label.encode()) for t in MsgType}
_SETTINGS_LABEL = b"koikoi/settings/v1\x00"
_SESSION_LABEL = b"koikoi/session/v2\x00"
_COMMIT_LABEL = b"koikoi/commit/v1\x00"
_VALUE_LABEL = b"koikoi/commit-value/v1\x00"
_SEED_LABEL = b"koikoi/match-seed/v1\x00"
MAX_ROOM_CHARS = 64
MAX_TEXT_CHARS = 1000
MAX_MOVE_TIME_S = 86_400
"""The longest move time a HELLO may bind (a day); more is ``malformed_message``."""
RESEND_TYPE = 0
"""The TYPE of the unsigned RESEND control frame (never a message, never in a transcript)."""
HELLO_KEY_INDEX = 7
"""Where the public key is in a HELLO's body."""


def context(t: MsgType) -> bytes:
    """The signature's domain-separation string for message type ``t``."""
    return _CONTEXT[t]


@dataclass(slots=True)
class Msg:
    """One parsed message. ``frame`` is the exact bytes; ``hash`` their labelled hash."""

    type: MsgType
    match: bytes
    seq: int
    prev: bytes
    seat: int
    body: tuple[Any, ...]
    sig: bytes
    frame: bytes
    hash: bytes

    def field(self, name: str) -> Any:
        schema = SEALED_MOVE_SCHEMA if self.type is MsgType.MOVE and len(self.body) == 3 else BODY_SCHEMA[self.type]
        for i, (n, _) in enumerate(schema):
            if n == name:
                return self.body[i]
        raise KeyError(name)


msg_hash = frame_hash
"""A message's hash: ``SHA-256("koikoi/msg/v1\\0" ‖ frame)`` (the relay computes the same over opaque frames)."""


def build(key: Ed25519PrivateKey, t: MsgType, match: bytes, seq: int, prev: bytes, seat: int, body: list[Any]) -> bytes:
    """Encode and sign one message; returns the frame."""
    unsigned = encode([PROTOCOL_VERSION, int(t), match, seq, prev, seat, *body, bytes(64)])[:-66]
    return unsigned + SIG_TRAILER + key.sign(_CONTEXT[t] + unsigned)


def _bad(message: str) -> ProtocolError:
    return ProtocolError("malformed_message", message)


def _is_int(v: Any) -> bool:
    return type(v) is int and 0 <= v < 1 << 32


def _is_bool(v: Any) -> bool:
    return type(v) is bool


def _is_str(v: Any) -> bool:
    return type(v) is str and len(v) <= MAX_TEXT_CHARS


def _is_b32(v: Any) -> bool:
    return type(v) is bytes and len(v) == 32


def _is_bin(v: Any) -> bool:
    return type(v) is bytes


def _is_winner(v: Any) -> bool:
    return v is None or (type(v) is int and v in (0, 1))


def _is_any(v: Any) -> bool:
    return True


_KIND_CHECK = {
    "int": _is_int,
    "bool": _is_bool,
    "str": _is_str,
    "b32": _is_b32,
    "bin": _is_bin,
    "winner": _is_winner,
    "any": _is_any,
}
_CHECKS = {t: tuple((name, kind, _KIND_CHECK[kind]) for name, kind in schema) for t, schema in BODY_SCHEMA.items()}
_SEALED_MOVE_CHECKS = tuple((name, kind, _KIND_CHECK[kind]) for name, kind in SEALED_MOVE_SCHEMA)
_BY_VALUE = {int(t): t for t in MsgType}
_LENGTHS = {t: _HEADER_LEN + len(schema) + 1 for t, schema in BODY_SCHEMA.items()}


def parse(frame: bytes) -> Msg:
    """Decode and shape-check one message (the signature is not checked here)."""
    try:
        obj = decode(frame, MAX_FRAME_BYTES)
    except FrameError as e:
        raise ProtocolError(e.code, e.message) from None
    if type(obj) is list and len(obj) == 4 and obj[:2] == [PROTOCOL_VERSION, RESEND_TYPE] and type(obj[1]) is int:
        raise ProtocolError("unknown_type", "type 0 is the RESEND control frame, never a message of the line")
    if type(obj) is not list or len(obj) < _HEADER_LEN + 1:
        raise _bad("a message is an array of at least 7 elements")
    v = obj[0]
    if type(v) is not int or v != PROTOCOL_VERSION:
        raise ProtocolError("unsupported_version", f"protocol version {v!r}; this client speaks {PROTOCOL_VERSION}")
    t_raw = obj[1]
    if t_raw == RESEND_TYPE and type(t_raw) is int:
        raise ProtocolError("unknown_type", "type 0 is the RESEND control frame, never a message of the line")
    t = _BY_VALUE.get(t_raw) if type(t_raw) is int else None
    if t is None:
        raise ProtocolError("unknown_type", f"unknown message type {t_raw!r}")
    checks = _CHECKS[t]
    if t is MsgType.MOVE and len(obj) == _LENGTHS[t] + 1:
        checks = _SEALED_MOVE_CHECKS  # a sealed match's move (the referee checks the match's deck wants it)
    elif len(obj) != _LENGTHS[t]:
        raise _bad(f"a {t.label} message has {_LENGTHS[t]} elements, not {len(obj)}")
    match, seq, prev, seat, sig = obj[2], obj[3], obj[4], obj[5], obj[-1]
    if type(match) is not bytes or len(match) not in (0, 32):
        raise _bad("the match id is 32 bytes (empty before the handshake)")
    if type(seq) is not int or not 0 <= seq < 1 << 32:
        raise _bad("the sequence number is not a valid integer")
    if type(prev) is not bytes or len(prev) != 32:
        raise _bad("the previous-message hash is not 32 bytes")
    if type(seat) is not int or seat not in (0, 1):
        raise _bad("the seat is 0 or 1")
    if type(sig) is not bytes or len(sig) != 64 or frame[-66:-64] != SIG_TRAILER:
        raise _bad("the signature is not 64 bytes at the end of the message")
    body = tuple(obj[_HEADER_LEN:-1])
    for (name, kind, ok), val in zip(checks, body, strict=True):
        if not ok(val):
            raise _bad(f"{t.label} field {name!r} is not a valid {kind}")
    return Msg(t, match, seq, prev, seat, body, sig, frame, frame_hash(frame))


def resend_frame(match: bytes, from_seq: int) -> bytes:
    """The RESEND control frame: ``[VERSION, 0, MATCH, from_seq]``, unsigned. Its bytes are fixed by
    its fields, so a relay's certificate may name its hash (see spec/protocol.md §7)."""
    return encode([PROTOCOL_VERSION, RESEND_TYPE, match, from_seq])


def parse_resend(frame: bytes) -> tuple[bytes, int] | None:
    """``(match, from_seq)`` when ``frame`` is exactly a RESEND frame, else None."""
    if len(frame) > 48 or frame[:3] != bytes([0x94, PROTOCOL_VERSION, RESEND_TYPE]):
        return None
    try:
        obj = decode(frame)
    except FrameError:
        return None
    if type(obj) is not list or len(obj) != 4:
        return None
    _, _, match, seq = obj
    if type(match) is not bytes or len(match) not in (0, 32) or type(seq) is not int or not 0 <= seq < 1 << 32:
        return None
    return match, seq


def verify(key: Ed25519PublicKey, msg: Msg) -> None:
    """Raise ``bad_signature`` unless ``msg`` is signed by ``key``.

    Verification uses libsodium (PyNaCl), about twice as fast here as
    OpenSSL's, and the same verifier on both sides and in the auditor, so a
    signature one accepts the others accept too.
    """
    try:
        crypto_sign_open(msg.sig + _CONTEXT[msg.type] + msg.frame[:-66], key.public_bytes_raw())
    except (BadSignatureError, InvalidSignature, ValueError, TypeError):
        raise ProtocolError(
            "bad_signature", f"the {msg.type.label} at sequence {msg.seq} is not signed by seat {msg.seat}'s key"
        ) from None


# -- derivations ------------------------------------------------------------


def settings_digest(settings: Settings, rules_version: int = RULES_VERSION) -> bytes:
    """SHA-256 of the labelled encoding of a room's rules: ``[rules_version, rounds, double_at_8]``."""
    return hashlib.sha256(_SETTINGS_LABEL + encode([rules_version, settings.rounds, settings.double_at_8])).digest()


def session_id(
    room: str,
    settings: Settings,
    public_keys: tuple[bytes, bytes],
    nonces: tuple[bytes, bytes],
    rules_version: int = RULES_VERSION,
    move_time_s: int = 120,
    relay_key: bytes = ZERO_HASH,
    deck: str = "shared",
) -> bytes:
    """The match id: everything the handshake agreed (every HELLO field), hashed with a label."""
    return hashlib.sha256(
        _SESSION_LABEL
        + encode(
            [
                PROTOCOL_VERSION,
                rules_version,
                room,
                settings_digest(settings, rules_version),
                move_time_s,
                deck,
                relay_key,
                public_keys[0],
                public_keys[1],
                nonces[0],
                nonces[1],
            ]
        )
    ).digest()


def commitment_of(sid: bytes, value: bytes) -> bytes:
    """The creator's commitment: ``SHA-256("koikoi/commit/v1\\0" ‖ session id ‖ value)``."""
    return hashlib.sha256(_COMMIT_LABEL + sid + value).digest()


def commit_value(key: Ed25519PrivateKey, sid: bytes, seat: int) -> bytes:
    """A seat's secret value for the commit-reveal, derived from its private key and the session id.

    Deterministic, so a client that crashed between commit and reveal can
    still reveal; unpredictable to anyone without the private key.
    """
    return hashlib.sha256(_VALUE_LABEL + private_bytes(key) + sid + bytes([seat])).digest()


def match_seed(sid: bytes, creator_value: bytes, joiner_value: bytes) -> bytes:
    """The 32-byte match seed (the engine's :class:`~koikoi.engine.deal.SeededDeal` seed)."""
    return hashlib.sha256(_SEED_LABEL + sid + creator_value + joiner_value).digest()


def public_bytes(key: Ed25519PrivateKey | Ed25519PublicKey) -> bytes:
    pub = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return pub.public_bytes_raw()


def private_bytes(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes_raw()


def load_public(raw: bytes) -> Ed25519PublicKey:
    try:
        return Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        raise ProtocolError("malformed_message", "not an Ed25519 public key") from None
