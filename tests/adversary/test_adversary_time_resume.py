"""Time after a resume and requests to send again (issue 10, adversary holes 1 and 4), in memory: the
protocol's sessions through :mod:`koikoi.testing`, whose witness keeps time exactly as
``koikoi relay`` does (the same code: ``koikoi.protocol.witness.witness_frame`` and ``silent_ms``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from koikoi.engine.match import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import parse_resend, resend_frame
from koikoi.protocol.session import MatchDecided, Session
from koikoi.protocol.transcript import parse_transcript
from koikoi.testing import Pair, fixed_key, make_pair

pytestmark = pytest.mark.net  # (in memory, but part of the adversary suite)

MOVE = 10


def _pair(seed: bytes) -> Pair:
    return make_pair(Settings(6, True), ("greedy", "greedy"), seed, move_time_s=MOVE)


def step_until(pair: Pair, done: Callable[[], bool], limit: int = 100_000) -> None:
    for _ in range(limit):
        if done():
            return
        if not pair.step():
            raise AssertionError("the match stopped before the point the test wanted")
    raise AssertionError("never reached")


def resumed_in_own_turn(seed: bytes) -> Pair:
    """Seat 0 restarts (``koikoi resume``) during its own turn, on time, and asks the opponent to send again."""
    pair = _pair(seed)
    a = pair.sessions[0]
    step_until(pair, lambda: a.referee.next_seq >= 12 and a.my_turn and not any(pair.queues))
    a2 = Session.from_transcript(fixed_key(seed, 0), parse_transcript(bytes(pair.files[0])).frames)
    pair.sessions = (a2, pair.sessions[1])
    return pair


@pytest.mark.parametrize("who", ["the opponent", "the relay"])
@pytest.mark.parametrize("seed", [b"resync-1", b"resync-2"])
def test_a_resumed_player_whose_request_goes_unanswered_never_loses_on_time(seed: bytes, who: str) -> None:
    """The resumed seat 0 may decide nothing until the opponent answers its RESEND (its file may have lost
    its tail). The opponent's modified client never answers (or the relay never forwards the request): the
    witness sees seat 0's request go unanswered, so seat 0 is waiting, not silent, for as long as that lasts
    (here 20 move times): no certificate fits, nobody wins, the match stays resumable."""
    pair = resumed_in_own_turn(seed)
    b = pair.sessions[1]
    if who == "the opponent":
        b._answer_resend = lambda match, from_seq: None  # type: ignore[method-assign]
        b.unacknowledged = lambda: []  # type: ignore[method-assign]  # nor sends its own messages again
    else:
        pair.tamper = lambda seat, index, frame: [] if seat == 0 and parse_resend(frame) is not None else [frame]
    pair.note(0, pair.sessions[0].reconnected())
    pair.flush(0)
    stalled = pair.run(patience=20 * MOVE)
    if who == "the relay":
        # the opponent, waiting for seat 0, sends its own unacknowledged messages again: they reach seat 0,
        # which has then heard from it and plays on (the request itself is never forwarded)
        assert not stalled
        for seat in (0, 1):
            e = pair.sessions[seat].ended
            assert e is not None and e.outcome.status == "complete", (seat, e)
        return
    assert stalled  # nothing decided
    for seat in (0, 1):
        assert pair.sessions[seat].ended is None, pair.sessions[seat].ended
        assert audit(bytes(pair.files[seat])).status == "unfinished"
    assert pair.witness is not None and pair.witness.silent_ms(0, pair.now) == 0


@pytest.mark.parametrize("seed", [b"resync-1", b"resync-2"])
def test_a_resumed_player_whose_request_is_answered_plays_on(seed: bytes) -> None:
    pair = resumed_in_own_turn(seed)
    pair.note(0, pair.sessions[0].reconnected())
    pair.flush(0)
    assert not pair.run()
    for seat in (0, 1):
        e = pair.sessions[seat].ended
        assert e is not None and e.outcome.status == "complete", (seat, e)


def test_a_cheater_that_asks_again_for_ever_loses_after_three_move_times() -> None:
    """The cheater (seat 1) is awaited and never moves; it sends a request to send again every 2 s (which the
    honest side answers). Its requests move its silence on, but at most twice the move time: the honest
    side wins on time, 3 move times after the cheater was awaited, not before."""
    seed = b"ask-for-ever"
    pair = _pair(seed)
    b = pair.sessions[1]
    step_until(pair, lambda: b.referee.next_seq >= 10 and b.my_turn and not any(pair.queues))
    pair.silent[1] = True
    w = pair.witness
    assert w is not None and b.referee.sid is not None
    awaited, ask, t_end = pair.now, pair.now, pair.now + 40 * MOVE
    while pair.now < t_end and not pair.sessions[0].is_finished:
        if pair.now >= ask:
            frame = resend_frame(b.referee.sid, b.referee.next_seq)
            w.saw(1, frame, pair.now)
            pair.queues[0].append(frame)
            ask = pair.now + 2
        if pair.step():
            continue
        pair.now = min(ask, pair.now + 1)
        pair.tick()
    e = pair.sessions[0].ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == 0, e
    assert 3 * MOVE <= pair.now - awaited <= 3 * MOVE + 2 * 5 + 2, pair.now - awaited
    rep = audit(bytes(pair.files[0]))
    assert rep.valid and rep.status == "on_time" and rep.result["winner"] == 0
