"""Determinism across processes: the same seed and the same choices give the same game on every machine.

Within one process, two replays of a seeded match agree even when something in the rules depends on
``hash()`` of a string, because Python salts string hashes once per process (``PYTHONHASHSEED``). Two
peers of a network match are two processes, so the real check replays the same match in subprocesses
with different hash seeds and compares every state hash.

The choices are made by *position* in ``legal_actions()`` (and by the built-in bots, which also pick from
that list), so the order of the legal actions is part of what must agree, not only the rules' effects.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# Plays whole matches and prints, per match, every state hash and every action taken.
_SCRIPT = """
import json, random, sys
from koikoi.engine import Match, SeededDeal, Settings
from koikoi.engine.bots import make_bot

out = []
for g in range(4):
    m = Match(Settings(6 if g % 2 == 0 else 12, g < 2), SeededDeal(bytes([g, 7]) * 16), g % 2)
    rng = random.Random(1000 + g)
    bots = [make_bot("greedy", random.Random(g)), None] if g == 3 else [None, None]
    hashes, actions = [m.state_hash().hex()], []
    while not m.is_over:
        legal = m.legal_actions()
        bot = bots[m.to_move]
        action = bot.choose(m.view(m.to_move)) if bot is not None else legal[rng.randrange(len(legal))]
        actions.append(action.text)
        m.apply(action)
        hashes.append(m.state_hash().hex())
    out.append({"hashes": hashes, "actions": actions, "points": list(m.points)})
json.dump(out, sys.stdout)
"""


def _replay(hash_seed: str) -> list[dict[str, object]]:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    games = json.loads(done.stdout)
    assert isinstance(games, list)
    return games


@pytest.mark.net
def test_the_same_match_replays_identically_under_other_hash_seeds() -> None:
    first = _replay("1")
    assert len(first) == 4
    for game in first:
        assert isinstance(game["actions"], list) and len(game["actions"]) >= 16  # whole matches, not a few moves
    for seed in ("2", "3", "random"):
        other = _replay(seed)
        for g, (a, b) in enumerate(zip(first, other, strict=True)):
            assert a["actions"] == b["actions"], f"game {g}: the actions chosen differ under PYTHONHASHSEED={seed}"
            assert a["hashes"] == b["hashes"], f"game {g}: the state hashes differ under PYTHONHASHSEED={seed}"
            assert a["points"] == b["points"]
