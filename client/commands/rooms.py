"""``koikoi rooms``: the public rooms waiting for a second player on a relay."""

from __future__ import annotations

import argparse
import json

import trio

from ...relay.client import RoomListing, connect
from ..netsetup import DEFAULT_RELAY, relay_from_config
from ..output import Output, reported, settings_text
from ..tuning import Tuning

COMMAND = "rooms"
HELP = "list the public rooms waiting for an opponent on a relay"
DESCRIPTION = (
    "List the public rooms that wait for a second player (private rooms are never listed): code, rounds, "
    "doubling, move time, whether a password is needed, and how long the room has waited, under the relay's "
    "witness key fingerprint. With --json: one JSON array "
    '[{"room", "rounds", "double_at_8", "password", "waiting_s", "deck"}]. The relay is --relay, else $KOIKOI_RELAY, '
    f"else the config file's, else {DEFAULT_RELAY}."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--relay", metavar="URL", help="the relay (default: $KOIKOI_RELAY, then the config file)")
    p.add_argument(
        "--json", action="store_true", help='print [{"room", "rounds", "double_at_8", "password", "waiting_s", "deck"}]'
    )


def _waited(s: int) -> str:
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _move_time(s: int) -> str:
    return "none" if s == 0 else f"{s} s"


def run(args: argparse.Namespace) -> int:
    out = Output("koikoi rooms", args.json)

    def _body() -> int:
        url = relay_from_config(args.relay) or DEFAULT_RELAY
        out.url = url
        tuning = Tuning.from_env()

        async def fetch() -> tuple[list[RoomListing], str]:
            async with connect(url, timeout=tuning.connect_s) as client:
                return await client.list_rooms(), client.relay_fingerprint

        rooms, witness = trio.run(fetch)
        if args.json:
            print(json.dumps([r.to_json() for r in rooms], ensure_ascii=False), flush=True)
            return 0
        print(f"Relay {url}, witness key fingerprint {witness}")
        if not rooms:
            print(f"No public room waits for an opponent on {url}. Create one with: koikoi host --relay {url}")
            return 0
        print(f"Public rooms on {url} (join with: koikoi join ROOM --relay {url}):")
        print(f"  {'ROOM':<8}{'SETTINGS':<28}{'MOVE TIME':<11}{'DECK':<8}{'PASSWORD':<10}WAITING")
        for r in rooms:
            print(
                f"  {r.room:<8}{settings_text(r.rounds, r.double_at_8):<28}{_move_time(r.move_time_s):<11}"
                f"{r.deck or '?':<8}{'yes' if r.password else 'no':<10}{_waited(r.waiting_s)}"
            )
        return 0

    return reported(out, _body)
