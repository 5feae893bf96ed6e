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
from collections.abc import Callable
from typing import NamedTuple

from ..actions import CHOOSE, KOIKOI, PLAY, PLAY_AT, SHOBU, Action, ActionKind
from ..cards import (
    AKATAN,
    AOTAN,
    CARD_MONTH_MASK,
    INOSHIKACHO,
    LIGHTS,
    RAINMAN,
    RIBBONS,
    SAKE_CUP,
    TANE,
    Card,
)
from ..deal import Deal, deal_from_order
from ..match import Match, SeatView
from ..yaku import count_round, total_points
from .value import TOTAL_POINTS, final_value, match_value

__all__ = ["StrongBot"]


def _card_weight(c: int) -> int:
    bit = 1 << c
    if bit & RAINMAN:
        return 12
    if bit & LIGHTS:
        return 20
    if bit & SAKE_CUP:
        return 16
    if bit & INOSHIKACHO:
        return 12
    if bit & TANE:
        return 8
    if bit & (AKATAN | AOTAN):
        return 8
    if bit & RIBBONS:
        return 5
    return 1


_WEIGHT: tuple[int, ...] = tuple(_card_weight(c) for c in range(48))
_MONTH = CARD_MONTH_MASK
_CAPTURE_BONUS = 2
_GAIN_WEIGHT = 100


def _weight(mask: int) -> int:
    w = 0
    while mask:
        low = mask & -mask
        w += _WEIGHT[low.bit_length() - 1]
        mask ^= low
    return w


