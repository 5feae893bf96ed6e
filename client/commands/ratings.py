"""``koikoi ratings PATH… [--json]``: audit every transcript, count each match once, rate the players by key.

A PATH is a file, a folder, or a relay archive's index (``http(s)://HOST/matches``: every page, every file,
each checked against the index's size and SHA-256).

Exit 0 when the table was made from everything given; 1 when a file or an archive could not be read (or a
fetched file is not the one its index lists); 2 when a PATH does not exist or is no file or folder (the
table is still made from the rest, and printed first).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

from ...protocol.codes import Status
from ..history import load_names
from ..ratings import (
    Audited,
    BadInput,
    Counted,
    RatedPlayer,
    _shown,
    audit_inputs,
    canonical_json,
    count_matches,
    pending,
    rate,
    table_json,
)
from .audit import _progress  # (the same bar as koikoi audit's: on stderr, a terminal, 10 files or more)

COMMAND = "ratings"
HELP = (
    "rate the players of many transcripts (files, folders, or a relay's archive URL): the same files give the "
    "same table anywhere"
)
DESCRIPTION = (
    "Audit every transcript (a folder gives its .koikoi files; a relay's archive, http://HOST/matches, every "
    "file its index lists, each checked against the index's size and SHA-256), count each match once (its two "
    "seats' files must agree), and rate the players by their keys with OpenSkill, in a fixed order with every "
    "update rounded: the same files give the same table byte for byte on any machine, fetched or local. "
    "Unfinished, abandoned and invalid matches are listed and not rated; a win by a proven fault or on time is "
    "a win."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="transcript files or folders, or a relay archive's index URL (http(s)://HOST/matches)",
    )
    p.add_argument("--json", action="store_true", help="the table as one canonical JSON object")


def _text(counted: Counted, players: list[RatedPlayer], names: Mapping[str, str]) -> list[str]:
    lines = [f"{'#':>3}  {'player':<19}  {'rating':>7}  {'mu':>6}  {'sigma':>5}  {'matches':>7}  won–lost–drawn"]
    for i, p in enumerate(players):
        name = f"  {names[p.fingerprint]}" if p.fingerprint in names else ""
        lines.append(
            f"{i + 1:>3}  {p.fingerprint:<19}  {p.rating:>7.2f}  {p.mu:>6.2f}  {p.sigma:>5.2f}  {p.matches:>7}  "
            f"{p.wins}–{p.losses}–{p.draws}{name}"
        )
    reasons: dict[str, int] = {}
    for x in counted.left_out:
        reasons[x.reason] = reasons.get(x.reason, 0) + 1
    left = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items())) or "none"
    lines.append(f"{len(counted.matches)} matches rated from {counted.files} files; left out: {left}.")
    for x in counted.left_out:
        if x.reason in ("disagree", "same_key"):
            files = ", ".join(f.label for f in x.files)
            lines.append(f"  match {x.match_id}: {x.detail} ({files})")
    return lines


def run(args: argparse.Namespace) -> int:
    usage = unreadable = False
    files: list[Audited] = []
    todo = pending(args.paths)
    with _progress(len(todo)) as advance:
        for a in audit_inputs(p if isinstance(p, BadInput) else p.load() for p in todo):
            advance()
            if isinstance(a, BadInput):
                usage = usage or a.usage
                unreadable = unreadable or not a.usage
                print(
                    f"koikoi ratings: {_shown(a.label, 1000)}: {_shown(a.message, 1000)}", file=sys.stderr, flush=True
                )
                continue
            if a.status == Status.INVALID:
                print(
                    f"koikoi ratings: {_shown(a.label, 1000)}: invalid, not rated: {_shown(a.error or '', 1000)}",
                    file=sys.stderr,
                    flush=True,
                )
            files.append(a)
    counted = count_matches(files)
    players = rate(counted.matches)
    if args.json:
        print(canonical_json(table_json(counted, players)), flush=True)
    else:
        for line in _text(counted, players, load_names()):
            print(line)
    return 2 if usage else 1 if unreadable else 0
