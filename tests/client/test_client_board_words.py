"""The network's lines on the board (issue 21): a time warning beside the board's running clock counts no
seconds (they went stale at once: "7 s left" beside "⏱ 0:01"); the text mode keeps its count."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any, cast

from koikoi.client.match_loop import NetGame
from koikoi.client.output import Output
from koikoi.client.tuning import Tuning
from koikoi.protocol.session import Session, TimeoutWarning


class _Board:
    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, *lines: str) -> None:
        self.notes += lines

    def say(self, *lines: str) -> None:
        pass


def test_a_time_warning_on_the_board_counts_no_seconds_the_text_mode_does() -> None:
    out = io.StringIO()
    game = NetGame(Output("koikoi join", False, out=out, err=io.StringIO()), Tuning(), bot_spec=None, lang="en",
                   assist=True)  # fmt: skip
    game.session = cast(Session, SimpleNamespace(seat=0))
    board = _Board()
    game.presentation.table = cast(Any, board)
    game.out.attach(board)
    game.presentation.show(TimeoutWarning(0, "move", 7.0))
    game.presentation.show(TimeoutWarning(1, "move", 7.0))
    assert board.notes == [
        "Your time for the move is running out (the clock above): then your opponent can win the match on time.",
        "Your opponent's time for the move is running out (the clock above): then you win on time if the relay"
        " certifies their silence.",
    ]
    game.presentation.table = None
    game.out.detach()
    game.presentation.show(TimeoutWarning(0, "move", 7.0))
    assert "You have 7 s left for the move" in out.getvalue()
