"""Issue 18, finding 3: from round 2 on, K's proof of the dealer's fault must prove it.

The seat that discloses a round second verifies it while it makes its DISCLOSE, before its referee takes
that message, so today its referee never notes where the next round begins: its evidence for a fault in a
later round starts a round early. Its own referee agrees with itself; the opponent and the auditor do not,
and its proof audits as its resignation (``unproven_abort``). Any dealer fault from round 2 on wins for the
dealer.

By construction: the cheater is round 2's dealer, so the honest seat is round 2's K, which disclosed round
1 second (the next round's K discloses last). The fault is one the rules prove in round 1 (the control
case): the dealer's first draw key of the round is a valid scalar but not its key (``wrong_public_key``:
the honest mover's draw opens no card, it stops, the disclosures name the fault).

Required: the honest seat does not lose; every verdict names the dealer as the loser.
"""

from __future__ import annotations

import line_cheats
import pytest
from line_judge import fail_text, problems_if_cheater_wins

from koikoi.engine import Settings

WRONG_KEY = (1).to_bytes(32, "little")  # a canonical non-zero scalar: valid, but no seat's key


@pytest.mark.parametrize("round_number", [pytest.param(1, id="round1-control"), pytest.param(2, id="round2")])
def test_the_dealers_wrong_draw_key_is_proven_in_any_round(round_number: int) -> None:
    def install(mp: pytest.MonkeyPatch) -> line_cheats.Fired:
        return line_cheats.cheat(
            mp,
            line_cheats.draw_key(WRONG_KEY),
            when=lambda seen: seen.round == round_number and seen.seat == seen.dealer,
        )

    pair, fired, _ = line_cheats.play(install, Settings(12), b"issue 18 finding 3")
    assert fired.cheater is not None
    problems = problems_if_cheater_wins(pair, 1 - fired.cheater, f"wrong draw key as round {round_number}'s dealer")
    assert not problems, fail_text(problems)
