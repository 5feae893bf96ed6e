"""One player's side of a match, sans-IO (like h11).

Feed it what arrives (:meth:`Session.receive`) and what the player decides
(:meth:`Session.play`, :meth:`Session.resign`); it returns :class:`Event`
objects, and queues frames to send (:meth:`Session.frames_to_send`) and
records to append to the transcript (:meth:`Session.records`). It holds the
timeout policy but no clock: the client tells it how long the current wait
has lasted (:meth:`Session.time_passed`). The order a client keeps, so that a
crash loses nothing::

    events = session.receive(frame)          # or play(...), resign(), time_passed(...)
    for rec in session.records():            # 1. write (flush; fsync when rec.sync)
        transcript.append(rec.frame, sync=rec.sync)
    for out in session.frames_to_send():     # 2. then send
        await channel.send(out)
    for ev in events: ...                    # 3. then show

After a lost connection, send :meth:`Session.unacknowledged` again; the
other side ignores exact duplicates. After a crash, rebuild the session with
:meth:`Session.from_transcript`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..engine.actions import Action, from_code
from ..engine.match import STARTING_POINTS, Match, RoundResult, SeatView, Settings
from .errors import ProtocolError
from .messages import (
    MAX_ROOM_CHARS,
    RULES_VERSION,
    MsgType,
    build,
    commit_value,
    commitment_of,
    fingerprint,
    parse,
    public_bytes,
)
from .referee import Outcome, Referee, describe_mismatch

__all__ = [
    "MAX_EVIDENCE_BYTES",
    "ActionApplied",
    "Event",
    "MatchEnded",
    "MatchOver",
    "MatchStarted",
    "NotYourTurn",
    "OwnTimeExpired",
    "Record",
    "Role",
    "RoomSettings",
    "RoundEnded",
    "Session",
    "SessionClosed",
    "TimeoutPolicy",
    "TimeoutWarning",
    "Wait",
]

MAX_EVIDENCE_BYTES = 60 * 1024


class Role(enum.Enum):
    CREATOR = 0
    JOINER = 1


@dataclass(frozen=True, slots=True)
class TimeoutPolicy:
    """How long a player may take, in seconds, and when the warning comes (seconds before the limit).

    ``move``: a play, a capture choice or a koi-koi/shōbu call. ``handshake``:
    the commit, the joiner's value and the reveal (all automatic). ``result``:
    countersigning the result (automatic). Waiting for the opponent's HELLO
    (the lobby) has no limit here: the client decides how long to wait.
    """

    move: float = 120.0
    handshake: float = 60.0
    result: float = 60.0
    warning: float = 30.0

    def limit(self, t: MsgType) -> float | None:
        if t is MsgType.MOVE:
            return self.move
        if t in (MsgType.COMMIT, MsgType.VALUE, MsgType.REVEAL):
            return self.handshake
        if t is MsgType.RESULT:
            return self.result
        return None


@dataclass(frozen=True, slots=True)
class Wait:
    """What the match waits for. ``epoch`` changes whenever the wait starts afresh."""

    epoch: int
    seat: int
    what: MsgType
    limit: float | None
    warn_at: float | None

    @property
    def what_text(self) -> str:
        return {MsgType.MOVE: "move", MsgType.RESULT: "result"}.get(self.what, "handshake")


@dataclass(frozen=True, slots=True)
class Record:
    """One frame for the transcript; ``sync``: fsync after writing it (a round or the match ended)."""

    frame: bytes
    sync: bool


class Event:
    """Base class of what a session reports."""


@dataclass(frozen=True, slots=True)
class RoomSettings(Event):
    """The creator's signed HELLO arrived (joiner only): the room's real settings."""

    settings: Settings
    room: str
    creator: str  # the creator's fingerprint


@dataclass(frozen=True, slots=True)
class MatchStarted(Event):
    match_id: bytes
    seat: int
    first_dealer: int
    settings: Settings
    opponent: str  # the opponent's fingerprint


@dataclass(frozen=True, slots=True)
class ActionApplied(Event):
    seat: int
    action: Action
    seq: int


@dataclass(frozen=True, slots=True)
class RoundEnded(Event):
    result: RoundResult


@dataclass(frozen=True, slots=True)
class MatchOver(Event):
    """The last round ended; the result is being countersigned."""

    points: tuple[int, int]
    winner: int | None


@dataclass(frozen=True, slots=True)
class MatchEnded(Event):
    """The session is finished: ``outcome.status`` is complete or aborted (``outcome.code`` says why)."""

    outcome: Outcome
    seat: int

    @property
    def message(self) -> str:
        return self.outcome.message


@dataclass(frozen=True, slots=True)
class TimeoutWarning(Event):
    seat: int
    what: str
    seconds_left: float


@dataclass(frozen=True, slots=True)
class OwnTimeExpired(Event):
    """This player's own time ran out; the opponent may now claim the match."""

    what: str


