"""The terminal table: assist marks, grouping by kind, narrow widths, NO_COLOR, Japanese and its fallback."""

from __future__ import annotations

import io
import random

import pytest

from koikoi.client.tui import Look, Seats, display_width, look_for, render_view, wrap
from koikoi.client.tui.render import matches_in, shobu_breakdown
from koikoi.client.tui.text import detect_lang, safe_text, strip_ansi, use_color
from koikoi.engine import CARDS, Kind, Match, SeededDeal, Settings, card_from_id
from koikoi.engine.bots import make_bot

SEATS = Seats(0, ("You", "Computer"))


def _match(seed: int = 0) -> Match:
    return Match(Settings(), SeededDeal(bytes([seed]) * 32), first_dealer=0)


def _views(n_matches: int = 3) -> list[tuple[Match, int]]:
    """Matches at many points of play (with both seats' views), from random bots."""
    out = []
    for k in range(n_matches):
        m = _match(k)
        bots = [make_bot("random", random.Random(k * 2 + s)) for s in (0, 1)]
        while not m.is_over:
            out.append((m.copy(), m.to_move))
            m.apply(bots[m.to_move].choose(m.view(m.to_move)))
    return out


class FakeTTY(io.StringIO):
    def __init__(self, tty: bool = True, encoding: str = "utf-8") -> None:
        super().__init__()
        self._tty = tty
        self._enc = encoding

    def isatty(self) -> bool:
        return self._tty

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._enc


def test_the_table_shows_every_part_of_the_view() -> None:
    m = _match()
    v = m.view(0)
    text = "\n".join(render_view(v, SEATS, Look()))
    assert "Round 1 of 6" in text and "You deal (oya)" in text and "×2 at 8+" in text
    assert "Multiplier ×1" in text and "Points: You 25, Computer 25" in text
    assert "Deck: 24 cards left" in text and "Computer holds 8 cards" in text
    assert "Field: 8 cards" in text and "Your hand: 8 cards" in text
    for c in v.table + v.hand:
        assert CARDS[c].name_en in text
    # the hand is numbered 1-8 in order
    lines = render_view(v, SEATS, Look(assist=False))
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Your hand"))
    for i, c in enumerate(v.hand, start=1):
        assert lines[start + i].split()[0] == str(i)
        assert CARDS[c].name_en in lines[start + i]


def test_assist_marks_capturing_cards_and_their_matches() -> None:
    for m, seat in _views(1)[:40]:
        v = m.view(seat)
        if v.phase.name != "PLAY":
            continue
        lines = render_view(v, Seats(seat, ("P0", "P1")), Look(width=200))
        start = next(i for i, ln in enumerate(lines) if ln.startswith("Your hand"))
        for i, c in enumerate(v.hand, start=1):
            row = lines[start + i]
            ms = matches_in(c, v.table)
            assert row.startswith(f" *{i}") == bool(ms), row
            for t in ms:
                assert CARDS[t].name_en in row
                field_row = next(ln for ln in lines if ln.startswith("  " + CARDS[t].name_en))
                assert "← your card" in field_row and str(i) in field_row
        plain = render_view(v, Seats(seat, ("P0", "P1")), Look(assist=False))
        assert not any("←" in ln or "→" in ln or ln.startswith(" *") for ln in plain)


def test_two_matches_say_you_choose_and_three_say_all_three() -> None:
    m = _match()
    v = m.view(0)
    # Craft a view: hand card of a month with two / three matches on the table.
    pine_crane, pine_rib, pine_1, pine_2 = (
        card_from_id(x) for x in ("matsu_crane", "matsu_ribbon", "matsu_plain_1", "matsu_plain_2")
    )

    v2 = v.replace(hand=(pine_crane,), table=(pine_rib, pine_1))
    assert "(you choose)" in "\n".join(render_view(v2, SEATS, Look()))
    v3 = v.replace(hand=(pine_crane,), table=(pine_rib, pine_1, pine_2))
    assert "takes all three" in "\n".join(render_view(v3, SEATS, Look()))


def test_captures_are_grouped_by_kind_with_yaku() -> None:
    m = _match()
    caps = tuple(card_from_id(x) for x in ("sakura_curtain", "kiku_sake_cup", "matsu_ribbon", "kiri_plain_1"))
    v = m.view(0).replace(captures=(caps, ()), totals=(5, 0))
    lines = render_view(v, SEATS, Look())
    text = "\n".join(lines)
    assert "Your captures: 4 cards, 5 points" in text
    assert "  Lights (1): Cherry with Curtain" in lines
    assert "  Tane (1): Chrysanthemum with Sake Cup" in lines
    assert "  Ribbons (1): Pine with Red Poem Ribbon" in lines
    assert "  Plains (1): Paulownia plain 1" in lines
    assert "Hanami de ippai (flower viewing) 5" in text
    assert "Computer's captures: none yet" in text
    # kinds appear in the order lights, tane, ribbons, plains
    order = [next(i for i, ln in enumerate(lines) if ln.startswith(f"  {k} (")) for k in
             ("Lights", "Tane", "Ribbons", "Plains")]  # fmt: skip
    assert order == sorted(order)
    assert {CARDS[c].kind for c in caps} == set(Kind)


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("width", [40, 57, 80])
@pytest.mark.parametrize("color", [False, True])
def test_narrow_terminals_are_never_overflowed(lang: str, width: int, color: bool) -> None:
    look = Look(lang=lang, width=width, color=color)
    for m, seat in _views(2)[::3]:
        for line in render_view(m.view(seat), Seats(seat, ("You", "Computer")), look):
            assert display_width(line) <= width, line


