"""One seat's terminal during a match: narrate what happens, ask the person, pause between rounds.

:class:`Console` ties the pieces together for any match loop, local or
networked: call :meth:`Console.show_events` with the match log after every
applied action (it narrates each new entry in one sentence, prints each
round's count, and waits for Enter between rounds), and use
:attr:`Console.player` (a :class:`HumanPlayer`) when it is this seat's turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from ...engine.events import Dealt, Event, MatchEnded, RoundEnded
from .human import HumanPlayer, TextScreen
from .render import Narrator
from .text import Look, Seats, wrap_all

__all__ = ["Console"]


class Console:
    def __init__(
        self,
        inp: TextIO,
        out: TextIO,
        seats: Seats,
        look: Look,
        *,
        rounds: int | None = None,
        pause_between_rounds: bool = True,
    ) -> None:
        self.seats = seats
        self.look = look
        self.screen = TextScreen(out, look)
        self.player = HumanPlayer(inp, out, seats, look)
        self.narrator = Narrator(seats, look, rounds)
        self.pause_between_rounds = pause_between_rounds

    def say(self, *lines: str) -> None:
        """Show sentences, wrapped to the terminal's width."""
        self.screen.write(wrap_all(lines, self.look.width, "    "))

    def show_events(self, log: Sequence[Event]) -> None:
        """Narrate the log entries not shown yet; after a round's count, wait for Enter
        (unless the match ends there). May raise :class:`~.human.PlayerQuit`."""
        start = self.narrator.seen
        for i in range(start, len(log)):
            entry = log[i]
            if isinstance(entry, Dealt):
                self.screen.write([""])
            self.screen.write(wrap_all(self.narrator.entry(entry), self.look.width, "    "))
            self.narrator.seen = i + 1
            if (
                isinstance(entry, RoundEnded)
                and self.pause_between_rounds
                and i + 1 < len(log)
                and not isinstance(log[i + 1], MatchEnded)
            ):
                self.player.pause("Press Enter for the next round (q quits): ")
