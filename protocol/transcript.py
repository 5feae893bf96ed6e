"""The transcript format (sans-IO): a header, then length-prefixed frames.

::

    KOIKOI-TRANSCRIPT/1\\n                  20 bytes: magic and format version
    LEN (4 bytes, big-endian) FRAME          one record per message, in the order the
    LEN FRAME                                writer accepted or sent it
    ...

Every byte is checked by the auditor: the header is fixed, each length must
frame a message, and each message is signed and chained. There is nothing
unverifiable (no timestamps, no file paths) in the file.
"""

from __future__ import annotations

from dataclasses import dataclass

from .codes import Code
from .errors import ProtocolError
from .framing import MAX_FRAME_BYTES

__all__ = ["MAGIC", "ParsedTranscript", "encode_transcript", "header", "parse_transcript", "record"]

MAGIC = b"KOIKOI-TRANSCRIPT/1\n"


def header() -> bytes:
    return MAGIC


def record(frame: bytes) -> bytes:
    """One record: the frame's length (4 bytes, big-endian) and the frame."""
    if not 0 < len(frame) <= MAX_FRAME_BYTES:
        raise ValueError("a frame is 1 to MAX_FRAME_BYTES bytes")
    return len(frame).to_bytes(4, "big") + frame


def encode_transcript(frames: list[bytes]) -> bytes:
    return MAGIC + b"".join(record(f) for f in frames)


@dataclass(slots=True)
class ParsedTranscript:
    frames: list[bytes]
    complete_bytes: int
    """How many bytes the whole records (and the header) take: the file's sound prefix."""
    tail_error: ProtocolError | None
    """Set when bytes follow the last whole record (a truncated or damaged record)."""


def parse_transcript(data: bytes) -> ParsedTranscript:
    """Split a transcript into frames. Raises ``bad_header``; a damaged tail is reported, not raised."""
    if not data.startswith(MAGIC):
        if data.startswith(MAGIC[:-3]):
            raise ProtocolError(Code.BAD_HEADER, "an unknown transcript format version", 0)
        raise ProtocolError(Code.BAD_HEADER, "not a koikoi transcript (the header is wrong)", 0)
    frames: list[bytes] = []
    pos = len(MAGIC)
    end = len(data)
    tail: ProtocolError | None = None
    while pos < end:
        if end - pos < 4:
            tail = ProtocolError(Code.TRUNCATED, f"the file ends inside record {len(frames)}'s length", len(frames))
            break
        n = int.from_bytes(data[pos : pos + 4], "big")
        if n == 0 or n > MAX_FRAME_BYTES:
            tail = ProtocolError(Code.TRUNCATED, f"record {len(frames)} has an impossible length ({n})", len(frames))
            break
        if pos + 4 + n > end:
            tail = ProtocolError(Code.TRUNCATED, f"the file ends inside record {len(frames)}", len(frames))
            break
        frames.append(data[pos + 4 : pos + 4 + n])
        pos += 4 + n
    return ParsedTranscript(frames, pos, tail)
