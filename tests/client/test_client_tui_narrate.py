"""Narration: every kind of engine log entry becomes a sentence a screen reader can follow."""

from __future__ import annotations

import random

from koikoi.client.tui import Look, Narrator, Seats, narrate
from koikoi.engine import (
    Match,
    RoundEnd,
    RoundResult,
    SeededDeal,
    Settings,
    Yaku,
    card_from_id,
    count_hand_yaku,
    count_round,
    deal_from_order,
)
from koikoi.engine.bots import make_bot
from koikoi.engine.deal import Deal as DealtCards
from koikoi.engine.events import (
    Chosen,
    Dealt,
    Drawn,
    DrawnChoice,
    HandYaku,
    KoiKoi,
    MatchEnded,
    Played,
    Redeal,
    RoundEnded,
    Shobu,
)

C = card_from_id
SEATS = Seats(0, ("You", "Computer"))


def _n(lang: str = "en", me: int | None = 0) -> Narrator:
    return Narrator(Seats(me, ("You", "Computer")) if me is not None else Seats(None, ("Ann", "Bob")),
                    Look(lang=lang, width=200), rounds=6)  # fmt: skip


def _m(*names: str) -> int:
    return sum(1 << C(x) for x in names)


def test_plays_and_draws_with_and_without_captures() -> None:
    n = _n()
    assert n.entry(Dealt(1, 1)) == ["Round 1 of 6: Computer deals (oya) and plays first."]
    assert n.entry(Played(1, C("matsu_crane"), _m("matsu_plain_1"))) == [
        "Computer plays Pine with Crane and captures Pine plain 1."
    ]
    assert n.entry(Drawn(1, C("ume_plain_1"), 0)) == ["Computer draws Plum plain 1; it goes to the field."]
    assert n.entry(Played(0, C("kiri_phoenix"), 0)) == ["You play Paulownia with Phoenix; it goes to the field."]
    three = _m("sakura_curtain", "sakura_ribbon", "sakura_plain_1")
    assert n.entry(Drawn(0, C("sakura_plain_2"), three)) == [
        "You draw Cherry plain 2 and capture Cherry with Curtain, Cherry with Red Poem Ribbon and Cherry plain 1"
        " (all three of its month)."
    ]


def test_a_drawn_card_waiting_for_a_choice_then_the_choice() -> None:
    n = _n()
    n.entry(Dealt(1, 0))
    assert n.entry(DrawnChoice(0, C("kiku_plain_1"))) == [
        "You draw Chrysanthemum plain 1; it matches two field cards and you must choose which to capture."
    ]
    assert n.entry(Chosen(0, C("kiku_plain_1"), _m("kiku_ribbon"))) == [
        "You take Chrysanthemum with Blue Ribbon with the drawn Chrysanthemum plain 1."
    ]
    assert "Computer must choose" in n.entry(DrawnChoice(1, C("kiku_plain_2")))[0]


def test_new_yaku_and_a_yaku_worth_more() -> None:
    n = _n()
    n.entry(Dealt(1, 0))
    n.entry(Played(0, C("sakura_curtain"), _m("sakura_plain_1")))
    out = n.entry(Drawn(0, C("kiku_sake_cup"), _m("kiku_plain_1")))
    assert out[1] == "You make Hanami de ippai (flower viewing): 5 points; your yaku total 5 points."
    n.entry(Played(1, C("hagi_boar"), _m("hagi_plain_1")))
    n.entry(Played(1, C("momiji_deer"), _m("momiji_plain_1")))
    out = n.entry(Drawn(1, C("botan_butterfly"), _m("botan_plain_1")))
    assert out[1] == "Computer makes Inoshikachō (boar, deer, butterflies): 5 points; Computer's yaku total 5 points."
    out = n.entry(Drawn(1, C("ume_warbler"), _m("ume_plain_1")))
    assert out[1] == (
        "Computer's Inoshikachō (boar, deer, butterflies) is now worth 6 points; Computer's yaku total 6 points."
    )
    # a new deal forgets the captures
    n.entry(Dealt(2, 1))
    assert n.entry(Played(0, C("kiku_sake_cup"), _m("kiku_plain_1"))) == [
        "You play Chrysanthemum with Sake Cup and capture Chrysanthemum plain 1."
    ]


