"""Issue 18, finding 4: the sums peek of spec/sealed.md §9 must be forfeited, in every round.

The dealer O locks, at four of its own hand positions, the sum of the two step-1 points it sends to two of
K's hand positions (``b_i·(X_j + X_k)``): K's key for that position, in LOCK, leaves ``P_j + P_k``, which
names both cards — K's whole hand before anyone plays. O's own cards there are lost, so its own check of
K's LOCK fails and it stops the round. The disclosures prove ``replaced_card``, O's. Today that proof holds
in round 1 (the control case) but, from round 2 on, K's evidence starts a round early (finding 3) and audits
as K's resignation: the peek wins the match for the dealer.

By construction: the cheater is the dealer of the round named (in round 2 the honest K disclosed round 1
second).

Required: the honest seat does not lose; every verdict names the peeking dealer as the loser.
"""

from __future__ import annotations

import line_cheats
import pytest
from line_judge import fail_text, problems_if_cheater_wins

from koikoi.engine import Settings


@pytest.mark.parametrize("round_number", [pytest.param(1, id="round1-control"), pytest.param(2, id="round2")])
def test_the_dealers_sums_peek_is_forfeited_in_any_round(round_number: int) -> None:
    def install(mp: pytest.MonkeyPatch) -> line_cheats.Fired:
        return line_cheats.cheat(mp, line_cheats.sums_peek(), when=lambda seen: seen.round == round_number)

    pair, fired, _ = line_cheats.play(install, Settings(12), b"issue 18 finding 4")
    assert fired.cheater is not None and fired.seen is not None and fired.seen.seat == fired.seen.dealer
    problems = problems_if_cheater_wins(pair, 1 - fired.cheater, f"sums peek as round {round_number}'s dealer")
    assert not problems, fail_text(problems)
