"""Argument types shared by the subcommands: each rejects bad input with a message naming it."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["seconds", "whole_number"]


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
