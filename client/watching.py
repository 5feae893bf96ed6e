"""``koikoi watch``: a match followed live from a relay, by a watcher that holds no seat.

:class:`Watcher` asks the relay to ``watch`` a room, feeds every frame the relay took from either seat (``seen``)
to a :class:`~koikoi.protocol.spectator.Spectator` — the line's one judge, the one the seats and ``koikoi audit``
run — and hands what it reports to a :class:`WatchSink`: the narration (:class:`PlainSink`), one JSON event per
line (:class:`JsonSink`) or the full-screen board (:class:`BoardSink`). When the connection drops it connects
again and asks for the room's log from the first frame it lacks (``from``), as a player takes its seat back, for
as long as ``KOIKOI_RECONNECT_TIMEOUT`` allows. It ends when the line has an outcome or the room closes, with the
verdict ``koikoi audit`` gives of the line it saw (:meth:`Spectator.report`): the same code, never a second rule.

A watcher sees public cards only: the board and the events name no card in a hand or the deck (in a sealed
room its program cannot know them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import trio

from ..engine.cards import card_from_id, card_name
from ..engine.yaku import Yaku
from ..protocol.audit import AuditReport
from ..protocol.public_board import PublicBoard
from ..protocol.spectator import Spectator
from ..protocol.watch_events import (
    CaptureChosen,
    CardDrawn,
    CardPlayed,
    FaultSeen,
    KoiKoiCalled,
    Redealt,
    RoundCounted,
    RoundDealt,
    RoundStopped,
    ShobuCalled,
    Superseded,
    WatchEvent,
    WatchOver,
    WatchStarted,
    YakuMade,
)
from ..relay.client import TRANSIENT, RelayClient, RelayError, RoomClosed, Seen, Watching, connect
from ..relay.codes import format_code
from .commands.audit import verdict
from .output import NetError, Output, relay_error_text, settings_text
from .tui.render import card_list, yaku_name
from .tui.text import Look
from .tuning import Tuning

__all__ = ["BoardSink", "JsonSink", "PlainSink", "WatchSink", "Watcher", "board_lines", "event_line"]

Connector = Callable[..., AbstractAsyncContextManager[RelayClient]]


class WatchSink(Protocol):
    """Where a watch's news goes."""

    def watching(self, w: Watching, url: str) -> None: ...
    def told(self, events: list[WatchEvent], board: PublicBoard) -> None: ...
    def note(self, text: str) -> None: ...
    def finished(self, report: AuditReport, room: str) -> None: ...


# ---------------------------------------------------------------------------------------------- words


def _card(card_id: str, lang: str) -> str:
    return card_name(card_from_id(card_id), lang)


def _cards(ids: tuple[str, ...] | list[str], lang: str) -> str:
    """The cards named by their ids, as the narration lists cards (``nothing`` for none)."""
    return card_list([card_from_id(c) for c in ids], Look(lang=lang))


def _yaku(yaku_id: str, lang: str) -> str:
    return yaku_name(Yaku(yaku_id), Look(lang=lang))


def _seat(seat: int) -> str:
    return f"Seat {seat}"


