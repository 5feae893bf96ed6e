"""Who decides for this seat of a networked match: a bot, or a person (at the terminal's prompt or on the board).

:class:`LocalPlayer` asks for each decision in a worker thread (``trio.to_thread.run_sync``) so that the
network and the clock keep running, abandons the question when the match moves on, and posts what came of
it to the match loop's inbox: :class:`ActionChosen`, :class:`PlayerLeft` or :class:`BotFailed`. The
opponent is not here: what they do reaches the loop as frames, and the session judges them.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import trio

from ..engine.actions import Action
from ..engine.bots import Bot
from ..engine.match import SeatView
from ..protocol.session import Session, Wait
from .botspec import BotError, BotSpec, BotSpecError, bot_from_spec, close_bot
from .output import NetError
from .presentation import Presentation
from .seat_clock import WaitClock
from .tui import PlayerQuit
from .tuning import Tuning

__all__ = ["ActionChosen", "BotFailed", "LocalPlayer", "Player", "PlayerEvent", "PlayerLeft"]


@dataclass(frozen=True, slots=True)
class ActionChosen:
    """The player's decision for the wait ``epoch`` (ignored if the match has moved on)."""

    epoch: int
    action: Action


@dataclass(frozen=True, slots=True)
class PlayerLeft:
    """The person left the match (quit at a prompt, or the input ended)."""

    reason: str


@dataclass(frozen=True, slots=True)
class BotFailed:
    """The bot could not decide (it crashed, or its program misbehaved)."""

    reason: str


PlayerEvent = ActionChosen | PlayerLeft | BotFailed
"""What the player posts to the match loop."""


class Player(Protocol):
    """Who decides for this seat: a bot, or a person at the terminal (the table engineer's side).

    ``choose`` is called in a worker thread and may block (a person thinking); the loop keeps running
    the network and the clock meanwhile, and abandons the call when the match moves on. A player that
    shows a clock may also have ``set_clock(deadline, move_time_s)``, called before each of its
    decisions: ``deadline`` is the ``time.monotonic()`` value when its time for this decision runs out
    (None: no clock in this match, or the clock is paused while a connection is down); ``move_time_s``
    is the match's bound move time (0: no clock). After the deadline the opponent may win on time."""

    def choose(self, view: SeatView) -> Action: ...


class LocalPlayer:
    """This seat's player: the bot of ``bot_spec``, else the person the presentation's screens ask."""

    def __init__(
        self,
        bot_spec: BotSpec | None,
        screens: Presentation,
        clock: WaitClock,
        tuning: Tuning,
        inbox: trio.MemorySendChannel[PlayerEvent],
    ) -> None:
        self.bot_spec = bot_spec
        self.bot: Bot | None = None
        self.failure: str | None = None
        """Why this seat's player resigned when it failed (its bot's error, an illegal action), in words."""
        self._screens = screens
        self._clock = clock
        self._tuning = tuning
        self._inbox = inbox
        self._deciding: trio.CancelScope | None = None
        self._decision_epoch = -1

    def start(self) -> None:
        """Start the bot (a NetError ``bot_failed`` if it cannot)."""
        if self.bot_spec is not None:
            try:
                self.bot = bot_from_spec(self.bot_spec, random.Random(os.urandom(16)))
            except (BotError, BotSpecError) as e:
                raise NetError("bot_failed", f"the bot cannot start: {e}") from None

    @property
    def at_prompt(self) -> bool:
        """A person is being asked at the terminal's prompt (or on the board) now."""
        return self.bot is None and self._deciding is not None

    def maybe_decide(self, s: Session, nursery: trio.Nursery) -> None:
        """Ask for this seat's decision once per wait, when it is this seat's turn."""
        if not s.my_turn:
            return
        w = s.wait()
        assert w is not None
        if self._decision_epoch == w.epoch:
            return
        self._decision_epoch = w.epoch
        nursery.start_soon(self._decide, s.view(), w.epoch, s.wait)

    def cancel(self) -> None:
        """The match is over: the question (if any) is moot."""
        if self._deciding is not None:
            self._deciding.cancel()

    def close(self) -> None:
        if self.bot is not None:
            close_bot(self.bot)

    async def _decide(self, view: SeatView, epoch: int, wait: Callable[[], Wait | None]) -> None:
        with trio.CancelScope() as scope:
            self._deciding = scope
            screens = self._screens
            try:
                if self.bot is not None:
                    if self._tuning.bot_delay:
                        await trio.sleep(self._tuning.bot_delay)
                    action = await trio.to_thread.run_sync(self.bot.choose, view, abandon_on_cancel=True)
                elif screens.table is not None:
                    table = screens.table
                    deadline = self._clock.deadline(wait())
                    try:
                        action = await trio.to_thread.run_sync(table.choose, view, deadline, abandon_on_cancel=True)
                    except trio.Cancelled:
                        table.cancel()  # the match moved on: the question is moot
                        raise
                elif screens.board is not None:  # the board has gone mid-match: stop, keep the seat
                    raise PlayerQuit("interrupt")
                else:
                    assert screens.console is not None
                    player: Any = screens.console.player
                    deadline = self._clock.deadline(wait())
                    if hasattr(player, "set_clock"):
                        player.set_clock(deadline, screens.move_time())
                    elif deadline is not None:
                        left = max(0, round(deadline - time.monotonic()))
                        screens.out.say(screens.w("net_your_move", left=left))
                    action = await trio.to_thread.run_sync(player.choose, view, abandon_on_cancel=True)
            except PlayerQuit as q:
                if screens.table is not None and q.reason in ("superseded", "cancelled", "done"):
                    return  # the question was moot (another took its place), or the board is closing
                await self._inbox.send(PlayerLeft(q.reason))
            except BotError as e:
                await self._inbox.send(BotFailed(str(e)))
            except Exception as e:  # a bot's own bug: say so, never a traceback
                await self._inbox.send(BotFailed(f"{e.__class__.__name__}: {e}"))
            else:
                await self._inbox.send(ActionChosen(epoch, action))
            finally:
                if self._deciding is scope:
                    self._deciding = None
