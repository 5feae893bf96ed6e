"""The full-screen board's layout, pure: :func:`layout` draws a :class:`~.board.BoardModel` into lines of
styled text for a ``width`` × ``height`` screen (at least 80 × 24 shows everything at once), with the screen
positions of the clickable cards (:class:`~.board.Hot`); :func:`captures_lines` and :func:`prompt_text` are
its pieces the app shows apart."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text

from ...engine.actions import KOIKOI
from ...engine.cards import (
    CARDS,
    Card,
    Kind,
)
from ...engine.match import SeatView
from .board import STYLES, BoardMode, BoardModel, Hot, _mask, card_style, progress
from .render import matches_in, shobu_breakdown
from .words import kind_label, month_label, short_name

__all__ = ["MIN_SIZE", "captures_lines", "layout", "prompt_text"]


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
