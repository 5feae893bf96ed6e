"""``koikoi practice``: play the computer in the terminal, no network.

The person sits in seat 0, the computer (a built-in bot at the chosen level, or
``--bot SPEC``) in seat 1, seeing only its own view. The first dealer is found
by turning cards. Settings given on the command line are remembered in the
config file for next time; settings not given come from it (6 rounds, doubling
on, level normal when never changed).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ...engine.bots import LEVELS, Bot
from ...engine.cards import card_name
from ...engine.deal import SeededDeal
from ...engine.match import Match, Settings, choose_first_dealer
from ...engine.selfplay import bot_rng, game_seed
from ...protocol.session import Session
from ..botspec import BotError, BotSpec, BotSpecError, bot_from_spec, close_bot, parse_bot_spec
from ..config import Config, ConfigError, PracticeSettings, config_path, load_config, save_config
from ..external_bot import ExternalBot
from ..output import doubling_text
from ..transcript_file import TranscriptWriter, new_transcript_path
from ..tui import Console, Look, PlayerQuit, Seats, first_dealer_lines, look_for
from ..tui.table import PlainTable, Table, want_plain
from ..tui.words import say

if TYPE_CHECKING:
    from ..tui.app import BoardTable

COMMAND = "practice"
HELP = "play the computer in the terminal (no network)"
DESCRIPTION = (
    "Play a whole match against the computer in the terminal, without any network. Options given are remembered"
    " for the next practice (in the config file); options not given come from it (6 rounds, doubling at 8+ on,"
    " level normal, when never changed). On a terminal the match is a full-screen board (a card's number, or"
    " arrows and Enter, plays it; k koi-koi, s shōbu, y the yaku, h help, q quit); --plain gives the narrated"
    " text mode (at its prompts: h help, t the table, q quit)."
)

_PREFIX = "koikoi practice"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rounds", type=int, choices=(6, 12), help="rounds in the match (remembered; default 6)")
    dbl = p.add_mutually_exclusive_group()
    dbl.add_argument("--double", dest="double", action="store_true", help="double a base of 8 or more (remembered)")
    dbl.add_argument("--no-double", dest="double", action="store_false", help="do not double a base of 8 or more")
    p.set_defaults(double=None)
    who = p.add_mutually_exclusive_group()
    who.add_argument(
        "--level",
        choices=tuple(LEVELS),
        help="the computer's strength: "
        + ", ".join(f"{k} ({v} bot)" for k, v in LEVELS.items())
        + " (remembered; default normal)",
    )
    who.add_argument("--bot", metavar="SPEC", help="the opponent: a built-in bot name or cmd:PROGRAM (not remembered)")
    p.add_argument(
        "--lang",
        choices=("en", "ja"),
        help="the board in English or Japanese (the --plain narration: card names only; default: from the locale)",
    )
    p.add_argument("--no-assist", action="store_true", help="do not mark the cards that capture")
    p.add_argument("--seed", metavar="S", help="any text: the same seed deals the same cards")
    p.add_argument(
        "--plain",
        action="store_true",
        help="the narrated text mode (for screen readers and pipes; chosen by itself when the output is not a"
        " terminal or TERM is dumb) instead of the full-screen board",
    )


def _err(message: str) -> None:
    print(f"{_PREFIX}: {message}", file=sys.stderr)


def _settings(args: argparse.Namespace) -> tuple[PracticeSettings, Config | None]:
    """The practice settings (given, else remembered) and the config (None when unreadable)."""
    try:
        cfg: Config | None = load_config()
    except ConfigError as e:
        _err(f"ignoring the config file: {e}")
        cfg = None
    saved = cfg.practice if cfg is not None else PracticeSettings()
    chosen = PracticeSettings(
        rounds=args.rounds if args.rounds is not None else saved.rounds,
        double_at_8=args.double if args.double is not None else saved.double_at_8,
        level=args.level if args.level is not None else saved.level,
    )
    if cfg is not None and chosen != cfg.practice:
        try:
            save_config(Config(cfg.relay, cfg.lang, cfg.assist, chosen, cfg.extra, cfg.practice_extra))
        except ConfigError as e:
            _err(f"could not remember these settings: {e}")
    elif cfg is None and chosen != saved:
        _err(f"not remembering these settings: fix or remove {config_path()} first")
    return chosen, cfg


def run(args: argparse.Namespace) -> int:
    spec: BotSpec | None = None
    if args.bot is not None:
        try:
            spec = parse_bot_spec(args.bot)
        except BotSpecError as e:
            _err(str(e))
            return 2
    chosen, cfg = _settings(args)
    lang = args.lang or (cfg.lang if cfg is not None else None)
    assist = not args.no_assist and not (cfg is not None and cfg.assist is False)
    look, notice = look_for(sys.stdout, lang=lang, assist=assist)
    settings = Settings(rounds=chosen.rounds, double_at_8=chosen.double_at_8)
    seed = game_seed(args.seed.encode(), 0) if args.seed is not None else os.urandom(32)
    lang_now = look.lang
    if spec is None:
        spec = parse_bot_spec(LEVELS[chosen.level])
        label = say(lang_now, "level", level=chosen.level, bot=LEVELS[chosen.level])
    else:
        label = say(lang_now, "bot", spec=spec.text)
    try:
        bot = bot_from_spec(spec, bot_rng(seed, 1))
    except (BotError, BotSpecError) as e:
        _err(str(e))
        return 1
    named = bot.hello_name if isinstance(bot, ExternalBot) else None  # (an external bot's hello name, if it gave one)
    seats = Seats(0, ("You", named or "Computer"))
    ja = look.lang == "ja"
    dbl = (
        say("ja", "double_on" if settings.double_at_8 else "double_off") if ja else doubling_text(settings.double_at_8)
    )
    intro = [say(look.lang, "intro", label=label, rounds=settings.rounds, dbl=dbl)]
    plain = want_plain(args.plain, sys.stdout, sys.stdin)
    try:
        if not plain and ja:
            seats = Seats(0, ("あなた", named or "コンピューター"))
        if plain:  # the narration itself is in English (card names in the language): see the README
            console = Console(sys.stdin, sys.stdout, seats, look, rounds=settings.rounds)
            if notice:
                console.say(notice)
            intro.append(say(look.lang, "plain_keys"))
            return _practice(PlainTable(console), bot, settings, seed, args.seed, intro, [])
        return _board(seats, look, bot, settings, seed, args.seed, intro)
    except PlayerQuit as q:
        _err(say(look.lang, "abandoned", how=_how(q.reason, look.lang)))
        return 1
    except KeyboardInterrupt:
        print(file=sys.stdout, flush=True)
        _err(say(look.lang, "abandoned", how=_how("interrupt", look.lang)))
        return 1
    except BotError as e:
        _err(f"match abandoned: the computer's bot failed: {e}")
        return 1
    finally:
        close_bot(bot)


def _how(reason: str, lang: str = "en") -> str:
    return say(lang, {"eof": "how_eof", "interrupt": "how_interrupt"}.get(reason, "how_quit"))


def _board(
    seats: Seats, look: Look, bot: Bot, settings: Settings, seed: bytes, seed_text: str | None, intro: list[str]
) -> int:
    from ..tui.app import run_board  # Textual loads only for the board

    transcripts: list[Path] = []

    def loop(table: BoardTable) -> int:
        return _practice(table, bot, settings, seed, seed_text, intro, transcripts)

    run = run_board(seats, look, settings.rounds, loop)
    if run.error is not None and not isinstance(run.error, PlayerQuit):
        raise run.error
    if run.leave_reason in ("quit", "interrupt", "eof"):
        if transcripts:
            print(say(look.lang, "transcript", path=transcripts[-1]), flush=True)
        raise PlayerQuit(run.leave_reason)
    if run.model.match_end is not None:
        print(run.model.match_line(), flush=True)
    for path in transcripts:
        print(say(look.lang, "transcript", path=path), flush=True)
    return 0


def _practice(
    table: Table,
    bot: Bot,
    settings: Settings,
    seed: bytes,
    seed_text: str | None,
    intro: list[str],
    transcripts: list[Path] | None = None,
) -> int:
    """Whole matches until the person stops: play one, then "play again?". Each match's transcript
    is written when ``transcripts`` is a list (the paths are appended to it)."""
    n = 0
    while True:
        table.say(*intro)
        _play(table, bot, settings, seed, transcripts)
        if transcripts and isinstance(table, PlainTable):  # unwrapped: a path to copy
            table.console.screen.write([f"Transcript: {transcripts[-1]}"])
        if not table.ask_again():
            return 0
        n += 1
        seed = game_seed(seed_text.encode(), n) if seed_text is not None else os.urandom(32)
        table.reset()


def _first_dealer(table: Table, turned: list[tuple[int, int]], dealer: int) -> list[str]:
    if isinstance(table, PlainTable):
        return first_dealer_lines(turned, dealer, table.console.seats, Look(width=1000))
    lang = table.lang
    names = table.seats.names
    out = [say(lang, "turned_again", a=card_name(a, lang), b=card_name(b, lang)) for a, b in turned[:-1]]
    a, b = turned[-1]
    who = ("あなた" if lang == "ja" else "you") if dealer == 0 else names[1]
    out.append(say(lang, "turned", a=card_name(a, lang), b=card_name(b, lang), name=names[1], who=who))
    return out


ROOM = "PRACTICE"


def _derived(label: bytes, seed: bytes, seat: int) -> bytes:
    return hashlib.sha256(b"koikoi/practice-" + label + b"/v1\x00" + seed + bytes([seat])).digest()


def transcript_path() -> Path:
    """A new practice transcript's path in the data dir's ``transcripts`` folder."""
    return new_transcript_path("practice")


class _Wire:
    """The practice match's two sessions joined in memory: each one's frames go straight to the other, with
    the control flag the sender gives them (no relay, no clock: both seats are this program). The person's
    seat's records are kept, for its transcript."""

    def __init__(self, me: Session, them: Session, bot: Bot) -> None:
        self.sessions = (me, them)
        self.bot = bot
        self.queues: tuple[deque[tuple[bytes, bool]], deque[tuple[bytes, bool]]] = (deque(), deque())
        self.records: list[bytes] = []
        """Seat 0's records, in order (what its transcript holds)."""

    def flush(self, seat: int) -> None:
        s = self.sessions[seat]
        for rec in s.records():
            if seat == 0:
                self.records.append(rec.frame)
        self.queues[1 - seat].extend((frame, s.is_control(frame)) for frame in s.frames_to_send())

    def step(self) -> bool:
        """Deliver one frame or make the computer's move; False when nothing can happen now."""
        for seat in (0, 1):
            self.flush(seat)
        for seat in (0, 1):
            if self.queues[seat]:
                frame, ctl = self.queues[seat].popleft()
                self.sessions[seat].receive(frame, ctl=ctl)
                self.flush(seat)
                return True
        them = self.sessions[1]
        if them.my_turn:
            them.play(self.bot.choose(them.view()))
            self.flush(1)
            return True
        return False


