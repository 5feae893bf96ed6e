"""Where the cards come from: the deal source.

The rules never shuffle. Each round they ask a :class:`DealSource` for the
deal (both hands, the table, and the deck in draw order). The seeded source
here derives everything from a 32-byte match seed with a shuffle specified
exactly in ``spec/rules.md``, so any implementation reproduces it. A later
mode that hides cards cryptographically (mental poker) plugs in by providing
another source whose deck reveals a card only when it is drawn.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final, NamedTuple, Protocol

from .cards import Card, four_of_a_month

__all__ = [
    "SHUFFLE_LABEL",
    "Deal",
    "DealSource",
    "SeededDeal",
    "deal_from_order",
    "needs_redeal",
    "round_key",
    "shuffle",
]

SHUFFLE_LABEL: Final = b"koikoi/shuffle/v1\x00"
FIRST_DEALER_LABEL = b"koikoi/first-dealer/v1\x00"


def shuffle(key: bytes) -> list[Card]:
    """The 48 cards in an order fixed by ``key``.

    Fisher–Yates from the last position down: for ``i`` = 47 … 1 draw ``j``
    uniform in ``0..i`` and swap positions ``i`` and ``j`` of the list
    ``[0, 1, …, 47]``. Each ``j`` comes from the next byte ``b`` of
    SHAKE-256(``SHUFFLE_LABEL`` ‖ key): with ``n = i + 1``, bytes ``b ≥ 256 −
    (256 mod n)`` are rejected (skipped), otherwise ``j = b mod n``.
    """
    full = SHUFFLE_LABEL + key
    size = 136
    while True:
        data = hashlib.shake_256(full).digest(size)
        deck = list(range(48))
        pos = 0
        ok = True
        for i in range(47, 0, -1):
            n = i + 1
            limit = 256 - 256 % n
            while True:
                if pos >= size:
                    ok = False
                    break
                b = data[pos]
                pos += 1
                if b < limit:
                    break
            if not ok:
                break
            j = b % n
            deck[i], deck[j] = deck[j], deck[i]
        if ok:
            return deck
        size *= 4  # more than `size` bytes were needed: start again with a longer stream


def round_key(match_seed: bytes, round_number: int, attempt: int) -> bytes:
    """The shuffle key of a round's deal: match seed ‖ round (2 bytes) ‖ attempt (2 bytes), big-endian."""
    return match_seed + round_number.to_bytes(2, "big") + attempt.to_bytes(2, "big")


class Deal(NamedTuple):
    """One deal, by role: the dealer's (oya's) hand, the other hand, the table, the deck.

    ``deck[0]`` is the first card drawn.
    """

    dealer_hand: int
    other_hand: int
    table: int
    deck: tuple[Card, ...]


def deal_from_order(order: Sequence[Card]) -> Deal:
    """Positions 0–7 to the dealer, 8–15 to the other player, 16–23 to the table, 24–47 the deck."""
    a = b = t = 0
    for i in range(8):
        a |= 1 << order[i]
        b |= 1 << order[8 + i]
        t |= 1 << order[16 + i]
    return Deal(a, b, t, tuple(order[24:48]))


def needs_redeal(table: int) -> bool:
    """True when all four cards of one month lie on the table (the only redeal)."""
    return four_of_a_month(table)


class DealSource(Protocol):
    """Gives the rules each deal. ``attempt`` counts redeals of one round from 0."""

    def deal(self, round_number: int, attempt: int) -> Deal: ...

    def first_dealer_cards(self, attempt: int) -> tuple[Card, Card]:
        """The cards each seat turns to pick the first dealer (games against the computer)."""
        ...


class SeededDeal:
    """The shared-seed deal: everything derived from a 32-byte match seed.

    Round ``r`` (from 1), attempt ``a`` (from 0): the deck order is
    ``shuffle(round_key(seed, r, a))``.
    """

    __slots__ = ("seed",)

    def __init__(self, seed: bytes) -> None:
        if not isinstance(seed, bytes) or len(seed) != 32:
            raise ValueError("a match seed is exactly 32 bytes")
        self.seed = seed

    def order(self, round_number: int, attempt: int) -> list[Card]:
        return shuffle(round_key(self.seed, round_number, attempt))

    def deal(self, round_number: int, attempt: int) -> Deal:
        return deal_from_order(self.order(round_number, attempt))

    def first_dealer_cards(self, attempt: int) -> tuple[Card, Card]:
        order = shuffle(FIRST_DEALER_LABEL + self.seed + attempt.to_bytes(2, "big"))
        return order[0], order[1]
