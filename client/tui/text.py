"""Terminal text: the look (language, colour, width, assist), display width, wrapping, fallbacks.

Everything here is pure: it takes the environment and the stream as arguments
so tests (and a networked client) decide what the terminal is.
"""

from __future__ import annotations

import os
import re
import shutil
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TextIO

__all__ = [
    "MIN_WIDTH",
    "Look",
    "Seats",
    "can_encode",
    "detect_lang",
    "display_width",
    "look_for",
    "safe_text",
    "strip_ansi",
    "use_color",
    "wrap",
]

MIN_WIDTH = 40
_JA_PROBE = "松に鶴、桜のカス"

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_BOLD, _GREEN, _YELLOW, _CYAN, _RESET = "\x1b[1m", "\x1b[32m", "\x1b[33m", "\x1b[36m", "\x1b[0m"


@dataclass(frozen=True, slots=True)
class Look:
    """How the screen looks: card-name language, colour, width, assist marks, plain-ASCII symbols."""

    lang: str = "en"
    color: bool = False
    width: int = 80
    assist: bool = True
    ascii_only: bool = False

    def __post_init__(self) -> None:
        if self.lang not in ("en", "ja"):
            raise ValueError(f"lang must be en or ja, not {self.lang!r}")

    def bold(self, text: str) -> str:
        return f"{_BOLD}{text}{_RESET}" if self.color else text

    def mark(self, text: str) -> str:
        """An assist mark (a capturable card, a match)."""
        return f"{_GREEN}{text}{_RESET}" if self.color else text

    def light(self, text: str) -> str:
        return f"{_YELLOW}{text}{_RESET}" if self.color else text

    def note(self, text: str) -> str:
        return f"{_CYAN}{text}{_RESET}" if self.color else text

    def with_(self, **changes: object) -> Look:
        return replace(self, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Seats:
    """Who is who in sentences: ``me`` is the seat reading the screen (None: a spectator)."""

    me: int | None = 0
    names: tuple[str, str] = ("You", "Computer")

    def who(self, seat: int) -> str:
        return "You" if seat == self.me else self.names[seat]

    def whose(self, seat: int) -> str:
        return "your" if seat == self.me else f"{self.names[seat]}'s"

    def Whose(self, seat: int) -> str:
        w = self.whose(seat)
        return w[:1].upper() + w[1:]

    def verb(self, seat: int, base: str) -> str:
        """``base`` conjugated for ``seat``: "You play" / "Computer plays"."""
        if seat == self.me:
            return base
        irregular = {"have": "has", "are": "is", "were": "was"}
        if base in irregular:
            return irregular[base]
        if base.endswith(("s", "sh", "ch", "x", "o")):
            return base + "es"
        return base + "s"

    def other_name(self) -> str:
        """The opponent, for the reader."""
        if self.me is None:
            return self.names[1]
        return self.names[1 - self.me]


def detect_lang(env: Mapping[str, str] | None = None) -> str:
    """``ja`` when the locale asks for Japanese (LC_ALL, then LC_MESSAGES, then LANG), else ``en``."""
    env = os.environ if env is None else env
    for key in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(key, "")
        if value:
            return "ja" if value.lower().startswith("ja") else "en"
    return "en"


def _encoding(stream: TextIO) -> str:
    return getattr(stream, "encoding", None) or "ascii"


def can_encode(stream: TextIO, text: str) -> bool:
    try:
        text.encode(_encoding(stream))
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def use_color(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org) or TERM is dumb."""
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    if env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def terminal_width(env: Mapping[str, str] | None = None) -> int:
    del env
    return max(MIN_WIDTH, shutil.get_terminal_size().columns)


def look_for(
    stream: TextIO,
    *,
    lang: str | None = None,
    assist: bool = True,
    env: Mapping[str, str] | None = None,
    width: int | None = None,
) -> tuple[Look, str | None]:
    """The look for ``stream``, and a one-line notice when Japanese was asked for but cannot be shown.

    ``lang`` None: from the locale. Colour per :func:`use_color`; the width of
    the terminal (at least 40 columns).
    """
    lang = lang or detect_lang(env)
    notice = None
    if lang == "ja" and not can_encode(stream, _JA_PROBE):
        notice = f"This terminal cannot show Japanese (its encoding is {_encoding(stream)}): card names are in English."
        lang = "en"
    ascii_only = not can_encode(stream, "×→←·–ō")
    w = max(MIN_WIDTH, width if width is not None else terminal_width(env))
    return Look(lang=lang, color=use_color(stream, env), width=w, assist=assist, ascii_only=ascii_only), notice


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def display_width(text: str) -> int:
    """Columns ``text`` takes on a terminal: wide (CJK) characters count two, ANSI codes none."""
    n = 0
    for ch in strip_ansi(text):
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` display columns."""
    return text + " " * max(0, width - display_width(text))


def _split_long(word: str, width: int) -> list[str]:
    parts: list[str] = []
    cur = ""
    for ch in word:
        if cur and display_width(cur + ch) > width:
            parts.append(cur)
            cur = ""
        cur += ch
    if cur:
        parts.append(cur)
    return parts


def wrap(text: str, width: int, indent: str = "") -> list[str]:
    """Wrap one line at spaces to ``width`` display columns; continuation lines start with ``indent``
    (plus the leading spaces of ``text``). A word longer than a line is cut."""
    if display_width(text) <= width:
        return [text]
    lead = text[: len(text) - len(text.lstrip(" "))]
    cont = lead + indent
    if display_width(cont) > width // 2:
        cont = cont[: width // 2]
    words = text.strip(" ").split(" ")
    lines: list[str] = []
    cur = lead
    cur_has_word = False
    for word in words:
        sep = " " if cur_has_word else ""
        if display_width(cur + sep + word) <= width:
            cur += sep + word
            cur_has_word = True
            continue
        if cur_has_word:
            lines.append(cur)
            cur, cur_has_word = cont, False
        room = width - display_width(cur)
        if display_width(word) <= room:
            cur += word
            cur_has_word = True
            continue
        pieces = _split_long(word, max(1, room))
        for p in pieces[:-1]:
            lines.append(cur + p)
            cur = cont
        cur += pieces[-1]
        cur_has_word = True
    if cur_has_word:
        lines.append(cur)
    return lines


def wrap_all(lines: Iterable[str], width: int, indent: str = "    ") -> list[str]:
    out: list[str] = []
    for line in lines:
        out.extend(wrap(line, width, indent))
    return out


_ASCII = {
    "×": "x",
    "→": "->",
    "←": "<-",
    "·": "-",
    "–": "-",
    "—": "-",
    "ō": "o",
    "Ō": "O",
    "ū": "u",
    "…": "...",
    "‘": "'",
    "’": "'",
    "“": '"',
    "”": '"',
}
_ASCII_TABLE = str.maketrans(_ASCII)


def safe_text(text: str, encoding: str) -> str:
    """``text`` as the terminal can show it: known symbols spelled in ASCII, anything else replaced."""
    try:
        text.encode(encoding)
        return text
    except (UnicodeEncodeError, LookupError):
        pass
    text = text.translate(_ASCII_TABLE)
    try:
        return text.encode(encoding, errors="replace").decode(encoding)
    except LookupError:
        return text.encode("ascii", errors="replace").decode("ascii")
