"""The implementation against every rules vector in spec/vectors/rules/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from koikoi.engine import (
    CARD_IDS,
    Match,
    Rules,
    SeededDeal,
    Settings,
    card_from_id,
    cards_of,
    parse_action,
    perft,
    shuffle,
    yaku_of,
)
from koikoi.engine.deal import needs_redeal
from koikoi.engine.match import choose_first_dealer

VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors" / "rules"


def load(name: str) -> list[dict[str, Any]]:
    data = json.loads((VECTORS / f"{name}.json").read_text())
    assert data["vectors"], f"{name}.json has no vectors"
    return list(data["vectors"])


def ids(cards: list[int] | tuple[int, ...]) -> list[str]:
    return [CARD_IDS[c] for c in cards]


def test_shuffle_vectors() -> None:
    for v in load("shuffle"):
        assert ids(shuffle(bytes.fromhex(v["key_hex"]))) == v["order"]


def test_deal_vectors_including_a_redeal() -> None:
    saw_redeal = False
    for v in load("deals"):
        src = SeededDeal(bytes.fromhex(v["match_seed_hex"]))
        for a in v["attempts"]:
            d = src.deal(v["round"], a["attempt"])
            assert ids(cards_of(d.dealer_hand)) == a["dealer_hand"]
            assert ids(cards_of(d.other_hand)) == a["other_hand"]
            assert ids(cards_of(d.table)) == a["table"]
            assert ids(d.deck) == a["deck"]
            assert needs_redeal(d.table) == a["redeal"]
            saw_redeal |= a["redeal"]
        m = Match(Settings(), src, 0)
        assert m.history == [] or m.history[0].redeals == len(v["attempts"]) - 1
        assert m.table == sum(1 << card_from_id(x) for x in v["attempts"][-1]["table"])
    assert saw_redeal


def test_first_dealer_vectors() -> None:
    for v in load("first_dealer"):
        dealer, turned = choose_first_dealer(SeededDeal(bytes.fromhex(v["match_seed_hex"])))
        assert dealer == v["first_dealer"]
        assert [ids(p) for p in turned] == v["turned"]


def test_perft_vectors() -> None:
    for v in load("perft"):
        m = Match(
            Settings(v["rounds"], v["double_at_8"]), SeededDeal(bytes.fromhex(v["match_seed_hex"])), v["first_dealer"]
        )
        assert [perft(m, d) for d in range(1, len(v["perft"]) + 1)] == v["perft"]


def test_whole_match_vectors() -> None:
    for v in load("games"):
        m = Match(
            Settings(v["rounds"], v["double_at_8"]), SeededDeal(bytes.fromhex(v["match_seed_hex"])), v["first_dealer"]
        )
        assert m.state_hash().hex() == v["initial_state_hash"]
        for text, h in zip(v["actions"], v["state_hashes"], strict=True):
            m.apply(parse_action(text))
            assert m.state_hash().hex() == h
        assert m.is_over
        assert list(m.points) == v["final_points"] and m.winner == v["winner"]
        got = [
            {"round": r.round, "dealer": r.dealer, "end": r.end.value, "winner": r.winner,
             "yaku": [{"id": y.value, "points": p} for y, p in r.yaku], "payment": r.payment,
             "points": list(r.points)}
            for r in m.history
        ]  # fmt: skip
        assert got == v["round_results"]


def test_yaku_vectors() -> None:
    for v in load("yaku"):
        mask = sum(1 << card_from_id(x) for x in v["captures"])
        for rules, key in ((Rules.GAME, "game"), (Rules.NINTENDO, "nintendo")):
            assert [{"id": y.value, "points": p} for y, p in yaku_of(mask, rules)] == v[key]