def event_line(ev: WatchEvent, lang: str = "en") -> str | None:
    """One sentence for one event (None: nothing to say out loud)."""
    if isinstance(ev, WatchStarted):
        s = ev.settings
        return (
            f"The match starts: {settings_text(s.rounds, s.double_at_8, s.move_time_s, s.deck.value)}. "
            f"Seat 0 (host) {ev.players[0]}, seat 1 {ev.players[1]}."
        )
    if isinstance(ev, RoundDealt):
        return f"Round {ev.round}: seat {ev.dealer} deals and plays first."
    if isinstance(ev, Redealt):
        return f"Round {ev.round} is dealt again (four cards of a month on the table)."
    if isinstance(ev, CardPlayed):
        what = f"capturing {_cards(ev.captured, lang)}" if ev.captured else "to the table"
        return f"{_seat(ev.seat)} plays {_card(ev.card, lang)}, {what}."
    if isinstance(ev, CardDrawn):
        if ev.choosing:
            return f"{_seat(ev.seat)} draws {_card(ev.card, lang)}: it matches two table cards; seat {ev.seat} chooses."
        what = f"capturing {_cards(ev.captured, lang)}" if ev.captured else "to the table"
        return f"{_seat(ev.seat)} draws {_card(ev.card, lang)}, {what}."
    if isinstance(ev, CaptureChosen):
        return f"{_seat(ev.seat)} captures {_cards(ev.captured, lang)} with {_card(ev.card, lang)}."
    if isinstance(ev, YakuMade):
        return f"{_seat(ev.seat)} makes {_yaku(ev.yaku, lang)} ({ev.points} pts)."
    if isinstance(ev, KoiKoiCalled):
        return f"{_seat(ev.seat)} calls koi-koi ({ev.total} pts so far): the round goes on."
    if isinstance(ev, ShobuCalled):
        return f"{_seat(ev.seat)} calls shōbu with {ev.total} pts."
    if isinstance(ev, RoundCounted):
        r = ev.result
        if r.winner is None:
            return f"Round {r.round} ends drawn. Pools {r.points[0]}–{r.points[1]}."
        yaku = ", ".join(_yaku(y.value, lang) for y, _ in r.yaku)
        made = f" ({yaku})" if yaku else ""
        return f"Round {r.round}: seat {r.winner} wins {r.payment} pts{made}. Pools {r.points[0]}–{r.points[1]}."
    if isinstance(ev, RoundStopped):
        return f"Round {ev.round} is stopped by seat {ev.seat}."
    if isinstance(ev, Superseded):
        return f"An end message crossed seat {ev.seat}'s last {ev.messages} message(s): they no longer count."
    if isinstance(ev, FaultSeen):
        return (
            f"Seat {ev.seat} signed a message the rules refuse ({ev.code}: {ev.message}); "
            f"seat {1 - ev.seat}'s ABORT decides."
        )
    if isinstance(ev, WatchOver):
        return None  # the verdict is said by finished()
    return None


def board_lines(board: PublicBoard, lang: str = "en") -> list[str]:
    """The board as lines of text: what both players see, and no more."""
    out: list[str] = []
    s = board.settings
    if s is not None:
        out.append(settings_text(s.rounds, s.double_at_8, s.move_time_s, s.deck.value))
    p0, p1 = board.players
    out.append(f"seat 0 {p0 or '?'}  {board.points[0]} pts    seat 1 {p1 or '?'}  {board.points[1]} pts")
    if board.round == 0:
        out.append("The match has not started.")
    else:
        dealer = "?" if board.dealer is None else str(board.dealer)
        turn = "" if board.turn is None else f", seat {board.turn} to play"
        out.append(f"Round {board.round}, seat {dealer} deals{turn}; deck {board.deck_count} cards")
        out.append(f"Table: {_cards(board.table, lang) if board.table else 'empty'}")
        if board.drawn is not None:
            out.append(f"Drawn, waiting for its capture: {_card(board.drawn, lang)}")
        for seat in (0, 1):
            caps = board.captures[seat]
            yaku = ", ".join(f"{_yaku(y, lang)} {p}" for y, p in board.yaku[seat])
            calls = board.koikoi_calls[seat]
            extra = (f"; yaku: {yaku}" if yaku else "") + (f"; koi-koi ×{calls}" if calls else "")
            out.append(f"Seat {seat}: {board.hand_counts[seat]} in hand{extra}")
            out.append(f"  captured ({len(caps)}): {_cards(caps, lang)}")
    for ev in board.last_events:
        line = event_line(ev, lang)
        if line is not None:
            out.append(f"· {line}")
    return out


# ---------------------------------------------------------------------------------------------- sinks


