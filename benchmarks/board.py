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

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import platform
import random
import statistics
import sys
import time

from rich.console import Console

from koikoi.client.commands.practice import _play
from koikoi.client.tui import Look, Seats
from koikoi.client.tui.app import BoardApp
from koikoi.engine import Match, SeatView, SeededDeal, Settings
from koikoi.engine.actions import Action
from koikoi.engine.bots import make_bot

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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=5)
    p.add_argument("--size", default="80x24")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    w, h = (int(x) for x in a.size.split("x"))
    draws = asyncio.run(redraws(a.matches, a.seed, (w, h)))
    walls, replies = practice(a.matches, a.seed)
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
                "python": platform.python_version(),
                "platform": sys.platform,
            }
        )
    )


if __name__ == "__main__":
    main()
