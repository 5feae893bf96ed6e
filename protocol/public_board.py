"""The board a watcher is shown (spec/watching.md §4): :class:`PublicBoard`, the public cards and counts of a
match's line, and :func:`public_board`, which reads them off a referee.

Sans-IO. Only what both players see goes in: the table, both captures, a drawn card waiting for its
capture, the counts of the hands and the deck, the pools, the yaku in each seat's captures. Never a card in
a hand or the deck: an observer's match (sealed mode) holds none, and a full match's (shared mode) are
not read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..engine.cards import CARD_IDS
from ..engine.match import STARTING_POINTS, Phase
from .messages import MsgType
from .referee import Outcome, Referee
from .watch_events import MatchSettings, Narration, WatchEvent, card_ids

__all__ = ["PublicBoard", "public_board"]

_PLAYING = frozenset({Phase.PLAY, Phase.CHOOSE, Phase.DECIDE, Phase.DRAW})
"""The phases in which the match waits for a player's decision or its drawn card."""


@dataclass(frozen=True, slots=True)
class PublicBoard:
    """The match as a watcher sees it, public cards only (card ids are the engine's).

    ``round``: 0 before the match begins. ``turn``: the seat whose decision the match waits for (None while
    a round is being dealt, and once the play is over). ``waiting``: the line's next message, who sends it
    and its type (None once the line is finished). ``table``, ``captures``, ``hand_counts``, ``deck_count``,
    ``drawn`` (a drawn card waiting for its capture to be chosen), ``yaku`` (per seat, ``(id, points)`` in
    its captures), ``koikoi_calls``: this round's, empty while a round is being dealt. ``points``: the pools
    of the rounds that count. ``last_events``: the newest events, oldest first. ``ending``: the line's
    outcome once it has one."""

    settings: MatchSettings | None
    players: tuple[str | None, str | None]
    round: int
    dealer: int | None
    turn: int | None
    waiting: tuple[int, MsgType] | None
    table: tuple[str, ...]
    captures: tuple[tuple[str, ...], tuple[str, ...]]
    hand_counts: tuple[int, int]
    deck_count: int
    drawn: str | None
    points: tuple[int, int]
    yaku: tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]
    koikoi_calls: tuple[int, int]
    last_events: tuple[WatchEvent, ...]
    ending: Outcome | None

    def to_json(self) -> dict[str, Any]:
        o = self.ending
        return {
            "settings": self.settings.to_json() if self.settings is not None else None,
            "players": list(self.players),
            "round": self.round,
            "dealer": self.dealer,
            "turn": self.turn,
            "waiting": None if self.waiting is None else {"seat": self.waiting[0], "type": self.waiting[1].label},
            "table": list(self.table),
            "captures": [list(c) for c in self.captures],
            "hand_counts": list(self.hand_counts),
            "deck_count": self.deck_count,
            "drawn": self.drawn,
            "points": list(self.points),
            "yaku": [[{"id": y, "points": p} for y, p in seat] for seat in self.yaku],
            "koikoi_calls": list(self.koikoi_calls),
            "last_events": [ev.to_json() for ev in self.last_events],
            "ending": None
            if o is None
            else {"status": o.status.value, "code": o.code, "message": o.message, "winner": o.winner, "loser": o.loser},
        }


def public_board(
    line: Referee,
    settings: MatchSettings | None,
    players: tuple[str | None, str | None],
    narration: Narration,
    last: Sequence[WatchEvent],
) -> PublicBoard:
    """The board of ``line`` now (``narration``: the spectator's, for this round's calls)."""
    counted = line.verified_history
    points = counted[-1].points if counted else (STARTING_POINTS, STARTING_POINTS)
    m = line.match
    exp = line.expected()
    if m is None or m.phase is Phase.DEAL:  # no round on the table (yet, or between two rounds)
        round_no = m.round if m is not None else 0
        dealer = m.dealer if m is not None else None
        return PublicBoard(
            settings, players, round_no, dealer, None, exp, (), ((), ()), (0, 0), 0, None, (points[0], points[1]),
            ((), ()), (0, 0), tuple(last), line.outcome(),
        )  # fmt: skip
    turn = m.to_move if m.phase in _PLAYING else None
    drawn = m.pending_draw
    return PublicBoard(
        settings,
        players,
        m.round,
        m.dealer,
        turn,
        exp,
        card_ids(m.table),
        (card_ids(m.captures(0)), card_ids(m.captures(1))),
        (m.hand_count(0), m.hand_count(1)),
        m.deck_count,
        CARD_IDS[drawn] if drawn is not None else None,
        (points[0], points[1]),
        (tuple((y.value, p) for y, p in m.yaku(0)), tuple((y.value, p) for y, p in m.yaku(1))),
        (narration.calls[0], narration.calls[1]),
        tuple(last),
        line.outcome(),
    )
