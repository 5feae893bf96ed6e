"""The strong bot: legal, deterministic, match-aware, and its fast playout equals the rules engine's."""

from __future__ import annotations

import itertools
import random

import pytest

from koikoi.engine import Match, Phase, SeatView, SeededDeal, Settings, card_from_id, deal_from_order
from koikoi.engine.actions import KOIKOI, SHOBU, Action, ActionKind, parse_action
from koikoi.engine.bots import BOTS, LEVELS, MasterBot, UnknownBot, make_bot
from koikoi.engine.bots.playout import Node, Root, Walk, pick_play, simulate
from koikoi.engine.bots.strong import (
    _SEARCH_DEAL,
    StrongBot,
    _playout_reference,
    _root_of,
    _round_value,
)
from koikoi.engine.bots.value import final_value, match_value
from koikoi.engine.deal import Deal
from koikoi.engine.events import KoiKoi
from koikoi.engine.selfplay import bot_rng, game_seed, play_match


def test_registry_and_levels() -> None:
    assert {"random", "greedy", "strong"} <= set(BOTS)
    assert LEVELS == {"easy": "random", "normal": "greedy", "strong": "master"}
    for name in LEVELS.values():
        assert make_bot(name, random.Random(0)).name == name
    with pytest.raises(UnknownBot):
        make_bot("grandmaster", random.Random(0))


def test_unknown_bot_error_survives_a_trip_to_another_process() -> None:
    """Pickled (as a worker process sends it back), the error keeps its name and its one message."""
    import pickle

    e = UnknownBot("grandmaster")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is UnknownBot and back.bot_name == "grandmaster" and str(back) == str(e)


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
    shobu, koikoi = StrongBot(random.Random(1)).koikoi_values(view, 60)
    assert 0.0 <= shobu <= 1.0 and 0.0 <= koikoi <= 1.0
    # The choice is the better of the two values (the same random stream: the same estimate).
    assert StrongBot(random.Random(1), decide_rollouts=60).choose(view) is (KOIKOI if koikoi > shobu else SHOBU)

    def at(points: int, rounds_left: int) -> SeatView:
        mine = (points, 50 - points)
        return view.replace(points=mine if seat == 0 else mine[::-1], round=view.settings.rounds - rounds_left)

    # Winning the match outright by shobu: the bot takes it.
    assert _decisions(at(49, 3)) == {SHOBU}
    # The last round, 1 to 49: shobu ends the match lost for certain, koi-koi may still turn it.
    last = at(1, 0)
    assert StrongBot(random.Random(1)).koikoi_values(last, 60)[0] == 0.0
    assert _decisions(last) == {KOIKOI}


# Crafted decisions (the deal of tests/engine/test_engine_match.py's showcase round). Seat 0 deals; after
# seven turns it has just made Tsukimi (moon + sake cup, 5 points) and must choose koi-koi or shobu. Its
# captures then hold 8 plains and 3 tane, and the opponent has captured only ume_warbler and ume_ribbon.
_DEALER = ["kiku_plain_1", "susuki_moon", "sakura_curtain", "botan_butterfly",
           "hagi_ribbon", "hagi_plain_1", "fuji_plain_1", "fuji_plain_2"]  # fmt: skip
_OTHER = ["ayame_bridge", "ayame_ribbon", "momiji_deer", "momiji_ribbon",
          "ume_warbler", "kiri_plain_1", "fuji_cuckoo", "hagi_plain_2"]  # fmt: skip
_TABLE = ["kiku_sake_cup", "susuki_plain_1", "sakura_ribbon", "sakura_plain_1",
          "botan_ribbon", "botan_plain_1", "botan_plain_2", "matsu_plain_1"]  # fmt: skip
_DECK = ["sakura_plain_2", "kiri_plain_2", "yanagi_lightning", "ume_ribbon", "matsu_plain_2",
         "fuji_ribbon", "yanagi_swallow", "ayame_plain_2", "hagi_boar"]  # fmt: skip
_TO_TSUKIMI = ["hagi_ribbon", "*sakura_ribbon", "ayame_bridge", "botan_butterfly",
               "ume_warbler", "kiku_plain_1", "momiji_deer", "susuki_moon"]  # fmt: skip


class _OneDeal:
    """Round 1 is the given deal; later rounds (which the search never reaches) a seeded one."""

    def __init__(self, order: list[int]) -> None:
        self.order = order
        self.later = SeededDeal(bytes(32))

    def deal(self, round_number: int, attempt: int) -> Deal:
        return deal_from_order(self.order) if round_number == 1 else self.later.deal(round_number, attempt)

    def first_dealer_cards(self, attempt: int) -> tuple[int, int]:
        return self.later.first_dealer_cards(attempt)


