"""The rules engine: this game's Koi-Koi as a deterministic, sans-IO state machine.

>>> from koikoi.engine import Match, Settings, SeededDeal
>>> m = Match(Settings(rounds=6), SeededDeal(bytes(32)), first_dealer=0)
>>> while not m.is_over:
...     m.apply(m.legal_actions()[0])
"""

from .actions import CHOOSE, KOIKOI, PLAY, PLAY_AT, SHOBU, Action, ActionKind, NotationError, from_code, parse_action
from .cards import CARD_IDS, CARDS, Card, CardInfo, Kind, UnknownCard, card_from_id, card_name, cards_of, mask_of
from .deal import Deal, DealSource, SeededDeal, deal_from_order, round_key, shuffle
from .events import (
    Chosen,
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
from .match import (
    STARTING_POINTS,
    IllegalAction,
    Match,
    Phase,
    RoundEnd,
    RoundResult,
    SeatView,
    Settings,
    first_dealer_from_cards,
    perft,
)
from .yaku import Breakdown, Rules, Yaku, count_hand_yaku, count_round, hand_yaku, total_points, yaku_of

__all__ = [
    "CARDS",
    "CARD_IDS",
    "CHOOSE",
    "KOIKOI",
    "PLAY",
    "PLAY_AT",
    "SHOBU",
    "STARTING_POINTS",
    "Action",
    "ActionKind",
    "Breakdown",
    "Card",
    "CardInfo",
    "Chosen",
    "Deal",
    "DealSource",
    "Drawn",
    "DrawnChoice",
    "Event",
    "HandYaku",
    "IllegalAction",
    "Kind",
    "KoiKoi",
    "Match",
    "MatchEnded",
    "NotationError",
    "Phase",
    "Played",
    "Redeal",
    "RoundEnd",
    "RoundEnded",
    "RoundResult",
    "Rules",
    "SeatView",
    "SeededDeal",
    "Settings",
    "Shobu",
    "UnknownCard",
    "Yaku",
    "card_from_id",
    "card_name",
    "cards_of",
    "count_hand_yaku",
    "count_round",
    "deal_from_order",
    "first_dealer_from_cards",
    "from_code",
    "hand_yaku",
    "mask_of",
    "parse_action",
    "perft",
    "round_key",
    "shuffle",
    "total_points",
    "yaku_of",
]
