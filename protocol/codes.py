"""The protocol's failure codes: one :class:`Code` each (a :class:`~enum.StrEnum` whose values are the
stable strings scripts and the auditor's JSON depend on), the one registry of their texts (:data:`CODES`)
and the codes a signed message proves (:data:`PROVABLE`).

Pure data, importing nothing of koikoi: the framing (which the relay uses) takes its codes from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final

__all__ = ["CODES", "DEAL_RULES", "PROVABLE", "Code", "Status"]


class Code(StrEnum):
    """A protocol failure's code (spec/protocol.md §8): the value is the wire and JSON string."""

    # framing (koikoi.protocol.framing)
    OVERSIZED_FRAME = "oversized_frame"
    MALFORMED_FRAME = "malformed_frame"
    TRAILING_BYTES = "trailing_bytes"
    NON_CANONICAL = "non_canonical"
    DUPLICATE_KEY = "duplicate_key"
    FLOAT_NOT_ALLOWED = "float_not_allowed"
    EXT_NOT_ALLOWED = "ext_not_allowed"
    TOO_DEEP = "too_deep"
    BAD_MAP_KEY = "bad_map_key"
    # envelope
    UNSUPPORTED_VERSION = "unsupported_version"
    UNKNOWN_TYPE = "unknown_type"
    MALFORMED_MESSAGE = "malformed_message"
    # verification, in the order it is checked
    BAD_SIGNATURE = "bad_signature"
    REPLAY = "replay"
    SEQUENCE_GAP = "sequence_gap"
    BROKEN_CHAIN = "broken_chain"
    OUT_OF_TURN = "out_of_turn"
    UNEXPECTED_MESSAGE = "unexpected_message"
    EQUIVOCATION = "equivocation"
    SETTINGS_MISMATCH = "settings_mismatch"
    ROOM_MISMATCH = "room_mismatch"
    RELAY_MISMATCH = "relay_mismatch"
    COMMITMENT_MISMATCH = "commitment_mismatch"
    ILLEGAL_MOVE = "illegal_move"
    DESYNC = "desync"
    BAD_RESULT = "bad_result"
    # the sealed line (spec/sealed-line.md §3; the rules of spec/sealed.md §7 and the line's own)
    BAD_SHAPE = "bad_shape"
    BAD_POINT = "bad_point"
    BAD_SCALAR = "bad_scalar"
    BAD_SHUFFLE = "bad_shuffle"
    BAD_LOCK = "bad_lock"
    WRONG_PRIVATE_KEY = "wrong_private_key"
    WRONG_PUBLIC_KEY = "wrong_public_key"
    FALSE_HAND_YAKU = "false_hand_yaku"
    FALSE_NO_HAND_YAKU = "false_no_hand_yaku"
    SECRET_MISMATCH = "secret_mismatch"
    WRONG_CARD = "wrong_card"
    UNFOUNDED_STOP = "unfounded_stop"
    CROSSED_STOP = "crossed_stop"
    # endings
    RESIGNED = "resigned"
    TIMEOUT = "timeout"
    OPPONENT_LEFT = "opponent_left"
    UNPROVEN_ABORT = "unproven_abort"
    UNWITNESSED_TIMEOUT = "unwitnessed_timeout"
    # transcripts
    BAD_HEADER = "bad_header"
    TRUNCATED = "truncated"
    UNFINISHED = "unfinished"
    UNREADABLE = "unreadable"
    AFTER_THE_END = "after_the_end"


