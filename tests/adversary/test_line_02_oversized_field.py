"""Issue 18, finding 2: an oversized field (a 40 KB DISCLOSE secret or MOVE key) must not win on time.

The fault is real, but today its proof (the accused's messages of the deal attempt) is larger than an
ABORT's evidence may be (30 KiB): the honest session cannot send the ABORT its line waits for, and the
cheater claims its silence with the relay's certificate: the honest side loses on time. The cheater here
never accuses (its own session, which does not know what it changed, would accuse the honest stopper and
so prove its own fault) and claims the honest seat's silence once the match stalls.

Required: whatever the cheater sent, the honest seat does not lose, and every verdict names the cheater as
the loser.
"""

from __future__ import annotations

import line_cheats
import pytest
from line_judge import fail_text, problems_if_cheater_wins

from koikoi.engine import Settings
from koikoi.protocol.harness import Pair, make_pair

SEED = b"issue 18 finding 2"
BIG = bytes(range(256)) * 160  # 40,960 bytes


def _play_out(pair: Pair, fired: line_cheats.Fired) -> None:
    """Run the match; when it stalls (the honest seat cannot send what its line awaits), the cheater claims
    the honest seat's silence."""
    if pair.run():
        assert fired.cheater is not None, "the match stalled before anyone cheated"
        line_cheats.claim_timeout(pair, fired.cheater, SEED)
        pair.run()


def test_a_40_kb_disclosed_secret_is_the_cheaters_loss(monkeypatch: pytest.MonkeyPatch) -> None:
    # the first seat to disclose a round (the next round's dealer) cheats: the other then verifies and is awaited
    fired = line_cheats.cheat(
        monkeypatch,
        line_cheats.disclose_secrets(lambda secrets: [BIG, *secrets[1:]]),
        when=lambda seen: not seen.opponent_disclosed,
    )
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed=SEED, deck="sealed")
    _play_out(pair, fired)
    assert fired.cheater is not None, "nobody disclosed first"
    problems = problems_if_cheater_wins(pair, 1 - fired.cheater, "40 KB disclosed secret")
    assert not problems, fail_text(problems)


def test_a_40_kb_key_in_a_play_is_the_cheaters_loss(monkeypatch: pytest.MonkeyPatch) -> None:
    cheater = 1
    fired = line_cheats.cheat(monkeypatch, line_cheats.play_hand_key(BIG), seats=(cheater,))
    line_cheats.never_abort(monkeypatch, cheater)
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed=SEED, deck="sealed")
    _play_out(pair, fired)
    assert fired.cheater == cheater, "the cheater never played a card"
    problems = problems_if_cheater_wins(pair, 1 - cheater, "40 KB key in a play")
    assert not problems, fail_text(problems)
