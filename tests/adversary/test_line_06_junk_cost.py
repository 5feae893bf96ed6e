"""Issue 18, finding 6: a junk frame costs the honest side a bounded amount of work, however late the match.

Today a signed message at a sequence number the line already holds makes ``Session._take`` rebuild the whole
line (``state_before``, the sealed crypto included) before the cheap PREV check: ≈ 0.27 s of honest CPU per
junk frame at round 12, and a cheater flooding such frames wins on time.

Measured by counting, not by the clock: the scalar multiplications (the sealed crypto, ≈ 0.1 ms each) and
the line messages a referee applies while the honest session takes each junk frame. The frames: the
cheater's own MOVE re-signed at sequence numbers the honest seat's messages hold, with a PREV that is no
message's hash (the PREV check alone refuses them). The moment: by construction, round 12 of a 12-round
sealed match (the first of a few seeds whose match reaches round 12 — greedy matches nearly always do).

Required: at most a few milliseconds each — here at most ``MAX_MULTS`` multiplications and ``MAX_APPLIED``
applied messages per junk frame, whatever the round (a full rebuild at round 12 is thousands of each).
"""

from __future__ import annotations

import line_cheats
import pytest

from koikoi.engine import Settings
from koikoi.testing import Pair, make_pair

HONEST, CHEATER = 0, 1
JUNK_FRAMES = 4
MAX_MULTS = 30  # ≈ 3 ms of crypto
MAX_APPLIED = 2


def _at_round_12() -> tuple[Pair, bytes]:
    for i in range(4):
        seed = b"issue 18 finding 6/%d" % i
        pair = make_pair(Settings(12), ("greedy", "greedy"), seed=seed, deck="sealed")
        while line_cheats.round_of(pair.sessions[HONEST]) < 12 and pair.step():
            pass
        if line_cheats.round_of(pair.sessions[HONEST]) == 12 and pair.sessions[HONEST].ended is None:
            return pair, seed
    raise AssertionError("no seed's match reached round 12")


def test_junk_frames_at_round_12_cost_a_bounded_amount_of_work(monkeypatch: pytest.MonkeyPatch) -> None:
    pair, seed = _at_round_12()
    honest = pair.sessions[HONEST]
    frames = line_cheats.junk(pair, CHEATER, seed, JUNK_FRAMES)
    per_frame: list[tuple[int, int]] = []
    with line_cheats.expensive_calls(monkeypatch) as counts:
        for frame in frames:
            mults, applied = counts.mults, counts.applied
            honest.receive(frame)
            per_frame.append((counts.mults - mults, counts.applied - applied))
    assert honest.ended is None, f"a junk frame ended the honest seat's match: {honest.ended}"
    worst_mults = max(m for m, _ in per_frame)
    worst_applied = max(a for _, a in per_frame)
    assert worst_mults <= MAX_MULTS and worst_applied <= MAX_APPLIED, (
        f"one junk frame at round 12 cost the honest seat up to {worst_mults} scalar multiplications and "
        f"{worst_applied} re-applied line messages (bounds {MAX_MULTS} and {MAX_APPLIED}): it rebuilds the line "
        f"for a frame the PREV check refuses; per frame (mults, applied): {per_frame}"
    )
