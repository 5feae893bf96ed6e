"""One player's side of a match, sans-IO (like h11).

Feed it what arrives (:meth:`Session.receive`), what the player decides
(:meth:`Session.play`, :meth:`Session.resign`), the clock
(:meth:`Session.time_passed`) and the relay's certificates
(:meth:`Session.witnessed`); it returns :class:`Event` objects, and queues
frames to send (:meth:`Session.frames_to_send`) and records to append to the
transcript (:meth:`Session.records`). The order a client keeps, so that a
crash loses nothing::

    events = session.receive(frame)          # or play(...), resign(), time_passed(...), witnessed(...)
    for rec in session.records():            # 1. write (and fsync: every own message is on disk first)
        transcript.append(rec.frame, sync=rec.sync)
    for out in session.frames_to_send():     # 2. then send
        await channel.send(out)
    for ev in events: ...                    # 3. then show

Nothing the network could have done ends a match: a frame that cannot be
attributed to the opponent in this match is dropped (:class:`FrameDropped`),
one ahead of the line is kept until the gap fills, and the session asks the
opponent to send again (the unsigned RESEND frame) when it sees a gap, after
:meth:`Session.reconnected`, and every ``resend_after`` seconds while it
waits. A match ends only by both RESULTs, a resignation, a proven fault (an
ABORT with the accused's own signed message as evidence) or a relay-witnessed
silence (a TIMEOUT carrying the relay's certificate). After a crash, rebuild
the session with :meth:`Session.from_transcript`.

:class:`Session` is a facade over objects that each keep their own state: the line (the referee, the one
verdict), the clock (:mod:`.session_clock`), the outbox (:mod:`.session_outbox`), the repair of the line
(:mod:`.session_repair`), the resume after a crash (:mod:`.session_resume`) and the automatic steps
(:mod:`.session_steps`); its events are in :mod:`.session_events`. The queries a client reads are
:class:`SeatLine`'s. Every name a client imports is importable from here.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..engine.actions import Action
from ..engine.match import Match, SeatView, Settings
from ..errors import LocalError
from .codes import Code
from .errors import ProtocolError
from .messages import (
    MAX_EVIDENCE_BYTES,
    ZERO_HASH,
    Msg,
    MsgType,
    build,
    fingerprint,
    parse,
    parse_resend,
    public_bytes,
    resend_frame,
    verify,
)
from .referee import Disposition, Referee
from .session_clock import SessionClock, TimeoutPolicy, Wait
from .session_events import (
    ActionApplied,
    CertificateNeeded,
    CertificateRejected,
    Deck,
    Event,
    FrameDropped,
    MatchDecided,
    MatchOver,
    MatchStarted,
    OwnTimeExpired,
    RoomSettings,
    RoundScored,
    TimeoutWarning,
    WaitFor,
    decision,
    line_events,
)
from .session_outbox import Outbox, Record
from .session_repair import MAX_ANSWER_MESSAGES, MAX_ANSWERS, MAX_BUFFERED, AheadOfLine, Answers, KeptToCite
from .session_resume import Resync, TranscriptDamaged, resumed_line
from .session_steps import Proposal, Steps

__all__ = [
    "MAX_ANSWERS",
    "MAX_ANSWER_MESSAGES",
    "MAX_BUFFERED",
    "MAX_EVIDENCE_BYTES",
    "ActionApplied",
    "CertificateNeeded",
    "CertificateRejected",
    "Deck",
    "Event",
    "FrameDropped",
    "MatchDecided",
    "MatchOver",
    "MatchStarted",
    "NotYourTurn",
    "OwnTimeExpired",
    "Record",
    "RoomRole",
    "RoomSettings",
    "RoundScored",
    "SeatLine",
    "Session",
    "SessionClosed",
    "TimeoutPolicy",
    "TimeoutWarning",
    "TranscriptDamaged",
    "Wait",
    "WaitFor",
]


class RoomRole(enum.Enum):
    """Who a seat is in its room: the creator (seat 0, its settings are the room's) or the joiner (seat 1)."""

    CREATOR = 0
    JOINER = 1


class NotYourTurn(LocalError):
    pass


class SessionClosed(LocalError):
    pass


def _own_message(line: Referee, seat: int, frame: bytes) -> Msg | None:
    """``frame`` as a message of ``line``'s match validly signed by ``seat``'s key; None if it is not one.
    (Verified with this module's ``verify``: the adversary tests' meter counts the session's verifications.)"""
    try:
        m = parse(frame)
        if m.seat != seat or line.sid is None or m.match != line.sid:
            return None
        verify(line.signer_key(m), m)
    except ProtocolError:
        return None
    return m


class SeatLine:
    """One seat of a match and its line: who it is (its key, its seat, its role), what its HELLO proposes,
    the line both sides signed (the referee, the one verdict) and this seat's own frames (its outbox); the
    read-only views a client reads of them, and the frames and records it takes to send and to write."""

    def __init__(self, key: Ed25519PrivateKey, role: RoomRole, proposal: Proposal) -> None:
        self.key = key
        self.role = role
        self.seat = role.value
        self.proposal = proposal
        self.room = proposal.room
        self.nonce = proposal.nonce
        self.public_key = public_bytes(key)
        self.referee = Referee((self.seat, key))
        self._outbox = Outbox(self.seat)

    @property
    def match(self) -> Match | None:
        """The engine's match (after the reveal). Read it; never apply to it directly."""
        return self.referee.match

    @property
    def match_id(self) -> bytes | None:
        return self.referee.sid

    @property
    def move_time_s(self) -> int | None:
        """The bound move time once both HELLOs agreed; before that, this side's proposal or expectation."""
        bound = self.referee.move_time_s
        return bound if bound is not None else self.proposal.move_time_s

    @property
    def relay_key(self) -> bytes:
        """The relay key this side bound in its HELLO."""
        return self.proposal.relay_key

    @property
    def deck(self) -> Deck:
        """The deck this session plays: the creator's HELLO's once it is in the line (a joiner's differing
        expectation then ends the match ``settings_mismatch``), before that this side's proposal (a joiner
        that names none: :attr:`Deck.SHARED` until the creator's HELLO arrives)."""
        h = self.referee.hellos[0]
        if h is not None:
            return Deck(h.deck)
        return self.proposal.deck if self.proposal.deck is not None else Deck.SHARED

    @property
    def watchers(self) -> bool:
        """Whether watchers may follow this match: the creator's HELLO's once it is in the line (a joiner's
        differing expectation then ends the match ``settings_mismatch``), before that this side's proposal (a
        joiner that names none: the default of :attr:`deck`, true for a sealed deck, false for a shared one)."""
        h = self.referee.hellos[0]
        if h is not None:
            return h.watchers
        w = self.proposal.watchers
        return w if w is not None else self.deck is Deck.SEALED

    @property
    def publish(self) -> tuple[bool, bool] | None:
        """The two players' consents to a public archive (the creator's first), as their HELLOs say once both
        are in the line; None before."""
        return self.referee.publish

    @property
    def settings(self) -> Settings | None:
        """The settings both HELLOs bound (None until they agreed)."""
        return self.referee.settings

    @property
    def offered_settings(self) -> Settings | None:
        """The settings the creator's HELLO offers (None before it is in the line)."""
        h = self.referee.hellos[0]
        return Settings(rounds=h.rounds, double_at_8=h.double_at_8) if h is not None else None

    @property
    def first_dealer(self) -> int | None:
        """The seat that deals the first round (None until the seed is revealed)."""
        return self.referee.first_dealer

    @property
    def seed(self) -> bytes | None:
        """The match's seed (None until both values are revealed)."""
        return self.referee.seed

    @property
    def opponent_public_key(self) -> bytes | None:
        """The public key the opponent's HELLO binds (None before it is in the line)."""
        h = self.referee.hellos[1 - self.seat]
        return h.public_key if h is not None else None

    @property
    def next_seq(self) -> int:
        """How many messages the line holds (0: nothing signed yet)."""
        return self.referee.next_seq

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

    def _sign(self, t: MsgType, body: list[object]) -> bytes:
        r = self.referee
        return build(self.key, t, r.sid if r.sid is not None else b"", r.next_seq, r.head_hash, self.seat, body)

    # -- outputs ---------------------------------------------------------

    def frames_to_send(self) -> list[bytes]:
        return self._outbox.take_frames()

    def records(self) -> list[Record]:
        return self._outbox.take_records()

    @property
    def _out(self) -> list[bytes]:
        """The frames queued to send (a modified client's tests add to it)."""
        return self._outbox.queue

    def is_control(self, frame: bytes) -> bool:
        """Whether to send ``frame`` with the relay's control flag: every frame but our last one (spec/protocol.md
        §5.2). The relay's witness then records, as this seat's frames, only its last frame — its newest
        message, or its ENDED — never a RESEND, an older message sent again, or the opponent's own messages sent
        back; so no one can make it remember something else as our last frame (an echo, a message older than
        a fork, a frame it forgot after a restart)."""
        return frame != self._outbox.last_frame(self.referee)

    def unacknowledged(self) -> list[bytes]:
        """This side's frames the other side has not shown it has (to send again after reconnecting)."""
        return self._outbox.unacknowledged(self.referee)


class Session(SeatLine):
    """One seat's protocol state machine. Build with :meth:`create`, :meth:`join` or :meth:`from_transcript`."""

    def __init__(
        self,
        key: Ed25519PrivateKey,
        role: RoomRole,
        proposal: Proposal,
        timeouts: TimeoutPolicy | None,
        resend_after: float,
    ) -> None:
        super().__init__(key, role, proposal)
        self._clock = SessionClock(self.seat, timeouts, resend_after)
        self.timeouts = self._clock.timeouts
        self.resend_after = self._clock.resend_after
        self._steps = Steps(key, self.seat, proposal)
        self._answers = Answers(self.seat)
        self._kept = KeptToCite()
        self._buffer = AheadOfLine()
        self._resync = Resync()
        self._seen: set[bytes] = set()
        self._ended: MatchDecided | None = None
        self._started = False

    @classmethod
    def create(
        cls,
        key: Ed25519PrivateKey,
        room: str,
        settings: Settings,
        nonce: bytes,
        timeouts: TimeoutPolicy | None = None,
        *,
        move_time_s: int = 120,
        relay_key: bytes = ZERO_HASH,
        resend_after: float = 5.0,
        deck: Deck | str = Deck.SHARED,
        watchers: bool | None = None,
        publish: bool = False,
    ) -> Session:
        """The room's creator (seat 0): its settings (rounds, doubling, move time, deck, watchers) are the
        room's. ``deck``: :attr:`Deck.SEALED` (spec/sealed-line.md) or :attr:`Deck.SHARED` (the shared-seed
        deal). ``watchers``: whether watchers may follow the room (None: the deck's default, true for sealed,
        false for shared). ``publish``: this player agrees that a relay keeping an archive may publish the
        match even if the room is private."""
        p = Proposal.checked(
            room,
            nonce,
            relay_key,
            settings.rounds,
            settings.double_at_8,
            move_time_s,
            deck,
            creator=True,
            watchers=watchers,
            publish=publish,
        )
        return cls(key, RoomRole.CREATOR, p, timeouts, resend_after)

    @classmethod
    def join(
        cls,
        key: Ed25519PrivateKey,
        room: str,
        nonce: bytes,
        *,
        rounds: int | None = None,
        double_at_8: bool | None = None,
        move_time_s: int | None = None,
        relay_key: bytes = ZERO_HASH,
        timeouts: TimeoutPolicy | None = None,
        resend_after: float = 5.0,
        deck: Deck | str | None = None,
        watchers: bool | None = None,
        publish: bool = False,
    ) -> Session:
        """The joiner (seat 1). ``rounds``/``double_at_8``/``move_time_s``/``deck``/``watchers``, when given, are
        what the player expects: any difference from the creator's fails with ``settings_mismatch`` (None:
        accept the creator's). ``room`` is the code the player typed, normalised; ``relay_key`` the relay's
        key as announced to this client; ``publish`` this player's own consent to a public archive (never
        compared)."""
        p = Proposal.checked(
            room,
            nonce,
            relay_key,
            rounds,
            double_at_8,
            move_time_s,
            deck,
            creator=False,
            watchers=watchers,
            publish=publish,
        )
        return cls(key, RoomRole.JOINER, p, timeouts, resend_after)

    @classmethod
    def from_transcript(
        cls,
        key: Ed25519PrivateKey,
        frames: Iterable[bytes],
        timeouts: TimeoutPolicy | None = None,
        *,
        resend_after: float = 5.0,
        seat: int | None = None,
    ) -> Session:
        """Rebuild a session after a crash from the frames of its transcript.

        Every record is verified first (signatures, this player's own too; the chain; the sequence): any
        damage raises :class:`TranscriptDamaged` (one line). ``ValueError`` when no HELLO in it is this
        key's, or when ``seat`` is given and that seat's HELLO is not this key's. ``seat`` says which seat
        to take when one key signed both HELLOs (one player playing itself, e.g. trying it out on one
        machine); without it such a transcript is refused rather than resumed as the wrong seat. The
        rebuilt session asks the opponent to send again (RESEND) and decides nothing until the opponent
        has answered: the file may have lost its tail."""
        frames = list(frames)
        ref, me = resumed_line(key, frames, seat)
        h = ref.hellos[me]
        assert h is not None
        p = Proposal.checked(
            h.room,
            h.nonce,
            h.relay_key,
            h.rounds,
            h.double_at_8,
            h.move_time_s,
            h.deck,
            creator=me == 0,
            watchers=h.watchers,
            publish=h.publish,
        )
        s = cls(key, RoomRole(me), p, timeouts, resend_after)
        s._started = True
        s.referee = ref
        s._seen.update(frames)
        s._outbox.resumed(key, ref)
        s._clock.epoch = len(ref.msgs)
        if ref.finished:
            s._check_end([])
        else:
            s._resync.active = True
            s._queue_resend()
        return s

    # -- queries ---------------------------------------------------------

    @property
    def ended(self) -> MatchDecided | None:
        return self._ended

    @property
    def is_finished(self) -> bool:
        return self._ended is not None

    @property
    def resyncing(self) -> bool:
        """True after :meth:`from_transcript` until the opponent has answered (nothing is decided till then)."""
        return self._resync.active

    @property
    def my_turn(self) -> bool:
        exp = self.referee.expected()
        return self._ended is None and not self._resync.active and exp == (self.seat, MsgType.MOVE)

    def wait(self) -> Wait | None:
        """What the match waits for now (None when finished). ``limit`` is None with no clock."""
        if self._ended is not None:
            return None
        return self._clock.wait(self.referee.expected(), self.referee.move_time_s)

    def _resending(self, w: Wait) -> bool:
        return w.seat != self.seat or self._resync.active

    def next_deadline(self) -> float | None:
        """Seconds into the current wait when :meth:`time_passed` has something to do."""
        w = self.wait()
        return None if w is None else self._clock.deadline(w, self._resending(w))

    # -- inputs ----------------------------------------------------------

    def start(self) -> list[Event]:
        """Begin: the creator sends its HELLO (the joiner waits for the creator's)."""
        if self._started:
            return []
        self._started = True
        if self.role is RoomRole.CREATOR:
            self._send(*self._steps.hello(self.referee), [])
        return []

    def reconnected(self, own_frames: Iterable[bytes] = ()) -> list[Event]:
        """The connection is (back) up: queue a RESEND request and every own message the opponent may lack.

        ``own_frames``: the relay's copies of our seat's recent frames (``ResumeInfo.own_frames``; none when
        the relay saw none, say after a restart). After :meth:`from_transcript`, a message we signed among them
        that the transcript does not hold means the file lost its tail (a restored backup): each such message
        is taken back like an answer's (checked and written like any other, in sequence order), and nothing
        is decided — nothing at all is signed — until the line holds the newest of them and the opponent has
        answered. Deciding again could sign a second message for one sequence number, which the opponent
        would cite as equivocation. Anything else (not ours, not this match's, not signed) is ignored: the
        relay cannot make us wait with frames it made up (spec/protocol.md §8)."""
        events: list[Event] = []
        if self._resync.active:
            r, held = self.referee, self._outbox.own_hashes(self.referee)
            ours = (_own_message(r, self.seat, f) for f in own_frames)
            for m in self._resync.lost_messages(ours, r.next_seq, held, self._seen):
                events += self._receive(m.frame)
        if self._ended is None:
            self._queue_resend()
        out = self._outbox.queue
        out.extend(self.unacknowledged())
        last = self._outbox.last_frame(self.referee)
        if last is not None and (not out or out[-1] != last):
            out.append(last)  # a relay that restarted learns our last frame again
        return events

    def receive(self, frame: bytes, *, ctl: bool = False) -> list[Event]:
        """One frame from the other side. Never raises, and never ends the match for anything the network
        could have done: such a frame is dropped (:class:`FrameDropped`); exact duplicates are ignored.

        ``ctl``: the relay delivered the frame with the control flag. The relay's witness counts every such
        frame as a request to send again, and a request left unanswered makes its sender "waiting, not
        silent"; so a flagged frame that is not a RESEND of this match (another match's, garbage, a repeat)
        is answered as an empty request would be (with our last message, within the answer budget):
        otherwise an awaited opponent could flag frames we never answer and never be silent."""
        rs = parse_resend(frame)
        r = self.referee
        if ctl and (rs is None or (rs[0] and r.sid is not None and rs[0] != r.sid)):
            with self._kept.flagged(True):
                events = [] if rs is not None else self._receive(frame)
            self._answer_resend(r.sid if r.sid is not None else b"", r.next_seq)
            return events
        if rs is not None:
            # a request; sent without the flag (only a modified client does that) it may be the opponent's last
            # frame, junk to cite; flagged, only if it was the opponent's first (kept apart: a flood of flagged
            # requests must not push a citable frame out, test_adversary_attack_resend_cite_eviction.py)
            with self._kept.flagged(ctl):
                self._kept.keep(frame)
            self._answer_resend(*rs)
            return []
        return self._receive(frame)

    def _receive(self, frame: bytes) -> list[Event]:
        events: list[Event] = []
        if frame in self._seen:
            # the opponent's repeat after a resume: an answer (decide again, unless our own lost message is missing)
            if self._resync.active and self._ended is None and parse(frame).seat != self.seat and self._heard():
                self._advance(events)
                self._check_end(events)
            return events
        if self._ended is not None:
            return events
        try:
            msg = parse(frame)
        except ProtocolError as e:
            self._drop(events, e.code, e.message, frame)
            return events
        self._take(msg, events)
        self._drain(events)
        if self._ended is None and not self.referee.finished:
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
        self._send(MsgType.MOVE, self._steps.move(self.referee, trial, action), events)
        self._advance(events)
        self._check_end(events)
        return events

    def resign(self) -> list[Event]:
        """Give up the match (at any time, also when it is not this player's turn)."""
        self._require_open()
        if self.referee.next_seq == 0:
            raise SessionClosed("nothing to resign: the match has not begun")
        if self._tail_lost():  # a RESIGN now could take the sequence number of a message we lost (spec §8)
            raise SessionClosed("not yet: this side's file lost messages the relay saw; waiting for them")
        events: list[Event] = []
        self._send_end(MsgType.RESIGN, [], events)
        return events

    def witnessed(self, blob: bytes) -> list[Event]:
        """A relay's silence certificate. When it proves that the opponent, awaited, has been silent for the
        bound move time (spec/protocol.md §7), the session sends a TIMEOUT carrying it and the match ends
        ``on_time``; otherwise :class:`CertificateRejected` and nothing is sent."""
        if self._ended is not None:
            return []
        # (also while resyncing after a resume: a file that lost its tail cannot fit a certificate, since the
        # witness saw the lost messages after the ones the file ends with; a silent opponent must still lose)
        body = self._steps.timeout(self.referee, blob, self._kept)
        if isinstance(body, str):
            return [CertificateRejected(body)]
        events: list[Event] = []
        self._send_end(MsgType.TIMEOUT, body, events)
        return events

    def time_passed(self, epoch: int, seconds: float) -> list[Event]:
        """The client's clock: ``seconds`` since the wait with ``epoch`` began. Warns once before the limit;
        at the limit asks for a certificate (:class:`CertificateNeeded`) when the opponent is awaited, or
        says :class:`OwnTimeExpired`; asks the opponent to send again every ``resend_after`` seconds while
        waiting for it. Every call (also after the end, with any epoch) refills the RESEND-answer budget."""
        owed = self._answers.refill()
        if owed is not None:
            self._answer_resend(*owed)
        w = self.wait()
        if w is None or w.epoch != epoch:
            return []
        alarm, resend = self._clock.tick(w, seconds, self._resending(w))
        if isinstance(alarm, CertificateNeeded):
            # our messages the opponent has not answered go first: the relay lists our recent frames in the
            # certificate, and a claim fits only when each of those messages is among them (spec/protocol.md
            # §7.3, step 6b), whatever else we sent since (answers to its requests for older ones)
            self._out.extend(self.unacknowledged())
        if resend:
            self._queue_resend()
            if w.seat != self.seat:
                # and our own messages it has not shown it has: one damaged on its way to the relay (which
                # recorded the damaged bytes as our last frame) reaches the relay and the opponent intact;
                # a repeat the relay already saw is not news to its clock (spec/protocol.md §5.2)
                self._out.extend(self.unacknowledged())
        return [] if alarm is None else [alarm]

    # -- internals -------------------------------------------------------

    def _require_open(self) -> None:
        if self._ended is not None:
            raise SessionClosed("the match has ended")

    def _queue_resend(self) -> None:
        r = self.referee
        self._out.append(resend_frame(r.sid if r.sid is not None else b"", r.next_seq))

    def _answer_resend(self, match: bytes, from_seq: int) -> None:
        w = self.wait()
        awaited = w is not None and w.seat == self.seat
        self._out.extend(self._answers.answer(self.referee, self._outbox, self._clock.epoch, match, from_seq, awaited))

    def _drop(self, events: list[Event], code: Code, message: str, frame: bytes = b"") -> None:
        events.append(FrameDropped(code, message))
        if frame:
            self._kept.keep(frame)

    def _tail_lost(self) -> bool:
        """True while the relay's last frame of ours is still missing from the line (see :meth:`reconnected`)."""
        return self._resync.tail_lost(lambda: self._outbox.own_hashes(self.referee))

    def _heard(self) -> bool:
        """The opponent answered after a resume: True when this side decides again now (a new wait)."""
        if self._resync.active and not self._tail_lost():
            self._resync.active = False
            self._clock.new_wait()
            return True
        return False

    def _take(self, msg: Msg, events: list[Event]) -> None:
        """Place ``msg`` by the line's one verdict (:meth:`Referee.judge`, the auditor's too): apply it, buffer
        it, ignore it, drop it, or abort with it as evidence when it proves its signer's fault."""
        r = self.referee
        j = r.judge(msg)
        d = j.disposition
        if j.attributed and msg.seat != self.seat:
            self._heard()
        if d is Disposition.AHEAD:
            if self._buffer.hold(msg, r.next_seq):
                self._queue_resend()
            return
        if d is Disposition.HELD:
            return
        if d is Disposition.FAULT:
            self._abort(events, j.reason, j.message, *j.evidence)
            return
        if d is Disposition.DROPPED:
            self._drop(events, j.reason, j.message, msg.frame if j.junk else b"")  # junk may be cited (§7.3)
            return
        acc = j.accepted
        assert acc is not None
        self._seen.add(msg.frame)
        self._clock.new_wait()
        self._outbox.took(self.key, msg, r, bool(acc.round_results))
        events += line_events(r, self.seat, msg.type, msg.seat, msg.body, msg.seq, acc.round_results)

    def _drain(self, events: list[Event]) -> None:
        r = self.referee
        while self._buffer and self._ended is None and not r.finished:
            msg = self._buffer.next(r.next_seq)
            if msg is None:
                break
            self._take(msg, events)
        if r.finished:
            self._buffer.clear()

    def _send(self, t: MsgType, body: list[object], events: list[Event]) -> None:
        frame = self._sign(t, body)
        acc = self.referee.accept(frame, verify_signature=False)
        self._seen.add(frame)
        self._clock.new_wait()
        self._outbox.sign(frame)
        events += line_events(self.referee, self.seat, t, self.seat, acc.msg.body, acc.msg.seq, acc.round_results)

    def _send_end(self, t: MsgType, body: list[object], events: list[Event]) -> None:
        frame = self._sign(t, body)
        self.referee.accept(frame, verify_signature=False)
        self._seen.add(frame)
        self._clock.new_wait()
        self._buffer.clear()
        self._outbox.sign(frame, end=True)
        self._check_end(events)

    def _abort(self, events: list[Event], code: Code, message: str, evidence: bytes, evidence2: bytes = b"") -> None:
        """End the match citing the opponent's signed message(s) — only when they prove its fault, so an
        honest session never sends an ABORT that would count as its own resignation."""
        r = self.referee
        if self._ended is not None or r.finished:
            return
        if self._tail_lost():
            # our file lost messages the relay saw: an ABORT now would go at a sequence number we may have
            # signed already (two messages of ours for one SEQ: equivocation); wait for them (spec §8)
            self._drop(events, code, f"{message} (not answered yet: our own lost messages come first)", evidence)
            return
        refused = self._steps.refusal(r, code, message, evidence, evidence2)
        if refused is not None:
            self._drop(events, code, refused)
            return
        self._send_end(MsgType.ABORT, [code, message[:1000], evidence, evidence2], events)

    def _advance(self, events: list[Event]) -> None:
        """Take the protocol's automatic steps that are due from this seat."""
        r = self.referee
        while self._ended is None and not r.finished and not self._resync.active:
            due = self._steps.due(r)
            if due is None:
                return
            if isinstance(due, tuple):
                self._abort(events, *due)
                return
            for t, body in due:
                self._send(t, body, events)

    def _check_end(self, events: list[Event]) -> None:
        if self._ended is not None:
            return
        d = decision(self.referee, self.seat)
        if d is None:
            return
        self._ended, hello = d
        if hello is not None:
            self._outbox.acknowledge(self.key, hello)
        self._buffer.clear()
        events.append(self._ended)
