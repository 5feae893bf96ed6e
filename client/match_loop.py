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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from ..engine.actions import Action
from ..engine.bots import Bot
from ..engine.match import RoundResult, SeatView
from ..protocol.errors import CODES
from ..protocol.referee import Outcome
from ..protocol.session import Event as SessionEvent
from ..protocol.session import (
    MatchStarted,
    OwnTimeExpired,
    RoomSettings,
    RoundEnded,
    Session,
    SessionClosed,
    TimeoutWarning,
)
from ..relay.client import PeerEvent, RelayError, ResumeInfo, RoomClosed, SeatTicket
from .botspec import BotError, BotSpec, BotSpecError, bot_from_spec, close_bot
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
from .output import NetError, Output, debug, disk_error, settings_text
from .seats import SeatState
from .transcript_file import TranscriptWriter
from .tui import Console, PlayerQuit, Seats, look_for
from .tuning import Tuning

__all__ = ["RESULT_STATUSES", "ActionChosen", "BotFailed", "InboxEvent", "NetGame", "PlayerLeft", "ending_status"]


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


InboxEvent = LinkEvent | ActionChosen | PlayerLeft | BotFailed
"""Everything the match loop reacts to."""


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
        if point == self.point and n == self.n:
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
        self.bot: Bot | None = None
        self.console: Console | None = None
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
            with contextlib.suppress(OSError):  # a full disk was reported already
                self.writer.close()

    async def main(self, url: str, acquire: Acquire, prepare: Callable[[SeatTicket], None]) -> int:
        """Open the seat, build the session (``prepare``), play; return the exit code."""
        self.url = url
        async with trio.open_nursery() as nursery:
            self.link = Link(url, self.tuning, self._link_inbox())
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
                await self._inbox_send.send(PlayerLeft(q.reason))
            except BotError as e:
                await self._inbox_send.send(BotFailed(str(e)))
            except Exception as e:  # a bot's own bug: say so, never a traceback
                await self._inbox_send.send(BotFailed(f"{e.__class__.__name__}: {e}"))
            else:
                await self._inbox_send.send(ActionChosen(epoch, action))

    def _link_inbox(self) -> trio.MemorySendChannel[LinkEvent]:
        """The inbox, as the link sees it (it posts only link events)."""
        return self._inbox_send

    async def _handle(self, item: InboxEvent) -> None:
        s = self.session
        assert s is not None and self.link is not None
        debug("item", item.__class__.__name__, "" if isinstance(item, FrameArrived) else item)
        match item:
            case FrameArrived(data):
                await self._flush(s.receive(data))
            case ActionChosen(epoch, action):
                w = s.wait()
                if w is not None and w.epoch == epoch and s.my_turn:
                    await self._play(action)
            case Connected(info):
                await self._connected_again(info)
            case ConnectionLost(error):
                self._connected = False
                self.out.note(f"Lost the connection to the relay ({error.code}); reconnecting…")
            case PeerChanged(event):
                await self._peer(event)
            case RelayNotice():
                pass
            case RoomGone(closed):
                await self._room_closed(closed)
            case GaveUp(error):
                self._gave_up(error)
            case PlayerLeft():
                self.out.note("You left the match: it counts as a resignation.")
                self._failure = "quit"
                with contextlib.suppress(SessionClosed):
                    await self._flush(s.resign())
            case BotFailed(reason):
                self._failure = f"the bot failed: {reason}"
                self.out.note(f"The bot failed ({reason}): resigning.")
                with contextlib.suppress(SessionClosed):
                    await self._flush(s.resign())

    async def _connected_again(self, info: ResumeInfo | None) -> None:
        s = self.session
        assert s is not None and self.link is not None
        first = not self._connected and self.link.reconnects == 0 and info is None
        self._connected = True
        if not first:
            self.out.note(
                "Connected to the relay again"
                + (" (it had restarted; the room is rebuilt)." if info is not None and info.restored else ".")
            )
            if info is not None:
                self._peer_away = info.peer != "present" and s.opponent_fingerprint is not None
        for frame in s.unacknowledged():
            await self.link.send(frame)

    def _gave_up(self, e: RelayError) -> None:
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
                self._save_seat()  # now holds the joiner's peer_check: enough to rebuild the room
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
        """Write every record and force it to disk, then send the frames, then show the events.

        Nothing is sent before it is on disk (fsync): after any crash, the transcript holds every
        message this player ever signed, so a resumed match can never sign a different one in its place."""
        s = self.session
        assert s is not None and self.writer is not None and self.link is not None
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
            await self.link.send(frame)
        if frames:
            _CRASH.at("sent", self._signed)
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
            self._save_seat()  # the ticket's counters, at each round's end

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
            if status == "complete" and self.console is not None:  # the narrator said who won, and by how much
                line = "Both players signed the result."
            else:
                w = outcome.winner
                if w is None:
                    verdict = f"a draw, {pts[0]} to {pts[1]}"
                else:
                    verdict = f"{'you' if w == me else 'your opponent'} won, {pts[w]} to {pts[1 - w]}"
                how = (
                    "both players signed the result"
                    if status == "complete"
                    else self._ending_text(outcome.code, outcome.message, outcome.by, outcome.winner, short=True)
                )
                line = f"Match over: {verdict} ({how})."
            self.out.say("", line, f"Transcript: {path}")
            return 0
        code = outcome.code or "aborted"
        message = self._ending_text(outcome.code, outcome.message, outcome.by, outcome.winner)
        self.out.error(code, message, winner=outcome.winner, points=pts, transcript=path)
        self.out.say(f"Transcript: {path}")
        return 1

    def _ending_text(
        self, code: str | None, message: str, by: int | None, winner: int | None, *, short: bool = False
    ) -> str:
        """Why the match ended, in words (``short``: without who wins, which the caller says)."""
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
        if short or code == "settings_mismatch":
            return head
        if winner is None:
            tail = "nobody wins"
        else:
            tail = "you win the match by forfeit" if winner == me else "your opponent wins the match by forfeit"
        return f"{head}; {tail}"

    async def _deliver_last(self) -> None:
        """Make sure the last frames went out on a live connection; then leave the room if done."""
        s = self.session
        assert s is not None and self.link is not None
        if not self._connected:
            with trio.move_on_after(self.tuning.reconnect_s + 1):
                while not self._connected:
                    item = await self._inbox.receive()
                    if isinstance(item, (GaveUp, RoomGone)):
                        break
                    if isinstance(item, Connected):
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
