"""Attack: the awaited cheater sends requests to send again that the honest side answers with old frames
only (a RESEND of another match id's shape: ``RESEND(b'', 0)``, answered with the HELLOs; a RESEND from 0,
answered with the whole line). The witness must still see the request answered (the honest side's answer
ends with its last message), so the cheater loses on time within 3 move times, not never."""

from __future__ import annotations

import pytest
from in_memory import run_while_sending, step_until

from koikoi.engine.match import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import resend_frame
from koikoi.protocol.session import MatchDecided
from koikoi.testing import make_pair

pytestmark = pytest.mark.net  # (in memory, but part of the adversary suite)

MOVE = 10


@pytest.mark.parametrize("kind", ["no_match_id_from_0", "from_0", "from_1"])
def test_an_awaited_cheater_asking_for_old_frames_still_loses_on_time(kind: str) -> None:
    pair = make_pair(Settings(6, True), ("greedy", "greedy"), b"old-asks-" + kind.encode(), move_time_s=MOVE)
    b = pair.sessions[1]
    step_until(pair, lambda: b.referee.next_seq >= 10 and b.my_turn and not any(pair.queues))
    pair.silent[1] = True
    w = pair.witness
    assert w is not None and b.referee.sid is not None
    frame = resend_frame(b"" if kind == "no_match_id_from_0" else b.referee.sid, 1 if kind == "from_1" else 0)
    awaited = pair.now
    run_while_sending(pair, 0, lambda: pair.inject(1, frame, ctl=True), 2, 20 * MOVE)
    e = pair.sessions[0].ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == 0, (
        f"{(pair.now - awaited) / MOVE:.0f} move times on, the cheater is not certified silent "
        f"(silent_ms {w.silent_ms(1, pair.now)}): {e}"
    )
    assert pair.now - awaited <= 3 * MOVE + 2 * 5 + 2, pair.now - awaited
    rep = audit(bytes(pair.files[0]))
    assert rep.valid and rep.status == "on_time" and rep.result["winner"] == 0
