"""The protocol's code texts are the ones the narrator said before the codes became a StrEnum: the one
registry (koikoi.protocol.codes.CODES) kept the narrator's phrases, not the longer rule texts of the
sealed deal that no player saw."""

from __future__ import annotations

from koikoi.client.match_words import MatchWords
from koikoi.protocol.codes import CODES, Code

OLD_TEXTS: dict[str, str] = {
    "oversized_frame": "a frame over the size limit",
    "malformed_frame": "bytes that are not one msgpack object",
    "trailing_bytes": "bytes after the msgpack object",
    "non_canonical": "a msgpack encoding that is not the shortest form",
    "duplicate_key": "a map with a key twice",
    "float_not_allowed": "a float",
    "ext_not_allowed": "a msgpack extension type",
    "too_deep": "nesting too deep",
    "bad_map_key": "a map key that is not a string or an integer",
    "unsupported_version": "a protocol version this client does not speak",
    "unknown_type": "an unknown message type",
    "malformed_message": "a message whose fields have the wrong shape",
    "bad_signature": "a signature that does not verify with the signer's key",
    "replay": "a message from another match, or a different message for a sequence number already taken",
    "sequence_gap": "a sequence number past the next one (a message is missing)",
    "broken_chain": "a previous-message hash that is not the hash of the previous message",
    "out_of_turn": "a message from the seat whose turn it is not",
    "unexpected_message": "a message of a type not expected now (or after the match ended)",
    "equivocation": "two different messages signed by one seat for one sequence number",
    "settings_mismatch": "the two HELLOs disagree on the room's settings (rules, rounds, doubling, move time)",
    "room_mismatch": "the two HELLOs name different rooms",
    "relay_mismatch": "the two HELLOs bind different relay keys",
    "commitment_mismatch": "a reveal that does not open the commitment, or a commitment bound to another session",
    "illegal_move": "a move the rules do not allow",
    "desync": "a state hash that is not the state after the move",
    "bad_result": "a result that is not the match's result",
    "bad_shape": "a sealed step whose fields have the wrong shape or count",
    "bad_point": "a point that is not a valid point of the prime-order group",
    "bad_scalar": "a key or a disclosed secret that is not a valid scalar",
    "bad_shuffle": "a shuffle step whose argument does not verify (not the previous step's cards in some order)",
    "bad_lock": "a lock whose proof does not verify (not the previous step's points re-keyed)",
    "wrong_private_key": "a key sent to open the other seat's hand that is not the signer's key",
    "wrong_public_key": "a published key that is not the signer's key",
    "false_hand_yaku": "a hand-yaku claim by a hand that holds none",
    "false_no_hand_yaku": "'no hand yaku' from a hand that holds one",
    "secret_mismatch": "a disclosed round secret that does not re-derive what its signer sent",
    "wrong_card": "a play whose keys open a card other than the one it names",
    "unfounded_stop": "a stop (an early disclosure) after which the verification finds no fault of the other seat",
    "crossed_stop": "a message that crossed the receiver's own stop: set aside, the stop takes its place",
    "resigned": "a player resigned",
    "timeout": "a player did not answer in time (witnessed by the relay's certificate)",
    "opponent_left": "a player left and did not come back in time (witnessed by the relay's certificate)",
    "unproven_abort": "an ABORT whose evidence does not prove the accused's fault: its signer's resignation",
    "unwitnessed_timeout": "a TIMEOUT claim whose certificate is missing or does not check: its signer's resignation",
    "bad_header": "not a koikoi transcript (or an unknown transcript version)",
    "truncated": "the file ends inside a record",
    "unfinished": "the transcript stops before the match ended",
    "unreadable": "the file cannot be read",
    "after_the_end": "an ENDED, which acknowledges the opponent's end and is never part of the line",
}


def test_every_code_keeps_its_text() -> None:
    assert {str(c): t for c, t in CODES.items()} == OLD_TEXTS
    assert {c.value for c in Code} == set(OLD_TEXTS)


def test_a_proven_sealed_fault_is_said_in_the_narrator_words() -> None:
    said = MatchWords().ending_text(0, "bad_point", "step 3's point 7", 1, 0, None)
    assert said == (
        "a proven fault by you (as your opponent saw it): bad_point: a point that is not a valid point of the "
        "prime-order group (step 3's point 7); you win the match"
    )