def _tsukimi_decision(curtain_in_hand: bool) -> SeatView:
    """Seat 0's view at its Tsukimi decision; without the curtain, seat 0 holds fuji_cuckoo in its place."""
    dealer, other = list(_DEALER), list(_OTHER)
    if not curtain_in_hand:
        dealer[dealer.index("sakura_curtain")], other[other.index("fuji_cuckoo")] = "fuji_cuckoo", "sakura_curtain"
    named = [card_from_id(x) for x in (*dealer, *other, *_TABLE, *_DECK)]
    m = Match(Settings(rounds=6), _OneDeal(named + [x for x in range(48) if x not in named]), 0)
    for text in _TO_TSUKIMI:
        m.apply(parse_action(text))
    view = m.view(0)
    assert view.phase is Phase.DECIDE and view.legal_actions == (KOIKOI, SHOBU)
    assert view.totals == (5, 0) and view.calls == (0, 0) and view.points == (25, 25) and view.round == 1
    assert (card_from_id("sakura_curtain") in view.hand) == curtain_in_hand
    assert card_from_id("sakura_plain_1") in view.table
    return view


def _decisions(view: SeatView) -> set[Action]:
    """The full-strength bot's choice under several random streams (a clear position does not hang on one)."""
    return {StrongBot(random.Random(seed)).choose(view) for seed in range(5)}


def test_koikoi_when_the_next_turn_surely_wins_the_match() -> None:
    """Round 1 of 6, 25 to 25. Shobu takes 5 points (30 to 20, five rounds to play). Koi-koi: all four cherry
    cards are in the bot's sight (the curtain in its hand, ribbon and a plain captured, a plain on the table),
    so no one else can take that plain; on its next turn the curtain takes it, Hanami + Tsukimi = 10, x2 for
    8+, x2 for the call = 40, which takes all 25 of the opponent's points and ends the match. Only a yaku of the
    opponent's within its single turn (from 2 captured cards) could stop it."""
    view = _tsukimi_decision(curtain_in_hand=True)
    assert _decisions(view) == {KOIKOI}


def test_koikoi_when_shobu_surely_loses_the_match() -> None:
    """The last round, 10 to 40: shobu ends the match at 15 to 35, lost for certain. Koi-koi is the only play
    that can still win (with the curtain elsewhere, a second yaku of 8+ doubled and multiplied is needed)."""
    view = _tsukimi_decision(curtain_in_hand=False).replace(round=6, points=(10, 40))
    assert _decisions(view) == {KOIKOI}


def test_shobu_when_it_surely_wins_the_match() -> None:
    """The last round, 22 to 28: shobu ends the match at 27 to 23, won for certain. After koi-koi the bot
    wins only if it makes another yaku before the hands run out (after a call, a round that ends without
    one pays nothing, and 22 to 28 loses), and the opponent may make one first."""
    view = _tsukimi_decision(curtain_in_hand=False).replace(round=6, points=(22, 28))
    assert _decisions(view) == {SHOBU}
    # The same cards with the match level and five rounds to play: the bot is not simply shy of koi-koi.
    assert _decisions(_tsukimi_decision(curtain_in_hand=True)) == {KOIKOI}


def test_master_takes_a_sure_match_and_calls_when_shobu_surely_loses() -> None:
    sure = _tsukimi_decision(curtain_in_hand=False).replace(round=6, points=(22, 28))
    lost = _tsukimi_decision(curtain_in_hand=False).replace(round=6, points=(10, 40))
    for seed in range(3):
        assert MasterBot(random.Random(seed)).choose(sure) is SHOBU
        assert MasterBot(random.Random(seed)).choose(lost) is KOIKOI


def test_value_table_is_sane() -> None:
    assert final_value(26) == 1.0 and final_value(25) == 0.5 and final_value(24) == 0.0
    assert match_value(0, 3, True) == 0.0 and match_value(50, 3, False) == 1.0
    for left in (1, 3, 6, 12):
        row = [match_value(p, left, False) for p in range(51)]
        assert all(a <= b + 1e-12 for a, b in itertools.pairwise(row))
        assert abs(match_value(25, left, False) + match_value(25, left, True) - 1.0) < 1e-9
    # More rounds left: a lead is worth less.
    assert match_value(35, 1, False) > match_value(35, 5, False) > 0.5