CODES: Final[Mapping[Code, str]] = {
    Code.OVERSIZED_FRAME: "a frame over the size limit",
    Code.MALFORMED_FRAME: "bytes that are not one msgpack object",
    Code.TRAILING_BYTES: "bytes after the msgpack object",
    Code.NON_CANONICAL: "a msgpack encoding that is not the shortest form",
    Code.DUPLICATE_KEY: "a map with a key twice",
    Code.FLOAT_NOT_ALLOWED: "a float",
    Code.EXT_NOT_ALLOWED: "a msgpack extension type",
    Code.TOO_DEEP: "nesting too deep",
    Code.BAD_MAP_KEY: "a map key that is not a string or an integer",
    Code.UNSUPPORTED_VERSION: "a protocol version this client does not speak",
    Code.UNKNOWN_TYPE: "an unknown message type",
    Code.MALFORMED_MESSAGE: "a message whose fields have the wrong shape",
    Code.BAD_SIGNATURE: "a signature that does not verify with the signer's key",
    Code.REPLAY: "a message from another match, or a different message for a sequence number already taken",
    Code.SEQUENCE_GAP: "a sequence number past the next one (a message is missing)",
    Code.BROKEN_CHAIN: "a previous-message hash that is not the hash of the previous message",
    Code.OUT_OF_TURN: "a message from the seat whose turn it is not",
    Code.UNEXPECTED_MESSAGE: "a message of a type not expected now (or after the match ended)",
    Code.EQUIVOCATION: "two different messages signed by one seat for one sequence number",
    Code.SETTINGS_MISMATCH: "the two HELLOs disagree on the room's settings (rules, rounds, doubling, move time)",
    Code.ROOM_MISMATCH: "the two HELLOs name different rooms",
    Code.RELAY_MISMATCH: "the two HELLOs bind different relay keys",
    Code.COMMITMENT_MISMATCH: "a reveal that does not open the commitment, or a commitment bound to another session",
    Code.ILLEGAL_MOVE: "a move the rules do not allow",
    Code.DESYNC: "a state hash that is not the state after the move",
    Code.BAD_RESULT: "a result that is not the match's result",
    Code.BAD_SHAPE: "a sealed step whose fields have the wrong shape or count",
    Code.BAD_POINT: "a point that is not a valid point of the prime-order group",
    Code.BAD_SCALAR: "a key or a disclosed secret that is not a valid scalar",
    Code.BAD_SHUFFLE: "a shuffle step whose argument does not verify (not the previous step's cards in some order)",
    Code.BAD_LOCK: "a lock whose proof does not verify (not the previous step's points re-keyed)",
    Code.WRONG_PRIVATE_KEY: "a key sent to open the other seat's hand that is not the signer's key",
    Code.WRONG_PUBLIC_KEY: "a published key that is not the signer's key",
    Code.FALSE_HAND_YAKU: "a hand-yaku claim by a hand that holds none",
    Code.FALSE_NO_HAND_YAKU: "'no hand yaku' from a hand that holds one",
    Code.SECRET_MISMATCH: "a disclosed round secret that does not re-derive what its signer sent",
    Code.WRONG_CARD: "a play whose keys open a card other than the one it names",
    Code.UNFOUNDED_STOP: "a stop (an early disclosure) after which the verification finds no fault of the other seat",
    Code.CROSSED_STOP: "a message that crossed the receiver's own stop: set aside, the stop takes its place",
    Code.RESIGNED: "a player resigned",
    Code.TIMEOUT: "a player did not answer in time (witnessed by the relay's certificate)",
    Code.OPPONENT_LEFT: "a player left and did not come back in time (witnessed by the relay's certificate)",
    Code.UNPROVEN_ABORT: "an ABORT whose evidence does not prove the accused's fault: its signer's resignation",
    Code.UNWITNESSED_TIMEOUT: "a TIMEOUT claim whose certificate is missing or does not check: "
    "its signer's resignation",
    Code.BAD_HEADER: "not a koikoi transcript (or an unknown transcript version)",
    Code.TRUNCATED: "the file ends inside a record",
    Code.UNFINISHED: "the transcript stops before the match ended",
    Code.UNREADABLE: "the file cannot be read",
    Code.AFTER_THE_END: "an ENDED, which acknowledges the opponent's end and is never part of the line",
}
"""What each code means, in a phrase (the narrator's and the auditor's words): the one registry."""

DEAL_RULES: Final = frozenset(
    {
        Code.BAD_SHAPE,
        Code.BAD_POINT,
        Code.BAD_SCALAR,
        Code.BAD_SHUFFLE,
        Code.BAD_LOCK,
        Code.WRONG_PRIVATE_KEY,
        Code.WRONG_PUBLIC_KEY,
        Code.FALSE_HAND_YAKU,
        Code.FALSE_NO_HAND_YAKU,
        Code.SECRET_MISMATCH,
    }
)
"""The faults of a sealed deal that the rules of spec/sealed.md §7 prove (``koikoi.protocol.sealed.RULES``).
All but the two a disclosure shows (``false_no_hand_yaku``, ``secret_mismatch``) are :data:`PROVABLE`."""

PROVABLE: Final = frozenset(
    {
        Code.OUT_OF_TURN,
        Code.UNEXPECTED_MESSAGE,
        Code.EQUIVOCATION,
        Code.COMMITMENT_MISMATCH,
        Code.ILLEGAL_MOVE,
        Code.DESYNC,
        Code.BAD_RESULT,
        Code.WRONG_CARD,
    }
) | (DEAL_RULES - {Code.FALSE_NO_HAND_YAKU, Code.SECRET_MISMATCH})
"""Codes a message validly signed by the offender and bound to this match proves: an ABORT naming one
of these, whose evidence re-checks to it, forfeits the match to the aborter. Every other failure
(framing, signature, another match, a gap) could be the network's doing: the receiver drops it."""


class Status(StrEnum):
    """How a match ended, as its transcript proves it (spec/protocol.md §9): the value is the JSON string."""

    COMPLETE = "complete"
    """Played out, the result countersigned by both."""
    RESIGNED = "resigned"
    """A RESIGN, or an end message that proves nothing: its signer's resignation."""
    FORFEIT = "forfeit"
    """An ABORT whose evidence proves the accused's fault."""
    ON_TIME = "on_time"
    """A TIMEOUT with a valid relay certificate."""
    ABANDONED = "abandoned"
    """The HELLOs disagree, or the match ended before the handshake bound it: no winner."""
    UNFINISHED = "unfinished"
    """(An audit's only) the transcript stops before the match ended."""
    INVALID = "invalid"
    """(An audit's only) the transcript breaks the protocol."""
