"""Hypothesis-driven tampering, in transit and in files: every case detected with the right code."""

from __future__ import annotations

from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.errors import CODES, ProtocolError
from koikoi.protocol.harness import HarnessResult, make_pair, run_match
from koikoi.protocol.messages import MsgType, parse
from koikoi.protocol.referee import Referee
from koikoi.protocol.transcript import MAGIC, encode_transcript, parse_transcript

FRAME_CODES = {
    "oversized_frame",
    "malformed_frame",
    "trailing_bytes",
    "non_canonical",
    "duplicate_key",
    "float_not_allowed",
    "ext_not_allowed",
    "too_deep",
    "bad_map_key",
}
MUTATION_CODES = FRAME_CODES | {"unsupported_version", "unknown_type", "malformed_message", "bad_signature"}

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@cache
def _clean() -> HarnessResult:
    return run_match(Settings(6), ("random", "random"), b"tamper")


@cache
def _other_match_moves() -> tuple[bytes, ...]:
    r = run_match(Settings(6), ("random", "random"), b"another match")
    return tuple(f for f in parse_transcript(r.transcripts[0]).frames if parse(f).type is MsgType.MOVE)


def _frames_sent() -> tuple[int, int]:
    r = _clean()
    frames = [parse(f) for f in parse_transcript(r.transcripts[0]).frames]
    return sum(1 for f in frames if f.seat == 0), sum(1 for f in frames if f.seat == 1)


def _both_audit_valid(r: HarnessResult | tuple[bytes, bytes]) -> None:
    ts = r.transcripts if isinstance(r, HarnessResult) else r
    for t in ts:
        if t == MAGIC:  # the joiner rejected the creator's first message: nothing was written
            continue
        rep = audit(t)
        assert rep.valid, rep.errors
        assert rep.status in ("complete", "aborted")


# -- in transit ---------------------------------------------------------------


@FAST
@given(seat=st.integers(0, 1), index=st.integers(0, 40), pos=st.integers(0, 10**6), bit=st.integers(0, 7))
def test_a_mutated_frame_in_transit_aborts_with_a_framing_or_signature_code(
    seat: int, index: int, pos: int, bit: int
) -> None:
    index %= _frames_sent()[seat]
    hit: list[bytes] = []

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        if s == seat and i == index:
            b = bytearray(frame)
            b[pos % len(b)] ^= 1 << bit
            hit.append(bytes(b))
            return [bytes(b)]
        return [frame]

    r = run_match(Settings(6), ("random", "random"), b"tamper", tamper=tamper)
    assert hit
    detector = r.sessions[1 - seat]
    o = detector.ended
    assert o is not None and o.outcome.status == "aborted"
    assert o.outcome.code in MUTATION_CODES, o.outcome
    assert o.outcome.by == 1 - seat and o.outcome.winner is None  # the relay may have done it: no forfeit
    if seat == 0 and index == 0:  # the creator's HELLO: the joiner leaves, the creator waits on in its lobby
        assert r.transcripts[1] == MAGIC and audit(r.transcripts[0]).status == "incomplete"
        return
    _both_audit_valid(r)
    if r.transcripts[1 - seat] != MAGIC:
        rep = audit(r.transcripts[1 - seat])
        assert rep.abort is not None and rep.abort["evidence_verified"]


@FAST
@given(seat=st.integers(0, 1), index=st.integers(0, 40))
def test_a_dropped_frame_is_a_sequence_gap_or_a_stall_that_resume_repairs(seat: int, index: int) -> None:
    index %= _frames_sent()[seat]

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        return [] if (s == seat and i == index) else [frame]

    pair = make_pair(Settings(6), ("random", "random"), b"tamper", tamper=tamper)
    if pair.run():
        pair.tamper = None
        pair.reconnect()
        assert not pair.run()
        assert all(s.ended is not None and s.ended.outcome.status == "complete" for s in pair.sessions)
        assert bytes(pair.files[0]) == bytes(pair.files[1])
    else:
        o = pair.sessions[1 - seat].ended
        assert o is not None and o.outcome.code == "sequence_gap"
    _both_audit_valid((bytes(pair.files[0]), bytes(pair.files[1])))


@FAST
@given(seat=st.integers(0, 1), index=st.integers(0, 40), old=st.integers(0, 40))
def test_duplicates_and_replays_of_this_match_are_ignored(seat: int, index: int, old: int) -> None:
    index %= _frames_sent()[seat]
    sent: list[bytes] = []

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        if s == seat:
            sent.append(frame)
            if i == index:
                return [frame, frame, sent[old % len(sent)]]
        return [frame]

    r = run_match(Settings(6), ("random", "random"), b"tamper", tamper=tamper)
    assert all(s.ended is not None and s.ended.outcome.status == "complete" for s in r.sessions)
    assert r.transcripts == _clean().transcripts


@FAST
@given(seat=st.integers(0, 1), index=st.integers(0, 40))
def test_reordered_frames_are_a_sequence_gap(seat: int, index: int) -> None:
    index %= _frames_sent()[seat]
    held: list[bytes] = []

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        if s != seat:
            return [frame]
        if i == index:
            held.append(frame)
            return []
        if held:
            return [frame, held.pop()]
        return [frame]

    pair = make_pair(Settings(6), ("random", "random"), b"tamper", tamper=tamper)
    if pair.run():  # nothing followed the held frame: it never came
        assert held
        return
    o = pair.sessions[1 - seat].ended
    assert o is not None and o.outcome.code == "sequence_gap"
    _both_audit_valid((bytes(pair.files[0]), bytes(pair.files[1])))


