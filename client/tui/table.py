"""The seam between a match loop and the person: :class:`Table`, with a plain and a board kind.

A match loop (practice's, or the network's) holds a :class:`Table` and calls,
from one thread that is not the board's:

* ``show(log, view)`` after every change (the whole match log; the table skips
  what it showed already) — returns at once, except that a practice table waits
  for Enter after a round's count;
* ``choose(view, deadline=None) -> Action`` when it is this seat's decision —
  blocks until the person answers (run it in a worker thread under trio:
  ``trio.to_thread.run_sync(table.choose, view, deadline, abandon_on_cancel=True)``),
  raises :class:`PlayerQuit` when the person leaves;
* ``cancel()`` to stop asking (the question is moot);
* ``say(*lines)`` for the story (who deals first, settings), ``note(*lines)`` for
  warnings (connection lost, the opponent is away, time running out);
* ``clock(deadline, seat)`` to show a move clock (``time.monotonic()`` seconds);
* ``ask_again() -> bool`` and ``reset()`` (practice: "play again?");
* ``ask_secret(question) -> str | None``: a password typed without echo (a room's, for ``join``);
* ``close()`` at the end.

:class:`PlainTable` is the narrated text mode (``--plain``, pipes, screen
readers, ``TERM=dumb``); :class:`~.app.BoardTable` is the full-screen board.
:func:`want_plain` decides which.

Wiring network play to the board (``koikoi host/join/resume`` with a person, not plain):

* In the command, instead of ``trio.run(...)``::

      run = run_board(Seats(seat, ("Opponent", "Opponent")), look, rounds, body,
                      network=True, pause_between_rounds=False)

  where ``body(table)`` returns ``trio.run(...)`` of the match; it runs in its own thread while
  the board owns the main thread and the terminal. Nothing may print to stdout until
  ``run_board`` returns; print the last lines (the result, ``Transcript: ...``, the
  ``koikoi resume`` command) after it.
* Inside trio, once: ``token = trio.lowlevel.current_trio_token()`` and
  ``table.set_on_leave(lambda reason: token.run_sync_soon(inbox.send_nowait, ("quit", reason)))``:
  it must not wait for trio (``trio.from_thread.run_sync`` would block the board's thread while
  trio's may be waiting for the board in ``show``/``note``/``clock``: neither goes on). ``reason`` is
  ``quit`` (confirmed ``q``: resign) or ``interrupt`` (Ctrl-C: stop, keep the seat, print the
  ``koikoi resume`` command).
* Where the text mode calls ``console.show_events(log)``: ``table.show(s.match.log, s.view())``
  (returns at once; after ``resume`` the first call shows the last events, which is what
  happened while the person was away).
* Where it calls ``console.player.choose``: ``await trio.to_thread.run_sync(table.choose, view,
  time.monotonic() + seconds_left, abandon_on_cancel=True)``; when that decision is cancelled
  (the epoch moved on, the match ended): ``table.cancel()``.
* ``out.say``/``out.note`` while the board is up: ``table.say``/``table.note``; a
  ``TimeoutWarning``: ``table.note``; the opponent's move clock: ``table.clock(time.monotonic() +
  left, opponent_seat)``.
* Once the person closed the finished match's board, every call raises :class:`PlayerQuit`:
  treat that as "no screen any more" (like ``OSError`` from a closed terminal today), not as a quit.
* At the end return from ``body`` (the board closes) or call ``table.close()``.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping, Sequence
from typing import Protocol, TextIO, TypeAlias

from ...engine.actions import Action
from ...engine.events import Event
from ...engine.match import SeatView
from .console import Console
from .human import PlayerQuit
from .render import Narrator
from .text import Seats

__all__ = ["PlainTable", "Table", "want_plain"]

LogEntry: TypeAlias = Event


class Table(Protocol):
    lang: str
    seats: Seats

    def show(self, log: Sequence[LogEntry], view: SeatView | None = None) -> None: ...
    def choose(self, view: SeatView, deadline: float | None = None) -> Action: ...
    def cancel(self) -> None: ...
    def say(self, *lines: str) -> None: ...
    def note(self, *lines: str) -> None: ...
    def clock(self, deadline: float | None, seat: int | None = None) -> None: ...
    def ask_again(self) -> bool: ...
    def reset(self) -> None: ...
    def ask_secret(self, question: str) -> str | None: ...
    def close(self) -> None: ...


def want_plain(flag: bool, out: TextIO, inp: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """The plain mode: asked for, or when either stream is not a terminal, or ``TERM`` is dumb (or unset)."""
    env = os.environ if env is None else env
    if flag or env.get("TERM", "") in ("", "dumb"):
        return True
    try:
        return not (out.isatty() and inp.isatty())
    except (AttributeError, ValueError):
        return True


class PlainTable:
    """The narrated text mode on a :class:`Console`."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.lang = console.look.lang
        self.seats = console.seats

    def show(self, log: Sequence[LogEntry], view: SeatView | None = None) -> None:
        self.console.show_events(log)

    def choose(self, view: SeatView, deadline: float | None = None) -> Action:
        return self.console.player.choose(view, deadline)

    def cancel(self) -> None:
        pass

    def say(self, *lines: str) -> None:
        self.console.say(*lines)

    def note(self, *lines: str) -> None:
        self.console.player.notify(*lines)

    def clock(self, deadline: float | None, seat: int | None = None) -> None:
        pass  # shown with each question (HumanPlayer.choose's deadline)

    def ask_again(self) -> bool:
        try:
            answer = self.console.screen.ask("Play again? (y/n): ", self.console.player.inp)
        except PlayerQuit:
            return False
        return answer.strip().lower() in ("y", "yes", "はい")

    def ask_secret(self, question: str) -> str | None:
        """A password typed without echo (getpass, on the terminal itself); None at end of input."""
        try:
            return getpass.getpass(question + " ") or None
        except EOFError:
            return None

    def reset(self) -> None:
        c = self.console
        c.narrator = Narrator(c.seats, c.look, c.narrator.rounds)

    def close(self) -> None:
        pass