def test_koikoi_calls_name_the_new_multiplier_and_shobu_ends_the_round() -> None:
    n = _n()
    n.entry(Dealt(3, 0))
    assert n.entry(KoiKoi(0, 5)) == ["You call koi-koi at 5 points and play on: the multiplier is now ×2."]
    assert n.entry(KoiKoi(1, 6)) == ["Computer calls koi-koi at 6 points and plays on: the multiplier is now ×3."]
    assert n.entry(Shobu(1, 7)) == ["Computer calls shōbu with 7 points: the round ends."]
    n.entry(Dealt(4, 1))
    assert n.entry(KoiKoi(1, 1))[0].endswith("the multiplier is now ×2.")


def test_redeal_and_hand_yaku() -> None:
    n = _n()
    assert n.entry(Redeal(2, 0)) == [
        "Round 2: all four cards of one month landed on the field, so the cards are dealt again."
    ]
    assert n.entry(HandYaku(1, Yaku.TESHI, 0)) == [
        "Computer holds Teshi (four of a month in hand) in the dealt hand: 6 points, and the round ends before play."
    ]
    assert n.entry(HandYaku(0, Yaku.KUTTSUKI, 0))[0].startswith("You hold Kuttsuki (four pairs in hand)")


def test_round_ends_show_the_count_line_by_line() -> None:
    n = _n()
    bd = count_round(_m("sakura_curtain", "susuki_moon", "kiku_sake_cup"), calls=2, loser_points=25)
    r = RoundResult(1, 0, RoundEnd.SHOBU, 0, bd, 25, (50, 0), 0)
    out = n.entry(RoundEnded(r))
    assert out[0] == "Round 1 ends: You win 25 points by shōbu. The count:"
    assert out[1:-1] == bd.lines("en")
    assert out[-1] == "Points: You 50, Computer 0."
    hy = count_hand_yaku(Yaku.KUTTSUKI, 25)
    out = n.entry(RoundEnded(RoundResult(2, 1, RoundEnd.HAND_YAKU, 1, hy, 6, (19, 31), 0)))
    assert out[0] == "Round 2 ends: Computer wins 6 points with a dealt hand yaku. The count:"
    assert out[1:-1] == hy.lines("en")
    out = n.entry(RoundEnded(RoundResult(3, 1, RoundEnd.DRAWN, None, None, 0, (19, 31), 0)))
    assert out == [
        "Round 3 is drawn: the hands ran out before anyone called shōbu, so nobody pays and Computer deals again.",
        "Points: You 19, Computer 31.",
    ]


def test_match_end_from_each_side_and_a_draw() -> None:
    assert _n().entry(MatchEnded(0, (31, 19))) == ["The match is over: you win, 31 to 19."]
    assert _n().entry(MatchEnded(1, (19, 31))) == ["The match is over: Computer wins, 31 to 19."]
    assert _n(me=1).entry(MatchEnded(1, (19, 31))) == ["The match is over: you win, 31 to 19."]
    assert _n().entry(MatchEnded(None, (25, 25))) == ["The match is over: a draw, 25 to 25."]
    # a spectator (no seat of its own) names both players
    assert _n(me=None).entry(MatchEnded(0, (30, 20))) == ["The match is over: Ann wins, 30 to 20."]


def test_japanese_card_and_yaku_names() -> None:
    n = _n("ja")
    assert n.entry(Played(0, C("matsu_crane"), _m("matsu_plain_1"))) == ["You play 松に鶴 and capture 松のカス1."]
    assert "手四" in n.entry(HandYaku(0, Yaku.TESHI, 0))[0]


