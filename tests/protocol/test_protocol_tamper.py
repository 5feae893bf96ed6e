"""Hypothesis-driven tampering. In transit: whatever the relay does is dropped and repaired, the match
completes with the clean run's transcripts. In files: every flaw fails the audit with the right code."""

from __future__ import annotations

import random
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.errors import CODES, ProtocolError
from koikoi.protocol.messages import MsgType, parse, parse_resend, resend_frame
from koikoi.protocol.referee import Referee
from koikoi.protocol.session import FrameDropped
from koikoi.protocol.transcript import MAGIC, encode_transcript, parse_transcript
from koikoi.testing import HarnessResult, chaos, fixed_key, make_pair, reforge, run_match

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@cache
def _clean() -> HarnessResult:
    return run_match(Settings(6), ("random", "random"), b"tamper")


@cache
def _other_match_frames() -> tuple[bytes, ...]:
    """Every message of another match between the same two players (same keys, other nonces)."""
    pair = make_pair(Settings(6), ("random", "random"), b"tamper", nonces=(bytes([3]) * 32, bytes([4]) * 32))
    assert not pair.run()
    return tuple(parse_transcript(bytes(pair.files[0])).frames)


@cache
def _other_match_moves() -> tuple[bytes, ...]:
    return tuple(f for f in _other_match_frames() if parse(f).type is MsgType.MOVE)


def _frames_sent() -> tuple[int, int]:
    r = _clean()
    frames = [parse(f) for f in parse_transcript(r.transcripts[0]).frames]
    return sum(1 for f in frames if f.seat == 0), sum(1 for f in frames if f.seat == 1)


def _repaired(r: HarnessResult) -> None:
    """The match completed as if nothing had happened: the clean run's transcripts, on both sides."""
    assert not r.stalled
    for s in r.sessions:
        assert s.ended is not None and s.ended.outcome.status == "complete", s.ended
    assert r.transcripts == _clean().transcripts


def _is_message(frame: bytes) -> bool:
    return parse_resend(frame) is None


# -- in transit: whatever the relay does is dropped and repaired -----------------------------------


@FAST
@given(seat=st.integers(0, 1), index=st.integers(0, 40), pos=st.integers(0, 10**6), bit=st.integers(0, 7))
def test_a_mutated_frame_in_transit_is_dropped_and_repaired(seat: int, index: int, pos: int, bit: int) -> None:
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
    _repaired(r)


@FAST
@given(seat=st.integers(0, 1), index=st.integers(0, 40))
def test_a_dropped_frame_is_repaired_by_resend(seat: int, index: int) -> None:
    index %= _frames_sent()[seat]

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        return [] if (s == seat and i == index) else [frame]

    _repaired(run_match(Settings(6), ("random", "random"), b"tamper", tamper=tamper))


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

    _repaired(run_match(Settings(6), ("random", "random"), b"tamper", tamper=tamper))


@FAST
@given(seat=st.integers(0, 1), index=st.integers(0, 40), later=st.integers(1, 5))
def test_reordered_frames_are_kept_until_the_gap_fills(seat: int, index: int, later: int) -> None:
    """Every RESEND is lost too: the frames ahead of the gap must be kept, not asked for again."""
    index %= _frames_sent()[seat]
    held: list[bytes] = []
    count = [0]

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        if not _is_message(frame):
            return []
        if s == seat and i == index:
            held.append(frame)
            return []
        if held and s == seat:  # (released behind a later frame of its own sender: to the same receiver)
            count[0] += 1
            if count[0] >= later:
                return [frame, held.pop()]
        return [frame]

    pair = make_pair(Settings(6), ("random", "random"), b"tamper", tamper=tamper)
    if pair.run() and held:  # nothing followed the held frame: the relay lets it go at last
        pair.queues[1 - seat].append(held.pop())
        pair.run()
    _repaired(pair.result(False))


@FAST
@given(seat=st.integers(0, 1), index=st.integers(0, 40), which=st.integers(0, 1000), before=st.booleans())
def test_a_message_from_another_match_is_dropped(seat: int, index: int, which: int, before: bool) -> None:
    index %= _frames_sent()[seat]
    other = _other_match_frames()
    injected = other[which % len(other)]
    if before and parse(injected).type is MsgType.HELLO and parse(injected).seat == 0:
        before = False  # a replayed creator HELLO ahead of the real one would bind the joiner (spec §12)
    dropped: list[FrameDropped] = []

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        if s == seat and i == index:
            return [injected, frame] if before else [frame, injected]
        return [frame]

    r = run_match(Settings(6), ("random", "random"), b"tamper", tamper=tamper)
    _repaired(r)
    dropped = [e for e in r.events[1 - seat] if isinstance(e, FrameDropped)]
    # another match's message is never applied, never cited: it is dropped, and said so. After the sender's
    # last frame it may not even be looked at (the match is over); once both HELLOs are in it is a "replay";
    # before (bound to no match id yet) a broken chain, out of turn, or unexpected before its signer's HELLO
    codes = {d.code for d in dropped}
    if not before and index == _frames_sent()[seat] - 1:
        assert codes <= {"replay"}  # after the sender's last frame: the receiver may have ended and not looked
    elif index >= 2:
        assert codes == {"replay"}
    else:
        assert codes and codes <= {"replay", "broken_chain", "out_of_turn", "unexpected_message"}


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=300), steps=st.integers(0, 40))
def test_arbitrary_bytes_never_crash_a_session_nor_end_it(data: bytes, steps: int) -> None:
    pair = make_pair(Settings(6), ("random", "random"), b"tamper")
    for _ in range(steps):
        pair.step()
    pair.flush(0)
    pair.flush(1)
    for s in pair.sessions:
        before = s.referee.next_seq
        was_open = s.ended is None
        events = s.receive(data)
        assert all(isinstance(e, FrameDropped) for e in events)
        if was_open and parse_resend(data) is None:
            assert len(events) == 1  # dropped, and said so (never silently)
        assert s.records() == [] and s.referee.next_seq == before
        if not s.is_finished:
            assert s.ended is None
    with pytest.raises(ProtocolError) as e:
        Referee().accept(data)
    assert e.value.code in CODES
    _repaired(pair.result(pair.run()))


