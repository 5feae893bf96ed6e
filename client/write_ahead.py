"""The write-ahead transcript of one seat's networked match: every record on disk before its frame is sent.

:class:`WriteAhead` owns the transcript file (:class:`~koikoi.client.transcript_file.TranscriptWriter`), the
seat file (:class:`~koikoi.client.seats.SeatRecord`, what ``koikoi resume`` needs) and the count of messages
this process signed. The match loop hands it the session after every step (:meth:`WriteAhead.write`), sends
the frames it returns, and only then shows what happened: after any crash, the transcript holds every message
this player ever signed, so a resumed match can never sign a different one in its place.

A failed write is a :class:`~koikoi.client.output.NetError` (``disk_full``, ``transcript_error``) naming the
file; nothing unwritten has been sent then.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import signal
from collections.abc import Callable
from pathlib import Path

from ..protocol.session import Session
from .output import disk_error
from .seats import SeatRecord
from .transcript_file import TranscriptWriter

__all__ = ["WriteAhead"]


class _CrashPoints:
    """For tests only: ``KOIKOI_TEST_CRASH=POINT:N`` kills this process (SIGKILL, as ``kill -9`` does)
    at POINT of the write-send cycle of the N-th message it signs: ``torn`` (half its record
    written), ``written`` (the record written, not yet forced to disk), ``synced`` (on disk, not yet
    sent) or ``sent`` (handed to the relay connection)."""

    POINTS = ("torn", "written", "synced", "sent")

    def __init__(self, spec: str) -> None:
        self.point, self.n = "", 0
        point, _, n = spec.partition(":")
        if point in self.POINTS and n.isdigit():
            self.point, self.n = point, int(n)

    def at(self, point: str, n: int, before: Callable[[], None] | None = None) -> None:
        # ``n`` is how many messages the process has signed so far; one write-send cycle may carry two
        # (a move and the next automatic message), so the count can step over N: the cycle that reaches it
        if point == self.point and n >= self.n:
            if before is not None:
                before()
            os.kill(os.getpid(), signal.SIGKILL)


_CRASH = _CrashPoints(os.environ.get("KOIKOI_TEST_CRASH", ""))


class WriteAhead:
    """The seat's transcript and seat file. The commands that set up a match fill in :attr:`writer` and
    :attr:`state` (``koikoi resume``: from the replayed transcript) before the loop plays."""

    def __init__(self) -> None:
        self.writer: TranscriptWriter | None = None
        self.state: SeatRecord | None = None
        self.signed = 0
        """How many messages this process signed and sent (the crash points count them)."""

    def write(self, s: Session) -> tuple[list[bytes], bool]:
        """Append the session's new records and force them to disk when one of them is a frame to send or
        asks for it; return the frames to send now, and whether anything was forced to disk."""
        assert self.writer is not None
        synced = False
        try:
            records = s.records()
            frames = s.frames_to_send()
            own = set(frames)
            for rec in records:
                if rec.frame in own:
                    self.signed += 1
                    _CRASH.at("torn", self.signed, functools.partial(self.writer.write_partial, rec.frame))
                self.writer.append(rec.frame)
                synced = synced or rec.sync
            if frames:
                _CRASH.at("written", self.signed)
            if frames or synced:
                self.writer.sync()
        except OSError as e:
            raise disk_error(e, self.path()) from None
        if frames:
            _CRASH.at("synced", self.signed)
        return frames, synced

    def sent(self) -> None:
        """The frames :meth:`write` returned have been handed to the relay connection."""
        _CRASH.at("sent", self.signed)

    def write_offline(self, s: Session) -> None:
        """With no relay to send to (the room has closed): write the session's records and force them to
        disk; its frames are dropped (nobody is left to receive them)."""
        assert self.writer is not None
        try:
            for rec in s.records():
                self.writer.append(rec.frame)
            self.writer.sync()
        except OSError as e:
            raise disk_error(e, self.path()) from None
        s.frames_to_send()

    def save_seat(self) -> None:
        """Write the seat file again (the ticket's counters; a NetError if the disk refuses)."""
        if self.state is not None:
            self.state.save()

    def path(self) -> Path | str:
        """The transcript's path, for the words of an error."""
        if self.state is not None:
            return self.state.transcript
        return self.writer.path if self.writer is not None else "the transcript"

    def path_arg(self) -> str:
        """The transcript's path as a shell argument (for a ``koikoi resume PATH`` the player may type)."""
        return shlex.quote(str(self.state.transcript)) if self.state is not None else ""

    def shown_path(self) -> str | None:
        """The transcript's path in a match's last words (None: no seat file)."""
        return str(self.state.transcript) if self.state is not None else None

    def finish(self) -> None:
        """The match ended: forget the seat, close the transcript (every record was synced as it was sent)."""
        if self.state is not None:
            self.state.remove()
        self.close()

    def stop(self, *, keep_seat: bool) -> None:
        """The loop stopped before the match's end: forget the seat unless ``keep_seat`` (it can go on)."""
        if self.state is not None and not keep_seat:
            self.state.remove()

    def close(self) -> None:
        if self.writer is not None:
            with contextlib.suppress(OSError):  # a full disk was reported already
                self.writer.close()
