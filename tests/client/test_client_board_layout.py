"""The board's layout, pure: every line fits, the move clock, yaku progress, "shōbu now ends the match",
and every board string in both languages."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from rich.cells import cell_len

from koikoi.client.tui import Look, Seats
from koikoi.client.tui.board import BoardMode, BoardModel, progress
from koikoi.client.tui.board_layout import _field, layout
from koikoi.client.tui.words import WORDS, short_name
from koikoi.engine import Match, Phase, SeededDeal, Settings, card_from_id
from koikoi.engine.bots import make_bot

SEATS = Seats(0, ("You", "Computer"))


def _mask(*ids: str) -> int:
    return sum(1 << card_from_id(x) for x in ids)


def _models(lang: str, n_matches: int = 2) -> list[BoardModel]:
    out = []
    for k in range(n_matches):
        m = Match(Settings(), SeededDeal(bytes([k + 40]) * 32), first_dealer=k % 2)
        bots = [make_bot("random", random.Random(k + s)) for s in (0, 1)]
        model = BoardModel(SEATS, Look(lang=lang), 6)
        while not m.is_over:
            model.feed(m.log)
            model.view = m.view(0)
            if m.to_move == 0:
                model.ask(m.view(0))
            else:
                model.stop_asking()
            out.append(model)
            model = BoardModel(SEATS, Look(lang=lang), 6)
            m.apply(bots[m.to_move].choose(m.view(m.to_move)))
    return out


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)])
def test_every_line_fits_and_the_screen_is_full(lang: str, size: tuple[int, int]) -> None:
    w, h = size
    for model in _models(lang)[::4]:
        lines, hot = layout(model, w, h, 0.0)
        assert len(lines) == h
        assert all(cell_len(t.plain) <= w for t in lines), [t.plain for t in lines if cell_len(t.plain) > w]
        assert all(0 <= spot.row < h and spot.x1 <= w for spot in hot)
        text = "\n".join(t.plain for t in lines)
        v = model.view
        assert v is not None
        assert ("Round" if lang == "en" else "第") in lines[0].plain
        if model.mode == "play":  # the whole hand is on screen, numbered, and clickable
            assert {s.key for s in hot if s.key.startswith("hand:")} == {f"hand:{i}" for i in range(len(v.hand))}
            assert ("Play a card" if lang == "en" else "出す札") in text


def test_the_move_clock_counts_down_and_turns_to_a_warning() -> None:
    m = Match(Settings(), SeededDeal(b"\x01" * 32), first_dealer=0)
    model = BoardModel(SEATS, Look(), 6, network=True)
    model.feed(m.log)
    model.ask(m.view(0))
    model.deadline, model.deadline_seat = 100.0, 0
    head = layout(model, 80, 24, now=100.0 - 89.0)[0][0]
    assert head.plain.endswith("⏱ 1:29") and cell_len(head.plain) == 80
    warn = layout(model, 80, 24, now=100.0 - 12)[0][0]
    assert warn.plain.endswith("⏱ 0:12")
    assert any("red" in str(span.style) for span in warn.spans)
    model.deadline_seat = 1  # the opponent's clock
    assert layout(model, 80, 24, now=40.0)[0][0].plain.endswith("Computer ⏱ 1:00")
    model.deadline = None
    assert "⏱" not in layout(model, 80, 24, now=0)[0][0].plain


def test_yaku_progress() -> None:
    assert progress(0, "en") == []
    assert progress(_mask("matsu_ribbon", "ume_ribbon", "hagi_boar"), "en") == [
        ("Inoshikachō 1/3", False),
        ("Akatan 2/3", False),
        ("Tane 1/5", False),
        ("Tan 2/5", False),
    ]
    made = progress(_mask("matsu_ribbon", "ume_ribbon", "sakura_ribbon", "kiku_plain_1"), "ja")
    assert made[0] == ("赤短 5", True) and ("カス 1/10", False) in made
    lights = progress(_mask("matsu_crane", "sakura_curtain", "kiku_sake_cup"), "en")
    # one name per yaku, the count's (issue 21: not "Hanami" here and "Hanami de ippai" there)
    assert ("Hanami de ippai 5", True) in lights and ("Sankō 2/3", False) in lights
    assert ("Tsukimi de ippai 1/2", False) in lights


def test_shobu_now_ends_the_match_only_when_true() -> None:
    def decide(pred: object) -> BoardModel:
        for k in range(300):
            m = Match(Settings(), SeededDeal(bytes([k % 256, 7]) * 16), first_dealer=k % 2)
            bots = [make_bot("greedy", random.Random(k + s)) for s in (0, 1)]
            while not m.is_over:
                v = m.view(m.to_move)
                if m.to_move == 0 and v.phase is Phase.DECIDE and pred(m):  # type: ignore[operator]
                    model = BoardModel(SEATS, Look(), 6)
                    model.feed(m.log)
                    model.ask(v)
                    return model
                m.apply(bots[m.to_move].choose(v))
        raise AssertionError("no such position")

    early = decide(lambda m: m.round < 6 and m.shobu_breakdown(0).payment < m.points[1])
    last = decide(lambda m: m.round == 6)
    assert not early.shobu_ends_match() and last.shobu_ends_match()
    early_text = "\n".join(t.plain for t in layout(early, 80, 24)[0])
    last_text = "\n".join(t.plain for t in layout(last, 80, 24)[0])
    assert "shōbu now ends the match" not in early_text and "shōbu now ends the match" in last_text
    assert "Shōbu now pays you" in early_text and "Base" in early_text  # the count before the choice


def test_every_english_string_has_a_japanese_one_with_the_same_fields() -> None:
    import string

    def fields(s: str) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(s) if f}

    assert set(WORDS["en"]) == set(WORDS["ja"])
    for key, en in WORDS["en"].items():
        assert fields(en) == fields(WORDS["ja"][key]), key


def test_the_field_is_coloured_by_kind_on_the_screen() -> None:
    """Lights yellow, tane green, poem ribbons red, blue ribbons blue, plain ribbons magenta, plains
    unstyled: the styles the board paints each field card with, read off the laid-out lines."""
    want = {
        "sakura_curtain": "bold yellow",
        "hagi_boar": "green",
        "matsu_ribbon": "bold red",
        "botan_ribbon": "bold blue",
        "fuji_ribbon": "magenta",
        "kiri_plain_1": "",
    }
    view = SimpleNamespace(table=sorted(card_from_id(c) for c in want), pending_draw=None)
    lines = _field(BoardModel(SEATS, Look(lang="en"), 6), view, 120, [], 0)  # type: ignore[arg-type]
    painted: dict[str, str] = {}
    for line in lines:
        for span in line.spans:
            text = line.plain[span.start : span.end]
            for cid in want:
                if text == short_name(card_from_id(cid), "en") and cid not in painted:
                    painted[cid] = str(span.style)
    for cid in want:
        if want[cid]:
            assert painted.get(cid) == want[cid], (cid, painted.get(cid))
        else:
            assert painted.get(cid, "") in ("", "none"), (cid, painted.get(cid))


# -- issue 21: the rough edges ---------------------------------------------------------------------------------


def _screen(model: BoardModel, now: float = 0.0, size: tuple[int, int] = (80, 24)) -> str:
    return "\n".join(t.plain for t in layout(model, *size, now)[0])


def test_no_line_is_cut_off_at_80_columns_in_any_position() -> None:
    for lang in ("en", "ja"):
        for model in _models(lang, 3):
            model.notes.append(WORDS[lang]["net_warn_them_board"].format(what="move"))
            model.events.append(WORDS[lang]["net_interrupted"].format(resume="`koikoi resume /home/a/koikoi/x.koikoi`"))
            text = _screen(model)
            assert "…" not in text.replace(WORDS[lang]["q_wait"].format(name="Computer"), ""), text


def test_a_long_event_wraps_whole_and_a_note_too() -> None:
    model = _models("en", 1)[3]
    path = "/home/someone/.local/share/koikoi/transcripts/2026-12-01-ACDEF-host.koikoi"
    model.events.append(f"interrupted: the match so far is saved; continue it with `koikoi resume {path}`")
    model.notes.append(WORDS["en"]["net_warn_them_board"].format(what="move"))
    flat = " ".join(_screen(model).split())
    assert f"`koikoi resume {path}`" in flat
    assert "then you win on time if the relay certifies their silence." in flat


def test_the_opponent_is_back_leaves_after_a_few_seconds_with_the_away_note() -> None:
    model = _models("en", 1)[3]
    model.notes.append("Your opponent's connection dropped; the relay keeps the seat for 120 s.")
    model.say_brief("Your opponent is back.", until=100.0)
    assert "Your opponent is back." in _screen(model, now=99.0)
    assert "connection dropped" not in _screen(model, now=99.0)
    assert "Your opponent is back." not in _screen(model, now=100.0)


def test_nobody_is_thinking_before_the_match_starts() -> None:
    model = BoardModel(Seats(1, ("Opponent", "Opponent")), Look(), 6, network=True)
    model.events.append("Created room ACDEF …")
    assert "thinking" not in _screen(model) and "Waiting for the match to start" in _screen(model)
    m = _models("en", 1)[0]
    m.stop_asking()
    assert "Computer is thinking…" in _screen(m)


def test_the_round_line_at_the_match_end_names_the_last_rounds_dealer() -> None:
    for k in range(40):
        m = Match(Settings(), SeededDeal(bytes([k + 7]) * 32), first_dealer=k % 2)
        bots = [make_bot("greedy", random.Random(k + s)) for s in (0, 1)]
        while not m.is_over:
            m.apply(bots[m.to_move].choose(m.view(m.to_move)))
        last = next(e.result for e in reversed(m.log) if hasattr(e, "result"))
        if last.winner is None or last.winner == last.dealer:
            continue  # the winner deals next: only a win by the other seat tells them apart
        model = BoardModel(SEATS, Look(), 6)
        model.feed(m.log)
        model.view = m.view(0)
        model.mode = BoardMode.OVER
        head = _screen(model).split("\n")[0]
        dealer = "You deal" if last.dealer == 0 else "Computer deals"
        assert head.startswith(f"Round {last.round} of 6") and dealer in head, head
        return
    raise AssertionError("no match whose last round the non-dealer won")
