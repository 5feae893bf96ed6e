"""The match: a deterministic state machine for this game's Koi-Koi.

A :class:`Match` holds the whole match: the pools, the round being played, the
rounds already played. It moves only when :meth:`Match.apply` is given a legal
:class:`~koikoi.engine.actions.Action`; an illegal one raises
:class:`IllegalAction`, naming the rule broken, and changes nothing. Cards
enter only from the :class:`~koikoi.engine.deal.DealSource` given at the start.

Turn structure (``phase``):

* ``PLAY``: the player to move plays a hand card. It captures its one match,
  all three, or the chosen one of two; with none it goes to the table. Then the
  top deck card is turned the same way; if it matches two table cards the
  phase becomes ``CHOOSE``.
* ``CHOOSE``: the player picks which of the two the drawn card captures.
* ``DECIDE``: at the end of a turn, when the player has a new yaku (before
  their own koi-koi) or a higher total (after it), they call ``koikoi`` or
  ``shobu``. On the last turn (both hands empty) only ``shobu`` is legal.

A round ends with shōbu (the caller wins), a dealt hand yaku, or both hands
empty (a drawn round: nobody pays, the dealer deals again). The match ends
when a pool reaches 0 or after the last round.

**Hidden cards** (sealed mode, spec/rules.md §7.1). ``Match.for_seat(settings,
seat, first_dealer)`` plays the same rules for a seat that sees only its own
hand and the public cards. It waits in three more phases, fed one message at a
time::

    m = Match.for_seat(settings, seat=1, first_dealer=0)
    m.begin_deal(my_hand, table)        # DEAL: each deal attempt (a redeal waits again)
    m.claim_hand_yaku(0, None)          # CLAIM: the opponent's claim (its shown hand, or None)
    m.apply(PLAY[card], 0)              # the opponent plays a card it held unseen
    m.reveal_draw(drawn)                # DRAW: the card turned after every play
    m.apply(m.legal_actions()[0], 1)    # this seat's own decisions, as ever

A full match is the same machine fed by its deal source (``_start_round``
takes each attempt as ``begin_deal`` does, and it turns the deck itself).
``public_state()`` and ``state_hash()`` use only what both seats see, so a
seat-side match and the full one hash alike.
"""

from __future__ import annotations

import enum
import hashlib
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar, Final

from ..errors import LocalError
from .actions import CHOOSE, KOIKOI, PLAY, PLAY_AT, SHOBU, Action, ActionKind
from .cards import CARD_IDS, CARD_MONTH_MASK, CARDS, Card, cards_of, month_counts
from .cards import PLAINS as _PLAINS
from .cards import RIBBONS as _RIBBONS
from .cards import TANE as _TANE
from .deal import Deal, DealSource, SeededDeal, needs_redeal
from .events import (
    Chosen,
    Dealt,
    Drawn,
    DrawnChoice,
    Event,
    HandYaku,
    KoiKoi,
    MatchEnded,
    Played,
    Redeal,
    RoundEnded,
    Shobu,
)
from .yaku import (
    _KASU_PTS,
    _LIGHT_VIEW,
    _LIGHT_VIEW_MASK,
    _RIBBON_PTS,
    _TANE_PTS,
    Breakdown,
    Yaku,
    count_hand_yaku,
    count_round,
    hand_yaku,
    total_points,
    yaku_of,
)

__all__ = [
    "STARTING_POINTS",
    "ActionRule",
    "IllegalAction",
    "Match",
    "Phase",
    "RoundEnd",
    "RoundResult",
    "SeatView",
    "Settings",
    "choose_first_dealer",
    "first_dealer_from_cards",
    "perft",
]

STARTING_POINTS = 25


class Phase(enum.IntEnum):
    PLAY = 0
    CHOOSE = 1
    DECIDE = 2
    OVER = 3
    DEAL = 4  # a seat-side match waits for begin_deal
    CLAIM = 5  # a seat-side match waits for the opponent's hand-yaku claim
    DRAW = 6  # a seat-side match waits for reveal_draw


_PLAY: Final = 0
_CHOOSE: Final = 1
_DECIDE: Final = 2
_OVER: Final = 3
_DEAL: Final = 4
_CLAIM: Final = 5
_DRAW: Final = 6
_ALL: Final = (1 << 48) - 1
_UNSEEN_HAND: Final = 0xFF << 48  # a hand of eight cards this seat cannot see: bits past the 48 cards
_UNSEEN_DECK: Final = (-1,) * 24  # the deck, position by position: -1 until revealed
_OBSERVER: Final = 2  # ``_hidden`` of an observer's match (for_observer): neither hand is seen
_K_PLAY: Final = ActionKind.PLAY
_K_CHOOSE: Final = ActionKind.CHOOSE
_K_KOIKOI: Final = ActionKind.KOIKOI
_K_SHOBU: Final = ActionKind.SHOBU

_N1: Final = 0x111111111111  # bit 0 of every month


def _pair_months(table: int) -> int:
    """All four cards of every month that has exactly two cards in ``table``."""
    c = month_counts(table)
    return ((c >> 1) & ~c & ~(c >> 2) & _N1) * 15


def _play_table(shift: int) -> tuple[tuple[Action, ...], ...]:
    """For each 12-bit chunk of a hand mask, the plays of its cards (no capture choice)."""
    return tuple(tuple(PLAY[shift + i] for i in range(12) if (chunk >> i) & 1) for chunk in range(4096))


_PLAY_T0: Final = _play_table(0)
_PLAY_T1: Final = _play_table(12)
_PLAY_T2: Final = _play_table(24)
_PLAY_T3: Final = _play_table(36)


