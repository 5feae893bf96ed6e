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
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from rich.console import Console

from koikoi.client.tui import Look, Seats
from koikoi.client.tui.app import BoardApp
from koikoi.client.tui.render import matches_in
from koikoi.engine import Match, Phase, SeatView, SeededDeal, Settings
from koikoi.engine.bots import make_bot
from koikoi.engine.events import Deal

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
    assert text == expected, f"the board differs from {path.name}:\n{text}"


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
        "round": find(lambda m: bool(m.log) and isinstance(m.log[-1], Deal) and m.round == 3),
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
