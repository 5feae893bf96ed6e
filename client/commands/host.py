"""``koikoi host``: create a room on a relay and play the match when someone joins.

Without a relay (no --relay, no KOIKOI_RELAY, none in the config file) it runs
one itself, in the same program (``--listen``, default 127.0.0.1:7878), and
prints the exact command the friend runs to join.
"""

from __future__ import annotations

import argparse
import os
import shlex
import urllib.parse
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.signing import SigningKey

from ...engine.match import Settings
from ...protocol.session import Session
from ...relay.client import RelayClient, SeatTicket
from ...relay.codes import format_code
from .. import deckmode
from ..argtypes import move_time, seconds
from ..embedded import (
    DEFAULT_LISTEN,
    LAN_HOST,
    embedded_relay,
    is_loopback,
    linger,
    network_addresses,
    parse_listen,
    public_url,
)
from ..match_loop import NetGame
from ..netsetup import (
    add_player_arguments,
    bot_spec_arg,
    check_new_transcript,
    load_key,
    look_options,
    new_transcript_path,
    open_transcript,
    read_password,
    relay_from_config,
)
from ..output import DECKS, NetError, Output, reported, settings_json
from ..seats import SeatRecord
from ..tuning import Tuning

COMMAND = "host"
HELP = "create a room and play a match over the network when your opponent joins"
DESCRIPTION = (
    "Create a room on a relay and wait for the opponent; then play the match (you, or a bot with --bot). "
    "The relay is --relay, else $KOIKOI_RELAY, else the config file's; with none, koikoi runs a relay itself "
    "on --listen (this machine only, unless you say --lan or --listen 0.0.0.0:PORT) and prints the command "
    "your friend runs to join. Every message is written to the transcript "
    "before it is sent; after a crash, `koikoi resume` continues the match. --move-time sets the room's clock "
    "(default 120 s a move; none: no clock): a player silent for longer loses on time, as the relay witnesses. "
    "--deck sealed (the default) keeps the cards you cannot see hidden from your opponent's program; --deck "
    "shared deals from one shared seed. Watchers (koikoi watch) may follow a sealed room, never seeing a "
    "hidden card; --no-watchers forbids them, --watchers allows them in a shared room too (where a watcher can "
    "compute every card). --publish agrees that a relay keeping a public archive may publish this match even "
    "from a private room (both players must agree). "
    "Exit 0 when the match reached a result (won or lost, by any ending), 1 when it ended without one or could "
    "not start, 2 for usage errors."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--relay",
        metavar="URL",
        help="the relay (ws://HOST:PORT or wss://...); default: $KOIKOI_RELAY, "
        "then the config file, else run one here on --listen",
    )
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help=f"where the relay run here listens, when there is no other (default {DEFAULT_LISTEN}: only this "
        "machine can join; 0.0.0.0:PORT accepts other machines)",
    )
    p.add_argument(
        "--lan",
        action="store_true",
        help=f"the relay run here listens on all interfaces ({LAN_HOST}, the port of --listen), so that a friend "
        "on your network can join: the join line printed has this machine's address there",
    )
    p.add_argument(
        "--grace",
        type=seconds,
        metavar="S",
        help="for the relay run here: how long a dropped player's seat is kept (default 120)",
    )
    p.add_argument("--rounds", type=int, choices=(6, 12), default=6, help="rounds in the match (default 6)")
    p.add_argument("--no-double", action="store_true", help="do not double a round's base of 8 or more")
    p.add_argument("--private", action="store_true", help="a private room: never listed, an unguessable code")
    p.add_argument(
        "--move-time",
        type=move_time,
        default=120,
        metavar="SECONDS|none",
        help="the room's clock: seconds for each move (default 120); none for a friendly match with no clock",
    )
    p.add_argument(
        "--deck",
        choices=DECKS,
        help="sealed (default): neither program can see the opponent's hand or the deck; shared: both derive "
        "the whole deal from one seed (faster, but a modified client sees every card)",
    )
    wa = p.add_mutually_exclusive_group()
    wa.add_argument(
        "--no-watchers",
        dest="watchers",
        action="store_false",
        default=None,
        help="nobody may watch this room (the default for a shared deck)",
    )
    wa.add_argument(
        "--watchers",
        dest="watchers",
        action="store_true",
        help="watchers may follow this room, shared deck too (the default for a sealed deck; in a shared room a "
        "watcher's program can compute every card)",
    )
    p.add_argument(
        "--publish",
        action="store_true",
        help="a relay that keeps a public archive may publish this match even if the room is private (only if "
        "your opponent agrees too; a public room's match is published anyway there)",
    )
    pw = p.add_mutually_exclusive_group()
    pw.add_argument("--password", metavar="PW", help="the opponent needs this password to join")
    pw.add_argument("--password-file", metavar="FILE", help="the password is this file's first line")
    p.add_argument("--transcript", metavar="PATH", help="write the transcript here (default: the user data dir)")
    add_player_arguments(p)


