"""A watcher's side of a match (spec/watching.md): :class:`Spectator` follows the line from the frames a relay
forwards from both seats, with the line's one verdict (:meth:`Referee.judge`, an observer's: no viewer),
the same the seats and the auditor run.

Sans-IO, and it never raises on what it is fed::

    spectator = Spectator()
    for seat, frame in frames:                  # the relay's ``seen`` frames, in the order it took them
        for ev in spectator.feed(seat, frame):  # typed WatchEvents: cards played, yaku, rounds, the end
            show(ev)
        draw(spectator.board())                 # public cards only
    spectator.report()                          # the audit's verdict on the line followed

What the line accepts goes in :attr:`Spectator.line`, in the order it was accepted; so the line's
transcript (:meth:`Spectator.transcript`) audits to what the spectator saw, by the audit's own code
(:meth:`Spectator.report`). The events and the board are in :mod:`.watch_events` and :mod:`.public_board`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Final

from ..engine.events import Event as EngineEvent
from ..engine.events import RoundEnded as EngineRoundEnded
from ..engine.match import Match, RoundResult
from .audit import AuditReport, audit
from .chain import Accepted, Disposition
from .errors import ProtocolError
from .handshake import Hello
from .messages import Msg, MsgType, fingerprint, parse, parse_resend
from .public_board import PublicBoard, public_board
from .referee import Referee
from .sealed_line import SealedObserver
from .session_events import Deck
from .transcript import encode_transcript
from .watch_events import (
    CaptureChosen,
    CardDrawn,
    CardPlayed,
    FaultSeen,
    KoiKoiCalled,
    MatchSettings,
    Narration,
    Redealt,
    RoundCounted,
    RoundDealt,
    RoundStopped,
    ShobuCalled,
    Superseded,
    WatchEvent,
    WatchKind,
    WatchOver,
    WatchStarted,
    YakuMade,
)

__all__ = [
    "LAST_EVENTS",
    "MAX_AHEAD_BYTES",
    "MAX_AHEAD_FRAMES",
    "CaptureChosen",
    "CardDrawn",
    "CardPlayed",
    "FaultSeen",
    "KeptAhead",
    "KoiKoiCalled",
    "MatchSettings",
    "PublicBoard",
    "Redealt",
    "RoundCounted",
    "RoundDealt",
    "RoundStopped",
    "ShobuCalled",
    "Spectator",
    "Superseded",
    "WatchCounts",
    "WatchEvent",
    "WatchKind",
    "WatchOver",
    "WatchStarted",
    "YakuMade",
]

MAX_AHEAD_FRAMES: Final = 256
"""At most this many messages ahead of the line are kept (the oldest kept goes first)."""
MAX_AHEAD_BYTES: Final = 1 << 20
"""At most this many bytes of messages ahead of the line are kept (the oldest kept goes first)."""
LAST_EVENTS: Final = 8
"""How many of the newest events the board shows."""
_FAULTS_TOLD: Final = 256
"""How many faulty messages (by hash) the spectator remembers having told, so a repeat is not told again."""


@dataclass(slots=True)
class WatchCounts:
    """What the spectator made of what it was fed, one count per verdict: ``frames`` fed; ``resends``
    (RESEND control frames); ``junk`` (no message: framing, envelope, a seat that is not 0 or 1);
    ``dropped`` (the line's DROPPED, and every message after the line's end); ``held`` (in the line
    already); ``ahead`` (kept until the gap fills); ``ahead_lost`` (pushed out of the kept messages by the
    bound); ``accepted``; ``faults`` (a signed message proving its signer's fault)."""

    frames: int = 0
    resends: int = 0
    junk: int = 0
    dropped: int = 0
    held: int = 0
    ahead: int = 0
    ahead_lost: int = 0
    accepted: int = 0
    faults: int = 0


class KeptAhead:
    """Messages ahead of the line (each signed by its seat's key for this match), by hash, oldest first: at
    most :data:`MAX_AHEAD_FRAMES` of them and :data:`MAX_AHEAD_BYTES` bytes (the oldest goes first)."""

    def __init__(self) -> None:
        self._msgs: dict[bytes, Msg] = {}
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._msgs)

    def keep(self, msg: Msg) -> int:
        """Keep ``msg`` (a repeat of one kept is kept once); returns how many older ones the bound pushed out."""
        if msg.hash in self._msgs:
            return 0
        self._msgs[msg.hash] = msg
        self.bytes += len(msg.frame)
        lost = 0
        while len(self._msgs) > MAX_AHEAD_FRAMES or self.bytes > MAX_AHEAD_BYTES:
            old = self._msgs.pop(next(iter(self._msgs)))
            self.bytes -= len(old.frame)
            lost += 1
        return lost

    def take(self, next_seq: int) -> list[Msg]:
        """The kept messages for the line's place ``next_seq`` or before it, taken out, in sequence order
        (in the order they were kept within one sequence number)."""
        due = [m for m in self._msgs.values() if m.seq <= next_seq]
        for m in due:
            del self._msgs[m.hash]
            self.bytes -= len(m.frame)
        due.sort(key=lambda m: m.seq)
        return due

    def clear(self) -> None:
        self._msgs.clear()
        self.bytes = 0


