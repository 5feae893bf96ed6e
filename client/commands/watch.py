"""``koikoi watch ROOM``: follow a match live from the relay, as a watcher (no seat, public cards only)."""

from __future__ import annotations

import argparse
import sys

import trio

from ...relay.codes import ALPHABET, normalize_code
from ..netsetup import DEFAULT_RELAY, read_password, relay_from_config
from ..output import NetError, Output, reported
from ..tui.table import want_plain
from ..tuning import Tuning
from ..watching import BoardSink, JsonSink, PlainSink, Watcher, WatchSink

COMMAND = "watch"
HELP = "watch a match live from the relay (public cards only) and give the audit's verdict at its end"
DESCRIPTION = (
    "Watch a room's match as it is played: the relay sends a watcher every frame both seats send (and, to one "
    "who comes late, the room's frames so far); koikoi follows the line with the same checks as koikoi audit "
    "(every signature, every rule) and shows the public cards only — the table, both players' captures, the "
    "counts, the last events; never a card in a hand or the deck. It ends when the match does, with the "
    "verdict koikoi audit gives of the line it saw. A dropped connection is taken up again from the first "
    "frame missed. A room whose host said --no-watchers (the default for shared-deck rooms) refuses "
    "watchers. The relay is --relay, else $KOIKOI_RELAY, else the config file's, else "
    f"{DEFAULT_RELAY}. Exit 0 when the line seen is valid (a result, or no result by a mismatch), 1 when it "
    "stopped unfinished or the relay refused, 2 for usage errors."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("room", metavar="ROOM", help="the room's code (case, spaces and dashes do not matter)")
    p.add_argument("--relay", metavar="URL", help="the relay (default: $KOIKOI_RELAY, then the config file)")
    p.add_argument("--password", help="the room's password, if it has one")
    p.add_argument("--password-file", metavar="FILE", help="read the password from the first line of FILE")
    p.add_argument(
        "--plain",
        action="store_true",
        help="the narrated text mode (one sentence per event; chosen by itself when the output is not a terminal)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per line: watching, every event, and the verdict (koikoi audit --json's object)",
    )
    p.add_argument("--lang", choices=("en", "ja"), help="card and yaku names in English or Japanese")


def run(args: argparse.Namespace) -> int:
    out = Output("koikoi watch", args.json)

    def _body() -> int:
        room = normalize_code(args.room)
        if not room:
            raise NetError("usage", f"ROOM: {args.room!r} is not a room code (5 or 9 of {ALPHABET})")
        out.room = room
        password = read_password(args.password, args.password_file)
        url = relay_from_config(args.relay) or DEFAULT_RELAY
        out.url = url
        tuning = Tuning.from_env()
        lang = args.lang or "en"
        sink: WatchSink
        board: BoardSink | None = None
        if args.json:
            sink = JsonSink(out)
        elif want_plain(args.plain, sys.stdout, sys.stdin):
            sink = PlainSink(out, lang)
        else:
            sink = board = BoardSink(out, lang)
        try:
            report = trio.run(Watcher(url, room, password, sink, tuning).run)
        except KeyboardInterrupt:
            if board is not None:
                board.close()
            out.error("interrupted", f"stopped watching room {args.room}")
            return 1
        finally:
            if board is not None:
                board.close()
        return 0 if report.valid else 1

    return reported(out, _body)
