"""Sealed mode carried by the session (protocol version 3, spec/protocol.md §14, spec/sealed-line.md): whole
matches through a misbehaving network, resume from the transcript mid-round, a sealed fault forfeited with
its evidence re-checked by both referees and the auditor, a signed step of the wrong shape blamed on its
signer, silence at the disclosure lost on time, and the deck bound by the HELLOs."""

from __future__ import annotations

import dataclasses

import pytest

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, parse, parse_resend
from koikoi.protocol.referee import SEALED_CODES
from koikoi.protocol.sealed import SeatSecrets, round_secret
from koikoi.protocol.sealed_line import SealedSeat, match_secret
from koikoi.protocol.session import MatchStarted, RoomSettings, Session
from koikoi.protocol.transcript import parse_transcript
from koikoi.testing import Pair, chaos, fixed_key, make_pair, reforge, run_match


def _types(pair: Pair, seat: int) -> list[MsgType]:
    return [parse(f).type for f in parse_transcript(bytes(pair.files[seat])).frames]


def test_a_sealed_match_through_a_relay_that_drops_duplicates_garbles_and_reorders() -> None:
    r = run_match(Settings(6), ("greedy", "random"), b"sealed chaos", deck="sealed", tamper=chaos(b"sc", 0.05))
    assert not r.stalled
    reports = r.audits()
    assert all(rep.valid and rep.status == "complete" for rep in reports), [rep.errors for rep in reports]
    assert reports[0].result == reports[1].result and reports[0].rounds == reports[1].rounds
    assert {rep.settings["deck"] for rep in reports if rep.settings is not None} == {"sealed"}


def test_a_sealed_session_resumes_mid_round_from_its_transcript_alone() -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed=b"sealed crash", deck="sealed")
    for crash_seat in (1, 0):
        # mid-round: after a play, before the round's disclosures
        for _ in range(10_000):
            s = pair.sessions[crash_seat]
            m = s.match
            if m is not None and m.round >= 2 and _types(pair, crash_seat)[-1] is MsgType.DRAW:
                break
            assert pair.step()
        s = pair.sessions[crash_seat]
        sid, rnd = s.match_id, s.match.round if s.match is not None else 0
        assert sid is not None
        # nothing of the round being played that the opponent may not see is in the file: no round secret
        data = bytes(pair.files[crash_seat])
        ms = match_secret(fixed_key(b"sealed crash", crash_seat), sid, crash_seat)
        assert ms not in data and all(round_secret(ms, rnd, a) not in data for a in range(4))
        pair.queues[crash_seat].clear()  # the process dies, and whatever was in flight to it
        frames = parse_transcript(data).frames
        resumed = Session.from_transcript(fixed_key(b"sealed crash", crash_seat), frames)
        assert resumed.deck == "sealed" and resumed.resyncing
        pair.sessions = (resumed, pair.sessions[1]) if crash_seat == 0 else (pair.sessions[0], resumed)
        pair.reconnect()
    assert not pair.run()
    assert bytes(pair.files[0]) == bytes(pair.files[1])
    for seat in (0, 1):
        rep = audit(bytes(pair.files[seat]))
        assert rep.valid and rep.status == "complete", rep.errors


def _cheat_on_a_table_key(sl: SealedSeat) -> None:
    """The cheater locks the first table position with its key for the second, and publishes that key: every
    opening works, only the disclosure shows its steps are not its secret's."""

    def bad(orig: SeatSecrets) -> SeatSecrets:
        keys = list(orig.keys)
        keys[16] = keys[17]
        return dataclasses.replace(orig, keys=tuple(keys))

    derive = sl._derive
    sl._derive = lambda: bad(derive())  # type: ignore[method-assign]
    sl._sec = bad(sl._sec)


@pytest.mark.parametrize("cheater", [0, 1])
def test_a_sealed_fault_found_at_the_disclosure_forfeits_the_cheaters_match(cheater: int) -> None:
    pair = make_pair(Settings(6), ("random", "random"), seed=b"sealed cheat", deck="sealed")
    for _ in range(100):
        sl = pair.sessions[cheater].referee.sealed
        if sl is not None:
            break
        assert pair.step()
    assert isinstance(sl, SealedSeat)
    _cheat_on_a_table_key(sl)
    pair.run()
    honest = 1 - cheater
    end = pair.sessions[honest].ended
    assert end is not None
    o = end.outcome
    assert o.status == "forfeit" and o.loser == cheater and o.by == honest, o
    assert o.code in SEALED_CODES and o.evidence_verified is True
    rep = audit(bytes(pair.files[honest]))
    assert rep.valid and rep.status == "forfeit", rep.errors
    assert rep.ending is not None and rep.ending["loser"] == cheater and rep.ending["evidence_verified"] is True
    assert rep.ending["code"] == o.code
    assert _types(pair, honest)[-1] is MsgType.ABORT
    # the ABORT's evidence re-checks only as the line's verification: another code proves nothing
    r = pair.sessions[honest].referee
    abort = parse(parse_transcript(bytes(pair.files[honest])).frames[-1])
    code, _, evidence, _ = abort.body
    before = r.state_before(abort.seq)
    assert before.evidence_problem(code, evidence, b"", honest) is None
    other = "duplicate_card" if code != "duplicate_card" else "bad_lock"
    assert before.evidence_problem(other, evidence, b"", honest) is not None
    assert before.evidence_problem(code, evidence[:-1], b"", honest) is not None
    assert before.evidence_problem(code, evidence, b"", cheater) is not None  # the cheater cannot accuse


