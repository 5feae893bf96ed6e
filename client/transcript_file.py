"""Transcript files: written as the match goes, read back for resume and audit.

The format is :mod:`koikoi.protocol.transcript` (a header, then
length-prefixed frames). :class:`TranscriptWriter` appends one record per
message and flushes it at once (a crash of the program loses nothing) and
fsyncs at every round end and at the match's end (a crash of the machine
loses at most the current round's unsynced tail, which the other side resends
on resume).
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

import platformdirs

from ..protocol.transcript import MAGIC, ParsedTranscript, parse_transcript, record

__all__ = [
    "TranscriptWriter",
    "data_dir",
    "open_for_resume",
    "read_transcript",
]


def data_dir() -> Path:
    env = os.environ.get("KOIKOI_DATA_DIR")
    if env:
        return Path(env)
    return Path(platformdirs.user_data_dir("koikoi", appauthor=False))


class TranscriptWriter:
    """Appends records to a transcript file. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike[str], *, _append: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        mode = "ab" if _append else "xb"
        self._f: BinaryIO = open(self.path, mode)  # type: ignore[assignment]  # closed in close()
        if not _append:
            self._f.write(MAGIC)
            self._sync()

    def append(self, frame: bytes, sync: bool = False) -> None:
        """Write one record and flush it; ``sync`` also forces it to disk (round end, match end)."""
        self._f.write(record(frame))
        self._f.flush()
        if sync:
            os.fsync(self._f.fileno())

    def _sync(self) -> None:
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        if not self._f.closed:
            self._sync()
            self._f.close()

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def read_transcript(path: str | os.PathLike[str]) -> ParsedTranscript:
    """The frames of a transcript file (raises ``ProtocolError`` bad_header, ``OSError``)."""
    return parse_transcript(Path(path).read_bytes())


def open_for_resume(path: str | os.PathLike[str]) -> tuple[list[bytes], TranscriptWriter]:
    """The frames so far and a writer that appends after them. A record cut short by a crash is
    dropped from the file first (the other side sends that message again)."""
    p = Path(path)
    parsed = read_transcript(p)
    if parsed.tail_error is not None:
        with open(p, "r+b") as f:
            f.truncate(parsed.complete_bytes)
            f.flush()
            os.fsync(f.fileno())
    return parsed.frames, TranscriptWriter(p, _append=True)
