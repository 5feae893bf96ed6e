"""A bot never gets hidden information: it sees a SeatView, and nothing in it depends on hidden cards."""

from __future__ import annotations

import json
import random

from koikoi.client.external_bot import view_to_json
from koikoi.engine import CARD_IDS, Match, SeatView, SeededDeal, Settings
from koikoi.engine.actions import Action
from koikoi.engine.bots import make_bot
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
    """A deal source whose deals differ from another's only in cards one seat cannot see."""

    def __init__(self, base: SeededDeal, seat_is_dealer: bool, rng: random.Random) -> None:
        self.base = base
        self.seat_is_dealer = seat_is_dealer
        self.rng = rng

    def deal(self, round_number: int, attempt: int) -> Deal:
        d = self.base.deal(round_number, attempt)
        if round_number > 1:
            return d
        other = d.other_hand if self.seat_is_dealer else d.dealer_hand
        hidden = [c for c in range(48) if other >> c & 1] + list(d.deck)
        self.rng.shuffle(hidden)
        opp = sum(1 << c for c in hidden[:8])
        deck = tuple(hidden[8:])
        if self.seat_is_dealer:
            return Deal(d.dealer_hand, opp, d.table, deck)
        return Deal(opp, d.other_hand, d.table, deck)

    def first_dealer_cards(self, attempt: int) -> tuple[int, int]:
        return self.base.first_dealer_cards(attempt)


def test_strong_decision_does_not_depend_on_hidden_cards() -> None:
    """Same view, different hidden cards (other hand, deck order): same decision, same randomness."""
    decided = 0
    for g in range(40):
        base = SeededDeal(bytes([g, 7]) * 16)
        real = Match(Settings(), base, 0)
        if real.round != 1 or real.is_over:
            continue
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