def _play(table: Table, bot: Bot, settings: Settings, seed: bytes, transcripts: list[Path] | None = None) -> Match:
    """One match, through the match protocol between two local keys (the person's seat 0 and the
    computer's seat 1), in memory: the person's transcript is the same signed record a network
    match leaves, so ``koikoi audit`` and ``koikoi replay`` read it. Keys and nonces derive from
    ``seed``: the same seed deals the same cards."""
    keys = [Ed25519PrivateKey.from_private_bytes(_derived(b"key", seed, s)) for s in (0, 1)]
    me = Session.create(keys[0], ROOM, settings, _derived(b"nonce", seed, 0))
    them = Session.join(keys[1], ROOM, _derived(b"nonce", seed, 1), rounds=settings.rounds,
                        double_at_8=settings.double_at_8)  # fmt: skip
    wire = _Wire(me, them, bot)
    me.start()
    them.start()
    shown = -1
    try:
        while True:
            progressed = wire.step()
            m = me.match
            if m is not None and len(m.log) != shown:
                if shown < 0 and me.seed is not None:
                    dealer, turned = choose_first_dealer(SeededDeal(me.seed))
                    table.say(*_first_dealer(table, turned, dealer))
                shown = len(m.log)
                table.show(m.log, me.view())
            if me.my_turn:
                me.play(table.choose(me.view()))
                wire.flush(0)
                continue
            if not progressed:
                break
    finally:
        if transcripts is not None:
            path = transcript_path()
            with TranscriptWriter(path) as w:
                for frame in wire.records:
                    w.append(frame)
            transcripts.append(path)
    assert me.match is not None and me.is_finished, "the practice match stalled"
    return me.match
