"""The match loop: one seat's match over a relay, driven by trio.

The protocol :class:`~koikoi.protocol.session.Session` (sans-IO) decides everything about the
match; :class:`NetGame` feeds it frames and the player's decisions and runs the session's timers with
trio cancel scopes. It holds four objects that own their state:

- :class:`~koikoi.client.write_ahead.WriteAhead` (``journal``): the transcript and the seat file; every
  record is written *before* its frame is sent (write-ahead: a crash loses nothing);
- :class:`~koikoi.client.players.LocalPlayer` (``player``): a bot (``--bot NAME`` or ``cmd:PROGRAM``) or a
  person at the terminal (:mod:`koikoi.client.tui`), asked in a worker thread so that timers and the
  network keep running;
- :class:`~koikoi.client.presentation.Presentation` (``presentation``): the narration or the board, and
  every line said to the player;
- :class:`~koikoi.client.seat_clock.WaitClock` (``clock``): the current wait's clock, paused while a
  connection is down.

Everything that happens reaches the loop through one inbox, as typed events: what the
:class:`~koikoi.client.link.Link` posts (:data:`~koikoi.client.link.LinkEvent`), what the player
decided (:class:`~koikoi.client.players.ActionChosen`, :class:`~koikoi.client.players.PlayerLeft`,
:class:`~koikoi.client.players.BotFailed`) and the relay's certificates (:class:`Certified`).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..engine.actions import Action
from ..errors import KoikoiError
from ..protocol.audit import DECIDED
from ..protocol.session import CertificateNeeded, MatchDecided, Session, SessionClosed
from ..protocol.session import Event as SessionEvent
from ..protocol.witness import fingerprint
from ..relay.client import PeerNotice, RelayError, ResumeInfo, RoomClosed, SeatTicket
from .botspec import BotSpec
from .link import (
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
from .output import NetError, Output, debug
from .players import ActionChosen, BotFailed, LocalPlayer, Player, PlayerEvent, PlayerLeft
from .presentation import Presentation
from .seat_clock import WaitClock
from .tuning import Tuning
from .write_ahead import WriteAhead

__all__ = [
    "ActionChosen",
    "BotFailed",
    "Certified",
    "InboxEvent",
    "NetGame",
    "Player",
    "PlayerLeft",
]


@dataclass(frozen=True, slots=True)
class Certified:
    """The relay's silence certificate for the opponent (the answer to ``certify``)."""

    blob: bytes


InboxEvent = LinkEvent | PlayerEvent | Certified
"""Everything the match loop reacts to."""


class _Stop(KoikoiError):
    def __init__(self, code: str, message: str, keep_seat: bool) -> None:
        self.code = code
        self.message = message
        self.keep_seat = keep_seat


@contextlib.contextmanager
def _kept_seat() -> Iterator[None]:
    """A NetError (the disk refused the transcript or the seat file) stops the loop; the seat is kept."""
    try:
        yield
    except NetError as e:
        raise _Stop(e.code, e.message, True) from None


