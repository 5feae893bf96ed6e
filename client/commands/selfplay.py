"""``koikoi selfplay``: whole matches between built-in bots, in process."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from ...engine.match import Settings
from ...engine.selfplay import bot_rng, game_seed, play_match
from ..botspec import BotSpecError, bot_from_spec, check_bot_spec

COMMAND = "selfplay"
HELP = "play whole matches between bots, in process (no network)"


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {n}")
    return n


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=_positive, required=True, metavar="N", help="how many matches")
    p.add_argument("--bots", required=True, metavar="A,B", help="two bots, e.g. random,greedy")
    p.add_argument("--rounds", type=int, choices=(6, 12), default=6, help="rounds per match (default 6)")
    p.add_argument("--no-double", action="store_true", help="do not double a base of 8 or more")
    p.add_argument("--seed", metavar="S", help="any text: the same seed gives the same games everywhere")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    specs = [s.strip() for s in args.bots.split(",")]
    if len(specs) != 2 or not all(specs):
        print(f"koikoi selfplay: --bots takes two bots separated by a comma, not {args.bots!r}", file=sys.stderr)
        return 2
    try:
        for s in specs:
            check_bot_spec(s)
    except BotSpecError as e:
        print(f"koikoi selfplay: {e}", file=sys.stderr)
        return 2
    settings = Settings(rounds=args.rounds, double_at_8=not args.no_double)
    base = args.seed.encode() if args.seed is not None else os.urandom(32)
    wins = [0, 0]
    draws = 0
    rounds = 0
    final = [0, 0]
    start = time.perf_counter()
    for i in range(args.games):
        seed = game_seed(base, i)
        a_seat = i % 2  # seats alternate: bot A sits in seat 0 in even games
        seats = [0, 0]
        seats[a_seat] = 0
        seats[1 - a_seat] = 1
        bots = [bot_from_spec(specs[seats[0]], bot_rng(seed, 0)), bot_from_spec(specs[seats[1]], bot_rng(seed, 1))]
        result = play_match(settings, bots, seed)
        m = result.match
        rounds += len(m.history)
        final[0] += m.points[a_seat]
        final[1] += m.points[1 - a_seat]
        if m.winner is None:
            draws += 1
        else:
            wins[0 if m.winner == a_seat else 1] += 1
    elapsed = time.perf_counter() - start
    out = {
        "games": args.games,
        "wins": wins,
        "draws": draws,
        "rounds": rounds,
        "rounds_per_s": round(rounds / elapsed, 1) if elapsed > 0 else None,
        "mean_final_points": [round(final[0] / args.games, 3), round(final[1] / args.games, 3)],
    }
    if args.json:
        print(json.dumps(out))
    else:
        a, b = specs
        print(f"{args.games} matches of {args.rounds} rounds, {settings.doubling_label}: {a} against {b}")
        print(f"  {a}: {wins[0]} wins, mean final points {out['mean_final_points'][0]}")
        print(f"  {b}: {wins[1]} wins, mean final points {out['mean_final_points'][1]}")
        print(f"  draws: {draws}; rounds played: {rounds} ({out['rounds_per_s']} rounds/s)")
    return 0
