"""Sealed mode's round trips as `benchmarks/protocol.py` counts them (`sealed.hops_breakdown`,
spec/sealed.md §6 and §10): on whole lines of real sealed matches, every hop is named, a decision after the
draw costs exactly two hops (one round trip) more, every round after the first sends its SHUFFLE in the
hop of its sender's DISCLOSE, a disclosure is a hop of its own only at the match's end or after a hand yaku,
and shared mode's hops below one a turn are all round ends where the last mover plays first."""

from __future__ import annotations

import collections
import itertools
from pathlib import Path
from types import ModuleType

import pytest

from koikoi.protocol.sealed_line import LineKind
from koikoi.testing import load_script


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "protocol.py", "koikoi_bench_protocol")


@pytest.mark.parametrize("bots", [("greedy", "greedy"), ("random", "greedy")])
def test_every_hop_of_a_sealed_line_is_named_as_spec_sealed_6_counts_it(
    bench: ModuleType, bots: tuple[str, str]
) -> None:
    total: collections.Counter[str] = collections.Counter()
    rounds = 0
    for seed in (0, 1):
        line, _, n = bench._sealed_match(seed, bots)
        c = bench._line_hops(line)
        assert c["hops"] == bench._hops([m.seat for m in line])  # every hop of the whole line, named once
        assert sum(c[k] for k in bench._HOP_NAMES) == c["hops"]
        assert c["play"] == c["turns"]  # one hop a turn for its play, never two plays in one sealed hop
        for name in bench._DECISIONS:  # the draw key the mover waits for, and its decision: one round trip
            assert c[name] == 2 * c["deciding:" + name], name
        assert c["shuffle_with_disclosure"] == n - 1  # every round but the first: its SHUFFLE rides the DISCLOSE
        assert c["deal"] >= 3 * n and c["redeal"] % 3 == 0
        # a disclosure alone: the last round's second, its first when the round's last sender was the other
        # seat, and a round a hand yaku ended (the CLAIM that ends it is not the next dealer's)
        assert c["disclosure"] <= 2 + sum(
            1 for a, b in itertools.pairwise(line) if a.kind is LineKind.CLAIM and b.kind is LineKind.DISCLOSE
        )
        # shared mode on the same game: a hop a turn but where a round's last mover plays first in the next
        assert c["same_hops"] == c["turns"] - c["same_merged"] and 0 < c["same_merged"] < n
        total += c
        rounds += n
    assert total["turns"] > 100 and sum(total["deciding:" + k] for k in bench._DECISIONS) > 0
    out = bench._hop_breakdown(
        [bench._sealed_match(seed, bots)[0] for seed in (0, 1)], rounds, bench._transcripts(1, bots)
    )
    per_turn = out["sealed_hops_per_turn"]
    assert per_turn["play"] == 1.0 and per_turn["total"] == round(
        sum(total[k] for k in ("play", *bench._DECISIONS, "last_draw")) / total["turns"], 3
    )
