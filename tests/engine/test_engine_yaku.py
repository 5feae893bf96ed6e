"""Every worked example of the seeds, and the counting rules of this game against Nintendo's."""

import random

from hypothesis import given
from hypothesis import strategies as st

from koikoi.engine import Rules, Yaku, card_from_id, count_hand_yaku, count_round, hand_yaku, total_points, yaku_of
from koikoi.engine.cards import PLAINS, RIBBONS, TANE, cards_of


def m(*ids: str) -> int:
    return sum(1 << card_from_id(i) for i in ids)


def ids(ys: list[tuple[Yaku, int]]) -> dict[str, int]:
    return {y.value: p for y, p in ys}


LIGHTS5 = ("matsu_crane", "sakura_curtain", "susuki_moon", "yanagi_rainman", "kiri_phoenix")


def test_tsukimi_koikoi_then_hanami_two_calls_is_60_paid_25() -> None:
    # 003: "10 × 2 × 3 = 60, paid up to what your opponent has left".
    bd = count_round(m("sakura_curtain", "susuki_moon", "kiku_sake_cup"), calls=2)
    assert ids(list(bd.yaku)) == {"hanami": 5, "tsukimi": 5}
    assert (bd.base, bd.doubled, bd.multiplier, bd.score, bd.payment) == (10, True, 3, 60, 25)


def test_one_call_is_40_paid_as_25() -> None:
    # 002: 花見＋月見 10点, 8点以上 ×2, こいこい1回 ×2, 得点 40点, 支払い25点.
    bd = count_round(m("sakura_curtain", "susuki_moon", "kiku_sake_cup"), calls=1)
    assert (bd.score, bd.payment) == (40, 25)
    assert bd.to_json() == {
        "yaku": [{"id": "hanami", "points": 5}, {"id": "tsukimi", "points": 5}],
        "base": 10,
        "doubled": True,
        "multiplier": 2,
        "score": 40,
        "payment": 25,
    }


def test_twelve_points_left_losing_40_pays_12() -> None:
    bd = count_round(m("sakura_curtain", "susuki_moon", "kiku_sake_cup"), calls=1, loser_points=12)
    assert (bd.score, bd.payment, bd.cap) == (40, 12, 12)


def test_inoshikacho_with_two_more_tane_is_8_here_7_nintendo() -> None:
    cards = m("hagi_boar", "momiji_deer", "botan_butterfly", "ume_warbler", "fuji_cuckoo")
    game = count_round(cards, double_at_8=False)
    assert ids(list(game.yaku)) == {"inoshikacho": 7, "tane": 1}
    assert game.base == 8
    nin = count_round(cards, rules=Rules.NINTENDO)
    assert ids(list(nin.yaku)) == {"inoshikacho": 7}
    assert nin.base == 7
    # 8 is doubled here; 7 is doubled under Nintendo (x2 at 7+).
    assert count_round(cards).score == 16
    assert nin.score == 14


def test_nine_plains_and_the_sake_cup_make_kasu_only_under_nintendo() -> None:
    plains = cards_of(PLAINS)[:9]
    cards = sum(1 << c for c in plains) | m("kiku_sake_cup")
    assert count_round(cards).yaku == ()
    assert count_round(cards).base == 0
    assert ids(list(count_round(cards, rules=Rules.NINTENDO).yaku)) == {"kasu": 1}


def test_ame_shiko_7_is_not_doubled_here_but_is_under_nintendo() -> None:
    cards = m("matsu_crane", "sakura_curtain", "susuki_moon", "yanagi_rainman")
    bd = count_round(cards)
    assert ids(list(bd.yaku)) == {"ame_shiko": 7}
    assert (bd.doubled, bd.score) == (False, 7)
    assert count_round(cards, rules=Rules.NINTENDO).score == 14


def test_only_the_best_light_yaku_counts() -> None:
    assert ids(yaku_of(m(*LIGHTS5))) == {"goko": 10}
    assert ids(yaku_of(m("matsu_crane", "sakura_curtain", "susuki_moon", "kiri_phoenix"))) == {"shiko": 8}
    assert ids(yaku_of(m("matsu_crane", "sakura_curtain", "susuki_moon"))) == {"sanko": 5}
    assert yaku_of(m("yanagi_rainman", "matsu_crane", "sakura_curtain")) == []
    assert count_round(m(*LIGHTS5)).score == 20


def test_sake_cup_serves_hanami_tsukimi_and_tane_at_once() -> None:
    cards = m(
        "sakura_curtain", "susuki_moon", "kiku_sake_cup", "ume_warbler", "fuji_cuckoo", "ayame_bridge", "hagi_boar"
    )
    assert ids(yaku_of(cards)) == {"hanami": 5, "tsukimi": 5, "tane": 1}


def test_ribbons_stack_with_tan_and_chofuku_replaces_akatan_aotan() -> None:
    aka = ("matsu_ribbon", "ume_ribbon", "sakura_ribbon")
    ao = ("botan_ribbon", "kiku_ribbon", "momiji_ribbon")
    assert ids(yaku_of(m(*aka))) == {"akatan": 5}
    assert ids(yaku_of(m(*aka, "fuji_ribbon", "hagi_ribbon"))) == {"akatan": 7, "tan": 1}
    assert ids(yaku_of(m(*ao, "fuji_ribbon"))) == {"aotan": 6}
    assert ids(yaku_of(m(*aka, *ao))) == {"akatan_aotan": 10, "tan": 2}
    assert ids(yaku_of(m(*aka, *ao, "yanagi_ribbon"))) == {"akatan_aotan": 11, "tan": 3}
    # Nintendo: Tan is void beside Akatan / Aotan / Chofuku.
    assert ids(yaku_of(m(*aka, *ao, "yanagi_ribbon"), Rules.NINTENDO)) == {"akatan_aotan": 11}
    assert ids(yaku_of(m(*aka, "fuji_ribbon", "hagi_ribbon"), Rules.NINTENDO)) == {"akatan": 7}