class ActionRule(StrEnum):
    """The rule an illegal action, or a deal the match cannot take, breaks (:attr:`IllegalAction.rule`): the
    value is its name in spec/rules.md. ``not_disclosed`` is a sealed line's deal source's (a round whose
    deal was never disclosed)."""

    BAD_CLAIM = "bad_claim"
    BAD_DEAL = "bad_deal"
    CARD_ALREADY_SEEN = "card_already_seen"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    CHOOSE_CAPTURE = "choose_capture"
    DECIDE = "decide"
    FALSE_HAND_YAKU = "false_hand_yaku"
    LAST_TURN_SHOBU_ONLY = "last_turn_shobu_only"
    MATCH_OVER = "match_over"
    NO_CAPTURE_CHOICE = "no_capture_choice"
    NO_CLAIM_DUE = "no_claim_due"
    NO_DEAL_DUE = "no_deal_due"
    NO_DEAL_SOURCE = "no_deal_source"
    NO_DRAW_DUE = "no_draw_due"
    NOT_A_CARD = "not_a_card"
    NOT_A_MATCH = "not_a_match"
    NOT_DISCLOSED = "not_disclosed"
    NOT_YOUR_TURN = "not_your_turn"
    PLAY_A_CARD = "play_a_card"
    WAITING_FOR_CARDS = "waiting_for_cards"


class IllegalAction(LocalError, ValueError):
    """An action the rules do not allow now. ``rule`` names the rule broken."""

    def __init__(self, rule: ActionRule, message: str) -> None:
        self.rule = rule
        self.message = message
        super().__init__(f"{rule}: {message}")


@dataclass(frozen=True, slots=True)
class Settings:
    """A room's rules: 6 or 12 rounds, and whether a base of 8+ is doubled."""

    rounds: int = 6
    double_at_8: bool = True

    def __post_init__(self) -> None:
        if self.rounds not in (6, 12):
            raise ValueError(f"rounds must be 6 or 12, not {self.rounds!r}")
        if not isinstance(self.double_at_8, bool):
            raise ValueError("double_at_8 must be true or false")

    @property
    def doubling_label(self) -> str:
        return "×2 at 8+" if self.double_at_8 else "No ×2 at 8+"


class RoundEnd(enum.Enum):
    SHOBU = "shobu"
    HAND_YAKU = "hand_yaku"
    DRAWN = "drawn"


@dataclass(frozen=True, slots=True)
class RoundResult:
    """How one round ended. ``winner`` is None for a drawn round; ``points`` are the pools after it."""

    round: int
    dealer: int
    end: RoundEnd
    winner: int | None
    breakdown: Breakdown | None
    payment: int
    points: tuple[int, int]
    redeals: int

    @property
    def yaku(self) -> tuple[tuple[Yaku, int], ...]:
        return self.breakdown.yaku if self.breakdown else ()

    def to_json(self) -> dict[str, object]:
        """The round as plain JSON values (the shape used by the vectors and the bot protocol)."""
        return {
            "round": self.round,
            "dealer": self.dealer,
            "end": self.end.value,
            "winner": self.winner,
            "yaku": [{"id": y.value, "points": p} for y, p in self.yaku],
            "payment": self.payment,
            "points": list(self.points),
        }


_PHASES: Final = (Phase.PLAY, Phase.CHOOSE, Phase.DECIDE, Phase.OVER, Phase.DEAL, Phase.CLAIM, Phase.DRAW)


def _as_int(v: object) -> int:
    if isinstance(v, int):  # Phase and bool are ints too
        return int(v)
    raise TypeError(f"expected a whole number, not {v!r}")


