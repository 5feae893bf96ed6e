"""The clock of the match's current wait, as one seat's match loop counts it.

The session says what the match waits for (:meth:`~koikoi.protocol.session.Session.wait`: its epoch and
its limit); :class:`WaitClock` keeps when (trio's clock) that wait began, and holds it still while a
connection is down — this seat's to the relay, or the opponent's (the relay's ``away``) — since what the
network could have caused is never a player's fault. The player's question and the board's clock read
their deadlines here.
"""

from __future__ import annotations

import time

import trio

from ..protocol.session import Wait

__all__ = ["WaitClock"]


class WaitClock:
    def __init__(self) -> None:
        self.epoch = -1
        self.started = 0.0
        """When (trio's clock) the current wait began, as this loop counts it (paused while a link is down)."""
        self.connected = False
        """This seat's connection to the relay is up."""
        self.peer_away = False
        """The relay said the opponent's connection is down (and not yet back)."""

    @property
    def paused(self) -> bool:
        return self.peer_away or not self.connected

    def restart(self) -> None:
        """The loop begins: no wait counted yet."""
        self.epoch, self.started = -1, trio.current_time()

    def track(self, w: Wait | None, now: float) -> None:
        """Before each turn of the loop (``now``: trio's clock): a new wait starts its count; a paused clock
        does not run."""
        if w is not None and w.epoch != self.epoch:
            self.epoch, self.started = w.epoch, now
        if self.paused:
            self.started = now  # the opponent's (or our) connection is down: the clock waits

    def elapsed(self) -> float:
        return trio.current_time() - self.started

    def left(self, limit: float | None) -> float | None:
        """Seconds left of ``limit`` for the current wait (None: no clock, or paused)."""
        if limit is None or self.paused:
            return None
        return self.started + limit - trio.current_time()

    def deadline(self, w: Wait | None) -> float | None:
        """When (``time.monotonic()``) the wait ``w``'s time runs out; None with no clock or paused."""
        left = self.left(w.limit) if w is not None else None
        return None if left is None else time.monotonic() + left
