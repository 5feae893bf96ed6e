"""The human player: asks for an action on a terminal and returns it.

Two layers, so a networked client can use either:

* :class:`ActionPrompt`, sans-IO: built from a :class:`SeatView`, it gives the
  lines to show (``context()``), the current question (``question()``), and
  takes one line of input at a time (``feed(line)``), answering with more lines
  to show and, once the answer is complete, the :class:`Action`. Bad input
  never raises: it explains what was wrong and asks again.
* :class:`HumanPlayer`, blocking: ``choose(view) -> Action`` on an input/output
  stream pair (the same interface as a bot), for ``koikoi practice`` or for a
  worker thread (``trio.to_thread.run_sync(player.choose, view)``). ``q`` or
  end of input raises :class:`PlayerQuit`.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from ...engine.actions import CHOOSE, KOIKOI, PLAY, PLAY_AT, SHOBU, Action, ActionKind, NotationError, parse_action
from ...engine.cards import CARD_IDS, Card, UnknownCard, card_from_id
from ...engine.match import Phase, SeatView
from ...engine.yaku import yaku_of
from ...errors import LocalError
from .render import card_list, card_name, count_lines, matches_in, points_text, render_view, shobu_breakdown, yaku_name
from .text import Look, Seats, safe_text, wrap_all

__all__ = ["ActionPrompt", "HumanPlayer", "PlayerQuit", "Reply", "TextScreen", "clock_text"]

_QUIT = ("q", "quit", "exit")
_HELP = ("h", "help", "?")
_TABLE = ("t", "table", "r")
_BACK = ("b", "back", "0")
_NUMBERISH = re.compile(r"[-+]?\s*[\d.,]+")
"""Text that looks like a number (``-1``, ``1.5``, ``12``): answered as a number, never with card ids."""


class PlayerQuit(LocalError):
    """The player asked to stop (``q``) or the input ended (Ctrl-D). ``reason`` is "quit" or "eof"."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass
class Reply:
    """What one line of input led to: lines to show, and the action once complete (or quit)."""

    lines: list[str] = field(default_factory=list)
    action: Action | None = None
    quit: bool = False


def _range(n: int) -> str:
    return "1" if n == 1 else f"1–{n}"


