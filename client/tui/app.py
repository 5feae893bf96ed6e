"""The full-screen board (Textual), and the thread-safe :class:`BoardTable` a match loop drives.

Threads: the Textual app owns the main thread and its asyncio loop. The match
loop (practice's, or the network's trio loop) runs in another thread and talks
to the board only through :class:`BoardTable`, whose methods are safe to call
from any thread but the app's: ``show`` and ``note`` return at once; ``choose``,
``pause`` and ``ask_again`` block the calling thread (a worker thread for trio:
``trio.to_thread.run_sync``) until the person answers. The board never blocks
the match loop, and the loop never blocks the board.

Leaving: ``q`` asks first, then calls ``on_leave("quit")``; Ctrl-C calls
``on_leave("interrupt")`` at once. A decision being asked at that moment raises
:class:`PlayerQuit` in the thread waiting for it. Without ``on_leave`` (practice)
the board closes and every later call raises :class:`PlayerQuit`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias, TypeVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input, Static

from ...engine.actions import Action
from ...engine.cards import AKATAN, AOTAN, CARDS, CURTAIN, INOSHIKACHO, LIGHTS, MOON, SAKE_CUP, cards_of
from ...engine.events import Event, MatchEnded, RoundEnded
from ...engine.match import SeatView
from ...engine.yaku import Yaku
from .board import BoardMode, BoardModel, Hot, KeyOutcome, yaku_label
from .board_layout import captures_lines, layout
from .human import PlayerQuit
from .text import Look, Seats
from .words import say

__all__ = ["BoardApp", "BoardRun", "BoardTable", "help_lines", "run_board", "yaku_lines"]

T = TypeVar("T")
LogEntry: TypeAlias = Event

_PLUS_TANE = ("+1/tane", "タネ1枚ごとに+1")
_PLUS_TAN = ("+1/tan", "短冊1枚ごとに+1")
_MORE = ("+1 each more", "1枚ごとに+1")
# (yaku, base points, the extra per card (en, ja) or None, its cards: a mask, or words (en, ja))
_YAKU_TABLE: list[tuple[Yaku, str, tuple[str, str] | None, int | tuple[str, str]]] = [
    (Yaku.GOKO, "10", None, LIGHTS),
    (Yaku.SHIKO, "8", None, ("four lights, without the Rain Man", "雨（小野道風）を除く光四枚")),
    (Yaku.AME_SHIKO, "7", None, ("four lights, the Rain Man one of them", "雨（小野道風）を含む光四枚")),
    (Yaku.SANKO, "5", None, ("three lights, without the Rain Man", "雨（小野道風）を除く光三枚")),
    (Yaku.HANAMI, "5", None, CURTAIN | SAKE_CUP),
    (Yaku.TSUKIMI, "5", None, MOON | SAKE_CUP),
    (Yaku.INOSHIKACHO, "5", _PLUS_TANE, INOSHIKACHO),
    (Yaku.AKATAN, "5", _PLUS_TAN, AKATAN),
    (Yaku.AOTAN, "5", _PLUS_TAN, AOTAN),
    (Yaku.AKATAN_AOTAN, "10", _PLUS_TAN, AKATAN | AOTAN),
    (Yaku.TANE, "1", _MORE, ("any five tane", "タネ五枚")),
    (Yaku.TAN, "1", _MORE, ("any five ribbons", "短冊五枚")),
    (Yaku.KASU, "1", _MORE, ("any ten plains", "カス十枚")),
    (Yaku.TESHI, "6", None, ("four cards of one month in the dealt hand", "配られた手札に同じ月の札が四枚")),
    (Yaku.KUTTSUKI, "6", None, ("four pairs of months in the dealt hand", "配られた手札に同じ月の二枚組が四組")),
]


def yaku_lines(lang: str, double_at_8: bool = True) -> list[str]:
    """The yaku with their points under this game's rules, and the cards each needs (the ``y`` list):
    ``Hanami de ippai   5`` then ``  Cherry with Curtain + Chrysanthemum with Sake cup``."""
    ja = lang == "ja"
    out: list[str] = []
    for y, base, extra, cards in _YAKU_TABLE:
        pts = base + ("点" if ja else "") + ("" if extra is None else " " + extra[1 if ja else 0])
        name = yaku_label(y, lang)
        out.append(f"{name}　{pts}" if ja else f"{name:<24} {pts}")
        if isinstance(cards, int):
            what = " + ".join(CARDS[c].name_ja if ja else CARDS[c].name_en for c in cards_of(cards))
        else:
            what = cards[1 if ja else 0]
        out.append(f"    {what}")
    if lang == "ja":
        out += [
            "",
            "光：雨（小野道風）入りの三枚は三光になりません。盃はタネのみ。",
            "8点以上で2倍" + ("（この対戦はあり）" if double_at_8 else "（この対戦はなし）") + "。",
            "こいこい一回ごとに倍率+1（両者共通）。支払いは相手の持ち点が上限。",
        ]
    else:
        out += [
            "",
            "Lights: three with the Rain Man are no Sankō. The Sake cup is a tane only.",
            "×2 when the base is 8 or more" + (" (on in this match)." if double_at_8 else " (off in this match)."),
            "Each koi-koi call adds one to the shared multiplier; the payment is capped at the loser's points.",
        ]
    return out


def help_lines(lang: str, network: bool) -> list[str]:
    if lang == "ja":
        return [
            "1–8：その番号の手札を出す（←→で選んでEnterでも）。マウスで札をクリックしても可。",
            "二枚と合うとき：1か2（←→＋Enter）で取る札を選ぶ。Escで戻る。",
            "k：こいこい、s：勝負（今の計算を表示）。",
            "y：役と点数の一覧。h：このヘルプ。",
            "q：" + ("確認のうえ投了" if network else "確認のうえ練習をやめる") + "。"
            + ("Ctrl-C：保存して終了（koikoi resume で再開）。" if network else "Ctrl-C：すぐにやめる。"),
            "色：黄＝光、緑＝タネ、赤＝赤短、青＝青短、紫＝短冊、白＝カス。* は取れる札。",
            "--plain で画面読み上げ向けの文章モード。",
        ]  # fmt: skip
    return [
        "1–8: play that hand card (or ←→ to select and Enter). Clicking a card works too.",
        "Two field cards match: 1 or 2 (or ←→ + Enter) picks the capture; Esc goes back.",
        "k: koi-koi, s: shōbu (the count is shown first).",
        "y: the yaku and their points. h: this help.",
        "q: " + ("resign, after asking" if network else "abandon the practice, after asking") + ". "
        + ("Ctrl-C: save and stop (continue with koikoi resume)." if network else "Ctrl-C: stop at once."),
        "Colours: yellow lights, green tane, red poem ribbons, blue ribbons, magenta plain ribbons,"
        " plain the rest. * marks a hand card that captures.",
        "--plain gives the narrated text mode for screen readers.",
    ]  # fmt: skip


class InfoScreen(ModalScreen[None]):
    """A list (help, yaku, captures) over the board: the arrows, PgUp/PgDn, Home/End scroll it; Esc, Enter,
    q or the key that opened it (``key``) close it."""

    DEFAULT_CSS = """
    InfoScreen { align: center middle; }
    InfoScreen > Vertical { width: 90%; height: auto; max-height: 90%; border: round $accent;
                            background: $surface; padding: 0 1; }
    InfoScreen VerticalScroll { height: auto; max-height: 18; }
    """

    def __init__(self, title: str, lines: Sequence[str], footer: str, key: str = "escape") -> None:
        super().__init__()
        self.title_text = title
        self.lines = list(lines)
        self.footer = footer
        self.key = key

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.title_text, style="bold"))
            with VerticalScroll():
                yield Static("\n".join(self.lines), markup=False)
            yield Static(Text(self.footer, style="dim"))

    def on_key(self, event: events.Key) -> None:
        event.stop()
        scroll = self.query_one(VerticalScroll)
        moves: dict[str, Callable[[], object]] = {
            "up": lambda: scroll.scroll_up(animate=False),
            "down": lambda: scroll.scroll_down(animate=False),
            "pageup": lambda: scroll.scroll_page_up(animate=False),
            "pagedown": lambda: scroll.scroll_page_down(animate=False),
            "space": lambda: scroll.scroll_page_down(animate=False),
            "home": lambda: scroll.scroll_home(animate=False),
            "end": lambda: scroll.scroll_end(animate=False),
        }
        if event.key in moves:
            moves[event.key]()
        elif event.key in ("escape", "enter", "q", self.key):
            self.dismiss(None)

    def on_click(self, event: events.Click) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question over the board."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 70%; height: auto; border: round $warning; background: $surface;
                               padding: 0 1; }
    """

    def __init__(self, question: str, keys: str) -> None:
        super().__init__()
        self.question = question
        self.keys = keys

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.question, style="bold"))
            yield Static(Text(self.keys))

    def on_key(self, event: events.Key) -> None:
        event.stop()
        if event.key in ("y", "enter", "q"):
            self.dismiss(True)
        elif event.key in ("n", "escape"):
            self.dismiss(False)