@FAST
@given(seat=st.integers(0, 1), index=st.integers(5, 40), which=st.integers(0, 1000))
def test_a_message_from_another_match_is_a_replay(seat: int, index: int, which: int) -> None:
    index %= _frames_sent()[seat]
    other = _other_match_moves()
    injected = other[which % len(other)]

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        return [injected, frame] if (s == seat and i == index) else [frame]

    r = run_match(Settings(6), ("random", "random"), b"tamper", tamper=tamper)
    o = r.sessions[1 - seat].ended
    assert o is not None
    if index >= 2 or r.sessions[1 - seat].match_id is not None:
        assert o.outcome.code in ("replay", "bad_signature"), o.outcome  # another key signed it: bad_signature
    _both_audit_valid(r)


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=300), steps=st.integers(0, 40))
def test_arbitrary_bytes_never_crash_a_session(data: bytes, steps: int) -> None:
    pair = make_pair(Settings(6), ("random", "random"), b"junk")
    for _ in range(steps):
        pair.step()
    for s in pair.sessions:
        if not s.is_finished:
            events = s.receive(data)
            ended = s.ended
            if events:
                assert ended is not None and ended.outcome.code in CODES
    try:
        Referee().accept(data)
    except ProtocolError as e:
        assert e.code in CODES


# -- in files -------------------------------------------------------------------


@cache
def _files() -> dict[str, bytes]:
    """A complete match, an aborted one (with evidence), and one with a superseded record."""
    out = {"complete": _clean().transcripts[0]}

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        if s == 0 and i == 9:
            return [frame[:-1] + bytes([frame[-1] ^ 1])]
        return [frame]

    r = run_match(Settings(6), ("random", "random"), b"tamper", tamper=tamper)
    out["aborted_receiver"] = r.transcripts[1]
    out["aborted_sender"] = r.transcripts[0]
    for t in out.values():
        assert audit(t).valid
    return out


KINDS = ["complete", "aborted_receiver", "aborted_sender"]


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(KINDS), pos=st.integers(0, 10**7), bit=st.integers(0, 7))
def test_any_flipped_bit_in_a_file_fails_the_audit(kind: str, pos: int, bit: int) -> None:
    data = bytearray(_files()[kind])
    data[pos % len(data)] ^= 1 << bit
    rep = audit(bytes(data))
    assert not rep.valid
    assert rep.errors and all(e.code in CODES or e.code == "unjustified_abort" for e in rep.errors)


@cache
def _short_files() -> tuple[bytes, bytes]:
    """Two short transcripts: a resignation right after the reveal, and an early abort with evidence."""
    pair = make_pair(Settings(6), (None, None), b"short")
    pair.run()
    pair.sessions[1].resign()
    pair.run()

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        return [frame[:-1] + bytes([frame[-1] ^ 1])] if (s == 0 and i == 2) else [frame]

    r = run_match(Settings(6), (None, None), b"short", tamper=tamper)  # type: ignore[arg-type]
    return bytes(pair.files[0]), r.transcripts[1]


def test_every_single_byte_flip_of_a_short_transcript_fails() -> None:
    for data in _short_files():
        assert audit(data).valid
        for pos in range(0, len(data)):
            d = bytearray(data)
            d[pos] ^= 0x01
            assert not audit(bytes(d)).valid, pos


@FAST
@given(kind=st.sampled_from(KINDS), cut=st.integers(0, 10**7))
def test_a_truncated_file_fails(kind: str, cut: int) -> None:
    data = _files()[kind]
    cut %= len(data)
    rep = audit(data[:cut])
    assert not rep.valid
    codes = {e.code for e in rep.errors}
    if cut < len(MAGIC):
        assert codes == {"bad_header"}
    else:
        assert codes <= {"unfinished", "truncated"} and codes


@FAST
@given(kind=st.sampled_from(KINDS), i=st.integers(0, 1000), op=st.sampled_from(["drop", "dup", "swap", "foreign"]))
def test_dropped_duplicated_swapped_or_foreign_records_fail(kind: str, i: int, op: str) -> None:
    frames = parse_transcript(_files()[kind]).frames
    i %= len(frames)
    expect: set[str]
    if op == "drop":
        ref = audit(_files()[kind]).referee
        assert ref is not None
        if frames[i] in {m.frame for m in ref.superseded[1:]}:
            return  # a superseded message after the first is outside the chain: dropping it changes no proof
        frames = frames[:i] + frames[i + 1 :]
        expect = (
            {"unfinished"}
            if i == len(frames)
            else {"sequence_gap", "replay", "broken_chain", "commitment_mismatch", "unexpected_message"}
        )
    elif op == "dup":
        frames = [*frames[: i + 1], frames[i], *frames[i + 1 :]]
        expect = {"replay"}
    elif op == "swap":
        j = (i + 1) % len(frames)
        if i == j or frames[i] == frames[j]:
            return
        frames[i], frames[j] = frames[j], frames[i]
        expect = {"sequence_gap", "replay", "unexpected_message", "broken_chain", "commitment_mismatch"}
    else:
        other = _other_match_moves()
        frames = [*frames[:i], other[i % len(other)], *frames[i:]]
        expect = {"replay", "bad_signature", "unexpected_message", "sequence_gap"}
    rep = audit(encode_transcript(frames))
    assert not rep.valid
    assert {e.code for e in rep.errors} <= expect, rep.errors