class ActionPrompt:
    """The questions for one decision of ``view.seat`` (sans-IO: feed it lines)."""

    def __init__(self, view: SeatView, seats: Seats, look: Look) -> None:
        if not view.legal_actions:
            raise ValueError("it is not this seat's decision: the view has no legal actions")
        self.view = view
        self.seats = seats
        self.look = look
        self.legal = set(view.legal_actions)
        self.hand: list[Card] = list(view.hand)
        # The card chosen in PLAY whose two matches need a choice; None while picking a card.
        self.picking: Card | None = None

    # -- what to show ---------------------------------------------------

    def _wrap(self, lines: Iterable[str]) -> list[str]:
        return wrap_all(lines, self.look.width, "    ")

    def context(self) -> list[str]:
        """What to show before the first question."""
        v = self.view
        look = self.look
        if v.phase is Phase.PLAY:
            return ["", *render_view(v, self.seats, look)]
        if v.phase is Phase.CHOOSE:
            assert v.pending_draw is not None
            return self._wrap(
                [f"Which field card does the drawn {card_name(v.pending_draw, look)} capture?", *self._option_lines()]
            )
        # DECIDE
        ys = yaku_of(sum(1 << c for c in v.captures[v.seat]))
        out = ["", look.bold(f"Your yaku now: {points_text(v.totals[v.seat])}")]
        out += [f"  {yaku_name(y, look)}: {p}" for y, p in ys]
        bd = shobu_breakdown(v)
        out.append(f"If you call shōbu now, you win {points_text(bd.payment)}; the count:")
        out += count_lines(bd, look)
        if KOIKOI in self.legal:
            out.append(
                f"If you call koi-koi, play goes on with the multiplier at ×{v.multiplier + 1}; if "
                f"{self.seats.other_name()} then calls shōbu, you win nothing this round."
            )
        else:
            out.append("Both hands are empty: this is the last turn, so only shōbu is offered.")
        return self._wrap(out)

    def _options(self) -> list[Card]:
        v = self.view
        if self.picking is not None:
            return matches_in(self.picking, v.table)
        return [a.target for a in v.legal_actions if a.kind is ActionKind.CHOOSE]

    def _option_lines(self) -> list[str]:
        return [f"  {i}  {card_name(c, self.look)}" for i, c in enumerate(self._options(), start=1)]

    def question(self) -> str:
        """The question to ask now (no newline at the end)."""
        v = self.view
        if v.phase is Phase.PLAY and self.picking is None:
            return f"Card to play ({_range(len(self.hand))} or a card id; t table, h help, q quit): "
        if v.phase is Phase.PLAY:
            return f"Capture which with {card_name(self.picking or 0, self.look)}? (1–2 or a card id; b back): "
        if v.phase is Phase.CHOOSE:
            return "Capture which? (1–2 or a card id; t table, h help, q quit): "
        if KOIKOI in self.legal:
            return "Koi-koi or shōbu? (k = koi-koi, s = shōbu; t table, h help, q quit): "
        return "Press Enter (or s) to call shōbu (q quit): "

    def help(self) -> list[str]:
        v = self.view
        out = ["Help:"]
        if v.phase is Phase.PLAY and self.picking is None:
            out += [
                f"  Type the number of a card in your hand ({_range(len(self.hand))}), or its card id"
                " (e.g. matsu_crane); CARD*TARGET plays a card and picks its capture at once.",
                "  A card whose month is on the field captures; with two matches you choose which;"
                " with three it takes all three.",
            ]
            if self.look.assist:
                out.append("  * marks a hand card that captures; ← on the field names the hand cards that take it.")
        elif v.phase is Phase.DECIDE:
            out += [
                "  k (koi-koi): play on for more; the shared multiplier goes up by one.",
                "  s (shōbu): end the round now and take the count shown.",
            ]
        else:
            out.append("  Type 1 or 2 (or the card id) for the field card to capture.")
            if self.picking is not None:
                out.append("  b goes back to pick another card.")
        out.append("  t shows the table again; q abandons the match.")
        return self._wrap(out)

    # -- input ----------------------------------------------------------

    def feed(self, line: str) -> Reply:
        """Take one line of input."""
        text = line.strip()
        low = text.lower()
        if low in _QUIT:
            return Reply(quit=True)
        if low in _HELP:
            return Reply(self.help())
        if low in _TABLE:
            return Reply(["", *render_view(self.view, self.seats, self.look)])
        v = self.view
        if v.phase is Phase.PLAY and self.picking is None:
            return self._feed_play(text)
        if v.phase in (Phase.PLAY, Phase.CHOOSE):
            return self._feed_choice(text)
        return self._feed_decide(low)

    def _bad(self, message: str) -> Reply:
        return Reply(self._wrap([message]))

    def _feed_play(self, text: str) -> Reply:
        n = len(self.hand)
        if not text:
            return self._bad(f"Type the number of the card to play ({_range(n)}), or h for help.")
        if text.isdecimal():
            i = int(text)
            if not 1 <= i <= n:
                return self._bad(f"{i} is not a card in your hand ({_range(n)}).")
            return self._picked(self.hand[i - 1])
        try:
            action = parse_action(text.lower())
        except NotationError as e:
            return self._bad(self._unknown(text, e))
        if action.kind is not ActionKind.PLAY:
            return self._bad(f"Now play a card from your hand ({_range(n)}).")
        if action.card not in self.hand:
            return self._bad(f"{card_name(action.card, self.look)} ({CARD_IDS[action.card]}) is not in your hand.")
        if action.target < 0:
            return self._picked(action.card)
        if action in self.legal:
            return Reply(action=action)
        ms = matches_in(action.card, self.view.table)
        name = card_name(action.card, self.look)
        if action.target in ms and PLAY[action.card] in self.legal:  # one capture (or all three): no choice to make
            return Reply(action=PLAY[action.card])
        if not ms:
            return self._bad(f"{name} captures nothing now: type just its number or id to play it to the field.")
        if len(ms) != 2:
            return self._bad(f"{card_name(action.target, self.look)} is not on the field; {name} takes "
                             f"{card_list(ms, self.look, 'and')}: type just its number or id.")  # fmt: skip
        return self._bad(f"{card_name(action.target, self.look)} is not on the field; {name} can take "
                         f"{card_list(ms, self.look, 'or')}.")  # fmt: skip

    def _unknown(self, text: str, e: Exception) -> str:
        word = text.lower().split("*")[0] or text.lower()
        if _NUMBERISH.fullmatch(text.strip()):  # a number out of range, not a misspelt id: no card ids to suggest
            if self.view.phase is Phase.PLAY and self.picking is None:
                return f"{text} is not a card number: type 1–{len(self.hand)}."
            return f"{text} is not one of the choices: type 1 or 2."
        try:
            card_from_id(word)
        except UnknownCard as u:
            hint = f" Did you mean {', '.join(u.suggestions)}?" if u.suggestions else ""
            if self.view.phase is Phase.PLAY and self.picking is None:
                return f"{text} is not a card number ({_range(len(self.hand))}) or a card id.{hint}"
            return f"{text} is not one of the choices (1–2) or a card id.{hint}"
        return f"{text}: {e}"

    def _picked(self, card: Card) -> Reply:
        ms = matches_in(card, self.view.table)
        if len(ms) == 2:
            self.picking = card
            return Reply(self._wrap([f"{card_name(card, self.look)} matches two field cards:", *self._option_lines()]))
        action = PLAY[card]
        if action not in self.legal:  # cannot happen with a consistent view; say so rather than crash
            return self._bad(f"{card_name(card, self.look)} cannot be played now.")
        return Reply(action=action)

    def _feed_choice(self, text: str) -> Reply:
        options = self._options()
        low = text.lower()
        if self.picking is not None and low in _BACK:
            self.picking = None
            return Reply(["Pick another card."])
        if not text:
            return self._bad(f"Type 1 or 2 for the field card to capture ({card_list(options, self.look, 'or')}).")
        target: Card | None = None
        if text.isdecimal():
            i = int(text)
            if not 1 <= i <= len(options):
                return self._bad(f"{i} is not one of the choices (1–{len(options)}).")
            target = options[i - 1]
        else:
            word = text.lstrip("*").lower()
            try:
                target = card_from_id(word)
            except UnknownCard as e:
                return self._bad(self._unknown(word, e))
            if target not in options:
                return self._bad(
                    f"{card_name(target, self.look)} is not one of the choices: {card_list(options, self.look, 'or')}."
                )
        if self.picking is not None:
            action = PLAY_AT[self.picking][target]
        else:
            action = CHOOSE[target]
        if action is None or action not in self.legal:
            return self._bad(f"{card_name(target, self.look)} cannot be captured now.")
        return Reply(action=action)

    def _feed_decide(self, low: str) -> Reply:
        can_koikoi = KOIKOI in self.legal
        if low in ("k", "koi", "koikoi", "koi-koi", "koi koi", "こいこい"):
            if not can_koikoi:
                return self._bad("This is the last turn: only shōbu is offered. Press Enter or type s.")
            return Reply(action=KOIKOI)
        if low in ("s", "shobu", "shōbu", "shoubu", "勝負") or (low == "" and not can_koikoi):
            return Reply(action=SHOBU)
        if not can_koikoi:
            return self._bad("Only shōbu is offered: press Enter or type s.")
        return self._bad("Type k to call koi-koi (play on) or s to call shōbu (take the count now).")


