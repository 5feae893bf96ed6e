"""The master bot: legal, deterministic, view-only, its koi-koi rollouts exact, its reading of the opponent sound."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from koikoi.engine import Match, SeededDeal, Settings
from koikoi.engine.bots import BOTS, GreedyBot, StrongBot, make_bot
from koikoi.engine.bots.master import MasterBot
from koikoi.engine.bots.playout import calls_koikoi
from koikoi.engine.bots.strong import _root_of
from koikoi.engine.match import choose_first_dealer
from koikoi.engine.selfplay import bot_rng, game_seed, play_match


def _small(rng: random.Random) -> MasterBot:
    return MasterBot(rng, rollouts=40, decide_rollouts=20)


def test_registered_and_plays_whole_matches_deterministically() -> None:
    assert BOTS["master"] is MasterBot and make_bot("master", random.Random(0)).name == "master"
    for i in range(2):
        seed = game_seed(b"master-test", i)
        runs = []
        for _ in range(2):
            other = StrongBot(bot_rng(seed, 1), rollouts=24, decide_rollouts=16) if i else GreedyBot(bot_rng(seed, 1))
            bots = [_small(bot_rng(seed, 0)), other]
            m = play_match(Settings(), bots, seed).match  # apply() raises on an illegal action
            assert m.is_over
            runs.append((m.state_hash(), [r.points for r in m.history]))
        assert runs[0] == runs[1]


def test_reading_the_opponent_is_sound_against_a_bot_that_always_captures() -> None:
    """What the bot rules out of the opponent's hand is never there (greedy captures whenever it can)."""
    ruled_out = 0
    for g in range(8):
        src = SeededDeal(bytes([g, 3]) * 16)
        dealer, _ = choose_first_dealer(src)
        m = Match(Settings(), src, dealer)
        bot = _small(random.Random(g))
        greedy = make_bot("greedy", random.Random(g))
        while not m.is_over:
            seat = m.to_move
            if seat == 0:
                a = bot.choose(m.view(0))
                assert bot._excluded & m.hand(1) == 0
                ruled_out += bool(bot._excluded & (m.hand(1) | sum(1 << c for c in m._deck[m._deck_pos :])))
            else:
                a = greedy.choose(m.view(1))
            m.apply(a, seat)
    assert ruled_out > 20


def test_the_opponent_call_rate_is_fitted() -> None:
    m = Match(Settings(), SeededDeal(bytes(32)), 0)
    view = m.view(m.to_move)
    bot = MasterBot(random.Random(0))
    bot._observe(view)
    prior = bot.opponent_call_rate(view)
    assert 0.1 < prior < 0.2
    called = view.replace(calls=(0, 3) if view.seat == 0 else (3, 0))
    bot._observe(called)
    assert bot.opponent_call_rate(called) > 0.5
    q = bot._call_policy(called)
    assert q[view.seat] == bot.my_call and q[1 - view.seat] == bot.opponent_call_rate(called)


def test_worlds_keep_ruled_out_cards_from_the_opponent_in_the_trusted_share() -> None:
    m = Match(Settings(), SeededDeal(bytes([5]) * 32), 0)
    root = _root_of(m.view(0))
    ruled_out = sum(1 << c for c in root.unseen[:10])
    counts = []
    for trust in (0.0, 0.5, 1.0):
        bot = MasterBot(random.Random(2), trust=trust)
        bot._excluded = ruled_out
        clean = 0
        for _ in range(400):
            opp, deck = bot._sample(root)
            assert opp.bit_count() == root.opponent_count and len(deck) == len(root.unseen) - root.opponent_count
            assert opp | sum(1 << c for c in deck) == sum(1 << c for c in root.unseen)
            clean += not opp & ruled_out
        counts.append(clean)
    assert counts[2] == 400
    assert counts[0] < 60  # dealt as if nothing were known: 8 of the 24 unseen, 10 ruled out, rarely none
    assert counts[0] + 120 < counts[1] < 400


