"""benchmarks/bots.py's per-round records (round_results) and figures (bot_rounds): cases the first test misses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from koikoi.engine.bots import make_bot
from koikoi.engine.events import KoiKoi, RoundEnded
from koikoi.engine.match import RoundEnd, Settings
from koikoi.engine.selfplay import bot_rng, game_seed, play_match
from koikoi.testing import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bots.py"


def test_calls_of_a_drawn_round_are_the_koikoi_calls_made_in_it() -> None:
    """``calls`` is "the round's koi-koi calls": a drawn round after a koi-koi call has them too (no breakdown)."""
    bots_py = load_script(SCRIPT, "benchmarks_bots")
    base = b"x6True"
    games = list(range(60))
    records = bots_py._play(("greedy", "random", base, games, 6, True))  # as --bot greedy --opponents random
    drawn_with_calls = 0
    for rec in records:
        i = rec["game"]
        seed = game_seed(base, i)
        names = ["greedy", "random"] if i % 2 == 0 else ["random", "greedy"]
        m = play_match(Settings(), [make_bot(names[s], bot_rng(seed, s)) for s in (0, 1)], seed).match
        calls: list[int] = []
        n = 0
        for e in m.log:
            if isinstance(e, KoiKoi):
                n += 1
            elif isinstance(e, RoundEnded):
                calls.append(n)
                n = 0
        assert [r.to_json() for r in m.history] == [
            {k: v for k, v in x.items() if k not in ("score", "calls")} for x in rec["round_results"]
        ]
        for r, x, c in zip(m.history, rec["round_results"], calls, strict=True):
            if r.end is RoundEnd.DRAWN and c:
                drawn_with_calls += 1
            assert x["calls"] == c, (i, r.round, r.end.value)
    assert drawn_with_calls  # these games hold such rounds (game 6, round 3 the first)


@pytest.mark.net
def test_merge_keeps_the_rounds_of_a_game_also_recorded_without_them(tmp_path: Path) -> None:
    """A game in a new file and in an old one (no round_results): the merge must not drop its rounds.

    --merge prints "the same as one run of those games would print but for its wall times"; merging
    the new records with the same games' old records, in either order, gives the new records' bot_rounds.
    """
    new = tmp_path / "new.jsonl"
    run = [sys.executable, str(SCRIPT), "--bot", "greedy", "--opponents", "random", "--workers", "1"]
    run += ["--seed", "m", "--games", "6", "--per-game", str(new)]
    subprocess.run(run, capture_output=True, text=True, timeout=120, check=True)
    old = tmp_path / "old.jsonl"
    lines = []
    for line in new.read_text().splitlines():
        rec = json.loads(line)
        del rec["round_results"]  # as records without rounds are (benchmarks/results/)
        lines.append(json.dumps(rec) + "\n")
    old.write_text("".join(lines))

    def merge(*files: Path) -> dict[str, object]:
        cmd = [sys.executable, str(SCRIPT), "--merge", *map(str, files)]
        out: dict[str, object] = json.loads(
            subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout
        )
        return out

    alone = merge(new)["vs_random"]
    assert isinstance(alone, dict) and alone["bot_rounds"] is not None
    for files in ((new, old), (old, new)):
        both = merge(*files)["vs_random"]
        assert isinstance(both, dict)
        assert both["rounds"] == alone["rounds"]
        assert both["bot_rounds"] == alone["bot_rounds"], files
