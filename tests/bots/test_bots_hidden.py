"""A bot never gets hidden information: it sees a SeatView, and nothing in it depends on hidden cards."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest

from koikoi.client.external_bot import view_to_json
from koikoi.engine import CARD_IDS, Match, SeatView, SeededDeal, Settings
from koikoi.engine.actions import SHOBU, Action, ActionKind
from koikoi.engine.bots import make_bot
from koikoi.engine.bots.master import MasterBot
from koikoi.engine.bots.strong import StrongBot
from koikoi.engine.deal import Deal


class _Spy:
    """Records what a bot is given."""

    name = "spy"

    def __init__(self) -> None:
        self.rng = random.Random(0)
        self.given: list[object] = []

    def choose(self, view: SeatView) -> Action:
        self.given.append(view)
        return view.legal_actions[int(self.rng.random() * len(view.legal_actions))]


def test_bots_are_handed_views_only() -> None:
    from koikoi.engine.selfplay import play_match

    spies = [_Spy(), _Spy()]
    play_match(Settings(), spies, bytes(32))
    for seat, spy in enumerate(spies):
        assert spy.given
        for v in spy.given:
            assert type(v) is SeatView and v.seat == seat
            assert not any(isinstance(getattr(v, name), Match) for name in SeatView.FIELDS)


def _visible(view: SeatView) -> set[str]:
    cards = set(view.hand) | set(view.table) | set(view.captures[0]) | set(view.captures[1])
    if view.pending_draw is not None:
        cards.add(view.pending_draw)
    return {CARD_IDS[c] for c in cards}


def test_the_protocol_view_names_only_visible_cards() -> None:
    for g in range(10):
        m = Match(Settings(), SeededDeal(bytes([g]) * 32), g % 2)
        rng = random.Random(g)
        while not m.is_over:
            seat = m.to_move
            view = m.view(seat)
            text = json.dumps(view_to_json(view))
            visible = _visible(view)
            hidden = {CARD_IDS[c] for c in range(48)} - visible
            mentioned = {cid for cid in CARD_IDS if f'"{cid}"' in text}
            # round history may name yaku ids, never card ids; only visible cards appear
            assert mentioned <= visible, mentioned & hidden
            acts = m.legal_actions()
            m.apply(acts[int(rng.random() * len(acts))])


class _Swapped:
    """A deal source whose round-1 deal differs from another's only in cards one seat cannot see.

    The other hand and the deck are permuted, except ``keep``: cards that stay where they are
    (the ones a test's replayed turns play or draw).
    """

    def __init__(self, base: SeededDeal, seat_is_dealer: bool, rng: random.Random, keep: int = 0) -> None:
        self.base = base
        self.seat_is_dealer = seat_is_dealer
        self.rng = rng
        self.keep = keep

    def deal(self, round_number: int, attempt: int) -> Deal:
        d = self.base.deal(round_number, attempt)
        if round_number > 1:
            return d
        other = d.other_hand if self.seat_is_dealer else d.dealer_hand
        cards = [c for c in range(48) if other >> c & 1] + list(d.deck)
        free = [i for i, c in enumerate(cards) if not self.keep >> c & 1]
        moved = [cards[i] for i in free]
        self.rng.shuffle(moved)
        for i, c in zip(free, moved, strict=True):
            cards[i] = c
        n = other.bit_count()
        opp = sum(1 << c for c in cards[:n])
        deck = tuple(cards[n:])
        if self.seat_is_dealer:
            return Deal(d.dealer_hand, opp, d.table, deck)
        return Deal(opp, d.other_hand, d.table, deck)

    def first_dealer_cards(self, attempt: int) -> tuple[int, int]:
        return self.base.first_dealer_cards(attempt)


def _round_one_deals(salt: int, n: int) -> Iterator[tuple[int, SeededDeal, Match]]:
    """Of ``n`` seeded matches (seat 0 deals), those whose round 1 is played (no hand yaku at the deal)."""
    for g in range(n):
        base = SeededDeal(bytes([g, salt]) * 16)
        first = Match(Settings(), base, 0)
        if first.round == 1 and not first.is_over:
            yield g, base, first


def test_strong_decision_does_not_depend_on_hidden_cards() -> None:
    """Same view, different hidden cards (other hand, deck order): same decision, same randomness."""
    decided = 0
    for _, base, _ in _round_one_deals(7, 40):
        views = []
        for k in range(3):
            src = base if k == 0 else _Swapped(base, True, random.Random(k))
            m = Match(Settings(), src, 0)
            if m.round != 1 or m.is_over:
                break
            views.append(m.view(0))
        if len(views) < 3:
            continue
        for v in views[1:]:
            assert v == views[0]
        picks = {StrongBot(random.Random(5), rollouts=40).choose(v).text for v in views}
        assert len(picks) == 1
        decided += 1
        greedy = {make_bot("greedy", random.Random(5)).choose(v).text for v in views}
        assert len(greedy) == 1
    assert decided >= 20


def _touched(m: Match, turns: int, actions: list[Action]) -> int:
    """Play ``turns`` decisions by ``actions`` (chosen now, replayed later); the cards that came into sight."""
    seen = 0
    for _ in range(turns):
        if m.is_over or m.round != 1:
            break
        v = m.view(m.to_move)
        a = v.legal_actions[0] if v.legal_actions[0].kind is not ActionKind.KOIKOI else SHOBU
        actions.append(a)
        m.apply(a)
        seen |= m.table | m.captures(0) | m.captures(1)
    return seen


@pytest.mark.parametrize("explore", [None, 0.35])
def test_decisions_read_only_the_view(explore: float | None) -> None:
    """The same views (several decisions, so the opponent model and its reading have state), different hidden
    cards (the opponent's unplayed cards and the undrawn deck): the same decisions, from the same seed; flat
    and with the search tree below each action."""
    compared = 0
    for g, base, first in _round_one_deals(9, 30):
        actions: list[Action] = []
        keep = _touched(first, 9, actions) | first.hand(0)
        picks: list[list[str]] = []
        views: list[list[SeatView]] = []
        for k in range(8):
            src = base if k == 0 else _Swapped(base, True, random.Random(k), keep)
            m = Match(Settings(), src, 0)
            if m.round != 1:
                continue  # the permuted hand holds a hand yaku: the round is over before it starts
            if k and m.hand(1) == Match(Settings(), base, 0).hand(1):
                continue  # nothing moved into the other hand
            bot = MasterBot(random.Random(g), rollouts=60, decide_rollouts=30, explore=explore)
            mine: list[str] = []
            seen: list[SeatView] = []
            for a in actions:
                if m.to_move == 0:
                    v = m.view(0)
                    seen.append(v)
                    mine.append(bot.choose(v).text)  # the bot decides; the replayed action is played
                m.apply(a)
            picks.append(mine)
            views.append(seen)
            if len(picks) == 3:
                break
        if len(picks) < 3:
            continue
        assert views[1] == views[0] and views[2] == views[0]
        assert picks[1] == picks[0] and picks[2] == picks[0]
        compared += len(picks[0])
    assert compared >= 60
