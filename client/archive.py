"""A relay's public archive: a folder of transcripts, one per finished match, and its read-only HTTP routes.

``koikoi relay --archive DIR`` keeps it (docs/operators.md, "The archive"):

- :func:`archivable` decides which matches go in: the audit of the line the relay forwarded is valid with a
  decided status (complete, resigned, forfeit, on_time), names this relay's key, and, for a private room,
  both players' HELLOs consent (``publish``). It holds only what the two players signed.
- :func:`write` puts a transcript in the folder as ``<match id hex>.koikoi``: a temporary file in the same
  folder, fsynced, then linked to its name (never replacing a file already there: a different one is kept,
  and said so), the folder fsynced.
- :func:`routes` serves the folder: ``GET /matches`` the index (below), ``GET /matches/ID.koikoi`` a file's
  bytes (ID exactly 64 lowercase hex digits: no other name, no path, reaches the disk).

The index (``application/json``), ordered by id, :data:`PAGE` matches a page::

    {"format": 1, "relay": FINGERPRINT, "matches": [{"id": ID, "bytes": N, "sha256": HEX}, ...], "next": URL}

``next`` is the absolute URL of the next page (``BASE/matches?after=LAST_ID``) or null on the last page.
``?after=ID`` lists the matches whose id is greater than ``ID``. ``BASE`` is the archive's public address,
the one clients reach (``koikoi relay --archive-url``; by default the relay's own ``http://HOST:PORT``): the
routes are asked with a path only, so they cannot know which name a client used.

:func:`read_index` is the other side: one page of an index checked, shape by shape, before anything in it
is used (``koikoi ratings http://relay/matches``).
"""

from __future__ import annotations

import bisect
import errno
import hashlib
import json
import os
import re
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from ..errors import RemoteError
from ..protocol.audit import DECIDED, AuditReport
from ..protocol.errors import ProtocolError
from ..protocol.messages import parse
from ..protocol.spectator import Spectator
from ..protocol.witness import fingerprint as witness_fingerprint
from ..relay.effects import Archive

__all__ = [
    "FORMAT",
    "MAX_SERVED_BYTES",
    "PAGE",
    "Entry",
    "Index",
    "Kept",
    "NotAnIndex",
    "Routes",
    "Written",
    "archivable",
    "archiver",
    "count",
    "file_name",
    "keep",
    "not_archivable",
    "read_index",
    "ready",
    "routes",
    "write",
]

FORMAT = 1
"""The index's ``format``."""
PAGE = 1000
"""Matches in one page of the index."""
MAX_SERVED_BYTES = 16 * 1024 * 1024
"""The largest body the relay's HTTP answer carries: a bigger file (none the relay writes: its room log is
capped well below) is left out of the index."""
MAX_INDEX_MATCHES = 1_000_000
"""The most matches a reader takes from one index, all pages together."""

_HEX64 = re.compile(r"[0-9a-f]{64}")
_FILE = re.compile(r"([0-9a-f]{64})\.koikoi")
_TEXT = "text/plain; charset=utf-8"


# ---------------------------------------------------------------------------------------------- what goes in


def not_archivable(report: AuditReport, private: bool, *, relay: str | None = None) -> str | None:
    """Why the match this report audits stays out of the archive (a few words), None when it goes in.
    ``relay``: this relay's key fingerprint; a line whose HELLOs name another key (or none) stays out."""
    if report.status not in DECIDED or not report.valid:
        return f"status {report.status}"
    if report.match_id is None:
        return "no match id"
    if relay is not None and report.relay != relay:
        return "another relay's key"
    if private and report.publish != [True, True]:  # (each seat's HELLO's consent)
        return "a private room, not both players publish"
    return None


def archivable(report: AuditReport, private: bool, *, relay: str | None = None) -> bool:
    """Whether the match goes in the archive (:func:`not_archivable`)."""
    return not_archivable(report, private, relay=relay) is None


# ---------------------------------------------------------------------------------------------- writing


