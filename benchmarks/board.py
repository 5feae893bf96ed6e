"""The board's speed: redrawing a move, and a practice match against ``normal``.

    python benchmarks/board.py [--matches N] [--size 80x24] [--seed S]

* ``redraw_ms``: for every move of N seeded practice matches, the time to take the move into the
  board (the new log entries and the view) and paint the whole screen the way Textual does (the
  board's render, the compositor's full update, and the terminal's bytes), headless at the given
  size. Target: p95 < 50 ms.
* ``practice_match_s``: a whole 6-round practice match against ``normal`` (the greedy bot) through
  the match protocol between two local keys (signed, verified, the transcript written in memory),
  the person's seat played by another greedy bot: the match's wall time, and ``reply_ms``, the
  slowest wait between the person's move and the next question (the computer's moves and the
  protocol work). Target: the match "feels instant" (replies well under 100 ms).

* ``board_match_s`` and ``key_to_next_question_ms``: the same practice match against ``normal`` on the
  board itself, headless, played by keys through Textual's pilot (``koikoi practice`` without the
  terminal): each match's wall time, and for every key that answered a question, the time until the board
  asked the next one (the computer's move, the protocol, the redraw). Target: well under 100 ms.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import io
import json
import platform
import random
import statistics
import sys
import time
from typing import Any

from rich.console import Console
from rich.text import Text
from textual import events

from koikoi.client.commands.practice import _play, _practice
from koikoi.client.tui import Look, Seats
from koikoi.client.tui.app import BoardApp, BoardTable
from koikoi.engine import Match, SeatView, SeededDeal, Settings
from koikoi.engine.actions import Action
from koikoi.engine.bots import Bot, make_bot

SEATS = Seats(0, ("You", "Computer"))


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


async def redraws(matches: int, seed: int, size: tuple[int, int]) -> list[float]:
    out: list[float] = []
    app = BoardApp(SEATS, Look(width=size[0]), 6, pause_between_rounds=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        sink = Console(width=size[0], height=size[1], file=io.StringIO(), force_terminal=True,
                       color_system="truecolor", legacy_windows=False)  # fmt: skip
        for k in range(matches):
            app.ui_reset()
            m = Match(Settings(), SeededDeal(random.Random(seed + k).randbytes(32)), first_dealer=k % 2)
            bots = [make_bot("greedy", random.Random(seed + k + s)) for s in (0, 1)]
            while not m.is_over:
                m.apply(bots[m.to_move].choose(m.view(m.to_move)))
                t = time.perf_counter()
                app.ui_show(m.log, m.view(0))
                if m.to_move == 0 and not m.is_over:
                    app.ui_ask(m.view(0), None)
                app.board.render()  # what the refresh paints
                update = app.screen._compositor.render_update(full=True)
                sink.print(update)
                out.append((time.perf_counter() - t) * 1000)
                app.ui_cancel()
                sink.file = io.StringIO()
    return out


class BotTable:
    """The practice loop's table with a greedy bot in the person's seat, timing the replies."""

    lang = "en"
    seats = SEATS

    def __init__(self, seed: int) -> None:
        self.bot = make_bot("greedy", random.Random(seed))
        self.answered: float | None = None
        self.replies: list[float] = []

    def show(self, log: object, view: SeatView | None = None) -> None:
        pass

    def choose(self, view: SeatView, deadline: float | None = None) -> Action:
        if self.answered is not None:
            self.replies.append((time.perf_counter() - self.answered) * 1000)
        action = self.bot.choose(view)
        self.answered = time.perf_counter()
        return action

    def cancel(self) -> None:
        pass

    def say(self, *lines: str) -> None:
        pass

    def note(self, *lines: str) -> None:
        pass

    def clock(self, deadline: float | None, seat: int | None = None) -> None:
        pass

    def ask_again(self) -> bool:
        return False

    def reset(self) -> None:
        pass

    def ask_secret(self, question: str) -> str | None:
        return None

    def close(self) -> None:
        pass


def practice(matches: int, seed: int) -> tuple[list[float], list[float]]:
    walls: list[float] = []
    replies: list[float] = []
    for k in range(matches):
        table = BotTable(seed + k)
        computer = make_bot("greedy", random.Random(seed + 1000 + k))
        t = time.perf_counter()
        _play(table, computer, Settings(rounds=6), random.Random(seed + k).randbytes(32))
        walls.append(time.perf_counter() - t)
        replies += table.replies
    return walls, replies


class TimedBoard(BoardApp):
    """The board, timing each answer: from the key's arrival in the app to the end of the first paint
    after the next question (or the round's count, or "play again?") reached it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key_at: float | None = None
        self.asked = False
        self.waits: list[float] = []
        paint = self.board.render

        def render() -> Text:
            out = paint()
            if self.asked and self.key_at is not None:
                self.waits.append((time.perf_counter() - self.key_at) * 1000)
                self.key_at, self.asked = None, False
            return out

        self.board.render = render  # type: ignore[method-assign]

    def on_key(self, event: events.Key) -> None:
        if self.screen is self.screen_stack[0]:
            self.key_at, self.asked = time.perf_counter(), False
        super().on_key(event)

    def _wait_for(self, kind: str) -> concurrent.futures.Future[Any]:
        self.asked = True
        return super()._wait_for(kind)


async def board_matches(matches: int, seed: int, size: tuple[int, int]) -> tuple[list[float], list[float]]:
    """Whole practice matches against ``normal`` on the board itself, as ``koikoi practice`` runs them: the
    Textual app (headless, ``size``), the practice loop in its own thread talking to it through
    ``BoardTable``, every answer a key pressed through Textual's pilot (a card's number, ``1`` for a
    capture choice, ``s`` for shōbu, Enter between rounds, ``n`` to "play again?"). Returns each match's
    wall time (s, including the pilot's own ~60 ms a key) and, for every key that answered a question, the
    time from the key reaching the board to the next question painted (ms): the computer's move, the
    protocol's signing and checking, the redraw."""
    walls: list[float] = []
    waits: list[float] = []
    for k in range(matches):
        computer = make_bot("greedy", random.Random(seed + 1000 + k))
        deal = random.Random(seed + k).randbytes(32)

        def loop(table: BoardTable, computer: Bot = computer, deal: bytes = deal) -> int:
            return _practice(table, computer, Settings(rounds=6), deal, None, ["Practice."], None)

        app = TimedBoard(SEATS, Look(width=size[0]), 6, start=loop)
        t0 = time.perf_counter()
        async with app.run_test(size=size) as pilot:
            while app.is_running and app.thread is not None and app.thread.is_alive():
                m = app.model
                key = {"play": "1", "pick": "1", "choose": "1", "decide": "s", "round": "enter", "again": "n"}.get(
                    m.mode
                )
                if key is None:
                    await pilot.pause(0.001)
                    continue
                before = (app.questions, m.mode)
                await pilot.press(key)
                while app.is_running and (app.questions, app.model.mode) == before and app.thread.is_alive():
                    await pilot.pause(0.001)
        walls.append(time.perf_counter() - t0)
        waits += app.waits
    return walls, waits


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=5)
    p.add_argument("--size", default="80x24")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    w, h = (int(x) for x in a.size.split("x"))
    draws = asyncio.run(redraws(a.matches, a.seed, (w, h)))
    walls, replies = practice(a.matches, a.seed)
    board_walls, key_waits = asyncio.run(board_matches(a.matches, a.seed, (w, h)))
    print(
        json.dumps(
            {
                "size": a.size,
                "moves": len(draws),
                "redraw_ms": {
                    "p50": round(statistics.median(draws), 2),
                    "p95": round(_pct(draws, 0.95), 2),
                    "max": round(max(draws), 2),
                },
                "practice_matches": len(walls),
                "practice_match_s": {"median": round(statistics.median(walls), 3), "max": round(max(walls), 3)},
                "reply_ms": {"p50": round(statistics.median(replies), 2), "max": round(max(replies), 2)},
                "board_match_s": {
                    "median": round(statistics.median(board_walls), 3),
                    "max": round(max(board_walls), 3),
                },
                "key_to_next_question_ms": {
                    "p50": round(statistics.median(key_waits), 2),
                    "p95": round(_pct(key_waits, 0.95), 2),
                    "max": round(max(key_waits), 2),
                },
                "python": platform.python_version(),
                "platform": sys.platform,
            }
        )
    )


if __name__ == "__main__":
    main()
