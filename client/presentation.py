"""What one seat's networked match shows its player: the narration in the text mode, or the full-screen board.

:class:`Presentation` owns the screens (the :class:`~koikoi.client.tui.Console` that narrates in the text
mode, the :class:`~koikoi.client.tui.app.BoardTable` while the board is up) and says every line of the match
loop in the player's language (client/tui/words.py): the room's settings, who deals first, the clock and its
witness, the opponent away and back, and how the match ended. It reads the session; it never changes it.
With ``--json`` the same moments are events on :class:`~koikoi.client.output.Output`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from ..protocol.codes import Status
from ..protocol.referee import Outcome
from ..protocol.session import (
    CertificateRejected,
    FrameDropped,
    MatchStarted,
    OwnTimeExpired,
    RoomSettings,
    RoundScored,
    Session,
    TimeoutWarning,
)
from ..protocol.session import Event as SessionEvent
from ..protocol.witness import fingerprint
from .deckmode import deck_of
from .match_words import MatchWords
from .output import Output, debug
from .seat_clock import WaitClock
from .tui import Console, Look, PlayerQuit, Seats, look_for, narrate
from .tui.board import BoardMode
from .tui.table import want_plain

if TYPE_CHECKING:
    from .tui.app import BoardTable

T = TypeVar("T")

__all__ = ["Presentation"]


class Presentation(MatchWords):
    """The narration or the board of one seat's match, and the loop's words. Set :attr:`session` before the
    match is shown."""

    def __init__(self, out: Output, *, lang: str | None, assist: bool) -> None:
        super().__init__()
        self.out = out
        self.lang = lang
        self.assist = assist
        self.session: Session | None = None
        self.console: Console | None = None
        """The text mode's narrator and the person's prompt (None: the board, or ``--json``)."""
        self.table: BoardTable | None = None
        """The full-screen board while it is up (a person on a terminal, not ``--plain``)."""
        self.board: tuple[Seats, Look, int, str | None] | None = None
        """What :meth:`run` needs to put the board up (None: the text mode, or a bot)."""
        self.runs_relay = False
        """The host runs the relay itself: its program is the time witness."""
        self._started_shown = False
        self._clock_key: tuple[int, bool] | None = None

    # -- the screens -----------------------------------------------------------

    def setup(self, seat: int, rounds: int, *, person: bool, plain: bool) -> None:
        """The console that narrates (text mode); or, for a ``person`` when ``plain`` is False and both ends are
        a terminal (as practice decides), the board. Nothing with ``--json``."""
        look, notice = look_for(sys.stdout, lang=self.lang, assist=self.assist)
        self.words_lang = "en" if self.out.json else look.lang
        if person and not self.out.json and not want_plain(plain, sys.stdout, sys.stdin):
            self.board = (Seats(seat, ("Opponent", "Opponent")), look, rounds, notice)
        elif not self.out.json:
            self.console = Console(
                sys.stdin,
                sys.stdout,
                Seats(seat, ("Opponent", "Opponent")),
                look,
                rounds=rounds,
                pause_between_rounds=False,
            )
            self.console.player.leave_question = (
                "Leave the match? It counts as a resignation: your opponent wins. (y leaves; anything else goes on) "
            )
            if notice:
                self.console.say(notice)

    def run(self, main: Callable[..., Any], args: tuple[Any, ...], on_leave: Callable[[str], None]) -> int:
        """``trio.run(main, *args)``: on this thread in the text mode; with the board, in a thread of its
        own while the board holds this one and the terminal (nothing is printed until it is gone).
        ``on_leave`` is called on the board's thread when the person leaves it."""
        if self.board is None:
            code: int = trio.run(main, *args)
            return code
        from .tui.app import run_board  # Textual loads only for the board

        seats, look, rounds, notice = self.board

        def body(table: BoardTable) -> int:
            self.table = table
            self.out.attach(table)
            table.set_on_leave(on_leave)
            if notice:
                self.out.say(notice)
            result: int = trio.run(main, *args)
            if table.app.leave_reason is None and table.app.model.mode == BoardMode.OVER:
                table.closed.wait()  # the final count stays up until the person closes it
            return result

        try:
            board = run_board(seats, look, rounds, body, network=True, pause_between_rounds=False,
                              join_timeout=24 * 3600.0)  # fmt: skip
        finally:
            self.table = None
            self.out.detach()
        if board.error is not None:
            raise board.error
        if isinstance(board.result, int):
            return board.result
        self.out.error("interrupted", "the match loop did not finish")
        return 1

    def screen(self, fn: Callable[..., T], *args: Any) -> T | None:
        """A call to the board; once the person closed the finished match's board: None (no screen)."""
        if self.table is None:
            return None
        try:
            return fn(*args)
        except PlayerQuit:
            self.table = None
            return None

    def brief(self, line: str) -> None:
        """A note that reports a change for the better (the opponent is back): on the board it leaves by itself
        after a few seconds, with the notes it answers (the opponent is away)."""
        if self.table is not None:
            self.screen(self.table.brief, line, 5.0)
            if self.table is not None:
                return
        self.out.note(line)

    def show_match(self) -> bool:
        """The match's log so far, on the board or in the narration; False when the terminal (or the pipe)
        went away (the narration stops: a bot can play on unseen, a person cannot)."""
        s = self.session
        if s is None or s.match is None:
            return True
        if self.table is not None:
            self.screen(self.table.show, s.match.log, s.view())
        if self.console is not None:
            try:
                self.console.show_events(s.match.log)
            except OSError:
                self.console = None
                return False
        return True

    def opponent_clock(self, clock: WaitClock) -> None:
        """The board shows the opponent's move clock while they decide (this seat's shows with its question)."""
        s = self.session
        w = s.wait() if s is not None else None
        if self.table is None or w is None or s is None or s.my_turn:
            return
        key = (w.epoch, clock.paused)
        if key == self._clock_key:
            return
        self._clock_key = key
        left = clock.left(w.limit)
        self.screen(self.table.clock, None if left is None else time.monotonic() + left, w.seat)

    # -- what the session says --------------------------------------------------

    def move_time(self) -> int:
        mt = getattr(self.session, "move_time_s", None)
        return mt if isinstance(mt, int) else 0

    def witness(self) -> str | None:
        """The fingerprint of the relay key both HELLOs bound (None: no relay, no certificate can count)."""
        key = getattr(self.session, "relay_key", None)
        return fingerprint(key) if isinstance(key, bytes) and key != bytes(32) else None

    # -- the match's moments -----------------------------------------------------

    def start_event(self, resumed: bool) -> None:
        s = self.session
        assert s is not None and s.first_dealer is not None
        st = s.settings
        self.out.event(
            "match_start",
            seat=s.seat,
            first_dealer=s.first_dealer,
            opponent=s.opponent_fingerprint,
            settings={
                "rounds": st.rounds if st is not None else None,
                "double_at_8": st.double_at_8 if st is not None else None,
                "move_time_s": self.move_time(),
                "deck": deck_of(s),
                "watchers": s.watchers,
            },
            witness=self.witness(),
            resumed=resumed,
        )

    def _deck_lines(self) -> list[str]:
        """What the deck mode means for this player (before the first card)."""
        deck = deck_of(self.session)
        if deck == "sealed":
            return [self.w("net_sealed")]
        if deck == "shared":
            return [self.w("net_shared")]
        return []

    def _clock_lines(self) -> list[str]:
        """What the clock is, who witnesses it, and what running out of time means (before it happens)."""
        mt = self.move_time()
        if mt == 0:
            return [self.w("net_no_clock")]
        w = self.witness()
        lines = [self.w("net_clock", mt=mt, w=w or self.w("net_witness_none"))]
        if self.runs_relay:
            lines.append(self.w("net_you_run_relay"))
        elif self.session is not None and self.session.seat == 1:
            lines.append(self.w("net_they_may_run_relay"))
        return lines

    def show_started(self) -> None:
        s = self.session
        assert s is not None
        if self._started_shown or s.first_dealer is None:
            return
        self._started_shown = True
        self.start_event(resumed=False)
        opp = s.opponent_fingerprint
        st = s.settings
        who = self.w("net_you_deal" if s.first_dealer == s.seat else "net_they_deal")
        role = self.w("net_role_creator" if s.seat == 0 else "net_role_joiner")
        bound = self.settings_words(st.rounds, st.double_at_8, self.move_time(), deck_of(s)) if st is not None else ""
        keys = [self.w("net_keys", me=s.fingerprint, opp=opp)]
        if self.table is not None:  # the board keeps who is playing up until this seat's first move
            self.screen(self.table.players, *self.players_lines())
            keys = []
        self.out.say(
            self.w("net_begins", seat=s.seat, role=role, bound=bound),
            *keys,
            self.w("net_first_dealer", who=who),
            *self._deck_lines(),
            *self._clock_lines(),
        )

    def players_lines(self) -> list[str]:
        """The board's panel of who is playing: a heading, both keys, the relay's key and who runs it."""
        s = self.session
        assert s is not None
        w = self.witness()
        if w is None:
            relay = self.w("players_relay_none")
        else:
            runner = ""
            if self.runs_relay:
                runner = self.w("players_you_run")
            elif s.seat == 1:
                runner = self.w("players_they_may_run")
            relay = self.w("players_relay", relay=w) + runner
        return [
            self.w("players_head"),
            self.w("players_keys", me=s.fingerprint, opp=s.opponent_fingerprint),
            relay,
        ]

    def show_resumed(self) -> None:
        """After ``koikoi resume``: where the match stands and its last moves, then play on."""
        s = self.session
        assert s is not None and s.match is not None
        self._started_shown = True
        self.start_event(resumed=True)
        m = s.match
        log = m.log
        if self.table is not None:
            self.out.say(self._back_line())
        if self.console is not None:
            self.console.narrator.feed(log)
            st = s.settings
            rounds = st.rounds if st is not None else None
            last = narrate(log, self.console.seats, self.console.look, start=max(0, len(log) - 4), rounds=rounds)
            self.out.say(
                self._back_line(),
                *([self.w("net_before"), *(f"  {line}" for line in last)] if last else []),
                self.w("net_meanwhile"),
            )

    def _back_line(self) -> str:
        s = self.session
        assert s is not None and s.match is not None
        pts = s.match.points
        mt = self.move_time_words(self.move_time())
        return self.w("net_back", seat=s.seat, mt=mt, me=pts[s.seat], them=pts[1 - s.seat])

    def show(self, ev: SessionEvent, *, at_prompt: bool = False) -> None:
        """One of the session's events (``at_prompt``: the person's question is on the terminal's last line)."""
        s = self.session
        assert s is not None
        if isinstance(ev, RoomSettings):
            mt = getattr(ev, "move_time_s", None)
            deck = getattr(ev, "deck", None)
            deck = deck if isinstance(deck, str) else deck_of(s)
            self.creator_settings = {
                "rounds": ev.settings.rounds,
                "double_at_8": ev.settings.double_at_8,
                "move_time_s": mt,
                "deck": deck,
            }
            settings = self.settings_words(ev.settings.rounds, ev.settings.double_at_8, mt, deck)
            self.out.say(self.w("net_creator_signed", creator=ev.creator, settings=settings))
        elif isinstance(ev, MatchStarted):
            self.show_started()
        elif isinstance(ev, RoundScored):
            r = ev.result
            self.out.event("round_end", round=r.round, winner=r.winner, payment=r.payment, points=list(r.points))
        elif isinstance(ev, TimeoutWarning):
            key = "net_warn_me" if ev.seat == s.seat else "net_warn_them"
            if self.table is not None:  # beside the board's running clock, no count of seconds that goes stale
                key += "_board"
            text = self.w(key, s=f"{ev.seconds_left:.0f}", what=self.what_words(ev.what))
            self.out.note(("\n" if at_prompt and self.console is not None else "") + text)  # not after a prompt
        elif isinstance(ev, OwnTimeExpired):
            self.out.note(self.w("net_time_up", what=self.what_words(ev.what)))
        elif isinstance(ev, CertificateRejected):
            debug("certificate rejected:", ev.reason)
        elif isinstance(ev, FrameDropped):
            debug("frame dropped:", ev.code, ev.message)

    # -- the ending --------------------------------------------------------------

    def say_ending(self, outcome: Outcome, status: str, decided: bool, path: str | None, failure: str | None) -> None:
        """How the match ended (``decided``: it reached a result, won, lost or drawn, by any ending)."""
        s = self.session
        assert s is not None
        me = s.seat
        pts = list(outcome.points)
        if not decided:
            code = outcome.code or "aborted"
            message = self.ending_text(me, outcome.code, outcome.message, outcome.by, outcome.winner, failure)
            self.out.error(code, message, winner=outcome.winner, points=pts, transcript=path)
            self.out.end(self.w("transcript", path=path))
            return
        ending = None
        if status != Status.COMPLETE:
            ending = {"by": outcome.by, "code": outcome.code, "witness": getattr(outcome, "witness", None)}
        self.out.event("match_end", points=pts, winner=outcome.winner, transcript=path, status=status, ending=ending)
        w = outcome.winner
        if status == Status.COMPLETE and self.console is not None:  # the narrator said who won, and by how much
            line = self.w("net_signed")
        elif status == Status.COMPLETE:
            if w is None:
                verdict = self.w("net_draw", a=pts[0], b=pts[1])
            else:
                verdict = self.w("net_you_won" if w == me else "net_they_won", a=pts[w], b=pts[1 - w])
            line = self.w("net_match_over", verdict=verdict, how=self.w("net_how_signed"))
        else:  # decided by the ending (time, resignation, a proven fault), not by the points: say so
            on_time = outcome.code in ("timeout", "opponent_left")
            if w is None:
                verdict = self.w("net_nobody_won_by")
            elif w == me:
                verdict = self.w("net_you_won_time" if on_time else "net_you_won_by")
            else:
                verdict = self.w("net_they_won_time" if on_time else "net_they_won_by")
            how = self.ending_text(me, outcome.code, outcome.message, outcome.by, outcome.winner, failure, short=True)
            line = self.w("net_match_decided", verdict=verdict, how=how, me=pts[me], them=pts[1 - me])
        self.out.end("", line, self.w("transcript", path=path))
