"""The board as a person sees it: text snapshots at 80×24 and 120×40, in English and Japanese, in each
phase (play, capture choice, the drawn card's choice, koi-koi decision, round end, match end).

The snapshots are the real Textual screen as text (``snapshots_board/*.txt``). After a deliberate
change of the board, rewrite them with ``KOIKOI_UPDATE_SNAPSHOTS=1`` and review the diff.
"""

from __future__ import annotations

import asyncio
import io
import os
import random
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
from rich.console import Console

from koikoi.client.match_loop import NetGame
from koikoi.client.output import Output
from koikoi.client.tui import Look, Seats
from koikoi.client.tui.app import BoardApp
from koikoi.client.tui.render import matches_in
from koikoi.client.tuning import Tuning
from koikoi.engine import Match, Phase, SeatView, SeededDeal, Settings
from koikoi.engine.bots import make_bot
from koikoi.engine.events import Dealt, Played
from koikoi.protocol.session import Session
from koikoi.protocol.witness import fingerprint

SNAPSHOTS = Path(__file__).parent / "snapshots_board"
SEATS = Seats(0, ("You", "Computer"))


def screen_text(app: BoardApp) -> str:
    """What the terminal shows now, as plain text (the render Textual's own screenshots use)."""
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False, color_system=None
    )
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    console.print(update)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