class _Crafted:
    """Round 1: the first deal puts all four pines on the table (a redeal), the second gives the dealer Teshi."""

    def __init__(self) -> None:
        self.fallback = SeededDeal(bytes(32))

    def deal(self, round_number: int, attempt: int) -> DealtCards:
        table = [4 * k for k in range(1, 9)]  # one card of eight months: no redeal
        if round_number == 1 and attempt == 0:
            rest = [c for c in range(48) if c >= 4 and c not in table]
            return deal_from_order([*rest[:16], 0, 1, 2, 3, *table[:4], *rest[16:], *table[4:]])
        if round_number == 1 and attempt == 1:
            rest = [c for c in range(48) if c >= 4 and c not in table]
            return deal_from_order([0, 1, 2, 3, *rest[:12], *table, *rest[12:]])
        return self.fallback.deal(round_number, attempt)

    def first_dealer_cards(self, attempt: int) -> tuple[int, int]:
        return (0, 4)


def test_the_engines_own_log_of_a_redeal_and_a_hand_yaku() -> None:
    m = Match(Settings(), _Crafted(), first_dealer=1)
    kinds = [type(e) for e in m.log]
    assert kinds[:4] == [Redeal, Dealt, HandYaku, RoundEnded]
    text = narrate(m.log, SEATS, Look(width=200), rounds=6)
    assert text[0].startswith("Round 1: all four cards of one month landed on the field")
    assert text[1] == "Round 1 of 6: Computer deals (oya) and plays first."
    assert text[2].startswith("Computer holds Teshi")
    assert text[3] == "Round 1 ends: Computer wins 6 points with a dealt hand yaku. The count:"
    assert "Round 2 of 6: Computer deals (oya) and plays first." in text


def test_whole_matches_every_entry_is_narrated_in_sentences() -> None:
    """Random matches: every entry gives sentences; one narrator fed step by step says the same as
    narrating the whole log at once; narrating from the middle keeps the context."""
    seen: set[str] = set()
    for k in range(8):
        m = Match(Settings(), SeededDeal(bytes([k]) * 32), first_dealer=k % 2)
        bots = [make_bot("random", random.Random(k)), make_bot("greedy", random.Random(k + 100))]
        step = Narrator(SEATS, Look(width=60), rounds=6)
        fed: list[str] = []
        while not m.is_over:
            m.apply(bots[m.to_move].choose(m.view(m.to_move)))
            fed += step.feed(m.log)
        assert fed == narrate(m.log, SEATS, Look(width=60), rounds=6)
        n = Narrator(SEATS, Look(width=500), rounds=6)
        for e in m.log:
            seen.add(type(e).__name__)
            lines = n.entry(e)
            assert lines and all(ln.strip() for ln in lines)
            assert lines[0][-1] in ".:", lines[0]
        half = len(m.log) // 2
        assert (
            narrate(m.log, SEATS, Look(width=60), half, rounds=6)
            == Narrator(SEATS, Look(width=60), rounds=6).feed(m.log)[
                -len(narrate(m.log, SEATS, Look(width=60), half, rounds=6)) :
            ]
        )
    assert {"Dealt", "Played", "Drawn", "DrawnChoice", "Chosen", "KoiKoi", "Shobu", "RoundEnded", "MatchEnded"} <= seen


def test_the_same_narrator_in_japanese_for_replay() -> None:
    n = Narrator(Seats(None, ("席0", "席1")), Look(lang="ja", width=200), rounds=6, sentences="ja")
    assert n.entry(Dealt(1, 1)) == ["第1局（全6局）：親は席1、席1から打つ。"]
    assert n.entry(Played(1, C("matsu_crane"), _m("matsu_plain_1"))) == ["席1が松に鶴を出して松のカス1を取る。"]
    assert n.entry(KoiKoi(1, 5)) == ["席1は役5点で「こいこい」：倍率は×2。"]
    assert n.entry(MatchEnded(None, (25, 25))) == ["対局終了：引き分け、25対25。"]