class TextScreen:
    """Writes lines to a text stream as the terminal can show them (see :func:`safe_text`).

    Thread-safe: :meth:`interject` (another thread's message, e.g. a clock warning) lands on
    lines of its own, and the open question is shown again below it.
    """

    def __init__(self, out: TextIO, look: Look) -> None:
        self.out = out
        self.look = look
        self.encoding = getattr(out, "encoding", None) or "utf-8"
        self._lock = threading.RLock()
        self._open: str | None = None  # the question shown and not answered yet

    def write(self, lines: Sequence[str]) -> None:
        with self._lock:
            for line in lines:
                self.out.write(safe_text(line, self.encoding) + "\n")
            self.out.flush()

    def interject(self, lines: Sequence[str]) -> None:
        """Show ``lines`` on their own lines, even while a question waits for its answer."""
        with self._lock:
            if self._open is not None:
                self.out.write("\n")
            self.write(lines)
            if self._open is not None:
                self.out.write(safe_text(self._open, self.encoding))
                self.out.flush()

    def ask(self, question: str, inp: TextIO) -> str:
        """Show ``question``, read one line. End of input raises :class:`PlayerQuit`."""
        with self._lock:
            self.out.write(safe_text(question, self.encoding))
            self.out.flush()
            self._open = question
        try:
            line = inp.readline()
        except UnicodeDecodeError:
            return "\ufffd"
        finally:
            with self._lock:
                self._open = None
        if not line:
            self.write([""])
            raise PlayerQuit("eof")
        return line.rstrip("\r\n")


