"""``koikoi audit FILE... [--json]``: check transcripts and say what each proves.

Exit 0 when every file is valid (status complete, resigned, forfeit, on_time or
abandoned); 1 when any file is unfinished or invalid (or cannot be read); 2 for
usage errors, which include a FILE that does not exist or is not a regular file
(every other file is still reported first).
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...protocol.audit import AuditError, AuditReport, audit

COMMAND = "audit"
HELP = "check match transcripts: signatures, chain, handshake, commit-reveal, every move, the ending"
DESCRIPTION = (
    "Check transcripts: the format, every signature, the chain and sequence, the handshake's binding, "
    "the commitment and reveal, every move replayed with its state hash, and how the match ended (both "
    "signed results, a resignation, a proven fault, or a silence witnessed by the relay). Exit 0 when "
    "every file is valid (complete, resigned, forfeit, on_time, abandoned), 1 when any file is "
    "unfinished or invalid, 2 for usage errors (a FILE that does not exist or is not a regular file)."
)

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest file read as a transcript (a 12-round match is about 20 KB)."""
PROGRESS_MIN_FILES = 10


class NotATranscriptFile(Exception):
    """A path that cannot be read as a transcript. ``usage``: it does not exist or is not a regular file."""

    def __init__(self, message: str, usage: bool) -> None:
        super().__init__(message)
        self.message = message
        self.usage = usage


def read_transcript_file(path: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``. Never blocks on a FIFO or reads a device
    forever: anything but a regular file is refused (:class:`NotATranscriptFile`, one line)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise NotATranscriptFile("no such file", True) from None
        if e.errno == errno.EISDIR:
            raise NotATranscriptFile("a directory, not a transcript file", True) from None
        raise NotATranscriptFile(f"cannot open it: {e.strerror}", False) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise NotATranscriptFile("a directory, not a transcript file", True)
        if not stat.S_ISREG(st.st_mode):
            kind = (
                "a named pipe"
                if stat.S_ISFIFO(st.st_mode)
                else "a device"
                if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket"
                if stat.S_ISSOCK(st.st_mode)
                else "not a regular file"
            )
            raise NotATranscriptFile(f"{kind}, not a transcript file", True)
        if st.st_size > max_bytes:
            raise NotATranscriptFile(f"{st.st_size} bytes: far too large for a transcript", False)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise NotATranscriptFile(f"over {max_bytes} bytes: far too large for a transcript", False)
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as e:
        raise NotATranscriptFile(f"cannot read it: {e.strerror}", False) from None
    finally:
        os.close(fd)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="transcript files")
    p.add_argument("--json", action="store_true", help="one JSON object per file, one per line")


def _unreadable(message: str) -> AuditReport:
    rep = AuditReport()
    rep.errors.append(AuditError("unreadable", message, None))
    return rep


def _audit_file(path: str) -> tuple[AuditReport, bool]:
    """The report, and whether the path was a usage error (missing, or not a regular file)."""
    try:
        data = read_transcript_file(path)
    except NotATranscriptFile as e:
        return _unreadable(e.message), e.usage
    return audit(data), False


def _settings_text(s: dict[str, Any] | None) -> str:
    if s is None:
        return "no settings yet"
    mt = s.get("move_time_s")
    clock = "no move clock" if mt == 0 else f"{mt} s a move"
    deck = s.get("deck")
    tail = f", {deck} deck" if isinstance(deck, str) else ""
    return f"{s['rounds']} rounds, {'×2 at 8+' if s['double_at_8'] else 'No ×2 at 8+'}, {clock}{tail}"


def _won(rep: AuditReport) -> str:
    """``seat 1 won 30–20`` (the winner's points first), ``a draw, 25–25``, or ``no winner, 25–25``."""
    pts = rep.result["points"]
    winner = rep.result["winner"]
    if winner is not None:
        return f"seat {winner} won {pts[winner]}–{pts[1 - winner]}"
    if rep.status in ("complete", "resigned", "forfeit", "on_time"):
        return f"a draw, {pts[0]}–{pts[1]}"
    return f"no winner, {pts[0]}–{pts[1]}"


def verdict(path: str, rep: AuditReport) -> str:
    """One readable paragraph for one file."""
    lines: list[str] = []
    e: dict[str, Any] = rep.ending or {}
    at = f"at sequence {e.get('seq')}"
    setting = _settings_text(rep.settings)
    if rep.status == "complete":
        lines.append(f"{path}: VALID — a complete match ({setting}); {_won(rep)}, after {len(rep.rounds)} rounds.")
    elif rep.status == "resigned":
        lines.append(f"{path}: VALID — seat {e.get('loser')} resigned {at} ({e.get('code')}); {_won(rep)}.")
        lines.append(f"  {e.get('message')}")
    elif rep.status == "forfeit":
        lines.append(
            f"{path}: VALID — seat {e.get('loser')} forfeits: seat {e.get('by')} proved its fault "
            f"({e.get('code')}) {at}; {_won(rep)}."
        )
        lines.append(f"  {e.get('message')}")
    elif rep.status == "on_time":
        lines.append(
            f"{path}: VALID — on time: seat {e.get('loser')} was silent past the move time ({e.get('code')}) "
            f"{at}, witnessed by relay {e.get('witness')}; {_won(rep)}."
        )
    elif rep.status == "abandoned":
        lines.append(f"{path}: VALID — abandoned ({e.get('code')}): {e.get('message')}; no winner.")
    elif rep.status == "unfinished":
        lines.append(f"{path}: UNFINISHED — the match did not end ({setting}).")
    else:
        lines.append(f"{path}: INVALID — this file proves nothing.")
    for err in rep.errors:
        where = f" at sequence {err.seq}" if err.seq is not None else ""
        lines.append(f"  {err.code}{where}: {err.message}")
    if rep.settings is not None:
        players = ", ".join(f"seat {i} {fp or '?'}" for i, fp in enumerate(rep.players))
        first = "nobody" if rep.first_dealer is None else f"seat {rep.first_dealer}"
        lines.append(f"  players: {players}; first dealer: {first}; relay: {rep.relay or 'none'}")
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
    ok = True
    usage = False
    with _progress(len(args.files)) as advance:
        for path in args.files:
            rep, bad_path = _audit_file(path)
            usage = usage or bad_path
            ok = ok and rep.valid
            if args.json:
                print(json.dumps(rep.to_json(path), ensure_ascii=False), flush=True)
            elif bad_path:
                print(f"koikoi audit: {path}: {rep.errors[0].message}", file=sys.stderr, flush=True)
            else:
                print(verdict(path, rep), flush=True)
            advance()
    return 2 if usage else 0 if ok else 1
