"""Seat files and their locks.

A *seat file* (``<data dir>/seats/*.json``, owner-only: it holds the seat token) remembers how to
take a seat back, so that ``koikoi resume`` can continue after a crash; it is removed when the match
ends. A running match holds an exclusive lock on its seat's lock file (released when the process
ends, however it ends), so ``koikoi resume`` never takes over a seat another process is playing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - no flock (Windows): seats are not locked there
    fcntl = None  # type: ignore[assignment]

from ..relay.client import SeatTicket
from ..support import atomic_write
from .output import NetError, disk_error
from .transcript_file import data_dir, why_not_a_match

__all__ = ["SEAT_FILE_VERSION", "SeatRecord", "find_seat_state", "seat_in_use", "seats_dir"]

SEAT_FILE_VERSION = 1


def seats_dir() -> Path:
    return data_dir() / "seats"


def _seat_file_for(transcript: Path) -> Path:
    key = hashlib.sha256(str(transcript.resolve()).encode()).hexdigest()[:20]
    return seats_dir() / f"{key}.json"


@dataclass
class SeatRecord:
    """What ``koikoi resume`` needs to take a seat back: kept owner-only (it holds the seat token)."""

    transcript: Path
    ticket: SeatTicket
    bot: str | None = None
    json: bool = False
    lang: str | None = None
    assist: bool = True
    embedded: str | None = None
    """``HOST:PORT`` of the relay the host ran itself (resume starts it again there)."""
    grace: float | None = None
    embedded_key: str | None = None
    """The seed (hex) of the key that relay signs certificates with (owner-only, like the token)."""
    plain: bool = False
    """The person played in the plain text mode (``--plain``): resume does too."""

    @property
    def joined(self) -> bool:
        """Whether anyone ever took the other seat (a host's room nobody joined holds no match to go on with)."""
        return self.ticket.seat == 1 or self.ticket.peer_check is not None

    @property
    def path(self) -> Path:
        return _seat_file_for(self.transcript)

    def to_json(self) -> dict[str, Any]:
        t = self.ticket.to_json()
        t["log"] = []
        return {
            "version": SEAT_FILE_VERSION,
            "transcript": str(self.transcript.resolve()),
            "ticket": t,
            "bot": self.bot,
            "json": self.json,
            "lang": self.lang,
            "assist": self.assist,
            "embedded": self.embedded,
            "grace": self.grace,
            "embedded_key": self.embedded_key,
            "plain": self.plain,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> SeatRecord:
        return cls(
            Path(obj["transcript"]),
            SeatTicket.from_json(obj["ticket"]),
            obj.get("bot"),
            bool(obj.get("json", False)),
            obj.get("lang"),
            bool(obj.get("assist", True)),
            obj.get("embedded"),
            obj.get("grace"),
            obj.get("embedded_key"),
            bool(obj.get("plain", False)),
        )

    def save(self) -> None:
        """Write atomically, mode 0600; the first save also takes the seat's lock for this process.
        NetError ``seat_in_use``, ``disk_full`` or ``transcript_error``."""
        path = self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            _hold_seat_lock(path)
            atomic_write(path, json.dumps(self.to_json()).encode(), prefix=".seat-")
        except OSError as e:
            raise disk_error(e, self.transcript) from None

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            _lock_path(self.path).unlink()


_HELD_LOCKS: dict[Path, int] = {}
"""The seat locks this process holds (seat file → the lock file's descriptor)."""


def _lock_path(seat_file: Path) -> Path:
    return seat_file.with_suffix(".lock")


def _hold_seat_lock(seat_file: Path) -> None:
    if fcntl is None or seat_file in _HELD_LOCKS:
        return
    fd = os.open(_lock_path(seat_file), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise NetError("seat_in_use", "this match is being played by another koikoi process on this machine") from None
    _HELD_LOCKS[seat_file] = fd


def seat_in_use(seat_file: Path) -> bool:
    """True while another process plays this seat (holds its lock)."""
    if fcntl is None or seat_file in _HELD_LOCKS:
        return False
    try:
        fd = os.open(_lock_path(seat_file), os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False


def _load_seat_file(path: Path) -> SeatRecord | None:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        if obj.get("version") != SEAT_FILE_VERSION:
            return None
        return SeatRecord.from_json(obj)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def find_seat_state(transcript: Path | None) -> SeatRecord:
    """The seat file of ``transcript``, or of the most recent unfinished match; NetError if none."""
    if transcript is not None:
        if not transcript.exists():
            raise NetError("usage", f"no such transcript: {transcript}")
        seat_file = _seat_file_for(transcript)
        if seat_in_use(seat_file):
            raise NetError(
                "seat_in_use", f"{transcript} is being played right now by another koikoi process on this machine"
            )
        st = _load_seat_file(seat_file)
        if st is None:
            why = why_not_a_match(transcript)  # (a file that never was a match to resume says so)
            if why is not None:
                raise NetError("not_resumable", f"{transcript} cannot be resumed: {why}")
            raise NetError(
                "not_resumable",
                f"{transcript} cannot be resumed: no seat ticket for it on this machine "
                "(the match has finished, or it was not played here)",
            )
        return st
    best: tuple[float, SeatRecord] | None = None
    d = seats_dir()
    for p in d.glob("*.json") if d.is_dir() else []:
        if seat_in_use(p):  # another process is playing it: not ours to take
            continue
        st = _load_seat_file(p)
        if st is None or not st.joined:  # (a room nobody joined: nothing to go on with; give its PATH to try)
            continue
        try:
            mtime = st.transcript.stat().st_mtime
        except OSError:
            continue
        if best is None or mtime > best[0]:
            best = (mtime, st)
    if best is None:
        raise NetError("not_resumable", f"no unfinished match to resume (looked in {d})")
    return best[1]