def test_tane_tan_kasu_thresholds_and_extras() -> None:
    tane = cards_of(TANE & ~m("hagi_boar"))
    assert yaku_of(sum(1 << c for c in tane[:4])) == []
    assert ids(yaku_of(sum(1 << c for c in tane[:5]))) == {"tane": 1}
    assert ids(yaku_of(sum(1 << c for c in tane[:7]))) == {"tane": 3}
    ribbons = cards_of(RIBBONS & ~m("matsu_ribbon", "botan_ribbon"))
    assert ids(yaku_of(sum(1 << c for c in ribbons[:5]))) == {"tan": 1}
    plains = cards_of(PLAINS)
    assert yaku_of(sum(1 << c for c in plains[:9])) == []
    assert ids(yaku_of(sum(1 << c for c in plains[:10]))) == {"kasu": 1}
    assert ids(yaku_of(sum(1 << c for c in plains[:13]))) == {"kasu": 4}
    assert ids(
        yaku_of(
            m(
                "yanagi_lightning",
                "kiri_plain_yellow",
                *[f"kiri_plain_{i}" for i in (1, 2)],
                "matsu_plain_1",
                "matsu_plain_2",
                "ume_plain_1",
                "ume_plain_2",
                "fuji_plain_1",
                "fuji_plain_2",
            )
        )
    ) == {"kasu": 1}


def test_no_double_setting_multiplies_only_by_calls() -> None:
    bd = count_round(m(*LIGHTS5), double_at_8=False, calls=1)
    assert (bd.doubled, bd.score) == (False, 20)


def test_nintendo_loser_called_doubles_and_has_no_cap() -> None:
    bd = count_round(m(*LIGHTS5), rules=Rules.NINTENDO, loser_called=True, loser_points=3, calls=5)
    assert (bd.base, bd.score, bd.payment, bd.cap, bd.multiplier) == (10, 40, 40, None, 2)


def test_hand_yaku_six_points_never_doubled_capped() -> None:
    teshi = m(
        "sakura_curtain",
        "sakura_ribbon",
        "sakura_plain_1",
        "sakura_plain_2",
        "matsu_crane",
        "matsu_plain_1",
        "ume_warbler",
        "ume_plain_1",
    )
    assert hand_yaku(teshi) is Yaku.TESHI  # four of a month and two pairs is Teshi
    kuttsuki = m(
        "matsu_crane",
        "matsu_plain_1",
        "ume_warbler",
        "ume_plain_1",
        "fuji_cuckoo",
        "fuji_plain_1",
        "kiku_sake_cup",
        "kiku_plain_1",
    )
    assert hand_yaku(kuttsuki) is Yaku.KUTTSUKI
    assert (
        hand_yaku(
            m(
                "matsu_crane",
                "matsu_plain_1",
                "ume_warbler",
                "ume_plain_1",
                "fuji_cuckoo",
                "fuji_plain_1",
                "kiku_sake_cup",
                "kiri_plain_1",
            )
        )
        is None
    )
    bd = count_hand_yaku(Yaku.TESHI)
    assert (bd.base, bd.doubled, bd.score, bd.payment) == (6, False, 6, 6)
    assert count_hand_yaku(Yaku.KUTTSUKI, loser_points=4).payment == 4


def test_breakdown_lines_show_each_step() -> None:
    lines = count_round(m("sakura_curtain", "susuki_moon", "kiku_sake_cup"), calls=2).lines()
    text = "\n".join(lines)
    assert "Hanami" in text and "Tsukimi" in text
    assert "× 2  base of 8 or more is doubled" in text
    assert "× 3  2 koi-koi calls this round" in text
    assert "Payment: 25 (capped" in text
    assert "花見で一杯" in "\n".join(count_round(m("sakura_curtain", "kiku_sake_cup")).lines("ja"))
    ja = count_round(m("sakura_curtain", "susuki_moon", "kiku_sake_cup"), calls=2).lines("ja")
    assert ja[2].split() == ["基本点", "10"]
    assert "  × 2  基本点が8点以上で2倍" in ja and "  × 3  この回のこいこい2回" in ja
    assert ja[-1] == "  支払い 25点（相手の残りの持ち点25点が上限）"
    assert not any(w in "\n".join(ja) for w in ("Base", "Score", "Payment", "koi-koi"))
    # wide characters count twice: the points line up in one column
    assert len({line.index(" 5") for line in ja[:2]}) == 1


@given(st.integers(min_value=0, max_value=(1 << 48) - 1))
def test_fast_total_equals_sum_of_yaku(mask: int) -> None:
    assert total_points(mask) == sum(p for _, p in yaku_of(mask))


def test_fast_total_on_realistic_piles() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        cards = rng.sample(range(48), rng.randint(0, 30))
        mask = sum(1 << c for c in cards)
        assert total_points(mask) == sum(p for _, p in yaku_of(mask))
