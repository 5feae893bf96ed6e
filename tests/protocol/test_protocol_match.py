"""Whole matches through two protocol sessions in memory, and every way a match can end."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from koikoi.engine import Settings
from koikoi.engine.actions import CHOOSE, PLAY
from koikoi.protocol.audit import audit
from koikoi.protocol.errors import ProtocolError
from koikoi.protocol.harness import fixed_key, make_pair, reforge, run_match
from koikoi.protocol.messages import MsgType, parse
from koikoi.protocol.session import (
    ActionApplied,
    MatchEnded,
    MatchStarted,
    NotYourTurn,
    OwnTimeExpired,
    RoomSettings,
    RoundEnded,
    Session,
    SessionClosed,
    TimeoutWarning,
)
from koikoi.protocol.transcript import parse_transcript


def _ended(events: Sequence[object]) -> MatchEnded:
    ends = [e for e in events if isinstance(e, MatchEnded)]
    assert len(ends) == 1
    return ends[0]


@pytest.mark.parametrize(
    ("rounds", "double", "bots", "seed"),
    [
        (6, True, ("random", "greedy"), b"m6"),
        (12, True, ("greedy", "random"), b"m12"),
        (12, False, ("greedy", "greedy"), b"m12nd"),
        (6, False, ("random", "random"), b"m6nd"),
    ],
)
def test_whole_match_both_transcripts_identical_and_complete(
    rounds: int, double: bool, bots: tuple[str, str], seed: bytes
) -> None:
    r = run_match(Settings(rounds, double), bots, seed)
    assert not r.stalled
    a, b = r.transcripts
    assert a == b  # the whole file, not only the chain
    assert all(rep.valid and rep.status == "complete" for rep in r.audits())
    for seat in (0, 1):
        end = _ended(r.events[seat])
        assert end.outcome.status == "complete"
        rep = audit(r.transcripts[seat])
        assert rep.valid and rep.status == "complete", rep.errors
        assert rep.settings == {"rounds": rounds, "double_at_8": double}
        m = r.sessions[seat].match
        assert m is not None and m.is_over
        assert rep.result == {"points": list(m.points), "winner": m.winner}
        assert [x["round"] for x in rep.rounds] == [h.round for h in m.history]
        starts = [e for e in r.events[seat] if isinstance(e, MatchStarted)]
        assert len(starts) == 1 and starts[0].seat == seat
        assert starts[0].opponent == r.sessions[1 - seat].fingerprint
        assert len([e for e in r.events[seat] if isinstance(e, RoundEnded)]) == len(m.history)
    acts = [e for e in r.events[0] if isinstance(e, ActionApplied)]
    assert acts == [e for e in r.events[1] if isinstance(e, ActionApplied)]


def test_the_joiner_sees_the_room_settings_and_may_accept_them() -> None:
    r = run_match(Settings(12, False), seed=b"accept")
    rs = [e for e in r.events[1] if isinstance(e, RoomSettings)]
    assert rs == [RoomSettings(Settings(12, False), "TEST-ROOM", r.sessions[0].fingerprint)]
    assert _ended(r.events[1]).outcome.status == "complete"


@pytest.mark.parametrize(
    ("creator", "join_rounds", "join_double", "you", "opp"),
    [
        (Settings(12, True), 6, None, "rounds: you 6, opponent 12", "rounds: you 12, opponent 6"),
        (
            Settings(6, True),
            None,
            False,
            "doubling at 8+: you off, opponent on",
            "doubling at 8+: you on, opponent off",
        ),
        (Settings(6, False), 12, True, "rounds: you 12, opponent 6; doubling at 8+: you on, opponent off", None),
    ],
)
def test_settings_mismatch_fails_on_both_sides_naming_the_difference(
    creator: Settings, join_rounds: int | None, join_double: bool | None, you: str, opp: str | None
) -> None:
    r = run_match(creator, seed=b"mm", join_rounds=join_rounds, join_double=join_double)
    j, c = _ended(r.events[1]).outcome, _ended(r.events[0]).outcome
    assert j.code == c.code == "settings_mismatch"
    assert j.message == you
    if opp is not None:
        assert c.message == opp
    assert r.sessions[0].match is None and r.sessions[1].match is None
    for t in r.transcripts:
        rep = audit(t)
        assert rep.status == "aborted" and rep.valid
        assert rep.abort is not None and rep.abort["code"] == "settings_mismatch"
        assert rep.result["winner"] is None


def test_a_lying_relay_about_the_room_is_caught_by_the_room_code() -> None:
    pair = make_pair(Settings(6), seed=b"room")
    pair.sessions = (pair.sessions[0], Session.join(fixed_key(b"room", 1), "OTHER-ROOM", bytes(32)))
    pair.run()
    assert pair.sessions[1].ended is not None
    assert pair.sessions[1].ended.outcome.message == "room: you OTHER-ROOM, opponent TEST-ROOM"


def _play_until(pair: object, pred: object) -> None:
    for _ in range(10_000):
        if pred():  # type: ignore[operator]
            return
        assert pair.step()  # type: ignore[attr-defined]
    raise AssertionError("never reached")


def test_resign_out_of_turn_crossing_a_move_supersedes_it() -> None:
    pair = make_pair(Settings(6), seed=b"resign")
    a, b = pair.sessions

    def mid() -> bool:
        m = a.match
        return m is not None and len(m.history) >= 1 and a.my_turn and not any(pair.queues)

    _play_until(pair, mid)
    bot = pair.bots[0]
    assert bot is not None
    a.play(bot.choose(a.view()))  # seat 0's move, not yet delivered
    pair.flush(0)
    assert pair.queues[1]
    b.resign()  # seat 1 resigns without having seen it
    pair.flush(1)
    pair.run()
    for seat in (0, 1):
        o = pair.sessions[seat].ended
        assert o is not None and o.outcome.code == "resigned" and o.outcome.by == 1 and o.outcome.winner == 0
    ta, tb = (bytes(f) for f in pair.files)
    fa, fb = parse_transcript(ta).frames, parse_transcript(tb).frames
    assert len(fa) == len(fb) + 1  # seat 0's file also holds its superseded move
    assert fa[:-2] == fb[:-1] and fa[-1] == fb[-1]
    for t in (ta, tb):
        rep = audit(t)
        assert rep.valid and rep.status == "aborted", rep.errors
        assert rep.abort is not None and rep.abort["code"] == "resigned" and rep.result["winner"] == 0


def test_timeout_warning_then_claim_with_evidence() -> None:
    pair = make_pair(Settings(6), ("random", None), seed=b"slow")
    assert pair.run()  # stalls: seat 1 never moves
    a, b = pair.sessions
    w = a.wait()
    assert w is not None and w.seat == 1 and w.what is MsgType.MOVE
    assert a.next_deadline() == w.warn_at == 90.0
    assert a.time_passed(w.epoch, 10) == []
    ev = a.time_passed(w.epoch, 95)
    assert ev == [TimeoutWarning(1, "move", 25.0)]
    assert a.time_passed(w.epoch, 96) == []
    assert b.time_passed(w.epoch, 200) == [OwnTimeExpired("move")]
    assert a.time_passed(w.epoch - 1, 500) == []  # a stale epoch is ignored
    ev = a.time_passed(w.epoch, 120)
    assert _ended(ev).outcome.code == "timeout"
    pair.run()
    for seat in (0, 1):
        o = pair.sessions[seat].ended
        assert o is not None and o.outcome.code == "timeout" and o.outcome.winner == 0
        rep = audit(bytes(pair.files[seat]))
        assert rep.valid and rep.status == "aborted" and rep.abort is not None
        assert rep.abort["by"] == 0 and "did not answer within 120 s" in rep.abort["message"]


def test_no_reveal_before_the_timeout_forfeits_with_the_commitment_as_evidence() -> None:
    gone = [False]

    def hold_reveal(seat: int, i: int, frame: bytes) -> list[bytes]:
        gone[0] = gone[0] or (seat == 0 and parse(frame).type is MsgType.REVEAL)
        return [] if seat == 0 and gone[0] else [frame]

    pair = make_pair(Settings(6), seed=b"noreveal", tamper=hold_reveal)
    assert pair.run()
    b = pair.sessions[1]
    w = b.wait()
    assert w is not None and w.what is MsgType.REVEAL and w.seat == 0
    _ended(b.time_passed(w.epoch, w.limit or 0))
    pair.run()
    rep = audit(bytes(pair.files[1]))
    assert rep.valid and rep.status == "aborted" and rep.result["winner"] == 1
    frames = parse_transcript(bytes(pair.files[1])).frames
    assert [parse(f).type for f in frames] == [
        MsgType.HELLO,
        MsgType.HELLO,
        MsgType.COMMIT,
        MsgType.VALUE,
        MsgType.TIMEOUT,
    ]


def test_opponent_left_claim() -> None:
    pair = make_pair(Settings(6), ("random", None), seed=b"left")
    pair.run()
    ev = pair.sessions[0].claim_timeout("left", 120)
    assert _ended(ev).outcome.code == "opponent_left"
    with pytest.raises(SessionClosed):
        pair.sessions[0].resign()


def _forge_on(seat_from: int, kind: MsgType, nth: int, seed: bytes, **changes: object):  # type: ignore[no-untyped-def]
    """A tamper hook: the ``nth`` message of ``kind`` from ``seat_from`` is re-signed with changes."""
    count = [0]

    def tamper(seat: int, i: int, frame: bytes) -> list[bytes]:
        if seat == seat_from and parse(frame).type is kind:
            count[0] += 1
            if count[0] == nth:
                return [reforge(frame, fixed_key(seed, seat), **changes)]  # type: ignore[arg-type]
        return [frame]

    return tamper


@pytest.mark.parametrize(
    ("tamper", "detector", "code", "winner"),
    [
        (_forge_on(0, MsgType.REVEAL, 1, b"cheat", value=bytes(32)), 1, "commitment_mismatch", 1),
        (_forge_on(0, MsgType.MOVE, 3, b"cheat", state_hash=bytes(32)), 1, "desync", 1),
        (_forge_on(1, MsgType.MOVE, 2, b"cheat", action=CHOOSE[0].code), 0, "illegal_move", 0),
        (_forge_on(0, MsgType.MOVE, 2, b"cheat", prev=bytes(32)), 1, "broken_chain", 1),
        (_forge_on(1, MsgType.MOVE, 1, b"cheat", seq=99), 0, "sequence_gap", None),
        (_forge_on(1, MsgType.MOVE, 1, b"cheat", seat=0), 0, "bad_signature", None),  # impersonation
        (_forge_on(0, MsgType.RESULT, 1, b"cheat", points0=49), 1, "bad_result", "engine"),
    ],
    ids=[
        "commitment_mismatch",
        "desync",
        "illegal_move",
        "broken_chain",
        "sequence_gap",
        "impersonation",
        "bad_result",
    ],
)
def test_a_modified_client_is_caught(tamper: object, detector: int, code: str, winner: object) -> None:
    r = run_match(Settings(6), ("random", "random"), b"cheat", tamper=tamper)  # type: ignore[arg-type]
    o = r.sessions[detector].ended
    assert o is not None and o.outcome.code == code, o
    assert o.outcome.by == detector
    if winner == "engine":
        m = r.sessions[0].match
        assert m is not None and m.is_over
        winner = m.winner
    assert o.outcome.winner == winner
    for seat in (0, 1):
        rep = audit(r.transcripts[seat])
        assert rep.status == "aborted" and rep.valid, rep.errors
        assert rep.abort is not None and rep.abort["code"] == code and rep.abort["evidence_verified"] is True
        assert rep.result["winner"] == winner


def test_an_illegal_local_action_is_refused_not_sent() -> None:
    pair = make_pair(Settings(6), (None, None), seed=b"local")
    pair.run()
    a, b = pair.sessions
    mover = a if a.my_turn else b
    other = b if mover is a else a
    legal = set(mover.view().legal_actions)
    bad = next(x for x in PLAY if x not in legal)
    from koikoi.engine import IllegalAction

    with pytest.raises(IllegalAction):
        mover.play(bad)
    with pytest.raises(NotYourTurn):
        other.play(next(iter(legal)))
    assert mover.frames_to_send() == [] and mover.records() == []


def test_resume_after_lost_frames_resends_unacknowledged() -> None:
    dropped = [0]

    def lossy(seat: int, i: int, frame: bytes) -> list[bytes]:
        if i % 7 == 3:  # the connection drops this frame and everything after it (then reconnects)
            dropped[0] += 1
            return []
        return [frame]

    pair = make_pair(Settings(6), seed=b"lossy", tamper=lossy)
    for _ in range(500):
        if not pair.run():
            break
        pair.reconnect()
    assert dropped[0] > 0
    for seat in (0, 1):
        o = pair.sessions[seat].ended
        assert o is not None and o.outcome.status == "complete"
    assert bytes(pair.files[0]) == bytes(pair.files[1])
    assert audit(bytes(pair.files[0])).status == "complete"


def test_a_crashed_client_resumes_from_its_transcript() -> None:
    pair = make_pair(Settings(12), ("greedy", "greedy"), seed=b"crash")
    for _ in range(120):
        pair.step()
    for crash_seat in (1, 0):
        for _ in range(37):
            pair.step()
        # the process dies: its session is lost, and so is whatever was in flight to it
        pair.queues[crash_seat].clear()
        frames = parse_transcript(bytes(pair.files[crash_seat])).frames
        s = Session.from_transcript(fixed_key(b"crash", crash_seat), frames)
        pair.sessions = (s, pair.sessions[1]) if crash_seat == 0 else (pair.sessions[0], s)
        pair.reconnect()
    assert not pair.run()
    assert bytes(pair.files[0]) == bytes(pair.files[1])
    for seat in (0, 1):
        rep = audit(bytes(pair.files[seat]))
        assert rep.valid and rep.status == "complete", rep.errors


def test_resume_between_commit_and_reveal_still_reveals() -> None:
    gone = [False]

    def hold_reveal(seat: int, i: int, frame: bytes) -> list[bytes]:
        gone[0] = gone[0] or (seat == 0 and parse(frame).type is MsgType.REVEAL)
        return [] if seat == 0 and gone[0] else [frame]

    pair = make_pair(Settings(6), ("random", "random"), seed=b"rv", tamper=hold_reveal)
    pair.run()
    frames = parse_transcript(bytes(pair.files[0])).frames[:-1]  # crashed before writing the reveal
    pair.files[0][:] = pair.files[0][: len(b"".join(len(f).to_bytes(4, "big") + f for f in frames)) + 20]
    pair.tamper = None
    s = Session.from_transcript(fixed_key(b"rv", 0), frames)
    pair.sessions = (s, pair.sessions[1])
    pair.reconnect()
    assert not pair.run()
    assert audit(bytes(pair.files[0])).status == "complete"
    assert bytes(pair.files[0]) == bytes(pair.files[1])


def test_from_transcript_refuses_someone_elses_file() -> None:
    r = run_match(Settings(6), seed=b"mine")
    frames = parse_transcript(r.transcripts[0]).frames
    with pytest.raises(ValueError, match="not yours"):
        Session.from_transcript(fixed_key(b"other", 0), frames)
    done = Session.from_transcript(fixed_key(b"mine", 1), frames)
    assert done.ended is not None and done.ended.outcome.status == "complete"


def test_referee_rejects_garbage_with_a_code() -> None:
    from koikoi.protocol.referee import Referee

    for data in (b"", b"\xc1", b"\x93\x01\x02\x03", b"\x91\x02", bytes(70_000)):
        with pytest.raises(ProtocolError) as e:
            Referee().accept(data)
        assert e.value.code in {"malformed_frame", "malformed_message", "oversized_frame", "unsupported_version"}


def test_an_abort_whose_evidence_does_not_show_the_flaw_fails_the_audit() -> None:
    from koikoi.protocol.messages import build

    pair = make_pair(Settings(6), ("random", "random"), seed=b"liar")
    for _ in range(30):
        pair.step()
    while any(pair.queues):  # everything delivered: both sides hold the same line
        pair.step()
    b = pair.sessions[1]
    r = b.referee
    honest = r.msgs[-1].frame
    lie = build(
        fixed_key(b"liar", 1),
        MsgType.ABORT,
        r.sid or b"",
        r.next_seq,
        r.head_hash,
        1,
        ["desync", "a made-up desync", honest],
    )
    events = pair.sessions[0].receive(lie)
    end = _ended(events)
    assert end.outcome.code == "desync" and end.outcome.winner is None and end.outcome.evidence_verified is False
    pair.flush(0)
    rep = audit(bytes(pair.files[0]))
    assert rep.status == "aborted" and not rep.valid
    assert [e.code for e in rep.errors] == ["unjustified_abort"]
    assert rep.result["winner"] is None
