"""Networked play: one seat of a match through a relay, driven by trio.

The pieces (``koikoi host``, ``koikoi join`` and ``koikoi resume`` wire them):

* a :class:`Link` keeps a connection to the relay: it opens the seat (create,
  join or take it back with the ticket), forwards what arrives into the match's
  inbox (a trio memory channel), and when the connection drops it reconnects
  with exponential backoff and takes the seat back (``resume`` with the seat
  token), for as long as ``KOIKOI_RECONNECT_TIMEOUT`` allows;
* the protocol :class:`~koikoi.protocol.session.Session` (sans-IO) decides
  everything about the match; :class:`NetGame` feeds it frames and the
  player's decisions, writes every record to the transcript *before* sending
  the frame (write-ahead: a crash loses nothing), and runs the session's timers
  with trio cancel scopes;
* the player is a bot (``--bot NAME`` or ``cmd:PROGRAM``) or a person at the
  terminal (:mod:`koikoi.client.tui`), asked in a worker thread
  (``trio.to_thread.run_sync``) so that timers and the network keep running;
* a *seat file* (``<data dir>/seats/*.json``, owner-only: it holds the seat
  token) remembers how to take the seat back, so that ``koikoi resume`` can
  continue after a crash; it is removed when the match ends.

Output: text for people, or with ``--json`` one JSON event per line (``room``,
``match_start``, ``round_end``, ``match_end``, ``error``). Exit 0 after a
finished match, 1 when it was aborted or could not start.

Timing knobs (seconds, environment): ``KOIKOI_MOVE_TIMEOUT`` (120),
``KOIKOI_HANDSHAKE_TIMEOUT`` (60), ``KOIKOI_RESULT_TIMEOUT`` (60),
``KOIKOI_TIMEOUT_WARNING`` (30), ``KOIKOI_RECONNECT_TIMEOUT`` (180: how long to
keep trying to reach the relay again), ``KOIKOI_CONNECT_TIMEOUT`` (10),
``KOIKOI_BOT_DELAY`` (0: a pause before each bot move, to watch a bot match),
``KOIKOI_LINGER`` (10: how long an embedded relay waits for the opponent to
finish after the host's match ended). ``KOIKOI_DEBUG_NET=1`` traces the link and the
match loop on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import random
import shlex
import socket
import sys
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

try:
    import fcntl
except ImportError:  # pragma: no cover - no flock (Windows): seats are not locked there
    fcntl = None  # type: ignore[assignment]

from ..engine.actions import Action
from ..engine.bots import Bot
from ..engine.match import RoundResult, SeatView, Settings
from ..protocol.errors import CODES, ProtocolError
from ..protocol.session import Event as SessionEvent
from ..protocol.session import (
    MatchStarted,
    OwnTimeExpired,
    RoomSettings,
    RoundEnded,
    Session,
    SessionClosed,
    TimeoutPolicy,
    TimeoutWarning,
)
from ..relay.client import (
    TRANSIENT,
    Frame,
    PeerEvent,
    RelayClient,
    RelayClosed,
    RelayError,
    ResumeInfo,
    RoomClosed,
    SeatTicket,
    connect,
)
from ..relay.observe import EventLog
from ..relay.server import Relay, RelayConfig, open_relay
from ..relay.support import TokenBucket, atomic_write, first_of
from .botspec import BotError, BotSpec, BotSpecError, bot_from_spec, close_bot, parse_bot_spec
from .config import ConfigError, load_config, resolve_relay
from .identity import IdentityError, load_or_create
from .transcript_file import TranscriptWriter, data_dir, open_for_resume
from .tui import Console, PlayerQuit, Seats, look_for

__all__ = [
    "DEFAULT_LISTEN",
    "DEFAULT_RELAY",
    "RETRY",
    "Link",
    "NetError",
    "NetGame",
    "Output",
    "SeatState",
    "Tuning",
    "add_player_arguments",
    "bot_spec_arg",
    "check_new_transcript",
    "embedded_relay",
    "find_error",
    "find_seat_state",
    "linger",
    "load_key",
    "look_options",
    "new_transcript_path",
    "parse_listen",
    "public_url",
    "relay_error_text",
    "relay_from_config",
    "replay_session",
    "reported",
    "resume_seat",
    "seats_dir",
    "settings_json",
    "settings_text",
]

DEFAULT_LISTEN = "127.0.0.1:7878"
DEFAULT_RELAY = "ws://127.0.0.1:7878"
SEAT_FILE_VERSION = 1
SEND_RATE = 30.0
"""Frames per second a seat sends at most, sustained (the relay's default limit is 50 messages/s)."""
SEND_BURST = 120
"""Frames a seat may send at once (the relay's default burst is 200)."""
RETRY = TRANSIENT | {"rate_limited", "protocol_error"}
"""Relay error codes after which the link connects again."""


# ---------------------------------------------------------------------------- knobs


def _env_seconds(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        x = float(text)
    except ValueError:
        raise NetError("usage", f"{name} must be a number of seconds, not {text!r}") from None
    if not x >= 0 or math.isinf(x):
        raise NetError("usage", f"{name} must be 0 or more seconds, not {text!r}")
    return x


@dataclass(frozen=True, slots=True)
class Tuning:
    """Timers and knobs (from the environment; see the module docstring)."""

    timeouts: TimeoutPolicy = field(default_factory=TimeoutPolicy)
    reconnect_s: float = 180.0
    connect_s: float = 10.0
    bot_delay: float = 0.0
    linger_s: float = 10.0

    @classmethod
    def from_env(cls) -> Tuning:
        d = TimeoutPolicy()
        t = TimeoutPolicy(
            move=_env_seconds("KOIKOI_MOVE_TIMEOUT", d.move),
            handshake=_env_seconds("KOIKOI_HANDSHAKE_TIMEOUT", d.handshake),
            result=_env_seconds("KOIKOI_RESULT_TIMEOUT", d.result),
            warning=_env_seconds("KOIKOI_TIMEOUT_WARNING", d.warning),
        )
        return cls(
            t,
            reconnect_s=_env_seconds("KOIKOI_RECONNECT_TIMEOUT", 180.0),
            connect_s=max(0.1, _env_seconds("KOIKOI_CONNECT_TIMEOUT", 10.0)),
            bot_delay=_env_seconds("KOIKOI_BOT_DELAY", 0.0),
            linger_s=_env_seconds("KOIKOI_LINGER", 10.0),
        )


class NetError(Exception):
    """A failure to report in words (and with its ``code`` in ``--json``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


_DEBUG = bool(os.environ.get("KOIKOI_DEBUG_NET"))


def _debug(*parts: object) -> None:
    """``KOIKOI_DEBUG_NET=1``: what the link and the match loop do, with times, on stderr."""
    if _DEBUG:
        print(f"[net {time.monotonic():.3f}]", *parts, file=sys.stderr, flush=True)


def find_error(exc: BaseException) -> NetError | RelayError | None:
    """The first NetError / RelayError inside ``exc`` (trio wraps errors in exception groups)."""
    return first_of(exc, NetError) or first_of(exc, RelayError)


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6); ValueError naming what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise ValueError(f"--listen wants HOST:PORT, not {text!r}")
    host = host.strip("[]")
    try:
        p = int(port)
    except ValueError:
        raise ValueError(f"--listen: {port!r} is not a port number") from None
    if not 0 <= p <= 65535:
        raise ValueError(f"--listen: port {p} is not in 0..65535")
    return host, p


def settings_text(rounds: int | None, double_at_8: bool | None) -> str:
    r = "? rounds" if rounds is None else f"{rounds} rounds"
    if double_at_8 is None:
        return r
    return f"{r}, {Settings(rounds or 6, double_at_8).doubling_label}"


# ---------------------------------------------------------------------------- output


class Output:
    """Text for people on stdout, or one JSON event per line (``--json``). Errors in words on stderr."""

    def __init__(self, prog: str, json_mode: bool, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.prog = prog
        self.json = json_mode
        self.url = ""
        """The relay, for error messages."""
        self.room: str | None = None
        self.expect: tuple[int | None, bool | None] = (None, None)
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr

    def _write(self, stream: TextIO, text: str) -> None:
        try:
            stream.write(text + "\n")
            stream.flush()
        except (OSError, ValueError):
            pass
        except UnicodeEncodeError:
            with contextlib.suppress(OSError, ValueError):
                stream.write(text.encode("ascii", "replace").decode("ascii") + "\n")
                stream.flush()

    def event(self, name: str, **fields: Any) -> None:
        if self.json:
            self._write(self.out, json.dumps({"event": name, **fields}, ensure_ascii=False))

    def say(self, *lines: str) -> None:
        """For people: stdout in text mode, nothing with --json."""
        if not self.json:
            for line in lines:
                self._write(self.out, line)

    def note(self, *lines: str) -> None:
        """Progress worth knowing (reconnecting, the opponent away): stdout, or stderr with --json."""
        for line in lines:
            self._write(self.err if self.json else self.out, line)

    def error(self, code: str, message: str, **extra: Any) -> None:
        self._write(self.err, f"{self.prog}: {message}")
        self.event("error", code=code, message=message, **extra)


# ---------------------------------------------------------------------------- seat files


def seats_dir() -> Path:
    return data_dir() / "seats"


def _seat_file_for(transcript: Path) -> Path:
    key = hashlib.sha256(str(transcript.resolve()).encode()).hexdigest()[:20]
    return seats_dir() / f"{key}.json"


@dataclass
class SeatState:
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
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> SeatState:
        return cls(
            Path(obj["transcript"]),
            SeatTicket.from_json(obj["ticket"]),
            obj.get("bot"),
            bool(obj.get("json", False)),
            obj.get("lang"),
            bool(obj.get("assist", True)),
            obj.get("embedded"),
            obj.get("grace"),
        )

    def save(self) -> None:
        """Write atomically, mode 0600; the first save also takes the seat's lock for this process."""
        path = self.path
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _hold_seat_lock(path)
        atomic_write(path, json.dumps(self.to_json()).encode(), prefix=".seat-")

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            _lock_path(self.path).unlink()


# A running match holds an exclusive lock on its seat's lock file (released when the process ends,
# however it ends), so `koikoi resume` never takes over a seat that another process is playing.
_HELD_LOCKS: dict[Path, int] = {}


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


def _load_seat_file(path: Path) -> SeatState | None:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        if obj.get("version") != SEAT_FILE_VERSION:
            return None
        return SeatState.from_json(obj)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def find_seat_state(transcript: Path | None) -> SeatState:
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
            raise NetError(
                "not_resumable",
                f"{transcript} cannot be resumed: no seat ticket for it on this machine "
                "(the match has finished, or it was not played here)",
            )
        return st
    best: tuple[float, SeatState] | None = None
    d = seats_dir()
    for p in d.glob("*.json") if d.is_dir() else []:
        if seat_in_use(p):  # another process is playing it: not ours to take
            continue
        st = _load_seat_file(p)
        if st is None:
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


# ---------------------------------------------------------------------------- relay link


async def resume_seat(client: RelayClient, ticket: SeatTicket) -> ResumeInfo:
    """Take the seat back, also after this program crashed.

    After a crash the ticket's counters may be behind (frames were sent after the seat file was
    saved) and its resend log is empty: the relay's ``received`` sets the frame number to go on
    from, and whatever the other side never got is sent again by the protocol
    (``Session.unacknowledged``), so nothing is lost."""
    return await client.resume(ticket, renumber_on_gap=True)


Acquire = Callable[[RelayClient], Awaitable[SeatTicket]]


class Link:
    """The connection to the relay, kept up: reconnects with backoff and takes the seat back.

    Posts to the inbox: ``("connected", info)``, ``("frame", bytes)``, ``("peer", PeerEvent)``,
    ``("lost", RelayError)``, ``("room_closed", RoomClosed)``, ``("gave_up", RelayError)``."""

    def __init__(self, url: str, tuning: Tuning, inbox: trio.MemorySendChannel[tuple[Any, ...]]) -> None:
        self.url = url
        self.tuning = tuning
        self.inbox = inbox
        self.client: RelayClient | None = None
        self.ticket: SeatTicket | None = None
        self.reconnects = 0
        self.stopped = trio.Event()
        self._stopping = False
        self._scope: trio.CancelScope | None = None
        self._bucket = TokenBucket.full(SEND_RATE, SEND_BURST, trio.current_time())

    def stop(self) -> None:
        """Stop serving and close the connection cleanly (the WebSocket closing handshake)."""
        self._stopping = True
        if self._scope is not None:
            self._scope.cancel()

    async def run(
        self, acquire: Acquire, *, task_status: trio.TaskStatus[SeatTicket] = trio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            async with connect(self.url, timeout=self.tuning.connect_s) as client:
                self.ticket = await acquire(client)
                task_status.started(self.ticket)
                if await self._serve(client, None) != "lost":
                    return
            await self._keep_up()
        finally:
            self.stopped.set()

    async def _serve(self, client: RelayClient, info: ResumeInfo | None) -> str:
        """Forward what arrives until the connection is lost, the room closes, or :meth:`stop`."""
        if self._stopping:
            return "stopped"
        self.client = client
        try:
            with trio.CancelScope() as self._scope:
                await self.inbox.send(("connected", info))
                while True:
                    try:
                        ev = await client.receive()
                    except RoomClosed as e:
                        self.client = None
                        await self.inbox.send(("room_closed", e))
                        return "closed"
                    except RelayClosed as e:
                        self.client = None
                        if e.code not in RETRY:  # "replaced": another program took this seat back
                            await self.inbox.send(("gave_up", e))
                            return "closed"
                        await self.inbox.send(("lost", e))
                        return "lost"
                    except RelayError as e:
                        if e.code == "resume_gap":
                            # the relay wants frames this program no longer has (it was restarted): connect
                            # again, so that the relay says where to number from; the protocol resends them
                            with trio.move_on_after(2):
                                await client.ws.aclose()
                        await self.inbox.send(("relay_error", e))
                        continue
                    if isinstance(ev, Frame):
                        await self.inbox.send(("frame", ev.data))
                    else:
                        await self.inbox.send(("peer", ev))
            return "stopped"
        finally:
            self.client = None
            self._scope = None

    async def _keep_up(self) -> None:
        assert self.ticket is not None
        delay = 0.1
        deadline = trio.current_time() + self.tuning.reconnect_s
        last: RelayError = RelayError("connection_lost", "the connection to the relay was lost")
        patience = 2.0  # a dying relay may take a connection and never answer: short tries first
        while not self._stopping:
            with trio.CancelScope() as self._scope:
                _debug("reconnecting, delay", delay)
                try:
                    async with connect(self.url, timeout=min(patience, self.tuning.connect_s)) as client:
                        info = await resume_seat(client, self.ticket)
                        self.reconnects += 1
                        delay = 0.1
                        self._scope = None
                        if await self._serve(client, info) != "lost":
                            return
                        deadline = trio.current_time() + self.tuning.reconnect_s
                        continue
                except RelayError as e:
                    _debug("reconnect failed:", e.code, e.message)
                    patience *= 2
                    if e.code not in RETRY:
                        await self.inbox.send(("gave_up", e))
                        return
                    last = e
                if trio.current_time() + delay > deadline:
                    await self.inbox.send(("gave_up", last))
                    return
                await trio.sleep(delay)
                delay = min(delay * 2, 3.0)

    async def send(self, frame: bytes) -> None:
        """Send now if connected; otherwise (or if it fails) the frame is sent again after the reconnect."""
        await self._pace()
        client = self.client
        if client is None:
            return
        try:
            await client.send(frame)
        except RelayError:
            pass

    async def _pace(self) -> None:
        """Stay under the relay's rate limit (a fast bot could otherwise send faster than it allows)."""
        await trio.sleep(self._bucket.wait_for_one(trio.current_time()))
        self._bucket.take(trio.current_time())


# ---------------------------------------------------------------------------- the match


class _Stop(Exception):
    def __init__(self, code: str, message: str, keep_seat: bool) -> None:
        self.code = code
        self.message = message
        self.keep_seat = keep_seat


class NetGame:
    """One seat's match over a relay. Build it, then ``await game.main(url, acquire, prepare)``."""

    def __init__(
        self, out: Output, tuning: Tuning, *, bot_spec: BotSpec | None, lang: str | None, assist: bool
    ) -> None:
        self.out = out
        self.tuning = tuning
        self.bot_spec = bot_spec
        self.lang = lang
        self.assist = assist
        self.bot: Bot | None = None
        self.console: Console | None = None
        self.session: Session | None = None
        self.writer: TranscriptWriter | None = None
        self.state: SeatState | None = None
        self.link: Link | None = None
        self.url = ""
        self.grace: float | None = None
        self._inbox_send, self._inbox = trio.open_memory_channel[tuple[Any, ...]](1024)
        self._nursery: trio.Nursery | None = None
        self._deciding: trio.CancelScope | None = None
        self._decision_epoch = -1
        self._peer_away = False
        self._connected = False
        self._failure: str | None = None
        self._started_shown = False

    # -- setup ---------------------------------------------------------------

    def make_player(self, seat: int, rounds: int) -> None:
        """The bot (or the person) for this seat, and the console that narrates (text mode)."""
        look, notice = look_for(sys.stdout, lang=self.lang, assist=self.assist)
        if not self.out.json:
            self.console = Console(
                sys.stdin,
                sys.stdout,
                Seats(seat, ("Opponent", "Opponent")),
                look,
                rounds=rounds,
                pause_between_rounds=False,
            )
            if notice:
                self.console.say(notice)
        if self.bot_spec is not None:
            try:
                self.bot = bot_from_spec(self.bot_spec, random.Random(os.urandom(16)))
            except (BotError, BotSpecError) as e:
                raise NetError("bot_failed", f"the bot cannot start: {e}") from None
        elif self.out.json:
            raise NetError("usage", "--json needs --bot: a person plays in the text mode")

    def resumed(self, info: ResumeInfo) -> None:
        """The seat was taken back (``koikoi resume``): is the opponent there?"""
        s = self.session
        self._peer_away = info.peer != "present" and s is not None and s.opponent_fingerprint is not None

    def close(self) -> None:
        if self.bot is not None:
            close_bot(self.bot)
        if self.writer is not None:
            self.writer.close()

    async def main(self, url: str, acquire: Acquire, prepare: Callable[[SeatTicket], None]) -> int:
        """Open the seat, build the session (``prepare``), play; return the exit code."""
        self.url = url
        async with trio.open_nursery() as nursery:
            self.link = Link(url, self.tuning, self._inbox_send)
            ticket: SeatTicket = await nursery.start(self.link.run, acquire)
            prepare(ticket)
            code = await self.play()
            self.link.stop()
            with trio.move_on_after(3):
                await self.link.stopped.wait()
            nursery.cancel_scope.cancel()
        return code

    # -- the loop ------------------------------------------------------------

    async def play(self) -> int:
        s = self.session
        assert s is not None and self.link is not None
        if s.match is not None:  # resumed mid-match: catch the narration up silently
            self._show_started()
            if self.console is not None:
                self.console.narrator.feed(s.match.log)
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            try:
                await self._flush(s.start())
                epoch, started = -1, trio.current_time()
                while not s.is_finished:
                    w = s.wait()
                    now = trio.current_time()
                    if w is not None and w.epoch != epoch:
                        epoch, started = w.epoch, now
                    if self._paused():
                        started = now  # the opponent's (or our) connection is down: the clock waits
                    self._maybe_decide()
                    deadline = None if self._paused() else s.next_deadline()
                    wait_s = math.inf if deadline is None else started + deadline - now
                    with trio.move_on_after(max(0.0, wait_s)):
                        item = await self._inbox.receive()
                        await self._handle(item)
                        continue
                    await self._flush(s.time_passed(epoch, trio.current_time() - started))
            except _Stop as stop:
                nursery.cancel_scope.cancel()
                return self._stopped(stop)
            if self._deciding is not None:
                self._deciding.cancel()
            code = await self._finish()
            nursery.cancel_scope.cancel()
            return code

    def _paused(self) -> bool:
        return self._peer_away or not self._connected

    def _maybe_decide(self) -> None:
        s = self.session
        assert s is not None
        if not s.my_turn:
            return
        w = s.wait()
        assert w is not None
        if self._decision_epoch == w.epoch:
            return
        self._decision_epoch = w.epoch
        assert self._nursery is not None
        self._nursery.start_soon(self._decide, s.view(), w.epoch)

    async def _decide(self, view: SeatView, epoch: int) -> None:
        with trio.CancelScope() as scope:
            self._deciding = scope
            try:
                if self.bot is not None:
                    if self.tuning.bot_delay:
                        await trio.sleep(self.tuning.bot_delay)
                    action = await trio.to_thread.run_sync(self.bot.choose, view, abandon_on_cancel=True)
                else:
                    assert self.console is not None
                    action = await trio.to_thread.run_sync(self.console.player.choose, view, abandon_on_cancel=True)
            except PlayerQuit as q:
                await self._inbox_send.send(("quit", q.reason))
            except BotError as e:
                await self._inbox_send.send(("bot_failed", str(e)))
            except Exception as e:  # a bot's own bug: say so, never a traceback
                await self._inbox_send.send(("bot_failed", f"{e.__class__.__name__}: {e}"))
            else:
                await self._inbox_send.send(("action", epoch, action))

    async def _handle(self, item: tuple[Any, ...]) -> None:
        s = self.session
        assert s is not None and self.link is not None
        kind = item[0]
        _debug("item", kind, "" if kind == "frame" else item[1:])
        if kind == "frame":
            await self._flush(s.receive(item[1]))
        elif kind == "action":
            _, epoch, action = item
            w = s.wait()
            if w is not None and w.epoch == epoch and s.my_turn:
                await self._play(action)
        elif kind == "connected":
            first = not self._connected and self.link.reconnects == 0 and item[1] is None
            self._connected = True
            if not first:
                info: ResumeInfo | None = item[1]
                self.out.note(
                    "Connected to the relay again"
                    + (" (it had restarted; the room is rebuilt)." if info is not None and info.restored else ".")
                )
                if info is not None:
                    self._peer_away = info.peer != "present" and s.opponent_fingerprint is not None
            for frame in s.unacknowledged():
                await self.link.send(frame)
        elif kind == "lost":
            self._connected = False
            e: RelayError = item[1]
            self.out.note(f"Lost the connection to the relay ({e.code}); reconnecting…")
        elif kind == "peer":
            await self._peer(item[1])
        elif kind == "relay_error":
            pass
        elif kind == "room_closed":
            await self._room_closed(item[1])
        elif kind == "gave_up":
            e = item[1]
            if e.code == "replaced":
                raise _Stop(
                    "replaced", "another koikoi program took this seat back (koikoi resume?); this one stops here", True
                )
            if e.code not in RETRY:
                raise _Stop(
                    e.code,
                    f"the relay refused to give the seat back ({e.code}: {e.message}); the match "
                    f"is saved in {self._transcript_arg()}",
                    True,
                )
            raise _Stop(
                "relay_unreachable",
                f"cannot reach the relay at {self.url} any more ({e.message}); the "
                f"match is saved: continue it with `koikoi resume {self._transcript_arg()}`",
                True,
            )
        elif kind == "quit":
            self.out.note("You left the match: it counts as a resignation.")
            self._failure = "quit"
            with contextlib.suppress(SessionClosed):
                await self._flush(s.resign())
        elif kind == "bot_failed":
            self._failure = f"the bot failed: {item[1]}"
            self.out.note(f"The bot failed ({item[1]}): resigning.")
            with contextlib.suppress(SessionClosed):
                await self._flush(s.resign())

    async def _play(self, action: Action) -> None:
        s = self.session
        assert s is not None
        try:
            events = s.play(action)
        except Exception as e:  # an illegal action from a bot: resign rather than cheat
            self._failure = f"the player chose an illegal action ({e})"
            events = s.resign()
        await self._flush(events)

    async def _peer(self, ev: PeerEvent) -> None:
        s = self.session
        assert s is not None and self.link is not None
        if ev.event == "joined":
            if self.state is not None:
                self.state.save()  # now holds the joiner's peer_check: enough to rebuild the room
            self.out.say("Your opponent has joined.")
        elif ev.event == "away":
            self._peer_away = True
            grace = f"{ev.grace_s:g} s" if ev.grace_s is not None else "a while"
            self.grace = ev.grace_s
            self.out.note(f"Your opponent's connection dropped; the relay keeps the seat for {grace}.")
        elif ev.event == "back":
            self._peer_away = False
            self.out.note("Your opponent is back.")
            for frame in s.unacknowledged():
                await self.link.send(frame)

    async def _room_closed(self, e: RoomClosed) -> None:
        s = self.session
        assert s is not None
        if s.is_finished:
            return
        if e.code in ("opponent_left", "opponent_quit"):
            self._connected = True  # nothing more to wait for from the relay
            grace = self.grace if self.grace is not None else 0
            try:
                await self._flush(s.claim_timeout("left", grace))
            except SessionClosed:
                raise _Stop(e.code, f"the room closed: {e.message}", False) from None
            return
        raise _Stop(
            e.code if e.code in ("timeout",) else "room_closed",
            f"the relay closed the room ({e.code}: {e.message}); the match cannot go on",
            False,
        )

    async def _flush(self, events: list[SessionEvent]) -> None:
        """Write every record, then send the frames, then show the events (in that order)."""
        s = self.session
        assert s is not None and self.writer is not None and self.link is not None
        synced = False
        for rec in s.records():
            self.writer.append(rec.frame, sync=rec.sync)
            synced = synced or rec.sync
        for frame in s.frames_to_send():
            await self.link.send(frame)
        for ev in events:
            self._show(ev)
        if self.console is not None and s.match is not None:
            try:
                self.console.show_events(s.match.log)
            except OSError:  # the terminal or pipe went away: a bot plays on unseen, a person cannot
                if self.bot is None:
                    raise _Stop(
                        "output_closed",
                        "the terminal went away: the match is saved; continue it with "
                        f"`koikoi resume {self._transcript_arg()}`",
                        True,
                    ) from None
                self.console = None
        if synced and self.state is not None and not s.is_finished:
            self.state.save()  # the ticket's counters, at each round's end

    # -- showing -------------------------------------------------------------

    def _show_started(self) -> None:
        s = self.session
        assert s is not None
        r = s.referee
        if self._started_shown or r.first_dealer is None:
            return
        self._started_shown = True
        opp = s.opponent_fingerprint
        self.out.event("match_start", seat=s.seat, first_dealer=r.first_dealer, opponent=opp)
        who = "You deal" if r.first_dealer == s.seat else "Your opponent deals"
        role = "the room's creator" if s.seat == 0 else "the joiner"
        self.out.say(
            f"The match begins: you are seat {s.seat} ({role}).",
            f"Your key: {s.fingerprint}; your opponent's: {opp} — compare them aloud.",
            f"{who} first (chosen by the commit-reveal coin flip: neither side could steer it).",
        )

    def _show(self, ev: SessionEvent) -> None:
        s = self.session
        assert s is not None
        if isinstance(ev, RoomSettings):
            self.out.say(
                f"The creator ({ev.creator}) signed the room's settings: "
                f"{settings_text(ev.settings.rounds, ev.settings.double_at_8)}."
            )
        elif isinstance(ev, MatchStarted):
            self._show_started()
        elif isinstance(ev, RoundEnded):
            r: RoundResult = ev.result
            self.out.event("round_end", round=r.round, winner=r.winner, payment=r.payment, points=list(r.points))
        elif isinstance(ev, TimeoutWarning):
            who = "You have" if ev.seat == s.seat else "Your opponent has"
            self.out.note(f"{who} {ev.seconds_left:.0f} s left for the {ev.what}.")
        elif isinstance(ev, OwnTimeExpired):
            self.out.note(f"Your time for the {ev.what} is up: your opponent may now claim the match.")

    def _transcript_arg(self) -> str:
        return shlex.quote(str(self.state.transcript)) if self.state is not None else ""

    # -- endings -------------------------------------------------------------

    async def _finish(self) -> int:
        s = self.session
        assert s is not None and s.ended is not None and self.link is not None
        await self._deliver_last()
        return self.report_outcome()

    def report_outcome(self) -> int:
        """Say how the (finished) match ended, forget the seat, close the transcript; the exit code."""
        s = self.session
        assert s is not None and s.ended is not None
        outcome = s.ended.outcome
        if self.state is not None:
            self.state.remove()
        if self.writer is not None:
            self.writer.close()
        path = str(self.state.transcript) if self.state is not None else None
        me = s.seat
        pts = list(outcome.points)
        if outcome.status == "complete":
            self.out.event("match_end", points=pts, winner=outcome.winner, transcript=path)
            mine, theirs = pts[me], pts[1 - me]
            verdict = (
                "You won" if outcome.winner == me else "Your opponent won" if outcome.winner is not None else "A draw"
            )
            self.out.say(
                "", f"Match over: {verdict}, {mine} to {theirs}. Both players signed the result.", f"Transcript: {path}"
            )
            return 0
        code = outcome.code or "aborted"
        message = self._ending_text(outcome.code, outcome.message, outcome.by, outcome.winner)
        self.out.error(code, message, winner=outcome.winner, points=pts, transcript=path)
        self.out.say(f"Transcript: {path}")
        return 1

    def _ending_text(self, code: str | None, message: str, by: int | None, winner: int | None) -> str:
        s = self.session
        assert s is not None
        me = s.seat
        if self._failure is not None and by == me:
            head = f"match abandoned: {self._failure}"
        elif code == "opponent_left":
            head = (
                "your opponent left and did not come back within the grace period"
                if by == me
                else "you were away past the grace period; your opponent claimed the match"
            )
        elif code == "timeout":
            head = (
                "your opponent did not move in time"
                if by == me
                else "you did not move in time; your opponent claimed the match"
            )
        elif code == "resigned":
            head = "you resigned" if by == me else "your opponent resigned"
        elif code == "settings_mismatch":
            head = f"the room's settings differ from what you expect ({message})"
        else:
            what = CODES.get(code or "", message)
            side = "your opponent's message" if by == me else "your message (as your opponent saw it)"
            head = f"the match was aborted: {code}: {what} — {side}: {message}"
        if winner is None:
            tail = "nobody wins"
        else:
            tail = "you win the match by forfeit" if winner == me else "your opponent wins the match by forfeit"
        if code == "settings_mismatch":
            return head
        return f"{head}; {tail}"

    async def _deliver_last(self) -> None:
        """Make sure the last frames went out on a live connection; then leave the room if done."""
        s = self.session
        assert s is not None and self.link is not None
        if not self._connected:
            with trio.move_on_after(self.tuning.reconnect_s + 1):
                while not self._connected:
                    item = await self._inbox.receive()
                    if item[0] in ("gave_up", "room_closed"):
                        break
                    if item[0] == "connected":
                        self._connected = True
                        for frame in s.unacknowledged():
                            await self.link.send(frame)
        client = self.link.client
        if client is not None and not s.unacknowledged():
            with trio.move_on_after(3), contextlib.suppress(RelayError):
                await client.leave(done=True)

    def _stopped(self, stop: _Stop) -> int:
        if self.state is not None and not stop.keep_seat:
            self.state.remove()
        path = str(self.state.transcript) if self.state is not None else None
        self.out.error(stop.code, stop.message, transcript=path)
        return 1


# ---------------------------------------------------------------------------- helpers for the commands


def relay_error_text(
    e: RelayError, url: str, room: str | None = None, expect: tuple[int | None, bool | None] = (None, None)
) -> tuple[str, str]:
    """``(code, message)`` in words for a refused request."""
    code = e.code
    r = room or "?"
    if code == "relay_unreachable":
        return code, f"cannot reach the relay at {url} (is it running? is the address right?)"
    if code == "room_not_found":
        return code, f"no room {r} on the relay at {url} (check the code; it may have closed)"
    if code == "wrong_password":
        if "wrong" in e.message:
            return code, f"wrong password for room {r}"
        return code, f"room {r} needs a password (--password)"
    if code == "room_full":
        return code, f"room {r} is full: two players are already in it"
    if code == "settings_mismatch":
        st = e.extra.get("settings") if isinstance(e.extra.get("settings"), dict) else {}
        assert isinstance(st, dict)
        parts = []
        if expect[0] is not None and st.get("rounds") is not None and expect[0] != st.get("rounds"):
            parts.append(f"rounds: you {expect[0]}, room {st.get('rounds')}")
        if expect[1] is not None and st.get("double_at_8") is not None and expect[1] != st.get("double_at_8"):
            parts.append(
                f"doubling at 8+: you {'on' if expect[1] else 'off'}, room {'on' if st.get('double_at_8') else 'off'}"
            )
        return code, "the room's settings differ from what you expect: " + ("; ".join(parts) or e.message)
    if code == "too_many_attempts":
        return code, f"the relay refuses for now: {e.message}"
    if code == "room_closed":
        return code, f"room {r} has closed ({e.extra.get('reason', e.message)})"
    return code, f"the relay at {url} refused: {e.message}"


def load_key() -> Ed25519PrivateKey:
    try:
        key, _created = load_or_create()
    except IdentityError as e:
        raise NetError("identity", str(e)) from None
    return key


def new_transcript_path(room: str, role: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    base = data_dir() / "transcripts"
    path = base / f"{stamp}-{room}-{role}.koikoi"
    i = 2
    while path.exists():
        path = base / f"{stamp}-{room}-{role}-{i}.koikoi"
        i += 1
    return path


def check_new_transcript(text: str | None) -> Path | None:
    """The ``--transcript`` path, checked before anything starts (NetError ``usage``)."""
    if text is None:
        return None
    p = Path(text).expanduser()
    if p.exists():
        raise NetError("usage", f"{p} already exists: choose another --transcript (a transcript is never overwritten)")
    if p.parent and not p.parent.exists():
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise NetError("usage", f"cannot create {p.parent}: {e.strerror}") from None
    return p


@contextlib.asynccontextmanager
async def embedded_relay(listen: str, grace: float | None) -> AsyncIterator[Relay]:
    """A relay in this program (``koikoi host`` without --relay), quiet, for the duration of the block."""
    host, port = parse_listen(listen)
    cfg = RelayConfig(host=host, port=port)
    if grace is not None:
        cfg.grace = grace
    started = False
    try:
        async with open_relay(cfg, log=EventLog(enabled=False)) as relay:
            started = True
            yield relay
    except BaseException as exc:  # trio wraps the listen error in an exception group
        err = None if started else first_of(exc, OSError)
        if err is None:
            raise
        raise NetError(
            "relay_unreachable",
            f"cannot start a relay on {listen}: {err.strerror or err} (is another relay running there? "
            "use --listen HOST:PORT, or --relay URL to use that one)",
        ) from None


async def linger(relay: Relay, room: str, seconds: float) -> None:
    """Keep an embedded relay up until the opponent is done with the room (at most ``seconds``)."""
    with trio.move_on_after(seconds):
        while True:
            r = relay.rooms.get(room)
            if r is None or r.closed is not None or r.seats[1].conn is None:
                return
            await trio.sleep(0.05)


def public_url(relay: Relay) -> str:
    """The URL a friend uses: a wildcard listen address is replaced by this machine's name."""
    host = relay.cfg.host
    if host in ("0.0.0.0", "::", ""):
        return f"ws://{socket.gethostname()}:{relay.port}"
    return relay.url


def reported(out: Output, body: Callable[[], int]) -> int:
    """Run ``body``; a NetError / RelayError (also inside trio's exception groups) becomes one line
    (and an ``error`` event) and exit code 1 (2 for usage errors)."""
    try:
        return body()
    except KeyboardInterrupt:
        out.error("interrupted", "interrupted: the match so far is saved; continue it with `koikoi resume`")
        return 1
    except (NetError, RelayError, BaseExceptionGroup) as exc:
        err = find_error(exc)
        if err is None:
            if isinstance(exc, BaseExceptionGroup) and exc.subgroup(KeyboardInterrupt) is not None:
                out.error("interrupted", "interrupted: the match so far is saved; continue it with `koikoi resume`")
                return 1
            raise
        if isinstance(err, NetError):
            out.error(err.code, err.message)
            return 2 if err.code == "usage" else 1
        code, message = relay_error_text(err, out.url, out.room, out.expect)
        out.error(code, message)
        return 1


def replay_session(key: Ed25519PrivateKey, path: Path, tuning: Tuning) -> tuple[Session, TranscriptWriter]:
    """The session rebuilt from a transcript file, and a writer that appends to it."""
    try:
        frames, writer = open_for_resume(path)
    except ProtocolError as e:
        raise NetError("not_resumable", f"{path}: {e.message}") from None
    except OSError as e:
        raise NetError("not_resumable", f"cannot open {path}: {e.strerror}") from None
    try:
        session = Session.from_transcript(key, frames, tuning.timeouts)
    except ProtocolError as e:
        writer.close()
        raise NetError("not_resumable", f"{path} is damaged ({e.code}: {e.message})") from None
    except ValueError as e:
        writer.close()
        raise NetError("not_resumable", f"{path}: {e}") from None
    return session, writer


def add_player_arguments(p: argparse.ArgumentParser) -> None:
    """The options every networked command shares: who plays, and how it is shown."""
    p.add_argument(
        "--bot", metavar="NAME", help="let a bot play this seat: a built-in bot (random, greedy, strong) or cmd:PROGRAM"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON event per line (room, match_start, round_end, match_end, error); needs --bot",
    )
    p.add_argument("--lang", choices=("en", "ja"), help="card names in English or Japanese (default: from the locale)")
    p.add_argument("--no-assist", action="store_true", help="do not mark the cards that capture")


def bot_spec_arg(text: str | None) -> BotSpec | None:
    """``--bot``, checked (NetError ``usage`` when it names no bot)."""
    if text is None:
        return None
    try:
        return parse_bot_spec(text)
    except BotSpecError as e:
        raise NetError("usage", str(e)) from None


def relay_from_config(cli_value: str | None) -> str | None:
    """--relay, else KOIKOI_RELAY, else the config file (None: none configured)."""
    try:
        url = resolve_relay(cli_value)
    except ConfigError as e:
        raise NetError("config", str(e)) from None
    if url is not None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("ws", "wss") or not parts.hostname:
            raise NetError("usage", f"not a relay URL: {url!r} (expected ws://HOST:PORT or wss://HOST)")
    return url


def look_options(args: argparse.Namespace) -> tuple[str | None, bool]:
    """``(lang, assist)`` from the options, else the config file."""
    try:
        cfg = load_config()
    except ConfigError:
        cfg = None
    lang = args.lang or (cfg.lang if cfg is not None else None)
    assist = not args.no_assist and not (cfg is not None and cfg.assist is False)
    return lang, assist


def settings_json(rounds: int | None, double_at_8: bool | None) -> dict[str, Any]:
    return {"rounds": rounds, "double_at_8": double_at_8}
