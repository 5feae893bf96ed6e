"""The match loop's lines in the player's language (client/tui/words.py): settings, move times, endings.

:class:`MatchWords` says them in ``--lang``'s language or the locale's (English with ``--json``); the
English lines of settings and move times are :mod:`koikoi.client.output`'s, which the commands that
report errors share.
"""

from __future__ import annotations

from typing import Any

from ..protocol.errors import CODES, Code
from ..relay.client import RelayError, RoomClosed
from .link import RETRY
from .output import Expect, mismatch_parts, move_time_text, settings_text
from .tui.words import WORDS, say

__all__ = ["MatchWords"]


class MatchWords:
    def __init__(self) -> None:
        self.words_lang = "en"
        """The language of the lines said to the player (``--lang`` or the locale; English with ``--json``)."""
        self.expect = Expect()
        """What the joiner expects of the room's settings (for the words of a mismatch)."""
        self.creator_settings: dict[str, Any] | None = None
        """The settings the creator's HELLO signed, once it is in (for the words of a mismatch)."""

    def w(self, key: str, **fields: object) -> str:
        """One of the lines said to the player, in its language (client/tui/words.py)."""
        return say(self.words_lang, key, **fields)

    words = w
    """The same, for the commands that set up a match (``koikoi host``'s room lines)."""

    def move_time_words(self, move_time_s: int | None) -> str:
        if self.words_lang != "ja":
            return move_time_text(move_time_s)
        if move_time_s is None:
            return self.w("net_move_time_unknown")
        return self.w("net_move_time_none") if move_time_s == 0 else self.w("net_move_time", s=move_time_s)

    def settings_words(
        self, rounds: int | None, double_at_8: bool | None, move_time_s: int | None = None, deck: str | None = None
    ) -> str:
        """:func:`settings_text` in the player's language."""
        if self.words_lang != "ja":
            return settings_text(rounds, double_at_8, move_time_s, deck)
        parts = [self.w("net_rounds_unknown") if rounds is None else self.w("net_rounds", n=rounds)]
        if double_at_8 is not None:
            parts.append(self.w("net_double_on" if double_at_8 else "net_double_off"))
        if move_time_s is not None:
            parts.append(self.move_time_words(move_time_s))
        if deck is not None:
            known = {"sealed": "net_deck_sealed", "shared": "net_deck_shared"}
            parts.append(self.w(known[deck]) if deck in known else self.w("net_deck_other", deck=deck))
        return self.w("net_list").join(parts)

    def what_words(self, what: str) -> str:
        """The session's ``move`` / ``result`` / ``handshake`` in the player's language."""
        key = f"net_what_{what}"
        return self.w(key) if key in WORDS["en"] else what

    def ending_text(
        self,
        me: int,
        code: str | None,
        message: str,
        by: int | None,
        winner: int | None,
        failure: str | None,
        *,
        short: bool = False,
    ) -> str:
        """Why the match ended, in words, to the player of seat ``me`` (``failure``: why this seat's player
        resigned, if it failed; ``short``: without who wins, which the caller says)."""
        mine = by == me
        w = self.w
        if failure is not None and mine:
            head = w("net_you_resigned_failure", failure=failure)
        elif code == "opponent_left":
            head = w("net_they_left" if mine else "net_you_away")
        elif code == "timeout":
            head = w("net_they_slow" if mine else "net_you_slow")
        elif code == "resigned":
            head = w("net_you_resigned" if mine else "net_they_resigned")
        elif code == "unproven_abort":
            head = w("net_you_accused" if mine else "net_they_accused")
        elif code == "unwitnessed_timeout":
            head = w("net_you_claimed" if mine else "net_they_claimed")
        elif code == "settings_mismatch":
            parts = mismatch_parts(self.expect, self.creator_settings) if self.creator_settings else []
            if parts:
                head = w("net_settings_differ", parts="; ".join(parts))
            else:
                head = w("net_settings_differ_raw", message=message)
        elif code == "room_mismatch":
            head = w("net_room_mismatch", message=message)
        elif code == "relay_mismatch":
            head = w("net_relay_mismatch", message=message)
        else:
            what = CODES[Code(code)] if code is not None and code in CODES else message
            side = w("net_fault_them" if mine else "net_fault_me")
            head = w("net_fault", side=side, code=code, what=what, message=message)
        if short:
            return head
        if winner is None:
            return w("net_nobody_wins", head=head)
        return w("net_you_win" if winner == me else "net_they_win", head=head)

    def interrupted_words(self, joined: bool | None, path_arg: str) -> str:
        """The loop stopped at the person's word, the seat kept (``joined``: whether the opponent had joined;
        None: no seat file; ``path_arg``: the transcript, for ``koikoi resume``)."""
        if joined is False:
            return self.w("net_interrupted_waiting")
        resume = "`koikoi resume`" if joined is None else f"`koikoi resume {path_arg}`"
        return self.w("net_interrupted", resume=resume)

    def gave_up_words(self, e: RelayError, notice: RoomClosed | None, url: str, path_arg: str) -> tuple[str, str]:
        """Why the loop stops, the seat kept, when the link gave up with the relay's error ``e`` (``notice``: the
        room's closing the relay told of before, if it then refused the seat back): a code and its line."""
        w = self.w
        if notice is not None and e.code in ("room_closed", "room_not_found"):
            return (
                "opponent_left" if notice.code == "opponent_left" else "room_closed",
                w(
                    "net_closed_stop",
                    code=notice.code,
                    message=notice.message,
                    err=e.code,
                    cert=w("net_closed_cert") if notice.code == "opponent_left" else "",
                    path=path_arg,
                ),
            )
        if e.code == "replaced":
            return "replaced", w("net_replaced")
        if e.code not in RETRY:
            return e.code, w("net_refused", code=e.code, message=e.message, path=path_arg)
        return "relay_unreachable", w(
            "net_unreachable",
            url=url,
            message=e.message.removeprefix(f"cannot reach the relay at {url}: "),
            path=path_arg,
        )
