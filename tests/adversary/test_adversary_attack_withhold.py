"""Attack: the frame the honest side awaits is lost on its way (the network, a crash before it was written);
the cheater's modified client answers every request to send again with a *repeat of an older* message
instead of the lost one. The witness counts any witnessed frame, a repeat too, as the answer to the honest
seat's open request, so the honest seat's requests extend its silence by at most 2 move times: does it then
lose on time for a frame it never got?"""

from __future__ import annotations

import pytest
from in_memory import step_until

from koikoi.engine.match import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import parse_resend
from koikoi.testing import make_pair

pytestmark = pytest.mark.net  # (in memory, but part of the adversary suite)

MOVE = 10


@pytest.mark.parametrize("seed", [b"withhold-1", b"withhold-2"])
def test_a_lost_frame_answered_with_stale_repeats_is_never_the_honest_sides_loss(seed: bytes) -> None:
    pair = make_pair(Settings(6, True), ("greedy", "greedy"), seed, move_time_s=MOVE)
    b = pair.sessions[1]
    step_until(pair, lambda: b.referee.next_seq >= 10 and b.my_turn and not any(pair.queues))
    prev = b.referee.last_of(1)
    assert prev is not None
    stale = prev.frame
    lost: list[bytes] = []

    def lose_one(seat: int, index: int, frame: bytes) -> list[bytes]:
        """The cheater's next message is lost on its way (the relay witnessed it; then the connection broke)."""
        if seat == 1 and not lost and parse_resend(frame) is None and frame != stale:
            lost.append(frame)
            return []
        return [frame]

    pair.tamper = lose_one
    b._answer_resend = lambda match, from_seq: b._out.append(stale)  # type: ignore[method-assign]
    pair.run(patience=30 * MOVE)
    e = pair.sessions[1].ended
    # the honest seat never loses on time for the frame it never got (the cheater's own client sends its
    # unacknowledged move again while it waits: the match may then be played out, and won by either seat)
    won = e is not None and e.outcome.status == "on_time" and e.outcome.winner == 1
    assert not won, f"the cheater won on time: {e}; seat 0 ended {pair.sessions[0].ended}"
    rep = audit(bytes(pair.files[1]))
    assert not (rep.valid and rep.status == "on_time" and rep.result.get("winner") == 1), rep