def test_wrap_counts_wide_characters_and_cuts_long_words() -> None:
    assert wrap("松に鶴 " * 10, 20, "  ")[0] == "松に鶴 松に鶴 松に鶴"
    assert all(display_width(x) <= 20 for x in wrap("松に鶴 " * 10, 20, "  "))
    assert all(display_width(x) <= 10 for x in wrap("x" * 35, 10))
    assert "".join(wrap("x" * 35, 10)) == "x" * 35


def test_no_color_means_no_escape_codes() -> None:
    tty = FakeTTY(tty=True)
    look, _ = look_for(tty, env={"NO_COLOR": "1", "LANG": "en_US.UTF-8"}, width=80)
    assert look.color is False
    text = "\n".join(render_view(_match().view(0), SEATS, look))
    assert "\x1b" not in text
    assert use_color(FakeTTY(tty=False), {}) is False  # not a terminal: no colour either
    assert use_color(FakeTTY(tty=True), {"TERM": "dumb"}) is False
    # colour on a terminal without NO_COLOR, and the text is the same once the codes are stripped
    look_c, _ = look_for(tty, env={"LANG": "en_US.UTF-8"}, width=80)
    assert look_c.color is True
    colored = render_view(_match().view(0), SEATS, look_c)
    assert any("\x1b[" in ln for ln in colored)
    assert [strip_ansi(ln) for ln in colored] == render_view(_match().view(0), SEATS, look)


def test_japanese_card_names() -> None:
    text = "\n".join(render_view(_match().view(0), SEATS, Look(lang="ja")))
    v = _match().view(0)
    for c in v.hand:
        assert CARDS[c].name_ja in text
        assert CARDS[c].name_en not in text


def test_locale_picks_the_language() -> None:
    assert detect_lang({"LANG": "ja_JP.UTF-8"}) == "ja"
    assert detect_lang({"LANG": "en_GB.UTF-8"}) == "en"
    assert detect_lang({"LC_ALL": "ja_JP.UTF-8", "LANG": "en_US.UTF-8"}) == "ja"
    assert detect_lang({"LC_ALL": "C", "LANG": "ja_JP.UTF-8"}) == "en"  # LC_ALL wins
    assert detect_lang({"LC_MESSAGES": "ja_JP.eucJP", "LANG": "C"}) == "ja"
    assert detect_lang({}) == "en"


def test_japanese_falls_back_to_english_when_the_terminal_cannot_show_it() -> None:
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    look, notice = look_for(ascii_out, lang="ja", env={}, width=80)
    assert look.lang == "en" and look.ascii_only
    assert notice is not None and "cannot show Japanese" in notice and "\n" not in notice
    utf8 = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    look, notice = look_for(utf8, env={"LANG": "ja_JP.UTF-8"}, width=80)
    assert look.lang == "ja" and notice is None
    # what cannot be shown is spelled in ASCII, never an encoding error
    line = "Gokō ×2 → 松"
    assert safe_text(line, "ascii") == "Goko x2 -> ?"
    assert safe_text(line, "utf-8") == line


def test_the_shobu_count_from_a_view_equals_the_engines() -> None:
    for m, seat in _views(2):
        assert shobu_breakdown(m.view(seat)) == m.shobu_breakdown(seat)
        assert shobu_breakdown(m.view(1 - seat), seat) == m.shobu_breakdown(seat)


def test_the_plain_mode_is_chosen_when_asked_or_without_a_real_terminal() -> None:
    from koikoi.client.tui.table import want_plain

    tty, pipe = FakeTTY(tty=True), FakeTTY(tty=False)
    xterm = {"TERM": "xterm-256color"}
    assert want_plain(False, tty, tty, xterm) is False  # a person at a terminal: the board
    assert want_plain(True, tty, tty, xterm) is True  # --plain
    assert want_plain(False, pipe, tty, xterm) is True  # stdout is not a terminal (a pipe, a file)
    assert want_plain(False, tty, pipe, xterm) is True  # nor is stdin (a script feeding it)
    assert want_plain(False, tty, tty, {"TERM": "dumb"}) is True
    assert want_plain(False, tty, tty, {}) is True  # no TERM at all
    closed = io.StringIO()
    closed.close()  # isatty() on a closed stream raises ValueError: no screen, so plain
    assert want_plain(False, closed, tty, xterm) is True
