"""The strong bot: determinized Monte Carlo search over the hidden cards.

The bot sees only its :class:`~koikoi.engine.match.SeatView`. For each
decision it samples *worlds*: the cards it cannot see (the opponent's hand and
the deck) dealt at random among the cards unaccounted for, which is exactly
what its seat knows. Each world becomes a full-information
:class:`~koikoi.engine.match.Match` through :meth:`Match.from_view`; the
candidate actions are played in copies of it and the round is rolled out to its
end by a fast greedy policy for both players (capture what scores, keep what is
worth keeping, take the points at once).

A rolled-out round is scored by what it means for the match, not by points:
the pools after the (capped) payment and the rounds left go through
:func:`~koikoi.engine.bots.value.match_value`, the chance of winning the match.
So the koi-koi decision weighs the expected gain of going on (a bigger yaku,
one more in the shared multiplier) against the risk that the opponent scores
first under that same multiplier, and it knows when a small sure win is worth
more (ahead in the last round, or with the opponent about to hit 0) or when
only a big one will do.

Play decisions use sequential halving over a fixed budget of rollouts, every
action evaluated on the same worlds (common random numbers). The budget is
counted in rollouts, never in time, and every random choice comes from the
``random.Random`` given, so a seeded self-play is reproducible.
"""

from __future__ import annotations

import random

from ..actions import CHOOSE, KOIKOI, PLAY, PLAY_AT, SHOBU, Action, ActionKind
from ..cards import Card
from ..deal import Deal, deal_from_order
from ..match import Match, SeatView
from ..yaku import count_round
from .playout import (
    Node,
    Root,
    Walk,
    calls_koikoi,
    deal_world,
    pick_play,
    pick_target,
    rollout_sum,
    value_after,
)

__all__ = ["StrongBot"]

# yaku) keeps that cheap and keeps the real deal source out of the search.
_NEXT_ORDER = (
    [m * 4 for m in range(8)]
    + [m * 4 + 1 for m in range(8)]
    + [m * 4 + 2 for m in range(8)]
    + [c for c in range(48) if c % 4 == 3 or c >= 32]
)
_NEXT_DEAL = deal_from_order(_NEXT_ORDER)


class _SearchDeal:
    """The deal source of determinized matches (see ``_NEXT_DEAL``)."""

    def deal(self, round_number: int, attempt: int) -> Deal:
        return _NEXT_DEAL

    def first_dealer_cards(self, attempt: int) -> tuple[Card, Card]:
        return (0, 4)


_SEARCH_DEAL = _SearchDeal()


def _rollout_action(
    m: Match,
    rng: random.Random,
    call: tuple[float, float] | None = None,
    root: Root | None = None,
    walk: Walk | None = None,
) -> Action:
    """The rollout policy as an action on a :class:`Match` (the reference for the fast playout).

    ``call`` and ``root`` (the searched position): the koi-koi policy; ``walk``: the tree's plays, as in
    :func:`simulate`.
    """
    ph = m.phase
    p = m.to_move
    if ph == 0:  # PLAY
        if walk is not None:
            c, t = walk.play(p, m.hand(p), m.table, m.captures(p))
        else:
            c, t = pick_play(m.hand(p), m.table, m.captures(p), rng)
        if t < 0:
            return PLAY[c]
        act = PLAY_AT[c][t]
        assert act is not None
        return act
    if ph == 1:  # CHOOSE
        d = m.pending_draw
        assert d is not None
        return CHOOSE[pick_target(d, m.table, m.captures(p), rng)]
    if call is not None and root is not None and KOIKOI in m.legal_actions():
        if calls_koikoi(root, p, m.total(p), m.multiplier, call[p], m.hand(p).bit_count(), rng):
            return KOIKOI
    return SHOBU


def _round_value(m: Match, me: int, rounds: int) -> float:
    """The value for ``me`` of the round that just ended (the last entry of ``m.history``)."""
    res = m.history[-1]
    dealer = res.dealer if res.winner is None else res.winner
    return value_after(res.points[me], res.round, rounds, dealer == me)


def _playout_reference(
    m: Match,
    me: int,
    rounds: int,
    rng: random.Random,
    call: tuple[float, float] | None = None,
    root: Root | None = None,
    walk: Walk | None = None,
) -> float:
    """Roll the round out to its end through the rules engine (slow; tests check ``simulate`` against it)."""
    hist = m.history
    n = len(hist)
    while len(hist) == n:
        m.apply(_rollout_action(m, rng, call, root, walk))
    return _round_value(m, me, rounds)