def check_snapshot(name: str, text: str) -> None:
    """Compare with ``snapshots_board/NAME.txt``; ``KOIKOI_UPDATE_SNAPSHOTS=1`` writes it instead."""
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("KOIKOI_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path.name}: run with KOIKOI_UPDATE_SNAPSHOTS=1 and review it"
    expected = path.read_text(encoding="utf-8").rstrip("\n")
    assert text.rstrip("\n") == expected, f"the board differs from {path.name}:\n{text}"  # (blank lines at the end)


def find(pred: Callable[[Match], bool]) -> Match:
    """The first position in seeded greedy-vs-greedy matches where ``pred`` holds."""
    for k in range(300):
        m = Match(Settings(), SeededDeal(bytes([k % 256, k // 256]) * 16), first_dealer=k % 2)
        bots = [make_bot("greedy", random.Random(k)), make_bot("greedy", random.Random(k + 1))]
        while not m.is_over:
            if pred(m):
                return m
            m.apply(bots[m.to_move].choose(m.view(m.to_move)))
        if pred(m):
            return m
    raise AssertionError("no such position")


def two_match_card(v: SeatView) -> int | None:
    for i, c in enumerate(v.hand):
        if len(matches_in(c, v.table)) == 2:
            return i
    return None


@cache
def positions() -> dict[str, Match]:
    """One position of each phase: seat 0 to decide, or a round (the match) just ended."""

    def mine(m: Match, phase: Phase) -> bool:
        return m.to_move == 0 and m.phase is phase and m.round >= 2

    return {
        "play": find(lambda m: mine(m, Phase.PLAY) and len(m.view(0).captures[0]) >= 4),
        "pick": find(lambda m: mine(m, Phase.PLAY) and two_match_card(m.view(0)) is not None),
        "choose": find(lambda m: m.to_move == 0 and m.phase is Phase.CHOOSE and m.round >= 2),
        "decide": find(lambda m: mine(m, Phase.DECIDE) and m.multiplier == 1),
        "round": find(lambda m: bool(m.log) and isinstance(m.log[-1], Dealt) and m.round == 3),
        "over": find(lambda m: m.is_over),
    }


async def _board(phase: str, lang: str, size: tuple[int, int]) -> str:
    m = positions()[phase]
    seats = SEATS if lang == "en" else Seats(0, ("あなた", "コンピューター"))  # as practice names them
    app = BoardApp(seats, Look(lang=lang, width=size[0]), m.settings.rounds, pause_between_rounds=False)
    async with app.run_test(size=size) as pilot:
        v = m.view(0)
        app.ui_show(m.log, v)
        if phase in ("play", "pick", "choose", "decide"):
            app.ui_ask(v, None)
        if phase == "pick":
            i = two_match_card(v)
            assert i is not None
            await pilot.press(str(i + 1))
            assert app.model.mode == "pick"
        await pilot.pause()
        return screen_text(app)


PHASES = ["play", "pick", "choose", "decide", "round", "over"]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("phase", PHASES)
def test_board_snapshot(phase: str, lang: str, size: tuple[int, int]) -> None:
    text = asyncio.run(_board(phase, lang, size))
    lines = text.split("\n")
    assert len(lines) == size[1]
    check_snapshot(f"{phase}_{lang}_{size[0]}x{size[1]}", text)


# -- issue 21: who is playing, and a window too small ----------------------------------------------------------


def _players(lang: str, seat: int, runs_relay: bool) -> list[str]:
    """The panel's lines as a networked match loop makes them (its own words, a session's keys)."""
    game = NetGame(Output("koikoi join", False), Tuning(), bot_spec=None, lang=lang, assist=True)
    game.presentation.words_lang = lang
    game.presentation.runs_relay = runs_relay
    game.session = cast(
        Session,
        SimpleNamespace(seat=seat, fingerprint="7KQM-2XHD-R4T9-WB0E", opponent_fingerprint="QF3N-8ZAC-M1VD-K6PY",
                        relay_key=b"\x01" * 32),
    )  # fmt: skip
    return game.presentation.players_lines()


def _first_turn(seat: int) -> Match:
    """Round 1 with 8 cards in each hand and the most months on the field, ``seat`` to play first."""

    def at_start(m: Match) -> bool:
        return m.round == 1 and m.to_move == seat and not any(isinstance(e, Played) for e in m.log)

    return find(lambda m: at_start(m) and m.dealer == seat and len({c // 4 for c in m.view(0).table}) >= 7)


async def _network_board(lang: str, size: tuple[int, int], players: list[str], *, move: bool = False) -> str:
    m = _first_turn(0)
    seats = Seats(0, ("Opponent", "Opponent"))
    app = BoardApp(seats, Look(lang=lang, width=size[0]), m.settings.rounds, network=True, pause_between_rounds=False)
    async with app.run_test(size=size) as pilot:
        app.ui_players(players)
        app.ui_say(["The match begins: you are seat 0 (the room's creator); 6 rounds, ×2 at 8+, 120 s a move."])
        app.ui_show(m.log, m.view(0))
        if move:
            m.apply(m.view(0).legal_actions[0])
            app.ui_show(m.log, m.view(0))
        else:
            app.ui_ask(m.view(0), None)
        await pilot.pause()
        return screen_text(app)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_players_panel_at_80x24_until_the_first_move(lang: str) -> None:
    players = _players(lang, 1, False)
    text = asyncio.run(_network_board(lang, (80, 24), players))
    lines = text.split("\n")
    assert len(lines) == 24 and "…" not in text
    flat = " ".join(line.strip() for line in lines)
    assert "7KQM-2XHD-R4T9-WB0E" in flat and "QF3N-8ZAC-M1VD-K6PY" in flat  # both keys, whole
    assert fingerprint(b"\x01" * 32) in flat  # the relay's
    assert ("koikoi host without --relay" in flat) if lang == "en" else ("--relay なしの koikoi host" in flat)
    assert sum(1 for line in lines if re.match(r"^ [ *][1-8] ", line)) == 8  # every hand card still shown
    check_snapshot(f"players_{lang}_80x24", text)
    # the host that runs the relay is told so; the panel goes once this seat has moved
    assert "you run it" in "".join(_players("en", 0, True))
    after = asyncio.run(_network_board(lang, (80, 24), players, move=True))
    assert "7KQM-2XHD-R4T9-WB0E" not in after


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_window_smaller_than_the_board_says_so(lang: str) -> None:
    text = asyncio.run(_board("play", lang, (60, 20)))
    assert len(text.split("\n")) == 20
    assert "80×24" in text and "60×20" in text
    assert "Your hand" not in text and "手札" not in text  # no board with cards 7–8 missing
    check_snapshot(f"too_small_{lang}_60x20", text)
    assert "80×24" not in asyncio.run(_board("play", lang, (80, 24)))
