"""Issue 18, finding 8: an extra DISCLOSE secret is the cheater's proven fault, not the honest seat's loss.

The cheater discloses one round secret more than the round has deal attempts. The round's verification
names it ``bad_shape`` (one secret per deal), but today no ABORT citing it is ever accepted (``bad_shape`` is
checked as a one-message proof, and a sealed proof is a list of messages): the honest session cannot send
the ABORT its line awaits, and the cheater wins on time.

By construction: the cheater is the first seat to disclose a round (the next round's dealer), so the honest
seat verifies the round and is awaited.

Required: the honest seat does not lose; every verdict names the cheater as the loser.
"""

from __future__ import annotations

import line_cheats
import pytest
from line_judge import fail_text, problems_if_cheater_wins

from koikoi.engine import Settings

EXTRA = bytes([0x5A]) * 32


def test_an_extra_disclosed_secret_is_the_cheaters_loss() -> None:
    def install(mp: pytest.MonkeyPatch) -> line_cheats.Fired:
        change = line_cheats.disclose_secrets(lambda secrets: [*secrets, EXTRA])
        return line_cheats.cheat(mp, change, when=lambda seen: not seen.opponent_disclosed)

    pair, fired, _ = line_cheats.play(install, Settings(12), b"issue 18 finding 8")
    assert fired.cheater is not None
    problems = problems_if_cheater_wins(pair, 1 - fired.cheater, "extra disclosed secret")
    assert not problems, fail_text(problems)
