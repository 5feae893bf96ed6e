#!/usr/bin/env python3
"""A tiny Koi-Koi bot that speaks the JSON-lines bot protocol (spec/bot-protocol.md).

Standard library only; it knows nothing of koikoi's code. Strategy: capture
the most valuable cards it can, otherwise let go of its least valuable card,
and always take the points (shobu). Run it with:

    koikoi selfplay --games 10 --bots greedy,"cmd:python3 examples/bots/example_bot.py"
"""

import json
import sys
from typing import Any

LIGHTS = {"matsu_crane", "sakura_curtain", "susuki_moon", "yanagi_rainman", "kiri_phoenix"}


def value(card: str) -> int:
    if card in LIGHTS:
        return 20
    if card.endswith("_ribbon"):
        return 5
    if "plain" in card or card == "yanagi_lightning":
        return 1
    return 10  # tane (animals, the sake cup, the bridge)


def month(card: str) -> str:
    return card.split("_")[0]


def choose(view: dict[str, Any], legal: list[str]) -> str:
    if "shobu" in legal:
        return "shobu"
    table: list[str] = view["table"]

    def score(action: str) -> int:
        if action.startswith("*"):  # the drawn card matched two: capture this one
            return value(action[1:])
        card, _, target = action.partition("*")
        taken = [target] if target else [t for t in table if month(t) == month(card)]
        if not taken:
            return -value(card)  # goes to the table: keep the valuable ones
        return 100 + value(card) + sum(value(t) for t in taken)

    return max(legal, key=score)


def send(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "koikoi":
        send({"type": "hello", "protocol": 1, "name": "example", "author": "koikoi examples"})
    elif kind == "decide":
        send({"type": "action", "id": msg["id"], "action": choose(msg["view"], msg["legal"])})
    elif kind == "quit":
        break
    # any other message type: ignore it (the protocol may grow)
