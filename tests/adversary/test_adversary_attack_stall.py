"""Attack: a cheater that is awaited stalls for ever by sending ``ctl`` frames the honest side does not answer
(or a RESEND of a made-up match *without* the flag, which the witness takes as its new frame).

The witness cannot read a ``ctl`` frame: any one counts as a request to send again. A request left
unanswered (no witnessed frame from the other seat) for half the move time makes the asker "waiting, not
silent" (silent_ms == 0). The honest session answers only a well-formed RESEND of this match: one with
another match id, a ctl frame that is not a RESEND, or a repeat flagged ctl, it drops without a word.
"""

from __future__ import annotations

import pytest
from in_memory import run_while_sending, step_until

from koikoi.engine.match import Settings
from koikoi.protocol.messages import resend_frame
from koikoi.protocol.session import MatchDecided
from koikoi.testing import Pair, make_pair

pytestmark = pytest.mark.net  # (in memory, but part of the adversary suite)

MOVE = 10


def _pair(seed: bytes) -> Pair:
    return make_pair(Settings(6, True), ("greedy", "greedy"), seed, move_time_s=MOVE)


def _junk(kind: str, sid: bytes, next_seq: int, own_last: bytes) -> bytes:
    if kind in ("foreign_match_resend", "unflagged_foreign_resend"):
        return resend_frame(bytes(32) if sid != bytes(32) else b"\x01" * 32, next_seq)
    if kind == "garbage":
        return b"\x00junk"
    return own_last  # a repeat of its own last message, flagged ctl


@pytest.mark.parametrize("kind", ["foreign_match_resend", "garbage", "own_repeat", "unflagged_foreign_resend"])
def test_a_cheater_sending_unanswerable_ctl_frames_still_loses_on_time(kind: str) -> None:
    seed = b"stall-" + kind.encode()
    pair = _pair(seed)
    b = pair.sessions[1]
    step_until(pair, lambda: b.referee.next_seq >= 10 and b.my_turn and not any(pair.queues))
    pair.silent[1] = True
    w = pair.witness
    assert w is not None and b.referee.sid is not None
    own = b.referee.last_of(1)
    assert own is not None
    frame = _junk(kind, b.referee.sid, b.referee.next_seq, own.frame)
    awaited = pair.now
    run_while_sending(pair, 0, lambda: pair.inject(1, frame, ctl=kind != "unflagged_foreign_resend"), 2, 20 * MOVE)
    e = pair.sessions[0].ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == 0, (
        f"after {pair.now - awaited:.0f} s ({(pair.now - awaited) / MOVE:.0f} move times) the cheater is still "
        f"not certified silent: silent_ms = {w.silent_ms(1, pair.now)}; ended = {e}"
    )
