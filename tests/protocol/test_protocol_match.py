"""Whole matches through two protocol sessions in memory, and every way a match can end."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from koikoi.engine import Settings
from koikoi.engine.actions import CHOOSE, PLAY
from koikoi.engine.bots import make_bot
from koikoi.protocol.audit import audit
from koikoi.protocol.errors import ProtocolError
from koikoi.protocol.framing import encode
from koikoi.protocol.messages import PROTOCOL_VERSION, MsgType, parse, parse_resend
from koikoi.protocol.session import (
    ActionApplied,
    CertificateNeeded,
    CertificateRejected,
    FrameDropped,
    MatchDecided,
    MatchStarted,
    NotYourTurn,
    OwnTimeExpired,
    RoomSettings,
    RoundScored,
    Session,
    SessionClosed,
    TimeoutWarning,
    TranscriptDamaged,
)
from koikoi.protocol.transcript import encode_transcript, parse_transcript
from koikoi.protocol.witness import fingerprint
from koikoi.testing import Pair, Witness, fixed_key, make_pair, reforge, run_match, witness_key


def _ended(events: Sequence[object]) -> MatchDecided:
    ends = [e for e in events if isinstance(e, MatchDecided)]
    assert len(ends) == 1
    return ends[0]


@pytest.mark.parametrize("deck", ["shared", "sealed"])
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
    rounds: int, double: bool, bots: tuple[str, str], seed: bytes, deck: str
) -> None:
    r = run_match(Settings(rounds, double), bots, seed, deck=deck)
    assert not r.stalled
    a, b = r.transcripts
    assert a == b  # the whole file, not only the chain
    assert all(rep.valid and rep.status == "complete" for rep in r.audits())
    for seat in (0, 1):
        end = _ended(r.events[seat])
        assert end.outcome.status == "complete"
        rep = audit(r.transcripts[seat])
        assert rep.valid and rep.status == "complete", rep.errors
        expected = {"rounds": rounds, "double_at_8": double, "move_time_s": 120, "deck": deck}
        assert rep.settings == {**expected, "watchers": deck == "sealed"}  # the deck's default
        assert rep.publish == [False, False]
        assert r.sessions[seat].deck == deck
        m = r.sessions[seat].match
        assert m is not None and m.is_over
        assert rep.result == {"points": list(m.points), "winner": m.winner}
        assert [x["round"] for x in rep.rounds] == [h.round for h in m.history]
        starts = [e for e in r.events[seat] if isinstance(e, MatchStarted)]
        assert len(starts) == 1 and starts[0].seat == seat
        assert starts[0].opponent == r.sessions[1 - seat].fingerprint and starts[0].deck == deck
        assert len([e for e in r.events[seat] if isinstance(e, RoundScored)]) == len(m.history)
    acts = [e for e in r.events[0] if isinstance(e, ActionApplied)]
    assert acts == [e for e in r.events[1] if isinstance(e, ActionApplied)]


def test_the_joiner_sees_the_room_settings_and_may_accept_them() -> None:
    r = run_match(Settings(12, False), seed=b"accept")
    rs = [e for e in r.events[1] if isinstance(e, RoomSettings)]
    rk = r.sessions[0].relay_key
    assert rs == [RoomSettings(Settings(12, False), "TEST-ROOM", r.sessions[0].fingerprint, 120, rk)]
    start = next(e for e in r.events[1] if isinstance(e, MatchStarted))
    assert (start.settings, start.move_time_s, start.witness) == (Settings(12, False), 120, fingerprint(rk))
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
    assert j.status == c.status == "abandoned" and j.winner is None and c.winner is None
    assert j.message == you
    if opp is not None:
        assert c.message == opp
    assert r.sessions[0].match is None and r.sessions[1].match is None
    assert r.transcripts[0] == r.transcripts[1]  # both HELLOs on both sides
    for t in r.transcripts:
        rep = audit(t)
        assert rep.status == "abandoned" and rep.valid
        assert rep.ending is not None and rep.ending["code"] == "settings_mismatch"
        assert rep.result["winner"] is None


@pytest.mark.parametrize(
    ("options", "code", "you"),
    [
        ({"join_room": "OTHER-ROOM"}, "room_mismatch", "room: you OTHER-ROOM, opponent TEST-ROOM"),
        ({"join_relay_key": bytes(range(32))}, "relay_mismatch", "relay: you "),
        ({"join_move_time": 30}, "settings_mismatch", "move time: you 30 s, opponent 120 s"),
        ({"join_move_time": 0}, "settings_mismatch", "move time: you none, opponent 120 s"),
    ],
)
def test_a_lying_relay_about_the_room_or_itself_ends_with_no_loser_on_both_sides(
    options: dict[str, Any], code: str, you: str
) -> None:
    r = run_match(Settings(6), seed=b"room", **options)
    assert not r.stalled
    for seat in (0, 1):
        o = _ended(r.events[seat]).outcome
        assert (o.status, o.code, o.winner, o.loser) == ("abandoned", code, None, None)
    assert r.sessions[1].ended is not None and r.sessions[1].ended.outcome.message.startswith(you)
    assert r.transcripts[0] == r.transcripts[1]
    assert {(rep.status, rep.valid) for rep in r.audits()} == {("abandoned", True)}


def _play_until(pair: object, pred: object) -> None:
    for _ in range(10_000):
        if pred():  # type: ignore[operator]
            return
        assert pair.step()  # type: ignore[attr-defined]
    raise AssertionError("never reached")


def _reaches(seed: bytes, pred: Callable[[Pair], bool]) -> Pair | None:
    """The pair of ``seed`` stepped until ``pred`` holds (None when the match ends first)."""
    pair = make_pair(Settings(6), seed=seed)
    for _ in range(10_000):
        if pred(pair):
            return pair
        if not pair.step():
            return None
    return None


def test_resign_out_of_turn_crossing_a_move_supersedes_it() -> None:
    def mid(pair: Pair) -> bool:
        a = pair.sessions[0]
        m = a.match
        return m is not None and len(m.history) >= 1 and a.my_turn and not any(pair.queues)

    # the first seed whose match gives seat 0 a move after round 1 (who deals and wins follows from the seed)
    found = next(p for p in (_reaches(b"resign-%d" % i, mid) for i in range(50)) if p is not None)
    pair = found
    a, b = pair.sessions
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
        assert rep.valid and rep.status == "resigned", rep.errors
        assert rep.ending is not None and rep.ending["code"] == "resigned" and rep.result["winner"] == 0


def test_a_short_move_time_does_not_warn_at_once() -> None:
    """With 30 s a move the 30 s warning would come at the start of every move: it comes at 3/4 instead."""
    pair = make_pair(Settings(6), ("random", None), seed=b"slow", auto_certify=False, move_time_s=30)
    assert pair.run(clock=False)
    a = pair.sessions[0]
    w = a.wait()
    assert w is not None and w.limit == 30 and w.warn_at == 22.5
    assert a.time_passed(w.epoch, 1) == []
    assert a.time_passed(w.epoch, 23) == [TimeoutWarning(1, "move", 7.0)]


def test_timeout_warning_then_a_certificate_then_the_claim() -> None:
    pair = make_pair(Settings(6), ("random", None), seed=b"slow", auto_certify=False)
    assert pair.run(clock=False)  # stalls: seat 1 never moves
    a, b = pair.sessions
    w = a.wait()
    assert w is not None and w.seat == 1 and w.what is MsgType.MOVE and w.limit == 120
    assert a.next_deadline() == 5.0  # the first RESEND comes before the warning
    assert a.time_passed(w.epoch, 4) == []
    assert a.time_passed(w.epoch, 95) == [TimeoutWarning(1, "move", 25.0)]
    assert a.time_passed(w.epoch, 96) == []
    assert b.time_passed(w.epoch, 200) == [OwnTimeExpired("move")]
    assert a.time_passed(w.epoch - 1, 500) == []  # a stale epoch is ignored
    assert pair.witness is not None
    early = pair.witness.certify(1, 119.0)  # the relay has seen only 119 s of silence
    assert a.time_passed(w.epoch, 120) == [CertificateNeeded(1)]
    a.frames_to_send()
    assert a.time_passed(w.epoch, 121) == []
    assert a.time_passed(w.epoch, 125) == [CertificateNeeded(1)]  # asked again every resend_after seconds
    a.frames_to_send()
    rejected = a.witnessed(early)
    assert len(rejected) == 1 and isinstance(rejected[0], CertificateRejected)
    assert "less than the move time" in rejected[0].reason
    assert a.frames_to_send() == [] and not a.is_finished  # nothing was sent
    ev = a.witnessed(pair.witness.certify(1, 125.0))
    o = _ended(ev).outcome
    assert (o.status, o.code, o.winner, o.loser, o.witness) == ("on_time", "timeout", 0, 1, pair.witness_fingerprint)
    pair.flush(0)
    pair.run(clock=False)
    for seat in (0, 1):
        end = pair.sessions[seat].ended
        assert end is not None and end.outcome.status == "on_time" and end.outcome.winner == 0
        rep = audit(bytes(pair.files[seat]))
        assert rep.valid and rep.status == "on_time" and rep.ending is not None
        assert rep.ending["by"] == 0 and rep.ending["loser"] == 1 and rep.ending["witness"] == pair.witness_fingerprint


def test_no_reveal_is_a_loss_on_time_with_the_commitment_in_the_chain() -> None:
    pair = make_pair(Settings(6), seed=b"noreveal")
    for _ in range(100):
        if pair.sessions[1].referee.next_seq >= 3:
            break
        pair.step()
    pair.silent[0] = True  # the creator saw the joiner's value coming and never reveals
    assert not pair.run()
    for seat in (0, 1):
        o = pair.sessions[seat].ended
        assert o is not None and (o.outcome.status, o.outcome.winner) == ("on_time", 1)
    rep = audit(bytes(pair.files[1]))
    assert rep.valid and rep.status == "on_time" and rep.result["winner"] == 1
    frames = parse_transcript(bytes(pair.files[1])).frames
    assert [parse(f).type for f in frames] == [
        MsgType.HELLO,
        MsgType.HELLO,
        MsgType.COMMIT,
        MsgType.VALUE,
        MsgType.TIMEOUT,
    ]
    assert audit(bytes(pair.files[0])).status == "on_time"  # the creator's file holds its unsent reveal, superseded


def test_opponent_left_is_witnessed_by_a_certificate_of_a_disconnected_seat() -> None:
    pair = make_pair(Settings(6), ("random", None), seed=b"left", auto_certify=False)
    pair.run(clock=False)
    a = pair.sessions[0]
    assert pair.witness is not None
    pair.witness.connected[1] = False
    o = _ended(a.witnessed(pair.witness.certify(1, 500.0))).outcome
    assert (o.status, o.code, o.winner) == ("on_time", "opponent_left", 0)
    with pytest.raises(SessionClosed):
        a.resign()


def test_no_clock_and_no_relay_mean_no_timeout_ever() -> None:
    options: dict[str, Any]
    for options in ({"move_time_s": 0}, {"relay": False}):
        pair = make_pair(Settings(6), ("random", None), seed=b"noclock", auto_certify=False, **options)
        assert pair.run(patience=2000.0)  # stalls: no certificate can end it
        a = pair.sessions[0]
        needed = [e for e in pair.events[0] if isinstance(e, CertificateNeeded)]
        if options.get("move_time_s") == 0:
            w = a.wait()
            assert w is not None and w.limit is None and not needed
        assert not a.is_finished
        blob = Witness(witness_key(b"noclock"), "TEST-ROOM").certify(1, 10_000.0)
        (rej,) = a.witnessed(blob)
        assert isinstance(rej, CertificateRejected) and not a.is_finished


def _forge_on(seat_from: int, kind: MsgType, nth: int, seed: bytes, **changes: object):  # type: ignore[no-untyped-def]
    """A tamper hook: the ``nth`` message of ``kind`` from ``seat_from`` is re-signed with changes."""
    count = [0]

    def tamper(seat: int, i: int, frame: bytes) -> list[bytes]:
        if seat == seat_from and parse_resend(frame) is None and parse(frame).type is kind:
            count[0] += 1
            if count[0] == nth:
                return [reforge(frame, fixed_key(seed, seat), **changes)]  # type: ignore[arg-type]
        return [frame]

    return tamper


def _replay_after(seat_from: int, kind: MsgType, seed: bytes):  # type: ignore[no-untyped-def]
    """A tamper hook: after ``seat_from``'s first ``kind``, the same message of an earlier session of the
    same two players (same keys, other nonces) is delivered too."""
    old = make_pair(Settings(6), ("random", "random"), seed, nonces=(bytes([7]) * 32, bytes([8]) * 32))
    assert not old.run()
    earlier = next(f for f in parse_transcript(bytes(old.files[0])).frames if parse(f).type is kind)
    done = [False]

    def tamper(seat: int, i: int, frame: bytes) -> list[bytes]:
        if not done[0] and seat == seat_from and parse_resend(frame) is None and parse(frame).type is kind:
            done[0] = True
            assert frame != earlier
            return [frame, earlier]
        return [frame]

    return tamper


@pytest.mark.parametrize(
    ("tamper", "detector", "code", "winner"),
    [
        (_forge_on(0, MsgType.REVEAL, 1, b"cheat", value=bytes(32)), 1, "commitment_mismatch", 1),
        (_forge_on(0, MsgType.MOVE, 3, b"cheat", state_hash=bytes(32)), 1, "desync", 1),
        (_forge_on(1, MsgType.MOVE, 2, b"cheat", action=CHOOSE[0].code), 0, "illegal_move", 0),
        (
            _forge_on(
                1,
                MsgType.MOVE,
                1,
                b"cheat",
                type=MsgType.RESULT,
                points0=1,
                points1=1,
                winner=None,
                state_hash=bytes(32),
            ),
            0,
            "unexpected_message",
            0,
        ),
        (_forge_on(0, MsgType.RESULT, 1, b"cheat", points0=49), 1, "bad_result", 1),  # the aborter wins (§6.1)
    ],
    ids=["commitment_mismatch", "desync", "illegal_move", "unexpected_message", "bad_result"],
)
def test_a_modified_client_is_caught_and_forfeits(tamper: object, detector: int, code: str, winner: object) -> None:
    r = run_match(Settings(6), ("random", "random"), b"cheat", tamper=tamper)  # type: ignore[arg-type]
    o = r.sessions[detector].ended
    assert o is not None and o.outcome.code == code, o
    assert o.outcome.status == "forfeit" and o.outcome.by == detector and o.outcome.loser == 1 - detector
    assert o.outcome.winner == winner
    for seat in (0, 1):
        rep = audit(r.transcripts[seat])
        assert rep.status == "forfeit" and rep.valid, rep.errors
        assert rep.ending is not None and rep.ending["code"] == code and rep.ending["evidence_verified"] is True
        assert rep.result["winner"] == winner
        end = r.sessions[seat].ended
        assert end is not None and end.outcome.status == "forfeit" and end.outcome.winner == winner


@pytest.mark.parametrize(
    "tamper",
    [
        _forge_on(1, MsgType.MOVE, 1, b"cheat", seq=99),  # ahead of the line: kept, never filled, repaired
        _forge_on(1, MsgType.MOVE, 1, b"cheat", seat=0),  # a move signed for the wrong seat: bad signature
        _forge_on(0, MsgType.COMMIT, 1, b"cheat", match=bytes(32)),  # another session's commit
        _forge_on(1, MsgType.HELLO, 1, b"cheat", nonce=bytes(32), prev=bytes(32)),  # another session's hello
        _replay_after(0, MsgType.HELLO, b"cheat"),  # the creator's hello of another session, after the real one
        _replay_after(0, MsgType.COMMIT, b"cheat"),  # the creator's commit of another session
    ],
    ids=[
        "sequence_gap",
        "impersonation",
        "commit_of_another_session",
        "hello_of_another_session",
        "creator_hello_replayed",
        "creator_commit_replayed",
    ],
)
def test_what_the_relay_could_have_done_is_dropped_and_repaired(tamper: object) -> None:
    clean = run_match(Settings(6), ("random", "random"), b"cheat")
    r = run_match(Settings(6), ("random", "random"), b"cheat", tamper=tamper)  # type: ignore[arg-type]
    assert not r.stalled
    assert r.transcripts == clean.transcripts
    assert any(isinstance(e, FrameDropped) for seat in (0, 1) for e in r.events[seat]) or any(
        s.referee.next_seq for s in r.sessions
    )
    assert {rep.status for rep in r.audits()} == {"complete"}


def test_an_illegal_local_action_is_refused_not_sent() -> None:
    pair = make_pair(Settings(6), (None, None), seed=b"local")
    pair.run(clock=False)
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


@pytest.mark.parametrize("seed", range(40))
def test_resume_after_lost_frames_resends_unacknowledged(seed: int) -> None:
    """The connection drops: the frame in flight and everything after it is lost, until both sides
    reconnect. Reconnecting alone (no clock, so no periodic RESEND) must repair it, every time."""
    rng = random.Random(seed)
    down = [False]
    lost = [0]
    count = [0]
    drop_at = [rng.randrange(2, 12)]

    def lossy(seat: int, i: int, frame: bytes) -> list[bytes]:
        count[0] += 1
        if count[0] == drop_at[0]:
            down[0] = True  # the connection drops here
        if down[0]:
            lost[0] += 1
            return []
        return [frame]

    pair = make_pair(Settings(6), seed=b"lossy %d" % seed, tamper=lossy)
    drops = 0
    for _ in range(500):
        if not pair.run(clock=False):
            break
        assert down[0]  # it stalls only when frames were lost
        drops += 1
        down[0] = False
        drop_at[0] = count[0] + rng.randrange(2, 40)
        for seat in (0, 1):  # reconnect: each side sends again what the other lacks, and a RESEND
            s, other = pair.sessions[seat], pair.sessions[1 - seat]
            held = {m.frame for m in other.referee.msgs}
            lacking = [m.frame for m in s.referee.msgs if m.seat == seat and m.frame not in held]
            pair.note(seat, s.reconnected())
            out = s.frames_to_send()
            assert all(f in out for f in lacking)  # the unacknowledged, without being asked
            if not s.is_finished:  # a finished side has nothing to ask for
                assert parse_resend(out[0]) == (s.referee.sid or b"", s.referee.next_seq)
            for f in out:
                pair.deliver(seat, f)
    assert drops >= 1
    assert lost[0] > 0
    for seat in (0, 1):
        o = pair.sessions[seat].ended
        assert o is not None and o.outcome.status == "complete"
    assert bytes(pair.files[0]) == bytes(pair.files[1])
    assert bytes(pair.files[0]) == run_match(Settings(6), seed=b"lossy %d" % seed).transcripts[0]
    assert audit(bytes(pair.files[0])).status == "complete"


@pytest.mark.parametrize("seed", range(12))
def test_a_lost_tail_is_fetched_from_the_opponent_not_decided_again(seed: int) -> None:
    """A restored backup: the file lost its last records, own moves the opponent already has among
    them. The resumed session must fetch them (RESEND) before deciding: a new decision at a taken
    sequence number would be equivocation, an honest player's forfeit."""
    rng = random.Random(seed)
    pair = make_pair(Settings(6), ("random", "random"), seed=b"tail %d" % seed)
    for _ in range(rng.randrange(40, 120)):
        pair.step()
    while any(pair.queues):
        pair.step()
    crash = rng.randrange(2)
    frames = parse_transcript(bytes(pair.files[crash])).frames
    keep = len(frames) - rng.randrange(3, 9)
    own_lost = [f for f in frames[keep:] if parse(f).seat == crash]
    assert own_lost or keep < 5 or True
    kept = frames[:keep]
    pair.files[crash][:] = encode_transcript(kept)
    s = Session.from_transcript(fixed_key(b"tail %d" % seed, crash), kept)
    assert s.resyncing and not s.my_turn
    pair.sessions = (s, pair.sessions[1]) if crash == 0 else (pair.sessions[0], s)
    pair.queues[crash].clear()
    assert not pair.run()
    for seat in (0, 1):
        end = pair.sessions[seat].ended
        assert end is not None and end.outcome.status == "complete", end
    assert bytes(pair.files[0]) == bytes(pair.files[1])
    assert frames == parse_transcript(bytes(pair.files[crash])).frames[: len(frames)]  # the same messages again


