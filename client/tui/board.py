"""The full-screen board's model, pure: no terminal, no threads, no clock.

:class:`BoardModel` holds what the board shows (the seat's latest view, the
recent events, what is being asked, the selection) and takes the person's
keys (:meth:`BoardModel.key`), answering with an :class:`KeyOutcome` (an action,
a quit request, a dialog to open). :func:`~.board_layout.layout` draws the model into lines
of styled text for a ``width`` × ``height`` screen (at least 80 × 24 shows
everything at once), with the screen positions of the clickable cards.

The Textual app (:mod:`.app`) only forwards keys and clicks here and paints
the lines; the tests draw the same lines without a terminal.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeAlias

from ...engine.actions import CHOOSE, KOIKOI, PLAY, PLAY_AT, SHOBU, Action, ActionKind
from ...engine.cards import (
    AKATAN,
    AOTAN,
    CARDS,
    CURTAIN,
    INOSHIKACHO,
    LIGHTS,
    MOON,
    PLAINS,
    RIBBONS,
    SAKE_CUP,
    TANE,
    Card,
    Kind,
    cards_of,
)
from ...engine.events import (
    Chosen,
    Dealt,
    Drawn,
    DrawnChoice,
    Event,
    HandYaku,
    KoiKoi,
    Played,
    Redeal,
    RoundEnded,
    Shobu,
)
from ...engine.match import Phase, RoundEnd, RoundResult, SeatView
from ...engine.yaku import Yaku, yaku_of
from .render import LogReading, matches_in, shobu_breakdown
from .text import Look, Seats
from .words import ribbon_style, say

__all__ = ["BoardMode", "BoardModel", "Hot", "KeyOutcome", "card_style", "progress", "yaku_label"]

LogEntry: TypeAlias = Event

STYLES = {
    "light": "bold yellow",
    "tane": "green",
    "poem": "bold red",
    "blue": "bold blue",
    "ribbon": "magenta",
    "plain": "",
    "head": "bold",
    "dim": "dim",
    "mark": "bold green",
    "sel": "reverse",
    "warn": "bold red",
    "made": "bold cyan",
    "note": "cyan",
}


def card_style(card: Card) -> str:
    kind = CARDS[card].kind
    if kind is Kind.LIGHT:
        return STYLES["light"]
    if kind is Kind.TANE:
        return STYLES["tane"]
    if kind is Kind.RIBBON:
        return STYLES[ribbon_style(card)]
    return STYLES["plain"]


def yaku_label(y: Yaku, lang: str) -> str:
    """The yaku's name, the same everywhere (the count's ``Hanami de ippai``), without the explanation the
    count adds in parentheses."""
    return y.name_ja if lang == "ja" else y.name_en.split(" (", 1)[0]


def progress(caps: int, lang: str) -> list[tuple[str, bool]]:
    """How close a capture pile is to each yaku: ``("Akatan 2/3", False)``; made yaku ``("Akatan 5", True)``.

    Only what has started is listed (a pile with no light lists no light yaku)."""
    made = yaku_of(caps)
    have = {y for y, _ in made}
    out = [(f"{yaku_label(y, lang)} {p}", True) for y, p in made]

    def part(y: Yaku, n: int, need: int) -> None:
        if n and y not in have:
            out.append((f"{yaku_label(y, lang)} {n}/{need}", False))

    lights = (caps & LIGHTS).bit_count()
    if not have & {Yaku.GOKO, Yaku.SHIKO, Yaku.AME_SHIKO, Yaku.SANKO}:
        part(Yaku.SANKO, lights, 3)
    if caps & SAKE_CUP or caps & CURTAIN:
        part(Yaku.HANAMI, (caps & (SAKE_CUP | CURTAIN)).bit_count(), 2)
    if caps & SAKE_CUP or caps & MOON:
        part(Yaku.TSUKIMI, (caps & (SAKE_CUP | MOON)).bit_count(), 2)
    part(Yaku.INOSHIKACHO, (caps & INOSHIKACHO).bit_count(), 3)
    if Yaku.AKATAN_AOTAN not in have:
        part(Yaku.AKATAN, (caps & AKATAN).bit_count(), 3)
        part(Yaku.AOTAN, (caps & AOTAN).bit_count(), 3)
    part(Yaku.TANE, (caps & TANE).bit_count(), 5)
    part(Yaku.TAN, (caps & RIBBONS).bit_count(), 5)
    part(Yaku.KASU, (caps & PLAINS).bit_count(), 10)
    return out


@dataclass(frozen=True)
class Hot:
    """A clickable spot: screen ``row``, columns ``x0``..``x1`` (exclusive), and the key it stands for."""

    row: int
    x0: int
    x1: int
    key: str


@dataclass
class KeyOutcome:
    """What a key led to: an action chosen, a request to leave, a dialog, or just a redraw."""

    action: Action | None = None
    leave: bool = False
    dialog: str | None = None
    answer: bool | None = None
    proceed: bool = False


def _mask(cards: Sequence[Card]) -> int:
    return sum(1 << c for c in cards)


class BoardMode(StrEnum):
    """What the board waits for (the value is the name the tests and the debug log use)."""

    WATCH = "watch"
    """Nothing of this seat: the opponent's turn, or a line in between."""
    PLAY = "play"
    """This seat plays a hand card."""
    PICK = "pick"
    """A hand card is picked: which of two table cards it captures."""
    CHOOSE = "choose"
    """The drawn card matches two table cards: which it captures."""
    DECIDE = "decide"
    """Koi-koi or shobu."""
    ROUND = "round"
    """A round's count is up until Enter or this seat's next decision."""
    OVER = "over"
    """The match is over."""
    AGAIN = "again"
    """The practice board asks whether to play again."""


