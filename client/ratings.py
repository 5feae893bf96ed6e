"""Ratings anyone can recompute: every transcript audited, each match counted once, the players rated by key.

The pipeline (``koikoi ratings PATH…``):

1. :func:`read_inputs` turns the paths into :class:`Input` (a label and the bytes) or :class:`BadInput`
   (a missing path, an unreadable file: one line each, the rest still counts). A folder gives its
   ``*.koikoi`` files, recursively, in name order. A source is anything with ``pending()`` (:class:`Source`):
   files and folders (:class:`PathSource`), and a relay's archive (:class:`ArchiveSource`: an ``http(s)://``
   index, every page of it, each file fetched when loaded and checked against the index's size and
   SHA-256: a file that differs is a :class:`BadInput`, so the rest is rated exactly as the same files
   given locally).
2. :func:`audit_input` audits each one with :func:`koikoi.protocol.audit.audit` — the audit's verdict is the
   one verdict (a winner is never decided here) — and keeps what the count needs (:class:`Audited`).
3. :func:`count_matches` groups the files by match id. Both seats' files of a match hold the same line
   (the chain of message hashes the audit accepted, superseded messages left out), or one a prefix of the
   other's; the verdict of the longest one that reaches a verdict is the match's, counted once. Files whose
   verdicts differ (two end messages crossed, a countersigner kept its RESULT: spec/protocol.md §6.1,
   §6.4) are left out (``disagree``); a fork that changes no verdict (a loser's file that resigns at an
   earlier point, a line that stops after a message its signer equivocated) leaves the match as it was,
   so nobody can erase a loss with a second file. Unfinished, abandoned and invalid files are left out,
   as is a match with one key on both seats. A file that proves nothing (``invalid``) takes no part in a
   match: it can neither count nor veto one.
4. :func:`rate` rates the decided matches (complete, resigned, forfeit, on_time: a win by a proven fault
   or on time is a win; a complete match without a winner is a draw) in a fixed order — by match id, since
   a transcript holds no signed time (spec/protocol.md §9) — with OpenSkill's Plackett–Luce model, every
   ``mu`` and ``sigma`` rounded to :data:`DIGITS` decimals after every update, so no float error can
   accumulate and the same files give the same table on any machine.
5. :func:`table_json` is the table as a JSON object and :func:`canonical_json` its one encoding (sorted keys,
   no spaces): byte for byte the same whatever the order of the files or their paths. Files appear in it by
   their SHA-256, never by path.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.client
import itertools
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from openskill.models import PlackettLuce, PlackettLuceRating

from .. import __version__
from ..errors import RemoteError
from ..protocol.audit import DECIDED, AuditReport, audit
from ..protocol.codes import Status
from .archive import MAX_INDEX_MATCHES, PAGE, Entry, NotAnIndex, read_index
from .commands.audit import MAX_FILE_BYTES, NotATranscriptFile, read_transcript_file

__all__ = [
    "DIGITS",
    "MODEL",
    "ArchiveSource",
    "Audited",
    "BadInput",
    "Counted",
    "CountedMatch",
    "Input",
    "LeftOut",
    "PathSource",
    "Pending",
    "RatedPlayer",
    "Source",
    "audit_input",
    "audit_inputs",
    "canonical_json",
    "count_matches",
    "pending",
    "rate",
    "read_inputs",
    "source_for",
    "table_json",
]

DIGITS = 6
"""Every ``mu`` and ``sigma`` is rounded to this many decimals after every update (and so is the rating)."""
MODEL = "openskill.PlackettLuce"
"""The rating model's name in the table (OpenSkill's defaults: mu 25, sigma 25/3, beta 25/6, tau 25/300)."""
FORMAT = 1
"""The table's ``format``: raised if a key changes its meaning."""


@dataclass(frozen=True, slots=True)
class Input:
    """One transcript's bytes and where they came from (a path, later a URL)."""

    label: str
    data: bytes
    match_id: str | None = None
    """The match id the file must audit to, when its source names one (an archive's index does)."""


