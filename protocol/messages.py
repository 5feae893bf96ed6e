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
from .codes import Code
from .errors import ProtocolError
from .framing import MAX_FRAME_BYTES, FrameError, decode, encode
from .sealed import MAX_ATTEMPTS, REKEY_RESPONSES, SHUFFLE_RESPONSES, is_valid_scalar
from .witness import fingerprint, frame_hash

__all__ = [
    "DECKS",
    "END_TYPES",
    "HELLO_KEY_INDEX",
    "MAX_EVIDENCE_BYTES",
    "MAX_MESSAGE_BYTES",
    "MAX_MOVE_TIME_S",
    "MAX_SECRETS",
    "PROTOCOL_VERSION",
    "RESEND_TYPE",
    "RULES_VERSION",
    "SEALED_TYPES",
    "SIG_TRAILER",
    "ZERO_HASH",
    "Msg",
    "MsgType",
    "body_problem",
    "build",
    "check_body",
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

PROTOCOL_VERSION = 5
"""The wire protocol's version (the first element of every message): 5. HELLO binds the move time, the
relay's key, the deck (``"sealed"`` or ``"shared"``, :data:`DECKS`), whether watchers may follow the room
and its signer's consent to a public archive (``watchers``, ``publish``); TIMEOUT carries the relay's
certificate; ABORT may carry two messages; the sealed line's messages (SHUFFLE … DISCLOSE, and MOVE's
``keys``) carry the proofs of spec/sealed.md §5 (spec/protocol.md §14, spec/sealed-line.md)."""

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

# Field kinds (one schema for every message type: spec/protocol.md §2.2). Plain kinds: "int" (non-negative
# int below 2**32, not bool), "bool", "str" (at most MAX_TEXT_CHARS characters), "b32" (exactly 32 bytes),
# "winner" (0, 1 or nil), "evidence" (bytes, at most MAX_EVIDENCE_BYTES). The sealed line's kinds, exact
# too: "points" (48 × 32 bytes), "keys" (16 scalars), "claim" (nil or 8 scalars), "scalar" (one),
# "responses" (a shuffle argument's 99 scalars), "lock_proof" (a lock proof's 49 scalars),
# "secrets" (0 to MAX_SECRETS × 32 bytes), "play" ([] or [position 0–47, scalar, scalar]). A scalar is
# 32 bytes whose little-endian value is in 1 … L−1: the wrong size is ``bad_shape``, a 32-byte value
# outside that range ``bad_scalar``. Both are provable by the one signed message (:func:`check_body`).
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
        ("watchers", "bool"),
        ("publish", "bool"),
    ),
    MsgType.COMMIT: (("commitment", "b32"),),
    MsgType.VALUE: (("value", "b32"),),
    MsgType.REVEAL: (("value", "b32"),),
    MsgType.MOVE: (("action", "int"), ("state_hash", "b32")),
    MsgType.RESULT: (("points0", "int"), ("points1", "int"), ("winner", "winner"), ("state_hash", "b32")),
    MsgType.RESIGN: (),
    MsgType.TIMEOUT: (("certificate", "evidence"), ("silent_frame", "evidence")),
    MsgType.ABORT: (("code", "str"), ("message", "str"), ("evidence", "evidence"), ("evidence2", "evidence")),
    MsgType.ENDED: (("end", "b32"),),
    MsgType.SHUFFLE: (("points", "points"), ("chain", "points"), ("responses", "responses")),
    MsgType.SHUFFLE_LOCK: (
        ("points", "points"),
        ("keys", "keys"),
        ("masked", "points"),
        ("chain", "points"),
        ("responses", "responses"),
        ("lock_proof", "lock_proof"),
    ),
    MsgType.LOCK: (("points", "points"), ("keys", "keys"), ("claim", "claim"), ("lock_proof", "lock_proof")),
    MsgType.CLAIM: (("claim", "claim"),),
    MsgType.DRAW: (("key", "scalar"),),
    MsgType.DISCLOSE: (("secrets", "secrets"),),
}
SEALED_MOVE_SCHEMA: tuple[tuple[str, str], ...] = (*BODY_SCHEMA[MsgType.MOVE], ("keys", "play"))
"""A sealed match's MOVE: ``[action, state_hash, keys]`` (``keys``: ``[position, hand key, deck key]`` for
a play, ``[]`` otherwise). A shared match's MOVE has no ``keys``; which one a match takes is its deck's."""

