"""Properties that hold in every state of every game (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from koikoi.engine import (
    CHOOSE,
    KOIKOI,
    PLAY,
    PLAY_AT,
    SHOBU,
    Match,
    Phase,
    SeededDeal,
    Settings,
    from_code,
    parse_action,
)

ALL = (1 << 48) - 1


def check_invariants(m: Match) -> None:
    hands = m.hand(0) | m.hand(1)
    piles = [m.hand(0), m.hand(1), m.table, m.captures(0), m.captures(1)]
    deck = set(m._deck[m._deck_pos :])
    pending = m.pending_draw
    union = 0
    count = 0
    for p in piles:
        assert union & p == 0, "a card is in two places"
        union |= p
        count += p.bit_count()
    for x in deck | ({pending} if pending is not None else set()):
        assert not union >> x & 1, "a deck card is also in play"
        union |= 1 << x
    count += len(deck) + (pending is not None)
    assert union == ALL and count == 48, "the 48 cards are not all there exactly once"
    assert m.points[0] + m.points[1] == 50
    assert min(m.points) >= 0
    if not m.is_over:
        assert m.legal_actions(), "a live round must offer an action"
        assert hands or m.phase in (Phase.CHOOSE, Phase.DECIDE)
    else:
        assert m.legal_actions() == []


game = st.tuples(
    st.binary(min_size=32, max_size=32),
    st.sampled_from([6, 12]),
    st.booleans(),
    st.integers(0, 1),
    st.lists(st.integers(0, 2**16), min_size=400, max_size=400),
)


def play(seed: bytes, rounds: int, double: bool, dealer: int, picks: list[int]) -> tuple[Match, list[bytes]]:
    m = Match(Settings(rounds, double), SeededDeal(seed), dealer)
    hashes = [m.state_hash()]
    i = 0
    while not m.is_over:
        check_invariants(m)
        legal = m.legal_actions()
        m.apply(legal[picks[i % len(picks)] % len(legal)])
        hashes.append(m.state_hash())
        i += 1
        assert i < 12 * 40, "a game must end"
    check_invariants(m)
    return m, hashes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game)
def test_every_state_conserves_cards_and_points_and_every_game_ends(g: tuple[bytes, int, bool, int, list[int]]) -> None:
    m, _ = play(*g)
    assert m.is_over
    assert len(m.history) <= g[1]
    assert len(m.history) == g[1] or 0 in m.points


@settings(max_examples=25, deadline=None)
@given(game)
def test_same_seed_and_actions_give_same_states_and_hashes(g: tuple[bytes, int, bool, int, list[int]]) -> None:
    a, ha = play(*g)
    b, hb = play(*g)
    assert ha == hb
    assert a.history == b.history and a.log == b.log


@settings(max_examples=25, deadline=None)
@given(game)
def test_copy_is_independent(g: tuple[bytes, int, bool, int, list[int]]) -> None:
    seed, rounds, double, dealer, picks = g
    m = Match(Settings(rounds, double), SeededDeal(seed), dealer)
    for p in picks[:10]:
        if m.is_over:
            break
        legal = m.legal_actions()
        m.apply(legal[p % len(legal)])
    snap = (m.public_state(), m.hand(0), m.hand(1))
    twin = m.copy()
    while not twin.is_over:
        twin.apply(twin.legal_actions()[0])
    assert (m.public_state(), m.hand(0), m.hand(1)) == snap


def test_notation_round_trips_for_every_action() -> None:
    actions = [*PLAY, *CHOOSE, KOIKOI, SHOBU, *(a for row in PLAY_AT for a in row if a is not None)]
    assert len({a.code for a in actions}) == len(actions)
    assert len({a.text for a in actions}) == len(actions)
    for a in actions:
        assert parse_action(a.text) is a
        assert from_code(a.code) is a
