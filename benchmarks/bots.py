"""How strong is a built-in bot (the master bot by default), and how long does it think?

Plays ``--games`` whole matches of the bot against each opponent (greedy,
strong and random by default), seats alternating, exactly the games that
``koikoi selfplay --bots BOT,OPP --games N --seed S`` plays (same match seeds,
same bot randomness), spread over ``--workers`` processes. Prints one JSON
object: for each opponent the wins, losses and draws, the win rate over
decided matches with its 95% Wilson interval, ``matches_per_s`` (matches a
second per worker, the opponent's thinking included) and the bot's decision
times over decisions with more than one legal action (the clock runs here,
never inside the bot): ``decision_s`` on the wall clock (median, 90th and 95th
percentile, max), ``decision_cpu_s`` in the worker's CPU time (median, 95th
percentile, max), which other jobs on a shared machine do not inflate.
``--per-game FILE`` also appends each match's record to FILE, one JSON line a
match: the run (``bot``, ``seed``, ``rounds_per_match``, ``double_at_8``),
``opponent``, ``game`` index, the bot's ``seat``, ``result`` (1, 0.5 or
0 for the bot), its final ``points``, ``rounds``, ``wall_s``, the match's
``decision_s`` and ``decision_cpu_s`` and ``round_results`` (each round as
``RoundResult.to_json`` gives it, with the winner's ``score`` before the cap
and the round's koi-koi ``calls``); the figures' ``bot_rounds`` sums them up
over the ``matches`` that have them: the bot's rounds won, lost and drawn and
its mean payment in a won and in a lost round. Two versions of a bot run on the same
``--seed`` play the same deals, so their records compare match by match (a
paired comparison). ``--first-game K`` plays games K to K + N - 1, so a long
run can be played in pieces; ``--merge FILE...`` plays nothing and prints the
figures of the records in the files (a game recorded twice counts once), the
same as one run of those games would print but for its wall times. It refuses,
in one line naming the file and line, a line that is not such a record, and
records of two different runs (records written before they named their run are
taken as they are), and two records of one game that disagree. Bad arguments
are refused before anything is played (``--workers`` at most 64, and no more
processes start than there are matches); a record file that cannot be written
after play still leaves the figures printed, with a one-line error and exit
status 1.

The bots' budgets are counts of rollouts, so the results do not depend on the
load, only the times do: on a shared machine run it under ``nice`` with one
worker. Nor do they depend on whether the engine and the search's playout
(``koikoi.engine.bots.playout``) run compiled by mypyc or in pure Python (an
editable install): the same matches, about 2.3 times the decision time in pure
Python.

    nice -n 19 python benchmarks/bots.py --games 400 --seed bench --workers 1
    python benchmarks/bots.py --bot strong --opponents greedy,random --games 400
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from koikoi.engine.actions import Action
from koikoi.engine.bots import BOT_NAMES, Bot, make_bot
from koikoi.engine.bots.value import TOTAL_POINTS
from koikoi.engine.events import Event, KoiKoi, RoundEnded
from koikoi.engine.match import RoundResult, SeatView, Settings
from koikoi.engine.selfplay import bot_rng, game_seed, play_match


class _Timed:
    """Wraps a bot and records how long each real decision took."""

    def __init__(self, bot: Bot, times: list[float], cpu: list[float]) -> None:
        self.bot = bot
        self.name = bot.name
        self.times = times
        self.cpu = cpu

    def choose(self, view: SeatView) -> Action:
        t = time.perf_counter()
        c = time.process_time()
        a = self.bot.choose(view)
        if len(view.legal_actions) > 1:
            self.times.append(time.perf_counter() - t)
            self.cpu.append(time.process_time() - c)
        return a


def _play(job: tuple[str, str, bytes, list[int], int, bool]) -> list[dict[str, Any]]:
    """Play games ``indices``: ``bot`` is bot A (seat 0 in even games), ``opp`` is bot B. One record a match."""
    bot, opp, base, indices, rounds, double = job
    run = run_of(bot, base.decode(), rounds, double)
    settings = Settings(rounds=rounds, double_at_8=double)
    records: list[dict[str, Any]] = []
    for i in indices:
        seed = game_seed(base, i)
        a_seat = i % 2
        names = [bot, opp] if a_seat == 0 else [opp, bot]
        bots: list[Bot] = [make_bot(names[s], bot_rng(seed, s)) for s in (0, 1)]
        times: list[float] = []
        cpu: list[float] = []
        bots[a_seat] = _Timed(bots[a_seat], times, cpu)
        t0 = time.perf_counter()
        m = play_match(settings, bots, seed).match
        records.append(
            {
                **run,
                "opponent": opp,
                "game": i,
                "seat": a_seat,
                "result": 0.5 if m.winner is None else float(m.winner == a_seat),
                "points": m.points[a_seat],
                "rounds": len(m.history),
                "wall_s": round(time.perf_counter() - t0, 4),
                "decision_s": [round(t, 5) for t in times],
                "decision_cpu_s": [round(t, 5) for t in cpu],
                "round_results": [_round_record(r, c) for r, c in zip(m.history, _round_calls(m.log), strict=True)],
            }
        )
    return records


def _round_calls(log: list[Event]) -> list[int]:
    """The koi-koi calls of each round in a match's log (a drawn round has no breakdown to tell them)."""
    out: list[int] = []
    n = 0
    for e in log:
        if isinstance(e, KoiKoi):
            n += 1
        elif isinstance(e, RoundEnded):
            out.append(n)
            n = 0
    return out