def test_an_honest_session_never_sends_an_abort_that_would_not_prove() -> None:
    pair = make_pair(Settings(6), ("random", "random"), seed=b"net")
    for _ in range(30):
        pair.step()
    pair.flush(0)
    s = pair.sessions[0]
    own = s.referee.last_of(0)
    assert own is not None
    events: list[object] = []
    s._abort(events, "desync", "its own message", own.frame)  # type: ignore[arg-type]
    assert s.frames_to_send() == [] and s.records() == [] and not s.is_finished
    assert [type(e) for e in events] == [FrameDropped]


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


def test_one_key_playing_both_seats_resumes_the_seat_it_is_told() -> None:
    """One player plays itself (one key, both seats: trying it out on one machine). Its seat 1 crashes
    mid-match; resumed as seat 1 it finishes the same match. Without a seat the file is refused, never
    resumed as seat 0 (which would wait for ever for moves only it could make)."""
    key = fixed_key(b"self", 0)
    a = Session.create(key, "TEST-ROOM", Settings(6), b"\x01" * 32, move_time_s=0)
    b = Session.join(key, "TEST-ROOM", b"\x02" * 32)
    bots = (make_bot("greedy", random.Random(1)), make_bot("random", random.Random(2)))
    pair = Pair((a, b), bots)
    pair.note(0, a.start())
    pair.note(1, b.start())
    for _ in range(60):
        pair.step()
    pair.queues[1].clear()
    frames = parse_transcript(bytes(pair.files[1])).frames
    with pytest.raises(ValueError, match="both seats"):
        Session.from_transcript(key, frames)
    s = Session.from_transcript(key, frames, seat=1)
    assert s.seat == 1
    pair.sessions = (pair.sessions[0], s)
    pair.reconnect()
    assert not pair.run()
    assert bytes(pair.files[0]) == bytes(pair.files[1])
    assert audit(bytes(pair.files[1])).status == "complete"


