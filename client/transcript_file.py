"""Transcript files: written as the match goes, read back for resume and audit.

The format is :mod:`koikoi.protocol.transcript` (a header, then length-prefixed frames).
:class:`TranscriptWriter` appends one record per message in one write and flushes it; the match
loop calls :meth:`TranscriptWriter.sync` (fsync) before it sends anything, so every message this
player signed is on disk before anyone can have seen it: a crash, even of the machine, can never
make an honest player sign two different messages for one sequence number.

For resume, :func:`read_for_resume` reads the file without changing it and tells a *torn final
record* (an incomplete last write, which cannot have been sent) from damage anywhere else (which
refuses, :class:`DamagedTranscript`); :meth:`ResumeFile.open_writer` drops the torn record and
appends after the sound part — call it only once the frames were verified.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

import platformdirs

from ..errors import RemoteError
from ..protocol.errors import ProtocolError
from ..protocol.framing import MAX_FRAME_BYTES
from ..protocol.messages import MsgType, parse
from ..protocol.transcript import MAGIC, ParsedTranscript, parse_transcript, record

__all__ = [
    "PRACTICE_ROOM",
    "DamagedTranscript",
    "ResumeFile",
    "TranscriptWriter",
    "data_dir",
    "new_transcript_path",
    "open_for_resume",
    "read_for_resume",
    "read_transcript",
    "why_not_a_match",
]


def new_transcript_path(name: str) -> Path:
    """A new transcript's path: ``<data dir>/transcripts/<UTC time>-<name>.koikoi``, numbered on if taken."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    base = data_dir() / "transcripts"
    path = base / f"{stamp}-{name}.koikoi"
    i = 2
    while path.exists():
        path = base / f"{stamp}-{name}-{i}.koikoi"
        i += 1
    return path


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
        self._f: BinaryIO = open(self.path, mode, buffering=0)  # type: ignore[assignment]  # closed in close()
        self._dirty = False
        if not _append:
            self._write(MAGIC)
            self.sync()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = self._f.write(view)
            if not n:
                raise OSError("the transcript file took no bytes")
            view = view[n:]
        self._dirty = True

    def append(self, frame: bytes, sync: bool = False) -> None:
        """Write one record (one write call, unbuffered); ``sync`` also forces it to disk."""
        self._write(record(frame))
        if sync:
            self.sync()

    def write_partial(self, frame: bytes) -> None:
        """(Tests) the first half of ``frame``'s record, forced to disk: what an interrupted write leaves."""
        rec = record(frame)
        self._write(rec[: len(rec) // 2])
        self.sync()

    def sync(self) -> None:
        """Force everything written so far to disk (fsync); a no-op when nothing was written since."""
        if self._dirty:
            os.fsync(self._f.fileno())
            self._dirty = False

    def close(self) -> None:
        if not self._f.closed:
            try:
                self.sync()
            finally:
                self._f.close()

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def read_transcript(path: str | os.PathLike[str]) -> ParsedTranscript:
    """The frames of a transcript file (raises ``ProtocolError`` bad_header, ``OSError``)."""
    return parse_transcript(Path(path).read_bytes())


class DamagedTranscript(RemoteError, ValueError):
    """The file is damaged somewhere other than a torn final record: it must not be resumed.
    ``str(e)`` is one line naming the record and what is wrong."""


@dataclass(frozen=True, slots=True)
class ResumeFile:
    """A transcript read for resume (the file is not changed until :meth:`open_writer`)."""

    path: Path
    frames: list[bytes]
    sound_bytes: int
    """The length of the header and the whole records: what stays when the writer opens."""
    torn: bool
    """A torn final record follows the whole records (an incomplete write: never sent)."""

    def open_writer(self) -> TranscriptWriter:
        """Drop a torn final record (fsynced), then append after the sound part."""
        if self.torn:
            with open(self.path, "r+b") as f:
                f.truncate(self.sound_bytes)
                f.flush()
                os.fsync(f.fileno())
        return TranscriptWriter(self.path, _append=True)


def _hides_a_record(data: bytes, start: int) -> bool:
    """True when a whole signed message record starts somewhere at or after ``start``.

    A torn final record is a prefix of one record; a length field damaged in the middle of the file
    instead swallows the records after it, which are still there, whole, in the bytes it claims."""
    end = len(data)
    for k in range(start, end - 4):
        if data[k] != 0:  # a record's length is at most MAX_FRAME_BYTES: its first byte is 0
            continue
        n = int.from_bytes(data[k : k + 4], "big")
        if n == 0 or n > MAX_FRAME_BYTES or k + 4 + n > end:
            continue
        try:
            parse(data[k + 4 : k + 4 + n])
        except (ProtocolError, ValueError):
            continue
        return True
    return False


def read_for_resume(path: str | os.PathLike[str]) -> ResumeFile:
    """Read ``path`` for resume without changing it. Raises :class:`DamagedTranscript` for any damage
    but a torn final record, ``OSError`` when it cannot be read."""
    p = Path(path)
    data = p.read_bytes()
    try:
        parsed = parse_transcript(data)
    except ProtocolError as e:
        raise DamagedTranscript(e.message) from None
    tail = parsed.tail_error
    if tail is None:
        return ResumeFile(p, parsed.frames, parsed.complete_bytes, False)
    pos = parsed.complete_bytes
    index = len(parsed.frames)  # the record's number, counting from 0 as the auditor does
    rest = len(data) - pos
    if rest >= 4:
        n = int.from_bytes(data[pos : pos + 4], "big")
        if n == 0 or n > MAX_FRAME_BYTES:
            raise DamagedTranscript(f"record {index} has an impossible length ({n}): the file is damaged there")
        if _hides_a_record(data, pos + 4):
            raise DamagedTranscript(
                f"record {index}'s length ({n}) runs past the end of the file although whole records "
                "follow it: the file is damaged there"
            )
    return ResumeFile(p, parsed.frames, pos, True)


def open_for_resume(path: str | os.PathLike[str]) -> tuple[list[bytes], TranscriptWriter]:
    """The frames so far and a writer that appends after them (a torn final record is dropped first;
    the other side sends that message again). Raises :class:`DamagedTranscript` for other damage.

    The frames are not verified here: prefer :func:`read_for_resume`, verify, then open the writer."""
    rf = read_for_resume(path)
    return rf.frames, rf.open_writer()


PRACTICE_ROOM = "PRACTICE"
"""The room a practice match's HELLOs name (``koikoi practice`` plays in memory: no relay, no seat)."""


def why_not_a_match(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` can never be a networked match to resume, in words (it is not a koikoi transcript, or
    it is a practice match's), else None (it may be one: only its seat file and a full check can tell)."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            head = f.read(len(MAGIC) + 4 + MAX_FRAME_BYTES)
    except OSError:
        return None  # (reading it is the full check's business, with its own words)
    if not head.startswith(MAGIC[:-3]):  # (an unknown version of the header is a transcript: damaged or newer)
        return "it is not a koikoi transcript"
    try:
        first = parse_transcript(head).frames[:1]
        msg = parse(first[0]) if first else None
    except (ProtocolError, ValueError):
        return None
    if msg is not None and msg.type is MsgType.HELLO and msg.field("room") == PRACTICE_ROOM:
        return (
            "it is a practice match's transcript, and practice matches cannot be resumed "
            "(koikoi replay and koikoi audit read it; koikoi practice plays a new one)"
        )
    return None