class Written(StrEnum):
    """What :func:`write` did."""

    WRITTEN = "written"
    SAME = "same"
    """The same bytes were there already."""
    KEPT = "kept"
    """A different file of that match was there: it is kept, the new one is not written."""


def file_name(match_id: bytes | str) -> str:
    """``<64 hex digits>.koikoi``. ``match_id``: 32 bytes, or their 64 lowercase hex digits."""
    if isinstance(match_id, bytes):
        if len(match_id) != 32:
            raise ValueError(f"a match id is 32 bytes, not {len(match_id)}")
        return match_id.hex() + ".koikoi"
    if not _HEX64.fullmatch(match_id):
        raise ValueError("a match id is 64 lowercase hex digits")
    return match_id + ".koikoi"


def _holds(path: Path, data: bytes) -> bool:
    try:
        return path.read_bytes() == data
    except OSError:
        return False


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # (a platform that cannot open a folder)
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write(folder: str | os.PathLike[str], data: bytes, match_id: bytes | str) -> Written:
    """Put ``data`` in the folder as the match's file, atomically: a reader sees the whole file or none.
    Never replaces a file already there. OSError when the folder cannot be written."""
    folder = Path(folder)
    target = folder / file_name(match_id)
    if target.exists():
        return Written.SAME if _holds(target, data) else Written.KEPT
    fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # (public: mkstemp makes it 0600)
        try:
            os.link(tmp, target)  # atomic, and never replaces what is there
        except FileExistsError:
            return Written.SAME if _holds(target, data) else Written.KEPT
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise
            # a file system without hard links: rename (replaces on POSIX, so look first; a race between two
            # writers of one match id is the only way to lose, and both write that match's line)
            if target.exists():
                return Written.SAME if _holds(target, data) else Written.KEPT
            os.rename(tmp, target)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    _fsync_dir(folder)
    return Written.WRITTEN


def ready(folder: Path) -> str | None:
    """Make the archive's folder if missing and check it can be written: None, or why not (a few words)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(prefix=".", suffix=".tmp", dir=folder):
            pass
    except OSError as e:
        return f"cannot write there: {e.strerror or e}"
    return None


def count(folder: Path) -> int:
    """The matches in the archive's folder."""
    try:
        with os.scandir(folder) as it:
            return sum(1 for e in it if _FILE.fullmatch(e.name))
    except OSError:
        return 0


def keep(folder: Path, room: str, private: bool, frames: Iterable[tuple[int, bytes]], relay_key: bytes) -> Kept:
    """Follow a room's log with the :class:`~koikoi.protocol.spectator.Spectator` (the watcher's line: the
    auditor's own checks), and write its transcript if :func:`archivable`. A frame a seat sent signed for the
    other seat is left out first (no honest seat sends one: :func:`_sent_for_the_other_seat`)."""
    spectator = Spectator(room=room, relay_key=relay_key)
    for seat, frame in frames:
        if _sent_for_the_other_seat(seat, frame):
            continue
        spectator.feed(seat, frame)
    report = spectator.report()
    why = not_archivable(report, private, relay=witness_fingerprint(relay_key))
    if why is not None or report.match_id is None:
        return Kept(None, report, why or "no match id")
    return Kept(write(folder, spectator.transcript(), report.match_id), report, None)


def _sent_for_the_other_seat(seat: int, frame: bytes) -> bool:
    """A message signed for the seat that did not send it. The relay takes a frame from a seat's own
    connection and logs none twice, so an honest seat never sends one (its echo of the other's message is a
    repeat, not logged): such a frame is the sender's making, say a HELLO for the other seat under a key of its
    own, which would make the Spectator follow a line nobody plays and keep the match out for one frame."""
    try:
        return parse(frame).seat != seat
    except ProtocolError:
        return False  # (junk: the Spectator counts it, and it changes nothing)


@dataclass(frozen=True, slots=True)
class Kept:
    """What :func:`keep` did: ``written`` (None: left out, ``why``), and the audit of the room's line."""

    written: Written | None
    report: AuditReport
    why: str | None