_SHIFT: tuple[int, ...] = tuple(4 * (c // 4) for c in range(48))


# The deal after the searched round: search never plays it, but the rules deal
# the next round as soon as one ends. A fixed, harmless deal (no redeal, no hand
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


def _capture_entry(c: int, nibble: int) -> tuple[int, int, int] | None:
    """What playing ``c`` takes when its month's table cards are ``nibble``: (target or -1, taken, weight)."""
    sh = _SHIFT[c]
    low = 1 << c
    mm = (nibble << sh) & ~low
    if not mm:
        return None
    t = -1
    if mm.bit_count() == 2:
        a = mm & -mm
        t1 = a.bit_length() - 1
        t2 = (mm ^ a).bit_length() - 1
        t = t1 if _WEIGHT[t1] >= _WEIGHT[t2] else t2
        taken = low | (1 << t)
    else:
        taken = low | mm
    return t, taken, _weight(taken) + _CAPTURE_BONUS


_CAPTURE: tuple[tuple[tuple[int, int, int] | None, ...], ...] = tuple(
    tuple(_capture_entry(c, n) for n in range(16)) for c in range(48)
)


def _pick_play(
    hand: int,
    table: int,
    caps: int,
    rng: random.Random,
    _capture: tuple[tuple[tuple[int, int, int] | None, ...], ...] = _CAPTURE,
    _shift: tuple[int, ...] = _SHIFT,
    _w: tuple[int, ...] = _WEIGHT,
    _points: Callable[[int], int] = total_points,
) -> tuple[int, int]:
    """The rollout policy's play: (card, capture target or -1).

    Greedy: the capture that raises the yaku points most, then the most
    valuable capture; with no capture, let go of the least valuable card.
    Ties are broken at random.
    """
    rand = rng.random
    base = -1
    best_c = -1
    best_t = -1
    best_score = -1e9
    x = hand
    while x:
        low = x & -x
        c = low.bit_length() - 1
        x ^= low
        e = _capture[c][(table >> _shift[c]) & 15]
        if e is None:
            s = rand() - _w[c]
            t = -1
        else:
            if base < 0:
                base = _points(caps)
            t, taken, wt = e
            s = _GAIN_WEIGHT * (_points(caps | taken) - base) + wt + rand()
        if s > best_score:
            best_score = s
            best_c = c
            best_t = t
    return best_c, best_t


def _pick_target(d: int, table: int, caps: int, rng: random.Random) -> int:
    """The rollout policy's capture when the drawn card ``d`` matches two table cards."""
    mm = table & _MONTH[d]
    a = mm & -mm
    t1 = a.bit_length() - 1
    t2 = (mm ^ a).bit_length() - 1
    caps |= 1 << d
    s1 = _GAIN_WEIGHT * total_points(caps | a) + _WEIGHT[t1]
    s2 = _GAIN_WEIGHT * total_points(caps | (mm ^ a)) + _WEIGHT[t2]
    if s1 == s2:
        return t1 if rng.random() < 0.5 else t2
    return t1 if s1 > s2 else t2


def _rollout_action(
    m: Match, rng: random.Random, call: tuple[float, float] | None = None, root: _Root | None = None
) -> Action:
    """The rollout policy as an action on a :class:`Match` (the reference for the fast playout).

    ``call`` and ``root`` (the searched position): the koi-koi policy, as in :func:`_simulate`.
    """
    ph = m.phase
    p = m.to_move
    if ph == 0:  # PLAY
        c, t = _pick_play(m.hand(p), m.table, m.captures(p), rng)
        if t < 0:
            return PLAY[c]
        act = PLAY_AT[c][t]
        assert act is not None
        return act
    if ph == 1:  # CHOOSE
        d = m.pending_draw
        assert d is not None
        return CHOOSE[_pick_target(d, m.table, m.captures(p), rng)]
    if call is not None and root is not None and KOIKOI in m.legal_actions():
        if _calls_koikoi(root, p, m.total(p), m.multiplier, call[p], rng):
            return KOIKOI
    return SHOBU


def _value_after(points: int, round_number: int, rounds: int, i_deal: bool) -> float:
    """The value of having ``points`` after round ``round_number`` of ``rounds``."""
    left = rounds - round_number
    if points <= 0 or points >= 50 or left <= 0:
        return final_value(points)
    return match_value(points, left, i_deal)


def _round_value(m: Match, me: int, rounds: int) -> float:
    """The value for ``me`` of the round that just ended (the last entry of ``m.history``)."""
    res = m.history[-1]
    dealer = res.dealer if res.winner is None else res.winner
    return _value_after(res.points[me], res.round, rounds, dealer == me)


def _playout_reference(
    m: Match,
    me: int,
    rounds: int,
    rng: random.Random,
    call: tuple[float, float] | None = None,
    root: _Root | None = None,
) -> float:
    """Roll the round out to its end through the rules engine (slow; tests check ``_simulate`` against it)."""
    hist = m.history
    n = len(hist)
    while len(hist) == n:
        m.apply(_rollout_action(m, rng, call, root))
    return _round_value(m, me, rounds)


class _Root(NamedTuple):
    """What the searched position fixes for every world (all of it from the seat's view)."""

    me: int
    hand: int
    table: int
    caps: tuple[int, int]
    to_move: int
    phase: int
    pending: int
    called: tuple[int, int]
    multiplier: int
    points: tuple[int, int]
    round: int
    rounds: int
    dealer: int
    double: bool
    unseen: tuple[Card, ...]
    opponent_count: int


def _root_of(view: SeatView) -> _Root:
    hand = sum(1 << c for c in view.hand)
    table = sum(1 << c for c in view.table)
    caps = (sum(1 << c for c in view.captures[0]), sum(1 << c for c in view.captures[1]))
    pending = -1 if view.pending_draw is None else view.pending_draw
    known = hand | table | caps[0] | caps[1] | (0 if pending < 0 else 1 << pending)
    return _Root(
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


def _simulate(
    root: _Root,
    opp: int,
    deck: tuple[Card, ...],
    action: Action,
    rng: random.Random,
    call: tuple[float, float] | None = None,
) -> float:
    """Play ``action`` in the world (``opp``: the other hand, ``deck``: the draw order) and roll
    the round out with the rollout policy; return what it is worth to the searching seat.

    ``call``: the koi-koi policy of the rollouts. None (the strong bot's): both
    players take the points at once. Otherwise ``call[s]`` is the chance that
    seat ``s`` calls koi-koi at a decision, except that a player whose shōbu
    would take all the loser's points takes them, and one whose shōbu in the
    last round would still leave it behind calls (see :func:`_calls_koikoi`).

    This is the rules of a round on masks, without the engine's bookkeeping
    (log, views, breakdowns, the next deal): the tests check that it gives
    exactly what :meth:`Match.from_view`, :meth:`Match.apply` and
    :func:`_playout_reference` give, with the same random numbers. ``action``
    is not shōbu (its value needs no rollout).
    """
    me = root.me
    hands = [0, 0]
    hands[me] = root.hand
    hands[1 - me] = opp
    table = root.table
    caps = list(root.caps)
    called = list(root.called)
    mult = root.multiplier
    p = root.to_move
    ph = root.phase
    pending = root.pending
    month = _MONTH
    pos = 0
    force_c = -1
    force_t = -1
    kind = action.kind
    if kind is ActionKind.KOIKOI:
        called[p] = total_points(caps[p])
        mult += 1
        p ^= 1
        ph = 0
    elif kind is ActionKind.PLAY:
        force_c = action.card
        force_t = action.target
    elif kind is ActionKind.CHOOSE:
        force_t = action.target
    winner = -1
    tot = 0
    while True:
        captured = False
        if ph == 0:  # PLAY: a hand card, then the top of the deck
            if force_c >= 0:
                c, t = force_c, force_t
                force_c = -1
            else:
                c, t = _pick_play(hands[p], table, caps[p], rng)
            bit = 1 << c
            hands[p] ^= bit
            mm = table & month[c]
            if mm:
                taken = (1 << t) if t >= 0 else mm
                table ^= taken
                caps[p] |= taken | bit
                captured = True
            else:
                table |= bit
            d = deck[pos]
            pos += 1
            mm = table & month[d]
            if mm:
                taken = (1 << _pick_target(d, table, caps[p], rng)) if mm.bit_count() == 2 else mm
                table ^= taken
                caps[p] |= taken | (1 << d)
                captured = True
            else:
                table |= 1 << d
        elif ph == 1:  # CHOOSE: the pending draw of the player to move
            t = force_t if force_t >= 0 else _pick_target(pending, table, caps[p], rng)
            taken = 1 << t
            table ^= taken
            caps[p] |= taken | (1 << pending)
            captured = True
        if ph == 2 or captured:
            tot = total_points(caps[p])
            if tot > called[p]:  # the decision
                if call is None or not (hands[0] or hands[1]) or not _calls_koikoi(root, p, tot, mult, call[p], rng):
                    winner = p
                    break
                called[p] = tot
                mult += 1
        if not (hands[0] or hands[1]):
            break  # a drawn round
        p ^= 1
        ph = 0
    points = root.points
    if winner < 0:
        return _value_after(points[me], root.round, root.rounds, root.dealer == me)
    score = tot * mult
    if root.double and tot >= 8:
        score *= 2
    pay = min(score, points[1 - winner])
    mine = points[me] + (pay if winner == me else -pay)
    return _value_after(mine, root.round, root.rounds, winner == me)


def _calls_koikoi(root: _Root, p: int, tot: int, mult: int, chance: float, rng: random.Random) -> bool:
    """The rollout policy's koi-koi decision for seat ``p`` (a call is allowed: not the last turn)."""
    score = tot * mult
    if root.double and tot >= 8:
        score *= 2
    points = root.points
    if score >= points[1 - p]:
        return False  # shobu takes everything the loser has left: the match is won
    if root.round >= root.rounds and (points[p] + score) * 2 < TOTAL_POINTS:
        return True  # the last round, and shobu still leaves p behind: only koi-koi can win
    return rng.random() < chance


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

    # -- worlds ------------------------------------------------------------

    def _sample(self, root: _Root) -> tuple[int, tuple[Card, ...]]:
        """A world: the cards this seat cannot see dealt at random (the other hand, the deck order)."""
        cards = list(root.unseen)
        rand = self.rng.random
        for i in range(len(cards) - 1, 0, -1):  # Fisher–Yates
            j = int(rand() * (i + 1))
            cards[i], cards[j] = cards[j], cards[i]
        k = root.opponent_count
        opp = 0
        for c in cards[:k]:
            opp |= 1 << c
        return opp, tuple(cards[k:])

    def sample_world(self, view: SeatView) -> tuple[Match, tuple[Card, ...]]:
        """A world as a full-information :class:`Match` (what the search plays on, for tests and tools)."""
        root = _root_of(view)
        opp, deck = self._sample(root)
        return Match.from_view(view, [c for c in range(48) if opp >> c & 1], deck, _SEARCH_DEAL), deck

    # -- decisions -----------------------------------------------------------

    def _call_policy(self, view: SeatView) -> tuple[float, float] | None:
        """The rollouts' koi-koi policy (see :func:`_simulate`): here, both players take the points at once."""
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
        return _value_after(view.points[me] + bd.payment, view.round, view.settings.rounds, True)

    def koikoi_values(self, view: SeatView, n: int) -> tuple[float, float]:
        """(value of shōbu, estimated value of koi-koi over ``n`` rollouts)."""
        koikoi = next(a for a in view.legal_actions if a.kind is ActionKind.KOIKOI)
        root = _root_of(view)
        rng = self.rng
        call = self._call_policy(view)
        total = 0.0
        for _ in range(n):
            opp, deck = self._sample(root)
            total += _simulate(root, opp, deck, koikoi, rng, call)
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
        rng = self.rng
        call = self._call_policy(view)
        worlds: list[tuple[int, tuple[Card, ...]]] = []
        sums = {a: 0.0 for a in acts}
        counts = {a: 0 for a in acts}
        alive = acts
        stages = max(1, (len(acts) - 1).bit_length())
        while True:
            per = max(2, budget // (stages * len(alive)))
            for a in alive:
                start = counts[a]
                for i in range(start, start + per):
                    while len(worlds) <= i:
                        worlds.append(self._sample(root))
                    opp, deck = worlds[i]
                    sums[a] += _simulate(root, opp, deck, a, rng, call)
                counts[a] = start + per
            alive = sorted(alive, key=lambda a: sums[a] / counts[a], reverse=True)
            alive = alive[: (len(alive) + 1) // 2]
            if len(alive) == 1:
                return alive[0]
