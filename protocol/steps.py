"""The sealed deck's steps, as a fault or a format error names them: one :class:`Step` each (a
:class:`~enum.StrEnum` whose values are the strings the fault texts and the vectors' JSON show).

Pure data, importing nothing of koikoi, so the sealed deck (:mod:`koikoi.protocol.sealed`) and its line
(:mod:`koikoi.protocol.sealed_line`) can both name them.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Step"]


class Step(StrEnum):
    """Where a sealed fault (``SealedFault.step``) or a step of the wrong shape (``SealedFormatError.step``)
    was found: one of the deal's four steps, a turn of play (a play's or a draw's keys), a move's or a draw's
    body, or a disclosure."""

    SHUFFLE = "shuffle"
    SHUFFLE_LOCK = "shuffle_lock"
    LOCK = "lock"
    CLAIM = "claim"
    TURN = "turn"
    MOVE = "move"
    DRAW = "draw"
    DISCLOSE = "disclose"
