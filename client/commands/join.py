"""``koikoi join ROOM``: show a room's settings, take its second seat, play the match."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ...protocol.session import Session
from ...relay.client import RelayClient, RelayError, SeatTicket
from ..match_loop import NetGame
from ..netsetup import (
    DEFAULT_RELAY,
    add_player_arguments,
    bot_spec_arg,
    check_new_transcript,
    load_key,
    look_options,
    new_transcript_path,
    open_transcript,
    relay_from_config,
)
from ..output import NetError, Output, relay_error_text, reported, settings_json, settings_text
from ..seats import SeatState
from ..tuning import Tuning

COMMAND = "join"
HELP = "join a room by its code and play the match over the network"
DESCRIPTION = (
    "Join a room by its code (as the host read it out; case, spaces and dashes do not matter). The room's "
    "settings are shown before play; --rounds and --double/--no-double, when given, are what you expect, and "
    "any difference fails with settings_mismatch. The relay is --relay, else $KOIKOI_RELAY, else the config "
    f"file's, else {DEFAULT_RELAY}. Exit 0 after a finished match, 1 when it was aborted or could not start, "
    "2 for usage errors."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("room", metavar="ROOM", help="the room code")
    p.add_argument("--relay", metavar="URL", help="the relay (default: $KOIKOI_RELAY, then the config file)")
    p.add_argument("--password", metavar="PW", help="the room's password, if it has one")
    p.add_argument("--rounds", type=int, choices=(6, 12), help="the rounds you expect (a different room fails)")
    dbl = p.add_mutually_exclusive_group()
    dbl.add_argument(
        "--double",
        dest="double",
        action="store_true",
        default=None,
        help="you expect doubling at 8+ (a room without fails)",
    )
    dbl.add_argument("--no-double", dest="double", action="store_false", help="you expect no doubling at 8+")
    p.add_argument("--transcript", metavar="PATH", help="write the transcript here (default: the user data dir)")
    add_player_arguments(p)


def run(args: argparse.Namespace) -> int:
    out = Output("koikoi join", args.json)
    out.room = args.room
    out.expect = (args.rounds, args.double)

    def _body() -> int:
        spec = bot_spec_arg(args.bot)
        if args.json and spec is None:
            raise NetError("usage", "--json needs --bot: a person plays in the text mode")
        tuning = Tuning.from_env()
        transcript = check_new_transcript(args.transcript)
        url = relay_from_config(args.relay) or DEFAULT_RELAY
        out.url = url
        key = load_key()
        lang, assist = look_options(args)
        game = NetGame(out, tuning, bot_spec=spec, lang=lang, assist=assist)
        game.make_player(1, args.rounds or 6)
        try:
            return trio.run(_main, args, game, url, key, transcript, tuning)
        finally:
            game.close()

    return reported(out, _body)


async def _main(
    args: argparse.Namespace, game: NetGame, url: str, key: Ed25519PrivateKey, transcript: Path | None, tuning: Tuning
) -> int:
    out = game.out

    async def acquire(client: RelayClient) -> SeatTicket:
        try:
            info = await client.room_info(args.room)
            out.room = info.display
            out.event("room", room=info.room, relay=url, settings=settings_json(info.rounds, info.double_at_8))
            pw = "needs a password" if info.password else "no password"
            state = "" if info.state == "waiting" else "; both seats are taken"
            out.say(f"Room {info.display} on {url}: {settings_text(info.rounds, info.double_at_8)} ({pw}{state}).")
            if game.console is not None and info.rounds is not None:
                game.console.narrator.rounds = info.rounds
            return await client.join(info.room, password=args.password, rounds=args.rounds, double_at_8=args.double)
        except RelayError as e:
            code, message = relay_error_text(e, url, out.room, out.expect)
            raise NetError(code, message) from None

    def prepare(ticket: SeatTicket) -> None:
        path = transcript or new_transcript_path(ticket.room, "join")
        game.session = Session.join(
            key, ticket.room, os.urandom(32), rounds=args.rounds, double_at_8=args.double, timeouts=tuning.timeouts
        )
        game.writer = open_transcript(path)
        game.state = SeatState(path, ticket, bot=args.bot, json=args.json, lang=game.lang, assist=game.assist)
        game.state.save()
        out.say("Joined: waiting for the host's signed settings…")

    return await game.main(url, acquire, prepare)
