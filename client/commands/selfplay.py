"""``koikoi selfplay``: whole matches between bots, in process (no network).

Built-in bots are made afresh for every match with randomness derived from the
match seed, so ``--seed`` fixes every result. An external bot (``cmd:PROGRAM``)
is started once and plays every match of the run; it is stopped at the end,
also when something fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

from ...engine.bots import Bot
from ...engine.match import Settings
from ...engine.selfplay import bot_rng, game_seed, play_match
from ..argtypes import whole_number
from ..botspec import BotError, BotSpec, BotSpecError, bot_from_spec, close_bot, parse_bot_spec
from ..external_bot import DEFAULT_MOVE_TIMEOUT
from ..output import doubling_text

COMMAND = "selfplay"
HELP = "play whole matches between bots, in process (no network)"
DESCRIPTION = (
    "Play N whole matches between two bots, seats alternating. A bot is a built-in name (random, greedy, strong,"
    " master) or cmd:PROGRAM, a program speaking the JSON-lines bot protocol (spec/bot-protocol.md)."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=whole_number(1), required=True, metavar="N", help="how many matches")
    p.add_argument("--bots", required=True, metavar="A,B", help="two bots, e.g. random,greedy or strong,cmd:./mybot")
    p.add_argument("--rounds", type=int, choices=(6, 12), default=6, help="rounds per match (default 6)")
    p.add_argument("--no-double", action="store_true", help="do not double a base of 8 or more")
    p.add_argument("--seed", metavar="S", help="any text: the same seed gives the same games everywhere")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--bot-timeout",
        type=float,
        default=DEFAULT_MOVE_TIMEOUT,
        metavar="SECONDS",
        help=f"how long an external bot may think per decision (default {DEFAULT_MOVE_TIMEOUT:g})",
    )


def run(args: argparse.Namespace) -> int:
    specs = [s.strip() for s in args.bots.split(",")]
    if len(specs) != 2 or not all(specs):
        print(f"koikoi selfplay: --bots takes two bots separated by a comma, not {args.bots!r}", file=sys.stderr)
        return 2
    try:
        parsed = [parse_bot_spec(s) for s in specs]
    except BotSpecError as e:
        print(f"koikoi selfplay: {e}", file=sys.stderr)
        return 2
    if not args.bot_timeout > 0:
        print("koikoi selfplay: --bot-timeout must be more than 0 seconds", file=sys.stderr)
        return 2
    external: dict[int, Bot] = {}
    try:
        for i, spec in enumerate(parsed):
            if spec.external:
                external[i] = bot_from_spec(spec, random.Random(i), move_timeout=args.bot_timeout)
        out = _play(args, parsed, external)
    except BotError as e:
        print(f"koikoi selfplay: {e}", file=sys.stderr)
        return 1
    finally:
        for bot in external.values():
            close_bot(bot)
    if args.json:
        print(json.dumps(out))
    else:
        a, b = specs
        wins = out["wins"]
        means = out["mean_final_points"]
        assert isinstance(wins, list) and isinstance(means, list)
        games = f"{args.games} {'match' if args.games == 1 else 'matches'}"
        print(f"{games} of {args.rounds} rounds, {doubling_text(not args.no_double)}: {a} against {b}")
        for label, won, mean in ((a, wins[0], means[0]), (b, wins[1], means[1])):
            print(f"  {label}: {won} {'win' if won == 1 else 'wins'}, mean final points {mean}")
        print(f"  draws: {out['draws']}; rounds played: {out['rounds']} ({out['rounds_per_s']} rounds/s)")
    return 0


def _play(args: argparse.Namespace, parsed: list[BotSpec], external: dict[int, Bot]) -> dict[str, object]:
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
        order = [0, 1] if a_seat == 0 else [1, 0]  # order[seat] = which of A, B sits there
        bots = [
            external[order[seat]]
            if order[seat] in external
            else bot_from_spec(parsed[order[seat]], bot_rng(seed, seat))
            for seat in (0, 1)
        ]
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
    return {
        "games": args.games,
        "wins": wins,
        "draws": draws,
        "rounds": rounds,
        "rounds_per_s": round(rounds / elapsed, 1) if elapsed > 0 else None,
        "mean_final_points": [round(final[0] / args.games, 3), round(final[1] / args.games, 3)],
    }
