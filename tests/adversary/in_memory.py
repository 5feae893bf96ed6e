"""Helpers for the in-memory attack tests (the protocol's harness, no processes)."""

from __future__ import annotations

from collections.abc import Callable

from koikoi.protocol.harness import Pair


def step_until(pair: Pair, done: Callable[[], bool], limit: int = 100_000) -> None:
    """Step the pair (no clock) until ``done()``; an error if the match stops first or never gets there."""
    for _ in range(limit):
        if done():
            return
        if not pair.step():
            raise AssertionError("the match stopped before the point the test wanted")
    raise AssertionError("never reached")