def test_master_through_the_command_line_and_bot_specs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from koikoi.client.botspec import parse_bot_spec
    from koikoi.client.cli import main

    assert parse_bot_spec("master").name == "master"
    monkeypatch.setitem(BOTS, "master", _small)  # the same bot on a small budget: the test stays quick
    assert main(["selfplay", "--games", "1", "--bots", "master,random", "--seed", "m", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 1 and sum(out["wins"]) + out["draws"] == 1


def test_rollout_koikoi_policy_takes_a_sure_match_and_presses_when_behind() -> None:
    view = Match(Settings(rounds=6), SeededDeal(bytes([4]) * 32), 0).view(0)
    rng = random.Random(0)

    def calls(points: tuple[int, int], round_number: int, tot: int, mult: int, chance: float) -> bool:
        root = _root_of(view.replace(points=points, round=round_number))
        return calls_koikoi(root, 0, tot, mult, chance, 4, rng)

    assert not calls((30, 20), 2, 5, 4, 1.0)  # 5 x 4 = 20 takes all 20 the loser has: shobu, always
    assert not calls((35, 15), 2, 8, 1, 1.0)  # 8 points, doubled at 8+: 16 takes the loser's 15
    assert calls((30, 20), 2, 8, 1, 1.0)  # 16 of 20: the chance decides
    assert calls((10, 40), 6, 5, 1, 0.0)  # the last round, 15 to 35 after shobu: koi-koi, always
    assert not calls((22, 28), 6, 5, 1, 0.0)  # the last round, 27 to 23 after shobu: the chance decides
    assert not calls((20, 30), 6, 5, 1, 0.0)  # level after shobu (25 to 25): a drawn match, not a loss
    assert not calls((10, 40), 5, 1, 1, 0.0) and calls((10, 40), 5, 1, 1, 1.0)  # rounds to go: the chance


def test_rollout_koikoi_chance_grows_with_the_cards_left() -> None:
    view = Match(Settings(rounds=6), SeededDeal(bytes([4]) * 32), 0).view(0)
    root = _root_of(view.replace(points=(25, 25), round=2))
    rng = random.Random(1)

    def share(left: int, chance: float, n: int = 4000) -> float:
        return sum(calls_koikoi(root, 0, 2, 1, chance, left, rng) for _ in range(n)) / n

    assert share(0, 1.0) == 0.0  # no turn left to the caller: a call cannot gain, never
    assert share(8, 0.5) == 1.0  # 0.5 x 8 / 4: capped at 1, always
    assert abs(share(4, 0.3) - 0.3) < 0.04  # the chance as given at 4 cards left
    assert abs(share(2, 0.3) - 0.15) < 0.04  # half of it with 2
    # the last round and behind even after shobu: a call, but only with a turn to come
    last = _root_of(view.replace(points=(10, 40), round=6))
    assert calls_koikoi(last, 0, 5, 1, 0.0, 1, rng) and not calls_koikoi(last, 0, 5, 1, 1.0, 0, rng)


@pytest.mark.parametrize("model", [False, True])
def test_the_opponent_model_reaches_every_search(monkeypatch: pytest.MonkeyPatch, model: bool) -> None:
    """``model_opponent`` is what every rollout batch of the search is given, at play and at koi-koi decisions
    alike (the tree then plays the opponent by the rollout policy: see test_bots_strong's Walk tests)."""
    import koikoi.engine.bots.strong as strong
    from koikoi.engine.actions import Action, ActionKind
    from koikoi.engine.bots.playout import rollout_sum as real

    seen: list[tuple[ActionKind, bool]] = []

    def spy(*args: Any, model: bool) -> float:
        action = args[5]
        assert isinstance(action, Action)
        seen.append((action.kind, model))
        return real(*args, model=model)  # type: ignore[misc]  # (the positional ones never reach model's place)

    monkeypatch.setattr(strong, "rollout_sum", spy)
    for g in range(8):
        m = Match(Settings(), SeededDeal(game_seed(b"model", g)), g % 2)
        bot = _small(random.Random(g))
        bot.model_opponent = model
        rng = random.Random(g)
        while len(m.history) < 2 and not m.is_over:
            view = m.view(m.to_move)
            acts = view.legal_actions
            m.apply(bot.choose(view) if m.to_move == 0 else acts[int(rng.random() * len(acts))])
    assert {flag for _, flag in seen} == {model}
    assert {ActionKind.KOIKOI, ActionKind.PLAY} <= {kind for kind, _ in seen}
