"""Computer opponents.

A bot is anything with ``choose(view) -> Action``: it sees only its seat's
:class:`~koikoi.engine.match.SeatView` (its own hand, the table, both capture
piles, counts), never the other hand or the deck, and returns one of
``view.legal_actions``. Bots get their randomness as an explicit
``random.Random``, so a seeded self-play is the same on every machine.

``make_bot(name, rng)`` builds a built-in bot by name; ``BOT_NAMES`` lists them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from ..actions import Action
from ..match import SeatView
from .basic import GreedyBot, RandomBot
from .strong import StrongBot

__all__ = ["BOTS", "BOT_NAMES", "Bot", "GreedyBot", "RandomBot", "UnknownBot", "make_bot"]


class Bot(Protocol):
    """The bot interface: pick one of ``view.legal_actions``."""

    name: str

    def choose(self, view: SeatView) -> Action: ...


BotFactory = Callable[[random.Random], Bot]

BOTS: dict[str, BotFactory] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "strong": StrongBot,
}

LEVELS: dict[str, str] = {"easy": "random", "normal": "greedy", "strong": "strong"}
"""``koikoi practice --level``: each level and the built-in bot that plays it."""


class UnknownBot(ValueError):
    def __init__(self, name: str) -> None:
        self.bot_name = name
        super().__init__(f"unknown bot {name!r}; built-in bots: {', '.join(sorted(BOTS))}")


def make_bot(name: str, rng: random.Random) -> Bot:
    """A built-in bot by name (see ``BOT_NAMES``)."""
    try:
        factory = BOTS[name]
    except KeyError:
        raise UnknownBot(name) from None
    return factory(rng)


def bot_names() -> list[str]:
    return sorted(BOTS)


BOT_NAMES: tuple[str, ...] = tuple(sorted(BOTS))
