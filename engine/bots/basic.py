"""The baseline bots: ``random`` and ``greedy``."""

from __future__ import annotations

import random

from ..actions import Action, ActionKind
from ..cards import CARD_MONTH_MASK, CARDS, mask_of
from ..match import SeatView
from ..yaku import total_points

__all__ = ["GreedyBot", "RandomBot"]


class RandomBot:
    """Picks a legal action uniformly at random."""

    name = "random"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, view: SeatView) -> Action:
        acts = view.legal_actions
        return acts[int(self.rng.random() * len(acts))]


_VALUE = tuple(int(c.kind) for c in CARDS)


class GreedyBot:
    """Best immediate yaku progress.

    Plays the card whose capture raises its yaku points most, then captures
    the most valuable cards; with no capture it lets go of its least valuable
    card. It always takes the points (shōbu) when it has a yaku. Ties are
    broken at random.
    """

    name = "greedy"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, view: SeatView) -> Action:
        acts = view.legal_actions
        first = acts[0]
        if first.kind in (ActionKind.KOIKOI, ActionKind.SHOBU):
            for a in acts:
                if a.kind is ActionKind.SHOBU:
                    return a
        mine = mask_of(view.captures[view.seat])
        table = mask_of(view.table)
        base = total_points(mine)
        best: list[Action] = []
        best_score = -(10**9)
        for a in acts:
            score = self._score(a, view, mine, table, base)
            if score > best_score:
                best, best_score = [a], score
            elif score == best_score:
                best.append(a)
        return best[int(self.rng.random() * len(best))]

    @staticmethod
    def _score(a: Action, view: SeatView, mine: int, table: int, base: int) -> int:
        if a.kind is ActionKind.CHOOSE:
            assert view.pending_draw is not None
            taken = (1 << a.target) | (1 << view.pending_draw)
        else:
            c = a.card
            m = table & CARD_MONTH_MASK[c]
            if a.target >= 0:
                taken = (1 << c) | (1 << a.target)
            elif m:
                taken = (1 << c) | m
            else:
                return -_VALUE[c]  # lets go of a card: keep the valuable ones
        gain = total_points(mine | taken) - base
        value = sum(_VALUE[x] for x in range(48) if taken >> x & 1)
        return 1000 * gain + value