class SeatView:
    """What one seat may see. Nothing here reveals the other hand or the deck order.

    An immutable snapshot taken by :meth:`Match.view`. It holds masks and
    counts, and builds its tuples (``hand``, ``table``, ``captures``,
    ``history``, …) when they are read, so making a view for every decision
    costs almost nothing (self-play makes one per decision). ``hand_mask``,
    ``table_mask`` and ``captures_mask(seat)`` give the same cards as masks.
    Views compare equal when they show the same things; :meth:`replace`
    makes a changed copy (tests build positions with it). It holds no
    reference to the match.
    """

    __slots__ = (
        "_c0",
        "_c1",
        "_cd0",
        "_cd1",
        "_cp0",
        "_cp1",
        "_hand",
        "_hist",
        "_hist_n",
        "_p0",
        "_p1",
        "_pending",
        "_phase",
        "_t0",
        "_t1",
        "_table",
        "dealer",
        "deck_count",
        "last_turn",
        "legal_actions",
        "opponent_hand_count",
        "round",
        "seat",
        "settings",
        "to_move",
        "winner",
    )

    seat: Final[int]
    settings: Final[Settings]
    round: Final[int]
    dealer: Final[int]
    to_move: Final[int]
    opponent_hand_count: Final[int]
    deck_count: Final[int]
    legal_actions: Final[tuple[Action, ...]]
    winner: Final[int | None]
    last_turn: Final[bool]

    def __init__(
        self,
        seat: int,
        settings: Settings,
        round: int,
        dealer: int,
        p0: int,
        p1: int,
        phase: int,
        to_move: int,
        hand: int,
        opponent_hand_count: int,
        table: int,
        cap0: int,
        cap1: int,
        deck_count: int,
        pending: int,
        calls0: int,
        calls1: int,
        tot0: int,
        tot1: int,
        called0: int,
        called1: int,
        legal_actions: tuple[Action, ...],
        history: list[RoundResult],
        history_count: int,
        winner: int | None,
        last_turn: bool,
    ) -> None:
        """Positional and internal: views come from :meth:`Match.view` (or :meth:`replace`)."""
        self.seat = seat
        self.settings = settings
        self.round = round
        self.dealer = dealer
        self._p0 = p0
        self._p1 = p1
        self._phase = phase
        self.to_move = to_move
        self._hand = hand
        self.opponent_hand_count = opponent_hand_count
        self._table = table
        self._cp0 = cap0
        self._cp1 = cap1
        self.deck_count = deck_count
        self._pending = pending
        self._c0 = calls0
        self._c1 = calls1
        self._t0 = tot0
        self._t1 = tot1
        self._cd0 = called0
        self._cd1 = called1
        self.legal_actions = legal_actions
        self._hist = history  # the match's list: only ever appended to, so its first _hist_n never change
        self._hist_n = history_count
        self.winner = winner
        self.last_turn = last_turn

    @property
    def points(self) -> tuple[int, int]:
        return (self._p0, self._p1)

    @property
    def phase(self) -> Phase:
        return _PHASES[self._phase]

    @property
    def hand(self) -> tuple[Card, ...]:
        return tuple(cards_of(self._hand))

    @property
    def hand_mask(self) -> int:
        return self._hand

    @property
    def table(self) -> tuple[Card, ...]:
        return tuple(cards_of(self._table))

    @property
    def table_mask(self) -> int:
        return self._table

    @property
    def captures(self) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
        return (tuple(cards_of(self._cp0)), tuple(cards_of(self._cp1)))

    def captures_mask(self, seat: int) -> int:
        return self._cp1 if seat else self._cp0

    @property
    def pending_draw(self) -> Card | None:
        return None if self._pending < 0 else self._pending

    @property
    def calls(self) -> tuple[int, int]:
        return (self._c0, self._c1)

    @property
    def multiplier(self) -> int:
        return 1 + self._c0 + self._c1

    @property
    def totals(self) -> tuple[int, int]:
        return (self._t0, self._t1)

    @property
    def called_totals(self) -> tuple[int, int]:
        return (self._cd0, self._cd1)

    @property
    def history(self) -> tuple[RoundResult, ...]:
        return tuple(self._hist[: self._hist_n])

    @property
    def my_turn(self) -> bool:
        return self.to_move == self.seat and self._phase != _OVER

    FIELDS: ClassVar[tuple[str, ...]] = (
        "seat",
        "settings",
        "round",
        "dealer",
        "points",
        "phase",
        "to_move",
        "hand",
        "opponent_hand_count",
        "table",
        "captures",
        "deck_count",
        "pending_draw",
        "calls",
        "multiplier",
        "totals",
        "called_totals",
        "legal_actions",
        "history",
        "winner",
        "last_turn",
    )
    """The public fields, in the order they are shown."""

    def _key(self) -> tuple[object, ...]:
        return (
            self.seat,
            self.settings,
            self.round,
            self.dealer,
            self._p0,
            self._p1,
            self._phase,
            self.to_move,
            self._hand,
            self.opponent_hand_count,
            self._table,
            self._cp0,
            self._cp1,
            self.deck_count,
            self._pending,
            self._c0,
            self._c1,
            self._t0,
            self._t1,
            self._cd0,
            self._cd1,
            self.legal_actions,
            self.history,
            self.winner,
            self.last_turn,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SeatView) and self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in SeatView.FIELDS)
        return f"SeatView({inner})"

    def replace(self, **changes: object) -> SeatView:
        """A copy with some public fields changed (cards as tuples, pairs as tuples), e.g.
        ``view.replace(hand=(0, 4), round=6)``. Raises ``TypeError`` for an unknown field."""
        values: dict[str, object] = {name: getattr(self, name) for name in SeatView.FIELDS}
        for name in changes:
            if name not in values or name == "multiplier":
                raise TypeError(f"SeatView has no field {name!r} to change")
        values.update(changes)

        def mask(name: str) -> int:
            cards = values[name]
            assert isinstance(cards, tuple)
            return sum(1 << _as_int(c) for c in cards)

        def pair(name: str) -> tuple[int, int]:
            v = values[name]
            assert isinstance(v, tuple) and len(v) == 2
            return (_as_int(v[0]), _as_int(v[1]))

        caps = values["captures"]
        assert isinstance(caps, tuple) and len(caps) == 2
        pending = values["pending_draw"]
        phase = values["phase"]
        settings = values["settings"]
        legal = values["legal_actions"]
        history = values["history"]
        winner = values["winner"]
        assert isinstance(settings, Settings) and isinstance(legal, tuple) and isinstance(history, tuple)
        p, c, t, cd = pair("points"), pair("calls"), pair("totals"), pair("called_totals")
        return SeatView(
            _as_int(values["seat"]),
            settings,
            _as_int(values["round"]),
            _as_int(values["dealer"]),
            p[0],
            p[1],
            _as_int(phase),
            _as_int(values["to_move"]),
            mask("hand"),
            _as_int(values["opponent_hand_count"]),
            mask("table"),
            sum(1 << _as_int(x) for x in caps[0]),
            sum(1 << _as_int(x) for x in caps[1]),
            _as_int(values["deck_count"]),
            -1 if pending is None else _as_int(pending),
            c[0],
            c[1],
            t[0],
            t[1],
            cd[0],
            cd[1],
            legal,
            list(history),
            len(history),
            None if winner is None else _as_int(winner),
            bool(values["last_turn"]),
        )


def first_dealer_from_cards(a: Card, b: Card) -> int | None:
    """Seat 0 turned ``a``, seat 1 ``b``: the earlier month deals; within a month the
    higher value; two plains of one month → None (turn again)."""
    ia, ib = CARDS[a], CARDS[b]
    if ia.month != ib.month:
        return 0 if ia.month < ib.month else 1
    if ia.value != ib.value:
        return 0 if ia.value > ib.value else 1
    return None


def choose_first_dealer(source: SeededDeal) -> tuple[int, list[tuple[int, int]]]:
    """The first dealer by turning cards (spec/rules.md): each seat turns a card of ``source``'s
    first-dealer draws (:meth:`~koikoi.engine.deal.SeededDeal.first_dealer_cards`) and
    :func:`first_dealer_from_cards` decides; two plains of one month: turn again. Returns the dealer
    and every pair turned."""
    turned: list[tuple[int, int]] = []
    attempt = 0
    while True:
        a, b = source.first_dealer_cards(attempt)
        turned.append((a, b))
        d = first_dealer_from_cards(a, b)
        if d is not None:
            return d, turned
        attempt += 1


