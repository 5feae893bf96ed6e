"""Hidden cards: a seat-side match, fed card by card, plays the same match as the full one.

``Match.for_seat`` knows only what its seat was shown (spec/rules.md, "Hidden cards"). Here a
shared-seed match is the dealer: each seat-side match gets its own hand and the table at every
deal attempt, the opponent's hand-yaku claim, every card the opponent plays and every card drawn,
and nothing else. After every step both seat-side matches must equal the full match (state hash,
events, the seat's view and legal actions) and each other, and hold no card they were not shown.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from koikoi.engine import (
    PLAY,
    IllegalAction,
    Match,
    Phase,
    SeededDeal,
    Settings,
    card_from_id,
    deal_from_order,
    hand_yaku,
)
from koikoi.engine.deal import Deal, DealSource
from koikoi.engine.events import Drawn, DrawnChoice, HandYaku, Redeal

ALL = (1 << 48) - 1


def phase(m: Match) -> Phase:
    """The phase now (a function, so the type checker does not keep an older reading)."""
    return m.phase


class Seat:
    """One seat-side match and every card it was shown."""

    def __init__(self, settings_: Settings, seat: int, first_dealer: int, source: DealSource) -> None:
        self.m = Match.for_seat(settings_, seat, first_dealer)
        self.seat = seat
        self.source = source
        self.shown = 0

    def deals(self) -> None:
        """Feed deal attempts and the opponent's claim until the match waits for a move."""
        m, me, opp = self.m, self.seat, 1 - self.seat
        while m.phase in (Phase.DEAL, Phase.CLAIM) and not m.is_over:
            attempt = sum(1 for e in m.log if isinstance(e, Redeal) and e.round == m.round)
            deal = self.source.deal(m.round, attempt)
            hands = {m.dealer: deal.dealer_hand, 1 - m.dealer: deal.other_hand}
            if m.phase is Phase.DEAL:
                self.shown |= hands[me] | deal.table
                m.begin_deal(hands[me], deal.table)
            else:
                shown = hands[opp] if hand_yaku(hands[opp]) is not None else None
                self.shown |= shown or 0
                m.claim_hand_yaku(opp, shown)

    def draw(self, full: Match) -> None:
        if self.m.phase is Phase.DRAW:
            card = next(e.card for e in reversed(full.log) if isinstance(e, (Drawn, DrawnChoice)))
            self.shown |= 1 << card
            self.m.reveal_draw(card)

    def check_hiding(self) -> None:
        """The match holds only cards it was shown: no other hand, no deck, no seed."""
        m = self.m
        held = m.hand(0) | m.hand(1) | m.table | m.captures(0) | m.captures(1)
        if m.pending_draw is not None:
            held |= 1 << m.pending_draw
        assert held & ~self.shown == 0
        assert m.hand(1 - self.seat) == 0 and m.hand_count(1 - self.seat) <= 8
        assert all(c < 0 for c in m._deck), "a seat-side match never holds the deck"
        for name in dir(m):  # every attribute, also of the compiled class (which has no __slots__)
            value = getattr(m, name)
            if not name.startswith("__") and not callable(value):
                assert not isinstance(value, (SeededDeal, bytes)), name


def check_same(full: Match, seats: list[Seat]) -> None:
    for s in seats:
        m = s.m
        assert m.state_hash() == full.state_hash()
        assert m.public_state() == full.public_state()
        assert m.log == full.log
        assert m.view(s.seat) == full.view(s.seat)
        if m.to_move == s.seat or m.phase is not Phase.PLAY:
            assert m.legal_actions() == full.legal_actions()
        else:
            assert m.legal_actions() == []  # the opponent's hand is unseen: its plays are not known
        s.check_hiding()