def _common(told: list[EngineEvent], log: list[EngineEvent]) -> int:
    """How many first entries ``told`` and ``log`` share."""
    n = 0
    for a, b in zip(told, log, strict=False):
        if a != b:
            break
        n += 1
    return n


class Spectator:
    """One match's line followed by a watcher (spec/watching.md). ``line``: the frames the line accepted, in
    the order accepted (a superseded message stays, as in a seat's transcript); ``counts``: what was made
    of what was fed; ``referee``: the line (read it, never feed it)."""

    line: list[bytes]
    counts: WatchCounts
    referee: Referee
    room: str | None
    relay_key: bytes | None

    def __init__(self, *, room: str | None = None, relay_key: bytes | None = None) -> None:
        """``room``, ``relay_key``: the room code the watcher asked for and the relay's key, when known; a HELLO
        naming another room or relay is then another line's, dropped unread (as a joiner expects its own)."""
        self.room = room
        self.relay_key = relay_key
        self.referee = Referee()
        self.line = []
        self.counts = WatchCounts()
        self._in_line: set[bytes] = set()
        self._ahead = KeptAhead()
        self._narration = Narration()
        self._match: Match | None = None
        self._log: list[EngineEvent] = []
        self._told = 0  # entries of _log told
        self._rounds_told = 0  # rounds that count, told
        self._verdicts_told = 0  # sealed verdicts told
        self._settings: MatchSettings | None = None
        self._players: tuple[str | None, str | None] = (None, None)
        self._started = False
        self._over = False
        self._faults: dict[bytes, None] = {}
        self._last: deque[WatchEvent] = deque(maxlen=LAST_EVENTS)

    # -- queries ---------------------------------------------------------

    @property
    def over(self) -> bool:
        """The line has an outcome (nothing more goes in it)."""
        return self.referee.finished

    @property
    def match_id(self) -> bytes | None:
        """The match id the HELLOs bound (None before)."""
        return self.referee.sid

    @property
    def settings(self) -> MatchSettings | None:
        """The settings both HELLOs bound (None before they agreed)."""
        return self._settings

    @property
    def ahead(self) -> KeptAhead:
        """The messages kept ahead of the line (read it)."""
        return self._ahead

    def transcript(self) -> bytes:
        """The line as a transcript (``KOIKOI-TRANSCRIPT/1``): :attr:`line`'s frames in order."""
        return encode_transcript(self.line)

    def report(self) -> AuditReport:
        """The audit's verdict on :meth:`transcript` (``koikoi audit``'s own code)."""
        return audit(self.transcript())

    def board(self) -> PublicBoard:
        """The board now: public cards only."""
        return public_board(self.referee, self._settings, self._players, self._narration, self._last)

    # -- input -----------------------------------------------------------

    def feed(self, seat: int, frame: bytes) -> list[WatchEvent]:
        """One frame the relay took from ``seat`` (its ``d``), in the order it took them; the events it makes.
        Never raises. ``seat`` is only counted: a message's signature names its signer."""
        c = self.counts
        c.frames += 1
        if type(seat) is not int or seat not in (0, 1) or not isinstance(frame, bytes):
            c.junk += 1
            return []
        if parse_resend(frame) is not None:
            c.resends += 1
            return []
        if frame in self._in_line:
            c.held += 1
            return []
        if self.referee.finished:
            c.dropped += 1  # nothing goes in a finished line: no signature is checked for it
            return []
        try:
            msg = parse(frame)
        except ProtocolError:
            c.junk += 1
            return []
        if msg.type is MsgType.HELLO and not self._expected(Hello.of(msg)):
            c.dropped += 1
            return []
        events: list[WatchEvent] = []
        self._judge(msg, events)
        self._drain(events)
        self._last.extend(events)
        return events

    # -- internals -------------------------------------------------------

    def _expected(self, h: Hello) -> bool:
        """``h`` names the room and the relay this watcher follows (those it was given)."""
        return (self.room is None or h.room == self.room) and (self.relay_key is None or h.relay_key == self.relay_key)

    def _judge(self, msg: Msg, events: list[WatchEvent]) -> None:
        r, c = self.referee, self.counts
        j = r.judge(msg)
        d = j.disposition
        if d is Disposition.AHEAD:
            c.ahead += 1
            c.ahead_lost += self._ahead.keep(msg)
        elif d is Disposition.HELD:
            c.held += 1
        elif d is Disposition.DROPPED:
            c.dropped += 1
        elif d is Disposition.FAULT:
            c.faults += 1
            if msg.hash not in self._faults:
                self._faults[msg.hash] = None
                if len(self._faults) > _FAULTS_TOLD:
                    del self._faults[next(iter(self._faults))]
                events.append(FaultSeen(msg.seat, j.reason, j.message))
        else:
            acc = j.accepted
            assert acc is not None
            c.accepted += 1
            self.line.append(msg.frame)
            self._in_line.add(msg.frame)
            self._took(acc, events)
        self._follow(events)  # (a stop that did not stand may have rebuilt the line as it was)

    def _took(self, acc: Accepted, events: list[WatchEvent]) -> None:
        r = self.referee
        if acc.superseded:
            events.append(Superseded(acc.superseded[0].seat, len(acc.superseded)))
        if not self._started and r.sid is not None:
            self._started = True
            h0, h1 = r.hellos
            assert h0 is not None and h1 is not None
            w = getattr(h0, "watchers", None)  # a HELLO's watchers setting, once it carries one
            self._settings = MatchSettings(
                h0.rounds, h0.double_at_8, h0.move_time_s, Deck(h0.deck), w if isinstance(w, bool) else None
            )
            players = (fingerprint(h0.public_key), fingerprint(h1.public_key))
            self._players = players
            events.append(WatchStarted(self._settings, players, r.sid))
        elif not self._started:
            h0, h1 = r.hellos
            self._players = (
                fingerprint(h0.public_key) if h0 is not None else None,
                fingerprint(h1.public_key) if h1 is not None else None,
            )

    def _follow(self, events: list[WatchEvent]) -> None:
        """Tell what the line's match did since the last call: the engine's new log entries, the rounds
        that now count, the sealed rounds' verdicts, the end."""
        r = self.referee
        m = r.match
        if m is not self._match:  # the reveal began the match, or a cut rebuilt the line (a new match object)
            log = m.log if m is not None else []
            keep = _common(self._log[: self._told], log)
            self._narration = Narration()
            for ev in log[:keep]:
                self._narration.take(ev)
                self._narration.rounds_ended += isinstance(ev, EngineRoundEnded)
            self._match, self._log, self._told = m, log, keep
        if m is None:
            self._end(events)
            return
        counted = r.verified_history
        self._rounds_told = min(self._rounds_told, len(counted))
        while self._told < len(self._log):
            ev = self._log[self._told]
            self._told += 1
            if isinstance(ev, EngineRoundEnded):
                self._narration.rounds_ended += 1
                self._tell_rounds(counted, self._narration.rounds_ended, events)
            else:
                events.extend(self._narration.take(ev))
        self._tell_rounds(counted, len(counted), events)
        sl = r.sealed
        if isinstance(sl, SealedObserver):
            self._verdicts_told = min(self._verdicts_told, len(sl.verdicts))
            for v in sl.verdicts[self._verdicts_told :]:
                if v.stopped_by is not None:
                    events.append(RoundStopped(v.round, v.stopped_by))
                f = v.fault
                if f is not None and f.seat is not None:
                    events.append(FaultSeen(f.seat, f.rule, f.message))
            self._verdicts_told = len(sl.verdicts)
        self._end(events)

    def _tell_rounds(self, counted: list[RoundResult], upto: int, events: list[WatchEvent]) -> None:
        while self._rounds_told < min(upto, len(counted)):
            events.append(RoundCounted(counted[self._rounds_told]))
            self._rounds_told += 1

    def _end(self, events: list[WatchEvent]) -> None:
        if self._over or not self.referee.finished:
            return
        self._over = True
        self._ahead.clear()
        events.append(WatchOver.of(self.report()))

    def _drain(self, events: list[WatchEvent]) -> None:
        """Apply the kept messages the line has reached, as long as one goes in (none once it has an outcome)."""
        while self._ahead and not self._closed():
            before = len(self.line)
            for msg in self._ahead.take(self.referee.next_seq):
                if self._closed():
                    break
                self._judge(msg, events)
            if len(self.line) == before:
                return
        if self._closed():
            self._ahead.clear()

    def _closed(self) -> bool:
        return self.referee.finished