def archiver(folder: Path, relay_key: bytes, log: Callable[..., None]) -> Callable[[Archive], None]:
    """The relay's ``on_archive`` hook for ``koikoi relay --archive DIR``: each room handed over is kept
    (:func:`keep`) and logged, ``archive_written`` (``match_id``, ``status``, ``result``: written, same or
    kept) or ``archive_skipped`` (``reason``); a private room's code is never logged. Raises OSError when the
    folder cannot be written (the relay logs it and goes on)."""

    def on_archive(a: Archive) -> None:
        kept = keep(folder, a.room, a.private, a.frames, relay_key)
        where = {} if a.private else {"room": a.room}
        if kept.written is None:
            log("archive_skipped", **where, frames=len(a.frames), status=str(kept.report.status), reason=kept.why)
            return
        log(
            "archive_written",
            **where,
            match_id=kept.report.match_id,
            status=str(kept.report.status),
            result=str(kept.written),
        )

    return on_archive


# ---------------------------------------------------------------------------------------------- serving


@dataclass(frozen=True, slots=True)
class Entry:
    """One match in the index."""

    id: str
    bytes: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "bytes": self.bytes, "sha256": self.sha256}


class Routes:
    """The archive's HTTP routes over a folder (:func:`routes`). Safe to call from several threads."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        relay_fingerprint: str,
        base_url: str | Callable[[], str],
        *,
        page: int = PAGE,
    ) -> None:
        if page < 1:
            raise ValueError("a page holds at least one match")
        self.folder = Path(folder)
        self.relay = relay_fingerprint
        self._base = base_url
        self.page = page
        self._lock = threading.Lock()
        self._sums: dict[str, tuple[int, int, str]] = {}  # name -> (size, mtime_ns, sha256)

    @property
    def base_url(self) -> str:
        base = self._base() if callable(self._base) else self._base
        return base.rstrip("/")

    def __call__(self, target: str) -> tuple[int, str, bytes] | None:
        path, _, query = target.partition("?")
        if path in ("/matches", "/matches/"):
            return self._index(query)
        if path.startswith("/matches/"):
            m = _FILE.fullmatch(path.removeprefix("/matches/"))
            body = self._file(m.group(1)) if m is not None else None
            if body is None:
                return 404, _TEXT, b"not found: no such match in this archive (GET /matches lists them)\n"
            return 200, "application/octet-stream", body
        return None

    def _index(self, query: str) -> tuple[int, str, bytes]:
        try:
            args = parse_qs(query, keep_blank_values=True, strict_parsing=False, max_num_fields=16)
        except ValueError:
            return 400, _TEXT, b"bad request: too many query fields\n"
        after = args.get("after")
        if after is not None and (len(after) != 1 or not _HEX64.fullmatch(after[0])):
            return 400, _TEXT, b"bad request: after=ID takes one match id, 64 lowercase hex digits\n"
        entries, more = self.entries(after[0] if after else None)
        nxt = f"{self.base_url}/matches?after={entries[-1].id}" if more and entries else None
        obj = {"format": FORMAT, "relay": self.relay, "matches": [e.to_json() for e in entries], "next": nxt}
        return 200, "application/json", json.dumps(obj, separators=(",", ":")).encode() + b"\n"

    def entries(self, after: str | None = None) -> tuple[list[Entry], bool]:
        """The page after ``after`` (by id) and whether more follow."""
        try:
            with os.scandir(self.folder) as it:
                names = sorted(e.name for e in it if _FILE.fullmatch(e.name))
        except OSError:
            names = []
        if after is not None:  # (every name is 64 hex digits and .koikoi: their order is their ids')
            names = names[bisect.bisect_right(names, after + ".koikoi") :]
        out: list[Entry] = []
        for name in names:
            if len(out) == self.page:
                return out, True
            e = self._entry(name)
            if e is not None:
                out.append(e)
        return out, False

    def _entry(self, name: str) -> Entry | None:
        path = self.folder / name
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SERVED_BYTES:
            return None
        with self._lock:
            known = self._sums.get(name)
        if known is not None and known[:2] == (st.st_size, st.st_mtime_ns):
            return Entry(name[:64], st.st_size, known[2])
        data = self._read(path)
        if data is None or len(data) != st.st_size:
            return None
        digest = hashlib.sha256(data).hexdigest()
        with self._lock:
            self._sums[name] = (st.st_size, st.st_mtime_ns, digest)
        return Entry(name[:64], st.st_size, digest)

    def _file(self, match_id: str) -> bytes | None:
        return self._read(self.folder / (match_id + ".koikoi"))

    @staticmethod
    def _read(path: Path) -> bytes | None:
        """A regular file's bytes (no symbolic link, nothing bigger than :data:`MAX_SERVED_BYTES`), else None."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SERVED_BYTES:
                return None  # (checked before fdopen, which refuses a folder and leaves its descriptor open)
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read(MAX_SERVED_BYTES + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        return data if len(data) <= MAX_SERVED_BYTES else None


def routes(
    folder: str | os.PathLike[str],
    relay_fingerprint: str,
    *,
    base_url: str | Callable[[], str],
    page: int = PAGE,
) -> Callable[[str], tuple[int, str, bytes] | None]:
    """The relay's ``http_routes`` hook serving the archive in ``folder``: ``(path) -> (status, content type,
    body)``, None for a path that is not the archive's. ``base_url`` (or a function giving it, for a relay
    that knows its port only once listening) is the archive's public ``http(s)://HOST[:PORT][/PREFIX]``."""
    return Routes(folder, relay_fingerprint, base_url, page=page)


# ---------------------------------------------------------------------------------------------- reading


class NotAnIndex(RemoteError):
    """A page that is no archive index (the message says what is wrong, in one line)."""


@dataclass(frozen=True, slots=True)
class Index:
    """One page of an index, checked."""

    relay: str
    matches: tuple[Entry, ...]
    next: str | None


def read_index(body: bytes) -> Index:
    """One page of an index, every field's shape checked (:class:`NotAnIndex` naming the first wrong one)."""
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError):
        raise NotAnIndex("not an archive index: not JSON") from None
    if not isinstance(obj, dict) or "matches" not in obj or "format" not in obj:
        raise NotAnIndex("not an archive index (a relay's archive is at /matches)")
    if type(obj["format"]) is not int or obj["format"] != FORMAT:
        shown = "".join(c if c.isprintable() else "?" for c in str(obj["format"])[:20])
        raise NotAnIndex(f"an archive index of format {shown}, not {FORMAT}")
    relay = obj.get("relay")
    if not isinstance(relay, str) or not 0 < len(relay) <= 100:
        raise NotAnIndex("not an archive index: no relay fingerprint")
    matches = obj["matches"]
    if not isinstance(matches, list):
        raise NotAnIndex("not an archive index: matches is not a list")
    entries: list[Entry] = []
    for n, m in enumerate(matches):
        where = f"not an archive index: match {n}"
        if not isinstance(m, dict):
            raise NotAnIndex(f"{where} is not an object")
        mid, size, digest = m.get("id"), m.get("bytes"), m.get("sha256")
        if not isinstance(mid, str) or not _HEX64.fullmatch(mid):
            raise NotAnIndex(f"{where}: id is not 64 lowercase hex digits")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise NotAnIndex(f"{where}: bytes is not a size")
        if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
            raise NotAnIndex(f"{where}: sha256 is not 64 lowercase hex digits")
        if entries and mid <= entries[-1].id:
            raise NotAnIndex(f"{where}: not in order of id")
        entries.append(Entry(mid, size, digest))
    nxt = obj.get("next")
    if nxt is not None and (not isinstance(nxt, str) or not nxt.startswith(("http://", "https://"))):
        raise NotAnIndex("not an archive index: next is not an http(s) URL")
    if nxt is not None and not entries:
        raise NotAnIndex("not an archive index: a page with no matches has a next page")
    return Index(relay, tuple(entries), nxt)
