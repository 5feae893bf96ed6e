"""``koikoi rooms``: the public rooms waiting for a second player on a relay."""

from __future__ import annotations

import argparse
import json

import trio

from ...relay.client import RoomListing, connect
from ..netsetup import DEFAULT_RELAY, relay_from_config
from ..output import Output, reported, settings_text
from ..tuning import Tuning

JSON_SHAPE = '[{"room", "rounds", "double_at_8", "password", "waiting_s", "deck", "watchers", "watching"}]'
COMMAND = "rooms"
HELP = "list the public rooms waiting for an opponent on a relay"
DESCRIPTION = (
    "List the public rooms that wait for a second player (private rooms are never listed): code, rounds, "
    "doubling, move time, deck, whether a password is needed, whether watchers may follow it (koikoi watch) and "
    "how many do, and how long the room has waited, under the relay's witness key fingerprint, and whether the "
    "relay keeps a public archive of the matches it carries. With --json: one JSON array "
    f"{JSON_SHAPE}. The relay is --relay, else $KOIKOI_RELAY, else the config file's, else {DEFAULT_RELAY}."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--relay", metavar="URL", help="the relay (default: $KOIKOI_RELAY, then the config file)")
    p.add_argument("--json", action="store_true", help=f"print {JSON_SHAPE}")


def _waited(s: int) -> str:
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _move_time(s: int) -> str:
    return "none" if s == 0 else f"{s} s"


def _watchers(r: RoomListing) -> str:
    """``no``, ``yes``, ``yes (3)`` (3 watch now), ``yes*`` in a shared room (its watchers can compute every card);
    ``?`` from a relay that does not say."""
    if r.watchers is None:
        return "?"
    if not r.watchers:
        return "no"
    return "yes" + ("*" if r.deck == "shared" else "") + (f" ({r.watching})" if r.watching else "")


def _archive_url(url: str) -> str:
    """The archive's index beside a relay's WebSocket URL: ``ws://H:P`` → ``http://H:P/matches``."""
    scheme, sep, rest = url.partition("://")
    http = {"ws": "http", "wss": "https"}.get(scheme, scheme)
    return f"{http}{sep}{rest.split('?', 1)[0].rstrip('/')}/matches"


def run(args: argparse.Namespace) -> int:
    out = Output("koikoi rooms", args.json)

    def _body() -> int:
        url = relay_from_config(args.relay) or DEFAULT_RELAY
        out.url = url
        tuning = Tuning.from_env()

        async def fetch() -> tuple[list[RoomListing], str, bool | None]:
            async with connect(url, timeout=tuning.connect_s) as client:
                return await client.list_rooms(), client.relay_fingerprint, client.archive

        rooms, witness, archive = trio.run(fetch)
        if args.json:
            rows = [{**r.to_json(), "watchers": r.watchers, "watching": r.watching} for r in rooms]
            print(json.dumps(rows, ensure_ascii=False), flush=True)
            return 0
        print(f"Relay {url}, witness key fingerprint {witness}")
        if archive:
            print(
                "This relay keeps a public archive: every finished match of a public room is published, a private "
                f"room's only if both players said --publish (koikoi ratings {_archive_url(url)})."
            )
        if not rooms:
            print(f"No public room waits for an opponent on {url}. Create one with: koikoi host --relay {url}")
            return 0
        print(f"Public rooms on {url} (join with: koikoi join ROOM --relay {url}):")
        print(f"  {'ROOM':<8}{'SETTINGS':<28}{'MOVE TIME':<11}{'DECK':<8}{'PASSWORD':<10}{'WATCHERS':<10}WAITING")
        for r in rooms:
            print(
                f"  {r.room:<8}{settings_text(r.rounds, r.double_at_8):<28}{_move_time(r.move_time_s):<11}"
                f"{r.deck or '?':<8}{'yes' if r.password else 'no':<10}{_watchers(r):<10}{_waited(r.waiting_s)}"
            )
        if any(r.watchers and r.deck == "shared" for r in rooms):
            print("  * a shared deck: its watchers' programs can compute every card, the players' hands too")
        return 0

    return reported(out, _body)
