"""Helpers for the in-memory attack tests (the protocol's harness, no processes)."""

from __future__ import annotations

from collections.abc import Callable

from koikoi.testing import Pair


def step_until(pair: Pair, done: Callable[[], bool], limit: int = 100_000) -> None:
    """Step the pair (no clock) until ``done()``; an error if the match stops first or never gets there."""
    for _ in range(limit):
        if done():
            return
        if not pair.step():
            raise AssertionError("the match stopped before the point the test wanted")
    raise AssertionError("never reached")


def run_while_sending(pair: Pair, honest: int, send: Callable[[], None], every: float, until: float) -> None:
    """Let the match run on the clock, calling ``send()`` (what an awaited cheater sends instead of its move)
    every ``every`` seconds of protocol time, for ``until`` seconds or until the honest seat's match ends."""
    ask, t_end = pair.now, pair.now + until
    while pair.now < t_end and not pair.sessions[honest].is_finished:
        if pair.now >= ask:
            send()
            ask = pair.now + every
        if pair.step():
            continue
        pair.now = min(ask, pair.now + 1)
        pair.tick()
