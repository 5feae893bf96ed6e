"""Pure functions: a seat's view, the engine's log, a count -> lines of text.

Nothing here reads or writes a stream. ``render_view`` draws the table;
``narrate`` turns the engine's log entries into one sentence each (what a
screen reader reads out); ``count_lines`` prints a count the same way at the
koi-koi prompt and at every round end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ...engine.cards import CARD_MONTH_MASK, CARDS, MONTH_NAMES_EN, MONTH_NAMES_JA, Card, Kind, cards_of
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
from ...engine.match import RoundEnd, RoundResult, SeatView
from ...engine.yaku import Breakdown, Yaku, count_round, yaku_of
from .text import Look, Seats, display_width, pad, wrap_all

__all__ = [
    "Narrator",
    "card_list",
    "card_name",
    "count_lines",
    "first_dealer_lines",
    "matches_in",
    "narrate",
    "points_text",
    "render_view",
    "shobu_breakdown",
    "yaku_name",
]

_KIND_ORDER = (
    (Kind.LIGHT, "Lights"),
    (Kind.TANE, "Tane"),
    (Kind.RIBBON, "Ribbons"),
    (Kind.PLAIN, "Plains"),
)


def card_name(card: Card, look: Look) -> str:
    info = CARDS[card]
    return info.name_ja if look.lang == "ja" else info.name_en


def month_name(card: Card, look: Look) -> str:
    m = CARDS[card].month - 1
    return MONTH_NAMES_JA[m] if look.lang == "ja" else MONTH_NAMES_EN[m]


def yaku_name(y: Yaku, look: Look) -> str:
    return y.name_ja if look.lang == "ja" else y.name_en


def card_list(cards: Sequence[Card], look: Look, conj: str = "and") -> str:
    names = [card_name(c, look) for c in cards]
    if not names:
        return "nothing"
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} {conj} {names[1]}"
    return ", ".join(names[:-1]) + f" {conj} " + names[-1]


def matches_in(card: Card, table: Sequence[Card]) -> list[Card]:
    """The table cards of ``card``'s month."""
    mm = CARD_MONTH_MASK[card]
    return [t for t in table if (1 << t) & mm]


