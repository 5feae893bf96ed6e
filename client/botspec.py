"""Bots named on the command line: ``--bot NAME`` / ``--bots A,B``."""

from __future__ import annotations

import random

from ..engine.bots import BOT_NAMES, Bot, UnknownBot, make_bot

__all__ = ["bot_from_spec", "BotSpecError", "check_bot_spec"]


class BotSpecError(ValueError):
    pass


def check_bot_spec(spec: str) -> None:
    """Raise :class:`BotSpecError` when ``spec`` names no bot."""
    if spec not in BOT_NAMES:
        raise BotSpecError(f"unknown bot {spec!r}; built-in bots: {', '.join(BOT_NAMES)}")


def bot_from_spec(spec: str, rng: random.Random) -> Bot:
    """A bot from a command-line spec: a built-in name."""
    try:
        return make_bot(spec, rng)
    except UnknownBot as e:
        raise BotSpecError(str(e)) from None
