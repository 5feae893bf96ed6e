"""The strong bot: legal, deterministic, match-aware, and its fast playout equals the rules engine's."""

from __future__ import annotations

import itertools
import random

import pytest

from koikoi.engine import Match, Phase, SeededDeal, Settings
from koikoi.engine.actions import KOIKOI, SHOBU, ActionKind
from koikoi.engine.bots import BOTS, LEVELS, UnknownBot, make_bot
from koikoi.engine.bots.strong import (
    _SEARCH_DEAL,
    StrongBot,
    _playout_reference,
    _root_of,
    _round_value,
    _simulate,
)
from koikoi.engine.bots.value import final_value, match_value
from koikoi.engine.selfplay import bot_rng, game_seed, play_match


def test_registry_and_levels() -> None:
    assert {"random", "greedy", "strong"} <= set(BOTS)
    assert LEVELS == {"easy": "random", "normal": "greedy", "strong": "strong"}
    for name in LEVELS.values():
        assert make_bot(name, random.Random(0)).name == name
    with pytest.raises(UnknownBot):
        make_bot("grandmaster", random.Random(0))


def _small(rng: random.Random) -> StrongBot:
    return StrongBot(rng, rollouts=24, decide_rollouts=16)


def test_strong_plays_whole_matches_legally_and_deterministically() -> None:
    settings = Settings()
    for i in range(3):
        seed = game_seed(b"strong-test", i)
        runs = []
        for _ in range(2):
            bots = [_small(bot_rng(seed, 0)), make_bot("greedy", bot_rng(seed, 1))]
            m = play_match(settings, bots, seed).match  # apply() raises on an illegal action
            assert m.is_over
            runs.append((m.state_hash(), [r.points for r in m.history]))
        assert runs[0] == runs[1]


def _decide_position() -> Match:
    """A match at a koi-koi decision that is not the last turn."""
    for g in range(400):
        m = Match(Settings(), SeededDeal(g.to_bytes(32, "big")), 0)
        rng = random.Random(g)
        while not m.is_over:
            if m.phase is Phase.DECIDE and KOIKOI in m.legal_actions():
                return m
            acts = m.legal_actions()
            m.apply(acts[int(rng.random() * len(acts))])
    raise AssertionError("no decision found")


def test_decision_weighs_the_match() -> None:
    m = _decide_position()
    seat = m.to_move
    view = m.view(seat)
    bot = StrongBot(random.Random(1), decide_rollouts=60)
    shobu, koikoi = bot.koikoi_values(view, 60)
    assert 0.0 <= shobu <= 1.0 and 0.0 <= koikoi <= 1.0
    assert bot.choose(view) in (KOIKOI, SHOBU)
    # Winning the match outright by shobu: the bot takes it.
    m.points[seat], m.points[1 - seat] = 49, 1
    assert StrongBot(random.Random(1)).choose(m.view(seat)) is SHOBU


def test_value_table_is_sane() -> None:
    assert final_value(26) == 1.0 and final_value(25) == 0.5 and final_value(24) == 0.0
    assert match_value(0, 3, True) == 0.0 and match_value(50, 3, False) == 1.0
    for left in (1, 3, 6, 12):
        row = [match_value(p, left, False) for p in range(51)]
        assert all(a <= b + 1e-12 for a, b in itertools.pairwise(row))
        assert abs(match_value(25, left, False) + match_value(25, left, True) - 1.0) < 1e-9
    # More rounds left: a lead is worth less.
    assert match_value(35, 1, False) > match_value(35, 5, False) > 0.5


def test_fast_simulation_equals_the_rules_engine() -> None:
    """The search's round simulation = Match.from_view + Match.apply + the rollout policy through the engine."""
    checked = 0
    kinds = set()
    for g in range(12):
        m = Match(Settings(rounds=6, double_at_8=g % 2 == 0), SeededDeal(bytes([g]) * 32), g % 2)
        rng = random.Random(g)
        while not m.is_over:
            seat = m.to_move
            view = m.view(seat)
            bot = StrongBot(random.Random(g))
            root = _root_of(view)
            opp, deck = bot._sample(root)
            world = Match.from_view(view, [c for c in range(48) if opp >> c & 1], deck, _SEARCH_DEAL)
            for a in view.legal_actions:
                if a is SHOBU:
                    continue
                r = rng.random()
                fast = _simulate(root, opp, deck, a, random.Random(r))
                w = world.copy()
                n = len(w.history)
                w.apply(a)
                if len(w.history) != n:
                    slow = _round_value(w, seat, w.settings.rounds)
                else:
                    slow = _playout_reference(w, seat, w.settings.rounds, random.Random(r))
                assert fast == slow, (view, a)
                checked += 1
                kinds.add(a.kind)
            acts = m.legal_actions()
            m.apply(acts[int(rng.random() * len(acts))])
    assert checked > 500
    assert kinds == {ActionKind.PLAY, ActionKind.CHOOSE, ActionKind.KOIKOI}


def test_choose_phase_and_single_actions() -> None:
    bot = _small(random.Random(3))
    seen = set()
    for g in range(30):
        m = Match(Settings(), SeededDeal(bytes([100 + g]) * 32), 0)
        rng = random.Random(g)
        while not m.is_over:
            seat = m.to_move
            view = m.view(seat)
            if view.phase is Phase.CHOOSE or len(view.legal_actions) == 1:
                a = bot.choose(view)
                assert a in view.legal_actions
                seen.add(a.kind)
            acts = m.legal_actions()
            m.apply(acts[int(rng.random() * len(acts))])
    assert ActionKind.CHOOSE in seen and ActionKind.SHOBU in seen