class PlainSink:
    """The narration: one sentence per event on stdout (a screen reader's, and a pipe's)."""

    def __init__(self, out: Output, lang: str = "en") -> None:
        self.out = out
        self.lang = lang

    def watching(self, w: Watching, url: str) -> None:
        self.out.say(
            f"Watching room {w.display} on {url} ({w.watchers} watching; "
            f"{settings_text(w.rounds, w.double_at_8, w.move_time_s, w.deck)})."
        )

    def told(self, events: list[WatchEvent], board: PublicBoard) -> None:
        for ev in events:
            line = event_line(ev, self.lang)
            if line is not None:
                self.out.say(line)

    def note(self, text: str) -> None:
        self.out.say(text)

    def finished(self, report: AuditReport, room: str) -> None:
        self.out.say(verdict(f"room {room}", report, self.lang))


class JsonSink:
    """One JSON object per line: the relay's ``watching``, every event (``WatchEvent.to_json``), and the
    ``verdict`` — ``koikoi audit --json``'s object for the line seen (``file``: null)."""

    def __init__(self, out: Output) -> None:
        self.out = out

    def watching(self, w: Watching, url: str) -> None:
        settings = {"rounds": w.rounds, "double_at_8": w.double_at_8, "move_time_s": w.move_time_s, "deck": w.deck}
        self.out.event(
            "watching", relay=url, room=w.room, display=w.display, settings=settings, seats=list(w.seats),
            frames=w.frames, watchers=w.watchers,
        )  # fmt: skip

    def told(self, events: list[WatchEvent], board: PublicBoard) -> None:
        for ev in events:
            if isinstance(ev, WatchOver):
                continue  # the verdict says it (finished)
            fields = ev.to_json()
            self.out.event(str(fields.pop("event")), **fields)

    def note(self, text: str) -> None:
        self.out.event("note", message=text)

    def finished(self, report: AuditReport, room: str) -> None:
        fields: dict[str, Any] = report.to_json("")
        fields["file"] = None
        self.out.event("verdict", **fields)


class BoardSink:
    """The full-screen board (a terminal): the public board redrawn at each event (rich's alternate screen)."""

    def __init__(self, out: Output, lang: str = "en") -> None:
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        self.out = out
        self.lang = lang
        self._text = Text
        self._title = ""
        self._live = Live(Text("waiting for the relay…"), console=Console(), screen=True, auto_refresh=False)
        self._live.start()
        self._notes: list[str] = []

    def _show(self, lines: list[str]) -> None:
        body = [self._title, "", *lines]
        if self._notes:
            body += ["", *self._notes[-3:]]
        self._live.update(self._text("\n".join(body)), refresh=True)

    def watching(self, w: Watching, url: str) -> None:
        self._title = f"koikoi watch — room {w.display} on {url} ({w.watchers} watching) — Ctrl-C stops"
        self._show([])

    def told(self, events: list[WatchEvent], board: PublicBoard) -> None:
        self._show(board_lines(board, self.lang))

    def note(self, text: str) -> None:
        self._notes.append(text)

    def finished(self, report: AuditReport, room: str) -> None:
        self.close()
        self.out.say(verdict(f"room {room}", report, self.lang))

    def close(self) -> None:
        self._live.stop()


# ---------------------------------------------------------------------------------------------- the loop