def play_through(source: DealSource, first_dealer: int, rng: random.Random, rules: Settings) -> Match:
    full = Match(rules, source, first_dealer)
    seats = [Seat(rules, 0, first_dealer, source), Seat(rules, 1, first_dealer, source)]
    for s in seats:
        s.deals()
    check_same(full, seats)
    while not full.is_over:
        legal = full.legal_actions()
        a = legal[int(rng.random() * len(legal))]
        mover = full.to_move
        full.apply(a)
        for s in seats:
            if a.kind is PLAY[0].kind and mover != s.seat:
                s.shown |= 1 << a.card
            s.m.apply(a, mover)
        if phase(seats[0].m) is Phase.DRAW:  # both wait for the same drawn card, in the same state
            assert phase(seats[1].m) is Phase.DRAW and seats[0].m.state_hash() == seats[1].m.state_hash()
        for s in seats:
            s.draw(full)
            s.deals()
        check_same(full, seats)
    return full


@settings(max_examples=60, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), choices=st.integers(0, 2**32), rounds=st.sampled_from([6, 12]))
def test_seat_side_matches_fed_card_by_card_equal_the_full_match(seed: bytes, choices: int, rounds: int) -> None:
    full = play_through(SeededDeal(seed), seed[0] % 2, random.Random(choices), Settings(rounds, True))
    assert full.is_over


class Crafted:
    """Round 1: a redeal, then the non-dealer holds Teshi (the dealer none). Round 2: the dealer holds
    Kuttsuki and the other Teshi (the dealer's wins). Later rounds: a seeded deal."""

    def __init__(self) -> None:
        self.fallback = SeededDeal(bytes(32))

    def deal(self, round_number: int, attempt: int) -> Deal:
        rest = list(range(48))
        if round_number == 1 and attempt == 0:  # all four pines on the table
            order = [*range(4, 20), 0, 1, 2, 3, *range(20, 24), *range(24, 48)]
            return deal_from_order(order)
        if round_number == 1:  # the other hand: four plums (Teshi); the dealer's: one of eight months
            dealer = [8 + 4 * k + 1 for k in range(8)]
            other = [4, 5, 6, 7, 0, 8, 12, 16]
            table = [1, 2, 20, 24, 28, 32, 36, 40]
            deck = [c for c in rest if c not in dealer + other + table]
            return deal_from_order([*dealer, *other, *table, *deck])
        if round_number == 2:  # the dealer: four pairs (Kuttsuki); the other: four cherries (Teshi)
            dealer = [0, 1, 4, 5, 12, 13, 16, 17]
            other = [8, 9, 10, 11, 20, 24, 28, 32]
            table = [2, 6, 14, 18, 21, 25, 29, 33]
            deck = [c for c in rest if c not in dealer + other + table]
            return deal_from_order([*dealer, *other, *table, *deck])
        return self.fallback.deal(round_number, attempt)

    def first_dealer_cards(self, attempt: int) -> tuple[int, int]:
        return (0, 4)


@pytest.mark.parametrize("first_dealer", [0, 1])
def test_redeals_and_hand_yaku_claims_through_the_seat_side(first_dealer: int) -> None:
    full = play_through(Crafted(), first_dealer, random.Random(7), Settings(6, True))
    kinds = [(type(e).__name__, getattr(e, "seat", None)) for e in full.log[:8]]
    other = 1 - first_dealer
    assert kinds[:3] == [("Redeal", None), ("Dealt", None), ("HandYaku", other)]
    hy = [e for e in full.log if isinstance(e, HandYaku)]
    assert [e.seat for e in hy[:2]] == [other, other]  # round 2's dealer is round 1's winner


def _start(seat: int = 0) -> tuple[Match, Match, Seat]:
    source = SeededDeal(bytes([3]) * 32)
    full = Match(Settings(), source, 0)
    s = Seat(Settings(), seat, 0, source)
    s.deals()
    return full, s.m, s