def _short_shuffle(cheater: int, seed: bytes) -> object:
    done = [False]

    def tamper(seat: int, i: int, frame: bytes) -> list[bytes]:
        if seat != cheater or done[0]:
            return [frame]
        m = parse(frame)
        if m.type is not MsgType.SHUFFLE and m.type is not MsgType.SHUFFLE_LOCK:
            return [frame]
        done[0] = True
        points = list(m.body[0])[:47]  # a step one point short, signed by its sender
        return [reforge(frame, fixed_key(seed, cheater), points=points)]

    return tamper


@pytest.mark.parametrize("cheater", [0, 1])
def test_a_signed_step_of_the_wrong_shape_is_its_signers_proven_fault(cheater: int) -> None:
    seed = b"sealed shape"
    pair = make_pair(Settings(6), ("random", "random"), seed=seed, deck="sealed", tamper=_short_shuffle(cheater, seed))  # type: ignore[arg-type]
    pair.run()
    for seat in (0, 1):  # the cheater's own line too: the ABORT supersedes its well-formed step
        end = pair.sessions[seat].ended
        assert end is not None
        o = end.outcome
        assert (o.status, o.code, o.loser, o.evidence_verified) == ("forfeit", "bad_shape", cheater, True), o
        rep = audit(bytes(pair.files[seat]))
        assert rep.valid and rep.status == "forfeit" and rep.ending is not None, rep.errors
        assert rep.ending["loser"] == cheater and rep.ending["code"] == "bad_shape"


def _falls_silent_at(pair: Pair, seat: int, kind: MsgType) -> None:
    """``seat``'s program stops before it sends its first message of ``kind`` (nothing more leaves it)."""
    deliver = pair.deliver

    def gate(sender: int, frame: bytes) -> None:
        if sender == seat and not pair.silent[seat] and parse_resend(frame) is None and parse(frame).type is kind:
            pair.silent[seat] = True
        if not pair.silent[sender]:
            deliver(sender, frame)

    pair.deliver = gate  # type: ignore[method-assign,assignment]


@pytest.mark.parametrize("kind", [MsgType.DISCLOSE, MsgType.DRAW])
@pytest.mark.parametrize("seat", [0, 1])
def test_withholding_a_disclosure_or_a_draw_key_is_silence_lost_on_time(seat: int, kind: MsgType) -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed=b"sealed silent", deck="sealed")
    _falls_silent_at(pair, seat, kind)
    pair.run()
    assert pair.silent[seat]
    end = pair.sessions[1 - seat].ended
    assert end is not None and end.outcome.status == "on_time" and end.outcome.loser == seat, end
    exp = pair.sessions[1 - seat].referee.state_before(end.outcome.seq or 0).expected()
    assert exp == (seat, kind)  # the line waited for exactly that message
    # the auditor follows the sealed line (no secret) to the silent seat's turn and checks the certificate
    rep = audit(bytes(pair.files[1 - seat]))
    assert rep.valid and rep.status == "on_time" and rep.ending is not None and rep.ending["loser"] == seat


@pytest.mark.parametrize(("creator", "joiner"), [("sealed", "shared"), ("shared", "sealed")])
def test_a_joiner_expecting_another_deck_ends_settings_mismatch_on_both_sides(creator: str, joiner: str) -> None:
    r = run_match(Settings(6), seed=b"deck mismatch", deck=creator, join_deck=joiner)
    for seat, you, opp in ((0, creator, joiner), (1, joiner, creator)):
        end = r.ended(seat)
        assert end is not None and end.outcome.status == "abandoned" and end.outcome.code == "settings_mismatch"
        assert end.outcome.winner is None and end.outcome.loser is None
        assert f"deck: you {you}, opponent {opp}" in end.outcome.message
    assert [e.deck for e in r.events[1] if isinstance(e, RoomSettings)] == [creator]
    assert {(rep.status, rep.valid) for rep in r.audits()} == {("abandoned", True)}


def test_the_joiner_accepts_the_creators_deck_and_both_hellos_bind_it() -> None:
    r = run_match(Settings(6), seed=b"deck accept", deck="sealed")
    for seat in (0, 1):
        [start] = [e for e in r.events[seat] if isinstance(e, MatchStarted)]
        assert start.deck == "sealed" and r.sessions[seat].deck == "sealed"
    shared = run_match(Settings(6), seed=b"deck accept")
    assert shared.sessions[0].match_id != r.sessions[0].match_id  # the session id hashes the deck
    with pytest.raises(ValueError, match="deck"):
        Session.join(fixed_key(b"x", 1), "ROOM", bytes(32), deck="open")