class NotYourTurn(Exception):
    pass


class SessionClosed(Exception):
    pass


class Session:
    """One seat's protocol state machine. Build with :meth:`create` or :meth:`join`."""

    def __init__(
        self,
        key: Ed25519PrivateKey,
        role: Role,
        room: str,
        nonce: bytes,
        *,
        rounds: int | None = None,
        double_at_8: bool | None = None,
        timeouts: TimeoutPolicy | None = None,
    ) -> None:
        if not room or len(room) > MAX_ROOM_CHARS:
            raise ValueError(f"a room code is 1 to {MAX_ROOM_CHARS} characters")
        if len(nonce) != 32:
            raise ValueError("a nonce is 32 bytes")
        if rounds is not None and rounds not in (6, 12):
            raise ValueError("rounds are 6 or 12")
        if role is Role.CREATOR and (rounds is None or double_at_8 is None):
            raise ValueError("the creator sets the room's rounds and doubling")
        self.key = key
        self.role = role
        self.seat = role.value
        self.room = room
        self.nonce = nonce
        self.expect_rounds = rounds
        self.expect_double = double_at_8
        self.timeouts = timeouts or TimeoutPolicy()
        self.public_key = public_bytes(key)
        self.referee = Referee()
        self._out: list[bytes] = []
        self._records: list[Record] = []
        self._seen: set[bytes] = set()
        self._own_end: bytes | None = None
        self._ended: MatchEnded | None = None
        self._epoch = 0
        self._warned = -1
        self._expired = -1
        self._started = False

    @classmethod
    def create(
        cls, key: Ed25519PrivateKey, room: str, settings: Settings, nonce: bytes, timeouts: TimeoutPolicy | None = None
    ) -> Session:
        """The room's creator (seat 0): its settings are the room's."""
        return cls(
            key, Role.CREATOR, room, nonce, rounds=settings.rounds, double_at_8=settings.double_at_8, timeouts=timeouts
        )

    @classmethod
    def join(
        cls,
        key: Ed25519PrivateKey,
        room: str,
        nonce: bytes,
        *,
        rounds: int | None = None,
        double_at_8: bool | None = None,
        timeouts: TimeoutPolicy | None = None,
    ) -> Session:
        """The joiner (seat 1). ``rounds``/``double_at_8``, when given, are what the player expects:
        any difference from the creator's fails with ``settings_mismatch``."""
        return cls(key, Role.JOINER, room, nonce, rounds=rounds, double_at_8=double_at_8, timeouts=timeouts)

    @classmethod
    def from_transcript(
        cls, key: Ed25519PrivateKey, frames: Iterable[bytes], timeouts: TimeoutPolicy | None = None
    ) -> Session:
        """Rebuild a session after a crash from the frames of its transcript (the first must be this
        player's HELLO or the creator's). Raises :class:`ProtocolError` for a damaged transcript and
        ``ValueError`` when the transcript is not this player's."""
        frames = list(frames)
        if not frames:
            raise ValueError("the transcript holds no message")
        pk = public_bytes(key)
        hellos = [parse(f) for f in frames[:2]]
        me: int | None = None
        for h in hellos:
            if h.type is MsgType.HELLO and h.body[4] == pk:
                me = h.seat
        if me is None:
            raise ValueError("this transcript holds no HELLO signed with this key: it is not yours")
        h = next(x for x in hellos if x.seat == me and x.type is MsgType.HELLO)
        _, room, rounds, dbl, _, nonce = h.body
        s = cls(key, Role(me), room, nonce, rounds=rounds, double_at_8=dbl, timeouts=timeouts)
        s._started = True
        for f in frames:
            s._seen.add(f)
            p = parse(f)
            if p.seat == me and p.type in (MsgType.RESIGN, MsgType.TIMEOUT, MsgType.ABORT):
                s._own_end = f
            s.referee.accept(f, verify_signature=p.seat != me)
        s._epoch = len(s.referee.msgs)
        if s.referee.finished:
            o = s.referee.outcome()
            assert o is not None
            s._ended = MatchEnded(o, s.seat)
        else:
            s._advance([])  # a step that was due but not yet taken (for example the reveal)
        return s

    # -- queries ---------------------------------------------------------

    @property
    def match(self) -> Match | None:
        """The engine's match (after the reveal). Read it; never apply to it directly."""
        return self.referee.match

    @property
    def match_id(self) -> bytes | None:
        return self.referee.sid

    @property
    def ended(self) -> MatchEnded | None:
        return self._ended

    @property
    def is_finished(self) -> bool:
        return self._ended is not None

    @property
    def my_turn(self) -> bool:
        exp = self.referee.expected()
        return self._ended is None and exp is not None and exp == (self.seat, MsgType.MOVE)

    def view(self) -> SeatView:
        m = self.referee.match
        if m is None:
            raise SessionClosed("the match has not started")
        return m.view(self.seat)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    @property
    def opponent_fingerprint(self) -> str | None:
        h = self.referee.hellos[1 - self.seat]
        return fingerprint(h.public_key) if h is not None else None

    def wait(self) -> Wait | None:
        """What the match waits for now (None when finished)."""
        if self._ended is not None:
            return None
        exp = self.referee.expected()
        if exp is None:
            return None
        seat, t = exp
        limit = self.timeouts.limit(t)
        warn = None if limit is None else max(0.0, limit - self.timeouts.warning)
        return Wait(self._epoch, seat, t, limit, warn)

    def next_deadline(self) -> float | None:
        """Seconds into the current wait when :meth:`time_passed` has something to report."""
        w = self.wait()
        if w is None or w.limit is None or w.warn_at is None:
            return None
        if self._warned != w.epoch and w.warn_at < w.limit:
            return w.warn_at
        if self._expired != w.epoch:
            return w.limit
        return None

    # -- outputs ---------------------------------------------------------

    def frames_to_send(self) -> list[bytes]:
        out, self._out = self._out, []
        return out

    def records(self) -> list[Record]:
        out, self._records = self._records, []
        return out

    def unacknowledged(self) -> list[bytes]:
        """This side's frames the other side has not shown it has (to send again after reconnecting)."""
        msgs = self.referee.msgs
        last_peer = max((i for i, x in enumerate(msgs) if x.seat != self.seat), default=-1)
        out = [x.frame for x in msgs[last_peer + 1 :] if x.seat == self.seat]
        if self._own_end is not None and self._own_end not in out:
            out.append(self._own_end)
        return out

    # -- inputs ----------------------------------------------------------

    def start(self) -> list[Event]:
        """Begin: the creator sends its HELLO (the joiner waits for the creator's)."""
        if self._started:
            return []
        self._started = True
        if self.role is Role.CREATOR:
            assert self.expect_rounds is not None and self.expect_double is not None
            self._send_hello(self.expect_rounds, self.expect_double)
        return []

    def receive(self, frame: bytes) -> list[Event]:
        """One frame from the other side. Exact duplicates are ignored (idempotent by match and sequence)."""
        if self._ended is not None or frame in self._seen:
            return []
        events: list[Event] = []
        try:
            acc = self.referee.accept(frame)
        except ProtocolError as e:
            self._abort(e, frame, events)
            return events
        self._seen.add(frame)
        self._epoch += 1
        msg = acc.msg
        self._records.append(Record(frame, bool(acc.round_results) or self.referee.finished))
        self._after(acc.msg.type, msg.seat, msg.seq, msg.body, acc.round_results, events)
        if not self.referee.finished:
            self._advance(events)
        self._check_end(events)
        return events

    def play(self, action: Action) -> list[Event]:
        """This player's decision. Raises :class:`NotYourTurn` or the engine's ``IllegalAction``."""
        self._require_open()
        if not self.my_turn:
            raise NotYourTurn("it is not your turn")
        m = self.referee.match
        assert m is not None
        trial = m.copy()
        trial.apply(action, self.seat)  # raises IllegalAction, changing nothing
        events: list[Event] = []
        self._send(MsgType.MOVE, [action.code, trial.state_hash()], events)
        self._advance(events)
        self._check_end(events)
        return events

    def resign(self) -> list[Event]:
        """Give up the match (at any time, also when it is not this player's turn)."""
        self._require_open()
        if self.referee.next_seq == 0:
            raise SessionClosed("nothing to resign: the match has not begun")
        events: list[Event] = []
        self._send_end(MsgType.RESIGN, [], events)
        return events

    def claim_timeout(self, reason: str = "left", limit_s: float | None = None) -> list[Event]:
        """Claim the match because the opponent is gone (``left``: the client's grace period passed)
        or did not answer in time (``turn``). Valid once the handshake's HELLOs are done."""
        self._require_open()
        if self.referee.sid is None:
            raise SessionClosed("no match to claim yet")
        w = self.wait()
        if reason == "turn" and (w is None or w.seat == self.seat):
            raise NotYourTurn("only the player waiting for the other can claim a timeout")
        if limit_s is None:
            limit_s = w.limit if (w is not None and w.limit is not None) else 0
        events: list[Event] = []
        self._send_end(MsgType.TIMEOUT, [reason, int(limit_s)], events)
        return events

    def time_passed(self, epoch: int, seconds: float) -> list[Event]:
        """The client's clock: ``seconds`` since the wait with ``epoch`` began. Warns once before the
        limit; at the limit claims the match when the opponent is the one awaited."""
        w = self.wait()
        if w is None or w.epoch != epoch or w.limit is None or w.warn_at is None:
            return []
        events: list[Event] = []
        if seconds >= w.limit:
            if self._expired == epoch:
                return []
            self._expired = epoch
            self._warned = epoch
            if w.seat != self.seat:
                self._send_end(MsgType.TIMEOUT, ["turn", int(w.limit)], events)
            else:
                events.append(OwnTimeExpired(w.what_text))
            return events
        if seconds >= w.warn_at and self._warned != epoch:
            self._warned = epoch
            events.append(TimeoutWarning(w.seat, w.what_text, w.limit - seconds))
        return events

    # -- internals -------------------------------------------------------

    def _require_open(self) -> None:
        if self._ended is not None:
            raise SessionClosed("the match has ended")

    def _send(self, t: MsgType, body: list[object], events: list[Event]) -> None:
        r = self.referee
        frame = build(self.key, t, r.sid if r.sid is not None else b"", r.next_seq, r.head_hash, self.seat, body)
        acc = r.accept(frame, verify_signature=False)
        self._seen.add(frame)
        self._epoch += 1
        self._records.append(Record(frame, bool(acc.round_results) or r.finished))
        self._out.append(frame)
        self._after(t, self.seat, acc.msg.seq, acc.msg.body, acc.round_results, events)

    def _send_end(self, t: MsgType, body: list[object], events: list[Event]) -> None:
        r = self.referee
        frame = build(self.key, t, r.sid if r.sid is not None else b"", r.next_seq, r.head_hash, self.seat, body)
        r.accept(frame, verify_signature=False)
        self._own_end = frame
        self._seen.add(frame)
        self._records.append(Record(frame, True))
        self._out.append(frame)
        self._check_end(events)

    def _send_hello(self, rounds: int, double_at_8: bool) -> None:
        self._send(MsgType.HELLO, [RULES_VERSION, self.room, rounds, double_at_8, self.public_key, self.nonce], [])

    def _after(
        self, t: MsgType, seat: int, seq: int, body: tuple[object, ...], rounds: list[RoundResult], events: list[Event]
    ) -> None:
        r = self.referee
        if t is MsgType.HELLO and seat == 0 and self.seat == 1:
            h = r.hellos[0]
            assert h is not None
            events.append(RoomSettings(Settings(h.rounds, h.double_at_8), h.room, fingerprint(h.public_key)))
        elif t is MsgType.REVEAL:
            assert r.sid is not None and r.first_dealer is not None and r.settings is not None
            opp = r.hellos[1 - self.seat]
            assert opp is not None
            events.append(MatchStarted(r.sid, self.seat, r.first_dealer, r.settings, fingerprint(opp.public_key)))
        elif t is MsgType.MOVE:
            code = body[0]
            assert isinstance(code, int)
            events.append(ActionApplied(seat, from_code(code), seq))
        events.extend(RoundEnded(x) for x in rounds)
        m = r.match
        if rounds and m is not None and m.is_over:
            events.append(MatchOver((m.points[0], m.points[1]), m.winner))

    def _advance(self, events: list[Event]) -> None:
        """Take the protocol's automatic steps that are due from this seat."""
        r = self.referee
        while self._ended is None and not r.finished:
            exp = r.expected()
            if exp is None or exp[0] != self.seat:
                return
            t = exp[1]
            if t is MsgType.HELLO:
                h0 = r.hellos[0]
                assert h0 is not None
                rounds = self.expect_rounds if self.expect_rounds is not None else h0.rounds
                dbl = self.expect_double if self.expect_double is not None else h0.double_at_8
                # sent even when it differs from the creator's: both sides then see the same mismatch
                self._send_hello(rounds, dbl)
            elif t is MsgType.COMMIT:
                assert r.sid is not None
                self._send(MsgType.COMMIT, [commitment_of(r.sid, commit_value(self.key, r.sid, 0))], events)
            elif t is MsgType.VALUE:
                assert r.sid is not None
                self._send(MsgType.VALUE, [commit_value(self.key, r.sid, 1)], events)
            elif t is MsgType.REVEAL:
                assert r.sid is not None
                self._send(MsgType.REVEAL, [commit_value(self.key, r.sid, 0)], events)
            elif t is MsgType.RESULT:
                m = r.match
                assert m is not None
                self._send(MsgType.RESULT, [m.points[0], m.points[1], m.winner, m.state_hash()], events)
            else:
                return  # a move: the player decides

    def _abort(self, e: ProtocolError, frame: bytes, events: list[Event]) -> None:
        r = self.referee
        if r.finished:
            return
        if r.keys[self.seat] is None:  # nothing of ours in the line yet (the creator's HELLO was bad): end here
            m = (STARTING_POINTS, STARTING_POINTS)
            self._ended = MatchEnded(Outcome("aborted", e.code, e.message, self.seat, None, m, e.seq, True), self.seat)
            events.append(self._ended)
            return
        self._send_end(MsgType.ABORT, [e.code, e.message, frame[:MAX_EVIDENCE_BYTES]], events)

    def _check_end(self, events: list[Event]) -> None:
        if self._ended is not None:
            return
        o = self.referee.outcome()
        if o is None:
            return
        if o.code == "settings_mismatch":
            o = Outcome(
                o.status,
                o.code,
                describe_mismatch(self.referee.mismatch, self.seat),
                o.by,
                o.winner,
                o.points,
                o.seq,
                o.evidence_verified,
            )
        self._ended = MatchEnded(o, self.seat)
        events.append(self._ended)