def clock_text(seconds: float) -> str:
    """``1:52``: minutes and seconds, rounded up."""
    s = max(0, int(seconds + 0.999))
    return f"{s // 60}:{s % 60:02d}"


class HumanPlayer:
    """A person at a terminal, with the bot interface: ``choose(view) -> Action``."""

    name = "human"

    def __init__(self, inp: TextIO, out: TextIO, seats: Seats, look: Look) -> None:
        self.inp = inp
        self.screen = TextScreen(out, look)
        self.seats = seats
        self.look = look
        self.warn_at = 30.0
        self.leave_question = "Leave the match? (y leaves; anything else goes on) "
        """Asked before ``q`` leaves (the network match says it counts as a resignation)."""

    def _really_leave(self) -> bool:
        """``q`` was typed: ask first (a typo must not end a match). End of input leaves."""
        return self.screen.ask(self.leave_question, self.inp).strip().lower() in ("y", "yes")

    def choose(self, view: SeatView, deadline: float | None = None) -> Action:
        """Ask for ``view``'s decision. ``deadline`` (``time.monotonic()`` when the move is due):
        the time left is shown on its own line before each question, and a warning, on lines of its
        own, when ``warn_at`` seconds are left."""
        prompt = ActionPrompt(view, self.seats, self.look)
        self.screen.write(prompt.context())
        timer: threading.Timer | None = None
        if deadline is not None:
            left = deadline - time.monotonic()
            if left > self.warn_at:
                timer = threading.Timer(left - self.warn_at, self._warn, (deadline,))
                timer.daemon = True
                timer.start()
        try:
            while True:
                if deadline is not None:
                    self.screen.write([f"Time left for this move: {clock_text(deadline - time.monotonic())}"])
                reply = prompt.feed(self.screen.ask(prompt.question(), self.inp))
                if reply.quit:
                    if self._really_leave():
                        raise PlayerQuit("quit")
                    continue
                self.screen.write(reply.lines)
                if reply.action is not None:
                    return reply.action
        finally:
            if timer is not None:
                timer.cancel()

    def _warn(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        self.screen.interject([f"Hurry: {clock_text(left)} left for this move."])

    def notify(self, *lines: str) -> None:
        """A message from another thread (the network), on lines of its own even mid-question."""
        self.screen.interject(wrap_all(lines, self.look.width, "    "))

    def pause(self, question: str = "Press Enter to go on (q quits): ") -> None:
        """Wait for Enter; ``q`` or end of input raises :class:`PlayerQuit`."""
        if self.screen.ask(question, self.inp).strip().lower() in _QUIT:
            raise PlayerQuit("quit")
