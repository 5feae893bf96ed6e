"""The full-screen board's model and layout, pure: no terminal, no threads, no clock.

:class:`BoardModel` holds what the board shows (the seat's latest view, the
recent events, what is being asked, the selection) and takes the person's
keys (:meth:`BoardModel.key`), answering with an :class:`KeyOutcome` (an action,
a quit request, a dialog to open). :func:`layout` draws the model into lines
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

from rich.cells import cell_len
from rich.text import Text

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
from .words import kind_label, month_label, ribbon_style, say, short_name

__all__ = ["BoardMode", "BoardModel", "Hot", "KeyOutcome", "card_style", "layout", "progress", "yaku_label"]

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


# -- layout ---------------------------------------------------------------------


def _fit(text: Text, width: int) -> Text:
    if text.cell_len > width:
        text = text.copy()
        text.truncate(width, overflow="ellipsis")
    return text


def _pad(text: Text, width: int) -> Text:
    n = width - text.cell_len
    if n > 0:
        text = text.copy()
        text.append(" " * n)
    return text


def _join(parts: Sequence[Text], sep: str = " · ") -> Text:
    out = Text()
    for i, p in enumerate(parts):
        if i:
            out.append(sep, style=STYLES["dim"])
        out.append_text(p)
    return out


def _fmt_clock(seconds: float) -> str:
    s = max(0, int(seconds + 0.999))
    return f"{s // 60}:{s % 60:02d}"


def _pts(model: BoardModel, n: int) -> str:
    return model.t("pts" if n == 1 else "pts_n", n=n)


def _header(model: BoardModel, v: SeatView, width: int, now: float) -> list[Text]:
    me, opp = v.seat, 1 - v.seat
    rnd, oya = v.round, v.dealer
    if model.match_end is not None and model.round_result is not None:  # the last round's, not the next one's
        rnd, oya = model.round_result.round, model.round_result.dealer
    dealer = model.t("you_deal") if oya == me else model.t("they_deal", name=model.seats.names[oya])
    dbl = model.t("double_on" if v.settings.double_at_8 else "double_off")
    first = Text(model.t("round", r=rnd, n=v.settings.rounds), style=STYLES["head"])
    first.append(f"  {dealer} · {dbl}")
    if model.deadline is not None:
        left = model.deadline - now
        clock = (
            model.t("clock", t=_fmt_clock(left))
            if model.deadline_seat in (None, me)
            else model.t("clock_them", name=model.opp_name(), t=_fmt_clock(left))
        )
        style = STYLES["warn"] if left <= 30 and model.deadline_seat in (None, me) else STYLES["head"]
        gap = max(2, width - first.cell_len - cell_len(clock))
        first.append(" " * gap)
        first.append(clock, style=style)
    pools = model.t("pools", me=model.who(me), pm=v.points[me], them=model.who(opp), pt=v.points[opp])
    second = Text(pools)
    second.append(" · ", style=STYLES["dim"])
    second.append(model.t("mult", m=v.multiplier), style=STYLES["head"] if v.multiplier > 1 else "")
    second.append(" · ", style=STYLES["dim"])
    if model.calls:
        items = [model.t("call_item", who=model.who(s), total=t) for s, t in model.calls]
        second.append(model.t("calls", who=model.t("and").join(items)))
    else:
        second.append(model.t("calls_none"))
    second.append(" · ", style=STYLES["dim"])
    second.append(model.t("deck", n=v.deck_count))
    if second.cell_len > width and model.calls:  # every call does not fit: their count and the last one
        s, t = model.calls[-1]
        last = model.t("call_item", who=model.who(s), total=t)
        second = Text(pools)
        second.append(" · ", style=STYLES["dim"])
        second.append(model.t("mult", m=v.multiplier), style=STYLES["head"] if v.multiplier > 1 else "")
        second.append(" · ", style=STYLES["dim"])
        second.append(model.t("calls_short", n=len(model.calls), who=last))
        second.append(" · ", style=STYLES["dim"])
        second.append(model.t("deck", n=v.deck_count))
    return [_fit(first, width), *_wrap(second, width)]


def _captures(model: BoardModel, v: SeatView, seat: int, width: int, long: bool) -> list[Text]:
    caps = v.captures[seat]
    total = v.totals[seat]
    lang = model.lang
    if seat == v.seat:
        head = Text(model.t("me_head", c=len(caps), pts=_pts(model, total)), style=STYLES["head"])
    else:
        head = Text(
            model.t("opp_head", name=model.who(seat), n=v.opponent_hand_count, c=len(caps), pts=_pts(model, total)),
            style=STYLES["head"],
        )
    if v.calls[seat]:
        head.append(" (" + model.t("called", n=v.calls[seat], t=_pts(model, v.called_totals[seat])) + ")")
    parts: list[Text] = []
    for kind in (Kind.LIGHT, Kind.TANE, Kind.RIBBON, Kind.PLAIN):
        of = [c for c in caps if CARDS[c].kind is kind]
        if not of:
            continue
        t = Text(f"{kind_label(kind, lang)} {len(of)}")
        if kind is Kind.LIGHT or (long and kind is not Kind.PLAIN):
            t.append(": ")
            for i, c in enumerate(of):
                if i:
                    t.append(" ")
                t.append(_ribbon_short(c, lang) if kind is Kind.RIBBON else short_name(c, lang), style=card_style(c))
        parts.append(t)
    items = [Text(("✓" if made else "") + text, style=STYLES["made"] if made else "") for text, made in
             progress(_mask(caps), lang)]  # fmt: skip
    if long:
        line = head.copy()
        if parts:
            line.append("  ")
            line.append_text(_join(parts, "  "))
        p = Text("  ")
        p.append_text(_join(items) if items else Text(model.t("progress_none"), style=STYLES["dim"]))
        return [*_wrap(line, width), *_wrap(p, width)]
    if not items:
        return [_fit_items(model, head, parts, "  ", width), Text("  " + model.t("progress_none"), style=STYLES["dim"])]
    return [_fit_items(model, head, parts, "  ", width), _fit_items(model, Text(" "), items, " · ", width)]


def _fit_items(model: BoardModel, head: Text, items: Sequence[Text], sep: str, width: int) -> Text:
    """``head`` and as many whole ``items`` as fit in ``width``; the rest counted (``+2 (c shows all)``), never a
    word cut off."""
    for n in range(len(items), -1, -1):
        line = head.copy()
        if n:
            line.append(sep if head.plain.strip() else " ")
            line.append_text(_join(items[:n], sep))
        if n < len(items):
            line.append(" " + model.t("more_caps", n=len(items) - n), style=STYLES["dim"])
        if line.cell_len <= width:
            return line
    return _fit(head, width)


def captures_lines(model: BoardModel) -> list[str]:
    """Both capture piles in full (the ``c`` list): each card by name, and how close each pile is to each yaku."""
    v = model.view
    if v is None:
        return []
    out: list[str] = []
    for seat in (1 - v.seat, v.seat):
        caps = v.captures[seat]
        out.append(model.t("me_head", c=len(caps), pts=_pts(model, v.totals[seat])) if seat == v.seat else
                   model.t("opp_head", name=model.who(seat), n=v.opponent_hand_count, c=len(caps),
                           pts=_pts(model, v.totals[seat])))  # fmt: skip
        for kind in (Kind.LIGHT, Kind.TANE, Kind.RIBBON, Kind.PLAIN):
            of = [c for c in caps if CARDS[c].kind is kind]
            if of:
                out.append(f"  {kind_label(kind, model.lang)} {len(of)}: " + model.t("and").join(map(model.name, of)))
        prog = progress(_mask(caps), model.lang)
        out.append("  " + (" · ".join(("✓" if m else "") + t for t, m in prog) if prog else model.t("progress_none")))
        out.append("")
    return out[:-1]


def _ribbon_short(card: Card, lang: str) -> str:
    """A captured ribbon in a few cells: ``Poem 1``, ``Blue 9``, ``Red 4`` / ``赤短1``."""
    word = short_name(card, lang)
    if lang != "ja":
        word = word.split(" ")[0]
        return f"{word} {CARDS[card].month}"
    return f"{word}{CARDS[card].month}"


def _wrap(text: Text, width: int) -> list[Text]:
    from rich.console import Console

    console = Console(width=width, legacy_windows=False, color_system=None)
    lines = text.wrap(console, width, no_wrap=False)
    return [_fit(line, width) for line in lines]


def _field(model: BoardModel, v: SeatView, width: int, hot: list[Hot], top: int) -> list[Text]:
    lang = model.lang
    months: dict[int, list[Card]] = {}
    for c in sorted(v.table):
        months.setdefault(CARDS[c].month, []).append(c)
    head = Text(model.t("field", n=len(v.table)), style=STYLES["head"])
    if v.pending_draw is not None:
        head.append("   ")
        head.append(model.t("drawn_wait", card=model.name(v.pending_draw)), style=STYLES["mark"])
    lines = [_fit(head, width)]
    if not months:
        lines.append(Text("  " + model.t("field_empty"), style=STYLES["dim"]))
        return lines
    # what the selected hand card (or the pending choice) would take: highlighted
    highlight: set[Card] = set()
    opts = model.options()
    if model.mode == BoardMode.PLAY and model.view is not None and model.view.hand:
        sel = model.view.hand[min(model.sel, len(model.view.hand) - 1)]
        highlight = set(matches_in(sel, v.table))
    cols = max(1, min(3, width // 40))
    col_w = width // cols
    label_w = max(cell_len(month_label(m, lang)) for m in months) + 1
    cells: list[tuple[Text, list[tuple[int, int, str]]]] = []
    for m, cards in sorted(months.items()):
        t = Text()
        t.append(month_label(m, lang).ljust(label_w - (cell_len(month_label(m, lang)) - len(month_label(m, lang)))),
                 style=STYLES["dim"])  # fmt: skip
        spots: list[tuple[int, int, str]] = []
        for i, c in enumerate(cards):
            if i:
                t.append(" ")
            style = card_style(c)
            if c in opts:
                k = opts.index(c)
                tag = f"[{k + 1}]"
                x0 = t.cell_len
                t.append(tag, style=STYLES["mark"])
                t.append(short_name(c, lang), style=f"{style} reverse" if k == model.sel else style)
                spots.append((x0, t.cell_len, f"option:{k}"))
            else:
                t.append(short_name(c, lang), style=f"{style} underline" if c in highlight else style)
        cells.append((t, spots))
    # column by column; a month too wide for its column (the choice's tags) gets a line of its own
    wide = [t.cell_len > col_w - 1 for t, _ in cells]
    grid: list[list[int]]
    if cols > 1 and any(wide):
        narrow = [i for i, w in enumerate(wide) if not w]
        rows = (len(narrow) + cols - 1) // cols
        grid = [[narrow[k * rows + r] for k in range(cols) if k * rows + r < len(narrow)] for r in range(rows)]
        grid += [[i] for i, w in enumerate(wide) if w]
    else:
        rows = (len(cells) + cols - 1) // cols
        grid = [[k * rows + r for k in range(cols) if k * rows + r < len(cells)] for r in range(rows)]
    for row in grid:
        line = Text()
        for k, idx in enumerate(row):
            t, spots = cells[idx]
            x = k * col_w
            for x0, x1, key in spots:
                hot.append(Hot(top + len(lines), x + x0, x + x1, key))
            line.append_text(_pad(_fit(t, col_w - 1), col_w) if k < len(row) - 1 else _fit(t, width - x))
        lines.append(_fit(line, width))
    return lines


def _hand(model: BoardModel, v: SeatView, width: int, hot: list[Hot], top: int) -> list[Text]:
    lang = model.lang
    hand = list(v.hand)
    lines = [Text(model.t("hand", n=len(hand)), style=STYLES["head"])]
    if not hand:
        lines.append(Text("  " + model.t("hand_empty"), style=STYLES["dim"]))
        return lines
    name_w = max(cell_len(model.name(c)) for c in hand)
    active = model.mode in ("play", "pick")
    for i, c in enumerate(hand):
        ms = matches_in(c, v.table)
        mark = "*" if ms and model.look.assist else " "
        t = Text(" ")
        t.append(mark, style=STYLES["mark"])
        num = f"{i + 1}"
        selected = active and i == model.sel
        t.append(num, style=STYLES["sel"] if selected else STYLES["head"])
        t.append(f" {CARDS[c].month:>2} ", style=STYLES["dim"])
        name = model.name(c)
        t.append(name, style=card_style(c) + (" reverse" if selected else ""))
        t.append(" " * (name_w - cell_len(name)))
        if ms and model.look.assist:
            names = [short_name(x, lang) for x in ms]
            if len(ms) == 2:
                what = model.t("takes_or", a=names[0], b=names[1])
            elif len(ms) == 3:
                what = model.t("takes_all", what=model.t("and").join(names))
            else:
                what = model.t("takes", what=names[0])
            t.append("  ")
            t.append(what, style=STYLES["mark"])
        hot.append(Hot(top + len(lines), 0, min(width, t.cell_len), f"hand:{i}"))
        lines.append(_fit(t, width))
    return lines


def _decide(model: BoardModel, v: SeatView, width: int, hot: list[Hot], top: int) -> list[Text]:
    bd = shobu_breakdown(v)
    out = [Text(model.t("decide_head", pts=_pts(model, v.totals[v.seat])), style=STYLES["head"])]
    out.append(Text(model.t("decide_shobu", p=_pts(model, bd.payment))))
    out += [Text(line) for line in bd.lines(model.lang)]
    if model.shobu_ends_match():
        out.append(Text("  " + model.t("ends_match"), style=STYLES["warn"]))
    if KOIKOI in v.legal_actions:
        out.append(Text(model.t("decide_koikoi", m=v.multiplier + 1, name=model.opp_name())))
    else:
        out.append(Text(model.t("decide_last")))
    return [line for t in out for line in _wrap(t, width)]


def _round_panel(model: BoardModel, width: int) -> list[Text]:
    r = model.round_result
    assert r is not None
    out = [Text(model.round_line(r), style=STYLES["head"])]
    if r.breakdown is not None:
        out += [Text(line) for line in r.breakdown.lines(model.lang)]
    me = model.seats.me or 0
    out.append(Text(model.t("pools", me=model.who(me), pm=r.points[me], them=model.who(1 - me), pt=r.points[1 - me])))
    if model.match_end is not None:
        out.append(Text(model.match_line(), style=STYLES["head"]))
    return [line for t in out for line in _wrap(t, width)]


def prompt_text(model: BoardModel) -> Text:
    m = model.mode
    v = model.view
    if m == "again":
        return Text(model.t("q_again"), style=STYLES["head"])
    if m == "over":
        return Text(model.t("q_over"), style=STYLES["head"])
    if m == "round":
        return Text(model.t("q_round"), style=STYLES["head"])
    if v is None or m == "watch":
        if model.match_end is not None:
            return Text(model.match_line(), style=STYLES["head"])
        if v is None:  # nobody is thinking yet: the opponent may not even have joined
            return Text(model.t("q_start"), style=STYLES["dim"])
        return Text(model.t("q_wait", name=model.opp_name()), style=STYLES["dim"])
    if m == "play":
        return Text(model.t("q_play", n=len(v.hand)), style=STYLES["head"])
    if m in ("pick", "choose"):
        a, b = (model.name(c) for c in model.options())
        if m == "pick":
            assert model.picking is not None
            return Text(model.t("q_pick", card=model.name(model.picking), a=a, b=b), style=STYLES["head"])
        assert v.pending_draw is not None
        return Text(model.t("q_choose", card=model.name(v.pending_draw), a=a, b=b), style=STYLES["head"])
    bd = shobu_breakdown(v)
    if KOIKOI in v.legal_actions:
        t = Text(model.t("q_decide", m=v.multiplier + 1, p=_pts(model, bd.payment)), style=STYLES["head"])
    else:
        t = Text(model.t("q_last", p=_pts(model, bd.payment)), style=STYLES["head"])
    return t


MIN_SIZE = (80, 24)
"""The smallest screen that shows the whole board (a smaller one says so instead)."""


def _event_lines(model: BoardModel, width: int, room: int | None = None) -> list[Text]:
    """The latest events that fit in ``room`` lines, each wrapped whole (a long one takes two lines, never cut
    off)."""
    out: list[Text] = []
    for e in reversed(model.events):
        lines = _wrap_indent(e, width, STYLES["dim"])
        if room is not None and len(out) + len(lines) > room:
            break
        out[:0] = lines
    return out


def _wrap_indent(text: str, width: int, style: str, first: str = "  ", cont: str = "    ") -> list[Text]:
    full = first + text
    out = _wrap(Text(full, style=style), width)
    if len(out) <= 1 or not full.startswith(out[0].plain):
        return out
    rest = full[len(out[0].plain) :].lstrip(" ")
    return [out[0], *_wrap(Text(cont + rest, style=style), width)]


def _players_panel(model: BoardModel, width: int) -> list[Text]:
    if not model.players or model.moved:
        return []
    head, *rest = model.players
    out = _wrap(Text(head, style=STYLES["head"]), width)
    for line in rest:
        out += _wrap_indent(line, width, STYLES["note"])
    return out


def _too_small(model: BoardModel, width: int, height: int) -> list[Text]:
    lines = [
        *_wrap(Text(model.t("too_small", w=width, h=height), style=STYLES["warn"]), width),
        Text(),
        *_wrap(Text(model.t("too_small_keys")), width),
    ]
    return lines[:height] + [Text()] * max(0, height - len(lines))


def layout(model: BoardModel, width: int, height: int, now: float = 0.0) -> tuple[list[Text], list[Hot]]:
    """The board as ``height`` lines of at most ``width`` cells, and its clickable spots."""
    v = model.view
    hot: list[Hot] = []
    notes = [line for n in model.shown_notes(now) for line in _wrap(Text(n, style=STYLES["note"]), width)]
    if v is None:
        tail = [*notes, *_wrap(prompt_text(model), width)]
        if width < MIN_SIZE[0] or height < MIN_SIZE[1]:
            tail[:0] = _wrap(Text(model.t("too_small", w=width, h=height), style=STYLES["warn"]), width)
        panel = _players_panel(model, width)[: max(0, height - len(tail))]
        lines = [*panel, *_event_lines(model, width, max(0, height - len(tail) - len(panel))), *tail][-height:]
        return lines + [Text()] * max(0, height - len(lines)), hot
    if width < MIN_SIZE[0] or height < MIN_SIZE[1]:
        return _too_small(model, width, height), hot
    long = height >= 32
    top = _header(model, v, width, now)
    opp = _captures(model, v, 1 - v.seat, width, long)
    panel = _players_panel(model, width)
    mine = [] if panel else _captures(model, v, v.seat, width, long)  # (empty before this seat's first move)
    body: list[Text] = [*top, *opp]
    fld = _field(model, v, width, hot, len(body))
    body += fld
    if model.mode in ("round", "over", "again") and model.round_result is not None:
        middle = _round_panel(model, width)
    elif model.mode == BoardMode.DECIDE:
        middle = _decide(model, v, width, hot, len(body))
    else:
        middle = _hand(model, v, width, hot, len(body))
    body += middle
    body += mine
    foot: list[Text] = []
    if model.message:
        foot += _wrap(Text(model.message, style=STYLES["warn"]), width)
    foot += notes
    prompt = prompt_text(model)
    foot += _wrap(prompt, width)[:2]
    room = height - len(body) - len(foot)
    if panel and room > 0:  # who is playing, under the header: before the events, never over a hand card
        panel = panel[:room]
        body[len(top) : len(top)] = panel
        for i, h in enumerate(hot):
            hot[i] = Hot(h.row + len(panel), h.x0, h.x1, h.key)
        room -= len(panel)
    if room > 0:
        shown = _event_lines(model, width, room)
        if shown and room > len(shown):
            head = Text(model.t("events"), style=STYLES["head"])
            shown = [head, *shown]
        body += [_fit(e, width) for e in shown]
    elif room < 0:
        # too short: drop from the middle of the body (the events are already gone)
        body = body[: max(0, height - len(foot))]
        hot = [h for h in hot if h.row < len(body)]
    body += [Text()] * max(0, height - len(body) - len(foot))
    return body + foot, hot
