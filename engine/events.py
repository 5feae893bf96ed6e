"""What happened in a match, as typed events: :attr:`Match.log <koikoi.engine.match.Match.log>`.

Each event is a small immutable value in the game's words. The log of a match
is the same on both seats (it holds only what both can see: a hand appears in
it only when it is shown for a hand-yaku claim), so narrators, the board and
``koikoi replay`` read it instead of the state.

=================  ==============================================================
event              meaning
=================  ==============================================================
``Dealt``           round ``round`` is dealt; ``dealer`` (oya) plays first
``Redeal``         deal attempt ``attempt`` put four of a month on the table
``HandYaku``       ``seat`` holds ``yaku`` in its dealt hand: the round ends
``Played``         ``seat`` played ``card``; ``taken`` (a mask, 0 = none) captured
``Drawn``          ``seat`` drew ``card``; ``taken`` captured (0: to the table)
``DrawnChoice``    ``seat`` drew ``card``, which matches two table cards
``Chosen``         ``seat`` captured ``taken`` with the drawn ``card`` it chose for
``KoiKoi``         ``seat`` called koi-koi at ``total`` points
``Shobu``          ``seat`` called shōbu at ``total`` points
``RoundEnded``     the round ended: ``result``
``MatchEnded``     the match is over: ``winner`` (None: a draw), ``points``
=================  ==============================================================

Events compare by kind and value and hash. Their attributes are ``Final``: the
type checker (and the compiled engine) refuse to change them. They are plain
classes rather than dataclasses because mypyc builds them ten times faster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Final, TypeAlias

from .yaku import Yaku

if TYPE_CHECKING:
    from .match import RoundResult

__all__ = [
    "Chosen",
    "Dealt",
    "Drawn",
    "DrawnChoice",
    "Event",
    "HandYaku",
    "KoiKoi",
    "MatchEnded",
    "Played",
    "Redeal",
    "RoundEnded",
    "Shobu",
]


class _Base:
    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def _values(self) -> tuple[object, ...]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and isinstance(other, _Base) and self._values() == other._values()

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._values()))

    def __repr__(self) -> str:
        names: tuple[str, ...] = type(self).__match_args__
        inner = ", ".join(f"{n}={v!r}" for n, v in zip(names, self._values(), strict=True))
        return f"{type(self).__name__}({inner})"


class Dealt(_Base):
    """Round ``round`` is dealt; ``dealer`` (oya) plays first."""

    __slots__ = ("dealer", "round")
    __match_args__: ClassVar[tuple[str, ...]] = ("round", "dealer")

    def __init__(self, round: int, dealer: int) -> None:
        self.round: Final = round
        self.dealer: Final = dealer

    def _values(self) -> tuple[object, ...]:
        return (self.round, self.dealer)


class Redeal(_Base):
    """Deal attempt ``attempt`` of round ``round`` put four cards of a month on the table."""

    __slots__ = ("attempt", "round")
    __match_args__: ClassVar[tuple[str, ...]] = ("round", "attempt")

    def __init__(self, round: int, attempt: int) -> None:
        self.round: Final = round
        self.attempt: Final = attempt

    def _values(self) -> tuple[object, ...]:
        return (self.round, self.attempt)


class HandYaku(_Base):
    """``seat`` holds ``yaku`` (Teshi or Kuttsuki) in its dealt hand ``hand`` (a mask): the round ends."""

    __slots__ = ("hand", "seat", "yaku")
    __match_args__: ClassVar[tuple[str, ...]] = ("seat", "yaku", "hand")

    def __init__(self, seat: int, yaku: Yaku, hand: int) -> None:
        self.seat: Final = seat
        self.yaku: Final = yaku
        self.hand: Final = hand

    def _values(self) -> tuple[object, ...]:
        return (self.seat, self.yaku, self.hand)


class Played(_Base):
    """``seat`` played ``card`` from its hand and captured ``taken`` (a mask; 0: it went to the table)."""

    __slots__ = ("card", "seat", "taken")
    __match_args__: ClassVar[tuple[str, ...]] = ("seat", "card", "taken")

    def __init__(self, seat: int, card: int, taken: int) -> None:
        self.seat: Final = seat
        self.card: Final = card
        self.taken: Final = taken

    def _values(self) -> tuple[object, ...]:
        return (self.seat, self.card, self.taken)


class Drawn(_Base):
    """``seat`` drew ``card`` from the deck and captured ``taken`` (a mask; 0: it went to the table)."""

    __slots__ = ("card", "seat", "taken")
    __match_args__: ClassVar[tuple[str, ...]] = ("seat", "card", "taken")

    def __init__(self, seat: int, card: int, taken: int) -> None:
        self.seat: Final = seat
        self.card: Final = card
        self.taken: Final = taken

    def _values(self) -> tuple[object, ...]:
        return (self.seat, self.card, self.taken)


class DrawnChoice(_Base):
    """``seat`` drew ``card``, which matches two table cards: ``seat`` chooses which to capture."""

    __slots__ = ("card", "seat")
    __match_args__: ClassVar[tuple[str, ...]] = ("seat", "card")

    def __init__(self, seat: int, card: int) -> None:
        self.seat: Final = seat
        self.card: Final = card

    def _values(self) -> tuple[object, ...]:
        return (self.seat, self.card)


class Chosen(_Base):
    """``seat`` captured ``taken`` (one card, as a mask) with the drawn ``card`` (after :class:`DrawnChoice`)."""

    __slots__ = ("card", "seat", "taken")
    __match_args__: ClassVar[tuple[str, ...]] = ("seat", "card", "taken")

    def __init__(self, seat: int, card: int, taken: int) -> None:
        self.seat: Final = seat
        self.card: Final = card
        self.taken: Final = taken

    def _values(self) -> tuple[object, ...]:
        return (self.seat, self.card, self.taken)


class KoiKoi(_Base):
    """``seat`` called koi-koi with yaku worth ``total`` points, and plays on."""

    __slots__ = ("seat", "total")
    __match_args__: ClassVar[tuple[str, ...]] = ("seat", "total")

    def __init__(self, seat: int, total: int) -> None:
        self.seat: Final = seat
        self.total: Final = total

    def _values(self) -> tuple[object, ...]:
        return (self.seat, self.total)


class Shobu(_Base):
    """``seat`` called shōbu with yaku worth ``total`` points: the round ends."""

    __slots__ = ("seat", "total")
    __match_args__: ClassVar[tuple[str, ...]] = ("seat", "total")

    def __init__(self, seat: int, total: int) -> None:
        self.seat: Final = seat
        self.total: Final = total

    def _values(self) -> tuple[object, ...]:
        return (self.seat, self.total)


class RoundEnded(_Base):
    """The round ended: ``result`` says how, who was paid, and the pools after it."""

    __slots__ = ("result",)
    __match_args__: ClassVar[tuple[str, ...]] = ("result",)

    def __init__(self, result: RoundResult) -> None:
        self.result: Final = result

    def _values(self) -> tuple[object, ...]:
        return (self.result,)


class MatchEnded(_Base):
    """The match is over: ``winner`` (None for a draw) and the final ``points``."""

    __slots__ = ("points", "winner")
    __match_args__: ClassVar[tuple[str, ...]] = ("winner", "points")

    def __init__(self, winner: int | None, points: tuple[int, int]) -> None:
        self.winner: Final = winner
        self.points: Final = points

    def _values(self) -> tuple[object, ...]:
        return (self.winner, self.points)


Event: TypeAlias = (
    Dealt | Redeal | HandYaku | Played | Drawn | DrawnChoice | Chosen | KoiKoi | Shobu | RoundEnded | MatchEnded
)
"""Any event of :attr:`Match.log <koikoi.engine.match.Match.log>`."""