def _root_of(view: SeatView) -> Root:
    hand = sum(1 << c for c in view.hand)
    table = sum(1 << c for c in view.table)
    caps = (sum(1 << c for c in view.captures[0]), sum(1 << c for c in view.captures[1]))
    pending = -1 if view.pending_draw is None else view.pending_draw
    known = hand | table | caps[0] | caps[1] | (0 if pending < 0 else 1 << pending)
    return Root(
        me=view.seat,
        hand=hand,
        table=table,
        caps=caps,
        to_move=view.to_move,
        phase=int(view.phase),
        pending=pending,
        called=view.called_totals,
        multiplier=view.multiplier,
        points=view.points,
        round=view.round,
        rounds=view.settings.rounds,
        dealer=view.dealer,
        double=view.settings.double_at_8,
        unseen=tuple(c for c in range(48) if not known >> c & 1),
        opponent_count=view.opponent_hand_count,
    )


class StrongBot:
    """Determinized Monte Carlo search with a match-aware evaluation.

    ``rollouts``: the budget of a play decision (spread over the actions by
    sequential halving); ``decide_rollouts``: the rollouts spent on going on
    (koi-koi) before comparing it with the sure value of shōbu.
    """

    name = "strong"

    def __init__(self, rng: random.Random, *, rollouts: int = 2400, decide_rollouts: int = 1200) -> None:
        self.rng = rng
        self.rollouts = rollouts
        self.decide_rollouts = decide_rollouts
        self.explore: float | None = None  # a tree below each action (see rollout_sum); None: flat Monte Carlo
        self.model_opponent = False  # in the tree, the opponent plays the rollout policy (see Walk)

    # -- worlds ------------------------------------------------------------

    def _sample(self, root: Root) -> tuple[int, tuple[Card, ...]]:
        """A world: the cards this seat cannot see dealt at random (the other hand, the deck order)."""
        return deal_world(root.unseen, root.opponent_count, self.rng)

    def sample_world(self, view: SeatView) -> tuple[Match, tuple[Card, ...]]:
        """A world as a full-information :class:`Match` (what the search plays on, for tests and tools)."""
        root = _root_of(view)
        opp, deck = self._sample(root)
        return Match.from_view(view, [c for c in range(48) if opp >> c & 1], deck, _SEARCH_DEAL), deck

    # -- decisions -----------------------------------------------------------

    def _call_policy(self, view: SeatView) -> tuple[float, float] | None:
        """The rollouts' koi-koi policy (see :func:`simulate`): here, both players take the points at once."""
        return None

    def choose(self, view: SeatView) -> Action:
        acts = view.legal_actions
        if len(acts) == 1:
            return acts[0]
        if acts[0].kind in (ActionKind.KOIKOI, ActionKind.SHOBU):
            return self._decide(view)
        return self._search(view, list(acts), self.rollouts)

    def _shobu_value(self, view: SeatView) -> float:
        me = view.seat
        bd = count_round(
            sum(1 << c for c in view.captures[me]),
            calls=view.calls[0] + view.calls[1],
            double_at_8=view.settings.double_at_8,
            loser_points=view.points[1 - me],
        )
        return value_after(view.points[me] + bd.payment, view.round, view.settings.rounds, True)

    def koikoi_values(self, view: SeatView, n: int) -> tuple[float, float]:
        """(value of shōbu, estimated value of koi-koi over ``n`` rollouts)."""
        koikoi = next(a for a in view.legal_actions if a.kind is ActionKind.KOIKOI)
        root = _root_of(view)
        call = self._call_policy(view)
        total = rollout_sum(
            root, [], self._sample, 0, n, koikoi, self.rng, call, Node(), self.explore, 0.0, model=self.model_opponent
        )
        return self._shobu_value(view), total / n

    def _decide(self, view: SeatView) -> Action:
        shobu, koikoi = self.koikoi_values(view, self.decide_rollouts)
        for a in view.legal_actions:
            if (a.kind is ActionKind.KOIKOI) == (koikoi > shobu):
                return a
        return view.legal_actions[0]

    def _search(self, view: SeatView, acts: list[Action], budget: int) -> Action:
        """Sequential halving: every action on the same worlds, the better half goes on."""
        root = _root_of(view)
        call = self._call_policy(view)
        worlds: list[tuple[int, tuple[Card, ...]]] = []
        trees = {a: Node() for a in acts}
        sums = {a: 0.0 for a in acts}
        counts = {a: 0 for a in acts}
        alive = acts
        stages = max(1, (len(acts) - 1).bit_length())
        while True:
            per = max(2, budget // (stages * len(alive)))
            for a in alive:
                start = counts[a]
                sums[a] = rollout_sum(
                    root,
                    worlds,
                    self._sample,
                    start,
                    start + per,
                    a,
                    self.rng,
                    call,
                    trees[a],
                    self.explore,
                    sums[a],
                    model=self.model_opponent,
                )
                counts[a] = start + per
            alive = sorted(alive, key=lambda a: sums[a] / counts[a], reverse=True)
            alive = alive[: (len(alive) + 1) // 2]
            if len(alive) == 1:
                return alive[0]
