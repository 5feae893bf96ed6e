"""Engine speed: random against random, through the public API, on one core.

    python benchmarks/engine.py [--matches N] [--repeats R] [--seed S]

Plays whole 12-round matches where each seat picks uniformly among
``legal_actions()`` and calls ``apply()``: the loop a bot or a referee runs.
Prints one JSON object. The machine is shared and noisy, so each figure is
taken over R repeats: ``rounds_per_s`` is the best repeat (the least
disturbed), ``rounds_per_s_median`` the median, and ``rounds_per_cpu_s``
the best rate per second of this process's own CPU time (what one core does
when the process has it). Target: >= 20,000 rounds/s.

The same run also times self-play (``selfplay_rounds_per_s``): the loop of
``koikoi selfplay --bots random,random`` (``engine.selfplay.play_match``, a
fresh random bot per seat and match, each decision made from a seat's view),
over the same number of 12-round matches, repeats interleaved with the
engine's. ``selfplay_ratio`` is self-play's best rate over the engine's best
rate; target >= 2/3 (the cost of handing each decision a view).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import random
import statistics
import sys
import time

import koikoi.engine.match as match_module
from koikoi.engine import Match, SeededDeal, Settings
from koikoi.engine.bots import make_bot
from koikoi.engine.selfplay import bot_rng, game_seed, play_match


def run(matches: int, seed: int) -> tuple[int, int, float, float]:
    rng = random.Random(seed)
    rounds = actions = 0
    start = time.perf_counter()
    cpu = time.process_time()
    for i in range(matches):
        m = Match(Settings(12, True), SeededDeal(hashlib.sha256(rng.randbytes(8)).digest()), i % 2)
        r = rng.random
        while not m.is_over:
            legal = m.legal_actions()
            m.apply(legal[int(r() * len(legal))])
            actions += 1
        rounds += len(m.history)
    return rounds, actions, time.perf_counter() - start, time.process_time() - cpu


def run_selfplay(matches: int, seed: int) -> tuple[int, float]:
    """``koikoi selfplay --bots random,random --rounds 12``'s loop: rounds played and seconds."""
    base = seed.to_bytes(8, "big")
    settings = Settings(12, True)
    rounds = 0
    start = time.perf_counter()
    for i in range(matches):
        s = game_seed(base, i)
        bots = [make_bot("random", bot_rng(s, 0)), make_bot("random", bot_rng(s, 1))]
        rounds += len(play_match(settings, bots, s).match.history)
    return rounds, time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=400)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    run(20, a.seed)  # warm up
    run_selfplay(20, a.seed)
    rates, arates, cpu_rates, self_rates = [], [], [], []
    rounds = actions = 0
    for _ in range(a.repeats):
        rounds, actions, dt, cpu = run(a.matches, a.seed)
        rates.append(rounds / dt)
        arates.append(actions / dt)
        cpu_rates.append(rounds / cpu)
        self_rounds, self_dt = run_selfplay(a.matches, a.seed)
        self_rates.append(self_rounds / self_dt)
    out = {
        "benchmark": "engine random-vs-random, public API, one core",
        "matches": a.matches,
        "rounds": rounds,
        "actions": actions,
        "repeats": a.repeats,
        "rounds_per_s": round(max(rates)),
        "rounds_per_s_median": round(statistics.median(rates)),
        "rounds_per_cpu_s": round(max(cpu_rates)),
        "actions_per_s": round(max(arates)),
        "target_rounds_per_s": 20000,
        "selfplay_rounds_per_s": round(max(self_rates)),
        "selfplay_rounds_per_s_median": round(statistics.median(self_rates)),
        "selfplay_ratio": round(max(self_rates) / max(rates), 3),
        "target_selfplay_ratio": 0.667,
        "compiled": not match_module.__file__.endswith(".py"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
    }
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
