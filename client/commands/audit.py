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

from ...errors import RemoteError
from ...protocol.audit import DECIDED, AuditError, AuditReport, audit
from ...protocol.codes import Code

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


class NotATranscriptFile(RemoteError):
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
    rep.errors.append(AuditError(Code.UNREADABLE, message, None))
    return rep


def _audit_file(path: str) -> tuple[AuditReport, bool]:
    """The report, and whether the path was a usage error (missing, or not a regular file)."""
    try:
        data = read_transcript_file(path)
    except NotATranscriptFile as e:
        return _unreadable(e.message), e.usage
    return audit(data), False


_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "no_settings": "no settings yet",
        "no_clock": "no move clock",
        "clock": "{s} s a move",
        "deck": "{deck} deck",
        "rounds": "{n} rounds",
        "double": "×2 at 8+",
        "no_double": "no ×2 at 8+",
        "sep": ", ",
        "won": "seat {w} won {a}–{b}",
        "won_by_end": "seat {w} wins (points when it ended: {a}–{b})",
        "draw": "a draw, {a}–{b}",
        "no_winner": "no winner, {a}–{b}",
        "complete": "{path}: VALID — a complete match ({setting}); {won}, after {n} rounds.",
        "resigned": "{path}: VALID — seat {loser} resigned {at} ({code}); {won}.",
        "forfeit": "{path}: VALID — seat {loser} forfeits: seat {by} proved its fault ({code}) {at}; {won}.",
        "on_time": "{path}: VALID — on time: seat {loser} was silent past the move time ({code}) {at}, "
        "witnessed by relay {witness}; {won}.",
        "abandoned": "{path}: VALID — abandoned ({code}): {message}; no winner.",
        "unfinished": "{path}: UNFINISHED — the match did not end ({setting}).",
        "invalid": "{path}: INVALID — this file proves nothing.",
        "at": "at sequence {seq}",
        "error": "  {code}{where}: {message}",
        "players": "  players: {players}; first dealer: {first}; relay: {relay}",
        "player": "seat {i} {fp}",
        "nobody": "nobody",
        "seat": "seat {i}",
        "none": "none",
    },
    "ja": {
        "no_settings": "設定はまだなし",
        "no_clock": "持ち時間なし",
        "clock": "一手{s}秒",
        "deck": "山札：{deck}",
        "rounds": "{n}局",
        "double": "8点以上で2倍",
        "no_double": "8点以上の2倍なし",
        "sep": "、",
        "won": "席{w}の勝ち {a}対{b}",
        "won_by_end": "席{w}の勝ち（終了時の点 {a}対{b}）",
        "draw": "引き分け {a}対{b}",
        "no_winner": "勝者なし {a}対{b}",
        "complete": "{path}：有効 — 最後まで終わった対戦（{setting}）。{won}、{n}局。",
        "resigned": "{path}：有効 — 席{loser}が{at}で投了（{code}）。{won}。",
        "forfeit": "{path}：有効 — 席{loser}の反則負け：席{by}がその反則を証明（{code}、{at}）。{won}。",
        "on_time": "{path}：有効 — 時間切れ：席{loser}が持ち時間を過ぎても応答なし（{code}、{at}）、"
        "リレー {witness} が証明。{won}。",
        "abandoned": "{path}：有効 — 中止（{code}）：{message}。勝者なし。",
        "unfinished": "{path}：未完 — 対戦は終わっていない（{setting}）。",
        "invalid": "{path}：無効 — このファイルは何も証明しない。",
        "at": "通番{seq}",
        "error": "  {code}{where}：{message}",
        "players": "  対局者：{players}。最初の親：{first}。リレー：{relay}",
        "player": "席{i} {fp}",
        "nobody": "なし",
        "seat": "席{i}",
        "none": "なし",
    },
}


def _settings_text(s: dict[str, Any] | None, lang: str = "en") -> str:
    w = _WORDS[lang]
    if s is None:
        return w["no_settings"]
    mt = s.get("move_time_s")
    parts = [w["rounds"].format(n=s["rounds"]), w["double" if s["double_at_8"] else "no_double"]]
    parts.append(w["no_clock"] if mt == 0 else w["clock"].format(s=mt))
    deck = s.get("deck")
    if isinstance(deck, str):
        parts.append(w["deck"].format(deck=deck))
    return w["sep"].join(parts)


def _won(rep: AuditReport, lang: str = "en") -> str:
    """``seat 1 won 30–20`` (the winner's points first), ``a draw, 25–25``, or ``no winner, 25–25``."""
    w = _WORDS[lang]
    pts = rep.result["points"]
    winner = rep.result["winner"]
    if winner is not None:  # an early end decides by itself, not by the points (they are what they were then)
        key = "won" if rep.status == "complete" else "won_by_end"
        return w[key].format(w=winner, a=pts[winner], b=pts[1 - winner])
    if rep.status in DECIDED:
        return w["draw"].format(a=pts[0], b=pts[1])
    return w["no_winner"].format(a=pts[0], b=pts[1])


def verdict(path: str, rep: AuditReport, lang: str = "en") -> str:
    """One readable paragraph for one file (``lang``: ``en`` or ``ja``, for ``koikoi replay --lang``)."""
    w = _WORDS["ja" if lang == "ja" else "en"]
    lang = "ja" if lang == "ja" else "en"
    lines: list[str] = []
    e: dict[str, Any] = rep.ending or {}
    fields = {
        "path": path,
        "setting": _settings_text(rep.settings, lang),
        "won": _won(rep, lang),
        "n": len(rep.rounds),
        "at": w["at"].format(seq=e.get("seq")),
        "loser": e.get("loser"),
        "by": e.get("by"),
        "code": e.get("code"),
        "message": e.get("message"),
        "witness": e.get("witness"),
    }
    status = rep.status if rep.status in ("complete", "resigned", "forfeit", "on_time", "abandoned", "unfinished") \
        else "invalid"  # fmt: skip
    lines.append(w[status].format(**fields))
    if status in ("resigned", "forfeit"):
        lines.append(f"  {e.get('message')}")
    for err in rep.errors:
        where = (" " + w["at"].format(seq=err.seq)) if err.seq is not None else ""
        lines.append(w["error"].format(code=err.code, where=where, message=err.message))
    if rep.settings is not None:
        players = w["sep"].join(w["player"].format(i=i, fp=fp or "?") for i, fp in enumerate(rep.players))
        first = w["nobody"] if rep.first_dealer is None else w["seat"].format(i=rep.first_dealer)
        lines.append(w["players"].format(players=players, first=first, relay=rep.relay or w["none"]))
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
