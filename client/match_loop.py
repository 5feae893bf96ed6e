"""The match loop: one seat's match over a relay, driven by trio.

The protocol :class:`~koikoi.protocol.session.Session` (sans-IO) decides everything about the
match; :class:`NetGame` feeds it frames and the player's decisions, writes every record to the
transcript *before* sending the frame (write-ahead: a crash loses nothing), and runs the session's
timers with trio cancel scopes. The player is a bot (``--bot NAME`` or ``cmd:PROGRAM``) or a person
at the terminal (:mod:`koikoi.client.tui`), asked in a worker thread (``trio.to_thread.run_sync``)
so that timers and the network keep running.

Everything that happens reaches the loop through one inbox, as typed events: what the
:class:`~koikoi.client.link.Link` posts (:data:`~koikoi.client.link.LinkEvent`) and what the player
decided (:class:`ActionChosen`, :class:`PlayerLeft`, :class:`BotFailed`).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import random
import shlex
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..engine.actions import Action
from ..engine.bots import Bot
from ..engine.match import RoundResult, SeatView
from ..protocol.errors import CODES
from ..protocol.referee import Outcome
from ..protocol.session import (
    CertificateNeeded,
    CertificateRejected,
    FrameDropped,
    MatchEnded,
    MatchStarted,
    OwnTimeExpired,
    RoomSettings,
    RoundEnded,
    Session,
    SessionClosed,
    TimeoutWarning,
)
from ..protocol.session import Event as SessionEvent
from ..protocol.witness import fingerprint
from ..relay.client import PeerEvent, RelayError, ResumeInfo, RoomClosed, SeatTicket
from .botspec import BotError, BotSpec, BotSpecError, bot_from_spec, close_bot
from .deckmode import deck_of
from .link import (
    RETRY,
    Acquire,
    Connected,
    ConnectionLost,
    FrameArrived,
    GaveUp,
    Link,
    LinkEvent,
    PeerChanged,
    RelayNotice,
    RoomGone,
)
from .output import Expect, NetError, Output, debug, disk_error, mismatch_parts, move_time_text, settings_text
from .seats import SeatState
from .transcript_file import TranscriptWriter
from .tui import Console, Look, PlayerQuit, Seats, look_for, narrate
from .tui.table import want_plain
from .tui.words import WORDS, say
from .tuning import Tuning

if TYPE_CHECKING:
    from .tui.app import BoardTable
    from .tui.table import Table

T = TypeVar("T")

__all__ = [
    "RESULT_STATUSES",
    "ActionChosen",
    "BotFailed",
    "Certified",
    "InboxEvent",
    "NetGame",
    "Player",
    "PlayerLeft",
    "ending_status",
]


# ---------------------------------------------------------------------------- what the player posts


@dataclass(frozen=True, slots=True)
class ActionChosen:
    """The player's decision for the wait ``epoch`` (ignored if the match has moved on)."""

    epoch: int
    action: Action


@dataclass(frozen=True, slots=True)
class PlayerLeft:
    """The person left the match (quit at a prompt, or the input ended)."""

    reason: str


@dataclass(frozen=True, slots=True)
class BotFailed:
    """The bot could not decide (it crashed, or its program misbehaved)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Certified:
    """The relay's silence certificate for the opponent (the answer to ``certify``)."""

    blob: bytes


InboxEvent = LinkEvent | ActionChosen | PlayerLeft | BotFailed | Certified
"""Everything the match loop reacts to."""


class Player(Protocol):
    """Who decides for this seat: a bot, or a person at the terminal (the table engineer's side).

    ``choose`` is called in a worker thread and may block (a person thinking); the loop keeps running
    the network and the clock meanwhile, and abandons the call when the match moves on. A player that
    shows a clock may also have ``set_clock(deadline, move_time_s)``, called before each of its
    decisions: ``deadline`` is the ``time.monotonic()`` value when its time for this decision runs out
    (None: no clock in this match, or the clock is paused while a connection is down); ``move_time_s``
    is the match's bound move time (0: no clock). After the deadline the opponent may win on time."""

    def choose(self, view: SeatView) -> Action: ...


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


RESULT_STATUSES = frozenset({"complete", "resigned", "forfeit", "on_time"})
"""The endings that decide the match (the audit's statuses): exit code 0."""


