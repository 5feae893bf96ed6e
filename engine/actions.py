"""Actions and their compact text notation.

Four kinds of action, each a preallocated singleton (compare with ``is`` or
``==``; they hash):

========================  =====================================================
text                      meaning
========================  =====================================================
``kiku_plain_1``          play this hand card (it captures its one or three
                          matches, or goes to the table when none)
``sakura_curtain*sakura_ribbon``  play a hand card and capture the named one of
                          its two matches
``*sakura_ribbon``        the drawn card matched two: capture this one
``koikoi`` / ``shobu``    the decision after a new yaku or a higher total
========================  =====================================================
"""

from __future__ import annotations

import enum

from ..errors import LocalError
from .cards import CARD_IDS, MONTH_OF, Card, UnknownCard, card_from_id

__all__ = ["CHOOSE", "KOIKOI", "PLAY", "PLAY_AT", "SHOBU", "Action", "ActionKind", "NotationError", "parse_action"]


class ActionKind(enum.IntEnum):
    PLAY = 0
    CHOOSE = 1
    KOIKOI = 2
    SHOBU = 3


class NotationError(LocalError, ValueError):
    """Text that is not an action in the compact notation."""


class Action:
    """One decision by the player to move. ``target`` is -1 when there is no choice."""

    __slots__ = ("card", "code", "kind", "target", "text")

    kind: ActionKind
    card: int
    target: int
    code: int
    text: str

    def __init__(self, kind: ActionKind, card: int = -1, target: int = -1) -> None:
        self.kind = kind
        self.card = card
        self.target = target
        # code: 2 bits kind, 6 bits card, 6 bits target (63 = none). Stable on the wire.
        self.code = (int(kind) << 12) | ((card & 63) << 6) | (target & 63)
        if kind is ActionKind.PLAY:
            self.text = CARD_IDS[card] + ("" if target < 0 else "*" + CARD_IDS[target])
        elif kind is ActionKind.CHOOSE:
            self.text = "*" + CARD_IDS[target]
        elif kind is ActionKind.KOIKOI:
            self.text = "koikoi"
        else:
            self.text = "shobu"

    def __repr__(self) -> str:
        return f"Action({self.text!r})"

    def __str__(self) -> str:
        return self.text

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (from_code, (self.code,))

    @property
    def is_play(self) -> bool:
        return self.kind is ActionKind.PLAY


PLAY: tuple[Action, ...] = tuple(Action(ActionKind.PLAY, c) for c in range(48))
PLAY_AT: tuple[tuple[Action | None, ...], ...] = tuple(
    tuple(Action(ActionKind.PLAY, c, t) if MONTH_OF[t] == MONTH_OF[c] and t != c else None for t in range(48))
    for c in range(48)
)
CHOOSE: tuple[Action, ...] = tuple(Action(ActionKind.CHOOSE, -1, t) for t in range(48))
KOIKOI = Action(ActionKind.KOIKOI)
SHOBU = Action(ActionKind.SHOBU)

_BY_CODE: dict[int, Action] = {a.code: a for a in (*PLAY, *CHOOSE, KOIKOI, SHOBU)}
for _row in PLAY_AT:
    for _a in _row:
        if _a is not None:
            _BY_CODE[_a.code] = _a
_BY_TEXT: dict[str, Action] = {a.text: a for a in _BY_CODE.values()}


def from_code(code: int) -> Action:
    """The action with this wire code."""
    try:
        return _BY_CODE[code]
    except (KeyError, TypeError):
        raise NotationError(f"no action has code {code!r}") from None


def parse_action(text: str) -> Action:
    """Parse the compact notation (see the module docstring)."""
    t = text.strip()
    try:
        return _BY_TEXT[t]
    except KeyError:
        pass
    # Name the part that is wrong.
    if t in ("koikoi", "koi-koi", "shobu", "shōbu"):
        return KOIKOI if t.startswith("koi") else SHOBU
    parts = t.split("*")
    try:
        cards: list[Card] = [card_from_id(p) for p in parts if p]
    except UnknownCard as e:
        raise NotationError(str(e)) from None
    if len(parts) == 2 and len(cards) == 2:
        raise NotationError(f"{parts[1]} is not of the same month as {parts[0]}: no such capture")
    raise NotationError(f"not an action: {text!r} (expected CARD, CARD*TARGET, *TARGET, koikoi or shobu)")
