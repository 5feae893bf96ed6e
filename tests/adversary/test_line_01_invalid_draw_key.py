"""Issue 18, finding 1: an invalid DRAW key (zero, ≥ L, or 31 bytes) is the cheater's proven fault.

The cheater (seat 1) answers the honest seat's first play with a draw key that is no scalar. The honest
mover cannot open its draw and stops. Today the key never enters the round's published keys, so the round's
verification finds nothing against its signer and names the honest stopper (``unfounded_stop``): the
cheater wins. Required: the honest seat does not lose; the honest session, the audit of its file and (where
valid) of the cheater's file name the cheater as the loser.
"""

from __future__ import annotations

import line_cheats
import pytest
from line_judge import fail_text, problems_if_cheater_wins

from koikoi.engine import Settings

CHEATER = 1

KEYS = {
    "zero": bytes(32),
    "order": line_cheats.GROUP_ORDER.to_bytes(32, "little"),  # L itself: not below L
    "31 bytes": bytes([7]) * 31,
}


@pytest.mark.parametrize("name", list(KEYS))
def test_an_invalid_draw_key_is_the_cheaters_fault(name: str) -> None:
    def install(mp: pytest.MonkeyPatch) -> line_cheats.Fired:
        return line_cheats.cheat(mp, line_cheats.draw_key(KEYS[name]), seats=(CHEATER,))

    pair, fired, _ = line_cheats.play(install, Settings(12), b"issue 18 finding 1")
    assert fired.cheater == CHEATER
    problems = problems_if_cheater_wins(pair, 1 - CHEATER, f"invalid draw key ({name})")
    assert not problems, fail_text(problems)