class Match:
    """A whole match: 6 or 12 rounds from two pools of 25 points.

    ``Match(settings, source, first_dealer)`` deals round 1 at once. Then loop:
    ``legal_actions()``, ``apply(action)``, until ``is_over``.
    """

    __slots__ = (
        "_attempt",
        "_called",
        "_calls",
        "_caps",
        "_captured",
        "_claim",
        "_claim_hand",
        "_claimed",
        "_deck",
        "_deck_pos",
        "_hands",
        "_hidden",
        "_paired",
        "_pending",
        "_phase",
        "_table",
        "_to_move",
        "_totals",
        "dealer",
        "history",
        "log",
        "points",
        "round",
        "settings",
        "source",
        "winner",
    )

    settings: Settings
    source: DealSource
    points: list[int]
    round: int
    dealer: int
    history: list[RoundResult]
    log: list[Event]
    winner: int | None
    _hands: list[int]
    _table: int
    _caps: list[int]
    _deck: tuple[Card, ...]
    _deck_pos: int
    _to_move: int
    _phase: int
    _pending: int
    _calls: list[int]
    _called: list[int]
    _totals: list[int]
    _attempt: int
    _paired: int
    _hidden: int
    _claim: list[Yaku | None]
    _claim_hand: list[int]
    _claimed: int
    _captured: bool

    def __init__(self, settings: Settings, source: DealSource, first_dealer: int, *, deal: bool = True) -> None:
        if first_dealer not in (0, 1):
            raise ValueError("first_dealer must be 0 or 1")
        self.settings = settings
        self.source = source
        self.points = [STARTING_POINTS, STARTING_POINTS]
        self.round = 1
        self.dealer = first_dealer
        self.history = []
        self.log = []
        self.winner = None
        self._hands = [0, 0]
        self._table = 0
        self._caps = [0, 0]
        self._deck = ()
        self._deck_pos = 0
        self._to_move = first_dealer
        self._phase = _PLAY
        self._pending = -1
        self._calls = [0, 0]
        self._called = [0, 0]
        self._totals = [0, 0]
        self._attempt = 0
        self._paired = 0
        self._hidden = -1
        self._claim = [None, None]
        self._claim_hand = [0, 0]
        self._claimed = 0
        self._captured = False
        if deal:  # deal=False: an empty shell that copy() and from_view() fill in
            self._start_round()

    # -- queries ---------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return Phase(self._phase)

    @property
    def to_move(self) -> int:
        """The seat whose decision it is (meaningless once the match is over)."""
        return self._to_move

    @property
    def is_over(self) -> bool:
        return self._phase == _OVER

    @property
    def multiplier(self) -> int:
        return 1 + self._calls[0] + self._calls[1]

    @property
    def table(self) -> int:
        return self._table

    def captures(self, seat: int) -> int:
        return self._caps[seat]

    def hand(self, seat: int) -> int:
        """A seat's hand as a mask. Only for the seat itself, a referee, or tests: bots get a view.
        (In a seat-side match the opponent's hand is unseen: 0 here, ``hand_count`` says how many.)"""
        return self._hands[seat] & _ALL

    def hand_count(self, seat: int) -> int:
        return self._hands[seat].bit_count()

    @property
    def seat(self) -> int | None:
        """The seat a seat-side match plays for (:meth:`for_seat`); None when it sees every card."""
        return None if self._hidden < 0 or self._hidden == _OBSERVER else 1 - self._hidden

    @property
    def deck_count(self) -> int:
        return len(self._deck) - self._deck_pos

    @property
    def pending_draw(self) -> Card | None:
        return self._pending if self._phase == _CHOOSE else None

    def total(self, seat: int) -> int:
        """The seat's yaku points this round, by this game's counting."""
        return self._totals[seat]

    def called_total(self, seat: int) -> int:
        """The seat's total when it last called koi-koi this round (0 before any call): it may
        stop again only above this."""
        return self._called[seat]

    @property
    def last_turn(self) -> bool:
        return self._hands[0] == 0 and self._hands[1] == 0

    def legal_actions(self) -> list[Action]:
        """Every legal action for the player to move (empty once the match is over)."""
        ph = self._phase
        if ph == _PLAY:
            h = self._hands[self._to_move]
            if h > _ALL:  # the unseen hand of a seat-side match's opponent: its moves are not known here
                return []
            pm = self._paired
            if pm:
                pm = self._paired = _pair_months(self._table)
            free = h & ~pm
            out = [
                *_PLAY_T0[free & 4095],
                *_PLAY_T1[(free >> 12) & 4095],
                *_PLAY_T2[(free >> 24) & 4095],
                *_PLAY_T3[free >> 36],
            ]
            h &= pm
            if h:
                t = self._table
                while h:
                    low = h & -h
                    c = low.bit_length() - 1
                    h ^= low
                    m = t & CARD_MONTH_MASK[c]
                    row = PLAY_AT[c]
                    lo = m & -m
                    out.append(row[lo.bit_length() - 1])  # type: ignore[arg-type]
                    out.append(row[(m ^ lo).bit_length() - 1])  # type: ignore[arg-type]
            return out
        if ph == _CHOOSE:
            m = self._table & CARD_MONTH_MASK[self._pending]
            lo = m & -m
            return [CHOOSE[lo.bit_length() - 1], CHOOSE[(m ^ lo).bit_length() - 1]]
        if ph == _DECIDE:
            if self._hands[0] == 0 and self._hands[1] == 0:
                return [SHOBU]
            return [KOIKOI, SHOBU]
        return []

    def is_legal(self, action: Action) -> bool:
        return action in self.legal_actions()

    # -- the rules -------------------------------------------------------

    def apply(self, action: Action, seat: int | None = None) -> None:
        """Play ``action`` for the player to move (checked against ``seat`` when given).

        Raises :class:`IllegalAction` and leaves the match unchanged when the
        rules do not allow it.
        """
        ph = self._phase
        if ph == _OVER:
            raise IllegalAction(ActionRule.MATCH_OVER, "the match is over: no more actions")
        if ph > _OVER:
            raise IllegalAction(ActionRule.WAITING_FOR_CARDS, f"no action now: the match waits for {_WAITING[ph]}")
        mover = self._to_move
        if seat is not None and seat != mover:
            raise IllegalAction(ActionRule.NOT_YOUR_TURN, f"it is seat {mover}'s turn, not seat {seat}'s")
        kind = action.kind
        if ph == _PLAY:
            if kind is not _K_PLAY:
                raise IllegalAction(ActionRule.PLAY_A_CARD, f"{action} is not allowed now: play a card from your hand")
            c = action.card
            bit = 1 << c
            hand = self._hands[mover]
            if not hand & bit:
                if mover != self._hidden and self._hidden != _OBSERVER:
                    raise IllegalAction(
                        ActionRule.CARD_NOT_IN_HAND, f"{CARD_IDS[c]} is not in the hand of the player to move"
                    )
                self._check_unseen(c)  # the opponent plays an unseen card: it is revealed now
                hand = (hand ^ (1 << (hand.bit_length() - 1))) | bit
            m = self._table & CARD_MONTH_MASK[c]
            tgt = action.target
            x = m & (m - 1)
            if x and not x & (x - 1):  # exactly two matches
                if tgt < 0 or not (m >> tgt) & 1:
                    opts = " or ".join(CARD_IDS[x] for x in cards_of(m))
                    raise IllegalAction(
                        ActionRule.CHOOSE_CAPTURE,
                        f"{CARD_IDS[c]} matches two table cards: say which to capture ({opts})",
                    )
                taken = 1 << tgt
            else:
                if tgt >= 0:
                    raise IllegalAction(
                        ActionRule.NO_CAPTURE_CHOICE,
                        f"{CARD_IDS[c]} does not match exactly two table cards: there is no capture to choose",
                    )
                taken = m
            # Legal: change state from here on.
            self._hands[mover] = hand ^ bit
            if taken:
                self._table ^= taken
                self._caps[mover] |= taken | bit
                captured = True
            else:
                self._table |= bit
                captured = False
            self.log.append(Played(mover, c, taken))
            # Turn the top deck card.
            d = self._deck[self._deck_pos]
            if d < 0:  # a seat-side match waits for the drawn card: reveal_draw
                self._captured = captured
                self._phase = _DRAW
                return
            self._deck_pos += 1
            self._drawn(mover, d, captured)
            return
        if ph == _CHOOSE:
            if kind is not _K_CHOOSE:
                raise IllegalAction(
                    ActionRule.CHOOSE_CAPTURE,
                    f"{action} is not allowed now: the drawn {CARD_IDS[self._pending]} matches two table cards;"
                    " choose which to capture",
                )
            d = self._pending
            m = self._table & CARD_MONTH_MASK[d]
            tgt = action.target
            if not (m >> tgt) & 1:
                raise IllegalAction(
                    ActionRule.NOT_A_MATCH, f"{CARD_IDS[tgt]} is not a table card that {CARD_IDS[d]} matches"
                )
            taken = 1 << tgt
            self._table ^= taken
            self._caps[mover] |= taken | (1 << d)
            self._pending = -1
            self.log.append(Chosen(mover, d, taken))
            self._end_turn(mover, True)
            return
        # DECIDE
        if kind is _K_KOIKOI:
            if self._hands[0] == 0 and self._hands[1] == 0:
                raise IllegalAction(
                    ActionRule.LAST_TURN_SHOBU_ONLY, "on the last turn (both hands empty) only shobu is offered"
                )
            self._calls[mover] += 1
            self._called[mover] = self._totals[mover]
            self.log.append(KoiKoi(mover, self._totals[mover]))
            self._next_turn()
            return
        if kind is _K_SHOBU:
            self.log.append(Shobu(mover, self._totals[mover]))
            other = 1 - mover
            bd = count_round(
                self._caps[mover],
                calls=self._calls[0] + self._calls[1],
                double_at_8=self.settings.double_at_8,
                loser_points=self.points[other],
            )
            self._end_round(RoundEnd.SHOBU, mover, bd)
            return
        raise IllegalAction(ActionRule.DECIDE, f"{action} is not allowed now: call koikoi or shobu")

    def _drawn(self, mover: int, d: int, captured: bool) -> None:
        """The top deck card ``d`` is turned: it captures, goes to the table, or waits for a choice."""
        m = self._table & CARD_MONTH_MASK[d]
        x = m & (m - 1)
        if x and not x & (x - 1):  # exactly two matches: the player chooses
            self._pending = d
            self._phase = _CHOOSE
            self.log.append(DrawnChoice(mover, d))
            return
        dbit = 1 << d
        if m:
            self._table ^= m
            self._caps[mover] |= m | dbit
            captured = True
        else:
            self._table |= dbit
        self.log.append(Drawn(mover, d, m))
        # End of turn (inlined _end_turn: this is the hot path).
        if captured:
            caps = self._caps[mover]
            tot = (
                _LIGHT_VIEW[caps & _LIGHT_VIEW_MASK]
                + _TANE_PTS[caps & _TANE]
                + _RIBBON_PTS[caps & _RIBBONS]
                + _KASU_PTS[(caps & _PLAINS).bit_count()]
            )
            self._totals[mover] = tot
            if tot > self._called[mover]:
                self._phase = _DECIDE
                return
        hands = self._hands
        if hands[0] or hands[1]:
            self._to_move = mover ^ 1
            self._phase = _PLAY
        else:
            self._end_round(RoundEnd.DRAWN, None, None)

    def _end_turn(self, mover: int, captured: bool) -> None:
        if captured:
            tot = total_points(self._caps[mover])
            self._totals[mover] = tot
            if tot > self._called[mover]:
                self._phase = _DECIDE
                return
        self._next_turn()

    def _next_turn(self) -> None:
        if self._hands[0] == 0 and self._hands[1] == 0:
            self._end_round(RoundEnd.DRAWN, None, None)
            return
        self._to_move ^= 1
        self._phase = _PLAY

    def _end_round(self, end: RoundEnd, winner: int | None, bd: Breakdown | None) -> None:
        pay = 0
        if winner is not None and bd is not None:
            pay = bd.payment
            self.points[1 - winner] -= pay
            self.points[winner] += pay
        result = RoundResult(
            self.round, self.dealer, end, winner, bd, pay, (self.points[0], self.points[1]), self._attempt
        )
        self.history.append(result)
        self.log.append(RoundEnded(result))
        if winner is not None:
            self.dealer = winner
        if self.points[0] == 0 or self.points[1] == 0:
            self.winner = 0 if self.points[1] == 0 else 1
            self._finish()
        elif self.round >= self.settings.rounds:
            p0, p1 = self.points
            self.winner = None if p0 == p1 else (0 if p0 > p1 else 1)
            self._finish()
        else:
            self.round += 1
            self._start_round()

    def _finish(self) -> None:
        self._phase = _OVER
        self._pending = -1
        self.log.append(MatchEnded(self.winner, (self.points[0], self.points[1])))

    def _start_round(self) -> None:
        self._attempt = 0
        self._to_move = self.dealer
        self._pending = -1
        self._phase = _DEAL
        if self._hidden < 0:  # every card seen: the deal source deals
            while self._phase == _DEAL:
                deal = self.source.deal(self.round, self._attempt)
                self._deal(deal.dealer_hand, deal.other_hand, deal.table, deal.deck)

    def _deal(self, dealer_hand: int, other_hand: int, table: int, deck: tuple[Card, ...]) -> None:
        """One deal attempt: a redeal when the table shows four of a month, else the round starts
        and the hand-yaku claims are settled as far as they are known."""
        if needs_redeal(table):
            self.log.append(Redeal(self.round, self._attempt))
            self._attempt += 1
            return
        dealer = self.dealer
        hands = [0, 0]
        hands[dealer] = dealer_hand
        hands[1 - dealer] = other_hand
        self._hands = hands
        self._table = table
        self._caps = [0, 0]
        self._deck = deck
        self._deck_pos = 0
        self._to_move = dealer
        self._pending = -1
        self._calls = [0, 0]
        self._called = [0, 0]
        self._totals = [0, 0]
        self._paired = _pair_months(table)
        self._phase = _CLAIM
        self.log.append(Dealt(self.round, dealer))
        self._claimed = 0
        for seat in (0, 1):
            if seat != self._hidden and self._hidden != _OBSERVER:  # a hand this match sees claims by itself
                self._claim[seat] = hand_yaku(hands[seat])
                self._claim_hand[seat] = hands[seat]
                self._claimed |= 1 << seat
        self._settle_claims()

    def _settle_claims(self) -> None:
        """The dealer's hand yaku is checked first and wins; the round is played when neither has one."""
        dealer = self.dealer
        for seat in (dealer, 1 - dealer):
            if not (self._claimed >> seat) & 1:
                return  # wait for this seat's claim
            hy = self._claim[seat]
            if hy is not None:
                self.log.append(HandYaku(seat, hy, self._claim_hand[seat]))
                self._end_round(RoundEnd.HAND_YAKU, seat, count_hand_yaku(hy, self.points[1 - seat]))
                return
        self._phase = _PLAY

    # -- a seat that cannot see every card ---------------------------------

    @classmethod
    def for_seat(cls, settings: Settings, seat: int, first_dealer: int) -> Match:
        """A seat-side match: the rules as ``seat`` plays them without seeing the other hand or the deck.

        It starts in phase ``DEAL``; cards enter only through :meth:`begin_deal`,
        :meth:`claim_hand_yaku`, :meth:`reveal_draw` and the opponent's
        :meth:`apply` of a play (see spec/rules.md, "Hidden cards").
        """
        if seat not in (0, 1):
            raise ValueError("seat must be 0 or 1")
        m = cls(settings, _SEAT_SOURCE, first_dealer, deal=False)
        m._hidden = 1 - seat
        m._start_round()
        return m

    @classmethod
    def for_observer(cls, settings: Settings, first_dealer: int) -> Match:
        """An observer's match (an auditor following a sealed line): neither hand is seen. It is fed like a
        seat-side match, the deal by :meth:`begin_observed_deal` (the table only), and both seats' claims,
        plays and draws as they are revealed; legality that needs a hidden card is the disclosure's to prove.
        """
        m = cls(settings, _SEAT_SOURCE, first_dealer, deal=False)
        m._hidden = _OBSERVER
        m._start_round()
        return m

    def begin_observed_deal(self, table: int) -> None:
        """An observer's deal attempt: the eight table cards (a mask); both hands stay unseen."""
        if self._hidden != _OBSERVER:
            raise IllegalAction(ActionRule.NO_DEAL_DUE, "only an observer's match is dealt the table alone")
        if self._phase != _DEAL:
            raise IllegalAction(
                ActionRule.NO_DEAL_DUE, f"no deal now: the match waits for {_WAITING.get(self._phase, 'a move')}"
            )
        if table < 0 or table & ~_ALL or table.bit_count() != 8:
            raise IllegalAction(ActionRule.BAD_DEAL, "a table is 8 of the 48 cards")
        self._deal(_UNSEEN_HAND, _UNSEEN_HAND, table, _UNSEEN_DECK)

    def _seen(self) -> int:
        """Every card this match holds: its hands' real cards, the table, both captures, a pending draw."""
        seen = (self._hands[0] | self._hands[1]) & _ALL
        seen |= self._table | self._caps[0] | self._caps[1]
        if self._phase == _CHOOSE:
            seen |= 1 << self._pending
        return seen

    def _check_unseen(self, card: int) -> None:
        if not 0 <= card < 48:
            raise IllegalAction(ActionRule.NOT_A_CARD, f"{card!r} is not a card number (0 to 47)")
        if (self._seen() >> card) & 1:
            raise IllegalAction(
                ActionRule.CARD_ALREADY_SEEN,
                f"{CARD_IDS[card]} is already in sight (a hand, the table or captures): revealed twice",
            )

    def _seat_side(self, rule: ActionRule, what: str) -> None:
        if self._hidden < 0:
            raise IllegalAction(rule, f"this match sees every card: its deal source gives {what}")

    def begin_deal(self, hand: int, table: int) -> None:
        """A deal attempt as this seat sees it: its own eight cards and the eight on the table (masks).

        Four of a month on the table is a redeal (logged; the next attempt is
        awaited). Otherwise the round starts; when this seat deals and holds a
        hand yaku the round ends at once, else the opponent's
        :meth:`claim_hand_yaku` is awaited (phase ``CLAIM``).
        """
        self._seat_side(ActionRule.NO_DEAL_DUE, "the deal")
        if self._phase != _DEAL:
            raise IllegalAction(
                ActionRule.NO_DEAL_DUE, f"no deal now: the match waits for {_WAITING.get(self._phase, 'a move')}"
            )
        if hand & ~_ALL or table & ~_ALL or hand < 0 or table < 0:
            raise IllegalAction(ActionRule.NOT_A_CARD, "a deal names only the 48 cards")
        if hand.bit_count() != 8 or table.bit_count() != 8:
            raise IllegalAction(
                ActionRule.BAD_DEAL,
                f"a deal is 8 cards in hand and 8 on the table, not {hand.bit_count()} and {table.bit_count()}",
            )
        if hand & table:
            raise IllegalAction(ActionRule.BAD_DEAL, f"{CARD_IDS[(hand & table).bit_length() - 1]} is dealt twice")
        if 1 - self._hidden == self.dealer:
            self._deal(hand, _UNSEEN_HAND, table, _UNSEEN_DECK)
        else:
            self._deal(_UNSEEN_HAND, hand, table, _UNSEEN_DECK)

    def claim_hand_yaku(self, seat: int, hand: int | None) -> None:
        """The opponent's hand-yaku claim at the deal: ``hand`` (its eight cards, shown) or None ("none").

        A shown hand must be eight cards not in sight and hold Teshi or Kuttsuki.
        (A false "none" cannot be seen here: the round's disclosure proves it.)
        """
        self._seat_side(ActionRule.NO_CLAIM_DUE, "both hands")
        hidden = seat == self._hidden or (self._hidden == _OBSERVER and seat in (0, 1))
        if self._phase != _CLAIM or not hidden or (self._claimed >> seat) & 1:
            raise IllegalAction(ActionRule.NO_CLAIM_DUE, f"no hand-yaku claim from seat {seat} is awaited now")
        if hand is not None:
            if hand < 0 or hand & ~_ALL or hand.bit_count() != 8:
                raise IllegalAction(ActionRule.BAD_CLAIM, "a shown hand is exactly eight of the 48 cards")
            both = hand & self._seen()
            if both:
                raise IllegalAction(
                    ActionRule.CARD_ALREADY_SEEN,
                    f"{CARD_IDS[both.bit_length() - 1]} is already in sight: it is not in that hand",
                )
            hy = hand_yaku(hand)
            if hy is None:
                raise IllegalAction(ActionRule.FALSE_HAND_YAKU, "the shown hand holds no hand yaku (Teshi or Kuttsuki)")
            self._claim[seat] = hy
            self._claim_hand[seat] = hand
        else:
            self._claim[seat] = None
            self._claim_hand[seat] = 0
        self._claimed |= 1 << seat
        self._settle_claims()

    def reveal_draw(self, card: Card) -> None:
        """The card turned from the deck after a play, once this seat has seen it."""
        self._seat_side(ActionRule.NO_DRAW_DUE, "the deck")
        if self._phase != _DRAW:
            raise IllegalAction(
                ActionRule.NO_DRAW_DUE,
                f"no card is being drawn now: the match waits for {_WAITING.get(self._phase, 'a move')}",
            )
        self._check_unseen(card)
        self._deck_pos += 1
        self._drawn(self._to_move, card, self._captured)

    # -- views, copies, hashes --------------------------------------------

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may see: its own hand, never the other hand or the deck."""
        if seat == self._hidden or self._hidden == _OBSERVER:
            raise ValueError(f"seat {seat}'s hand is not seen by this match")
        ph = self._phase
        hands = self._hands
        return SeatView(
            seat,
            self.settings,
            self.round,
            self.dealer,
            self.points[0],
            self.points[1],
            ph,
            self._to_move,
            hands[seat],
            hands[1 - seat].bit_count(),
            self._table,
            self._caps[0],
            self._caps[1],
            len(self._deck) - self._deck_pos,
            self._pending if ph == _CHOOSE else -1,
            self._calls[0],
            self._calls[1],
            self._totals[0],
            self._totals[1],
            self._called[0],
            self._called[1],
            tuple(self.legal_actions()) if (ph != _OVER and self._to_move == seat) else (),
            self.history,
            len(self.history),
            self.winner,
            hands[0] == 0 and hands[1] == 0,
        )

    def yaku(self, seat: int) -> list[tuple[Yaku, int]]:
        """The yaku in ``seat``'s captures this round."""
        return yaku_of(self._caps[seat])

    def shobu_breakdown(self, seat: int) -> Breakdown:
        """What shōbu would pay ``seat`` now (the koi-koi prompt shows this)."""
        return count_round(
            self._caps[seat],
            calls=self._calls[0] + self._calls[1],
            double_at_8=self.settings.double_at_8,
            loser_points=self.points[1 - seat],
        )

    def copy(self) -> Match:
        """An independent copy (the deal source is shared: it is immutable)."""
        new = Match(self.settings, self.source, self.dealer, deal=False)
        new.points = self.points[:]
        new.round = self.round
        new.dealer = self.dealer
        new.history = self.history[:]
        new.log = self.log[:]
        new.winner = self.winner
        new._hands = self._hands[:]
        new._table = self._table
        new._caps = self._caps[:]
        new._deck = self._deck
        new._deck_pos = self._deck_pos
        new._to_move = self._to_move
        new._phase = self._phase
        new._pending = self._pending
        new._calls = self._calls[:]
        new._called = self._called[:]
        new._totals = self._totals[:]
        new._attempt = self._attempt
        new._paired = self._paired
        new._hidden = self._hidden
        new._claim = self._claim[:]
        new._claim_hand = self._claim_hand[:]
        new._claimed = self._claimed
        new._captured = self._captured
        return new

    @classmethod
    def from_view(
        cls, view: SeatView, opponent_hand: Iterable[Card], deck: Sequence[Card], source: DealSource
    ) -> Match:
        """A full-information match consistent with ``view``, for search.

        The caller fills in what the seat cannot see: the opponent's hand and
        the rest of the deck in draw order (a bot samples them); rounds after
        this one are dealt by ``source``. Raises ``ValueError`` when the
        filled-in cards do not fit the view (wrong counts, a card twice, a
        card missing).
        """
        opp = 0
        for c in opponent_hand:
            opp |= 1 << c
        hand = view.hand_mask
        table = view.table_mask
        caps = [view.captures_mask(0), view.captures_mask(1)]
        deck_t: tuple[Card, ...] = tuple(deck)
        pending = view.pending_draw
        if opp.bit_count() != view.opponent_hand_count:
            raise ValueError(f"the opponent holds {view.opponent_hand_count} cards, not {opp.bit_count()}")
        if len(deck_t) != view.deck_count:
            raise ValueError(f"the deck holds {view.deck_count} cards, not {len(deck_t)}")
        seen = hand | table | caps[0] | caps[1] | opp | (0 if pending is None else 1 << pending)
        seen_count = (
            hand.bit_count() + table.bit_count() + caps[0].bit_count() + caps[1].bit_count() + opp.bit_count()
        ) + (0 if pending is None else 1)
        for c in deck_t:
            if seen >> c & 1:
                raise ValueError(f"{CARD_IDS[c]} is in the deck and somewhere else")
            seen |= 1 << c
        if seen != (1 << 48) - 1 or seen_count + len(deck_t) != 48:
            raise ValueError("the view and the filled-in cards do not make up the 48 cards exactly once")
        m = cls(view.settings, source, view.dealer, deal=False)
        m.points = list(view.points)
        m.round = view.round
        m.dealer = view.dealer
        m.history = list(view.history)
        m.log = []
        m.winner = view.winner
        hands = [0, 0]
        hands[view.seat] = hand
        hands[1 - view.seat] = opp
        m._hands = hands
        m._table = table
        m._caps = caps
        m._deck = deck_t
        m._deck_pos = 0
        m._to_move = view.to_move
        m._phase = int(view.phase)
        m._pending = -1 if pending is None else pending
        m._calls = list(view.calls)
        m._called = list(view.called_totals)
        m._totals = list(view.totals)
        m._attempt = 0
        m._paired = _pair_months(table)
        return m

    def public_state(self) -> bytes:
        """The canonical encoding of what both seats can see (see spec/rules.md)."""
        return _STATE.pack(
            self.settings.rounds,
            int(self.settings.double_at_8),
            self.round,
            self.dealer,
            self.points[0],
            self.points[1],
            self._phase,
            self._to_move if self._phase != _OVER else 255,
            self._pending if self._phase == _CHOOSE else 255,
            self._calls[0],
            self._calls[1],
            self._called[0],
            self._called[1],
            self._hands[0].bit_count(),
            self._hands[1].bit_count(),
            len(self._deck) - self._deck_pos,
            255 if self.winner is None else self.winner,
            self._table,
            self._caps[0],
            self._caps[1],
        )

    def state_hash(self) -> bytes:
        """SHA-256 of ``STATE_LABEL`` and :meth:`public_state`: equal on both sides while in sync."""
        return hashlib.sha256(STATE_LABEL + self.public_state()).digest()


