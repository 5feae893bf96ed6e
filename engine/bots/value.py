"""What a position in the match is worth: the chance of winning it.

The strong bot rolls a round out to its end and then needs to know what the
resulting pools are worth with the rounds still to play. :func:`match_value`
answers from a table computed once at import by dynamic programming over
(rounds left, who deals, my points), with a fixed model of how a round between
two sensible players ends: who wins it (the dealer, who moves first, a little
more often) and the score distribution (mostly 1 or 5 points, sometimes a
doubled or multiplied one). Payments are capped at what the loser has left and
a player at 0 loses at once, exactly as in the rules.

The value is the probability of winning the match, a draw counting one half.
"""

from __future__ import annotations

from ..match import STARTING_POINTS

__all__ = ["TOTAL_POINTS", "final_value", "match_value"]

TOTAL_POINTS = 2 * STARTING_POINTS
MAX_ROUNDS = 12

# How a round ends (measured on greedy against greedy, 17,000 rounds).
_P_DEALER_WINS = 0.525
_P_OTHER_WINS = 0.449
_P_DRAWN = 1.0 - _P_DEALER_WINS - _P_OTHER_WINS
# The winner's score before the cap (conditional on the round having a winner).
_SCORES: dict[int, float] = {
    1: 0.3224, 2: 0.0682, 3: 0.0158, 4: 0.0032, 5: 0.3884, 6: 0.0744, 7: 0.0319,
    16: 0.0292, 18: 0.0042, 20: 0.0239, 22: 0.0048, 24: 0.0024, 26: 0.0015,
    28: 0.0006, 30: 0.0022, 32: 0.0004, 34: 0.0005, 36: 0.0003, 40: 0.0002,
}  # fmt: skip
_NORM = sum(_SCORES.values())
_DIST: tuple[tuple[int, float], ...] = tuple((s, p / _NORM) for s, p in sorted(_SCORES.items()))


def final_value(points: int) -> float:
    """The value of my points once the match is over."""
    if points * 2 > TOTAL_POINTS:
        return 1.0
    if points * 2 == TOTAL_POINTS:
        return 0.5
    return 0.0


def _build() -> list[list[list[float]]]:
    # table[rounds_left][i_deal][points]
    n = TOTAL_POINTS + 1
    last = [final_value(p) for p in range(n)]
    table: list[list[list[float]]] = [[last, last]]
    for _ in range(MAX_ROUNDS):
        prev0, prev1 = table[-1]  # prev1: I deal the next round (I won this one)
        rows: list[list[float]] = []
        for i_deal in (0, 1):
            p_win = _P_DEALER_WINS if i_deal else _P_OTHER_WINS
            p_lose = _P_OTHER_WINS if i_deal else _P_DEALER_WINS
            prev_same = prev1 if i_deal else prev0
            row = [0.0] * n
            for p in range(1, n - 1):
                v = _P_DRAWN * prev_same[p]
                for s, q in _DIST:
                    up = p + min(s, TOTAL_POINTS - p)
                    down = p - min(s, p)
                    v += p_win * q * (1.0 if up == TOTAL_POINTS else prev1[up])
                    v += p_lose * q * (0.0 if down == 0 else prev0[down])
                row[p] = v
            row[TOTAL_POINTS] = 1.0
            rows.append(row)
        table.append(rows)
    return table


_TABLE = _build()


def match_value(points: int, rounds_left: int, i_deal: bool) -> float:
    """My chance of winning with ``points`` of the 50 and ``rounds_left`` rounds to play.

    ``i_deal``: whether I deal the next round. With no rounds left it is the
    final result; at 0 or 50 points the match is decided.
    """
    if points <= 0:
        return 0.0
    if points >= TOTAL_POINTS:
        return 1.0
    return _TABLE[min(rounds_left, MAX_ROUNDS)][1 if i_deal else 0][points]