_HEADER_LEN = 6
_CONTEXT = {t: b"koikoi/v%d/%s\x00" % (PROTOCOL_VERSION, t.label.encode()) for t in MsgType}
_SETTINGS_LABEL = b"koikoi/settings/v1\x00"
_SESSION_LABEL = b"koikoi/session/v3\x00"
_COMMIT_LABEL = b"koikoi/commit/v1\x00"
_VALUE_LABEL = b"koikoi/commit-value/v1\x00"
_SEED_LABEL = b"koikoi/match-seed/v1\x00"
MAX_ROOM_CHARS = 64
MAX_TEXT_CHARS = 1000
MAX_EVIDENCE_BYTES = 30 * 1024
"""An ABORT's ``evidence`` fields and a TIMEOUT's two fields hold at most this many bytes each."""
MAX_MESSAGE_BYTES = 16 * 1024
"""The largest frame of a message that is not an end message (the largest valid one, a LOCK with a claim,
is 2,598 bytes: :mod:`koikoi.protocol.evidence`): every message a line can hold can be cited whole as an
ABORT's evidence."""
MAX_SECRETS = MAX_ATTEMPTS
"""A DISCLOSE holds at most one round secret per deal attempt."""
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
    return ProtocolError(Code.MALFORMED_MESSAGE, message)


def _is_int(v: Any) -> bool:
    return type(v) is int and 0 <= v < 1 << 32


def _is_b32(v: Any) -> bool:
    return type(v) is bytes and len(v) == 32


def _scalar(v: Any, what: str) -> tuple[Code, str] | None:
    if not _is_b32(v):
        return Code.BAD_SHAPE, f"{what} is not 32 bytes"
    if not is_valid_scalar(v):  # the sealed deck's one definition of a key
        return Code.BAD_SCALAR, f"{what} is not a canonical non-zero scalar"
    return None


def _scalars(v: Any, n: int, what: str) -> tuple[Code, str] | None:
    if type(v) is not list or len(v) != n:
        return Code.BAD_SHAPE, f"{what} is not an array of {n}"
    for i, x in enumerate(v):
        p = _scalar(x, f"{what}[{i}]")
        if p is not None:
            return p
    return None


def _b32s(v: Any, lo: int, hi: int, what: str) -> tuple[Code, str] | None:
    if type(v) is not list or not lo <= len(v) <= hi or not all(_is_b32(x) for x in v):
        n = str(lo) if lo == hi else f"{lo} to {hi}"
        return Code.BAD_SHAPE, f"{what} is not an array of {n} 32-byte strings"
    return None


def _kind_problem(kind: str, v: Any, what: str) -> tuple[Code, str] | None:
    """``(code, text)`` when ``v`` is not of ``kind`` (see :data:`BODY_SCHEMA`), else None."""
    ok: bool
    if kind == "int":
        ok = _is_int(v)
    elif kind == "bool":
        ok = type(v) is bool
    elif kind == "str":
        ok = type(v) is str and len(v) <= MAX_TEXT_CHARS
    elif kind == "b32":
        ok = _is_b32(v)
    elif kind == "winner":
        ok = v is None or (type(v) is int and v in (0, 1))
    elif kind == "evidence":
        ok = type(v) is bytes and len(v) <= MAX_EVIDENCE_BYTES
    elif kind == "points":
        return _b32s(v, 48, 48, what)
    elif kind == "keys":
        return _scalars(v, 16, what)
    elif kind == "responses":
        return _scalars(v, SHUFFLE_RESPONSES, what)
    elif kind == "lock_proof":
        return _scalars(v, REKEY_RESPONSES, what)
    elif kind == "claim":
        return None if v is None else _scalars(v, 8, what)
    elif kind == "scalar":
        return _scalar(v, what)
    elif kind == "secrets":
        return _b32s(v, 0, MAX_SECRETS, what)
    else:  # "play"
        if type(v) is not list or len(v) not in (0, 3):
            return Code.BAD_SHAPE, f"{what} is not [] or [position, key, key]"
        if not v:
            return None
        if type(v[0]) is not int or not 0 <= v[0] < 48:
            return Code.BAD_SHAPE, f"{what}'s position is not 0 to 47"
        return _scalar(v[1], f"{what}'s hand key") or _scalar(v[2], f"{what}'s deck key")
    return None if ok else (Code.BAD_SHAPE, f"{what} is not a valid {kind}")