def points_text(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def _cards(n: int) -> str:
    return f"{n} card" if n == 1 else f"{n} cards"


def shobu_breakdown(view: SeatView, seat: int | None = None) -> Breakdown:
    """What shōbu would pay ``seat`` now, from what the view shows
    (the same count as ``Match.shobu_breakdown``)."""
    s = view.seat if seat is None else seat
    caps = sum(1 << c for c in view.captures[s])
    return count_round(
        caps,
        calls=view.calls[0] + view.calls[1],
        double_at_8=view.settings.double_at_8,
        loser_points=view.points[1 - s],
    )


def count_lines(bd: Breakdown, look: Look) -> list[str]:
    """A count line by line (``Breakdown.lines``), in the look's language."""
    return bd.lines(look.lang)


# -- the table ----------------------------------------------------------


def _captures_block(view: SeatView, seat: int, seats: Seats, look: Look) -> list[str]:
    caps = view.captures[seat]
    ys = yaku_of(sum(1 << c for c in caps))
    total = view.totals[seat]
    head = f"{seats.Whose(seat)} captures: {_cards(len(caps))}, {points_text(total)}"
    if view.calls[seat]:
        times = "once" if view.calls[seat] == 1 else f"{view.calls[seat]} times"
        head += f" (called koi-koi {times}, last at {points_text(view.called_totals[seat])})"
    if not caps:
        return [look.bold(head[: head.index(":")] + ": none yet")]
    out = [look.bold(head)]
    for kind, label in _KIND_ORDER:
        of_kind = [c for c in caps if CARDS[c].kind is kind]
        if not of_kind:
            continue
        names = ", ".join(card_name(c, look) for c in of_kind)
        if kind is Kind.LIGHT:
            names = look.light(names)
        out.append(f"  {label} ({len(of_kind)}): {names}")
    if ys:
        out.append("  Yaku: " + "; ".join(f"{yaku_name(y, look)} {p}" for y, p in ys))
    return out


def render_view(view: SeatView, seats: Seats, look: Look) -> list[str]:
    """The table as ``view.seat`` sees it, wrapped to ``look.width``.

    Header (round x of N, who deals, doubling, multiplier, pools, deck), the
    opponent's captures, the field, this seat's captures, this seat's hand
    numbered 1–8. With ``look.assist``: hand cards that capture are marked
    ``*`` with what they take, and field cards name the hand cards that take
    them.
    """
    me = view.seat
    opp = 1 - me
    seats = replace(seats, me=me)
    lines: list[str] = []
    s = view.settings
    dealer = "You deal" if view.dealer == seats.me else f"{seats.names[view.dealer]} deals"
    calls = view.calls[0] + view.calls[1]
    mult = "no koi-koi yet" if calls == 0 else ("1 koi-koi call" if calls == 1 else f"{calls} koi-koi calls")
    lines.append(
        look.bold(f"Round {view.round} of {s.rounds} · {dealer} (oya) · {s.doubling_label}")
        + f" · Multiplier ×{view.multiplier} ({mult})"
    )
    lines.append(
        f"Points: {seats.who(me)} {view.points[me]}, {seats.who(opp)} {view.points[opp]}"
        f" · Deck: {_cards(view.deck_count)} left · {seats.who(opp)} {seats.verb(opp, 'hold')}"
        f" {_cards(view.opponent_hand_count)}"
    )
    lines.append("")
    lines.extend(_captures_block(view, opp, seats, look))
    lines.append("")

    hand = list(view.hand)
    takers: dict[Card, list[int]] = {}
    if look.assist:
        for i, c in enumerate(hand, start=1):
            for t in matches_in(c, view.table):
                takers.setdefault(t, []).append(i)
    lines.append(look.bold(f"Field: {_cards(len(view.table))}"))
    name_w = max([display_width(card_name(c, look)) for c in (*view.table, *hand)] + [1])
    name_w = min(name_w, max(10, look.width // 2 - 6))
    for t in view.table:
        row = f"  {pad(card_name(t, look), name_w)}"
        if t in takers:
            nums = takers[t]
            row += "  " + look.mark("← your card " + " or ".join(str(n) for n in nums))
        lines.append(row.rstrip())
    if not view.table:
        lines.append("  (empty)")
    if view.pending_draw is not None:
        lines.append(f"  Drawn, waiting for a choice: {card_name(view.pending_draw, look)}")
    lines.append("")
    lines.extend(_captures_block(view, me, seats, look))
    lines.append("")
    head = f"Your hand: {_cards(len(hand))}"
    if look.assist and hand:
        head += " (* = captures)"
    lines.append(look.bold(head))
    for i, c in enumerate(hand, start=1):
        ms = matches_in(c, view.table) if look.assist else []
        star = "*" if ms else " "
        row = f" {look.mark(star) if ms else star}{i:>1}  {pad(card_name(c, look), name_w)}"
        if ms:
            if len(ms) == 2:
                what = f"takes {card_list(ms, look, 'or')} (you choose)"
            elif len(ms) == 3:
                what = f"takes all three: {card_list(ms, look)}"
            else:
                what = f"takes {card_name(ms[0], look)}"
            row += "  " + look.mark("→ " + what)
        lines.append(row.rstrip())
    if not hand:
        lines.append("  (empty)")
    if look.ascii_only:
        lines = [ln.replace("·", "-") for ln in lines]
    return wrap_all(lines, look.width, "      ")


# -- the first dealer ---------------------------------------------------


def first_dealer_lines(turned: Sequence[tuple[Card, Card]], dealer: int, seats: Seats, look: Look) -> list[str]:
    """The cards each side turned to choose the first dealer, in words."""
    out: list[str] = []
    for i, (a, b) in enumerate(turned):
        again = "" if i == 0 else "Again: "
        out.append(
            f"{again}{seats.who(0)} {seats.verb(0, 'turn')} {card_name(a, look)} ({month_name(a, look)}, month"
            f" {CARDS[a].month}); {seats.who(1)} {seats.verb(1, 'turn')} {card_name(b, look)}"
            f" ({month_name(b, look)}, month {CARDS[b].month})."
        )
        if i < len(turned) - 1:
            out.append("Two plains of one month: both turn again.")
    a, b = turned[-1]
    if CARDS[a].month != CARDS[b].month:
        why = "The earlier month deals first"
    else:
        why = "Same month: the higher card deals first"
    out.append(f"{why}: {seats.who(dealer)} {seats.verb(dealer, 'deal')} the first round (oya).")
    return wrap_all(out, look.width)


# -- narration ----------------------------------------------------------


_JA: dict[str, str] = {
    "deal": "第{r}局{of}：親は{who}、{who}から打つ。",
    "redeal": "第{r}局：場に同じ月の札が四枚そろったので配り直し。",
    "hand_yaku": "{who}の手札に手役{yaku}：6点、打つ前に局が終わる。",
    "play_take": "{who}が{card}を出して{taken}を取る{extra}。",
    "play_field": "{who}が{card}を場に出す。",
    "draw_take": "{who}が{card}を引いて{taken}を取る{extra}。",
    "draw_field": "{who}が{card}を引いて場に置く。",
    "drawn": "{who}が{card}を引く。場の二枚と合うので{who}が選ぶ。",
    "chosen": "{who}はめくった{card}で{taken}を取る。",
    "three": "（同じ月の三枚）",
    "yaku_new": "{who}が{yaku}を作る：{p}点。",
    "yaku_more": "{who}の{yaku}が{p}点になる。",
    "yaku_total": "{who}の役は合計{p}点。",
    "koikoi": "{who}は役{t}点で「こいこい」：倍率は×{m}。",
    "shobu": "{who}は役{t}点で「勝負」：局が終わる。",
    "round_drawn": "第{r}局は流れ：支払いなし、親は{who}のまま。",
    "round_win": "第{r}局：{who}の勝ち、{p}点（{how}）。点数：",
    "by_shobu": "勝負",
    "by_hand": "手役",
    "pools": "持ち点：{a} {pa}、{b} {pb}。",
    "match_draw": "対局終了：引き分け、{pa}対{pb}。",
    "match_win": "対局終了：{who}の勝ち、{pa}対{pb}。",
    "and": "と",
}


@dataclass
class LogReading:
    """What the log means beyond each event: each seat's captures in the round and the round's koi-koi calls.

    The one reading of a match's log, shared by its two voices: :class:`Narrator` (the plain mode's sentences,
    ``koikoi replay``) and the board's list of events (:class:`~koikoi.client.tui.board.BoardModel`). Feed it
    every event in order (:meth:`read`)."""

    caps: list[int] = field(default_factory=lambda: [0, 0])
    """Each seat's captured cards this round (a card mask)."""
    calls: list[tuple[int, int]] = field(default_factory=list)
    """The round's koi-koi calls: (seat, its yaku total when it called)."""

    def read(self, e: Event) -> list[tuple[Yaku, int, bool]]:
        """Take ``e`` in; the yaku a capture changed for its seat: (yaku, its points now, new)."""
        if isinstance(e, (Played, Drawn, Chosen)):
            if not e.taken:
                return []
            before = dict(yaku_of(self.caps[e.seat]))
            self.caps[e.seat] |= e.taken | (1 << e.card)
            return [(y, p, y not in before) for y, p in yaku_of(self.caps[e.seat]) if before.get(y) != p]
        if isinstance(e, KoiKoi):
            self.calls.append((e.seat, e.total))
        elif isinstance(e, Dealt):
            self.caps = [0, 0]
            self.calls = []
        return []

    def total(self, seat: int) -> int:
        """``seat``'s yaku total this round."""
        return sum(p for _, p in yaku_of(self.caps[seat]))

    @property
    def multiplier(self) -> int:
        """The round's multiplier: one more for each koi-koi call."""
        return 1 + len(self.calls)


@dataclass
class Narrator:
    """Turns the engine's events (:mod:`koikoi.engine.events`) into sentences, one per event.

    The one narrator of a match: the terminal's plain mode reads it out as the
    match goes, and ``koikoi replay`` tells a whole transcript with it. It reads
    only the log (``Match.log``: the same on both sides of a networked match),
    rebuilding what it needs to say more than an event holds: the multiplier
    after a koi-koi, the yaku a capture just made. Feed it the log and it
    narrates the events it has not seen yet.

    ``sentences`` is the language of the sentences: ``en`` (the plain mode's,
    whatever the look's card-name language) or ``ja``; card names and counts
    follow the look.
    """

    seats: Seats
    look: Look
    rounds: int | None = None
    seen: int = 0
    sentences: str = "en"
    reading: LogReading = field(default_factory=LogReading)

    def feed(self, log: Sequence[Event]) -> list[str]:
        """Sentences for ``log[self.seen:]`` (wrapped to the look's width)."""
        out: list[str] = []
        for e in log[self.seen :]:
            out.extend(self.entry(e))
        self.seen = len(log)
        return wrap_all(out, self.look.width)

    def _names(self, mask: int) -> str:
        if self.sentences == "ja":
            return _JA["and"].join(card_name(c, self.look) for c in cards_of(mask))
        return card_list(cards_of(mask), self.look)

    def _new_yaku(self, seat: int, changed: list[tuple[Yaku, int, bool]]) -> list[str]:
        out: list[str] = []
        who = self.seats.who(seat)
        ja = self.sentences == "ja"
        for y, p, new in changed:
            name = yaku_name(y, self.look)
            if new:
                if ja:
                    out.append(_JA["yaku_new"].format(who=who, yaku=name, p=p))
                else:
                    out.append(f"{who} {self.seats.verb(seat, 'make')} {name}: {points_text(p)}.")
            elif ja:
                out.append(_JA["yaku_more"].format(who=who, yaku=name, p=p))
            else:
                out.append(f"{self.seats.Whose(seat)} {name} is now worth {points_text(p)}.")
        if out:
            total = self.reading.total(seat)
            if ja:
                out.append(_JA["yaku_total"].format(who=who, p=total))
            else:
                out[-1] = out[-1][:-1] + f"; {self.seats.whose(seat)} yaku total {points_text(total)}."
        return out

    def _capture(self, seat: int, card: int, taken: int, verb: str, changed: list[tuple[Yaku, int, bool]]) -> list[str]:
        """A card played (``verb`` play) or drawn (draw) that captured ``taken`` or went to the field."""
        s = self.seats
        who = s.who(seat)
        name = card_name(card, self.look)
        if self.sentences == "ja":
            if taken:
                extra = _JA["three"] if taken.bit_count() == 3 else ""
                line = _JA[f"{verb}_take"].format(who=who, card=name, taken=self._names(taken), extra=extra)
            else:
                line = _JA[f"{verb}_field"].format(who=who, card=name)
        elif taken:
            extra = " (all three of its month)" if taken.bit_count() == 3 else ""
            line = f"{who} {s.verb(seat, verb)} {name} and {s.verb(seat, 'capture')} {self._names(taken)}{extra}."
        else:
            line = f"{who} {s.verb(seat, verb)} {name}; it goes to the field."
        if not taken:
            return [line]
        return [line, *self._new_yaku(seat, changed)]

    def entry(self, e: Event) -> list[str]:
        """The sentences for one event."""
        s = self.seats
        look = self.look
        ja = self.sentences == "ja"
        changed = self.reading.read(e)
        if isinstance(e, Played):
            return self._capture(e.seat, e.card, e.taken, "play", changed)
        if isinstance(e, Drawn):
            return self._capture(e.seat, e.card, e.taken, "draw", changed)
        if isinstance(e, Chosen):
            seat = e.seat
            who, name, taken = s.who(seat), card_name(e.card, look), self._names(e.taken)
            if ja:
                line = _JA["chosen"].format(who=who, card=name, taken=taken)
            else:
                line = f"{who} {s.verb(seat, 'take')} {taken} with the drawn {name}."
            return [line, *self._new_yaku(seat, changed)]
        if isinstance(e, DrawnChoice):
            who = s.who(e.seat)
            name = card_name(e.card, look)
            if ja:
                return [_JA["drawn"].format(who=who, card=name)]
            return [
                f"{who} {s.verb(e.seat, 'draw')} {name}; it matches two field cards and"
                f" {who if e.seat != s.me else 'you'} must choose which to capture."
            ]
        if isinstance(e, KoiKoi):
            m = self.reading.multiplier
            if ja:
                return [_JA["koikoi"].format(who=s.who(e.seat), t=e.total, m=m)]
            return [
                f"{s.who(e.seat)} {s.verb(e.seat, 'call')} koi-koi at {points_text(e.total)} and"
                f" {s.verb(e.seat, 'play')} on: the multiplier is now ×{m}."
            ]
        if isinstance(e, Shobu):
            if ja:
                return [_JA["shobu"].format(who=s.who(e.seat), t=e.total)]
            return [f"{s.who(e.seat)} {s.verb(e.seat, 'call')} shōbu with {points_text(e.total)}: the round ends."]
        if isinstance(e, Dealt):
            dealer = e.dealer
            if ja:
                of = f"（全{self.rounds}局）" if self.rounds else ""
                return [_JA["deal"].format(r=e.round, of=of, who=s.who(dealer))]
            of = f" of {self.rounds}" if self.rounds else ""
            return [
                f"Round {e.round}{of}: {s.who(dealer)} {s.verb(dealer, 'deal')} (oya) and"
                f" {s.verb(dealer, 'play')} first."
            ]
        if isinstance(e, Redeal):
            if ja:
                return [_JA["redeal"].format(r=e.round)]
            return [f"Round {e.round}: all four cards of one month landed on the field, so the cards are dealt again."]
        if isinstance(e, HandYaku):
            if ja:
                return [_JA["hand_yaku"].format(who=s.who(e.seat), yaku=yaku_name(e.yaku, look))]
            return [
                f"{s.who(e.seat)} {s.verb(e.seat, 'hold')} {yaku_name(e.yaku, look)} in the dealt hand: 6 points,"
                " and the round ends before play."
            ]
        if isinstance(e, RoundEnded):
            return self.round_end(e.result)
        return [self.match_end(e.winner, e.points)]

    def _pools(self, points: tuple[int, int]) -> str:
        s = self.seats
        first = 0 if s.me is None else s.me
        if self.sentences == "ja":
            return _JA["pools"].format(a=s.who(first), pa=points[first], b=s.who(1 - first), pb=points[1 - first])
        return f"Points: {s.who(first)} {points[first]}, {s.who(1 - first)} {points[1 - first]}."

    def round_end(self, r: RoundResult) -> list[str]:
        s = self.seats
        ja = self.sentences == "ja"
        if r.end is RoundEnd.DRAWN or r.winner is None:
            if ja:
                return [_JA["round_drawn"].format(r=r.round, who=s.who(r.dealer)), self._pools(r.points)]
            return [
                f"Round {r.round} is drawn: the hands ran out before anyone called shōbu, so nobody pays"
                f" and {s.who(r.dealer)} {s.verb(r.dealer, 'deal')} again.",
                self._pools(r.points),
            ]
        w = r.winner
        if ja:
            how = _JA["by_shobu" if r.end is RoundEnd.SHOBU else "by_hand"]
            out = [_JA["round_win"].format(r=r.round, who=s.who(w), p=r.payment, how=how)]
        else:
            how = "by shōbu" if r.end is RoundEnd.SHOBU else "with a dealt hand yaku"
            out = [f"Round {r.round} ends: {s.who(w)} {s.verb(w, 'win')} {points_text(r.payment)} {how}. The count:"]
        if r.breakdown is not None:
            out.extend(count_lines(r.breakdown, self.look))
        out.append(self._pools(r.points))
        return out

    def match_end(self, winner: int | None, points: tuple[int, int]) -> str:
        s = self.seats
        if self.sentences == "ja":
            if winner is None:
                return _JA["match_draw"].format(pa=points[0], pb=points[1])
            return _JA["match_win"].format(who=s.who(winner), pa=points[winner], pb=points[1 - winner])
        if winner is None:
            return f"The match is over: a draw, {points[0]} to {points[1]}."
        score = f"{points[winner]} to {points[1 - winner]}"
        if winner == s.me:
            return f"The match is over: you win, {score}."
        return f"The match is over: {s.who(winner)} {s.verb(winner, 'win')}, {score}."


def narrate(log: Sequence[Event], seats: Seats, look: Look, start: int = 0, rounds: int | None = None) -> list[str]:
    """Sentences for ``log[start:]``; the events before ``start`` give the context (captures, calls)."""
    n = Narrator(seats, look, rounds)
    for e in log[:start]:
        n.entry(e)
    n.seen = start
    return n.feed(log)
