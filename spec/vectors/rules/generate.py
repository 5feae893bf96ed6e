"""Regenerate the rules vectors: python spec/vectors/rules/generate.py

The vectors pin the shuffle, the deal (with a redeal), move generation (perft
counts), a whole match (actions and state hashes), and the yaku count under
both rule sets, so another implementation can check itself against them.
tests/engine/test_engine_vectors.py checks this implementation against them.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from koikoi.engine import (
    CARD_IDS,
    Match,
    Rules,
    SeededDeal,
    Settings,
    cards_of,
    perft,
    shuffle,
    yaku_of,
)
from koikoi.engine.deal import needs_redeal, round_key
from koikoi.engine.match import choose_first_dealer

HERE = Path(__file__).parent


def ids(cards: list[int] | tuple[int, ...]) -> list[str]:
    return [CARD_IDS[c] for c in cards]


def seed_n(n: int) -> bytes:
    return hashlib.sha256(b"koikoi vectors " + str(n).encode()).digest()


def shuffle_vectors() -> dict[str, object]:
    keys = [b"", bytes(36), bytes(range(36)), b"koikoi"]
    return {
        "description": "shuffle(key): Fisher-Yates over [0..47] fed by SHAKE-256('koikoi/shuffle/v1\\0' || key) "
        "with rejection sampling; order lists card ids, position 0 first",
        "vectors": [{"key_hex": k.hex(), "order": ids(shuffle(k))} for k in keys],
    }


def deal_vectors() -> dict[str, object]:
    out = []
    # A plain seed, and the first seed whose round 1 needs a redeal.
    redeal_seed = next(s for s in (seed_n(i) for i in range(10_000)) if needs_redeal(SeededDeal(s).deal(1, 0).table))
    for seed in (seed_n(0), redeal_seed):
        src = SeededDeal(seed)
        attempts = []
        a = 0
        while True:
            d = src.deal(1, a)
            attempts.append(
                {
                    "attempt": a,
                    "key_hex": round_key(seed, 1, a).hex(),
                    "dealer_hand": ids(cards_of(d.dealer_hand)),
                    "other_hand": ids(cards_of(d.other_hand)),
                    "table": ids(cards_of(d.table)),
                    "deck": ids(d.deck),
                    "redeal": needs_redeal(d.table),
                }
            )
            if not needs_redeal(d.table):
                break
            a += 1
        out.append({"match_seed_hex": seed.hex(), "round": 1, "attempts": attempts})
    return {
        "description": "SeededDeal(match_seed).deal(round, attempt): shuffle(round_key) where round_key = "
        "match_seed || round (u16 BE) || attempt (u16 BE); positions 0-7 dealer (oya), 8-15 other, 16-23 table, "
        "24-47 deck (24 drawn first); a table holding all four cards of a month is dealt again with attempt+1",
        "vectors": out,
    }


def first_dealer_vectors() -> dict[str, object]:
    out = []
    for n in range(6):
        seed = seed_n(100 + n)
        dealer, turned = choose_first_dealer(SeededDeal(seed))
        out.append({"match_seed_hex": seed.hex(), "turned": [ids(p) for p in turned], "first_dealer": dealer})
    return {
        "description": "games against the computer: attempt a turns the first two cards of "
        "shuffle('koikoi/first-dealer/v1\\0' || seed || a (u16 BE)), seat 0 then seat 1",
        "vectors": out,
    }


def perft_vectors() -> dict[str, object]:
    out = []
    for n, dealer in ((0, 0), (1, 1)):
        seed = seed_n(200 + n)
        m = Match(Settings(6, True), SeededDeal(seed), dealer)
        out.append(
            {
                "match_seed_hex": seed.hex(),
                "first_dealer": dealer,
                "rounds": 6,
                "double_at_8": True,
                "perft": [perft(m, d) for d in range(1, 7)],
            }
        )
    return {"description": "perft(depth): action sequences of that length from the first deal", "vectors": out}


def game_vectors() -> dict[str, object]:
    out = []
    for n, (rounds, double) in enumerate(((6, True), (12, False))):
        seed = seed_n(300 + n)
        rng = random.Random(n)
        m = Match(Settings(rounds, double), SeededDeal(seed), n % 2)
        actions = []
        hashes = []
        while not m.is_over:
            legal = m.legal_actions()
            a = legal[rng.randrange(len(legal))]
            m.apply(a)
            actions.append(a.text)
            hashes.append(m.state_hash().hex())
        out.append(
            {
                "match_seed_hex": seed.hex(),
                "rounds": rounds,
                "double_at_8": double,
                "first_dealer": n % 2,
                "initial_state_hash": Match(Settings(rounds, double), SeededDeal(seed), n % 2).state_hash().hex(),
                "actions": actions,
                "state_hashes": hashes,
                "round_results": [r.to_json() for r in m.history],
                "final_points": list(m.points),
                "winner": m.winner,
            }
        )
    return {
        "description": "whole matches: apply the actions in order; after each, state_hash() must match",
        "vectors": out,
    }


def yaku_vectors() -> dict[str, object]:
    rng = random.Random(42)
    out = []
    for _ in range(60):
        cards = sorted(rng.sample(range(48), rng.randint(6, 24)))
        mask = sum(1 << c for c in cards)
        out.append(
            {
                "captures": ids(cards),
                "game": [{"id": y.value, "points": p} for y, p in yaku_of(mask)],
                "nintendo": [{"id": y.value, "points": p} for y, p in yaku_of(mask, Rules.NINTENDO)],
            }
        )
    return {"description": "yaku_of(captures) under this game's rules and Nintendo's", "vectors": out}


def main() -> None:
    for name, fn in (
        ("shuffle", shuffle_vectors),
        ("deals", deal_vectors),
        ("first_dealer", first_dealer_vectors),
        ("perft", perft_vectors),
        ("games", game_vectors),
        ("yaku", yaku_vectors),
    ):
        (HERE / f"{name}.json").write_text(json.dumps(fn(), indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