@dataclass(frozen=True, slots=True)
class BadInput:
    """Something given that is no transcript to read: ``usage`` when it does not exist or is no file."""

    label: str
    message: str
    usage: bool


@dataclass(frozen=True, slots=True)
class Pending:
    """A transcript named but not read yet: ``load()`` reads it (a file now; a ``/matches/ID.koikoi`` later)."""

    label: str
    load: Callable[[], Input | BadInput]


class Source(Protocol):
    """Where transcripts come from: files and folders (:class:`PathSource`); an archive (a ``/matches`` JSON
    index and its ``ID.koikoi`` files) is one more. ``pending()`` names every transcript before any is read
    (so their number is known), each read when loaded."""

    def pending(self) -> Iterator[Pending | BadInput]: ...


@dataclass(frozen=True, slots=True)
class PathSource:
    """A file (any name: it is read as a transcript) or a folder (its ``*.koikoi`` files, recursively)."""

    path: str

    def pending(self) -> Iterator[Pending | BadInput]:
        p = Path(self.path)
        if p.is_dir():
            try:
                found = sorted(str(f) for f in p.rglob("*.koikoi") if f.is_file())
            except OSError as e:
                yield BadInput(self.path, f"cannot read the folder: {e.strerror}", False)
                return
            for f in found:
                yield Pending(f, functools.partial(_read_file, f))
            return
        yield Pending(self.path, functools.partial(_read_file, self.path))


def _read_file(path: str) -> Input | BadInput:
    try:
        return Input(path, read_transcript_file(path))
    except NotATranscriptFile as e:
        return BadInput(path, e.message, e.usage)


TIMEOUT_S = 30.0
"""How long a fetch waits for the server to answer or send more."""
DEADLINE_S = 300.0
"""The longest one fetch may take, all of it (a server sending a byte at a time gets no further)."""
MAX_INDEX_PAGE_BYTES = 16 * 1024 * 1024
"""The largest page of an index read (the relay's own answers are at most this)."""
MAX_INDEX_PAGES = MAX_INDEX_MATCHES // PAGE
"""The most pages of an index read: :data:`~koikoi.client.archive.MAX_INDEX_MATCHES` in full pages (a server
giving one match a page gets no further)."""


class FetchError(RemoteError):
    """A URL that could not be read (the message says why, in one line); ``status`` the HTTP status of an
    answer that was an error."""

    def __init__(self, message: str, status: int | None = None, *, cut: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.cut = cut
        """The server closed or reset the connection before answering: a relay's per-address limit on new
        connections does so (a relay answers each HTTP request on a connection of its own): worth asking again."""


def origin(url: str) -> tuple[str, str]:
    """A URL's scheme and ``host[:port]`` (lower case): an archive's pages and files are all on its index's."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), parts.netloc.rpartition("@")[2].lower()


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the same scheme, host and port (never to ``ftp:``, ``file:``, another host)."""

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        if origin(newurl) != origin(req.full_url):
            raise FetchError(f"the server answered {code}: a redirect to {_shown(newurl)}, not followed (another host)")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class _Deadline:
    """The sockets one fetch opened, shut when its deadline passes (a server sending a byte at a time, in the
    status line, the headers or the body, gets no further)."""

    def __init__(self) -> None:
        self.socks: list[socket.socket] = []
        self.passed = False
        self._lock = threading.Lock()

    def opened(self, sock: socket.socket) -> None:
        with self._lock:
            self.socks.append(sock)
            if self.passed:
                self._shut(sock)

    def expire(self) -> None:
        with self._lock:
            self.passed = True
            for sock in self.socks:
                self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        try:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)  # (the plain socket's: under TLS too)
        except OSError:
            pass

    def handlers(self) -> list[urllib.request.BaseHandler]:
        deadline = self

        class Http(http.client.HTTPConnection):
            def connect(self) -> None:
                super().connect()
                deadline.opened(self.sock)

        class Https(http.client.HTTPSConnection):
            def connect(self) -> None:
                super().connect()
                deadline.opened(self.sock)

        class HttpHandler(urllib.request.HTTPHandler):
            def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
                return self.do_open(Http, req)

        class HttpsHandler(urllib.request.HTTPSHandler):
            def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
                return self.do_open(Https, req)

        return [HttpHandler(), HttpsHandler(), _SameOrigin()]


