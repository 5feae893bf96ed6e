"""Evidence always fits: the largest proof of every rule, computed from the exact schema, is under the ABORT's
evidence limit and the frame limit, and no real message is larger than the computed largest of its type."""

from __future__ import annotations

from koikoi.engine import Settings
from koikoi.protocol.evidence import largest_abort, largest_attempt_evidence, largest_frames
from koikoi.protocol.framing import MAX_FRAME_BYTES
from koikoi.protocol.messages import END_TYPES, MAX_EVIDENCE_BYTES, MAX_MESSAGE_BYTES, MsgType, parse
from koikoi.protocol.transcript import parse_transcript
from koikoi.testing import run_match


def test_every_proof_fits_one_abort() -> None:
    frames = largest_frames()
    for t in MsgType:
        if t not in END_TYPES:
            assert frames[t.label] <= MAX_MESSAGE_BYTES, t
    assert max(largest_attempt_evidence().values()) <= MAX_EVIDENCE_BYTES
    sizes = largest_abort()
    assert sizes["largest_cited_evidence"] <= MAX_EVIDENCE_BYTES
    for kind in ("one_message", "equivocation", "one_attempt"):
        assert sizes[kind] <= MAX_FRAME_BYTES, kind


def test_no_real_message_is_larger_than_the_computed_largest() -> None:
    frames = largest_frames()
    seen: set[str] = set()
    for deck in ("sealed", "shared"):
        result = run_match(Settings(6), ("random", "greedy"), b"evidence bounds " + deck.encode(), deck=deck)
        for frame in parse_transcript(bytes(result.transcripts[0])).frames:
            m = parse(frame)
            label = "move_shared" if m.type is MsgType.MOVE and len(m.body) == 2 else m.type.label
            assert len(frame) <= frames[label], (label, len(frame), frames[label])
            seen.add(label)
    assert {"shuffle", "shuffle_lock", "lock", "claim", "draw", "disclose", "move", "move_shared"} <= seen
