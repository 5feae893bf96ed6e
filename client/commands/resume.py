"""``koikoi resume [PATH]``: continue an unfinished match after a crash or a lost connection."""

from __future__ import annotations

import argparse
from pathlib import Path

import trio
from nacl.signing import SigningKey

from ...protocol.witness import fingerprint
from ...relay.client import RelayClient, RelayError, SeatTicket
from ..deckmode import deck_of
from ..embedded import embedded_relay, linger
from ..link import resume_seat
from ..match_loop import NetGame
from ..netsetup import LANG_HELP, PLAIN_HELP, bot_spec_arg, load_key, replay_session
from ..output import NetError, Output, find_error, relay_error_text, reported, settings_json
from ..seats import SeatRecord, find_seat_state
from ..tuning import Tuning

COMMAND = "resume"
HELP = "continue an unfinished match (after a crash or a lost connection)"
DESCRIPTION = (
    "Continue an unfinished match from its transcript: the whole file is checked first (every signature, "
    "your own too; a file damaged anywhere but an incomplete last record is refused and left as it was), "
    "the seat is taken back on the relay with its token, whatever the opponent has not seen is sent again, "
    "and whatever this file lost is asked of the opponent before anything is decided. PATH defaults to the "
    "most recent unfinished match in the user data dir. The same player goes on (the bot it had, or you); "
    "--bot, --json and --relay override. Exit 0 when the match reached a result (won or lost, by any "
    "ending), 1 when it ended without one or cannot go on, 2 for usage errors."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "path", nargs="?", metavar="PATH", help="the transcript of the match (default: the most recent unfinished one)"
    )
    p.add_argument("--relay", metavar="URL", help="take the seat back on this relay instead of the match's")
    p.add_argument("--bot", metavar="NAME", help="let this bot play on (default: the player the match had)")
    p.add_argument("--json", action="store_true", default=None, help="one JSON event per line (default: as before)")
    p.add_argument("--lang", choices=("en", "ja"), help=LANG_HELP)
    p.add_argument("--no-assist", action="store_true", help="do not mark the cards that capture")
    p.add_argument("--plain", action="store_true", help=PLAIN_HELP)


def run(args: argparse.Namespace) -> int:
    probe = Output("koikoi resume", bool(args.json))

    def _body() -> int:
        state = find_seat_state(Path(args.path).expanduser() if args.path else None)
        json_mode = state.json if args.json is None else bool(args.json)
        out = Output("koikoi resume", json_mode)
        return _run(args, state, out)

    return reported(probe, _body)


def _run(args: argparse.Namespace, state: SeatRecord, out: Output) -> int:

    def _body() -> int:
        spec = bot_spec_arg(args.bot if args.bot is not None else state.bot)
        if out.json and spec is None:
            raise NetError("usage", "--json needs --bot: a person plays in the text mode")
        tuning = Tuning.from_env()
        key = load_key()
        session, writer = replay_session(key, state.transcript, tuning, state.ticket.seat)
        lang = args.lang or state.lang
        assist = state.assist and not args.no_assist
        game = NetGame(out, tuning, bot_spec=spec, lang=lang, assist=assist)
        game.session, game.journal.writer, game.journal.state = session, writer, state
        offered = session.offered_settings
        rounds = offered.rounds if offered is not None else 6
        try:
            if session.is_finished:  # it ended before the crash (only the seat file was left behind)
                if session.unacknowledged():  # the last message may not have gone out: deliver it
                    try:
                        return trio.run(_main, args, game, state, tuning)
                    except (NetError, RelayError, BaseExceptionGroup) as exc:
                        if find_error(exc) is None:
                            raise
                        out.note("(Your last message may not have reached your opponent: the relay is gone.)")
                return game.report_outcome()
            game.make_player(session.seat, rounds, plain=args.plain or state.plain)
            try:
                return game.run(_main, args, game, state, tuning)
            except (NetError, RelayError, BaseExceptionGroup) as exc:
                err = find_error(exc)
                if session.ended is not None and err is not None:  # decided by the relay's certificate
                    return game.report_outcome()
                if isinstance(err, RelayError) and err.code == "relay_unreachable":
                    raise NetError(err.code, _unreachable(args.relay or state.ticket.relay, state)) from None
                raise
        finally:
            game.close()

    return reported(out, _body)


def _unreachable(url: str, state: SeatRecord) -> str:
    """The relay of this match does not answer: which match this was, and the ways on (one line)."""
    return (
        f"cannot reach the relay at {url} (is it running? is the address right?) to resume room "
        f"{state.ticket.display} (transcript {state.transcript}): try again later, or --relay URL if it moved; "
        "continue another match with `koikoi resume PATH`; or, if this relay is gone for good, give this "
        f"match up by deleting its seat file {state.path} (the transcript stays)"
    )


async def _main(args: argparse.Namespace, game: NetGame, state: SeatRecord, tuning: Tuning) -> int:
    out = game.out
    ticket = state.ticket
    url = args.relay or ticket.relay
    out.url = url
    out.room = ticket.display
    s = game.session
    assert s is not None

    async def acquire(client: RelayClient) -> SeatTicket:
        try:
            info = await resume_seat(client, ticket)
        except RelayError as e:
            cert = e.extra.get("cert")
            if e.code == "room_closed" and isinstance(cert, bytes) and not s.is_finished:
                # the opponent left past the grace period while this seat was away: the relay's certificate
                # of their silence may decide the match (the TIMEOUT claim is written, never sent: they left)
                game.record_offline(s.witnessed(cert))
            if e.code in ("room_closed", "room_not_found"):
                state.remove()  # the room is gone for good: nothing left to resume
            if e.code == "room_closed":
                reason = e.extra.get("reason", e.message)
                raise NetError(
                    "room_closed",
                    f"room {ticket.display} closed while you were away ({reason}): the "
                    "match cannot go on; your opponent may have claimed it",
                ) from None
            code, message = relay_error_text(e, url, ticket.display)
            raise NetError(code, message) from None
        game.resumed(info)
        offered = s.offered_settings
        rounds = offered.rounds if offered is not None else ticket.rounds
        dbl = offered.double_at_8 if offered is not None else ticket.double_at_8
        mt = s.move_time_s if s.move_time_s is not None else ticket.move_time_s
        out.event(
            "room",
            room=ticket.display,
            relay=url,
            settings=settings_json(rounds, dbl, mt, deck_of(s)),
            witness=client.relay_fingerprint or None,
        )
        restored = " (the relay had restarted: the room is rebuilt)" if info.restored else ""
        out.say(
            f"Took seat {ticket.seat} back in room {ticket.display} on {url}{restored}.",
            f"Transcript: {state.transcript}",
        )
        return ticket

    def prepare(t: SeatTicket) -> None:
        if t.relay != url:
            t.relay = url
        state.save()
        bound = s.relay_key
        if game.link is not None and bound != bytes(32) and game.link.relay_key != bound:
            out.note(
                f"Note: this relay's witness key ({game.link.relay_fingerprint or 'none'}) is not the one this "
                f"match bound ({fingerprint(bound)}): it cannot certify a timeout in this match."
            )

    if state.embedded is None or args.relay is not None:
        return await game.main(url, acquire, prepare, s.key)
    key = SigningKey(bytes.fromhex(state.embedded_key)) if state.embedded_key else SigningKey.generate()
    game.presentation.runs_relay = True
    async with embedded_relay(state.embedded, state.grace, key) as relay:
        out.url = url = relay.url
        code = await game.main(relay.url, acquire, prepare, s.key)
        await linger(relay, ticket.room, tuning.linger_s)
        return code