RETRY_WAITS_S = (0.5, 1.0, 2.0, 4.0, 8.0, 8.0)
"""How long to wait before asking again after a connection the server cut before answering (a relay lets an
address open 2 new connections a second after a burst of 30, and each HTTP request takes one)."""


def fetch(url: str, max_bytes: int) -> bytes:
    """:func:`fetch_once`, asked again after each of :data:`RETRY_WAITS_S` when the server cut the connection
    before answering (``FetchError.cut``)."""
    for wait in RETRY_WAITS_S:
        try:
            return fetch_once(url, max_bytes)
        except FetchError as e:
            if not e.cut:
                raise
        time.sleep(wait)
    return fetch_once(url, max_bytes)


def fetch_once(url: str, max_bytes: int) -> bytes:
    """The body of ``GET url``: at most ``max_bytes``, in :data:`DEADLINE_S`, every wait at most
    :data:`TIMEOUT_S`, a redirect followed only on the same host. :class:`FetchError` (why, in a few words,
    the URL not repeated) for anything else."""
    deadline = _Deadline()
    timer = threading.Timer(DEADLINE_S, deadline.expire)
    timer.daemon = True
    timer.start()
    try:
        return _fetch(url, max_bytes, urllib.request.build_opener(*deadline.handlers()))
    except FetchError:
        if deadline.passed:
            raise FetchError(f"not all sent in {DEADLINE_S:g} s") from None
        raise
    finally:
        timer.cancel()
        if deadline.passed:  # (cut off as it returned: what it read may be whole, but late is late)
            raise FetchError(f"not all sent in {DEADLINE_S:g} s")


