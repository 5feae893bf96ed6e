"""Attack: the awaited cheater asks the honest side for old parts of the line (RESEND from 0, 16, 32, ...,
flagged, as an honest client asks) so that the honest side's answers fill the relay's list of its recent
frames with old messages. A certificate lists only the claimer's last ``RECENT_HASHES`` distinct frames, and
a claim fits only when each of the claimer's messages after the silent seat's last one is among them
(spec/protocol.md §7.3, step 6b): the honest side sends those messages again just before it asks for the
certificate, so the flood cannot keep it from winning on time."""

from __future__ import annotations

import itertools

import pytest
from in_memory import run_while_sending, step_until

from koikoi.engine.match import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import resend_frame
from koikoi.protocol.session import MatchDecided
from koikoi.protocol.witness import RECENT_HASHES
from koikoi.testing import make_pair

pytestmark = pytest.mark.net  # (in memory, but part of the adversary suite)

MOVE = 10
HONEST, CHEAT = 0, 1


def test_an_awaited_cheater_flooding_the_honest_sides_recent_frames_still_loses_on_time() -> None:
    # resend_after 2.2 s: its periodic requests (which send its unanswered messages too) do not fall on the
    # ticks where it asks for a certificate, so only the re-send just before asking can beat the flood
    pair = make_pair(Settings(12, True), ("greedy", "greedy"), b"recent-flood", move_time_s=MOVE, resend_after=2.2)
    h, c = pair.sessions[HONEST], pair.sessions[CHEAT]

    # a point where the cheater is awaited after two or more messages of the honest side in a row
    def awaited_after_a_long_turn() -> bool:
        msgs = h.referee.msgs
        return (
            len(msgs) >= 2 * RECENT_HASHES
            and c.my_turn
            and not any(pair.queues)
            and msgs[-1].seat == msgs[-2].seat == HONEST
        )

    step_until(pair, awaited_after_a_long_turn)
    pair.silent[CHEAT] = True
    sid = c.referee.sid
    w = pair.witness
    assert sid is not None and w is not None
    tail = [m.hash for m in h.referee.msgs[-2:]]
    starts = itertools.cycle(range(0, len(h.referee.msgs) - 16, 16))
    flooded = []

    def ask_for_old_frames() -> None:
        flooded.append(not all(x in w.clocks[HONEST].recent for x in tail))  # after the answers so far
        for _ in range(5):  # requests of 16 old messages each: 4 answered now, the next at the honest tick
            pair.inject(CHEAT, resend_frame(sid, next(starts)), ctl=True)

    awaited = pair.now
    run_while_sending(pair, HONEST, ask_for_old_frames, 0.5, 20 * MOVE)
    assert any(flooded), "the attack never pushed the honest side's last messages out of the relay's list"
    e = h.ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"{(pair.now - awaited) / MOVE:.0f} move times on, the cheater is not certified silent: {e}"
    )
    rep = audit(bytes(pair.files[HONEST]))
    assert rep.valid and rep.status == "on_time" and rep.result["winner"] == HONEST