class Watcher:
    """One watch of one room: :meth:`run` follows it to its end; :attr:`spectator` is the line's judge (made at
    the first connection, with the room asked for and the relay's key as announced: a HELLO naming another room
    or relay is another line's)."""

    def __init__(
        self,
        url: str,
        room: str,
        password: str | None,
        sink: WatchSink,
        tuning: Tuning,
        *,
        connector: Connector = connect,
    ) -> None:
        self.url = url
        self.room = room
        self.password = password
        self.sink = sink
        self.tuning = tuning
        self.connector = connector
        self.spectator: Spectator | None = None
        self.next_i = 0
        """The index in the room's log of the next frame this watcher lacks (``from`` when it watches again)."""
        self.reconnects = 0
        self.verdict: AuditReport | None = None
        """The audit's verdict the spectator gave when the line got its outcome (:class:`WatchOver`)."""
        self._last: Seen | None = None
        """The last frame this watcher took (the one at ``next_i - 1``)."""

    async def _serve(self, client: RelayClient, spec: Spectator, check: Seen | None) -> bool:
        """Feed the room's frames to ``spec`` until the line has an outcome (True); RoomClosed when the room closes.
        ``check``: the frame this watcher had at the index it asked from (its last one); a different one there
        means the relay's log is another one (a relay that restarted): False, to watch again from 0."""
        while True:
            item = await client.next_seen()
            if check is not None:
                if item.i == check.i and (item.seat, item.d) != (check.seat, check.d):
                    return False
                check = None  # (the same frame, or none to compare: a full log sends live frames only)
            if item.i < self.next_i:
                continue  # a frame this watcher already has (a log replayed from an earlier index)
            self.next_i = item.i + 1
            self._last = item
            events = spec.feed(item.seat, item.d)
            for ev in events:
                if isinstance(ev, WatchOver):
                    self.verdict = ev.report  # the audit of the line, run once
            if events:
                self.sink.told(events, spec.board())
            if spec.over:
                return True

    async def run(self) -> AuditReport:
        """Watch until the line has an outcome or the room closes; the audit's verdict of the line seen.
        NetError when the relay refuses the watch, or cannot be reached for ``tuning.reconnect_s``."""
        url, sink, tuning = self.url, self.sink, self.tuning
        delay = 0.1
        deadline = trio.current_time() + tuning.reconnect_s
        while True:
            try:
                async with self.connector(url, timeout=tuning.connect_s) as client:
                    check = self._last  # (asked for again: the relay's log must still have it there)
                    first = check.i if check is not None else 0
                    try:
                        w = await client.watch(self.room, password=self.password, from_=first)
                    except RelayError as e:
                        if self.spectator is not None and e.code in ("room_not_found", "room_closed"):
                            break  # it closed while this watcher was away: the line ends where it ended for us
                        raise
                    deadline = trio.current_time() + tuning.reconnect_s
                    delay = 0.1
                    # the room as this watcher asked for it, never the relay's text (which may carry escapes)
                    w = dataclasses.replace(w, room=self.room, display=format_code(self.room))
                    if self.spectator is None:
                        self.spectator = Spectator(room=self.room, relay_key=client.relay_key)
                        sink.watching(w, url)
                    else:
                        self.reconnects += 1
                        sink.note(f"back on the relay: following room {w.display} from frame {self.next_i}")
                    if w.frames < self.next_i or not await self._serve(client, self.spectator, check):
                        # another log than the one this watcher followed (the relay restarted and rebuilt the
                        # room): watch it again from its start (the spectator holds what it has, byte for byte)
                        self.next_i, self._last = 0, None
                        sink.note("the relay's log of the room is not the one followed: watching it from its start")
                        continue
                    break
            except RoomClosed:
                break
            except RelayError as e:
                if e.code not in TRANSIENT:
                    code, message = relay_error_text(e, url, self.room)
                    if e.code in _REFUSED_WATCH:
                        message = f"the relay at {url} refused to let you watch room {self.room}: {e.message}"
                    raise NetError(code, message) from None
                if trio.current_time() + delay > deadline:
                    code, message = relay_error_text(e, url, self.room)
                    raise NetError(code, message) from None
                if self.spectator is not None:
                    sink.note(f"the connection to the relay was lost ({e.code}); connecting again")
                await trio.sleep(delay)
                delay = min(delay * 2, 3.0)
        spec = self.spectator if self.spectator is not None else Spectator(room=self.room)
        report = self.verdict if self.verdict is not None and spec.over else spec.report()
        sink.finished(report, self.room)
        return report


_REFUSED_WATCH = frozenset({"watchers_off", "too_many_watchers", "too_many_watching", "watching", "already_seated"})
