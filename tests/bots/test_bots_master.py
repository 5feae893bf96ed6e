"""The master bot: legal, deterministic, view-only, its koi-koi rollouts exact, its reading of the opponent sound."""

from __future__ import annotations

import json
import random

import pytest

from koikoi.engine import Match, SeatView, SeededDeal, Settings
from koikoi.engine.actions import KOIKOI, SHOBU, Action, ActionKind
from koikoi.engine.bots import BOTS, GreedyBot, StrongBot, make_bot
from koikoi.engine.bots.master import MasterBot
from koikoi.engine.bots.strong import _SEARCH_DEAL, _playout_reference, _root_of, _round_value, _simulate
from koikoi.engine.deal import Deal
from koikoi.engine.selfplay import bot_rng, choose_first_dealer, game_seed, play_match


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


def test_koikoi_rollouts_equal_the_rules_engine() -> None:
    """With both players calling koi-koi, the fast round = Match.from_view + Match.apply through the engine."""
    checked = 0
    calls_seen = 0
    for g in range(10):
        m = Match(Settings(rounds=6, double_at_8=g % 2 == 0), SeededDeal(bytes([g, 1]) * 16), g % 2)
        rng = random.Random(g)
        while not m.is_over:
            seat = m.to_move
            view = m.view(seat)
            bot = MasterBot(random.Random(g))
            root = _root_of(view)
            opp, deck = bot._sample(root)
            world = Match.from_view(view, [c for c in range(48) if opp >> c & 1], deck, _SEARCH_DEAL)
            call = (0.6, 0.4) if g % 3 else (1.0, 1.0)
            for a in view.legal_actions:
                if a is SHOBU:
                    continue
                r = rng.random()
                fast = _simulate(root, opp, deck, a, random.Random(r), call)
                w = world.copy()
                n = len(w.history)
                w.apply(a)
                if len(w.history) != n:
                    slow = _round_value(w, seat, w.settings.rounds)
                else:
                    slow = _playout_reference(w, seat, w.settings.rounds, random.Random(r), call, root)
                    calls_seen += sum(1 for e in w.log if type(e).__name__ == "KoiKoi")
                assert fast == slow, (view, a)
                checked += 1
            acts = m.legal_actions()
            m.apply(acts[int(rng.random() * len(acts))])
    assert checked > 400 and calls_seen > 100


class _Swapped:
    """A deal source whose round-1 deal differs from another's only in hidden cards nobody touches early.

    ``keep`` are the cards that must stay where they are (the ones played or drawn in the turns
    the test replays); the other cards of seat 0's opponent's hand and of the deck are permuted.
    """

    def __init__(self, base: SeededDeal, keep: int, rng: random.Random) -> None:
        self.base = base
        self.keep = keep
        self.rng = rng

    def deal(self, round_number: int, attempt: int) -> Deal:
        d = self.base.deal(round_number, attempt)
        if round_number > 1:
            return d
        slots = [("h", c) for c in range(48) if d.other_hand >> c & 1] + [("d", i) for i in range(len(d.deck))]
        cards = [c for c in range(48) if d.other_hand >> c & 1] + list(d.deck)
        free = [i for i, c in enumerate(cards) if not self.keep >> c & 1]
        moved = [cards[i] for i in free]
        self.rng.shuffle(moved)
        for i, c in zip(free, moved, strict=True):
            cards[i] = c
        hand = sum(1 << cards[i] for i, (kind, _) in enumerate(slots) if kind == "h")
        deck = tuple(cards[i] for i, (kind, _) in enumerate(slots) if kind == "d")
        return Deal(d.dealer_hand, hand, d.table, deck)

    def first_dealer_cards(self, attempt: int) -> tuple[int, int]:
        return self.base.first_dealer_cards(attempt)


def _touched(m: Match, turns: int, actions: list[Action]) -> int:
    """Play ``turns`` decisions by ``actions`` (chosen now, replayed later); the cards that came into sight."""
    seen = 0
    for _ in range(turns):
        if m.is_over or m.round != 1:
            break
        v = m.view(m.to_move)
        a = v.legal_actions[0] if v.legal_actions[0].kind is not ActionKind.KOIKOI else SHOBU
        actions.append(a)
        m.apply(a)
        seen |= m.table | m.captures(0) | m.captures(1)
    return seen


def test_decisions_read_only_the_view() -> None:
    """The same views (several decisions, so the opponent model and its reading have state), different hidden
    cards (the opponent's unplayed cards and the undrawn deck): the same decisions, from the same seed."""
    compared = 0
    for g in range(30):
        base = SeededDeal(bytes([g, 9]) * 16)
        first = Match(Settings(), base, 0)
        if first.round != 1 or first.is_over:
            continue
        actions: list[Action] = []
        keep = _touched(first, 9, actions) | first.hand(0)
        picks: list[list[str]] = []
        views: list[list[SeatView]] = []
        for k in range(8):
            src = base if k == 0 else _Swapped(base, keep, random.Random(k))
            m = Match(Settings(), src, 0)
            if m.round != 1:
                continue  # the permuted hand holds a hand yaku: the round is over before it starts
            if k and m.hand(1) == Match(Settings(), base, 0).hand(1):
                continue  # nothing moved into the other hand
            bot = MasterBot(random.Random(g), rollouts=60, decide_rollouts=30)
            mine: list[str] = []
            seen: list[SeatView] = []
            for a in actions:
                if m.to_move == 0:
                    v = m.view(0)
                    seen.append(v)
                    mine.append(bot.choose(v).text)  # the bot decides; the replayed action is played
                m.apply(a)
            picks.append(mine)
            views.append(seen)
            if len(picks) == 3:
                break
        if len(picks) < 3:
            continue
        assert views[1] == views[0] and views[2] == views[0]
        assert picks[1] == picks[0] and picks[2] == picks[0]
        compared += len(picks[0])
    assert compared >= 60


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


def test_takes_a_sure_match_and_calls_when_shobu_surely_loses() -> None:
    from tests.bots.test_bots_strong import _tsukimi_decision  # the crafted Tsukimi decision of the strong tests

    sure = _tsukimi_decision(curtain_in_hand=False).replace(round=6, points=(22, 28))
    lost = _tsukimi_decision(curtain_in_hand=False).replace(round=6, points=(10, 40))
    for seed in range(3):
        assert MasterBot(random.Random(seed)).choose(sure) is SHOBU
        assert MasterBot(random.Random(seed)).choose(lost) is KOIKOI


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
