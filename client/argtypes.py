"""Argument types shared by the subcommands: each rejects bad input with a message naming it."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["MAX_MOVE_TIME_S", "move_time", "seconds", "whole_number"]


def whole_number(lo: int, hi: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``lo`` (to ``hi``, when given)."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if n < lo or (hi is not None and n > hi):
            raise argparse.ArgumentTypeError(
                f"must be {lo}..{hi}, not {n}" if hi is not None else f"must be {lo} or more, not {n}"
            )
        return n

    return parse


def seconds(text: str) -> float:
    """An argparse type: a number of seconds, more than 0 and finite."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not x > 0 or not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
    return x


MAX_MOVE_TIME_S = 86_400
"""The longest move time a room may have (a day; the relay's limit too)."""


def move_time(text: str) -> int:
    """An argparse type: ``--move-time SECONDS|none``: whole seconds for each move, 1 to a day, or
    ``none`` (no clock; 0 in the protocol and the relay)."""
    t = text.strip().lower()
    if t == "none":
        return 0
    try:
        n = int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"want whole seconds or none, not {text!r}") from None
    if n == 0:
        raise argparse.ArgumentTypeError("0 seconds: say none for a match without a clock")
    if not 0 < n <= MAX_MOVE_TIME_S:
        raise argparse.ArgumentTypeError(f"must be 1..{MAX_MOVE_TIME_S} seconds or none, not {n}")
    return n
