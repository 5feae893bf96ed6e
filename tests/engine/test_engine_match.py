"""The rules in play: crafted deals for every special case, and illegal actions."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from koikoi.engine import (
    CHOOSE,
    KOIKOI,
    PLAY,
    PLAY_AT,
    SHOBU,
    IllegalAction,
    Match,
    Phase,
    RoundEnd,
    SeatView,
    SeededDeal,
    Settings,
    Yaku,
    card_from_id,
    cards_of,
    deal_from_order,
    first_dealer_from_cards,
)
from koikoi.engine.deal import Deal
from koikoi.engine.events import Dealt, HandYaku, KoiKoi, MatchEnded, Redeal


def c(i: str) -> int:
    return card_from_id(i)


def order(dealer: Sequence[str], other: Sequence[str], table: Sequence[str], deck: Sequence[str] = ()) -> list[int]:
    """A full 48-card order: the named cards first, the rest of the deck in card order."""
    named = [c(x) for x in (*dealer, *other, *table, *deck)]
    assert len(dealer) == len(other) == len(table) == 8
    assert len(set(named)) == len(named)
    rest = [x for x in range(48) if x not in named]
    return named + rest


class ScriptedDeal:
    """Deals given per (round, attempt); falls back to a seeded deal."""

    def __init__(self, deals: dict[tuple[int, int], list[int]], fallback: bytes = bytes(32)) -> None:
        self.deals = deals
        self.fallback = SeededDeal(fallback)
        self.asked: list[tuple[int, int]] = []

    def deal(self, round_number: int, attempt: int) -> Deal:
        self.asked.append((round_number, attempt))
        o = self.deals.get((round_number, attempt))
        if o is None:
            return self.fallback.deal(round_number, attempt)
        return deal_from_order(o)

    def first_dealer_cards(self, attempt: int) -> tuple[int, int]:
        return self.fallback.first_dealer_cards(attempt)


def snapshot(m: Match) -> tuple[object, ...]:
    return (m.public_state(), m.hand(0), m.hand(1), len(m.log), tuple(m.history))


# A round in which every capture rule shows up, ending like the seed's example:
# Tsukimi, koi-koi, then Hanami, shobu: 10 x2 (8+) x2 (one call) = 40, paid 25.
DEALER = ["kiku_plain_1", "susuki_moon", "sakura_curtain", "botan_butterfly",
          "hagi_ribbon", "hagi_plain_1", "fuji_plain_1", "fuji_plain_2"]  # fmt: skip
OTHER = ["ayame_bridge", "ayame_ribbon", "momiji_deer", "momiji_ribbon",
         "ume_warbler", "kiri_plain_1", "fuji_cuckoo", "hagi_plain_2"]  # fmt: skip
TABLE = ["kiku_sake_cup", "susuki_plain_1", "sakura_ribbon", "sakura_plain_1",
         "botan_ribbon", "botan_plain_1", "botan_plain_2", "matsu_plain_1"]  # fmt: skip
DECK = ["sakura_plain_2", "kiri_plain_2", "yanagi_lightning", "ume_ribbon", "matsu_plain_2",
        "fuji_ribbon", "yanagi_swallow", "ayame_plain_2", "hagi_boar"]  # fmt: skip


def showcase() -> Match:
    return Match(Settings(rounds=6), ScriptedDeal({(1, 0): order(DEALER, OTHER, TABLE, DECK)}), first_dealer=0)


def test_whole_showcase_round() -> None:
    m = showcase()
    assert (m.phase, m.to_move, m.round, m.dealer) == (Phase.PLAY, 0, 1, 0)
    legal = m.legal_actions()
    # Free choice: every hand card may be played; the curtain must name which cherry card it takes.
    assert PLAY[c("hagi_ribbon")] in legal
    assert PLAY_AT[c("sakura_curtain")][c("sakura_ribbon")] in legal
    assert PLAY_AT[c("sakura_curtain")][c("sakura_plain_1")] in legal
    assert PLAY[c("sakura_curtain")] not in legal
    assert len(legal) == 9

    # T1: no match -> the card goes to the table; the drawn cherry matches two -> choose.
    m.apply(PLAY[c("hagi_ribbon")])
    assert m.table >> c("hagi_ribbon") & 1
    assert m.phase is Phase.CHOOSE and m.pending_draw == c("sakura_plain_2")
    assert m.legal_actions() == [CHOOSE[c("sakura_ribbon")], CHOOSE[c("sakura_plain_1")]]
    m.apply(CHOOSE[c("sakura_ribbon")])
    assert set(cards_of(m.captures(0))) == {c("sakura_plain_2"), c("sakura_ribbon")}
    assert (m.phase, m.to_move) == (Phase.PLAY, 1)

    # T2: other places ayame_bridge; kiri_plain_2 drawn to the table.
    m.apply(PLAY[c("ayame_bridge")])
    # T3: a match of three takes all four.
    m.apply(PLAY[c("botan_butterfly")])
    assert {c(x) for x in ("botan_butterfly", "botan_ribbon", "botan_plain_1", "botan_plain_2")} <= set(
        cards_of(m.captures(0))
    )
    # T4: other places ume_warbler, draws ume_ribbon which takes it.
    m.apply(PLAY[c("ume_warbler")])
    assert m.captures(1) == (1 << c("ume_warbler")) | (1 << c("ume_ribbon"))
    # T5: a card whose month is on the table must capture: kiku_plain_1 takes the sake cup.
    with pytest.raises(IllegalAction) as e:
        m.apply(PLAY_AT[c("kiku_plain_1")][c("kiku_plain_2")])  # type: ignore[arg-type]
    assert e.value.rule == "no_capture_choice"
    m.apply(PLAY[c("kiku_plain_1")])
    assert m.captures(0) >> c("kiku_sake_cup") & 1
    # T6
    m.apply(PLAY[c("momiji_deer")])
    # T7: the moon takes susuki_plain_1: Tsukimi (moon + sake cup) -> the koi-koi decision.
    m.apply(PLAY[c("susuki_moon")])
    assert (m.to_move, m.phase) == (0, Phase.DECIDE)
    assert m.legal_actions() == [KOIKOI, SHOBU]
    assert m.total(0) == 5
    assert [(y, p) for y, p in m.yaku(0)] == [(Yaku.TSUKIMI, 5)]
    assert m.shobu_breakdown(0).payment == 5
    assert m.called_total(0) == 0
    m.apply(KOIKOI)
    assert m.multiplier == 2 and m.to_move == 1
    assert m.called_total(0) == 5 and m.view(1).called_totals == (5, 0)
    # T8: other captures twice but makes no yaku: no decision, play passes.
    m.apply(PLAY[c("momiji_ribbon")])
    assert (m.phase, m.to_move) == (Phase.PLAY, 0)
    # T9: the curtain takes the last cherry: Hanami too -> total 10 > 5: decide again.
    m.apply(PLAY[c("sakura_curtain")])
    assert (m.phase, m.total(0)) == (Phase.DECIDE, 10)
    m.apply(SHOBU)
    r = m.history[-1]
    assert (r.end, r.winner, r.payment, r.points) == (RoundEnd.SHOBU, 0, 25, (50, 0))
    assert r.breakdown is not None
    assert (r.breakdown.base, r.breakdown.doubled, r.breakdown.multiplier, r.breakdown.score) == (10, True, 2, 40)
    # The loser is at 0: the match ends at once, in round 1 of 6.
    assert (m.is_over, m.winner, m.phase) == (True, 0, Phase.OVER)
    assert m.legal_actions() == []
    with pytest.raises(IllegalAction) as e:
        m.apply(SHOBU)
    assert e.value.rule == "match_over"


def test_illegal_actions_name_the_rule_and_change_nothing() -> None:
    m = showcase()
    before = snapshot(m)
    cases = [
        (PLAY[c("ayame_bridge")], "card_not_in_hand"),
        (PLAY[c("sakura_curtain")], "choose_capture"),
        (PLAY_AT[c("kiku_plain_1")][c("kiku_plain_2")], "no_capture_choice"),
        (KOIKOI, "play_a_card"),
        (CHOOSE[c("sakura_ribbon")], "play_a_card"),
    ]
    for action, rule in cases:
        with pytest.raises(IllegalAction) as e:
            m.apply(action)  # type: ignore[arg-type]
        assert e.value.rule == rule, action
        assert snapshot(m) == before
    with pytest.raises(IllegalAction) as e:
        m.apply(PLAY[c("hagi_ribbon")], seat=1)
    assert e.value.rule == "not_your_turn"
    assert snapshot(m) == before
    m.apply(PLAY[c("hagi_ribbon")])
    before = snapshot(m)
    for action, rule in [(PLAY[c("fuji_plain_1")], "choose_capture"), (CHOOSE[c("botan_ribbon")], "not_a_match")]:
        with pytest.raises(IllegalAction) as e:
            m.apply(action)
        assert e.value.rule == rule
        assert snapshot(m) == before


def test_redeal_when_four_of_a_month_land_on_the_table() -> None:
    four = ["susuki_moon", "susuki_geese", "susuki_plain_1", "susuki_plain_2"]
    bad = order([*DEALER[:1], "matsu_crane", "ume_plain_1", "fuji_cuckoo", "hagi_boar", "momiji_deer",
                 "yanagi_swallow", "kiri_phoenix"],
                ["ayame_bridge", "ayame_ribbon", "momiji_ribbon", "ume_warbler", "kiri_plain_1",
                 "fuji_plain_1", "hagi_plain_2", "matsu_ribbon"],
                [*four, "botan_ribbon", "botan_plain_1", "matsu_plain_1", "sakura_ribbon"])  # fmt: skip
    src = ScriptedDeal({(1, 0): bad, (1, 1): bad, (1, 2): order(DEALER, OTHER, TABLE, DECK)})
    m = Match(Settings(), src, first_dealer=1)
    assert src.asked[:3] == [(1, 0), (1, 1), (1, 2)]
    assert Redeal(1, 0) in m.log and Redeal(1, 1) in m.log
    assert m.round == 1  # a redeal is not a round
    assert m.hand(1) == sum(1 << c(x) for x in DEALER)  # seat 1 deals: the dealer's hand went to seat 1
    assert m.to_move == 1


def test_three_of_a_month_and_four_pairs_on_the_table_play_on() -> None:
    table = ["botan_ribbon", "botan_plain_1", "botan_plain_2", "matsu_plain_1",
             "matsu_crane", "ume_plain_1", "ume_ribbon", "kiri_plain_2"]  # fmt: skip
    dealer = ["kiku_plain_1", "susuki_moon", "sakura_curtain", "botan_butterfly",
              "hagi_ribbon", "hagi_plain_1", "fuji_plain_1", "yanagi_swallow"]  # fmt: skip
    other = ["ayame_bridge", "ayame_ribbon", "momiji_deer", "momiji_ribbon",
             "ume_warbler", "kiri_plain_1", "fuji_cuckoo", "hagi_plain_2"]  # fmt: skip
    m = Match(Settings(), ScriptedDeal({(1, 0): order(dealer, other, table)}), first_dealer=0)
    assert not any(isinstance(e, Redeal) for e in m.log)
    assert m.phase is Phase.PLAY


TESHI = ["sakura_curtain", "sakura_ribbon", "sakura_plain_1", "sakura_plain_2",
         "matsu_crane", "matsu_plain_1", "ume_warbler", "ume_plain_1"]  # fmt: skip
KUTTSUKI = ["fuji_cuckoo", "fuji_plain_1", "ayame_bridge", "ayame_plain_1",
            "kiku_sake_cup", "kiku_plain_1", "hagi_boar", "hagi_plain_1"]  # fmt: skip
PLAIN_HAND = ["botan_butterfly", "botan_ribbon", "momiji_deer", "yanagi_swallow",
              "kiri_phoenix", "susuki_moon", "fuji_ribbon", "ayame_ribbon"]  # fmt: skip
TABLE2 = ["matsu_ribbon", "ume_ribbon", "hagi_ribbon", "kiku_ribbon",
          "momiji_ribbon", "yanagi_ribbon", "kiri_plain_1", "susuki_geese"]  # fmt: skip


def test_teshi_ends_the_round_before_play_and_its_holder_deals_next() -> None:
    src = ScriptedDeal({(1, 0): order(PLAIN_HAND, TESHI, TABLE2)})
    m = Match(Settings(), src, first_dealer=0)
    r = m.history[0]
    assert (r.end, r.winner, r.payment, r.points) == (RoundEnd.HAND_YAKU, 1, 6, (19, 31))
    assert r.yaku == ((Yaku.TESHI, 6),)
    assert m.round == 2 and m.dealer == 1 and m.to_move == 1


def test_kuttsuki_for_the_dealer() -> None:
    m = Match(Settings(), ScriptedDeal({(1, 0): order(KUTTSUKI, PLAIN_HAND, TABLE2)}), first_dealer=1)
    r = m.history[0]
    assert (r.winner, r.yaku, r.payment) == (1, ((Yaku.KUTTSUKI, 6),), 6)
    assert m.dealer == 1


def test_both_hold_a_hand_yaku_the_dealers_counts() -> None:
    m = Match(Settings(), ScriptedDeal({(1, 0): order(KUTTSUKI, TESHI, TABLE2)}), first_dealer=0)
    r = m.history[0]
    assert (r.winner, r.yaku) == (0, ((Yaku.KUTTSUKI, 6),))
    assert sum(1 for e in m.log if isinstance(e, HandYaku)) == 1


def test_a_match_ends_early_when_a_pool_reaches_zero() -> None:
    # The dealer holds Teshi every round, keeps the deal, and takes 6, 6, 6, 6, then the last 1.
    deals = {(r, 0): order(TESHI, PLAIN_HAND, TABLE2) for r in range(1, 13)}
    m = Match(Settings(rounds=12, double_at_8=False), ScriptedDeal(deals), first_dealer=0)
    assert m.is_over and m.winner == 0
    assert [r.payment for r in m.history] == [6, 6, 6, 6, 1]
    assert m.points == [50, 0]
    assert len(m.history) == 5 and MatchEnded(0, (50, 0)) in m.log


def random_round_search(seeds: int = 400) -> tuple[int, int]:
    """Play always-koi-koi players over many seeds; check the last-turn rule and drawn
    rounds after a koi-koi wherever they occur, and count how often they did."""
    import random

    last_turn_decisions = 0
    drawn_after_call = 0
    for s in range(seeds):
        rng = random.Random(s)
        m = Match(Settings(rounds=6), SeededDeal(s.to_bytes(32, "big")), first_dealer=s % 2)
        while not m.is_over:
            legal = m.legal_actions()
            if m.phase is Phase.DECIDE and m.last_turn:
                assert legal == [SHOBU]
                before = snapshot(m)
                with pytest.raises(IllegalAction) as e:
                    m.apply(KOIKOI)
                assert e.value.rule == "last_turn_shobu_only"
                assert snapshot(m) == before
                last_turn_decisions += 1
                m.apply(SHOBU)
                continue
            rounds_before, points_before, dealer_before = len(m.history), tuple(m.points), m.dealer
            log_start = max(i for i, e in enumerate(m.log) if isinstance(e, Dealt))
            m.apply(KOIKOI if m.phase is Phase.DECIDE else rng.choice(legal))
            if len(m.history) > rounds_before:
                r = m.history[rounds_before]
                called = any(isinstance(e, KoiKoi) for e in m.log[log_start:])
                if r.end is RoundEnd.DRAWN and called:
                    drawn_after_call += 1
                    assert r.winner is None and r.payment == 0
                    assert r.points == points_before
                    # The same dealer deals again (the next round may itself have ended at once, by a hand yaku).
                    nxt = m.history[rounds_before + 1].dealer if len(m.history) > rounds_before + 1 else m.dealer
                    assert m.is_over or nxt == dealer_before
    return last_turn_decisions, drawn_after_call


def test_last_turn_offers_only_shobu_and_drawn_rounds_after_koikoi_pay_nothing() -> None:
    last, drawn = random_round_search()
    assert last > 0, "no last-turn decision met: widen the search"
    assert drawn > 0, "no drawn round after a koi-koi met: widen the search"


def test_first_dealer_by_turning_cards() -> None:
    assert first_dealer_from_cards(c("ume_warbler"), c("kiku_plain_1")) == 0  # earlier month deals
    assert first_dealer_from_cards(c("sakura_plain_1"), c("sakura_curtain")) == 1  # higher value in a month
    assert first_dealer_from_cards(c("sakura_plain_1"), c("sakura_plain_2")) is None  # turn again
    assert first_dealer_from_cards(c("kiri_plain_1"), c("kiri_plain_yellow")) is None


def test_views_hide_the_other_hand_and_the_deck() -> None:

    m = showcase()
    v = m.view(1)
    assert set(v.hand) == {c(x) for x in OTHER}
    assert v.opponent_hand_count == 8 and v.deck_count == 24
    assert v.legal_actions == ()  # not seat 1's turn
    hidden = {c(x) for x in DEALER} | set(m._deck)

    def walk(x: object) -> None:
        assert not isinstance(x, (Match, ScriptedDeal, SeededDeal)), "a view must not lead back to the match"
        if isinstance(x, (tuple, list)):
            for y in x:
                walk(y)

    for name in SeatView.FIELDS:
        walk(getattr(v, name))
    seen = set(v.hand) | set(v.table) | set(v.captures[0]) | set(v.captures[1])
    assert not seen & hidden
    v0 = m.view(0)
    assert set(v0.legal_actions) == set(m.legal_actions())


def test_from_view_rebuilds_the_same_position() -> None:
    m = showcase()
    for a in (PLAY[c("hagi_ribbon")], CHOOSE[c("sakura_ribbon")], PLAY[c("ayame_bridge")]):
        m.apply(a)
    v = m.view(0)
    deck = list(m._deck[m._deck_pos :])
    twin = Match.from_view(v, cards_of(m.hand(1)), deck, m.source)
    assert twin.state_hash() == m.state_hash()
    assert twin.legal_actions() == m.legal_actions()
    with pytest.raises(ValueError):
        Match.from_view(v, cards_of(m.hand(1))[:-1], deck, m.source)
    with pytest.raises(ValueError):
        Match.from_view(v, cards_of(m.hand(1)), [*deck[:-1], deck[0]], m.source)


def test_state_hash_covers_only_what_both_can_see() -> None:
    a = showcase()
    other = order(DEALER, ["ayame_bridge", "ayame_ribbon", "momiji_deer", "momiji_ribbon", "ume_warbler",
                           "kiri_plain_2", "fuji_cuckoo", "hagi_plain_2"], TABLE, [])  # fmt: skip
    b = Match(Settings(rounds=6), ScriptedDeal({(1, 0): other}), first_dealer=0)
    assert a.hand(1) != b.hand(1)
    assert a.state_hash() == b.state_hash()  # hidden cards differ, the public state does not
    a.apply(PLAY[c("hagi_ribbon")])
    assert a.state_hash() != b.state_hash()


def test_the_log_is_typed_events_that_compare_by_kind_and_value() -> None:
    from koikoi.engine import events as ev

    m = Match(Settings(), SeededDeal(bytes(32)), 0)
    while not m.is_over:
        m.apply(m.legal_actions()[0])
    kinds = {type(e) for e in m.log}
    assert {ev.Dealt, ev.Played, ev.Drawn, ev.RoundEnded, ev.MatchEnded} <= kinds
    assert ev.Played(0, 1, 2) == ev.Played(0, 1, 2) and hash(ev.Played(0, 1, 2)) == hash(ev.Played(0, 1, 2))
    assert ev.Played(0, 1, 2) != ev.Drawn(0, 1, 2) and ev.Played(0, 1, 2) != ev.Played(0, 1, 3)
    assert repr(ev.KoiKoi(1, 5)) == "KoiKoi(seat=1, total=5)"
    match ev.Played(0, 3, 4):
        case ev.Played(seat, card, taken):
            assert (seat, card, taken) == (0, 3, 4)
        case _:
            raise AssertionError("a Played event matches its own pattern")
    assert isinstance(m.log[-1], ev.MatchEnded) and m.log[-1].points == (m.points[0], m.points[1])


def test_a_view_is_a_snapshot_that_later_moves_do_not_change() -> None:
    m = Match(Settings(), SeededDeal(bytes(32)), 0)
    views = []
    fields = []
    while not m.is_over:
        v = m.view(m.to_move)
        views.append(v)
        fields.append({name: getattr(v, name) for name in SeatView.FIELDS})
        m.apply(v.legal_actions[-1])
    for v, before in zip(views, fields, strict=True):
        assert {name: getattr(v, name) for name in SeatView.FIELDS} == before
        assert v.hand_mask == sum(1 << c for c in v.hand) and v.table_mask == sum(1 << c for c in v.table)
        assert v.replace() == v and hash(v.replace()) == hash(v)
    w = views[3].replace(round=6, points=(10, 40))
    assert (w.round, w.points, w.hand) == (6, (10, 40), views[3].hand) and w != views[3]
    with pytest.raises(TypeError, match="no field 'colour'"):
        views[0].replace(colour=1)
