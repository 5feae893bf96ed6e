from collections import Counter

import pytest

from koikoi.engine import CARD_IDS, CARDS, Kind, UnknownCard, card_from_id, cards_of, mask_of
from koikoi.engine.cards import AKATAN, AOTAN, LIGHTS, PLAINS, RIBBONS, TANE, Ribbon


def test_48_distinct_cards_four_per_month() -> None:
    assert len(CARDS) == 48
    assert len(set(CARD_IDS)) == 48
    assert Counter(c.month for c in CARDS) == {m: 4 for m in range(1, 13)}


def test_kinds_count_as_the_rules_say() -> None:
    kinds = Counter(c.kind for c in CARDS)
    assert kinds == {Kind.LIGHT: 5, Kind.TANE: 9, Kind.RIBBON: 10, Kind.PLAIN: 24}
    assert (LIGHTS | TANE | RIBBONS | PLAINS) == (1 << 48) - 1
    assert LIGHTS.bit_count() + TANE.bit_count() + RIBBONS.bit_count() + PLAINS.bit_count() == 48


def test_seed_image_names_and_special_cards() -> None:
    assert CARD_IDS[0] == "matsu_crane"
    assert CARD_IDS[-1] == "kiri_plain_2"
    assert CARDS[card_from_id("kiku_sake_cup")].kind is Kind.TANE
    assert CARDS[card_from_id("yanagi_lightning")].kind is Kind.PLAIN
    assert CARDS[card_from_id("kiri_plain_yellow")].kind is Kind.PLAIN
    assert CARDS[card_from_id("yanagi_rainman")].kind is Kind.LIGHT
    assert CARDS[card_from_id("ayame_bridge")].kind is Kind.TANE
    assert CARDS[card_from_id("yanagi_ribbon")].ribbon is Ribbon.PLAIN_RED
    assert {CARD_IDS[c] for c in cards_of(AKATAN)} == {"matsu_ribbon", "ume_ribbon", "sakura_ribbon"}
    assert {CARD_IDS[c] for c in cards_of(AOTAN)} == {"botan_ribbon", "kiku_ribbon", "momiji_ribbon"}
    assert CARDS[card_from_id("kiri_phoenix")].name_ja == "桐に鳳凰"
    assert CARDS[card_from_id("kiri_phoenix")].month == 12


def test_card_values_follow_kind() -> None:
    assert [c.value for c in CARDS[:4]] == [20, 5, 1, 1]


def test_unknown_card_names_nearest_ids() -> None:
    with pytest.raises(UnknownCard) as e:
        card_from_id("sakura_curtan")
    assert "sakura_curtain" in e.value.suggestions
    assert "sakura_curtan" in str(e.value)


def test_suggestions_ignore_case_and_name_a_month_or_a_last_word() -> None:
    for text, expected in [
        ("MATSU_CRANE", ("matsu_crane",)),
        ("Sakura Curtain", ("sakura_curtain",)),
        ("sakura", ("sakura_curtain", "sakura_ribbon", "sakura_plain_1", "sakura_plain_2")),
        ("moon", ("susuki_moon",)),
        ("", ()),
    ]:
        with pytest.raises(UnknownCard) as e:
            card_from_id(text)  # the engine's ids stay exact: suggestions only
        assert e.value.suggestions == expected, text
    with pytest.raises(UnknownCard) as e:
        card_from_id("KIKU_SAKE_CU")
    assert e.value.suggestions[0] == "kiku_sake_cup"


def test_masks_round_trip() -> None:
    cards = [0, 5, 17, 47]
    assert cards_of(mask_of(cards)) == cards
