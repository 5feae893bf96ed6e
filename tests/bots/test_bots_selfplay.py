"""koikoi selfplay's JSON contract and determinism, with the strong bot too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from koikoi.client.cli import main
from koikoi.engine.match import STARTING_POINTS


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["selfplay", *args]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_contract_and_determinism(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--games", "1", "--bots", "strong,random", "--seed", "s", "--json")
    a = _run(capsys, *args)
    assert set(a) == {"games", "wins", "draws", "rounds", "rounds_per_s", "mean_final_points"}
    assert a["games"] == 1
    b = _run(capsys, *args)
    a.pop("rounds_per_s")
    b.pop("rounds_per_s")
    assert a == b


def test_seats_alternate_and_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(capsys, "--games", "6", "--bots", "greedy,random", "--seed", "t", "--json")
    b = _run(capsys, "--games", "6", "--bots", "random,greedy", "--seed", "t", "--json")
    assert isinstance(a["wins"], list) and isinstance(b["wins"], list)
    assert sum(a["wins"]) + a["draws"] == 6  # type: ignore[operator]
    assert main(["selfplay", "--games", "2", "--bots", "greedy,random", "--seed", "u"]) == 0
    out = capsys.readouterr().out
    assert "greedy against random" in out and "draws:" in out


@pytest.mark.net
def test_benchmark_script_prints_one_json_object(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bots.py"
    args = [sys.executable, str(script), "--bot", "greedy", "--opponents", "greedy,random", "--workers", "1"]
    args += ["--seed", "b", "--games", "4", "--per-game", str(tmp_path / "games.jsonl")]
    out = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True).stdout
    data = json.loads(out)
    for opp in ("vs_greedy", "vs_random"):
        r = data[opp]
        assert r["wins"] + r["losses"] + r["draws"] == 4
        lo, hi = r["ci95"]
        assert 0.0 <= lo <= hi <= 1.0
        assert set(r["decision_s"]) == {"median", "p90", "p95", "max"}
        assert r["matches_per_s"] > 0
        assert set(r["decision_cpu_s"]) == {"median", "p95", "max"}
    games = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    for opp in ("greedy", "random"):
        mine = [g for g in games if g["opponent"] == opp]
        assert [g["game"] for g in mine] == [0, 1, 2, 3] and [g["seat"] for g in mine] == [0, 1, 0, 1]
        r = data[f"vs_{opp}"]
        assert sum(g["result"] == 1.0 for g in mine) == r["wins"]
        assert sum(g["result"] == 0.5 for g in mine) == r["draws"]
        assert sum(len(g["decision_cpu_s"]) for g in mine) == r["decisions"]
        # each round of each match: the pools after it end at the match's points, and the figures count them
        won = lost = drawn = 0
        for g in mine:
            rounds = g["round_results"]
            assert len(rounds) == g["rounds"] and rounds[-1]["points"][g["seat"]] == g["points"]
            start = STARTING_POINTS
            for x in rounds:
                delta = x["points"][g["seat"]] - start
                start = x["points"][g["seat"]]
                if x["winner"] is None:
                    drawn += 1
                    assert delta == 0
                elif x["winner"] == g["seat"]:
                    won += 1
                    assert delta == x["payment"] > 0 and x["score"] >= x["payment"]
                else:
                    lost += 1
                    assert -delta == x["payment"] > 0
        assert r["bot_rounds"]["won"] == won and r["bot_rounds"]["lost"] == lost
        assert r["bot_rounds"]["drawn"] == drawn and won + lost + drawn == r["rounds"]
    # the same games in two pieces, merged: the same figures but for the wall times
    pieces = tmp_path / "pieces.jsonl"
    for first in ("2", "0"):
        run = [*args[:-4], "--games", "2", "--first-game", first, "--per-game", str(pieces)]
        subprocess.run(run, capture_output=True, text=True, timeout=120, check=True)
    merged = json.loads(
        subprocess.run(
            [sys.executable, str(script), "--merge", str(pieces), str(pieces)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
    )
    assert merged["games"] == {"greedy": 4, "random": 4}
    for opp in ("vs_greedy", "vs_random"):
        keys = ("wins", "losses", "draws", "win_rate_decided", "ci95", "mean_final_points", "rounds", "decisions")
        for key in (*keys, "bot_rounds"):
            assert merged[opp][key] == data[opp][key], (opp, key)


def test_ceiling_benchmark_deals_the_true_hidden_cards() -> None:
    """benchmarks/bots_ceiling.py's bot is given the real hand (and with --knows all the real deck), nothing else."""
    import random

    from koikoi.engine.bots.strong import _root_of
    from koikoi.engine.deal import SeededDeal
    from koikoi.engine.match import Match, Settings
    from koikoi.engine.selfplay import game_seed
    from koikoi.testing import load_script

    mod = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "bots_ceiling.py", "bots_ceiling")
    m = Match(Settings(rounds=6), SeededDeal(game_seed(b"ceiling", 0)), 0)
    root = _root_of(m.view(0))
    hidden = [c for c in range(48) if m.hand(1) >> c & 1]
    seeing_hand = mod._Seeing(random.Random(1), m, False)
    opp, rest = seeing_hand._sample(root)
    assert opp == m.hand(1) and sorted(rest) == sorted(c for c in root.unseen if not opp >> c & 1)
    seeing_all = mod._Seeing(random.Random(1), m, True)
    opp, deck = seeing_all._sample(root)
    assert opp == m.hand(1) and len(deck) == m.deck_count
    world = Match.from_view(m.view(0), hidden, deck, SeededDeal(game_seed(b"x", 0)))
    while not m.history:  # the same plays draw the same cards: the world is the real round
        assert world.view(0) == m.view(0) and world.view(1) == m.view(1)
        action = m.legal_actions()[0]
        m.apply(action)
        world.apply(action)
    assert world.history[0].points == m.history[0].points


