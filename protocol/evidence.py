"""Why the proof of every fault fits one message: the largest frame of each message type, and the largest
evidence each rule can need, computed from the exact schema (:data:`koikoi.protocol.messages.BODY_SCHEMA`).

Every field of every message has an exact type and size, so every message a line can hold has a largest
possible encoding; :func:`largest_frames` builds that worst case for each type (every integer at its
largest, every text at its longest in four-byte characters, every optional list present) and encodes it.
A proof cites either one message (a fault the message shows by itself or against the line before it), two
(equivocation), or the accused's messages of one deal attempt and its disclosure (a fault the round's
verification names: :func:`largest_attempt_evidence`). spec/protocol.md §6.2 and spec/sealed-line.md §3
state the bounds; ``benchmarks/protocol.py`` prints them.
"""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from .framing import encode
from .messages import (
    BODY_SCHEMA,
    END_TYPES,
    MAX_EVIDENCE_BYTES,
    MAX_SECRETS,
    MAX_TEXT_CHARS,
    SEALED_MOVE_SCHEMA,
    MsgType,
    build,
)
from .sealed import GROUP_ORDER, REKEY_RESPONSES, SHUFFLE_RESPONSES

__all__ = ["MOVES_PER_ATTEMPT", "largest_abort", "largest_attempt_evidence", "largest_frames"]

MOVES_PER_ATTEMPT = 32
"""An upper bound on one seat's MOVEs in one deal attempt: 8 turns, each a play, at most two capture choices
and one koi-koi/shōbu decision."""

_SCALAR = (GROUP_ORDER - 1).to_bytes(32, "little")
_B32 = b"\xff" * 32
_TEXT = "\U0001f3b4" * MAX_TEXT_CHARS  # a four-byte character, as many as a text may hold
_INT = (1 << 32) - 1
_END_LABELS = frozenset(t.label for t in END_TYPES)  # an end message is never cited as evidence


def _value(kind: str) -> Any:
    return {
        "int": _INT,
        "bool": True,
        "str": _TEXT,
        "b32": _B32,
        "winner": 1,
        "evidence": b"",
        "points": [_B32] * 48,
        "keys": [_SCALAR] * 16,
        "responses": [_SCALAR] * SHUFFLE_RESPONSES,
        "lock_proof": [_SCALAR] * REKEY_RESPONSES,
        "claim": [_SCALAR] * 8,
        "scalar": _SCALAR,
        "secrets": [_B32] * MAX_SECRETS,
        "play": [47, _SCALAR, _SCALAR],
    }[kind]


def _frame(t: MsgType, schema: tuple[tuple[str, str], ...]) -> bytes:
    key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    return build(key, t, _B32, _INT, _B32, 1, [_value(kind) for _, kind in schema])


def largest_frames() -> dict[str, int]:
    """The largest frame of each message type but the end messages (whose evidence fields come on top), in
    bytes; ``move`` is a sealed match's (with its keys), ``move_shared`` a shared match's."""
    out = {t.label: len(_frame(t, BODY_SCHEMA[t])) for t in MsgType}
    out["move_shared"] = out["move"]
    out["move"] = len(_frame(MsgType.MOVE, SEALED_MOVE_SCHEMA))
    return out


def largest_attempt_evidence() -> dict[str, int]:
    """The largest evidence of a fault a round's verification names, by the accused's role: the encoded
    list of its messages of one deal attempt and its disclosure (K: SHUFFLE and LOCK; O: SHUFFLE_LOCK and
    CLAIM; both: its moves, its draw keys for the other seat's eight plays, its DISCLOSE)."""
    f = largest_frames()
    play = MOVES_PER_ATTEMPT * [b"\0" * f["move"]] + 8 * [b"\0" * f["draw"]] + [b"\0" * f["disclose"]]
    k = [b"\0" * f["shuffle"], b"\0" * f["lock"], *play]
    o = [b"\0" * f["shuffle_lock"], b"\0" * f["claim"], *play]
    return {"K": len(encode(k)), "O": len(encode(o))}


def largest_abort() -> dict[str, int]:
    """The largest ABORT each kind of proof makes, in bytes: one message cited, two (equivocation), one
    attempt's messages; and the evidence field's limit."""
    f = largest_frames()
    one = max(v for k, v in f.items() if k not in _END_LABELS)
    attempt = max(largest_attempt_evidence().values())
    base = len(_frame(MsgType.ABORT, BODY_SCHEMA[MsgType.ABORT]))
    return {
        "one_message": base + one + 3,
        "equivocation": base + 2 * (one + 3),
        "one_attempt": base + attempt + 3,
        "evidence_limit": MAX_EVIDENCE_BYTES,
        "largest_cited_evidence": max(one, attempt),
    }