class _SeatSource:
    """The deal source of a seat-side match: there is none (cards come through begin_deal)."""

    def deal(self, round_number: int, attempt: int) -> Deal:
        raise IllegalAction(ActionRule.NO_DEAL_SOURCE, "a seat-side match is dealt through begin_deal")

    def first_dealer_cards(self, attempt: int) -> tuple[Card, Card]:
        raise IllegalAction(ActionRule.NO_DEAL_SOURCE, "a seat-side match turns no cards")


_SEAT_SOURCE: Final = _SeatSource()
_WAITING: Final = {
    _PLAY: "a card to be played",
    _CHOOSE: "a capture choice",
    _DECIDE: "koi-koi or shobu",
    _OVER: "nothing (the match is over)",
    _DEAL: "the deal (begin_deal)",
    _CLAIM: "the opponent's hand-yaku claim (claim_hand_yaku)",
    _DRAW: "the drawn card (reveal_draw)",
}

STATE_LABEL: Final = b"koikoi/state/v1\x00"
# rounds, double, round, dealer, points0, points1, phase, to_move, pending,
# calls0, calls1, called0, called1, hand0, hand1, deck, winner: one byte each
# (round/points fit); then table, captures0, captures1 as 8-byte big-endian masks.
_STATE: Final = struct.Struct(">17B3Q")


def perft(match: Match, depth: int) -> int:
    """The number of action sequences of length ``depth`` from ``match`` (a finished
    match counts as one leaf): a perft-style count for checking move generation."""
    if depth == 0 or match.is_over:
        return 1
    legal = match.legal_actions()
    if depth == 1:
        return len(legal)
    total = 0
    for a in legal:
        child = match.copy()
        child.apply(a)
        total += perft(child, depth - 1)
    return total
