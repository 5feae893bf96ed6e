"""``koikoi history [--json] [--opponent FP] [--since DATE] [--stats]``, ``koikoi history --name FP NAME``.

Every match in this user's transcript folder, newest first, from the index (:mod:`koikoi.client.history`).
Exit 0; 2 for usage errors (a bad fingerprint, name or date); 1 when a name cannot be saved.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from typing import Any

from ..history import (
    HistoryError,
    check_name,
    entry_json,
    load_names,
    normal_fingerprint,
    open_history,
    save_name,
    stats_json,
)
from ..identity import IdentityError, fingerprint_of, key_path, load_or_create

COMMAND = "history"
HELP = "your matches, newest first: opponent, settings, result, how it ended, whether it audits valid"
DESCRIPTION = (
    "Every match in your transcript folder, newest first: when, the opponent (and the name you gave it), "
    "the settings, the result and how it ended, and whether it audits valid. --stats: wins, losses and "
    "draws by opponent, points won, yaku made, koi-koi calls and how often they paid. The transcripts "
    "are the source of truth; an index in the data folder is rebuilt from them when missing or stale."
)


def _since(text: str) -> str:
    """A ``--since`` date or time, as the UTC text history rows compare on."""
    try:
        t = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD, or YYYY-MM-DDTHH:MM)") from None
    if t.tzinfo is not None:
        t = t.astimezone(dt.UTC).replace(tzinfo=None)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _fingerprint(text: str) -> str:
    try:
        return normal_fingerprint(text)
    except HistoryError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="one JSON object per match (with --stats: one object)")
    p.add_argument("--opponent", type=_fingerprint, metavar="FP", help="only the matches against this key")
    p.add_argument(
        "--since", type=_since, metavar="DATE", help="only the matches since DATE (UTC, YYYY-MM-DD or YYYY-MM-DDTHH:MM)"
    )
    p.add_argument("--stats", action="store_true", help="wins, losses and draws by opponent, points, yaku, koi-koi")
    p.add_argument("--name", nargs=2, metavar=("FP", "NAME"), help="give an opponent's key a name ('' removes it)")


def _me() -> str | None:
    """This user's fingerprint (None when there is no key yet: history never makes one)."""
    if not key_path().exists():
        return None
    try:
        return fingerprint_of(load_or_create()[0])
    except IdentityError:
        return None


_RESULT = {"win": "won", "loss": "lost", "draw": "drew", None: "—"}


def _line(e: dict[str, Any]) -> str:
    when = e["when"].replace("T", " ")[:16]
    if e["practice"]:
        who = "practice"
    elif e["opponent"] is not None:
        who = e["opponent"] + (f" ({e['opponent_name']})" if e["opponent_name"] else "")
    else:
        who = "?"
    s = e["settings"]
    setting = "no settings"
    if s is not None:
        clock = "no clock" if s["move_time_s"] == 0 else f"{s['move_time_s']} s"
        setting = f"{s['rounds']} rounds, {'×2 at 8+' if s['double_at_8'] else 'no ×2'}, {clock}, {s['deck']}"
    seat = e["seat"]
    pts = e["points"] if seat is None else [e["points"][seat], e["points"][1 - seat]]
    how = e["status"] + (f" ({e['ending']})" if e["ending"] else "")
    audit = "valid" if e["valid"] else "NOT VALID" + (f": {e['error']}" if e["error"] else "")
    return f"{when}  {_RESULT[e['result']]:<4} {pts[0]:>2}–{pts[1]:<2}  vs {who}  {how}; {setting}; {audit}"


def _stats_text(st: dict[str, Any]) -> list[str]:
    lines = [
        f"{st['counted']} of {st['matches']} matches counted: "
        f"{st['wins']} won, {st['losses']} lost, {st['draws']} drawn."
    ]
    for o in st["by_opponent"]:
        who = "practice" if o["practice"] else o["opponent"] + (f" ({o['name']})" if o["name"] else "")
        lines.append(f"  vs {who}: {o['matches']} matches, {o['wins']} won, {o['losses']} lost, {o['draws']} drawn")
    lines.append(
        f"Points won {st['points_won']}, lost {st['points_lost']} "
        f"(rounds won {st['rounds_won']}, lost {st['rounds_lost']})."
    )
    k = st["koikoi"]
    rate = f" ({100 * k['paid'] // k['calls']}%)" if k["calls"] else ""
    lines.append(f"Koi-koi called {k['calls']} times, {k['paid']} paid{rate}.")
    if st["yaku"]:
        made = ", ".join(f"{y} {n}" for y, n in sorted(st["yaku"].items(), key=lambda x: (-x[1], x[0])))
        lines.append(f"Yaku made: {made}.")
    return lines


def run(args: argparse.Namespace) -> int:
    if args.name is not None:
        try:
            fp, name = normal_fingerprint(args.name[0]), check_name(args.name[1])
        except HistoryError as e:
            print(f"koikoi history: {e}", file=sys.stderr)
            return 2
        try:
            path = save_name(fp, name)
        except HistoryError as e:
            print(f"koikoi history: {e}", file=sys.stderr)
            return 1
        print(f"{fp} is now {name!r} (in {path})" if name else f"{fp} has no name now (in {path})")
        return 0
    h = open_history()
    me = _me()
    names = load_names()
    rows = h.rows
    if args.since is not None:
        rows = [r for r in rows if r["when"] >= args.since]
    entries = [entry_json(r, me, names) for r in rows]
    if args.opponent is not None:
        keep = [e["opponent"] == args.opponent for e in entries]
        rows = [r for r, k in zip(rows, keep, strict=True) if k]
        entries = [e for e, k in zip(entries, keep, strict=True) if k]
    if args.stats:
        st = stats_json(rows, me, names)
        if args.json:
            print(json.dumps(st, ensure_ascii=False))
        else:
            print("\n".join(_stats_text(st)))
        return 0
    for entry in entries:
        print(json.dumps(entry, ensure_ascii=False) if args.json else _line(entry))
    if not entries and not args.json:
        print("No matches yet." if not h.rows else "No matches match.")
    return 0