class NetGame:
    """One seat's match over a relay. Build it, then ``await game.main(url, acquire, prepare)``; the commands
    fill in :attr:`session` and the :attr:`journal`'s files in ``prepare`` (``koikoi resume``: before)."""

    def __init__(
        self, out: Output, tuning: Tuning, *, bot_spec: BotSpec | None, lang: str | None, assist: bool
    ) -> None:
        self.out = out
        self.tuning = tuning
        self.lang = lang
        self.assist = assist
        self._inbox_send, self._inbox = trio.open_memory_channel[InboxEvent](1024)
        self.journal = WriteAhead()
        self.clock = WaitClock()
        self.presentation = Presentation(out, lang=lang, assist=assist)
        self.player = LocalPlayer(bot_spec, self.presentation, self.clock, tuning, self._inbox_send)
        self._session: Session | None = None
        self.link: Link | None = None
        self.url = ""
        self._token: trio.lowlevel.TrioToken | None = None
        self._setup_scope: trio.CancelScope | None = None
        self._nursery: trio.Nursery | None = None
        self._playing = False
        self._left_early: str | None = None
        self._certifying = False
        self._seat_key_noted = False
        self._room_notice: RoomClosed | None = None
        """The relay's word that the room closed, while the seat is being taken back to check it."""

    @property
    def session(self) -> Session | None:
        return self._session

    @session.setter
    def session(self, s: Session | None) -> None:
        self._session = s
        self.presentation.session = s

    # -- setup ---------------------------------------------------------------

    def make_player(self, seat: int, rounds: int, plain: bool = True) -> None:
        """The bot (or the person) for this seat, and the console that narrates (text mode); or, for a
        person when ``plain`` is False and both ends are a terminal (as practice decides), the board."""
        person = self.player.bot_spec is None
        self.presentation.setup(seat, rounds, person=person, plain=plain)
        self.player.start()
        if person and self.out.json:
            raise NetError("usage", "--json needs --bot: a person plays in the text mode")

    def run(self, main: Callable[..., Any], *args: Any) -> int:
        """``trio.run(main, *args)``: on this thread in the text mode; with the board, in a thread of its
        own while the board holds this one and the terminal (nothing is printed until it is gone)."""
        return self.presentation.run(main, args, self._on_leave)

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

    def resumed(self, info: ResumeInfo) -> None:
        """The seat was taken back (``koikoi resume``): is the opponent there?"""
        s = self.session
        self.clock.peer_away = info.peer != "present" and s is not None and s.opponent_fingerprint is not None

    def close(self) -> None:
        self.player.close()
        self.journal.close()

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
        state = self.journal.state
        return self.presentation.interrupted_words(None if state is None else state.joined, self.journal.path_arg())

    def _link_inbox(self) -> trio.MemorySendChannel[LinkEvent]:
        """The inbox, as the link sees it (it posts only link events)."""
        return self._inbox_send

    # -- the loop ------------------------------------------------------------

    async def play(self) -> int:
        s = self.session
        assert s is not None and self.link is not None
        state, clock = self.journal.state, self.clock
        if state is not None:
            self.out.transcript = str(state.transcript)  # for the words of an interruption
            self.out.waiting_alone = not state.joined
        if s.match is not None:  # resumed mid-match: where things stand, not "the match begins" again
            self.presentation.show_resumed()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._playing = True
            if self._left_early is not None:
                self._leave_now(self._left_early)
            try:
                await self._flush(s.start())
                clock.restart()
                while not s.is_finished:
                    now = trio.current_time()
                    clock.track(s.wait(), now)
                    self.player.maybe_decide(s, nursery)
                    self.presentation.opponent_clock(clock)
                    deadline = None if clock.paused else s.next_deadline()
                    wait_s = math.inf if deadline is None else clock.started + deadline - now
                    with trio.move_on_after(max(0.0, wait_s)):
                        item = await self._inbox.receive()
                        await self._handle(item)
                        continue
                    await self._flush(s.time_passed(clock.epoch, clock.elapsed()))
            except _Stop as stop:
                nursery.cancel_scope.cancel()
                return self._stopped(stop)
            self.player.cancel()
            code = await self._finish()
            nursery.cancel_scope.cancel()
            return code

    async def _handle(self, item: InboxEvent) -> None:
        s = self.session
        assert s is not None and self.link is not None
        w = self.presentation.w
        debug("item", item.__class__.__name__, "" if isinstance(item, FrameArrived) else item)
        match item:
            case FrameArrived(data, ctl):
                await self._flush(s.receive(data, ctl=ctl))
            case ActionChosen(epoch, action):
                wait = s.wait()
                if wait is not None and wait.epoch == epoch and s.my_turn:
                    await self._play(action)
            case Connected(info):
                await self._connected_again(info)
            case ConnectionLost(error):
                self.clock.connected = False
                self.out.note(w("net_lost", code=error.code))
            case PeerChanged(event):
                await self._peer(event)
            case RelayNotice(error):
                if error.code == "relay_key_changed":
                    self.out.note(w("net_relay_note", message=error.message))
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
                if s.next_seq == 0:  # nothing to resign yet
                    raise _Stop("interrupted", self._interrupted_text(), True)
                self.out.note(w("net_you_left"))
                with contextlib.suppress(SessionClosed):
                    await self._flush(s.resign())
            case BotFailed(reason):
                self.player.failure = w("net_failure_bot", reason=reason)
                self.out.note(w("net_bot_failed", reason=reason))
                with contextlib.suppress(SessionClosed):
                    await self._flush(s.resign())

    async def _connected_again(self, info: ResumeInfo | None) -> None:
        s = self.session
        assert s is not None and self.link is not None
        w = self.presentation.w
        first = not self.clock.connected and self.link.reconnects == 0 and info is None
        self.clock.connected = True
        if self._room_notice is not None:
            self._room_notice = None
            self.out.note(w("net_seat_back"))
        elif not first:
            rebuilt = info is not None and info.restored
            self.presentation.brief(w("net_reconnected_rebuilt" if rebuilt else "net_reconnected"))
            if info is not None:
                self.clock.peer_away = info.peer != "present" and s.opponent_fingerprint is not None
        # what the opponent may lack, and a RESEND: what this side may lack (after a crash, its lost tail,
        # which the relay's copies of our recent frames give back)
        await self._flush(s.reconnected(own_frames=info.own_frames if info is not None else ()))

    async def _gave_up(self, e: RelayError) -> None:
        notice, self._room_notice = self._room_notice, None
        if notice is not None and e.code in ("room_closed", "room_not_found"):
            # the relay said the room closed, and it does not give the seat back: it really is gone (or
            # the relay keeps lying; either way nothing here proves a result)
            if await self._certified_by(str(e.extra.get("reason", "")), e.extra.get("cert")):
                self.clock.connected = True
                return
        code, message = self.presentation.gave_up_words(e, notice, self.url, self.journal.path_arg())
        raise _Stop(code, message, True)

    async def _play(self, action: Action) -> None:
        s = self.session
        assert s is not None
        try:
            events = s.play(action)
        except Exception as e:  # an illegal action from a bot: resign rather than cheat
            self.player.failure = f"the player chose an illegal action ({e})"
            try:
                events = s.resign()
            except SessionClosed:
                return
        await self._flush(events)

    async def _peer(self, ev: PeerNotice) -> None:
        s = self.session
        assert s is not None and self.link is not None
        w = self.presentation.w
        if ev.event == "joined":
            self.out.waiting_alone = False
            if self.journal.state is not None:
                with _kept_seat():
                    self.journal.save_seat()  # now holds the joiner's peer_check: enough to rebuild the room
            self.out.say(w("net_joined"))
        elif ev.event == "away":
            self.clock.peer_away = True
            grace = w("net_grace_s", s=f"{ev.grace_s:g}") if ev.grace_s is not None else w("net_grace_while")
            self.out.note(w("net_away", grace=grace))
        elif ev.event == "back":
            self.clock.peer_away = False
            self.presentation.brief(w("net_peer_back"))
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
            self.clock.connected = True  # nothing more to wait for from the relay
            return
        self.clock.connected = False  # the clock waits until the seat is back
        self._room_notice = e
        self.out.note(self.presentation.w("net_room_closed", code=e.code, message=e.message))
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
        return any(isinstance(ev, MatchDecided) for ev in events)

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
        hello_key = s.opponent_public_key
        if hello_key is None or hello_key == ticket.peer_key:
            return
        words = {"bound": fingerprint(ticket.peer_key), "hello": fingerprint(hello_key)}
        if s.match is None and not s.is_finished:
            raise _Stop("relay_seat_mismatch", self.presentation.w("net_seat_key_stop", **words), False)
        if not self._seat_key_noted:
            self._seat_key_noted = True
            self.out.note(self.presentation.w("net_seat_key_note", **words))

    async def _flush(self, events: list[SessionEvent]) -> None:
        """Write every record and force it to disk, then send the frames, then show the events.

        Nothing is sent before it is on disk (fsync): after any crash, the transcript holds every
        message this player ever signed, so a resumed match can never sign a different one in its place."""
        s = self.session
        assert s is not None and self.link is not None
        self._check_seat_key()
        with _kept_seat():
            frames, synced = self.journal.write(s)
        for frame in frames:
            await self.link.send(frame, control=s.is_control(frame))
        if frames:
            self.journal.sent()
        for ev in events:
            if isinstance(ev, CertificateNeeded) and not self._certifying and self._nursery is not None:
                self._certifying = True
                self._nursery.start_soon(self._certify)
            self.presentation.show(ev, at_prompt=self.player.at_prompt)
        if not self.presentation.show_match() and self.player.bot is None:
            # the terminal or pipe went away: a bot plays on unseen, a person cannot
            path = self.journal.path_arg()
            raise _Stop("output_closed", self.presentation.w("net_output_closed", path=path), True)
        if synced and self.journal.state is not None and not s.is_finished:
            with _kept_seat():
                self.journal.save_seat()  # the ticket's counters, at each round's end

    def record_offline(self, events: list[SessionEvent]) -> None:
        """With no relay to send to (the room has closed): write the session's records and force them to
        disk; its frames are dropped (nobody is left to receive them)."""
        assert self.session is not None
        self.journal.write_offline(self.session)
        for ev in events:
            self.presentation.show(ev)

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
        self.journal.finish()
        status = outcome.status  # the audit's word for how the match ended
        decided = status in DECIDED  # the endings that decide the match (the audit's): exit code 0
        self.presentation.say_ending(outcome, status, decided, self.journal.shown_path(), self.player.failure)
        return 0 if decided else 1

    async def _deliver_last(self) -> None:
        """Make sure the last frames went out on a live connection; then leave the room if done."""
        s = self.session
        assert s is not None and self.link is not None
        if not self.clock.connected and s.unacknowledged():
            # (only while the opponent lacks something of ours: a relay gone after the match's end — a host's own
            # relay stops once both seats left — must not keep a finished player waiting for a reconnection)
            with trio.move_on_after(self.tuning.reconnect_s + 1):
                while not self.clock.connected:
                    item = await self._inbox.receive()
                    if isinstance(item, (GaveUp, RoomGone)):
                        break
                    if isinstance(item, PeerChanged) and item.event.event == "away":
                        break  # the opponent left after the end (a host's own relay then stops): nothing to wait for
                    if isinstance(item, Connected):
                        self.clock.connected = True
                        for frame in s.unacknowledged():
                            await self.link.send(frame, control=s.is_control(frame))
        client = self.link.client
        if client is not None and not s.unacknowledged():
            with trio.move_on_after(3), contextlib.suppress(RelayError):
                await client.leave(done=True)

    def _stopped(self, stop: _Stop) -> int:
        self.journal.stop(keep_seat=stop.keep_seat)
        self.out.error(stop.code, stop.message, transcript=self.journal.shown_path())
        return 1
