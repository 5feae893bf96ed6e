"""``koikoi join ROOM``: show a room's settings, take its second seat, play the match."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ...protocol.session import Session
from ...relay.client import RelayClient, RelayError, RoomInfo, SeatTicket
from ...relay.codes import ALPHABET, PRIVATE_CODE_LENGTH, PUBLIC_CODE_LENGTH, format_code, normalize_code
from .. import deckmode
from ..argtypes import move_time
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
    read_password,
    relay_from_config,
)
from ..output import (
    DECKS,
    SETTINGS_DIFFER,
    Expect,
    NetError,
    Output,
    find_error,
    mismatch_parts,
    relay_error_text,
    reported,
    settings_json,
    settings_text,
)
from ..seats import SeatRecord
from ..tui import PlayerQuit
from ..tui.words import say
from ..tuning import Tuning

COMMAND = "join"
HELP = "join a room by its code and play the match over the network"
DESCRIPTION = (
    "Join a room by its code (as the host read it out; case, spaces and dashes do not matter: `koikoi join "
    "mwr ewg 79m` works). The room's settings are shown before play; --rounds, --double/--no-double, "
    "--move-time and --deck, when given, are what you expect, and any difference fails with settings_mismatch; "
    "the deck you expect is sealed unless you say --deck shared (a shared room's host program could see your "
    "cards). --no-watchers expects a room nobody may watch. --publish agrees that a relay keeping a public "
    "archive may publish this match even from a private room (both players must agree). "
    "A room with a password asks for it (without echo) unless --password or --password-file gives it. "
    "The relay is "
    f"--relay, else $KOIKOI_RELAY, else the config file's, else {DEFAULT_RELAY}. Exit 0 when the match "
    "reached a result (won or lost, by any ending), 1 when it ended without one or could not start, 2 for "
    "usage errors."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("room", metavar="ROOM", nargs="+", help="the room code (spaces and dashes do not matter)")
    p.add_argument("--relay", metavar="URL", help="the relay (default: $KOIKOI_RELAY, then the config file)")
    pw = p.add_mutually_exclusive_group()
    pw.add_argument("--password", metavar="PW", help="the room's password, if it has one (else it is asked for)")
    pw.add_argument("--password-file", metavar="FILE", help="the room's password is this file's first line")
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
    p.add_argument(
        "--move-time",
        type=move_time,
        metavar="SECONDS|none",
        help="the clock you expect: seconds for each move, or none (a different room fails)",
    )
    p.add_argument(
        "--deck",
        choices=DECKS,
        help="the deck you expect (default sealed: nobody's program sees the cards it may not); shared plays a "
        "shared-deck room, whose programs can compute every card (a different room fails)",
    )
    p.add_argument(
        "--no-watchers",
        dest="watchers",
        action="store_false",
        default=None,
        help="you expect a room nobody may watch (a room that allows watchers fails)",
    )
    p.add_argument(
        "--publish",
        action="store_true",
        help="a relay that keeps a public archive may publish this match even if the room is private (only if "
        "the host agrees too)",
    )
    p.add_argument("--transcript", metavar="PATH", help="write the transcript here (default: the user data dir)")
    add_player_arguments(p)


def run(args: argparse.Namespace) -> int:
    out = Output("koikoi join", args.json)
    typed = " ".join(args.room)
    code = normalize_code(typed)
    out.room = format_code(code) if code is not None else typed
    deck = deckmode.resolve(args.deck)  # sealed unless --deck shared: a shared room is a settings_mismatch
    out.expect = Expect(args.rounds, args.double, args.move_time, deck)

    def _body() -> int:
        spec = bot_spec_arg(args.bot)
        password = read_password(args.password, args.password_file)
        if args.json and spec is None:
            raise NetError("usage", "--json needs --bot: a person plays in the text mode")
        if code is None:  # never sent: the relay would count it as a failed attempt (and lock the address out)
            raise NetError("usage", _not_a_code(typed))
        tuning = Tuning.from_env()
        transcript = check_new_transcript(args.transcript)
        url = relay_from_config(args.relay) or DEFAULT_RELAY
        out.url = url
        key = load_key()
        lang, assist = look_options(args)
        game = NetGame(out, tuning, bot_spec=spec, lang=lang, assist=assist)
        game.presentation.expect = out.expect
        game.make_player(1, args.rounds or 6, plain=args.plain)
        try:
            return game.run(_main, args, game, url, key, transcript, tuning, code, password, deck)
        except (NetError, RelayError, BaseExceptionGroup) as exc:
            err = find_error(exc)
            if err is None or err.code != "too_many_attempts":
                raise
            said = err.message if isinstance(err, NetError) else relay_error_text(err, url, out.room, out.expect)[1]
            # the relay's window for failed attempts (--attempts-window) is 60 s unless its operator changed it
            raise NetError(err.code, f"{said}; wait about a minute before trying again") from None
        finally:
            game.close()

    return reported(out, _body)


async def _main(
    args: argparse.Namespace,
    game: NetGame,
    url: str,
    key: Ed25519PrivateKey,
    transcript: Path | None,
    tuning: Tuning,
    room: str,
    password: str | None,
    deck: str | None,
) -> int:
    """``room``: the code as the player typed it, normalised (the HELLO binds it: a relay that seats this
    player in another room is caught)."""
    out = game.out

    async def acquire(client: RelayClient) -> SeatTicket:
        pw = password
        try:
            info = await client.room_info(room)
            out.room = info.display
            mt = info.move_time_s
            out.event(
                "room",
                room=info.display,
                relay=url,
                settings=settings_json(info.rounds, info.double_at_8, mt, info.deck),
                witness=client.relay_fingerprint or None,
            )
            lock = "needs a password" if info.password else "no password"
            state = "" if info.state == "waiting" else "; both seats are taken"
            bound = settings_text(info.rounds, info.double_at_8, mt, info.deck)
            out.say(f"Room {info.display} on {url}: {bound} ({lock}{state}).")
            if info.watchers:
                out.say(_watch_words(info))
            if info.archive:
                out.say(f"This relay keeps a public archive: {_archive_words(info.private, args.publish)}")
            if game.presentation.console is not None and info.rounds is not None:
                game.presentation.console.narrator.rounds = info.rounds
            # checked here, before any password and before the seat: the relay checks all but the deck, and a
            # joiner seated in a room of another deck would end the host's room in the handshake
            differ = mismatch_parts(out.expect, settings_json(info.rounds, info.double_at_8, mt, info.deck))
            if args.watchers is False and info.watchers:
                differ.append("watchers: you no, room yes")
            if differ:
                raise NetError("settings_mismatch", SETTINGS_DIFFER + "; ".join(differ))
            asks = not out.json and (game.presentation.table is not None or sys.stdin.isatty())
            for attempt in range(1, PASSWORD_TRIES + 1):
                if info.password and pw is None and asks:
                    pw = await _ask(game, info.display, attempt)
                try:
                    return await client.join(
                        room,
                        password=pw,
                        rounds=args.rounds,
                        double_at_8=args.double,
                        move_time_s=args.move_time,
                        watchers=args.watchers,
                    )
                except RelayError as e:
                    if e.code != "wrong_password" or pw is None or not asks or attempt == PASSWORD_TRIES:
                        raise
                    pw = None  # wrong: asked again
            raise AssertionError("unreachable")  # pragma: no cover
        except RelayError as e:
            code, message = relay_error_text(e, url, out.room, out.expect)
            raise NetError(code, message) from None

    def prepare(ticket: SeatTicket) -> None:
        assert game.link is not None
        path = transcript or new_transcript_path(ticket.room, "join")
        game.session = Session.join(
            key,
            room,
            os.urandom(32),
            rounds=args.rounds,
            double_at_8=args.double,
            move_time_s=args.move_time,
            relay_key=game.link.relay_key,
            timeouts=tuning.timeouts,
            watchers=args.watchers,
            publish=args.publish,
            **deckmode.session_kwargs(deck),
        )
        game.journal.writer = open_transcript(path)
        game.journal.state = SeatRecord(
            path, ticket, bot=args.bot, json=args.json, lang=game.lang, assist=game.assist, plain=args.plain
        )
        game.journal.state.save()
        out.say("Joined: waiting for the host's signed settings…")

    return await game.main(url, acquire, prepare, key)


def _watch_words(info: RoomInfo) -> str:
    """What a room that allows watchers means for its players (the host chose it; both HELLOs bind it)."""
    now = f" ({info.watching} watching now)" if info.watching else ""
    if info.deck == "shared":
        return (
            f"Watchers may follow this match{now} (koikoi watch), and in a shared-deck room their programs can "
            "compute every card, yours too."
        )
    return f"Watchers may follow this match{now} (koikoi watch): they see the public cards only."


def _archive_words(private: bool, publish: bool) -> str:
    """What the archive of the relay will do with this match."""
    if not private:
        return "this match is published there once it ends (your key's fingerprint, every move, the result)."
    if publish:
        return "you said --publish, so this private room's match is published there if the host said so too."
    return "a private room's match is published only if both players say --publish (you did not)."


def _not_a_code(typed: str) -> str:
    """What is wrong with something :func:`normalize_code` refuses, in one line."""
    bad = [c for c in dict.fromkeys(typed) if c.upper() not in ALPHABET and c not in " -"]
    if bad:
        listed = ", ".join(repr(c) for c in bad)
        return (
            f"{typed!r} is not a room code: {listed} cannot be in one (codes use only {ALPHABET}; case, spaces "
            "and dashes do not matter)"
        )
    n = len(typed.replace("-", "").replace(" ", ""))
    if n in (PUBLIC_CODE_LENGTH, PRIVATE_CODE_LENGTH):  # (the right letters, with too many spaces or dashes)
        return f"{typed!r} is not a room code: too long with its spaces and dashes"
    return (
        f"{typed!r} is not a room code: it has {n} letters and digits, a code has {PUBLIC_CODE_LENGTH} (a public "
        f"room) or {PRIVATE_CODE_LENGTH} (a private room; spaces and dashes do not matter)"
    )


PASSWORD_TRIES = 3
"""How many passwords a person at a terminal may type for a room before ``join`` gives up (the relay allows an
address 5 wrong ones per room a minute)."""
_WRONG = {"en": "Wrong password (try {n} of {of}). ", "ja": "パスワードが違います（{n}/{of}回目）。"}


async def _ask(game: NetGame, display: str, attempt: int) -> str | None:
    """The room's password from the person, without echo: on the board, or at the terminal's prompt (None:
    they gave none). From the second ``attempt`` on, the question says the last one was wrong."""
    if game.presentation.table is not None:  # on the board: a password field over it, never echoed
        lang = game.presentation.table.lang
        wrong = _WRONG["ja" if lang == "ja" else "en"].format(n=attempt, of=PASSWORD_TRIES) if attempt > 1 else ""
        question = wrong + say(lang, "password", room=display)
        try:
            return await trio.to_thread.run_sync(game.presentation.table.ask_secret, question, abandon_on_cancel=True)
        except PlayerQuit:
            return None  # left the board: the relay's refusal says a password is needed
    wrong = _WRONG["en"].format(n=attempt, of=PASSWORD_TRIES) if attempt > 1 else ""
    return await trio.to_thread.run_sync(_ask_password, display, wrong) or None


def _ask_password(display: str, wrong: str = "") -> str:
    """The room's password, typed without echo (EOF or Ctrl-D: none)."""
    try:
        return getpass.getpass(f"{wrong}Room {display} needs a password: ")
    except EOFError:
        return ""