@pytest.mark.parametrize("where", ["own", "opponent", "dropped", "swapped", "foreign"])
def test_from_transcript_verifies_every_record_and_refuses_damage_in_one_line(where: str) -> None:
    r = run_match(Settings(6), seed=b"damage")
    frames = parse_transcript(r.transcripts[0]).frames[:30]
    i = next(k for k, f in enumerate(frames[5:], 5) if (parse(f).seat == 0) == (where != "opponent"))
    if where in ("own", "opponent"):
        frames[i] = frames[i][:-1] + bytes([frames[i][-1] ^ 1])  # its signature
    elif where == "dropped":
        del frames[i]
    elif where == "swapped":
        frames[i], frames[i + 1] = frames[i + 1], frames[i]
    else:
        frames.insert(i, parse_transcript(run_match(Settings(6), seed=b"elsewhere").transcripts[0]).frames[i])
    with pytest.raises(TranscriptDamaged) as e:
        Session.from_transcript(fixed_key(b"damage", 0), frames)
    assert e.value.record == i and "\n" not in str(e.value) and str(e.value).startswith(f"record {i} ")
    expected = {"own": "bad_signature", "opponent": "bad_signature", "dropped": "sequence_gap",
                "swapped": "sequence_gap", "foreign": "bad_signature"}  # fmt: skip
    assert e.value.code == expected[where]
    assert Session.from_transcript(fixed_key(b"damage", 0), frames[:i]).resyncing  # the sound prefix resumes


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "malformed_frame"),
        (b"\xc1", "malformed_frame"),
        (b"\x93\x01\x02\x03", "malformed_message"),
        (b"\x91\x02", "malformed_message"),
        (bytes(70_000), "oversized_frame"),
        (encode([1, 1, b"", 0, bytes(32), 0, 1]), "unsupported_version"),
        (encode([PROTOCOL_VERSION, 99, b"", 0, bytes(32), 0, 1]), "unknown_type"),
        (encode([PROTOCOL_VERSION, 0, b"", 0]), "unknown_type"),  # a RESEND is never a message of the line
        (b"\x81\xa1a\x01", "malformed_message"),
        (b"\x82\xa1a\x01\xa1a\x02", "duplicate_key"),
        (b"\xcd\x00\x01", "non_canonical"),
        (b"\x01\x02", "trailing_bytes"),
        (b"\xca\x00\x00\x00\x00", "float_not_allowed"),
        (b"\xd4\x01\x00", "ext_not_allowed"),
        (b"\x91" * 20 + b"\x01", "too_deep"),
        (b"\x81\xc0\x01", "bad_map_key"),
    ],
)
def test_referee_rejects_garbage_with_a_code(data: bytes, code: str) -> None:
    from koikoi.protocol.referee import Referee

    with pytest.raises(ProtocolError) as e:
        Referee().accept(data)
    assert e.value.code == code


def test_an_abort_whose_evidence_does_not_show_the_flaw_is_its_signers_resignation() -> None:
    from koikoi.protocol.messages import build

    pair = make_pair(Settings(6), ("random", "random"), seed=b"liar")
    for _ in range(30):
        pair.step()
    while any(pair.queues):  # everything delivered: both sides hold the same line
        pair.step()
    b = pair.sessions[1]
    r = b.referee
    honest = r.last_of(0)
    assert honest is not None
    lie = build(
        fixed_key(b"liar", 1),
        MsgType.ABORT,
        r.sid or b"",
        r.next_seq,
        r.head_hash,
        1,
        ["desync", "a made-up desync", honest.frame, b""],
    )
    events = pair.sessions[0].receive(lie)
    end = _ended(events).outcome
    assert (end.status, end.code, end.by, end.loser, end.winner) == ("resigned", "unproven_abort", 1, 1, 0)
    assert end.evidence_verified is False and "is a message of the line" in end.message
    pair.flush(0)
    rep = audit(bytes(pair.files[0]))
    assert rep.valid and rep.status == "resigned" and rep.errors == []
    assert rep.ending is not None and rep.ending["code"] == "unproven_abort" and rep.ending["loser"] == 1
    assert rep.result["winner"] == 0
