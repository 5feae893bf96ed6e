"""Computer opponents, and the Python interface for writing one.

A bot is anything with a ``name`` and ``choose(view) -> Action``: it sees only
its seat's :class:`~koikoi.engine.match.SeatView` (its own hand, the table,
both capture piles, counts, the pools, the rounds played), never the other
hand or the deck, and returns one of ``view.legal_actions``. It is called only
when its seat has a decision (``view.legal_actions`` is never empty). Bots get
their randomness as an explicit ``random.Random``, so a seeded self-play is the
same on every machine; they do no I/O and read no clock::

    class FirstBot:
        name = "first"

        def __init__(self, rng: random.Random) -> None:
            self.rng = rng

        def choose(self, view: SeatView) -> Action:
            return view.legal_actions[0]

Built-in bots (``make_bot(name, rng)``; ``BOT_NAMES`` lists them):

* ``random``: any legal action;
* ``greedy``: the best immediate yaku progress, shōbu at once;
* ``strong``: determinized Monte Carlo search over the hidden cards with a
  match-aware koi-koi decision (:mod:`.strong`), kept as a reference;
* ``master``: the same search with a larger budget and a search tree (IS-MCTS)
  below each action, rollouts in which both players may call koi-koi (the
  opponent as often as it has in this match, either more often with more cards
  left), and a reading of the opponent's plays that rules cards out of its hand
  (:mod:`.master`).

``LEVELS`` maps ``koikoi practice --level`` (easy, normal, strong) to them: the
strong level plays the master bot. A
bot in another program, in any language, plays through the JSON-lines
protocol of ``spec/bot-protocol.md`` (``--bot cmd:PROGRAM``; the client side
is ``koikoi.client.external_bot``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from ...errors import LocalError
from ..actions import Action
from ..match import SeatView
from .basic import GreedyBot, RandomBot
from .master import MasterBot
from .strong import StrongBot

__all__ = [
    "BOTS",
    "BOT_NAMES",
    "LEVELS",
    "Bot",
    "GreedyBot",
    "MasterBot",
    "RandomBot",
    "StrongBot",
    "UnknownBot",
    "make_bot",
]


class Bot(Protocol):
    """The bot interface: pick one of ``view.legal_actions``."""

    name: str

    def choose(self, view: SeatView) -> Action: ...


BotFactory = Callable[[random.Random], Bot]

BOTS: dict[str, BotFactory] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "strong": StrongBot,
    "master": MasterBot,
}

LEVELS: dict[str, str] = {"easy": "random", "normal": "greedy", "strong": "master"}
"""``koikoi practice --level``: each level and the built-in bot that plays it."""


class UnknownBot(LocalError, ValueError):
    def __init__(self, name: str) -> None:
        self.bot_name = name
        super().__init__(f"unknown bot {name!r}; built-in bots: {', '.join(sorted(BOTS))}")

    def __reduce__(self) -> tuple[type[UnknownBot], tuple[str]]:
        return (type(self), (self.bot_name,))  # a worker process's error arrives as it was raised


def make_bot(name: str, rng: random.Random) -> Bot:
    """A built-in bot by name (see ``BOT_NAMES``)."""
    try:
        factory = BOTS[name]
    except KeyError:
        raise UnknownBot(name) from None
    return factory(rng)


BOT_NAMES: tuple[str, ...] = tuple(sorted(BOTS))