def ending_status(outcome: Outcome) -> str:
    """The audit's word for how a match ended: complete, resigned, forfeit, on_time or abandoned."""
    if outcome.status != "aborted":
        return outcome.status
    # protocol version 1 said "aborted" for every other ending
    if outcome.winner is None:
        return "abandoned"
    if outcome.code == "resigned":
        return "resigned"
    if outcome.code in ("timeout", "opponent_left"):
        return "on_time"
    return "forfeit"


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
        self.words_lang = "en"
        """The language of the lines said to the player (``--lang`` or the locale; English with ``--json``)."""
        self.bot: Bot | None = None
        self.console: Console | None = None
        self.table: BoardTable | None = None
        """The full-screen board while it is up (a person on a terminal, not ``--plain``)."""
        self._board: tuple[Seats, Look, int, str | None] | None = None
        """What :meth:`run` needs to put the board up (None: the text mode, or a bot)."""
        self._token: trio.lowlevel.TrioToken | None = None
        self._setup_scope: trio.CancelScope | None = None
        self._playing = False
        self._left_early: str | None = None
        self._clock_key: tuple[int, bool] | None = None
        self.session: Session | None = None
        self.writer: TranscriptWriter | None = None
        self.state: SeatState | None = None
        self.link: Link | None = None
        self.url = ""
        self.grace: float | None = None
        self._inbox_send, self._inbox = trio.open_memory_channel[InboxEvent](1024)
        self._nursery: trio.Nursery | None = None
        self._deciding: trio.CancelScope | None = None
        self._decision_epoch = -1
        self._peer_away = False
        self._connected = False
        self._failure: str | None = None
        self._started_shown = False
        self._signed = 0
        """How many messages this process signed and sent (the crash points count them)."""
        self.expect = Expect()
        """What the joiner expects of the room's settings (for the words of a mismatch)."""
        self.runs_relay = False
        """The host runs the relay itself: its program is the time witness."""
        self._creator_settings: dict[str, Any] | None = None
        self._certifying = False
        self._seat_key_noted = False
        self._room_notice: RoomClosed | None = None
        """The relay's word that the room closed, while the seat is being taken back to check it."""
        self._wait_epoch = -1
        self._wait_started = 0.0
        """When (trio's clock) the current wait began, as this loop counts it (paused while a link is down)."""

    # -- setup ---------------------------------------------------------------

    def make_player(self, seat: int, rounds: int, plain: bool = True) -> None:
        """The bot (or the person) for this seat, and the console that narrates (text mode); or, for a
        person when ``plain`` is False and both ends are a terminal (as practice decides), the board."""
        look, notice = look_for(sys.stdout, lang=self.lang, assist=self.assist)
        self.words_lang = "en" if self.out.json else look.lang
        if self.bot_spec is None and not self.out.json and not want_plain(plain, sys.stdout, sys.stdin):
            self._board = (Seats(seat, ("Opponent", "Opponent")), look, rounds, notice)
        elif not self.out.json:
            self.console = Console(
                sys.stdin,
                sys.stdout,
                Seats(seat, ("Opponent", "Opponent")),
                look,
                rounds=rounds,
                pause_between_rounds=False,
            )
            self.console.player.leave_question = (
                "Leave the match? It counts as a resignation: your opponent wins. (y leaves; anything else goes on) "
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

    def run(self, main: Callable[..., Any], *args: Any) -> int:
        """``trio.run(main, *args)``: on this thread in the text mode; with the board, in a thread of its
        own while the board holds this one and the terminal (nothing is printed until it is gone)."""
        if self._board is None:
            code: int = trio.run(main, *args)
            return code
        from .tui.app import run_board  # Textual loads only for the board

        seats, look, rounds, notice = self._board

        def body(table: BoardTable) -> int:
            self.table = table
            self.out.attach(table)
            table.set_on_leave(self._on_leave)
            if notice:
                self.out.say(notice)
            result: int = trio.run(main, *args)
            if table.app.leave_reason is None and table.app.model.mode == "over":
                table.closed.wait()  # the final count stays up until the person closes it
            return result

        try:
            board = run_board(seats, look, rounds, body, network=True, pause_between_rounds=False,
                              join_timeout=24 * 3600.0)  # fmt: skip
        finally:
            self.table = None
            self.out.detach()
        if board.error is not None:
            raise board.error
        if isinstance(board.result, int):
            return board.result
        self.out.error("interrupted", "the match loop did not finish")
        return 1

    def _on_leave(self, reason: str) -> None:
        """(On the board's thread) the person confirmed ``q`` (``quit``: resign) or pressed Ctrl-C
        (``interrupt``: stop here, keep the seat)."""
        token = self._token
        if token is None:  # trio has not started yet: it looks at this first
            self._left_early = reason
            return
        # Never wait for trio here: the board's thread would block while trio's thread may be waiting for the
        # board (a note, the clock, a show), and neither would ever go on (the board did not exit on q or Ctrl-C)
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(self._leave_now, reason)

    def _leave_now(self, reason: str) -> None:
        """(On trio's thread, outside any task: it must not raise.)"""
        if self._playing:
            with contextlib.suppress(trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
                self._inbox_send.send_nowait(PlayerLeft(reason))
        else:  # still connecting or waiting: stop at once
            self._left_early = reason
            if self._setup_scope is not None:
                self._setup_scope.cancel()

    def _screen(self, fn: Callable[..., T], *args: Any) -> T | None:
        """A call to the board; once the person closed the finished match's board: None (no screen)."""
        if self.table is None:
            return None
        try:
            return fn(*args)
        except PlayerQuit:
            self.table = None
            return None

    def _brief(self, line: str) -> None:
        """A note that reports a change for the better (the opponent is back): on the board it leaves by itself
        after a few seconds, with the notes it answers (the opponent is away)."""
        if self.table is not None:
            self._screen(self.table.brief, line, 5.0)
            if self.table is not None:
                return
        self.out.note(line)

    def resumed(self, info: ResumeInfo) -> None:
        """The seat was taken back (``koikoi resume``): is the opponent there?"""
        s = self.session
        self._peer_away = info.peer != "present" and s is not None and s.opponent_fingerprint is not None

    def close(self) -> None:
        if self.bot is not None:
            close_bot(self.bot)
        if self.writer is not None:
            with contextlib.suppress(OSError):  # a full disk was reported already
                self.writer.close()

    async def main(
        self,
        url: str,
        acquire: Acquire,
        prepare: Callable[[SeatTicket], None],
        identity: Ed25519PrivateKey | None = None,
    ) -> int:
        """Open the seat, build the session (``prepare``), play; return the exit code. ``identity``: the
        player's key, which proves the seat to the relay (the key the match's HELLO binds)."""
        self.url = url
        self._token = trio.lowlevel.current_trio_token()
        code: int | None = None
        with trio.CancelScope() as self._setup_scope:
            if self._left_early is not None:
                self._setup_scope.cancel()
            async with trio.open_nursery() as nursery:
                self.link = Link(url, self.tuning, self._link_inbox(), identity)
                ticket: SeatTicket = await nursery.start(self.link.run, acquire)
                prepare(ticket)
                code = await self.play()
                self.link.stop()
                with trio.move_on_after(3):
                    await self.link.stopped.wait()
                nursery.cancel_scope.cancel()
        if code is None:  # the person left the board before the match was under way
            return self._stopped(_Stop("interrupted", self._interrupted_text(), True))
        return code

    def _interrupted_text(self) -> str:
        if self.state is not None and not self.state.joined:
            return self._w("net_interrupted_waiting")
        resume = "`koikoi resume`" if self.state is None else f"`koikoi resume {self._transcript_arg()}`"
        return self._w("net_interrupted", resume=resume)

    def _w(self, key: str, **fields: object) -> str:
        """One of the lines said to the player, in its language (client/tui/words.py)."""
        return say(self.words_lang, key, **fields)

    words = _w
    """The same, for the commands that set up a match (``koikoi host``'s room lines)."""

    def _move_time_words(self, move_time_s: int | None) -> str:
        if self.words_lang != "ja":
            return move_time_text(move_time_s)
        if move_time_s is None:
            return self._w("net_move_time_unknown")
        return self._w("net_move_time_none") if move_time_s == 0 else self._w("net_move_time", s=move_time_s)

    def settings_words(
        self, rounds: int | None, double_at_8: bool | None, move_time_s: int | None = None, deck: str | None = None
    ) -> str:
        """:func:`settings_text` in the player's language."""
        if self.words_lang != "ja":
            return settings_text(rounds, double_at_8, move_time_s, deck)
        parts = [self._w("net_rounds_unknown") if rounds is None else self._w("net_rounds", n=rounds)]
        if double_at_8 is not None:
            parts.append(self._w("net_double_on" if double_at_8 else "net_double_off"))
        if move_time_s is not None:
            parts.append(self._move_time_words(move_time_s))
        if deck is not None:
            known = {"sealed": "net_deck_sealed", "shared": "net_deck_shared"}
            parts.append(self._w(known[deck]) if deck in known else self._w("net_deck_other", deck=deck))
        return self._w("net_list").join(parts)

    def _what_words(self, what: str) -> str:
        """The session's ``move`` / ``result`` / ``handshake`` in the player's language."""
        key = f"net_what_{what}"
        return self._w(key) if key in WORDS["en"] else what

    # -- the loop ------------------------------------------------------------

    async def play(self) -> int:
        s = self.session
        assert s is not None and self.link is not None
        if self.state is not None:
            self.out.transcript = str(self.state.transcript)  # for the words of an interruption
            self.out.waiting_alone = not self.state.joined
        if s.match is not None:  # resumed mid-match: where things stand, not "the match begins" again
            self._show_resumed()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._playing = True
            if self._left_early is not None:
                self._leave_now(self._left_early)
            try:
                await self._flush(s.start())
                self._wait_epoch, self._wait_started = -1, trio.current_time()
                while not s.is_finished:
                    w = s.wait()
                    now = trio.current_time()
                    if w is not None and w.epoch != self._wait_epoch:
                        self._wait_epoch, self._wait_started = w.epoch, now
                    if self._paused():
                        self._wait_started = now  # the opponent's (or our) connection is down: the clock waits
                    self._maybe_decide()
                    self._opponent_clock()
                    deadline = None if self._paused() else s.next_deadline()
                    wait_s = math.inf if deadline is None else self._wait_started + deadline - now
                    with trio.move_on_after(max(0.0, wait_s)):
                        item = await self._inbox.receive()
                        await self._handle(item)
                        continue
                    elapsed = trio.current_time() - self._wait_started
                    await self._flush(s.time_passed(self._wait_epoch, elapsed))
            except _Stop as stop:
                nursery.cancel_scope.cancel()
                return self._stopped(stop)
            if self._deciding is not None:
                self._deciding.cancel()
            code = await self._finish()
            nursery.cancel_scope.cancel()
            return code

    def _opponent_clock(self) -> None:
        """The board shows the opponent's move clock while they decide (this seat's shows with its question)."""
        s = self.session
        w = s.wait() if s is not None else None
        if self.table is None or w is None or s is None or s.my_turn:
            return
        key = (w.epoch, self._paused())
        if key == self._clock_key:
            return
        self._clock_key = key
        left = None if w.limit is None or self._paused() else self._wait_started + w.limit - trio.current_time()
        self._screen(self.table.clock, None if left is None else time.monotonic() + left, w.seat)

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
                elif self.table is not None:
                    action = await self._ask_board(self.table, view)
                elif self._board is not None:  # the board has gone mid-match: stop, keep the seat
                    raise PlayerQuit("interrupt")
                else:
                    assert self.console is not None
                    player: Any = self.console.player
                    deadline = self._decision_deadline()
                    if hasattr(player, "set_clock"):
                        player.set_clock(deadline, self._move_time())
                    elif deadline is not None:
                        left = max(0, round(deadline - time.monotonic()))
                        self.out.say(self._w("net_your_move", left=left))
                    action = await trio.to_thread.run_sync(player.choose, view, abandon_on_cancel=True)
            except PlayerQuit as q:
                if self.table is not None and q.reason in ("superseded", "cancelled", "done"):
                    return  # the question was moot (another took its place), or the board is closing
                await self._inbox_send.send(PlayerLeft(q.reason))
            except BotError as e:
                await self._inbox_send.send(BotFailed(str(e)))
            except Exception as e:  # a bot's own bug: say so, never a traceback
                await self._inbox_send.send(BotFailed(f"{e.__class__.__name__}: {e}"))
            else:
                await self._inbox_send.send(ActionChosen(epoch, action))
            finally:
                if self._deciding is scope:
                    self._deciding = None

    async def _ask_board(self, table: Table, view: SeatView) -> Action:
        try:
            return await trio.to_thread.run_sync(table.choose, view, self._decision_deadline(), abandon_on_cancel=True)
        except trio.Cancelled:
            table.cancel()  # the match moved on: the question is moot
            raise

    def _move_time(self) -> int:
        s = self.session
        mt = getattr(s, "move_time_s", None)
        return mt if isinstance(mt, int) else 0

    def _decision_deadline(self) -> float | None:
        """When (``time.monotonic()``) the current wait's time runs out; None with no clock or paused."""
        s = self.session
        w = s.wait() if s is not None else None
        if w is None or w.limit is None or self._paused():
            return None
        return time.monotonic() + (self._wait_started + w.limit - trio.current_time())

    def _link_inbox(self) -> trio.MemorySendChannel[LinkEvent]:
        """The inbox, as the link sees it (it posts only link events)."""
        return self._inbox_send

    async def _handle(self, item: InboxEvent) -> None:
        s = self.session
        assert s is not None and self.link is not None
        debug("item", item.__class__.__name__, "" if isinstance(item, FrameArrived) else item)
        match item:
            case FrameArrived(data, ctl):
                await self._flush(s.receive(data, ctl=ctl))
            case ActionChosen(epoch, action):
                w = s.wait()
                if w is not None and w.epoch == epoch and s.my_turn:
                    await self._play(action)
            case Connected(info):
                await self._connected_again(info)
            case ConnectionLost(error):
                self._connected = False
                self.out.note(self._w("net_lost", code=error.code))
            case PeerChanged(event):
                await self._peer(event)
            case RelayNotice(error):
                if error.code == "relay_key_changed":
                    self.out.note(self._w("net_relay_note", message=error.message))
            case Certified(blob):
                self._certifying = False
                await self._flush(s.witnessed(blob))
            case RoomGone(closed):
                await self._room_closed(closed)
            case GaveUp(error):
                await self._gave_up(error)
            case PlayerLeft("interrupt"):  # Ctrl-C on the board: stop here, the seat is kept
                raise _Stop("interrupted", self._interrupted_text(), True)
            case PlayerLeft():
                if s.referee.next_seq == 0:  # nothing to resign yet
                    raise _Stop("interrupted", self._interrupted_text(), True)
                self.out.note(self._w("net_you_left"))
                with contextlib.suppress(SessionClosed):
                    await self._flush(s.resign())
            case BotFailed(reason):
                self._failure = self._w("net_failure_bot", reason=reason)
                self.out.note(self._w("net_bot_failed", reason=reason))
                with contextlib.suppress(SessionClosed):
                    await self._flush(s.resign())

    async def _connected_again(self, info: ResumeInfo | None) -> None:
        s = self.session
        assert s is not None and self.link is not None
        first = not self._connected and self.link.reconnects == 0 and info is None
        self._connected = True
        if self._room_notice is not None:
            self._room_notice = None
            self.out.note(self._w("net_seat_back"))
        elif not first:
            rebuilt = info is not None and info.restored
            self._brief(self._w("net_reconnected_rebuilt" if rebuilt else "net_reconnected"))
            if info is not None:
                self._peer_away = info.peer != "present" and s.opponent_fingerprint is not None
        # what the opponent may lack, and a RESEND: what this side may lack (after a crash, its lost tail,
        # which the relay's copies of our recent frames give back)
        await self._flush(s.reconnected(own_frames=info.own_frames if info is not None else ()))

    async def _gave_up(self, e: RelayError) -> None:
        notice, self._room_notice = self._room_notice, None
        if notice is not None and e.code in ("room_closed", "room_not_found"):
            # the relay said the room closed, and it does not give the seat back: it really is gone (or
            # the relay keeps lying; either way nothing here proves a result)
            if await self._certified_by(str(e.extra.get("reason", "")), e.extra.get("cert")):
                self._connected = True
                return
            raise _Stop(
                "opponent_left" if notice.code == "opponent_left" else "room_closed",
                self._w(
                    "net_closed_stop",
                    code=notice.code,
                    message=notice.message,
                    err=e.code,
                    cert=self._w("net_closed_cert") if notice.code == "opponent_left" else "",
                    path=self._transcript_arg(),
                ),
                True,
            )
        if e.code == "replaced":
            raise _Stop("replaced", self._w("net_replaced"), True)
        if e.code not in RETRY:
            raise _Stop(
                e.code, self._w("net_refused", code=e.code, message=e.message, path=self._transcript_arg()), True
            )
        raise _Stop(
            "relay_unreachable",
            self._w(
                "net_unreachable",
                url=self.url,
                message=e.message.removeprefix(f"cannot reach the relay at {self.url}: "),
                path=self._transcript_arg(),
            ),
            True,
        )

    async def _play(self, action: Action) -> None:
        s = self.session
        assert s is not None
        try:
            events = s.play(action)
        except Exception as e:  # an illegal action from a bot: resign rather than cheat
            self._failure = f"the player chose an illegal action ({e})"
            try:
                events = s.resign()
            except SessionClosed:
                return
        await self._flush(events)

    async def _peer(self, ev: PeerEvent) -> None:
        s = self.session
        assert s is not None and self.link is not None
        if ev.event == "joined":
            self.out.waiting_alone = False
            if self.state is not None:
                self._save_seat()  # now holds the joiner's peer_check: enough to rebuild the room
            self.out.say(self._w("net_joined"))
        elif ev.event == "away":
            self._peer_away = True
            grace = (
                self._w("net_grace_s", s=f"{ev.grace_s:g}") if ev.grace_s is not None else self._w("net_grace_while")
            )
            self.grace = ev.grace_s
            self.out.note(self._w("net_away", grace=grace))
        elif ev.event == "back":
            self._peer_away = False
            self._brief(self._w("net_peer_back"))
            await self._flush(s.reconnected())

    async def _room_closed(self, e: RoomClosed) -> None:
        """The relay says the room closed. Only a certificate the session accepts ends the match here; the
        notice alone proves nothing (a relay, or anyone on an unauthenticated ``ws://`` path, can tell it
        to one side only): keep the seat and take it back, so that the relay sees this player present.
        A room that is really gone refuses (:meth:`_gave_up`); one that is not gives the seat back."""
        s = self.session
        assert s is not None and self.link is not None
        if s.is_finished:
            return
        if await self._certified_by(e.code, e.cert):
            self._connected = True  # nothing more to wait for from the relay
            return
        self._connected = False  # the clock waits until the seat is back
        self._room_notice = e
        self.out.note(self._w("net_room_closed", code=e.code, message=e.message))
        self.link.retake()

    async def _certified_by(self, reason: str, cert: object) -> bool:
        """True when ``cert`` (the relay's certificate of the opponent's silence, sent with the room's
        closing as ``opponent_left``) ended the match: a win on time."""
        s = self.session
        assert s is not None
        if reason != "opponent_left" or not isinstance(cert, bytes):
            return False
        events = s.witnessed(cert)
        await self._flush(events)
        return any(isinstance(ev, MatchEnded) for ev in events)

    async def _certify(self) -> None:
        """Ask the relay for a certificate of the opponent's silence (one request at a time)."""
        assert self.link is not None
        try:
            blob = await self.link.certify()
        except RelayError as e:
            debug("certify refused:", e.code, e.message)  # the session asks again in a few seconds
            self._certifying = False
            return
        await self._inbox_send.send(Certified(blob))

    def _check_seat_key(self) -> None:
        """The relay's word on the key the opponent's seat proved (``SeatTicket.peer_key``) against the key its
        HELLO binds. A seat proved with another key could never be certified silent (spec/protocol.md §7.3
        step 3): a cheater that did so would escape every loss on time. Before the first deal nothing is at
        stake (the seed is not yet revealed): stop, nobody winning or losing. Later (a room rebuilt after a
        relay restart): say so once; the match goes on untimed."""
        s, link = self.session, self.link
        ticket = link.ticket if link is not None else None
        if s is None or ticket is None or ticket.peer_key is None:
            return
        hello = s.referee.hellos[1 - s.seat]
        if hello is None or hello.public_key == ticket.peer_key:
            return
        words = {"bound": fingerprint(ticket.peer_key), "hello": fingerprint(hello.public_key)}
        if s.match is None and not s.is_finished:
            raise _Stop("relay_seat_mismatch", self._w("net_seat_key_stop", **words), False)
        if not self._seat_key_noted:
            self._seat_key_noted = True
            self.out.note(self._w("net_seat_key_note", **words))

    async def _flush(self, events: list[SessionEvent]) -> None:
        """Write every record and force it to disk, then send the frames, then show the events.

        Nothing is sent before it is on disk (fsync): after any crash, the transcript holds every
        message this player ever signed, so a resumed match can never sign a different one in its place."""
        s = self.session
        assert s is not None and self.writer is not None and self.link is not None
        self._check_seat_key()
        synced = False
        try:
            records = s.records()
            frames = s.frames_to_send()
            own = set(frames)
            for rec in records:
                if rec.frame in own:
                    self._signed += 1
                    _CRASH.at("torn", self._signed, functools.partial(self._write_torn, rec.frame))
                self.writer.append(rec.frame)
                synced = synced or rec.sync
            if frames:
                _CRASH.at("written", self._signed)
            if frames or synced:
                self.writer.sync()
        except OSError as e:
            err = disk_error(e, self._transcript_path())
            raise _Stop(err.code, err.message, True) from None
        if frames:
            _CRASH.at("synced", self._signed)
        for frame in frames:
            await self.link.send(frame, control=s.is_control(frame))
        if frames:
            _CRASH.at("sent", self._signed)
        for ev in events:
            if isinstance(ev, CertificateNeeded) and not self._certifying and self._nursery is not None:
                self._certifying = True
                self._nursery.start_soon(self._certify)
            self._show(ev)
        if self.table is not None and s.match is not None:
            self._screen(self.table.show, s.match.log, s.view())
        if self.console is not None and s.match is not None:
            try:
                self.console.show_events(s.match.log)
            except OSError:  # the terminal or pipe went away: a bot plays on unseen, a person cannot
                if self.bot is None:
                    raise _Stop(
                        "output_closed", self._w("net_output_closed", path=self._transcript_arg()), True
                    ) from None
                self.console = None
        if synced and self.state is not None and not s.is_finished:
            self._save_seat()  # the ticket's counters, at each round's end

    def record_offline(self, events: list[SessionEvent]) -> None:
        """With no relay to send to (the room has closed): write the session's records and force them to
        disk; its frames are dropped (nobody is left to receive them)."""
        s = self.session
        assert s is not None and self.writer is not None
        try:
            for rec in s.records():
                self.writer.append(rec.frame)
            self.writer.sync()
        except OSError as e:
            raise disk_error(e, self._transcript_path()) from None
        s.frames_to_send()
        for ev in events:
            self._show(ev)

    def _write_torn(self, frame: bytes) -> None:
        """(The ``torn`` crash point) half of the record, on disk, as an interrupted write leaves it."""
        assert self.writer is not None
        self.writer.write_partial(frame)

    def _save_seat(self) -> None:
        assert self.state is not None
        try:
            self.state.save()
        except NetError as e:
            raise _Stop(e.code, e.message, True) from None

    # -- showing -------------------------------------------------------------

    def _witness(self) -> str | None:
        """The fingerprint of the relay key both HELLOs bound (None: no relay, no certificate can count)."""
        s = self.session
        key = getattr(s, "relay_key", None)
        return fingerprint(key) if isinstance(key, bytes) and key != bytes(32) else None

    def _start_event(self, resumed: bool) -> None:
        s = self.session
        assert s is not None and s.referee.first_dealer is not None
        st = s.referee.settings
        self.out.event(
            "match_start",
            seat=s.seat,
            first_dealer=s.referee.first_dealer,
            opponent=s.opponent_fingerprint,
            settings={
                "rounds": st.rounds if st is not None else None,
                "double_at_8": st.double_at_8 if st is not None else None,
                "move_time_s": self._move_time(),
                "deck": deck_of(s),
            },
            witness=self._witness(),
            resumed=resumed,
        )

    def _deck_lines(self) -> list[str]:
        """What the deck mode means for this player (before the first card)."""
        deck = deck_of(self.session)
        if deck == "sealed":
            return [self._w("net_sealed")]
        if deck == "shared":
            return [self._w("net_shared")]
        return []

    def _clock_lines(self) -> list[str]:
        """What the clock is, who witnesses it, and what running out of time means (before it happens)."""
        mt = self._move_time()
        if mt == 0:
            return [self._w("net_no_clock")]
        w = self._witness()
        lines = [self._w("net_clock", mt=mt, w=w or self._w("net_witness_none"))]
        if self.runs_relay:
            lines.append(self._w("net_you_run_relay"))
        elif self.session is not None and self.session.seat == 1:
            lines.append(self._w("net_they_may_run_relay"))
        return lines

    def _show_started(self) -> None:
        s = self.session
        assert s is not None
        r = s.referee
        if self._started_shown or r.first_dealer is None:
            return
        self._started_shown = True
        self._start_event(resumed=False)
        opp = s.opponent_fingerprint
        st = r.settings
        who = self._w("net_you_deal" if r.first_dealer == s.seat else "net_they_deal")
        role = self._w("net_role_creator" if s.seat == 0 else "net_role_joiner")
        bound = self.settings_words(st.rounds, st.double_at_8, self._move_time(), deck_of(s)) if st is not None else ""
        keys = [self._w("net_keys", me=s.fingerprint, opp=opp)]
        if self.table is not None:  # the board keeps who is playing up until this seat's first move
            self._screen(self.table.players, *self._players_lines())
            keys = []
        self.out.say(
            self._w("net_begins", seat=s.seat, role=role, bound=bound),
            *keys,
            self._w("net_first_dealer", who=who),
            *self._deck_lines(),
            *self._clock_lines(),
        )

    def _players_lines(self) -> list[str]:
        """The board's panel of who is playing: a heading, both keys, the relay's key and who runs it."""
        s = self.session
        assert s is not None
        w = self._witness()
        if w is None:
            relay = self._w("players_relay_none")
        else:
            runner = ""
            if self.runs_relay:
                runner = self._w("players_you_run")
            elif s.seat == 1:
                runner = self._w("players_they_may_run")
            relay = self._w("players_relay", relay=w) + runner
        return [
            self._w("players_head"),
            self._w("players_keys", me=s.fingerprint, opp=s.opponent_fingerprint),
            relay,
        ]

    def _show_resumed(self) -> None:
        """After ``koikoi resume``: where the match stands and its last moves, then play on."""
        s = self.session
        assert s is not None and s.match is not None
        self._started_shown = True
        self._start_event(resumed=True)
        m = s.match
        log = m.log
        if self.table is not None:
            self.out.say(self._back_line())
        if self.console is not None:
            self.console.narrator.feed(log)
            st = s.referee.settings
            rounds = st.rounds if st is not None else None
            last = narrate(log, self.console.seats, self.console.look, start=max(0, len(log) - 4), rounds=rounds)
            self.out.say(
                self._back_line(),
                *([self._w("net_before"), *(f"  {line}" for line in last)] if last else []),
                self._w("net_meanwhile"),
            )

    def _back_line(self) -> str:
        s = self.session
        assert s is not None and s.match is not None
        pts = s.match.points
        mt = self._move_time_words(self._move_time())
        return self._w("net_back", seat=s.seat, mt=mt, me=pts[s.seat], them=pts[1 - s.seat])

    def _show(self, ev: SessionEvent) -> None:
        s = self.session
        assert s is not None
        if isinstance(ev, RoomSettings):
            mt = getattr(ev, "move_time_s", None)
            deck = getattr(ev, "deck", None)
            deck = deck if isinstance(deck, str) else deck_of(s)
            self._creator_settings = {
                "rounds": ev.settings.rounds,
                "double_at_8": ev.settings.double_at_8,
                "move_time_s": mt,
                "deck": deck,
            }
            settings = self.settings_words(ev.settings.rounds, ev.settings.double_at_8, mt, deck)
            self.out.say(self._w("net_creator_signed", creator=ev.creator, settings=settings))
        elif isinstance(ev, MatchStarted):
            self._show_started()
        elif isinstance(ev, RoundEnded):
            r: RoundResult = ev.result
            self.out.event("round_end", round=r.round, winner=r.winner, payment=r.payment, points=list(r.points))
        elif isinstance(ev, TimeoutWarning):
            key = "net_warn_me" if ev.seat == s.seat else "net_warn_them"
            if self.table is not None:  # beside the board's running clock, no count of seconds that goes stale
                key += "_board"
            text = self._w(key, s=f"{ev.seconds_left:.0f}", what=self._what_words(ev.what))
            at_prompt = self.console is not None and self.bot is None and self._deciding is not None
            self.out.note(("\n" if at_prompt else "") + text)  # on a line of its own, not after a prompt
        elif isinstance(ev, OwnTimeExpired):
            self.out.note(self._w("net_time_up", what=self._what_words(ev.what)))
        elif isinstance(ev, CertificateRejected):
            debug("certificate rejected:", ev.reason)
        elif isinstance(ev, FrameDropped):
            debug("frame dropped:", ev.code, ev.message)

    def _transcript_arg(self) -> str:
        return shlex.quote(str(self.state.transcript)) if self.state is not None else ""

    def _transcript_path(self) -> Path | str:
        if self.state is not None:
            return self.state.transcript
        return self.writer.path if self.writer is not None else "the transcript"

    # -- endings -------------------------------------------------------------

    async def _finish(self) -> int:
        s = self.session
        assert s is not None and s.ended is not None and self.link is not None
        await self._deliver_last()
        return self.report_outcome()

    def report_outcome(self) -> int:
        """Say how the (finished) match ended, forget the seat, close the transcript; the exit code:
        0 when the match reached a result (won, lost or drawn, by any ending), 1 when it ended without one."""
        s = self.session
        assert s is not None and s.ended is not None
        outcome = s.ended.outcome
        if self.state is not None:
            self.state.remove()
        if self.writer is not None:
            with contextlib.suppress(OSError):  # every record was synced as it was sent
                self.writer.close()
        path = str(self.state.transcript) if self.state is not None else None
        me = s.seat
        pts = list(outcome.points)
        status = ending_status(outcome)
        if status in RESULT_STATUSES:
            ending = None
            if status != "complete":
                ending = {"by": outcome.by, "code": outcome.code, "witness": getattr(outcome, "witness", None)}
            self.out.event(
                "match_end", points=pts, winner=outcome.winner, transcript=path, status=status, ending=ending
            )
            w = outcome.winner
            if status == "complete" and self.console is not None:  # the narrator said who won, and by how much
                line = self._w("net_signed")
            elif status == "complete":
                if w is None:
                    verdict = self._w("net_draw", a=pts[0], b=pts[1])
                else:
                    verdict = self._w("net_you_won" if w == me else "net_they_won", a=pts[w], b=pts[1 - w])
                line = self._w("net_match_over", verdict=verdict, how=self._w("net_how_signed"))
            else:  # decided by the ending (time, resignation, a proven fault), not by the points: say so
                on_time = outcome.code in ("timeout", "opponent_left")
                if w is None:
                    verdict = self._w("net_nobody_won_by")
                elif w == me:
                    verdict = self._w("net_you_won_time" if on_time else "net_you_won_by")
                else:
                    verdict = self._w("net_they_won_time" if on_time else "net_they_won_by")
                how = self._ending_text(outcome.code, outcome.message, outcome.by, outcome.winner, short=True)
                line = self._w("net_match_decided", verdict=verdict, how=how, me=pts[me], them=pts[1 - me])
            self.out.end("", line, self._w("transcript", path=path))
            return 0
        code = outcome.code or "aborted"
        message = self._ending_text(outcome.code, outcome.message, outcome.by, outcome.winner)
        self.out.error(code, message, winner=outcome.winner, points=pts, transcript=path)
        self.out.end(self._w("transcript", path=path))
        return 1

    def _ending_text(
        self, code: str | None, message: str, by: int | None, winner: int | None, *, short: bool = False
    ) -> str:
        """Why the match ended, in words (``short``: without who wins, which the caller says)."""
        s = self.session
        assert s is not None
        me = s.seat
        mine = by == me
        w = self._w
        if self._failure is not None and mine:
            head = w("net_you_resigned_failure", failure=self._failure)
        elif code == "opponent_left":
            head = w("net_they_left" if mine else "net_you_away")
        elif code == "timeout":
            head = w("net_they_slow" if mine else "net_you_slow")
        elif code == "resigned":
            head = w("net_you_resigned" if mine else "net_they_resigned")
        elif code == "unproven_abort":
            head = w("net_you_accused" if mine else "net_they_accused")
        elif code == "unwitnessed_timeout":
            head = w("net_you_claimed" if mine else "net_they_claimed")
        elif code == "settings_mismatch":
            parts = mismatch_parts(self.expect, self._creator_settings) if self._creator_settings else []
            if parts:
                head = w("net_settings_differ", parts="; ".join(parts))
            else:
                head = w("net_settings_differ_raw", message=message)
        elif code == "room_mismatch":
            head = w("net_room_mismatch", message=message)
        elif code == "relay_mismatch":
            head = w("net_relay_mismatch", message=message)
        else:
            what = CODES.get(code or "", message)
            side = w("net_fault_them" if mine else "net_fault_me")
            head = w("net_fault", side=side, code=code, what=what, message=message)
        if short:
            return head
        if winner is None:
            return w("net_nobody_wins", head=head)
        return w("net_you_win" if winner == me else "net_they_win", head=head)

    async def _deliver_last(self) -> None:
        """Make sure the last frames went out on a live connection; then leave the room if done."""
        s = self.session
        assert s is not None and self.link is not None
        if not self._connected and s.unacknowledged():
            # (only while the opponent lacks something of ours: a relay gone after the match's end — a host's own
            # relay stops once both seats left — must not keep a finished player waiting for a reconnection)
            with trio.move_on_after(self.tuning.reconnect_s + 1):
                while not self._connected:
                    item = await self._inbox.receive()
                    if isinstance(item, (GaveUp, RoomGone)):
                        break
                    if isinstance(item, PeerChanged) and item.event.event == "away":
                        break  # the opponent left after the end (a host's own relay then stops): nothing to wait for
                    if isinstance(item, Connected):
                        self._connected = True
                        for frame in s.unacknowledged():
                            await self.link.send(frame, control=s.is_control(frame))
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
