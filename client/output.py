"""What a networked command says: text for people, or one JSON event per line (``--json``).

:class:`Output` writes; :class:`NetError` is a failure to report in words (with its ``code`` in
``--json``); :func:`reported` turns the errors of a command's body into one line and an exit code;
:func:`relay_error_text` puts a refused relay request into words.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from ..errors import KoikoiError
from ..relay.client import RelayError
from ..support import first_of

__all__ = [
    "DECKS",
    "SETTINGS_DIFFER",
    "Expect",
    "NetError",
    "Output",
    "Screen",
    "debug",
    "deck_text",
    "disk_error",
    "doubling_text",
    "find_error",
    "mismatch_parts",
    "move_time_text",
    "relay_error_text",
    "reported",
    "settings_json",
    "settings_text",
]


class NetError(KoikoiError):
    """A failure to report in words (and with its ``code`` in ``--json``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def disk_error(e: OSError, path: object, *, resumable: bool = True) -> NetError:
    """A failed write of the transcript or the seat file, in words: ``disk_full`` (no space, a quota,
    a file size limit) or ``transcript_error``."""
    why = e.strerror or e.__class__.__name__
    then = (
        f"; nothing unwritten was sent, and the seat is kept: make room, then `koikoi resume {shlex.quote(str(path))}`"
        if resumable
        else ""
    )
    if e.errno in _FULL:
        return NetError("disk_full", f"the disk is full: cannot write {path} ({why}){then}")
    return NetError("transcript_error", f"cannot write {path} ({why}){then}")


_DEBUG = bool(os.environ.get("KOIKOI_DEBUG_NET"))


def debug(*parts: object) -> None:
    """``KOIKOI_DEBUG_NET=1``: what the link and the match loop do, with times, on stderr."""
    if _DEBUG:
        print(f"[net {time.monotonic():.3f}]", *parts, file=sys.stderr, flush=True)


def find_error(exc: BaseException) -> NetError | RelayError | None:
    """The first NetError / RelayError inside ``exc`` (trio wraps errors in exception groups)."""
    return first_of(exc, NetError) or first_of(exc, RelayError)


def move_time_text(move_time_s: int | None) -> str:
    """``120 s a move``, ``no clock``, or ``? s a move`` (unknown)."""
    if move_time_s is None:
        return "? s a move"
    return "no clock" if move_time_s == 0 else f"{move_time_s} s a move"


DECKS = ("sealed", "shared")
"""The deck modes (spec/sealed.md): ``sealed``, nobody's program sees the cards it may not; ``shared``,
both derive the whole deal from the shared seed."""


def deck_text(deck: str | None) -> str:
    """``sealed deck``, ``shared deck`` (``? deck`` unknown)."""
    return f"{deck or '?'} deck"


def doubling_text(double_at_8: bool) -> str:
    """The doubling mid-sentence: ``×2 at 8+`` or ``no ×2 at 8+`` (the relay's ``doubling`` label, a column
    heading's value, keeps its capital: ``No ×2 at 8+``)."""
    return "×2 at 8+" if double_at_8 else "no ×2 at 8+"


def settings_text(
    rounds: int | None, double_at_8: bool | None, move_time_s: int | None = None, deck: str | None = None
) -> str:
    """``6 rounds, ×2 at 8+, 120 s a move, sealed deck`` (the move time and the deck only when known)."""
    r = "? rounds" if rounds is None else f"{rounds} rounds"
    if double_at_8 is not None:
        r = f"{r}, {doubling_text(double_at_8)}"
    if move_time_s is not None:
        r = f"{r}, {move_time_text(move_time_s)}"
    if deck is not None:
        r = f"{r}, {deck_text(deck)}"
    return r


def settings_json(
    rounds: int | None, double_at_8: bool | None, move_time_s: int | None = None, deck: str | None = None
) -> dict[str, Any]:
    return {"rounds": rounds, "double_at_8": double_at_8, "move_time_s": move_time_s, "deck": deck}


def mismatch_parts(expect: Expect, room: dict[str, Any]) -> list[str]:
    """What differs between what the joiner expects and the room's settings, in words."""
    parts = []
    if expect.rounds is not None and room.get("rounds") is not None and expect.rounds != room.get("rounds"):
        parts.append(f"rounds: you {expect.rounds}, room {room.get('rounds')}")
    want, have = expect.double_at_8, room.get("double_at_8")
    if want is not None and have is not None and want != have:
        parts.append(f"doubling at 8+: you {'on' if want else 'off'}, room {'on' if have else 'off'}")
    want_t, have_t = expect.move_time_s, room.get("move_time_s")
    if want_t is not None and have_t is not None and want_t != have_t:
        parts.append(f"move time: you {move_time_text(want_t)}, room {move_time_text(have_t)}")
    want_d, have_d = expect.deck, room.get("deck")
    if want_d is not None and have_d is not None and want_d != have_d:
        why = " (its host's program could see your cards; --deck shared plays it anyway)" if have_d == "shared" else ""
        parts.append(f"deck: you {want_d}, room {have_d}{why}")
    return parts


@dataclass(frozen=True, slots=True)
class Expect:
    """The settings a joiner expects (None: whatever the room has)."""

    rounds: int | None = None
    double_at_8: bool | None = None
    move_time_s: int | None = None
    deck: str | None = None


class Screen(Protocol):
    """Where ``say`` and ``note`` go while the full-screen board is up (a :class:`~.tui.table.Table`)."""

    def say(self, *lines: str) -> None: ...
    def note(self, *lines: str) -> None: ...


class Output:
    """Text for people on stdout, or one JSON event per line (``--json``). Errors in words on stderr.

    While the board is up (:meth:`attach`), nothing is printed: ``say`` and ``note`` go to the board,
    and errors and the last lines (:meth:`end`) are kept and printed by :meth:`detach`, once the
    terminal is back to normal."""

    def __init__(self, prog: str, json_mode: bool, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.prog = prog
        self.json = json_mode
        self.url = ""
        """The relay, for error messages."""
        self.room: str | None = None
        self.expect = Expect()
        self.transcript: str | None = None
        self.waiting_alone = False
        """A host whose room nobody has joined yet: an interruption saves no match."""
        """The match's transcript once there is one (named when the match is interrupted)."""
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.screen: Screen | None = None
        self._held: list[tuple[TextIO, str]] = []

    def attach(self, screen: Screen) -> None:
        """Send what is said to the board until :meth:`detach`."""
        self.screen = screen

    def detach(self) -> None:
        """The board is gone: print the errors and last lines kept meanwhile."""
        self.screen = None
        held, self._held = self._held, []
        for stream, text in held:
            self._write(stream, text)

    def _to_screen(self, note: bool, lines: tuple[str, ...]) -> bool:
        """Show ``lines`` on the board; False when there is none (any more)."""
        screen = self.screen
        if screen is None:
            return False
        try:
            (screen.note if note else screen.say)(*lines)
        except Exception:  # the board has closed (PlayerQuit): the terminal is being given back
            self.screen = None
            return False
        return True

    def _write(self, stream: TextIO, text: str) -> None:
        try:
            stream.write(text + "\n")
            stream.flush()
        except (OSError, ValueError):
            pass
        except UnicodeEncodeError:
            with contextlib.suppress(OSError, ValueError):
                stream.write(text.encode("ascii", "replace").decode("ascii") + "\n")
                stream.flush()

    def event(self, name: str, **fields: Any) -> None:
        if self.json:
            self._write(self.out, json.dumps({"event": name, **fields}, ensure_ascii=False))

    def say(self, *lines: str) -> None:
        """For people: stdout in text mode, nothing with --json."""
        if not self.json and not self._to_screen(False, lines):
            for line in lines:
                self._write(self.out, line)

    def note(self, *lines: str) -> None:
        """Progress worth knowing (reconnecting, the opponent away): stdout, or stderr with --json."""
        if not self.json and self._to_screen(True, tuple(line.strip("\n") for line in lines)):
            return
        for line in lines:
            self._write(self.err if self.json else self.out, line)

    def end(self, *lines: str) -> None:
        """The last lines (the result, the transcript): like ``say``, but kept for after the board."""
        if self.json:
            return
        if self.screen is not None:
            self._held.extend((self.out, line) for line in lines)
            return
        self.say(*lines)

    def error(self, code: str, message: str, **extra: Any) -> None:
        if self.screen is not None:
            self._held.append((self.err, f"{self.prog}: {message}"))
            self._to_screen(True, (message,))
            return
        self._write(self.err, f"{self.prog}: {message}")
        self.event("error", code=code, message=message, **extra)


SETTINGS_DIFFER = "the room's settings differ from what you expect: "
"""How a settings_mismatch begins (the joiner's own check of the room's settings, and the relay's refusal)."""


def relay_error_text(e: RelayError, url: str, room: str | None = None, expect: Expect | None = None) -> tuple[str, str]:
    """``(code, message)`` in words for a refused request."""
    code = e.code
    r = room or "?"
    expect = expect if expect is not None else Expect()
    if code == "relay_unreachable":
        if e.extra.get("tls"):  # a TLS handshake that failed: its words say why (not TLS there, a bad certificate)
            return code, e.message
        return code, f"cannot reach the relay at {url} (is it running? is the address right?)"
    if code == "not_a_relay":
        return code, e.message
    if code == "room_not_found":
        return code, f"no room {r} on the relay at {url} (check the code; it may have closed)"
    if code == "wrong_password":
        if "wrong" in e.message:
            return code, f"wrong password for room {r}"
        return code, f"room {r} needs a password (--password or --password-file)"
    if code == "room_full":
        return code, f"room {r} is full: two players are already in it"
    if code == "settings_mismatch":
        st = e.extra.get("settings")
        parts = mismatch_parts(expect, st if isinstance(st, dict) else {})
        return code, SETTINGS_DIFFER + ("; ".join(parts) or e.message)
    if code == "too_many_attempts":
        return code, f"the relay refuses for now: {e.message}"
    if code == "room_closed":
        return code, f"room {r} has closed ({e.extra.get('reason', e.message)})"
    return code, f"the relay at {url} refused: {e.message}"


def _interrupted(out: Output) -> int:
    if out.waiting_alone:
        out.error("interrupted", "interrupted before anyone joined: there is no match to continue")
        return 1
    path = "" if out.transcript is None else f" {shlex.quote(out.transcript)}"
    out.error("interrupted", f"interrupted: the match so far is saved; continue it with `koikoi resume{path}`")
    return 1


def reported(out: Output, body: Callable[[], int]) -> int:
    """Run ``body``; a NetError / RelayError (also inside trio's exception groups) becomes one line
    (and an ``error`` event) and exit code 1 (2 for usage errors)."""
    try:
        return body()
    except KeyboardInterrupt:
        return _interrupted(out)
    except (NetError, RelayError, BaseExceptionGroup) as exc:
        err = find_error(exc)
        if err is None:
            if isinstance(exc, BaseExceptionGroup) and exc.subgroup(KeyboardInterrupt) is not None:
                return _interrupted(out)
            raise
        if isinstance(err, NetError):
            out.error(err.code, err.message)
            return 2 if err.code == "usage" else 1
        code, message = relay_error_text(err, out.url, out.room, out.expect)
        out.error(code, message)
        return 1
