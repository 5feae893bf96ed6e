"""``koikoi cards``: the 48 card ids, with month, kind and both names."""

from __future__ import annotations

import argparse
import json

from ...engine.cards import CARDS, MONTH_NAMES_EN, MONTH_NAMES_JA, CardInfo, Kind, Ribbon

COMMAND = "cards"
HELP = "list the 48 card ids with their month, kind and English and Japanese names"
DESCRIPTION = (
    "List the 48 cards by id (the names `score`, `replay`, bots and the notation use), month by month: "
    "month, kind (light, tane, ribbon, plain; a ribbon is akatan, aotan or plain red) and the English and "
    "Japanese names. With --json: one JSON array of "
    '{"id", "month", "kind", "ribbon", "name_en", "name_ja"} in card order.'
)

_RIBBON_EN = {Ribbon.AKATAN: "red poem", Ribbon.AOTAN: "blue", Ribbon.PLAIN_RED: "red"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--json",
        action="store_true",
        help='print [{"id", "month", "kind", "ribbon", "name_en", "name_ja"}] (ribbon: akatan, aotan, '
        "plain_red, or null for a card that is not a ribbon)",
    )


def card_json(info: CardInfo) -> dict[str, object]:
    """One card as ``koikoi cards --json`` prints it."""
    return {
        "id": info.id,
        "month": info.month,
        "kind": info.kind.name.lower(),
        "ribbon": None if info.ribbon is Ribbon.NONE else info.ribbon.value,
        "name_en": info.name_en,
        "name_ja": info.name_ja,
    }


def _kind_text(info: CardInfo) -> str:
    if info.kind is Kind.RIBBON:
        return f"ribbon ({_RIBBON_EN[info.ribbon]})"
    return info.kind.name.lower()


def run(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps([card_json(c) for c in CARDS], ensure_ascii=False))
        return 0
    id_w = max(len(c.id) for c in CARDS)
    kind_w = max(len(_kind_text(c)) for c in CARDS)
    name_w = max(len(c.name_en) for c in CARDS)
    for month in range(1, 13):
        if month > 1:
            print()
        print(f"{month:>2} {MONTH_NAMES_EN[month - 1]} {MONTH_NAMES_JA[month - 1]}")
        for c in CARDS[4 * (month - 1) : 4 * month]:
            print(f"   {c.id:<{id_w}}  {_kind_text(c):<{kind_w}}  {c.name_en:<{name_w}}  {c.name_ja}")
    return 0
