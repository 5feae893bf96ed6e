"""Bots named on the command line: ``--bot SPEC`` / ``--bots A,B``.

A spec is either a built-in bot's name (``random``, ``greedy``, ``strong``) or
``cmd:PROGRAM``: a program speaking the JSON-lines bot protocol
(spec/bot-protocol.md), its command line split like a shell would
(``cmd:python3 examples/bots/example_bot.py``). Every command that takes a bot
(selfplay, practice, host, join) goes through here:

* :func:`parse_bot_spec` checks a spec without starting anything (for argument
  errors: exit 2);
* :func:`bot_from_spec` turns a spec into a :class:`~koikoi.engine.bots.Bot`
  (for ``cmd:`` it starts the program and shakes hands);
* :func:`close_bot` stops an external bot cleanly (built-ins need nothing);
  :func:`opened_bot` does both as a context manager.

Starting or talking to an external program can fail; that raises
:class:`~koikoi.client.external_bot.BotError` with one line to show the user.

Every bot's ``choose`` blocks while it thinks (the strong bot for up to a
second or so, an external one up to its move timeout), and starting or closing
an external bot may take a moment; in a trio program run them in a worker
thread::

    bot = await trio.to_thread.run_sync(bot_from_spec, spec, rng)
    try:
        action = await trio.to_thread.run_sync(bot.choose, view)
    finally:
        await trio.to_thread.run_sync(close_bot, bot)
"""

from __future__ import annotations

import random
import shlex
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..engine.bots import BOT_NAMES, Bot, UnknownBot, make_bot
from ..errors import LocalError
from .external_bot import DEFAULT_HELLO_TIMEOUT, DEFAULT_MOVE_TIMEOUT, BotError, ExternalBot

__all__ = [
    "CMD_PREFIX",
    "BotError",
    "BotSpec",
    "BotSpecError",
    "bot_from_spec",
    "close_bot",
    "opened_bot",
    "parse_bot_spec",
]

CMD_PREFIX = "cmd:"


class BotSpecError(LocalError, ValueError):
    """A spec that names no bot (a usage error)."""


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A parsed spec: a built-in ``name``, or the ``argv`` of an external program."""

    text: str
    name: str | None = None
    argv: tuple[str, ...] = ()

    @property
    def external(self) -> bool:
        return self.name is None


def parse_bot_spec(text: str) -> BotSpec:
    """Check a spec; raise :class:`BotSpecError` naming what is wrong."""
    spec = text.strip()
    if spec.startswith(CMD_PREFIX):
        command = spec[len(CMD_PREFIX) :].strip()
        try:
            argv = tuple(shlex.split(command))
        except ValueError as e:
            raise BotSpecError(f"cannot read the bot command {command!r}: {e}") from None
        if not argv:
            raise BotSpecError("cmd: needs a program, e.g. cmd:python3 examples/bots/example_bot.py")
        if shutil.which(argv[0]) is None:
            raise BotSpecError(f"bot program {argv[0]!r} not found (or not executable)")
        return BotSpec(spec, None, argv)
    if spec in BOT_NAMES:
        return BotSpec(spec, spec)
    raise BotSpecError(
        f"unknown bot {spec!r}; built-in bots: {', '.join(BOT_NAMES)}, or cmd:PROGRAM for an external bot"
    )


def bot_from_spec(
    spec: str | BotSpec,
    rng: random.Random,
    *,
    hello_timeout: float = DEFAULT_HELLO_TIMEOUT,
    move_timeout: float = DEFAULT_MOVE_TIMEOUT,
) -> Bot:
    """A bot from a spec. Built-ins get ``rng``; ``cmd:`` starts the program (close it with :func:`close_bot`).

    Raises :class:`BotSpecError` for a bad spec, :class:`BotError` when the
    external program cannot be started or fails the handshake.
    """
    parsed = parse_bot_spec(spec) if isinstance(spec, str) else spec
    if parsed.name is not None:
        try:
            return make_bot(parsed.name, rng)
        except UnknownBot as e:
            raise BotSpecError(str(e)) from None
    return ExternalBot(parsed.argv, label=parsed.text, hello_timeout=hello_timeout, move_timeout=move_timeout)


def close_bot(bot: Bot) -> None:
    """Stop a bot that runs outside this process (a no-op for built-in bots)."""
    if isinstance(bot, ExternalBot):
        bot.close()


@contextmanager
def opened_bot(
    spec: str | BotSpec,
    rng: random.Random,
    *,
    hello_timeout: float = DEFAULT_HELLO_TIMEOUT,
    move_timeout: float = DEFAULT_MOVE_TIMEOUT,
) -> Iterator[Bot]:
    """``with opened_bot(spec, rng) as bot:`` — the bot, closed on the way out, whatever happens."""
    bot = bot_from_spec(spec, rng, hello_timeout=hello_timeout, move_timeout=move_timeout)
    try:
        yield bot
    finally:
        close_bot(bot)
