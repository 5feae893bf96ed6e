"""Whole matches between bots, in process: deterministic from a seed."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

from .bots import Bot
from .deal import SeededDeal
from .match import Match, Settings, choose_first_dealer

__all__ = ["SelfPlayResult", "bot_rng", "game_seed", "play_match"]

SELFPLAY_LABEL = b"koikoi/selfplay/v1\x00"
BOT_RNG_LABEL = b"koikoi/bot-rng/v1\x00"


def game_seed(seed: bytes, index: int) -> bytes:
    """The match seed of game ``index`` of a self-play run."""
    return hashlib.sha256(SELFPLAY_LABEL + seed + index.to_bytes(4, "big")).digest()


def bot_rng(match_seed: bytes, seat: int) -> random.Random:
    """A seat's bot randomness, derived from the match seed (never global)."""
    digest = hashlib.sha256(BOT_RNG_LABEL + match_seed + bytes([seat])).digest()
    return random.Random(int.from_bytes(digest, "big"))


@dataclass(frozen=True, slots=True)
class SelfPlayResult:
    match: Match
    first_dealer: int


def play_match(
    settings: Settings,
    bots: Sequence[Bot],
    match_seed: bytes,
) -> SelfPlayResult:
    """Play a whole match; ``bots[s]`` plays seat ``s`` and sees only ``match.view(s)``."""
    source = SeededDeal(match_seed)
    dealer, _ = choose_first_dealer(source)
    m = Match(settings, source, dealer)
    while not m.is_over:
        seat = m.to_move
        action = bots[seat].choose(m.view(seat))
        m.apply(action, seat)
    return SelfPlayResult(m, dealer)