def _round_record(r: RoundResult, calls: int) -> dict[str, Any]:
    """How one round ended: ``RoundResult.to_json`` and the winner's ``score`` before the cap and the ``calls``."""
    rec = r.to_json()
    rec["score"] = r.breakdown.score if r.breakdown else 0
    rec["calls"] = calls
    return rec


def round_figures(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The bot's rounds in ``records`` (those with ``round_results``): won, lost, drawn, points a won and a lost one.

    ``matches``: how many records had them; None when none had (records written before they were kept).
    """
    won: list[int] = []
    lost: list[int] = []
    drawn = 0
    matches = 0
    for rec in records:
        matches += "round_results" in rec
        for r in rec.get("round_results", ()):
            if r["winner"] is None:
                drawn += 1
            elif r["winner"] == rec["seat"]:
                won.append(r["payment"])
            else:
                lost.append(r["payment"])
    n = len(won) + len(lost) + drawn
    if not n:
        return None
    return {
        "matches": matches,
        "won": len(won),
        "lost": len(lost),
        "drawn": drawn,
        "won_share": round(len(won) / n, 4),
        "mean_payment_won": round(statistics.mean(won), 2) if won else None,
        "mean_payment_lost": round(statistics.mean(lost), 2) if lost else None,
    }


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of one pairing from its match records (one run's, or several runs' merged)."""
    wins = sum(1 for r in records if r["result"] == 1.0)
    losses = sum(1 for r in records if r["result"] == 0.0)
    draws = len(records) - wins - losses
    times = sorted(t for r in records for t in r["decision_s"])
    cpu = sorted(t for r in records for t in r["decision_cpu_s"])
    decided = wins + losses
    lo, hi = wilson(wins, decided)
    wall = sum(r["wall_s"] for r in records)
    return {
        "wins": wins,
        "losses": losses,
        "draws": draws,
        "win_rate_decided": round(wins / decided, 4) if decided else None,
        "ci95": [round(lo, 4), round(hi, 4)],
        "mean_final_points": round(sum(r["points"] for r in records) / len(records), 3) if records else None,
        "rounds": sum(r["rounds"] for r in records),
        "decisions": len(times),
        "decision_s": {
            "median": round(statistics.median(times), 4) if times else None,
            "p90": round(times[int(0.9 * (len(times) - 1))], 4) if times else None,
            "p95": round(times[int(0.95 * (len(times) - 1))], 4) if times else None,
            "max": round(times[-1], 4) if times else None,
        },
        "decision_cpu_s": _quantiles(cpu),
        "matches_per_s": round(len(records) / wall, 3) if wall > 0 else None,
        "wall_s": round(wall, 1),
        "bot_rounds": round_figures(records),
    }


def _quantiles(xs: list[float]) -> dict[str, float | None]:
    """Median, 95th percentile and max of sorted ``xs``."""
    if not xs:
        return {"median": None, "p95": None, "max": None}
    return {
        "median": round(statistics.median(xs), 4),
        "p95": round(xs[int(0.95 * (len(xs) - 1))], 4),
        "max": round(xs[-1], 4),
    }


def wilson(wins: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def whole_number(least: int, most: int | None = None) -> Callable[[str], int]:
    """An ``argparse`` type: a whole number of ``least`` or more (and at most ``most``)."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = least - 1
        if n < least:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of {least} or more")
        if most is not None and n > most:
            raise argparse.ArgumentTypeError(f"{text!r} is more than {most}")
        return n

    return parse


count = whole_number(1)
index = whole_number(0)
MAX_WORKERS = 64


def check_bots(p: argparse.ArgumentParser, names: list[str]) -> None:
    """Stop with a one-line error at the first name that is not a built-in bot."""
    for name in names:
        if name not in BOT_NAMES:
            p.error(f"unknown bot {name!r}; built-in bots: {', '.join(BOT_NAMES)}")


def os_error(option: str, path: str, e: OSError) -> str:
    """What went wrong with the file an option names, in one line."""
    return f"{option} {path}: {e.strerror or e}"


def check_writable(p: argparse.ArgumentParser, option: str, path: str | None) -> None:
    """Stop with a one-line error, before anything is played, if ``path`` cannot be appended to.

    A path that is there and is no regular file (a named pipe, a terminal) is not opened: opening and
    closing a pipe would give its reader end-of-file, and the records' open after play would then wait
    for a reader for ever."""
    if path is None:
        return
    try:
        if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
            if not os.access(path, os.W_OK):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
            return
        with open(path, "a"):
            pass
    except OSError as e:
        p.error(os_error(option, path, e))


ROUNDS = (6, 12)  # the match lengths Settings allows
GAMES = 2**32  # a game's number is 4 bytes of its match seed
_RUN_KEYS = ("bot", "seed", "rounds_per_match", "double_at_8")
_SAME_MATCH = ("seat", "result", "points", "rounds")  # what two records of one match agree on


def run_of(bot: str, seed: str, rounds: int, double: bool) -> dict[str, Any]:
    """What makes a record's game the same game in another run: the bot, the seed and the settings."""
    return {"bot": bot, "seed": seed, "rounds_per_match": rounds, "double_at_8": double}


MAX_SECONDS = 1e6  # a bound on any time a record holds (11 days), so no sum of them overflows


def _number(x: object) -> bool:
    """A time of 0 to ``MAX_SECONDS`` (JSON's int or float, not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x <= MAX_SECONDS


def _whole(x: object, top: int) -> bool:
    """A whole number from 0 to ``top`` (not a bool)."""
    return type(x) is int and 0 <= x <= top


def _is_round(r: object) -> bool:
    """A round of ``round_results`` as ``round_figures`` reads it: who won (None: drawn), the payment."""
    if not isinstance(r, dict) or "winner" not in r:
        return False
    return (r["winner"] is None or _whole(r["winner"], 1)) and _whole(r.get("payment"), TOTAL_POINTS)


def _is_record(r: object) -> bool:
    """Every field ``--merge`` reads is there, of its type and in its range (older records lack the run's keys)."""
    if not isinstance(r, dict):
        return False
    if not (isinstance(r.get("opponent"), str) and _whole(r.get("game"), GAMES - 1) and _whole(r.get("seat"), 1)):
        return False
    if type(r.get("result")) not in (int, float) or r["result"] not in (0, 0.5, 1):
        return False
    if not (
        _whole(r.get("points"), TOTAL_POINTS) and _whole(r.get("rounds"), max(ROUNDS)) and _number(r.get("wall_s"))
    ):
        return False
    for key in ("decision_s", "decision_cpu_s"):
        xs = r.get(key)
        if not isinstance(xs, list) or not all(_number(x) for x in xs):
            return False
    if r["seat"] != r["game"] % 2:
        return False  # bot A sits at seat 0 in even games
    if "round_results" in r:
        rounds = r["round_results"]
        if not isinstance(rounds, list) or len(rounds) != r["rounds"] or not all(_is_round(x) for x in rounds):
            return False
    named = [k in r for k in _RUN_KEYS]
    if not any(named):
        return True  # written before records named their run
    if not all(named):
        return False
    bot, seed, rounds_per_match, double = (r[k] for k in _RUN_KEYS)
    return (
        isinstance(bot, str)
        and isinstance(seed, str)
        and type(rounds_per_match) is int
        and rounds_per_match in ROUNDS
        and r["rounds"] <= rounds_per_match
        and type(double) is bool
    )


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _records(p: argparse.ArgumentParser, name: str) -> list[tuple[int, dict[str, Any]]]:
    """The records of a ``--per-game`` file with their line numbers (blank lines skipped); a one-line error
    names the file (and line) that is not one."""
    try:
        with open(name, encoding="utf-8-sig") as f:
            lines = f.readlines()
    except OSError as e:
        p.error(os_error("--merge", name, e))
    except UnicodeDecodeError:
        p.error(f"--merge {name}: not UTF-8 text")
    out: list[tuple[int, dict[str, Any]]] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            r = None
        if not _is_record(r):
            p.error(f"--merge {name}: line {n} is not a bots.py --per-game record")
        out.append((n, r))
    return out


def append_records(path: str, records: list[dict[str, Any]]) -> None:
    """Append ``records`` to ``path``, one JSON line each, first ending an unfinished last line (a pipe is
    written as it comes)."""
    text = "".join(json.dumps(r) + "\n" for r in records)
    if os.path.isfile(path) and os.path.getsize(path):
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":
                text = "\n" + text
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


def after_play(p: argparse.ArgumentParser, unwritten: str | None) -> int:
    """The exit status once the figures are printed: 1, with the error in one line, if records were lost."""
    if unwritten is None:
        return 0
    print(f"{p.prog}: error: {unwritten}; the figures are printed", file=sys.stderr)
    return 1


def check_games(p: argparse.ArgumentParser, first: int, games: int) -> None:
    """A game's number is 4 bytes of its match seed: games ``first`` to ``first + games - 1`` must fit."""
    if first + games > GAMES:
        p.error(f"--first-game {first} with --games {games}: games are numbered below 2**32")


def check_seed(p: argparse.ArgumentParser, seed: str) -> bytes:
    """The seed's bytes; a one-line error if the argument is not text."""
    try:
        return seed.encode()
    except UnicodeEncodeError:
        p.error("--seed: not valid text (UTF-8)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=Path(__file__).name, description=__doc__.splitlines()[0])
    p.add_argument("--games", type=count, default=400)
    p.add_argument("--first-game", type=index, default=0, metavar="K", help="play games K to K + games - 1")
    p.add_argument("--seed", default="bench")
    p.add_argument("--opponents", default="greedy,strong,random")
    p.add_argument("--bot", default="master")
    p.add_argument("--workers", type=whole_number(1, MAX_WORKERS), default=min(2, os.cpu_count() or 1))
    p.add_argument("--rounds", type=int, choices=ROUNDS, default=6)
    p.add_argument("--no-double", action="store_true")
    p.add_argument("--per-game", metavar="FILE", help="also write each match's record to FILE, one JSON line a match")
    p.add_argument("--merge", nargs="+", metavar="FILE", help="play nothing: the figures of --per-game files")
    args = p.parse_args(argv)
    if args.merge:
        records: dict[str, dict[int, dict[str, Any]]] = {}
        runs: set[tuple[Any, ...]] = set()
        for name in args.merge:
            for n, r in _records(p, name):
                if "bot" in r:
                    runs.add(tuple(r[k] for k in _RUN_KEYS))
                games = records.setdefault(r["opponent"], {})
                kept = games.get(r["game"])
                if kept is not None and any(kept[k] != r[k] for k in _SAME_MATCH):
                    p.error(
                        f"--merge {name}: line {n} records game {r['game']} against {r['opponent']} otherwise"
                        " than an earlier record: two runs' records?"
                    )
                if kept is None or "round_results" in r or "round_results" not in kept:
                    games[r["game"]] = r  # a match played twice counts once; the record with its rounds wins
        if len(runs) > 1:
            seen = "; ".join(", ".join(f"{k} {v}" for k, v in zip(_RUN_KEYS, run, strict=True)) for run in sorted(runs))
            p.error(f"--merge: records of different runs ({seen}): merge one run's pieces")
        if not records:
            p.error(f"--merge: no records in {', '.join(args.merge)}")
        merged: dict[str, Any] = {"merged": args.merge, "games": {o: len(g) for o, g in records.items()}}
        for opp, by_game in records.items():
            merged[f"vs_{opp}"] = summary([by_game[i] for i in sorted(by_game)])
        json.dump(merged, sys.stdout)
        print()
        return 0
    opponents = args.opponents.split(",")
    check_bots(p, [args.bot, *opponents])
    for name in opponents:
        if opponents.count(name) > 1:
            p.error(f"--opponents names {name} twice")
    check_games(p, args.first_game, args.games)
    base = check_seed(p, args.seed)
    check_writable(p, "--per-game", args.per_game)
    workers = min(args.workers, args.games)  # no more processes than matches
    result: dict[str, Any] = {
        "bot": args.bot,
        "games": args.games,
        "first_game": args.first_game,
        "seed": args.seed,
        "rounds_per_match": args.rounds,
        "double_at_8": not args.no_double,
        "workers": workers,
    }
    indices = range(args.first_game, args.first_game + args.games)
    unwritten: str | None = None
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for opp in opponents:
            t0 = time.perf_counter()
            n = workers * 4
            jobs = [(args.bot, opp, base, list(indices[w::n]), args.rounds, not args.no_double) for w in range(n)]
            played = sorted(
                (r for part in pool.map(_play, [j for j in jobs if j[3]]) for r in part), key=lambda r: r["game"]
            )
            result[f"vs_{opp}"] = summary(played)
            result[f"vs_{opp}"]["matches_per_s"] = round(args.games / (time.perf_counter() - t0) / workers, 3)
            result[f"vs_{opp}"]["wall_s"] = round(time.perf_counter() - t0, 1)
            if args.per_game and unwritten is None:
                try:
                    append_records(args.per_game, played)
                except OSError as e:
                    unwritten = os_error("--per-game", args.per_game, e)
    result["wall_s"] = round(time.perf_counter() - start, 1)
    json.dump(result, sys.stdout)
    print()
    return after_play(p, unwritten)


if __name__ == "__main__":
    raise SystemExit(main())