@dataclass
class BoardModel:
    """Everything the board shows, and the person's selection.

    ``mode``: ``watch`` (not this seat's decision), ``play`` (pick a hand card), ``pick`` (the
    played card matches two field cards), ``choose`` (the drawn card does), ``decide`` (koi-koi or
    shōbu), ``round`` (a round's count, waiting for Enter), ``again`` (play again?), ``over``.
    """

    seats: Seats
    look: Look
    rounds: int
    network: bool = False
    view: SeatView | None = None
    mode: BoardMode = BoardMode.WATCH
    sel: int = 0
    picking: Card | None = None
    message: str = ""
    notes: deque[str] = field(default_factory=lambda: deque(maxlen=2))
    brief: tuple[str, float] | None = None
    """A note that leaves by itself (the opponent is back, connected again): its text and when it goes
    (``time.monotonic()``)."""
    players: list[str] = field(default_factory=list)
    """Who is playing (both keys, the relay's, who runs it): a panel shown until this seat's first move."""
    moved: bool = False
    events: deque[str] = field(default_factory=lambda: deque(maxlen=40))
    round_result: RoundResult | None = None
    match_end: tuple[int | None, tuple[int, int]] | None = None
    deadline: float | None = None
    deadline_seat: int | None = None
    seen: int = 0
    reading: LogReading = field(default_factory=LogReading)
    """What the log means beyond each event (captures, calls): the narration's own reading."""

    @property
    def calls(self) -> list[tuple[int, int]]:
        """The round's koi-koi calls: (seat, its yaku total when it called)."""
        return self.reading.calls

    @property
    def lang(self) -> str:
        return self.look.lang

    def t(self, key: str, **fields: object) -> str:
        return say(self.lang, key, **fields)

    def who(self, seat: int) -> str:
        return self.t("you") if seat == self.seats.me else self.seats.names[seat]

    def opp_name(self) -> str:
        me = self.seats.me or 0
        return self.seats.names[1 - me]

    def name(self, card: Card) -> str:
        info = CARDS[card]
        return info.name_ja if self.lang == "ja" else info.name_en

    def names(self, mask: int) -> str:
        return self.t("and").join(self.name(c) for c in cards_of(mask))

    # -- feeding ------------------------------------------------------------

    def say_brief(self, line: str, until: float) -> None:
        """A note that leaves at ``until``; it reports a change, so the notes before it go."""
        self.notes.clear()
        self.brief = (line, until)

    def shown_notes(self, now: float) -> list[str]:
        out = list(self.notes)
        if self.brief is not None and now < self.brief[1]:
            out.append(self.brief[0])
        return out

    def feed(self, log: Sequence[LogEntry]) -> list[LogEntry]:
        """Take the log entries not seen yet; returns them."""
        new = list(log[self.seen :])
        for e in new:
            self._entry(e)
        self.seen = len(log)
        return new

    def _entry(self, e: Event) -> None:
        ev = self.events.append
        changed = self.reading.read(e)
        if isinstance(e, (Played, Drawn, Chosen)):
            seat, card, taken = e.seat, e.card, e.taken
            who = self.who(seat)
            name = self.name(card)
            kind = "play" if isinstance(e, Played) else "draw"
            if seat == self.seats.me or self.seats.me is None:
                self.moved = True
            if isinstance(e, Chosen):
                ev(self.t("ev_choose", who=who, card=name, taken=self.names(taken)))
            elif taken:
                ev(self.t(f"ev_{kind}_take", who=who, card=name, taken=self.names(taken)))
            else:
                ev(self.t(f"ev_{kind}_field", who=who, card=name))
            for y, p, _new in changed:
                ev(self.t("ev_yaku", who=who, yaku=yaku_label(y, self.lang), p=p))
        elif isinstance(e, DrawnChoice):
            ev(self.t("ev_drawn", who=self.who(e.seat), card=self.name(e.card)))
        elif isinstance(e, KoiKoi):
            ev(self.t("ev_koikoi", who=self.who(e.seat), t=e.total, m=self.reading.multiplier))
        elif isinstance(e, Shobu):
            ev(self.t("ev_shobu", who=self.who(e.seat), t=e.total))
        elif isinstance(e, Dealt):
            ev(self.t("ev_deal", r=e.round, who=self.who(e.dealer)))
        elif isinstance(e, Redeal):
            ev(self.t("ev_redeal", r=e.round))
        elif isinstance(e, HandYaku):
            ev(self.t("ev_hand_yaku", who=self.who(e.seat), yaku=yaku_label(e.yaku, self.lang)))
        elif isinstance(e, RoundEnded):
            self.round_result = e.result
            ev(self.round_line(e.result))
        else:
            self.match_end = (e.winner, e.points)
            ev(self.match_line())

    def round_line(self, r: RoundResult) -> str:
        if r.end is RoundEnd.DRAWN or r.winner is None:
            return self.t("round_drawn", r=r.round, who=self.who(r.dealer))
        how = self.t("by_shobu" if r.end is RoundEnd.SHOBU else "by_hand")
        return self.t("round_win", r=r.round, who=self.who(r.winner), p=r.payment, how=how)

    def match_line(self) -> str:
        assert self.match_end is not None
        winner, pts = self.match_end
        if winner is None:
            return self.t("match_draw", a=pts[0], b=pts[1])
        a, b = pts[winner], pts[1 - winner]
        if winner == self.seats.me:
            return self.t("match_win_me", a=a, b=b)
        return self.t("match_win_them", name=self.seats.names[winner], a=a, b=b)

    # -- asking -------------------------------------------------------------

    def ask(self, view: SeatView) -> None:
        """Start asking for this seat's decision in ``view``."""
        self.view = view
        self.picking = None
        self.sel = 0
        self.message = ""
        self.round_result = None
        if view.phase is Phase.PLAY:
            self.mode = BoardMode.PLAY
            caps = [i for i, c in enumerate(view.hand) if matches_in(c, view.table)]
            self.sel = caps[0] if caps and self.look.assist else 0
        elif view.phase is Phase.CHOOSE:
            self.mode = BoardMode.CHOOSE
        else:
            self.mode = BoardMode.DECIDE

    def stop_asking(self) -> None:
        self.mode = BoardMode.WATCH
        self.picking = None
        self.message = ""

    def options(self) -> list[Card]:
        v = self.view
        if v is None:
            return []
        if self.mode == BoardMode.PICK and self.picking is not None:
            return matches_in(self.picking, v.table)
        if self.mode == BoardMode.CHOOSE:
            return [a.target for a in v.legal_actions if a.kind is ActionKind.CHOOSE]
        return []

    def _play(self, i: int) -> KeyOutcome:
        v = self.view
        assert v is not None
        card = v.hand[i]
        ms = matches_in(card, v.table)
        if len(ms) == 2:
            self.mode = BoardMode.PICK
            self.picking = card
            self.sel = 0
            self.message = ""
            return KeyOutcome()
        return KeyOutcome(action=PLAY[card])

    def _option(self, i: int) -> KeyOutcome:
        opts = self.options()
        target = opts[i]
        if self.mode == BoardMode.PICK:
            assert self.picking is not None
            action = PLAY_AT[self.picking][target]
            assert action is not None
            return KeyOutcome(action=action)
        return KeyOutcome(action=CHOOSE[target])

    def click(self, key: str) -> KeyOutcome:
        """A click on a hot spot (``hand:3``, ``option:1``)."""
        what, _, num = key.partition(":")
        i = int(num)
        if what == "hand" and self.mode in ("play", "pick"):
            self.mode = BoardMode.PLAY
            self.sel = i
            return self._play(i)
        if what == "option" and self.mode in ("pick", "choose"):
            return self._option(i)
        if what == "decide" and self.mode == BoardMode.DECIDE:
            return self.key("k" if i == 0 else "s")
        return KeyOutcome()

    def key(self, key: str) -> KeyOutcome:
        """One key (Textual's key names: ``1``, ``left``, ``enter``, ``escape``, ``k``, ...)."""
        self.message = ""
        if key in ("h", "question_mark", "f1"):
            return KeyOutcome(dialog="help")
        if key == "y" and self.mode not in ("again",):
            return KeyOutcome(dialog="yaku")
        if key == "c" and self.view is not None:
            return KeyOutcome(dialog="captures")
        if key in ("q", "ctrl+d"):
            if self.mode in ("over",):
                return KeyOutcome(proceed=True)
            if self.mode == BoardMode.AGAIN:
                return KeyOutcome(answer=False)
            return KeyOutcome(leave=True)
        m = self.mode
        v = self.view
        if m == "again":
            if key in ("y", "enter"):
                return KeyOutcome(answer=True)
            if key in ("n", "escape"):
                return KeyOutcome(answer=False)
            return KeyOutcome()
        if m in ("round", "over"):
            if key in ("enter", "space"):
                return KeyOutcome(proceed=True)
            return KeyOutcome()
        if v is None or m == "watch":
            if key.isdecimal() or key in ("enter", "k", "s"):
                self.message = self.t("not_your_turn", name=self.opp_name())
            return KeyOutcome()
        if m == "play":
            n = len(v.hand)
            if key.isdecimal():
                i = int(key)
                if not 1 <= i <= n:
                    self.message = self.t("not_in_hand", n=i, m=n)
                    return KeyOutcome()
                self.sel = i - 1
                return self._play(i - 1)
            if key in ("left", "up"):
                self.sel = (self.sel - 1) % n
            elif key in ("right", "down", "tab"):
                self.sel = (self.sel + 1) % n
            elif key in ("enter", "space"):
                return self._play(self.sel)
            return KeyOutcome()
        if m in ("pick", "choose"):
            opts = self.options()
            if key in ("escape", "b", "backspace") and m == "pick":
                self.mode = BoardMode.PLAY
                self.picking = None
                return KeyOutcome()
            if key.isdecimal():
                i = int(key)
                if not 1 <= i <= len(opts):
                    self.message = self.t("not_choice", n=i)
                    return KeyOutcome()
                return self._option(i - 1)
            if key in ("left", "up", "right", "down", "tab"):
                self.sel = (self.sel + 1) % len(opts)
            elif key in ("enter", "space"):
                return self._option(self.sel)
            return KeyOutcome()
        # decide
        can_koikoi = KOIKOI in v.legal_actions
        if key == "k":
            if not can_koikoi:
                self.message = self.t("only_shobu")
                return KeyOutcome()
            return KeyOutcome(action=KOIKOI)
        if key == "s" or (key == "enter" and not can_koikoi):
            return KeyOutcome(action=SHOBU)
        return KeyOutcome()

    # -- facts for the screen ------------------------------------------------

    def shobu_ends_match(self) -> bool:
        v = self.view
        if v is None:
            return False
        bd = shobu_breakdown(v)
        return v.round >= v.settings.rounds or bd.payment >= v.points[1 - v.seat]