class SecretScreen(ModalScreen[str | None]):
    """A password typed over the board, never shown: Enter sends it, Esc sends none."""

    DEFAULT_CSS = """
    SecretScreen { align: center middle; }
    SecretScreen > Vertical { width: 70%; height: auto; border: round $warning; background: $surface;
                              padding: 0 1; }
    """

    def __init__(self, question: str, keys: str) -> None:
        super().__init__()
        self.question = question
        self.keys = keys

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.question, style="bold"))
            yield Input(password=True, id="secret")
            yield Static(Text(self.keys, style="dim"))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            self.dismiss(None)


class BoardView(Widget):
    """Paints :func:`layout` and turns clicks into the model's hot spots."""

    def __init__(self, model: BoardModel) -> None:
        super().__init__()
        self.model = model
        self.hot: list[Hot] = []

    def render(self) -> Text:
        lines, self.hot = layout(self.model, self.size.width, self.size.height, time.monotonic())
        return Text("\n").join(lines)

    def on_click(self, event: events.Click) -> None:
        for h in self.hot:
            if h.row == event.y and h.x0 <= event.x < h.x1:
                app = self.app
                assert isinstance(app, BoardApp)
                app.outcome(self.model.click(h.key))
                return


class BoardApp(App[int]):
    """The board. ``start`` (if given) runs in a thread once the board is up: the match loop."""

    CSS = "BoardView { width: 100%; height: 100%; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", show=False, priority=True),
        Binding("ctrl+q", "interrupt", show=False, priority=True),
    ]
    ENABLE_COMMAND_PALETTE = False

    def __init__(
        self,
        seats: Seats,
        look: Look,
        rounds: int,
        *,
        network: bool = False,
        pause_between_rounds: bool = True,
        start: Callable[[BoardTable], object] | None = None,
    ) -> None:
        super().__init__()
        self.model = BoardModel(seats, look, rounds, network=network)
        self.pause_between_rounds = pause_between_rounds
        self.table = BoardTable(self)
        self._start = start
        self._pending: concurrent.futures.Future[Any] | None = None
        self._pending_kind = ""
        self.questions = 0
        """How many questions (decisions, pauses, "play again?") the board has asked so far."""
        self.on_leave: Callable[[str], None] | None = None
        self.leave_reason: str | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.board = BoardView(self.model)
        self.thread: threading.Thread | None = None
        self.thread_error: BaseException | None = None
        self.thread_result: object = None

    def compose(self) -> ComposeResult:
        yield self.board

    def on_mount(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.table.ready.set()
        self.set_interval(0.5, self._tick)
        if self._start is not None:
            start = self._start

            def body() -> None:
                try:
                    self.thread_result = start(self.table)
                except BaseException as e:  # handed to the caller after the board closes
                    self.thread_error = e
                finally:
                    self.table.close()

            self.thread = threading.Thread(target=body, name="koikoi-match", daemon=True)
            self.thread.start()

    def on_unmount(self) -> None:
        self.table.closed.set()
        self._fail_pending(PlayerQuit(self.leave_reason or "quit"))

    def _tick(self) -> None:
        if self.model.deadline is not None or self.model.brief is not None:
            if self.model.brief is not None and time.monotonic() >= self.model.brief[1]:
                self.model.brief = None
            self.board.refresh()

    def redraw(self) -> None:
        self.board.refresh()

    # -- keys ------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        if self.screen is not self.screen_stack[0]:
            return
        key = event.key
        if event.character and event.character.isdecimal() and not key.isdecimal():
            key = str(int(event.character))  # full-width digits
        event.stop()
        self.outcome(self.model.key(key))

    def outcome(self, out: KeyOutcome) -> None:
        m = self.model
        lang = m.lang
        if out.dialog == "help":
            keys = say(lang, "scroll_keys", k="h")
            self.push_screen(InfoScreen(say(lang, "help_title"), help_lines(lang, m.network), keys, "h"))
        elif out.dialog == "yaku":
            dbl = m.view.settings.double_at_8 if m.view is not None else True
            keys = say(lang, "scroll_keys", k="y")
            self.push_screen(InfoScreen(say(lang, "yaku_title"), yaku_lines(lang, dbl), keys, "y"))
        elif out.dialog == "captures":
            keys = say(lang, "scroll_keys", k="c")
            self.push_screen(InfoScreen(say(lang, "caps_title"), captures_lines(m), keys, "c"))
        elif out.leave:
            q = say(lang, "confirm_resign" if m.network else "confirm_abandon")

            def answered(yes: bool | None) -> None:
                if yes:
                    self.leave("quit")

            self.push_screen(ConfirmScreen(q, say(lang, "confirm_keys")), answered)
        elif out.action is not None and self._pending_kind == "action":
            m.stop_asking()
            self._resolve(out.action)
        elif out.proceed and self._pending_kind == "pause":
            m.mode = BoardMode.WATCH
            self._resolve(None)
        elif out.proceed and m.mode == BoardMode.ROUND:
            m.mode = BoardMode.WATCH
        elif out.proceed and m.mode == BoardMode.OVER:
            self.leave_reason = self.leave_reason or "done"
            self.exit(0)
        elif out.answer is not None and self._pending_kind == "again":
            self._resolve(out.answer)
        self.redraw()

    def action_interrupt(self) -> None:
        self.leave("interrupt")

    def leave(self, reason: str) -> None:
        """The person leaves (``quit`` after confirming, ``interrupt`` for Ctrl-C)."""
        self.leave_reason = reason
        if self.on_leave is not None:
            self._fail_pending(PlayerQuit(reason))
            self.model.stop_asking()
            self.on_leave(reason)
            self.redraw()
            return
        self.table.closed.set()
        self._fail_pending(PlayerQuit(reason))
        self.exit(1)

    # -- the match loop's requests (run on the app's loop via BoardTable) ---------

    def _resolve(self, value: object) -> None:
        fut, self._pending, self._pending_kind = self._pending, None, ""
        if fut is not None and not fut.done():
            fut.set_result(value)

    def _fail_pending(self, exc: BaseException) -> None:
        fut, self._pending, self._pending_kind = self._pending, None, ""
        if fut is not None and not fut.done():
            fut.set_exception(exc)

    def _wait_for(self, kind: str) -> concurrent.futures.Future[Any]:
        self._fail_pending(PlayerQuit("superseded"))
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._pending = fut
        self._pending_kind = kind
        self.questions += 1
        return fut

    def ui_show(self, log: Sequence[LogEntry], view: SeatView | None) -> concurrent.futures.Future[Any] | None:
        m = self.model
        new = m.feed(log)
        if view is not None and m.mode == BoardMode.WATCH:
            m.view = view
        fut = None
        if any(isinstance(e, MatchEnded) for e in new):
            m.mode = BoardMode.OVER
            m.deadline = None
        elif any(isinstance(e, RoundEnded) for e in new):
            m.mode = BoardMode.ROUND  # the count stays up until Enter or this seat's next decision
            if self.pause_between_rounds:
                fut = self._wait_for("pause")
        self.redraw()
        return fut

    def ui_ask(self, view: SeatView, deadline: float | None) -> concurrent.futures.Future[Any]:
        self.model.ask(view)
        self.model.deadline = deadline
        self.model.deadline_seat = view.seat
        self.redraw()
        return self._wait_for("action")

    def ui_cancel(self) -> None:
        if self._pending_kind == "action":
            self._fail_pending(PlayerQuit("cancelled"))
            self.model.stop_asking()
            self.redraw()

    def ui_again(self) -> concurrent.futures.Future[Any]:
        self.model.mode = BoardMode.AGAIN
        self.redraw()
        return self._wait_for("again")

    def ui_secret(self, question: str) -> concurrent.futures.Future[Any]:
        fut = self._wait_for("secret")

        def answered(value: str | None) -> None:
            if self._pending is fut:
                self._resolve(value)

        # pushed from the app's own message loop (this runs from another thread's call, outside its context)
        self.call_later(self.push_screen, SecretScreen(question, say(self.model.lang, "password_keys")), answered)
        return fut

    def ui_reset(self) -> None:
        m = self.model
        self.model = BoardModel(m.seats, m.look, m.rounds, network=m.network)
        self.board.model = self.model
        self.redraw()

    def ui_say(self, lines: Sequence[str]) -> None:
        for line in lines:
            self.model.events.append(line)
        self.redraw()

    def ui_note(self, lines: Sequence[str]) -> None:
        for line in lines:
            self.model.notes.append(line)
        self.redraw()

    def ui_brief(self, line: str, seconds: float) -> None:
        self.model.say_brief(line, time.monotonic() + seconds)
        self.redraw()

    def ui_players(self, lines: Sequence[str]) -> None:
        self.model.players = list(lines)
        self.redraw()

    def ui_clock(self, deadline: float | None, seat: int | None) -> None:
        self.model.deadline = deadline
        self.model.deadline_seat = seat
        self.redraw()


class BoardTable:
    """The board as a match loop sees it: thread-safe, never called from the board's own thread.

    * ``show(log, view)``: the match log (all of it; entries already shown are skipped) and this
      seat's latest view. Returns at once, except in practice (``pause_between_rounds``) after a
      round's count, where it waits for Enter.
    * ``choose(view, deadline=None) -> Action``: ask for this seat's decision; blocks until the
      person answers. ``deadline``: ``time.monotonic()`` when the move is due (the clock shown).
      Raises :class:`PlayerQuit` when the person leaves or :meth:`cancel` is called.
    * ``cancel()``: stop asking (the decision was taken elsewhere, e.g. the match ended).
    * ``note(*lines)``: a message line (connection lost, the opponent is away, a clock warning);
      ``brief(line)``: one that leaves by itself after a few seconds (the opponent is back).
    * ``players(*lines)``: who is playing (both keys, the relay's), shown until this seat's first move.
    * ``clock(deadline, seat)``: show (or hide, ``None``) a move clock for ``seat``.
    * ``ask_again() -> bool``: practice's "play again?"; ``reset()`` clears the board for a new match.
    * ``ask_secret(question) -> str | None``: a password, typed without echo (None: Esc, none given).
    * ``close()``: the board ends (returns at once).
    """

    def __init__(self, app: BoardApp) -> None:
        self.app = app
        self.lang = app.model.lang
        self.seats = app.model.seats
        self.ready = threading.Event()
        self.closed = threading.Event()

    def _reason(self) -> PlayerQuit:
        return PlayerQuit(self.app.leave_reason or "quit")

    def _wait(self, fut: concurrent.futures.Future[T]) -> T:
        while True:
            try:
                return fut.result(timeout=0.2)
            except concurrent.futures.TimeoutError:
                if self.closed.is_set():
                    raise self._reason() from None

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        self.ready.wait()
        loop = self.app.loop
        if self.closed.is_set() or loop is None:
            raise self._reason()
        fut: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                fut.set_result(fn(*args))
            except BaseException as e:
                fut.set_exception(e)

        try:
            loop.call_soon_threadsafe(run)
        except RuntimeError:  # the loop is closed: the board is gone
            raise self._reason() from None
        return self._wait(fut)

    def show(self, log: Sequence[LogEntry], view: SeatView | None = None) -> None:
        fut = self._call(self.app.ui_show, list(log), view)
        if fut is not None:
            self._wait(fut)

    def choose(self, view: SeatView, deadline: float | None = None) -> Action:
        fut = self._call(self.app.ui_ask, view, deadline)
        action = self._wait(fut)
        assert isinstance(action, Action)
        return action

    def cancel(self) -> None:
        try:
            self._call(self.app.ui_cancel)
        except PlayerQuit:
            pass

    def say(self, *lines: str) -> None:
        self._call(self.app.ui_say, lines)

    def note(self, *lines: str) -> None:
        self._call(self.app.ui_note, lines)

    def clock(self, deadline: float | None, seat: int | None = None) -> None:
        self._call(self.app.ui_clock, deadline, seat)

    def brief(self, line: str, seconds: float = 5.0) -> None:
        """A note that leaves by itself after ``seconds`` (the opponent is back); the notes before it go."""
        self._call(self.app.ui_brief, line, seconds)

    def players(self, *lines: str) -> None:
        """Who is playing (a heading, then both keys, the relay's and who runs it): a panel over the board
        until this seat's first move."""
        self._call(self.app.ui_players, lines)

    def ask_again(self) -> bool:
        fut = self._call(self.app.ui_again)
        return bool(self._wait(fut))

    def reset(self) -> None:
        self._call(self.app.ui_reset)

    def ask_secret(self, question: str) -> str | None:
        """A secret (a room's password) typed on the board without echo; None when the person gives none (Esc).
        Blocks like :meth:`choose`; raises :class:`PlayerQuit` when the person leaves."""
        fut = self._call(self.app.ui_secret, question)
        value = self._wait(fut)
        return value if isinstance(value, str) else None

    def set_on_leave(self, callback: Callable[[str], None] | None) -> None:
        """``callback(reason)`` runs (on the board's thread) when the person leaves: ``quit`` after
        confirming ``q`` (network: resign), ``interrupt`` for Ctrl-C (network: save and stop).
        Without one, the board closes itself."""
        self.app.on_leave = callback

    def close(self) -> None:
        if self.closed.is_set() or self.app.loop is None:
            self.closed.set()
            return
        self.closed.set()
        try:
            self.app.loop.call_soon_threadsafe(self.app.exit, self.app.return_value)
        except RuntimeError:
            pass


@dataclass
class BoardRun:
    """How a :func:`run_board` went: the body's result (or its error), and why the person left (None:
    they did not; ``quit``, ``interrupt``; ``done`` when they closed the finished match)."""

    result: object
    error: BaseException | None
    leave_reason: str | None
    model: BoardModel


def run_board(
    seats: Seats,
    look: Look,
    rounds: int,
    body: Callable[[BoardTable], object],
    *,
    network: bool = False,
    pause_between_rounds: bool = True,
    join_timeout: float = 10.0,
) -> BoardRun:
    """The board on this (the main) thread, ``body(table)`` (the match loop: practice's, or
    ``trio.run`` of the network's) on another. Returns when the board closes — when ``body``
    returns (it closes the board), or the person leaves — and ``body`` ended (or ``join_timeout``
    passed). Print the last words after it: the terminal is back to normal then."""
    app = BoardApp(seats, look, rounds, network=network, pause_between_rounds=pause_between_rounds, start=body)
    app.run()
    if app.thread is not None:
        app.thread.join(timeout=join_timeout)
    return BoardRun(app.thread_result, app.thread_error, app.leave_reason, app.model)
