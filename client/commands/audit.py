"""``koikoi audit FILE... [--json]``: check transcripts and say what each proves.

Exit 0 when every file is a verified complete match or a verified abort; 1 when
any file fails, is truncated or is unfinished; 2 for usage errors (no such file).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...protocol.audit import AuditError, AuditReport, audit

COMMAND = "audit"
HELP = "check match transcripts: signatures, chain, handshake, commit-reveal, every move, the result"
DESCRIPTION = (
    "Check transcripts: the format, every signature, the chain and sequence, the handshake's binding, "
    "the commitment and reveal, every move replayed with its state hash, the result and both "
    "countersignatures. Exit 0 when every file is a verified complete match or a verified abort, "
    "1 when any file fails, is truncated or unfinished, 2 for usage errors."
)

MAX_FILE_BYTES = 64 * 1024 * 1024
PROGRESS_MIN_FILES = 10


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="transcript files")
    p.add_argument("--json", action="store_true", help="one JSON object per file, one per line")


def _audit_file(path: str) -> AuditReport:
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            rep = AuditReport()
            rep.errors.append(AuditError("bad_header", f"{size} bytes: far too large for a transcript", None))
            return rep
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        rep = AuditReport()
        rep.errors.append(AuditError("unreadable", f"cannot read the file: {e.strerror}", None))
        return rep
    return audit(data)


def _who(seat: int | None) -> str:
    return "nobody" if seat is None else f"seat {seat}"


def verdict(path: str, rep: AuditReport) -> str:
    """One readable paragraph for one file."""
    lines: list[str] = []
    s = rep.settings
    setting = ""
    if s is not None:
        setting = f"{s['rounds']} rounds, {'×2 at 8+' if s['double_at_8'] else 'No ×2 at 8+'}"
    players = ", ".join(f"seat {i} {fp or '?'}" for i, fp in enumerate(rep.players))
    res = rep.result
    pts = f"{res['points'][0]}–{res['points'][1]}"
    winner = res["winner"]
    won = f"seat {winner} won {pts}" if winner is not None else f"no winner, {pts}"
    if rep.status == "complete" and rep.valid:
        lines.append(f"{path}: VALID — a complete match ({setting}); {won}, after {len(rep.rounds)} rounds.")
    elif rep.status == "aborted":
        a: dict[str, Any] = rep.abort or {}
        how = {"resign": "the other resigned", "timeout": "a timeout claim", "abort": "forfeit"}.get(a.get("kind", ""))
        if winner is not None and how:
            won = f"seat {winner} wins ({how}); points {pts}"
        state = "VALID" if rep.valid else "INVALID"
        lines.append(f"{path}: {state} — aborted at sequence {a.get('seq')} ({a.get('code')}): {a.get('message')}.")
        if a.get("kind") == "abort":
            shown = "reproduces the flaw" if a.get("evidence_verified") else "does NOT reproduce the flaw"
            lines.append(f"  the evidence {shown}; {won}.")
        else:
            lines.append(f"  {won}.")
    elif rep.status == "incomplete":
        lines.append(f"{path}: UNFINISHED — the match did not end ({setting or 'no settings yet'}).")
    else:
        lines.append(f"{path}: INVALID — this file proves nothing.")
    for e in rep.errors:
        at = f" at sequence {e.seq}" if e.seq is not None else ""
        lines.append(f"  {e.code}{at}: {e.message}")
    if rep.settings is not None:
        lines.append(f"  players: {players}; first dealer: {_who(rep.first_dealer)}")
    return "\n".join(lines)


@contextmanager
def _progress(total: int) -> Iterator[Any]:
    if total >= PROGRESS_MIN_FILES and sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import Progress

        # verdicts printed to a terminal go above the bar; to a file or pipe, straight there
        same_terminal = sys.stdout.isatty()
        with Progress(
            console=Console(stderr=True), transient=True, redirect_stdout=same_terminal, redirect_stderr=False
        ) as progress:
            task = progress.add_task("auditing", total=total)
            yield lambda: progress.advance(task)
    else:
        yield lambda: None


def run(args: argparse.Namespace) -> int:
    for path in args.files:
        if not os.path.exists(path):
            print(f"koikoi audit: no such file: {path}", file=sys.stderr)
            return 2
        if os.path.isdir(path):
            print(f"koikoi audit: {path} is a directory, not a transcript file", file=sys.stderr)
            return 2
    ok = True
    with _progress(len(args.files)) as advance:
        for path in args.files:
            rep = _audit_file(path)
            ok = ok and rep.valid
            if args.json:
                print(json.dumps(rep.to_json(path), ensure_ascii=False), flush=True)
            else:
                print(verdict(path, rep), flush=True)
            advance()
    return 0 if ok else 1
