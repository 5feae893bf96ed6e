"""The search's playout: a round rolled out on bit masks by a fast greedy policy.

The strong and master bots spend nearly all their time here, so this module is
plain, fully typed Python with no class of its own but :class:`Root` (a tuple)
and no dependency beyond the engine's cards, yaku and the value table: mypyc
compiles it as it is (about three times faster; see ``setup.py``), and the
pure-Python module is the same code, byte for byte the same results.

:func:`simulate` plays one action in one world (the other hand, the deck
order) and rolls the round out to its end; the tests check it against the rules
engine (``Match.from_view`` and ``Match.apply``) with the same random numbers.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import NamedTuple

from ..actions import Action, ActionKind
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
from ..yaku import total_points
from .value import TOTAL_POINTS, final_value, match_value


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


def pick_play(
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


def pick_target(d: int, table: int, caps: int, rng: random.Random) -> int:
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


def value_after(points: int, round_number: int, rounds: int, i_deal: bool) -> float:
    """The value of having ``points`` after round ``round_number`` of ``rounds``."""
    left = rounds - round_number
    if points <= 0 or points >= 50 or left <= 0:
        return final_value(points)
    return match_value(points, left, i_deal)


def shuffle(cards: list[Card], rng: random.Random) -> None:
    """Shuffle ``cards`` in place (Fisher–Yates, one ``rng.random()`` a card but the first)."""
    rand = rng.random
    for i in range(len(cards) - 1, 0, -1):
        j = int(rand() * (i + 1))
        cards[i], cards[j] = cards[j], cards[i]


def deal_world(unseen: tuple[Card, ...], k: int, rng: random.Random) -> tuple[int, tuple[Card, ...]]:
    """A world: the ``unseen`` cards dealt at random, ``k`` to the other hand (a mask), the rest the deck order."""
    cards = list(unseen)
    shuffle(cards, rng)
    opp = 0
    for c in cards[:k]:
        opp |= 1 << c
    return opp, tuple(cards[k:])


def deal_world_avoiding(
    unseen: tuple[Card, ...], k: int, excluded: int, rng: random.Random
) -> tuple[int, tuple[Card, ...]] | None:
    """A world whose other hand holds none of the ``excluded`` cards (a mask); None if too few cards are left."""
    allowed = [c for c in unseen if not excluded >> c & 1]
    if len(allowed) < k:
        return None
    rand = rng.random
    for i in range(len(allowed) - 1, len(allowed) - 1 - k, -1):  # the hand: k of the allowed cards
        j = int(rand() * (i + 1))
        allowed[i], allowed[j] = allowed[j], allowed[i]
    opp = 0
    for c in allowed[len(allowed) - k :]:
        opp |= 1 << c
    rest = [c for c in unseen if not opp >> c & 1]
    shuffle(rest, rng)  # the deck: the rest, shuffled
    return opp, tuple(rest)


class Root(NamedTuple):
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


def simulate(
    root: Root,
    opp: int,
    deck: tuple[Card, ...],
    action: Action,
    rng: random.Random,
    call: tuple[float, float] | None = None,
    walk: Walk | None = None,
) -> float:
    """Play ``action`` in the world (``opp``: the other hand, ``deck``: the draw order) and roll
    the round out with the rollout policy; return what it is worth to the searching seat.

    ``call``: the koi-koi policy of the rollouts. None (the strong bot's): both
    players take the points at once. Otherwise ``call[s]`` is the chance that
    seat ``s`` calls koi-koi at a decision, except that a player whose shōbu
    would take all the loser's points takes them, and one whose shōbu in the
    last round would still leave it behind calls (see :func:`calls_koikoi`).

    This is the rules of a round on masks, without the engine's bookkeeping
    (log, views, breakdowns, the next deal): the tests check that it gives
    exactly what :meth:`Match.from_view`, :meth:`Match.apply` and
    :func:`_playout_reference` give, with the same random numbers. ``action``
    is not shōbu (its value needs no rollout).

    ``walk``: the plays after ``action`` come from a search tree (see
    :class:`Walk`) until it leaves the tree, then from the rollout policy.
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
            elif walk is not None and walk.inside:
                c, t = walk.play(p, hands[p], table, caps[p])
            else:
                c, t = pick_play(hands[p], table, caps[p], rng)
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
                taken = (1 << pick_target(d, table, caps[p], rng)) if mm.bit_count() == 2 else mm
                table ^= taken
                caps[p] |= taken | (1 << d)
                captured = True
            else:
                table |= 1 << d
        elif ph == 1:  # CHOOSE: the pending draw of the player to move
            t = force_t if force_t >= 0 else pick_target(pending, table, caps[p], rng)
            taken = 1 << t
            table ^= taken
            caps[p] |= taken | (1 << pending)
            captured = True
        if ph == 2 or captured:
            tot = total_points(caps[p])
            if tot > called[p]:  # the decision
                if (
                    call is None
                    or not (hands[0] or hands[1])
                    or not calls_koikoi(root, p, tot, mult, call[p], hands[p].bit_count(), rng)
                ):
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
        return value_after(points[me], root.round, root.rounds, root.dealer == me)
    score = tot * mult
    if root.double and tot >= 8:
        score *= 2
    pay = min(score, points[1 - winner])
    mine = points[me] + (pay if winner == me else -pay)
    return value_after(mine, root.round, root.rounds, winner == me)


_PIVOT_CARDS = 4.0


def calls_koikoi(root: Root, p: int, tot: int, mult: int, chance: float, left: int, rng: random.Random) -> bool:
    """The rollout policy's koi-koi decision for seat ``p`` (a call is allowed: not the last turn).

    ``left``: the cards left in ``p``'s hand. With none, ``p`` has no turn to come, so a call can only
    hand the round to the opponent or to a draw: never. Otherwise the player takes the points when they
    take everything the loser has left, calls when shobu in the last round would still leave it behind,
    and else calls with the chance ``chance * left / _PIVOT_CARDS`` (capped at 1): ``chance`` is the
    chance with ``_PIVOT_CARDS`` cards left, and the fewer turns remain, the less a call can gain.
    """
    if not left:
        return False
    score = tot * mult
    if root.double and tot >= 8:
        score *= 2
    points = root.points
    if score >= points[1 - p]:
        return False  # shobu takes everything the loser has left: the match is won
    if root.round >= root.rounds and (points[p] + score) * 2 < TOTAL_POINTS:
        return True  # the last round, and shobu still leaves p behind: only koi-koi can win
    return rng.random() * _PIVOT_CARDS < chance * left


class Node:
    """A node of the search tree below an action: the plays that led here, from every world alike.

    ``n`` and ``w``: the rollouts through it and the sum of their values (to the
    searching seat); ``avail``: the rollouts in which its play was legal (the
    opponent's plays depend on the hand each world deals it).
    """

    __slots__ = ("avail", "children", "n", "w")

    def __init__(self) -> None:
        self.children: dict[int, Node] = {}
        self.n = 0
        self.w = 0.0
        self.avail = 0


class Walk:
    """One rollout's way down the tree: information-set MCTS over the plays of both seats.

    Every world of the search shares the tree (a node is the sequence of plays,
    whatever the hidden cards were), so a node's statistics are over the
    worlds consistent with the seat's view. At a node each play legal in this
    world is chosen by UCB1 with availability counts (the seat to move
    maximizes its own value: the searching seat's ``w``, the other ``n - w``);
    a play never tried is tried first (at random among them), and below it the
    rollout policy plays on. The draws, the choice between two table cards
    and koi-koi are the rollout policy's in the tree too. ``rng`` is the
    rollout's own (the one :func:`simulate` is given): once the walk has left
    the tree, :func:`simulate` plays on with that one.

    ``model``: the other seat's plays in the tree are the rollout policy's (a
    model of the opponent instead of its best reply), each still a node of
    the tree, so the searching seat's later plays are searched below it.
    """

    __slots__ = ("explore", "inside", "me", "model", "node", "path", "rng")

    def __init__(self, node: Node, me: int, rng: random.Random, explore: float, model: bool = False) -> None:
        self.node = node
        self.me = me
        self.rng = rng
        self.explore = explore
        self.model = model
        self.path: list[Node] = [node]
        self.inside = True

    def play(self, p: int, hand: int, table: int, caps: int) -> tuple[int, int]:
        if not self.inside:
            return pick_play(hand, table, caps, self.rng)
        node = self.node
        kids = node.children
        if self.model and p != self.me:
            c, t = pick_play(hand, table, caps, self.rng)
            key = c * 64 + t + 1
            child = kids.get(key)
            if child is None:
                child = Node()
                kids[key] = child
            child.avail += 1
            self.node = child
            self.path.append(child)
            return c, t
        fresh: list[int] | None = None
        mine = p == self.me
        explore = self.explore
        best_key = -1
        best: Node = node
        best_score = -1e9
        month = _MONTH
        x = hand
        while x:  # the plays of the hand, each ``card * 64 + target + 1`` (-1: no choice), scored as it comes
            low = x & -x
            c = low.bit_length() - 1
            x ^= low
            mm = table & month[c]
            if mm.bit_count() == 2:
                a = mm & -mm
                key = c * 64 + a.bit_length()
                key2 = c * 64 + (mm ^ a).bit_length()
            else:
                key = c * 64
                key2 = -1
            while key >= 0:
                child = kids.get(key)
                if child is None:
                    if fresh is None:
                        fresh = [key]
                    else:
                        fresh.append(key)
                else:
                    child.avail += 1
                    if fresh is None:
                        mean = child.w / child.n
                        if not mine:
                            mean = 1.0 - mean
                        score = mean + explore * math.sqrt(math.log(child.avail) / child.n)
                        if score > best_score:
                            best_score = score
                            best_key = key
                            best = child
                key = key2
                key2 = -1
        if fresh is not None:
            key = fresh[int(self.rng.random() * len(fresh))]
            child = Node()
            child.avail = 1
            kids[key] = child
            self.path.append(child)
            self.inside = False
            return key >> 6, (key & 63) - 1
        self.node = best
        self.path.append(best)
        return best_key >> 6, (best_key & 63) - 1

    def backup(self, value: float) -> None:
        for node in self.path:
            node.n += 1
            node.w += value


def rollout_sum(
    root: Root,
    worlds: list[tuple[int, tuple[Card, ...]]],
    sample: Callable[[Root], tuple[int, tuple[Card, ...]]],
    start: int,
    stop: int,
    action: Action,
    rng: random.Random,
    call: tuple[float, float] | None,
    tree: Node,
    explore: float | None,
    total: float,
    model: bool = False,
) -> float:
    """``total`` plus the values of rollouts ``start`` to ``stop - 1`` of ``action``, rollout ``i`` in ``worlds[i]``.

    A world not yet in ``worlds`` is dealt by ``sample`` when its rollout comes (so the random numbers are
    drawn in the same order whatever the budget). ``explore``: the plays after ``action`` search ``tree``
    (see :class:`Walk`; ``model``: the other seat's plays there are the rollout policy's); None: the rollout
    policy plays them.
    """
    me = root.me
    for i in range(start, stop):
        while len(worlds) <= i:
            worlds.append(sample(root))
        opp, deck = worlds[i]
        if explore is None:
            total += simulate(root, opp, deck, action, rng, call)
        else:
            walk = Walk(tree, me, rng, explore, model)
            value = simulate(root, opp, deck, action, rng, call, walk)
            walk.backup(value)
            total += value
    return total
