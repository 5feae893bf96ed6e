"""What ``koikoi host``, ``join`` and ``resume`` check and build before a match: options, the key,
the transcript's path, the relay's URL, and the session rebuilt from a transcript."""

from __future__ import annotations

import argparse
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..protocol.errors import ProtocolError
from ..protocol.session import Session
from . import transcript_file
from .botspec import BotSpec, BotSpecError, parse_bot_spec
from .config import ConfigError, load_config, relay_url_ok, resolve_relay
from .identity import IdentityError, load_or_create
from .output import NetError, disk_error
from .transcript_file import DamagedTranscript, TranscriptWriter, read_for_resume
from .tuning import Tuning

__all__ = [
    "DEFAULT_RELAY",
    "LANG_HELP",
    "PLAIN_HELP",
    "add_player_arguments",
    "bot_spec_arg",
    "check_new_transcript",
    "config_words",
    "load_key",
    "look_options",
    "new_transcript_path",
    "open_transcript",
    "read_password",
    "relay_from_config",
    "replay_session",
]

DEFAULT_RELAY = "ws://127.0.0.1:7878"

PLAIN_HELP = (
    "the narrated text mode (for screen readers and pipes; chosen by itself when the output is not a terminal or"
    " TERM is dumb) instead of the full-screen board"
)

LANG_HELP = (
    "the whole interface in English or Japanese: the board and the match's messages (the --plain narration of"
    " the play keeps English sentences with the card names in the language chosen; default: from the locale)"
)


def load_key() -> Ed25519PrivateKey:
    try:
        key, _created = load_or_create()
    except IdentityError as e:
        raise NetError("identity", str(e)) from None
    return key


def new_transcript_path(room: str, role: str) -> Path:
    """A new networked match's transcript path: ``…/transcripts/<UTC time>-<room>-<role>.koikoi``."""
    return transcript_file.new_transcript_path(f"{room}-{role}")


def open_transcript(path: Path) -> TranscriptWriter:
    """A new transcript file (its header on disk); NetError ``disk_full`` / ``transcript_error``."""
    try:
        return TranscriptWriter(path)
    except OSError as e:
        raise disk_error(e, path, resumable=False) from None


def check_new_transcript(text: str | None) -> Path | None:
    """The ``--transcript`` path, checked before anything starts (NetError ``usage``)."""
    if text is None:
        return None
    p = Path(text).expanduser()
    if p.exists():
        raise NetError("usage", f"{p} already exists: choose another --transcript (a transcript is never overwritten)")
    if p.parent and not p.parent.exists():
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise NetError("usage", f"cannot create {p.parent}: {e.strerror}") from None
    return p


def replay_session(
    key: Ed25519PrivateKey, path: Path, tuning: Tuning, seat: int | None = None
) -> tuple[Session, TranscriptWriter]:
    """The session rebuilt from a transcript file, and a writer that appends to it (as ``seat``, the seat
    ticket's, when given: one key may have signed both seats' HELLOs).

    The whole file is verified first (every record, this player's own too: signatures, chain,
    sequence). Damage anywhere but a torn final record refuses (NetError ``not_resumable``, one line)
    and leaves the file exactly as it was; a torn final record (an incomplete write, never sent) is
    dropped only once everything before it has checked."""
    untouched = "; the file is left as it was"
    try:
        rf = read_for_resume(path)
    except DamagedTranscript as e:
        raise NetError("not_resumable", f"{path} cannot be resumed: it is damaged ({e}){untouched}") from None
    except OSError as e:
        raise NetError("not_resumable", f"cannot read {path}: {e.strerror or e}") from None
    try:
        session = Session.from_transcript(key, rf.frames, tuning.timeouts, seat=seat)
    except ProtocolError as e:
        raise NetError(
            "not_resumable",
            f"{path} cannot be resumed: it is damaged ({e.code}: {e.message}){untouched}",
        ) from None
    except ValueError as e:  # TranscriptDamaged (one line naming the record), or not this player's
        raise NetError("not_resumable", f"{path} cannot be resumed: {_one_line(e)}{untouched}") from None
    try:
        writer = rf.open_writer()
    except OSError as e:
        raise disk_error(e, path) from None
    return session, writer


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else e.__class__.__name__


def read_password(given: str | None, file: str | None) -> str | None:
    """``--password`` or the first line of ``--password-file`` (NetError ``usage`` when empty or unreadable)."""
    if file is not None:
        try:
            with open(Path(file).expanduser(), encoding="utf-8") as f:
                given = f.readline().rstrip("\r\n")
        except OSError as e:
            raise NetError("usage", f"--password-file: cannot read {file}: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise NetError("usage", f"--password-file: {file} is not UTF-8 text") from None
        if not given:
            raise NetError("usage", f"--password-file: the first line of {file} is empty")
    if given is not None and not given:
        raise NetError("usage", "--password cannot be empty")
    return given


def add_player_arguments(p: argparse.ArgumentParser) -> None:
    """The options every networked command shares: who plays, and how it is shown."""
    p.add_argument(
        "--bot",
        metavar="NAME",
        help="let a bot play this seat: a built-in bot (random, greedy, strong, master) or cmd:PROGRAM",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON event per line (room, match_start, round_end, match_end, error); needs --bot",
    )
    p.add_argument("--lang", choices=("en", "ja"), help=LANG_HELP)
    p.add_argument("--no-assist", action="store_true", help="do not mark the cards that capture")
    p.add_argument("--plain", action="store_true", help=PLAIN_HELP)


def bot_spec_arg(text: str | None) -> BotSpec | None:
    """``--bot``, checked (NetError ``usage`` when it names no bot)."""
    if text is None:
        return None
    try:
        return parse_bot_spec(text)
    except BotSpecError as e:
        raise NetError("usage", str(e)) from None


def relay_from_config(cli_value: str | None) -> str | None:
    """--relay, else KOIKOI_RELAY, else the config file (None: none configured)."""
    if cli_value is not None and cli_value.strip() and not relay_url_ok(cli_value.strip()):
        raise NetError(
            "usage", f"--relay: not a relay URL: {cli_value.strip()!r} (expected ws://HOST:PORT or wss://HOST)"
        )
    try:
        return resolve_relay(cli_value)
    except ConfigError as e:  # $KOIKOI_RELAY or the config file's (each names itself)
        raise NetError("config", config_words(e)) from None


def config_words(e: ConfigError) -> str:
    """A config error in words: the file's problems ``bad config file …: … (fix or remove it)``, or
    ``$KOIKOI_RELAY must be … (fix or unset it)``."""
    text = str(e)
    if text.startswith("$"):
        return f"{text} (fix or unset it)"
    return f"bad config file {text} (fix or remove it)"


def look_options(args: argparse.Namespace) -> tuple[str | None, bool]:
    """``(lang, assist)`` from the options, else the config file."""
    try:
        cfg = load_config()
    except ConfigError:
        cfg = None
    lang = args.lang or (cfg.lang if cfg is not None else None)
    assist = not args.no_assist and not (cfg is not None and cfg.assist is False)
    return lang, assist
