"""Engine speed: random against random, through the public API, on one core.

    python benchmarks/engine.py [--matches N] [--repeats R] [--seed S]

Plays whole 12-round matches where each seat picks uniformly among
``legal_actions()`` and calls ``apply()``: the loop a bot or a referee runs.
Prints one JSON object. The machine is shared and noisy, so each figure is
taken over R repeats: ``rounds_per_s`` is the best repeat (the least
disturbed), ``rounds_per_s_median`` the median, and ``rounds_per_cpu_s``
the best rate per second of this process's own CPU time (what one core does
when the process has it). Target: >= 20,000 rounds/s.
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=400)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    run(20, a.seed)  # warm up
    rates, arates, cpu_rates = [], [], []
    rounds = actions = 0
    for _ in range(a.repeats):
        rounds, actions, dt, cpu = run(a.matches, a.seed)
        rates.append(rounds / dt)
        arates.append(actions / dt)
        cpu_rates.append(rounds / cpu)
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
        "compiled": not match_module.__file__.endswith(".py"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
    }
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