@settings(max_examples=40, deadline=None)
@given(seed=st.binary(min_size=1, max_size=8), rate=st.sampled_from([0.03, 0.08, 0.15]))
def test_a_relay_that_drops_reorders_duplicates_garbles_and_replays_cannot_end_the_match(
    seed: bytes, rate: float
) -> None:
    # (not the other match's creator HELLO: replayed to the joiner before the real one, it binds the joiner
    # to that session and the handshake stalls with no loser: spec §12, and the test below)
    others = [f for f in _other_match_frames() if parse(f).type is not MsgType.HELLO or parse(f).seat != 0]
    r = run_match(Settings(6), ("random", "random"), b"tamper", tamper=chaos(seed, rate, others=others))
    _repaired(r)
    for rep in r.audits():
        assert rep.valid and rep.status == "complete"


def test_an_old_creator_hello_ahead_of_the_real_one_stalls_the_handshake_with_no_loser() -> None:
    old_hello = _other_match_frames()[0]

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        return [old_hello, frame] if (s == 0 and i == 0) else [frame]

    r = run_match(Settings(6), ("random", "random"), b"tamper", tamper=tamper)
    assert r.stalled
    assert all(s.ended is None and s.match is None for s in r.sessions)
    assert r.sessions[1].referee.msgs[0].frame == old_hello  # the joiner bound the replayed HELLO
    assert {rep.status for rep in r.audits()} == {"unfinished"}


@settings(max_examples=30, deadline=None)
@given(seed=st.binary(min_size=1, max_size=8), forged=st.lists(st.integers(0, 400), max_size=10))
def test_forged_and_replayed_resend_requests_only_cause_resends(seed: bytes, forged: list[int]) -> None:
    rng = random.Random(seed)
    sid = [b""]

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        if _is_message(frame) and parse(frame).match:
            sid[0] = parse(frame).match
        extra = [resend_frame(rng.choice([b"", sid[0], bytes(32)]), q) for q in forged if rng.random() < 0.1]
        return [frame, *extra]

    _repaired(run_match(Settings(6), ("random", "random"), b"tamper", tamper=tamper))


# -- in files -------------------------------------------------------------------


@cache
def _files() -> dict[str, bytes]:
    """A complete match, a forfeit (an ABORT with evidence) from both sides."""
    out = {"complete": _clean().transcripts[0]}

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        if s == 0 and i == 9:
            return [reforge(frame, fixed_key(b"tamper", 0), state_hash=bytes(32))]
        return [frame]

    r = run_match(Settings(6), ("random", "random"), b"tamper", tamper=tamper)
    out["aborted_receiver"] = r.transcripts[1]
    out["aborted_sender"] = r.transcripts[0]
    for t in out.values():
        assert audit(t).valid
    assert audit(out["aborted_receiver"]).status == "forfeit"
    return out


KINDS = ["complete", "aborted_receiver", "aborted_sender"]


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(KINDS), pos=st.integers(0, 10**7), bit=st.integers(0, 7))
def test_any_flipped_bit_in_a_file_fails_the_audit(kind: str, pos: int, bit: int) -> None:
    data = bytearray(_files()[kind])
    data[pos % len(data)] ^= 1 << bit
    rep = audit(bytes(data))
    assert not rep.valid
    assert rep.errors and all(e.code in CODES for e in rep.errors)


@cache
def _short_files() -> tuple[bytes, bytes]:
    """Two short transcripts: a resignation right after the reveal, and an early forfeit with evidence."""
    pair = make_pair(Settings(6), (None, None), b"short")
    pair.run(clock=False)
    pair.sessions[1].resign()
    pair.run(clock=False)

    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        if s == 0 and i == 2:
            return [reforge(frame, fixed_key(b"short", 0), type=MsgType.MOVE, action=0, state_hash=bytes(32))]
        return [frame]

    forfeit = make_pair(Settings(6), (None, None), b"short", tamper=tamper)
    forfeit.run(clock=False)
    assert audit(bytes(forfeit.files[1])).status == "forfeit"
    return bytes(pair.files[0]), bytes(forfeit.files[1])


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
        if frames[i] in {m.frame for m in ref.superseded}:
            # a superseded message is outside the chain (the receiver's file never holds it; an ABORT carries
            # its own evidence): without it the file is the other side's form of the same valid ending
            before, after = audit(_files()[kind]), audit(encode_transcript(frames[:i] + frames[i + 1 :]))
            assert after.valid and (after.status, after.ending) == (before.status, before.ending)
            return
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
        expect = {"replay", "bad_signature", "unexpected_message", "sequence_gap", "equivocation"}
    rep = audit(encode_transcript(frames))
    assert not rep.valid
    assert {e.code for e in rep.errors} <= expect, rep.errors