def test_illegal_reveals_are_refused_naming_the_rule_and_change_nothing() -> None:
    full, m, _ = _start(seat=0)
    assert m.phase is Phase.PLAY and m.to_move == 0
    before = (m.state_hash(), len(m.log))

    def refused(rule: str, call: object) -> None:
        with pytest.raises(IllegalAction) as e:
            assert callable(call)
            call()
        assert e.value.rule == rule, e.value
        assert (m.state_hash(), len(m.log)) == before

    table_card = (m.table & -m.table).bit_length() - 1
    own_card = (m.hand(0) & -m.hand(0)).bit_length() - 1
    refused("no_draw_due", lambda: m.reveal_draw(47))
    refused("no_deal_due", lambda: m.begin_deal(m.hand(0), m.table))
    refused("no_claim_due", lambda: m.claim_hand_yaku(1, None))
    refused("no_deal_due", lambda: full.begin_deal(full.hand(0), full.table))
    refused("no_draw_due", lambda: full.reveal_draw(47))
    # seat 0 plays; now the drawn card is due
    a = m.legal_actions()[0]
    full.apply(a)
    m.apply(a)
    assert phase(m) is Phase.DRAW and m.legal_actions() == []
    before = (m.state_hash(), len(m.log))
    refused("card_already_seen", lambda: m.reveal_draw(table_card if m.table >> table_card & 1 else own_card))
    refused("card_already_seen", lambda: m.reveal_draw(a.card))
    refused("not_a_card", lambda: m.reveal_draw(48))
    refused("waiting_for_cards", lambda: m.apply(a))
    drawn = next(e.card for e in reversed(full.log) if isinstance(e, (Drawn, DrawnChoice)))
    m.reveal_draw(drawn)
    assert m.state_hash() == full.state_hash()


def test_the_opponent_cannot_play_a_card_in_sight() -> None:
    _, m, _ = _start(seat=1)  # seat 0 deals and moves first; seat 1 cannot see its hand
    assert m.to_move == 0 and m.legal_actions() == []
    before = (m.state_hash(), len(m.log))
    for c in (m.hand(1) & -m.hand(1)).bit_length() - 1, (m.table & -m.table).bit_length() - 1:
        with pytest.raises(IllegalAction) as e:
            m.apply(PLAY[c], 0)
        assert e.value.rule in ("card_already_seen", "choose_capture"), e.value
        assert (m.state_hash(), len(m.log)) == before
    own = (m.hand(1) & -m.hand(1)).bit_length() - 1
    with pytest.raises(IllegalAction, match="card_already_seen"):
        m.apply(PLAY[own], 0)


def test_bad_deals_and_false_claims_are_refused() -> None:
    m = Match.for_seat(Settings(), 1, 0)  # seat 1 does not deal: it waits for the dealer's claim
    pine = [card_from_id(x) for x in ("matsu_crane", "matsu_ribbon", "matsu_plain_1", "matsu_plain_2")]
    with pytest.raises(IllegalAction, match="bad_deal"):
        m.begin_deal(0b1111111, 0xFF << 8)
    with pytest.raises(IllegalAction, match="bad_deal"):
        m.begin_deal(0xFF, 0xFF << 7)
    with pytest.raises(IllegalAction, match="not_a_card"):
        m.begin_deal(0xFF << 44, 0xFF << 8)
    hand = sum(1 << c for c in range(16, 24))
    table = sum(1 << c for c in (4, 8, 12, 24, 28, 32, 36, 40))
    m.begin_deal(hand, table)
    assert m.phase is Phase.CLAIM
    with pytest.raises(IllegalAction, match="no_claim_due"):
        m.claim_hand_yaku(1, None)  # its own hand claims by itself
    with pytest.raises(IllegalAction, match="false_hand_yaku"):
        m.claim_hand_yaku(0, sum(1 << c for c in (0, 5, 9, 13, 25, 29, 33, 37)))
    with pytest.raises(IllegalAction, match="card_already_seen"):
        m.claim_hand_yaku(0, sum(1 << c for c in (*pine, 4, 5, 6, 7)))  # 4 is on the table
    m.claim_hand_yaku(0, sum(1 << c for c in (*pine, 44, 45, 46, 47)))  # Teshi, shown: the dealer wins
    assert isinstance(m.log[-2], HandYaku) and m.log[-2].seat == 0
    assert phase(m) is Phase.DEAL
    assert m.round == 2 and m.hand(0) == 0
