"""``koikoi score``: the points calculator."""

from __future__ import annotations

import argparse
import difflib
import json
import sys

from ...engine.cards import CARD_IDS, UnknownCard, card_from_id
from ...engine.yaku import Rules, count_hand_yaku, count_round, hand_yaku
from ..argtypes import whole_number

COMMAND = "score"
HELP = "count a round: the winner's captured cards, koi-koi calls, doubling, the cap"
DESCRIPTION = (
    "Count what a round pays. CARD... are the winner's captured cards by id (kiku_sake_cup, "
    "sakura_curtain, ...). This game's rules by default; --rules nintendo switches to Nintendo's "
    "counting (x2 at 7+, x2 when the loser called koi-koi, Tane/Tan void beside their big yaku, "
    "the Sake cup also a plain, no cap)."
)


_NONNEG = whole_number(0)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("cards", nargs="+", metavar="CARD", help="the winner's captured cards (card ids)")
    p.add_argument(
        "--calls",
        type=_NONNEG,
        default=0,
        metavar="N",
        help="koi-koi calls by both players this round (multiplier 1+N; this game's rules)",
    )
    p.add_argument("--no-double", action="store_true", help="the room does not double a base of 8 or more")
    p.add_argument(
        "--loser-points", type=_NONNEG, default=25, metavar="N", help="points the loser has left (the cap; default 25)"
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


def run(args: argparse.Namespace) -> int:
    cards: list[int] = []
    seen: set[int] = set()
    for text in args.cards:
        try:
            c = card_from_id(text)
        except UnknownCard as e:
            near = ", ".join(e.suggestions) if e.suggestions else "none close; see spec/rules.md for the 48 ids"
            print(f"koikoi score: unknown card id {text!r}; nearest valid ids: {near}", file=sys.stderr)
            return 2
        if c in seen:
            near = ", ".join(difflib.get_close_matches(text, CARD_IDS, n=3, cutoff=0.5))
            print(
                f"koikoi score: card {text!r} is given twice; each card exists once (nearest valid ids: {near})",
                file=sys.stderr,
            )
            return 2
        seen.add(c)
        cards.append(c)
    if args.loser_called and args.rules != "nintendo":
        print("koikoi score: note: --loser-called counts only under --rules nintendo", file=sys.stderr)
    if args.calls and args.rules == "nintendo":
        print(
            "koikoi score: note: --calls is this game's shared multiplier; Nintendo's rules do not use it",
            file=sys.stderr,
        )
    mask = sum(1 << c for c in cards)
    if args.hand:
        if len(cards) != 8:
            print(f"koikoi score: --hand takes the eight dealt cards, not {len(cards)}", file=sys.stderr)
            return 2
        hy = hand_yaku(mask)
        if hy is None:
            bd = count_round(0, loser_points=args.loser_points)
        else:
            bd = count_hand_yaku(hy, args.loser_points)
    else:
        bd = count_round(
            mask,
            calls=args.calls,
            double_at_8=not args.no_double,
            loser_points=args.loser_points,
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
