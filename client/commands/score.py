"""``koikoi score``: the points calculator."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable

from ...engine.cards import CARD_IDS, UnknownCard, card_from_id
from ...engine.yaku import Rules, count_hand_yaku, count_round, hand_yaku

COMMAND = "score"
HELP = "count a round: the winner's captured cards, koi-koi calls, doubling, the cap"
DESCRIPTION = (
    "Count what a round pays. CARD... are the winner's captured cards by id (kiku_sake_cup, "
    "sakura_curtain, ...). This game's rules by default; --rules nintendo switches to Nintendo's "
    "counting (x2 at 7+, x2 when the loser called koi-koi, Tane/Tan void beside their big yaku, "
    "the Sake cup also a plain, no cap)."
)


_NUMBERISH = re.compile(r"[-+]?\s*[\d.,]+")
"""A CARD that looks like a number (a month? a count?): told so, not given card ids that merely contain a digit."""

MAX_CALLS = 15
"""The most koi-koi calls one round allows: a call follows the caller's own turn, each player has 8 turns, and
the round's last turn (the non-dealer's eighth, both hands then empty) offers only shōbu: 8 + 7."""

MAX_LOSER_POINTS = 49
"""The two pools always sum to 50 and a player at 0 has already lost the match: a round's loser has 1 to 49."""


def _bounded(lo: int, hi: int, why: str) -> Callable[[str], int]:
    """An argparse type: a whole number from ``lo`` to ``hi``; out of range, the message says ``why``."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not lo <= n <= hi:
            raise argparse.ArgumentTypeError(f"must be {lo}..{hi}, not {n}: {why}")
        return n

    return parse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "cards", nargs="+", metavar="CARD", help="the winner's captured cards (card ids, any case; see koikoi cards)"
    )
    p.add_argument(
        "--calls",
        type=_bounded(0, MAX_CALLS, "a round allows at most 15 koi-koi calls (8 by the dealer, 7 by the other)"),
        default=None,
        metavar="N",
        help=f"koi-koi calls by both players this round, 0..{MAX_CALLS} (multiplier 1+N; this game's rules)",
    )
    p.add_argument("--no-double", action="store_true", help="the room does not double a base of 8 or more")
    p.add_argument(
        "--loser-points",
        type=_bounded(1, MAX_LOSER_POINTS, "the pools sum to 50 and a player at 0 has lost, so a loser has 1 to 49"),
        default=None,
        metavar="N",
        help=f"points the loser has left, 1..{MAX_LOSER_POINTS} (the cap; default 25)",
    )
    p.add_argument("--rules", choices=("game", "nintendo"), default="game", help="whose counting (default: game)")
    p.add_argument(
        "--loser-called", action="store_true", help="the loser had called koi-koi (x2; --rules nintendo only)"
    )
    p.add_argument(
        "--hand", action="store_true", help="the cards are a dealt hand of eight: score Teshi or Kuttsuki (6 points)"
    )
    p.add_argument("--lang", choices=("en", "ja"), default="en", help="yaku names in English or Japanese")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _note(text: str) -> None:
    print(f"koikoi score: note: {text}", file=sys.stderr)


def _ignored_options(args: argparse.Namespace) -> None:
    """One note per option given that the chosen counting does not use."""
    nintendo = args.rules == "nintendo"
    if args.hand:
        if nintendo:
            _note("--hand counts this game's hand yaku (Teshi, Kuttsuki: 6, capped); --rules nintendo does not apply")
        if args.calls:
            _note("--calls does not apply to a hand yaku: it ends the round before anyone can call")
        if args.no_double:
            _note("--no-double does not apply to a hand yaku: 6 points are never doubled")
        if args.loser_called:
            _note("--loser-called does not apply to a hand yaku: it ends the round before anyone can call")
        return
    if args.loser_called and not nintendo:
        _note("--loser-called counts only under --rules nintendo")
    if nintendo:
        if args.calls:
            _note("--calls is this game's shared multiplier; Nintendo's rules do not use it")
        if args.no_double:
            _note("--no-double is this game's room setting; Nintendo's rules always double at 7 or more")
        if args.loser_points is not None:
            _note("--loser-points is this game's cap; Nintendo's rules have no cap")


def run(args: argparse.Namespace) -> int:
    cards: list[int] = []
    seen: set[int] = set()
    for text in args.cards:
        if _NUMBERISH.fullmatch(text.strip()):
            print(f"koikoi score: {text!r} is a number, not a card id: name the captured cards by id"
                  " (matsu_crane, sakura_curtain, ...; koikoi cards lists the 48)", file=sys.stderr)  # fmt: skip
            return 2
        try:
            c = card_from_id(text.strip().lower())
        except UnknownCard as e:
            near = ", ".join(e.suggestions) if e.suggestions else "none close; koikoi cards lists the 48 ids"
            print(f"koikoi score: unknown card id {text!r}; nearest valid ids: {near}", file=sys.stderr)
            return 2
        if c in seen:
            print(f"koikoi score: card {CARD_IDS[c]} is given twice", file=sys.stderr)
            return 2
        seen.add(c)
        cards.append(c)
    _ignored_options(args)
    calls = args.calls or 0
    loser_points = 25 if args.loser_points is None else args.loser_points
    mask = sum(1 << c for c in cards)
    if args.hand:
        if len(cards) != 8:
            print(f"koikoi score: --hand takes the eight dealt cards, not {len(cards)}", file=sys.stderr)
            return 2
        hy = hand_yaku(mask)
        if hy is None:
            bd = count_round(0, loser_points=loser_points)
        else:
            bd = count_hand_yaku(hy, loser_points)
    else:
        bd = count_round(
            mask,
            calls=calls,
            double_at_8=not args.no_double,
            loser_points=loser_points,
            rules=Rules(args.rules),
            loser_called=args.loser_called,
        )
    if args.json:
        print(json.dumps(bd.to_json()))
    else:
        if args.lang == "ja":
            print("このゲームのルールでの計算：" if bd.rules is Rules.GAME else "任天堂のルールでの計算：")
        else:
            print(f"Count under {'this game' if bd.rules is Rules.GAME else 'Nintendo'}'s rules:")
        for line in bd.lines(args.lang):
            print(line)
    return 0