def _fetch(url: str, max_bytes: int, opener: urllib.request.OpenerDirector) -> bytes:
    req = urllib.request.Request(url, headers={"User-Agent": f"koikoi/{__version__}"})
    too_big = f"more than {max_bytes} bytes"
    try:
        with opener.open(req, timeout=TIMEOUT_S) as r:
            length = r.headers.get("Content-Length")
            if length is not None and length.isdigit() and int(length) > max_bytes:
                raise FetchError(too_big)
            chunks: list[bytes] = []
            got = 0
            while True:
                chunk = r.read1(min(1 << 16, max_bytes + 1 - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
                if got > max_bytes:
                    raise FetchError(too_big)
            return b"".join(chunks)
    except urllib.error.HTTPError as e:
        raise FetchError(f"the server answered {e.code} {_shown(str(e.reason))}", e.code) from None
    except urllib.error.URLError as e:
        if isinstance(e.reason, TimeoutError):
            raise FetchError(f"no answer from {_where(url)} in {TIMEOUT_S:g} s") from None
        why = e.reason.strerror if isinstance(e.reason, OSError) and e.reason.strerror else str(e.reason)
        cut = isinstance(e.reason, ConnectionResetError | http.client.RemoteDisconnected)
        raise FetchError(f"cannot reach {_where(url)}: {_shown(why)}", cut=cut) from None
    except TimeoutError:
        raise FetchError(f"no answer from {_where(url)} in {TIMEOUT_S:g} s") from None
    except http.client.RemoteDisconnected:  # closed before any answer
        raise FetchError(f"{_where(url)} closed the connection before answering", cut=True) from None
    except http.client.HTTPException as e:  # a bad status line, a body cut short
        raise FetchError(f"not a valid HTTP answer ({type(e).__name__})") from None
    except ConnectionResetError:  # reset before or while answering
        raise FetchError(f"{_where(url)} reset the connection", cut=True) from None
    except (OSError, ValueError) as e:  # a malformed URL, another failure of the socket
        raise FetchError(_shown(e.strerror if isinstance(e, OSError) and e.strerror else str(e))) from None


def _shown(text: str, limit: int = 200) -> str:
    """What a server sent, as one line of plain text: a control character (a newline, a terminal's escape)
    shown escaped, at most ``limit`` characters."""
    out = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def _where(url: str) -> str:
    return _shown(urllib.parse.urlsplit(url).netloc or url)


@dataclass(frozen=True, slots=True)
class ArchiveSource:
    """A relay's archive: its index at ``url`` (``http(s)://HOST/matches``), every page followed, and its
    ``ID.koikoi`` files beside it (``url/ID.koikoi``). An index that cannot be read (unreachable, not JSON,
    not an archive index) is one :class:`BadInput` and none of its files is read."""

    url: str

    def files_url(self) -> str:
        """Where the index's files are: ``<the index URL, its query dropped>/``."""
        return self.url.split("?", 1)[0].split("#", 1)[0].rstrip("/") + "/"

    def pending(self) -> Iterator[Pending | BadInput]:
        try:
            entries = self._index()
        except NotAnIndex as e:
            yield BadInput(self.url, str(e), False)
            return
        base = self.files_url()
        for entry in entries:
            url = f"{base}{entry.id}.koikoi"
            yield Pending(url, functools.partial(_fetch_file, url, entry))

    def _index(self) -> list[Entry]:
        """Every page's matches, in order. :class:`NotAnIndex` (one line) when a page cannot be read or is
        wrong: the whole index is, then (a part of a league table is not its table)."""
        entries: list[Entry] = []
        relay: str | None = None
        url: str | None = self.url
        page = 0
        while url is not None:
            page += 1
            try:
                body = fetch(url, MAX_INDEX_PAGE_BYTES)
                index = read_index(body)
            except (FetchError, NotAnIndex) as e:
                why = str(e)
                if page == 1 and isinstance(e, FetchError) and e.status == 404:
                    why += " (no archive here? koikoi relay --archive serves one at /matches)"
                raise NotAnIndex(why if page == 1 else f"page {page} ({_shown(url)}): {why}") from None
            if relay is not None and index.relay != relay:
                raise NotAnIndex(f"page {page} ({_shown(url)}) is another relay's archive")
            relay = index.relay
            if entries and index.matches and index.matches[0].id <= entries[-1].id:
                raise NotAnIndex(f"page {page} ({_shown(url)}) does not follow the page before it")
            entries.extend(index.matches)
            if len(entries) > MAX_INDEX_MATCHES:
                raise NotAnIndex(f"the index lists more than {MAX_INDEX_MATCHES} matches")
            url = index.next
            if url is not None and origin(url) != origin(self.url):
                raise NotAnIndex(f"page {page}'s next page is on another host, not followed: {_shown(url)}")
            if url is not None and page == MAX_INDEX_PAGES:
                raise NotAnIndex(f"the index has more than {MAX_INDEX_PAGES} pages")
        return entries


def _fetch_file(url: str, entry: Entry) -> Input | BadInput:
    size, sha256 = entry.bytes, entry.sha256
    if size > MAX_FILE_BYTES:
        return BadInput(url, f"the index says {size} bytes, more than a transcript file may hold", False)
    try:
        data = fetch(url, MAX_FILE_BYTES)
    except FetchError as e:
        return BadInput(url, str(e), False)
    if len(data) != size:
        return BadInput(url, f"not the file the index lists ({len(data)} bytes, not {size}): left out", False)
    if hashlib.sha256(data).hexdigest() != sha256:
        return BadInput(url, "not the file the index lists (another SHA-256): left out", False)
    return Input(url, data, entry.id)


def source_for(arg: str) -> Source:
    """The source a command-line argument names: an ``http(s)://`` URL is an archive's index, anything else a
    path."""
    if arg.startswith(("http://", "https://")):
        return ArchiveSource(arg)
    return PathSource(arg)


def pending(args: Iterable[str]) -> list[Pending | BadInput]:
    """Every transcript the arguments name, in the order given, none read yet (a bad argument is a
    :class:`BadInput`, and the rest go on)."""
    out: list[Pending | BadInput] = []
    for arg in args:
        out.extend(source_for(arg).pending())
    return out


def read_inputs(args: Iterable[str]) -> Iterator[Input | BadInput]:
    """Every input the arguments name, read one by one (:func:`pending`)."""
    for p in pending(args):
        yield p if isinstance(p, BadInput) else p.load()


@dataclass(frozen=True, slots=True)
class Audited:
    """What the count needs of one audited file."""

    label: str
    sha256: str
    status: str
    match_id: str | None
    keys: tuple[str | None, str | None]
    """The two players' public keys (hex), None before their HELLO."""
    players: tuple[str | None, str | None]
    """Their fingerprints."""
    winner: int | None
    line: tuple[bytes, ...]
    """The hashes of the messages of the line the audit accepted, in order."""
    error: str | None
    """The first error's message (None when the file is valid)."""


def audit_input(item: Input) -> Audited:
    """Audit one input (the audit's verdict, unchanged)."""
    return audited(item.label, item.data, audit(item.data))


def audit_inputs(items: Iterable[Input | BadInput]) -> Iterator[Audited | BadInput]:
    """Each input audited (a :class:`BadInput` passed on as it is). The same bytes are audited once: both
    seats' files of a match are byte for byte the same unless an end message crossed a move."""
    seen: dict[str, Audited] = {}
    for item in items:
        if isinstance(item, BadInput):
            yield item
            continue
        digest = hashlib.sha256(item.data).hexdigest()
        done = seen.get(digest)
        if done is None:
            done = seen[digest] = audit_input(item)
        if item.match_id is not None and done.match_id is not None and done.match_id != item.match_id:
            yield BadInput(item.label, f"not the file the index lists (match {done.match_id}): left out", False)
            continue
        yield dataclasses.replace(done, label=item.label)


def audited(label: str, data: bytes, rep: AuditReport) -> Audited:
    """The count's view of a report already made from ``data``."""
    ref = rep.referee
    keys: list[str | None] = [None, None]
    line: tuple[bytes, ...] = ()
    if ref is not None:
        keys = [h.public_key.hex() if h is not None else None for h in ref.hellos]
        line = tuple(m.hash for m in ref.msgs)
    return Audited(
        label,
        hashlib.sha256(data).hexdigest(),
        rep.status,
        rep.match_id,
        (keys[0], keys[1]),
        (rep.players[0], rep.players[1]),
        rep.result["winner"],
        line,
        rep.errors[0].message if rep.errors else None,
    )


@dataclass(frozen=True, slots=True)
class CountedMatch:
    """A match counted once: its verdict (from the file with the longest line) and every file of it."""

    match_id: str
    status: str
    keys: tuple[str, str]
    players: tuple[str, str]
    winner: int | None
    files: tuple[Audited, ...]


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A match or a file not rated, and why: ``reason`` is its status (``unfinished``, ``abandoned``,
    ``invalid``), ``disagree`` (its files' lines fork) or ``same_key`` (one key on both seats)."""

    match_id: str | None
    reason: str
    files: tuple[Audited, ...]
    detail: str


@dataclass(slots=True)
class Counted:
    """The decided matches to rate (in rating order) and everything left out (in a fixed order)."""

    matches: list[CountedMatch] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    files: int = 0


def _fork(a: tuple[bytes, ...], b: tuple[bytes, ...]) -> int | None:
    """The first sequence number where two lines differ, None when one is a prefix of the other."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None


def _result_words(winner: int | None) -> str:
    return "a draw" if winner is None else f"seat {winner} won"


def count_matches(files: Iterable[Audited]) -> Counted:
    """Each match once (module docstring, step 3)."""
    out = Counted()
    groups: dict[str, list[Audited]] = {}
    for f in files:
        out.files += 1
        if f.status == Status.INVALID or f.match_id is None:
            out.left_out.append(LeftOut(f.match_id, f.status, (f,), f.error or ""))
            continue
        groups.setdefault(f.match_id, []).append(f)
    for match_id in sorted(groups):
        group = sorted(groups[match_id], key=lambda f: (-len(f.line), f.sha256, f.label))
        decided = [f for f in group if f.status in DECIDED]  # (longest line first)
        if len({f.winner for f in decided}) > 1:
            forks = [_fork(a.line, b.line) for a, b in itertools.combinations(decided, 2)]
            seq = min(x for x in forks if x is not None)
            results = " and ".join(sorted({_result_words(f.winner) for f in decided}))
            detail = f"the files' verdicts differ ({results}): their lines fork at sequence {seq}"
            out.left_out.append(LeftOut(match_id, "disagree", tuple(group), detail))
            continue
        longest = decided[0] if decided else group[0]
        if longest.status not in DECIDED:
            out.left_out.append(LeftOut(match_id, longest.status, tuple(group), longest.error or ""))
            continue
        k0, k1 = longest.keys
        p0, p1 = longest.players
        assert k0 is not None and k1 is not None and p0 is not None and p1 is not None  # (a decided match)
        if k0 == k1:
            out.left_out.append(LeftOut(match_id, "same_key", tuple(group), "one key played both seats"))
            continue
        out.matches.append(CountedMatch(match_id, longest.status, (k0, k1), (p0, p1), longest.winner, tuple(group)))
    out.left_out.sort(key=lambda x: (x.match_id or "", x.reason, [f.sha256 for f in x.files]))
    return out


@dataclass(slots=True)
class RatedPlayer:
    key: str
    fingerprint: str
    mu: float
    sigma: float
    matches: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def rating(self) -> float:
        """The conservative rating shown and sorted on: ``mu - 3 sigma``, rounded."""
        return round(self.mu - 3 * self.sigma, DIGITS)


def rate(
    matches: Sequence[CountedMatch], after: Callable[[Iterable[RatedPlayer]], object] | None = None
) -> list[RatedPlayer]:
    """Rate the matches in the order given (:func:`count_matches`'s: by match id); the players, best first
    (by rating, then by key). ``after`` is called with every player rated so far after each match."""
    model = PlackettLuce()
    players: dict[str, RatedPlayer] = {}
    for m in matches:
        seats = []
        for key, fp in zip(m.keys, m.players, strict=True):
            p = players.get(key)
            if p is None:
                p = players[key] = RatedPlayer(key, fp, round(model.mu, DIGITS), round(model.sigma, DIGITS))
            seats.append(p)
        ranks = [0.0, 0.0] if m.winner is None else [0.0 if s == m.winner else 1.0 for s in (0, 1)]
        teams: list[list[PlackettLuceRating]] = [[model.rating(mu=p.mu, sigma=p.sigma)] for p in seats]
        new = model.rate(teams, ranks=ranks)
        for seat, p in enumerate(seats):
            r = new[seat][0]
            p.mu = round(r.mu, DIGITS)
            p.sigma = round(r.sigma, DIGITS)
            p.matches += 1
            if m.winner is None:
                p.draws += 1
            elif m.winner == seat:
                p.wins += 1
            else:
                p.losses += 1
        if after is not None:
            after(players.values())
    return sorted(players.values(), key=lambda p: (-p.rating, p.key))


def table_json(counted: Counted, players: Sequence[RatedPlayer]) -> dict[str, Any]:
    """The table as JSON (docs/players.md, "Ratings"): nothing in it depends on the files' paths or order."""
    reasons: dict[str, int] = {}
    for x in counted.left_out:
        reasons[x.reason] = reasons.get(x.reason, 0) + 1
    return {
        "format": FORMAT,
        "model": MODEL,
        "order": "match_id",
        "files": counted.files,
        "rated": len(counted.matches),
        "players": [
            {
                "rank": i + 1,
                "player": p.fingerprint,
                "key": p.key,
                "rating": p.rating,
                "mu": p.mu,
                "sigma": p.sigma,
                "matches": p.matches,
                "wins": p.wins,
                "losses": p.losses,
                "draws": p.draws,
            }
            for i, p in enumerate(players)
        ],
        "left_out": {
            "counts": dict(sorted(reasons.items())),
            "matches": [
                {
                    "match_id": x.match_id,
                    "reason": x.reason,
                    "files": sorted(f.sha256 for f in x.files),
                }
                for x in counted.left_out
            ],
        },
    }


def canonical_json(obj: Any) -> str:
    """The one encoding of a table: sorted keys, no spaces, UTF-8 text as is, one line."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