@pytest.mark.parametrize("model", [False, True])
def test_ceiling_benchmark_writes_each_match_beside_its_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: bool
) -> None:
    """--per-game: one line a match, each the match that the same seed, seat and seeing bot play
    (--model-opponent: the seeing bot models the opponent in its tree)."""
    from koikoi.engine.bots import make_bot
    from koikoi.engine.deal import SeededDeal
    from koikoi.engine.match import Match, Settings, choose_first_dealer
    from koikoi.engine.selfplay import bot_rng, game_seed
    from koikoi.testing import load_script

    mod = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "bots_ceiling.py", "bots_ceiling")
    out = tmp_path / "ceiling.jsonl"
    argv = ["--knows", "hand", "--opponent", "greedy", "--games", "3", "--first-game", "4", "--rollouts", "24"]
    argv += ["--model-opponent"] if model else []
    assert mod.main([*argv, "--per-game", str(out)]) == 0
    figures = json.loads(capsys.readouterr().out)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    expected = []
    for i in (4, 5, 6):  # the same games played here: seat i % 2, the bots seeded as bots.py seeds them
        seed = game_seed(b"bench", i)
        source = SeededDeal(seed)
        dealer, _ = choose_first_dealer(source)
        m = Match(Settings(rounds=6, double_at_8=True), source, dealer)
        seat = i % 2
        bots = [make_bot("greedy", bot_rng(seed, s)) for s in (0, 1)]
        bots[seat] = mod._Seeing(bot_rng(seed, seat), m, False, 24, model)
        while not m.is_over:
            s = m.to_move
            m.apply(bots[s].choose(m.view(s)), s)
        result = 0.5 if m.winner is None else float(m.winner == seat)
        expected.append(
            {"bot": "master", "knows": "hand", "rollouts": 24, "model_opponent": model, "seed": "bench"}
            | {"rounds_per_match": 6}
            | {"double_at_8": True, "opponent": "greedy", "game": i, "seat": seat, "result": result}
            | {"points": m.points[seat]}
        )
    assert records == expected and figures["model_opponent"] is model
    results = [r["result"] for r in records]
    assert (figures["wins"], figures["losses"], figures["draws"]) == (
        results.count(1.0),
        results.count(0.0),
        results.count(0.5),
    )