def join_command(room: str, url: str, password: str | None, deck: str | None = None) -> str:
    """The command the friend runs (``--deck shared`` for a shared-deck room: a joiner expects sealed)."""
    cmd = ["koikoi", "join", room, "--relay", url]
    if deck == "shared":
        cmd += ["--deck", "shared"]
    if password is not None:
        cmd += ["--password", password]
    return shlex.join(cmd)


def listen_address(listen: str | None, lan: bool) -> str:
    """Where the relay run here listens: ``--listen`` (default 127.0.0.1:7878), all interfaces with ``--lan``
    (on the port of --listen). NetError ``usage`` for an address that is none, or --lan with a --listen on
    one interface."""
    text = listen if listen is not None else DEFAULT_LISTEN
    try:
        host, port = parse_listen(text)
    except ValueError as e:
        raise NetError("usage", str(e)) from None
    if not lan:
        return text
    if listen is None:
        return f"{LAN_HOST}:{port}"
    if host not in (LAN_HOST, "::"):
        raise NetError("usage", f"--lan listens on all interfaces, --listen {listen} on one: give one of them")
    return text


def other_networks(url: str, room: str, password: str | None, deck: str | None, addresses: list[str]) -> list[str]:
    """After the join line of a relay run here on all interfaces (``url``: the best of ``addresses``), the join
    lines for this machine's other addresses."""
    port = urllib.parse.urlsplit(url).port
    lines = [f"    {join_command(room, f'ws://{a}:{port}', password, deck)}" for a in addresses[1:]]
    return ["  or, from another of this machine's networks:", *lines] if lines else []


def reach_lines(
    url: str, room: str, password: str | None, deck: str | None, *, runs_relay: bool, addresses: list[str]
) -> list[str]:
    """What to say after the join line when only this machine could use it (the relay's URL is loopback):
    what works instead. ``runs_relay``: the relay is the one run here (--lan makes it reachable), else the
    user's own at ``url`` (it may listen beyond loopback already). ``addresses``: this machine's, best first."""
    if not is_loopback(url):
        return []
    port = urllib.parse.urlsplit(url).port or 7878
    lines = [f"Only a player on this machine can join with that line: {url} is a loopback address. What works:"]
    if runs_relay:
        lines.append(
            f"  on your network: koikoi host --lan (it listens on all interfaces, as --listen {LAN_HOST}:{port}); "
            "your friend then joins with the new room's CODE, one of:"
        )
        code = "CODE"
    else:
        lines.append("  on your network, if that relay listens on all interfaces (koikoi relay --host 0.0.0.0):")
        code = room
    for a in addresses:
        lines.append(f"    {join_command(code, f'ws://{a}:{port}', password, deck)}")
    if not addresses:
        lines.append("    (this machine has no network address but loopback: is it on a network?)")
    lines += [
        "  across the internet, a relay you can both reach (README: Running a relay for real):",
        f"    an SSH tunnel: ssh -N -R {port}:127.0.0.1:{port} you@SERVER (its sshd: GatewayPorts yes), and your "
        f"friend joins with --relay ws://SERVER:{port}",
        "    or a small VPS: koikoi relay --host 0.0.0.0 on it, and koikoi host --relay ws://VPS:7878 here",
    ]
    return lines


def run(args: argparse.Namespace) -> int:
    out = Output("koikoi host", args.json)
    out.waiting_alone = True  # until the opponent joins, an interruption saves no match

    def _body() -> int:
        spec = bot_spec_arg(args.bot)
        if args.json and spec is None:
            raise NetError("usage", "--json needs --bot: a person plays in the text mode")
        password = read_password(args.password, args.password_file)
        args.listen = listen_address(args.listen, args.lan)
        tuning = Tuning.from_env()
        transcript = check_new_transcript(args.transcript)
        url = relay_from_config(args.relay)
        if url is not None and args.lan:
            raise NetError("usage", f"--lan is for the relay koikoi host runs itself; this room would be on {url}")
        key = load_key()
        lang, assist = look_options(args)
        settings = Settings(args.rounds, not args.no_double)
        args.deck = deckmode.resolve(args.deck)
        if args.watchers is None:  # (the default, said to the relay and bound in the HELLO alike)
            args.watchers = args.deck == "sealed"
        game = NetGame(out, tuning, bot_spec=spec, lang=lang, assist=assist)
        game.make_player(0, settings.rounds, plain=args.plain)
        try:
            return game.run(_main, args, game, url, key, settings, transcript, tuning, password)
        finally:
            game.close()

    return reported(out, _body)


