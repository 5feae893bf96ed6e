"""Issue 18, finding 2: an oversized field (a 40 KB DISCLOSE secret or MOVE key) must not win on time.

The fault is real, but today its proof (the accused's messages of the deal attempt) is larger than an
ABORT's evidence may be (30 KiB): the honest session cannot send the ABORT its line waits for, and the
cheater claims its silence with the relay's certificate: the honest side loses on time.

Required: whatever the cheater sent, the honest seat does not lose, and every verdict names the cheater as
the loser.
"""

from __future__ import annotations

import line_cheats
import pytest
from line_judge import fail_text, problems_if_cheater_wins

from koikoi.engine import Settings

BIG = bytes(range(256)) * 160  # 40,960 bytes


def test_a_40_kb_disclosed_secret_is_the_cheaters_loss() -> None:
    # the first seat to disclose a round (the next round's dealer) cheats: the other verifies and is awaited
    def install(mp: pytest.MonkeyPatch) -> line_cheats.Fired:
        change = line_cheats.disclose_secrets(lambda secrets: [BIG, *secrets[1:]])
        return line_cheats.cheat(mp, change, when=lambda seen: not seen.opponent_disclosed)

    pair, fired, _ = line_cheats.play(install, Settings(12), b"issue 18 finding 2 disclose")
    assert fired.cheater is not None
    problems = problems_if_cheater_wins(pair, 1 - fired.cheater, "40 KB disclosed secret")
    assert not problems, fail_text(problems)


def test_a_40_kb_key_in_a_play_is_the_cheaters_loss() -> None:
    # the cheater never accuses: its session, which does not know what it changed, would accuse the honest
    # stopper and so prove its own fault
    cheater = 1

    def install(mp: pytest.MonkeyPatch) -> line_cheats.Fired:
        line_cheats.never_abort(mp, cheater)
        return line_cheats.cheat(mp, line_cheats.play_hand_key(BIG), seats=(cheater,))

    pair, fired, _ = line_cheats.play(install, Settings(12), b"issue 18 finding 2 move")
    assert fired.cheater == cheater
    problems = problems_if_cheater_wins(pair, 1 - cheater, "40 KB key in a play")
    assert not problems, fail_text(problems)