@pytest.mark.parametrize("call", [None, (0.6, 0.4), (1.0, 1.0)])
def test_fast_simulation_equals_the_rules_engine(call: tuple[float, float] | None) -> None:
    """The search's round simulation = Match.from_view + Match.apply + the rollout policy through the engine,
    with the strong bot's rollouts (both take the points at once) and with both players calling koi-koi
    (the master bot's)."""
    checked = 0
    calls = 0
    walked = 0
    kinds = set()
    for g in range(12 if call is None else 6):
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
                fast = simulate(root, opp, deck, a, random.Random(r), call)
                w = world.copy()
                n = len(w.history)
                w.apply(a)
                ended = len(w.history) != n
                if ended:
                    slow = _round_value(w, seat, w.settings.rounds)
                else:
                    played = len(w.log)
                    slow = _playout_reference(w, seat, w.settings.rounds, random.Random(r), call, root)
                    calls += sum(1 for e in w.log[played:] if isinstance(e, KoiKoi))  # called in the rollout
                assert fast == slow, (view, a)
                checked += 1
                kinds.add(a.kind)
                if call is not None and not ended:
                    walked += _walks_agree(view, root, world, opp, deck, a, call, r)
            acts = m.legal_actions()
            m.apply(acts[int(rng.random() * len(acts))])
    assert checked > (500 if call is None else 250)
    assert kinds == {ActionKind.PLAY, ActionKind.CHOOSE, ActionKind.KOIKOI}
    assert (calls == 0) == (call is None) and (call is None or calls > 50)
    assert (walked == 0) == (call is None) and (call is None or walked > 250)


def _walks_agree(
    view: SeatView,
    root: Root,
    world: Match,
    opp: int,
    deck: tuple[int, ...],
    a: Action,
    call: tuple[float, float],
    r: float,
) -> int:
    """Rollouts of ``a`` through a search tree (Walk), fast and through the engine, on twin trees: equal values,
    equal trees; every play the tree makes is legal (Match.apply raises otherwise). The plays it made. Both
    with the opponent's best reply searched and with the opponent modelled by the rollout policy."""
    made = 0
    for model in (False, True):
        trees = (Node(), Node())
        for k in range(6):
            fast_rng, slow_rng = random.Random(r + k), random.Random(r + k)
            fast_walk = Walk(trees[0], view.seat, fast_rng, 0.35, model)
            slow_walk = Walk(trees[1], view.seat, slow_rng, 0.35, model)
            fast = simulate(root, opp, deck, a, fast_rng, call, fast_walk)
            w = world.copy()
            w.apply(a)
            slow = _playout_reference(w, view.seat, w.settings.rounds, slow_rng, call, root, slow_walk)
            assert fast == slow, (view, a, k, model)
            fast_walk.backup(fast)
            slow_walk.backup(slow)
            made += len(fast_walk.path) - 1
        assert _shape(trees[0]) == _shape(trees[1]) and trees[0].n == 6
        _check_counts(trees[0])
    return made


def test_walk_models_the_opponent_by_the_rollout_policy() -> None:
    """Walk(model=True): the other seat's play in the tree is the rollout policy's, with the same random
    numbers, recorded as a node (key card * 64 + target + 1) without leaving the tree; the searching seat's
    play new to the tree still leaves it. Without the model, a play new to the tree leaves it at once."""
    m = Match(Settings(rounds=6), SeededDeal(bytes([7]) * 32), 0)
    me = m.to_move
    hand, table, caps = m.hand(1 - me), m.table, m.captures(1 - me)
    for seed in range(40):
        expected = pick_play(hand, table, caps, random.Random(seed))
        root = Node()
        walk = Walk(root, me, random.Random(seed), 0.35, True)
        assert walk.play(1 - me, hand, table, caps) == expected
        c, t = expected
        assert (walk.inside, list(root.children), walk.path[-1]) == (True, [c * 64 + t + 1], walk.node)
        walk.play(me, m.hand(me), table, m.captures(me))
        assert (walk.inside, len(walk.path)) == (False, 3)
        searched = Walk(Node(), me, random.Random(seed), 0.35)
        searched.play(1 - me, hand, table, caps)
        assert (searched.inside, len(searched.path)) == (False, 2)


def _check_counts(node: Node) -> None:
    """A node's rollouts go on through at most one child each; a child is chosen only where its play was legal."""
    assert sum(c.n for c in node.children.values()) <= node.n
    for child in node.children.values():
        assert 1 <= child.n <= child.avail
        _check_counts(child)


def _shape(node: Node) -> tuple[object, ...]:
    return (node.n, node.w, node.avail, tuple(sorted((k, _shape(c)) for k, c in node.children.items())))


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