async def _main(
    args: argparse.Namespace,
    game: NetGame,
    url: str | None,
    key: Ed25519PrivateKey,
    settings: Settings,
    transcript: Path | None,
    tuning: Tuning,
    password: str | None,
) -> int:
    out = game.out
    embedded_at: list[str | None] = [None]
    shown_url: list[str] = [url or ""]
    relay_key = SigningKey.generate() if url is None else None  # the relay run here: its witness key
    mt = args.move_time

    async def acquire(client: RelayClient) -> SeatTicket:
        ticket = await client.create_room(
            rounds=settings.rounds,
            double_at_8=settings.double_at_8,
            private=args.private,
            password=password,
            move_time_s=mt,
            deck=args.deck,
            watchers=args.watchers,
        )
        if client.archive:
            out.say(f"This relay keeps a public archive: {_archive_words(args.private, args.publish)}")
        return ticket

    def prepare(ticket: SeatTicket) -> None:
        assert game.link is not None
        path = transcript or new_transcript_path(ticket.room, "host")
        game.session = Session.create(
            key,
            ticket.room,
            settings,
            os.urandom(32),
            tuning.timeouts,
            move_time_s=mt,
            relay_key=game.link.relay_key,
            watchers=args.watchers,
            publish=args.publish,
            **deckmode.session_kwargs(args.deck),
        )
        game.journal.writer = open_transcript(path)
        game.journal.state = SeatRecord(
            path,
            ticket,
            bot=args.bot,
            json=args.json,
            lang=game.lang,
            assist=game.assist,
            embedded=embedded_at[0],
            grace=args.grace,
            embedded_key=bytes(relay_key).hex() if relay_key is not None else None,
            plain=args.plain,
        )
        game.journal.state.save()
        display = format_code(ticket.room)
        cmd = join_command(display, shown_url[0], args.password, args.deck)  # (a password from a file stays out)
        out.event(
            "room",
            room=display,
            relay=shown_url[0],
            settings=settings_json(settings.rounds, settings.double_at_8, mt, args.deck),
            join=cmd,
            witness=game.link.relay_fingerprint or None,
        )
        bound = game.presentation.settings_words(settings.rounds, settings.double_at_8, mt, args.deck)
        w = game.presentation.words
        asks = w("net_created_asks") if password is not None and args.password is None else ""
        out.say(
            w(
                "net_created",
                kind=w("net_created_private" if args.private else "net_created_room"),
                room=display,
                url=shown_url[0],
                bound=bound,
                lock=w("net_created_lock") if password is not None else "",
            ),
            w("net_created_joins", asks=asks),
            f"    {cmd}",
        )
        wide = url is None and parse_listen(args.listen)[0] in (LAN_HOST, "::")
        found = network_addresses() if wide or is_loopback(shown_url[0]) else []
        reach = reach_lines(shown_url[0], display, args.password, args.deck, runs_relay=url is None, addresses=found)
        if wide:
            reach = other_networks(shown_url[0], display, args.password, args.deck, found)
        out.say(*reach, w("net_created_waiting"))

    if url is not None:
        out.url = url
        return await game.main(url, acquire, prepare, key)
    assert relay_key is not None
    game.presentation.runs_relay = True
    async with embedded_relay(args.listen, args.grace, relay_key) as relay:
        host = relay.cfg.host if ":" not in relay.cfg.host else f"[{relay.cfg.host}]"
        embedded_at[0] = f"{host}:{relay.port}"
        shown_url[0] = public_url(relay, network_addresses() if relay.cfg.host in (LAN_HOST, "::") else None)
        out.url = relay.url
        code = await game.main(relay.url, acquire, prepare, key)
        if game.journal.state is not None:
            await linger(relay, game.journal.state.ticket.room, tuning.linger_s)
        return code


def _archive_words(private: bool, publish: bool) -> str:
    """What the archive of the relay will do with this room's match (the host's side of join's words)."""
    if not private:
        return (
            "this public room's match is published there once it ends (your key's fingerprint, every move, the result)."
        )
    if publish:
        return "you said --publish, so this private room's match is published there if the joiner says so too."
    return "a private room's match is published only if both players say --publish (you did not)."