_BY_VALUE = {int(t): t for t in MsgType}
_LENGTHS = {t: _HEADER_LEN + len(schema) + 1 for t, schema in BODY_SCHEMA.items()}


def parse(frame: bytes) -> Msg:
    """Decode and check one message's envelope (the signature is not checked here, nor the body's fields
    but a HELLO's: :func:`check_body` does, once the signer is known). A frame of a type that is not an end
    message (RESIGN, TIMEOUT, ABORT) over :data:`MAX_MESSAGE_BYTES` is ``malformed_message``: so every
    message a line can hold fits an ABORT's evidence."""
    try:
        obj = decode(frame, MAX_FRAME_BYTES)
    except FrameError as e:
        raise ProtocolError(e.code, e.message) from None
    if type(obj) is list and len(obj) == 4 and obj[:2] == [PROTOCOL_VERSION, RESEND_TYPE] and type(obj[1]) is int:
        raise ProtocolError(Code.UNKNOWN_TYPE, "type 0 is the RESEND control frame, never a message of the line")
    if type(obj) is not list or len(obj) < _HEADER_LEN + 1:
        raise _bad("a message is an array of at least 7 elements")
    v = obj[0]
    if type(v) is not int or v != PROTOCOL_VERSION:
        raise ProtocolError(Code.UNSUPPORTED_VERSION, f"protocol version {v!r}; this client speaks {PROTOCOL_VERSION}")
    t_raw = obj[1]
    if t_raw == RESEND_TYPE and type(t_raw) is int:
        raise ProtocolError(Code.UNKNOWN_TYPE, "type 0 is the RESEND control frame, never a message of the line")
    t = _BY_VALUE.get(t_raw) if type(t_raw) is int else None
    if t is None:
        raise ProtocolError(Code.UNKNOWN_TYPE, f"unknown message type {t_raw!r}")
    if t not in END_TYPES and len(frame) > MAX_MESSAGE_BYTES:
        raise _bad(f"a {t.label} message is at most {MAX_MESSAGE_BYTES} bytes, not {len(frame)}")
    if not (len(obj) == _LENGTHS[t] or (t is MsgType.MOVE and len(obj) == _LENGTHS[t] + 1)):
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
    msg = Msg(t, match, seq, prev, seat, tuple(obj[_HEADER_LEN:-1]), sig, frame, frame_hash(frame))
    if t is MsgType.HELLO:  # before the handshake binds a match nothing is anyone's proven fault
        problem = body_problem(msg)
        if problem is not None:
            raise _bad(problem[1])
    return msg


def body_problem(msg: Msg) -> tuple[Code, str] | None:
    """``(code, text)`` when ``msg``'s body is not its type's exact schema (:data:`BODY_SCHEMA`): ``bad_shape``
    (a field of the wrong type, size or count) or ``bad_scalar`` (a 32-byte key outside 1 … L−1); else None.
    Needs nothing but the message: its signer's fault once the signature verifies."""
    schema = SEALED_MOVE_SCHEMA if msg.type is MsgType.MOVE and len(msg.body) == 3 else BODY_SCHEMA[msg.type]
    for (name, kind), val in zip(schema, msg.body, strict=True):
        problem = _kind_problem(kind, val, f"{msg.type.label} field {name!r}")
        if problem is not None:
            return problem
    return None


def check_body(msg: Msg) -> None:
    """Raise :class:`ProtocolError` (``bad_shape`` or ``bad_scalar``) when :func:`body_problem` finds one."""
    problem = body_problem(msg)
    if problem is not None:
        raise ProtocolError(problem[0], problem[1], msg.seq)


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
            Code.BAD_SIGNATURE, f"the {msg.type.label} at sequence {msg.seq} is not signed by seat {msg.seat}'s key"
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
    watchers: bool = False,
    publish: tuple[bool, bool] = (False, False),
) -> bytes:
    """The match id: everything the handshake agreed (every HELLO field), hashed with a label. ``watchers``:
    the room's (both HELLOs agree on it); ``publish``: each seat's own consent, the creator's first."""
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
                watchers,
                publish[0],
                publish[1],
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
        raise ProtocolError(Code.MALFORMED_MESSAGE, "not an Ed25519 public key") from None
