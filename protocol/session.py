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
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, replace

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..engine.actions import Action, from_code
from ..engine.match import Match, RoundResult, SeatView, Settings
from ..errors import LocalError, RemoteError
from .codes import Code
from .errors import ProtocolError
from .messages import (
    DECKS,
    END_TYPES,
    HELLO_KEY_INDEX,
    MAX_EVIDENCE_BYTES,
    MAX_MOVE_TIME_S,
    MAX_ROOM_CHARS,
    RULES_VERSION,
    SEALED_TYPES,
    ZERO_HASH,
    Msg,
    MsgType,
    build,
    commit_value,
    commitment_of,
    fingerprint,
    msg_hash,
    parse,
    parse_resend,
    public_bytes,
    resend_frame,
    verify,
)
from .referee import Disposition, Outcome, Referee, describe_mismatch
from .sealed_line import Kind, SealedSeat

__all__ = [
    "MAX_ANSWERS",
    "MAX_ANSWER_MESSAGES",
    "MAX_BUFFERED",
    "MAX_EVIDENCE_BYTES",
    "ActionApplied",
    "CertificateNeeded",
    "CertificateRejected",
    "Event",
    "FrameDropped",
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
    "TranscriptDamaged",
    "Wait",
]

FIRST_FLAGGED_KEPT = 8
"""How many of the first flagged frames dropped a session keeps to cite (see ``Session._keep_to_cite``)."""
MAX_ANSWERS = 4
"""How many RESEND requests a session answers per position of the line and per call of
:meth:`Session.time_passed` (forged or replayed requests then cost a bounded number of resends). A client
that lingers after the end to answer the opponent calls ``time_passed`` now and then to refill it."""
MAX_BUFFERED = 64
"""How many frames ahead of the line a session keeps (more are dropped: RESEND brings them again)."""
MAX_ANSWER_MESSAGES = 16
"""At most this many messages of the line answer one RESEND (then our end and last frames): a request for the
whole line would otherwise hold our own next message back behind it (the client paces what it sends), and
fill the relay's buffer for an absent seat. The asker takes them and asks again from where it got to."""


_TYPES = {
    Kind.SHUFFLE: MsgType.SHUFFLE,
    Kind.SHUFFLE_LOCK: MsgType.SHUFFLE_LOCK,
    Kind.LOCK: MsgType.LOCK,
    Kind.CLAIM: MsgType.CLAIM,
    Kind.MOVE: MsgType.MOVE,
    Kind.DRAW: MsgType.DRAW,
    Kind.DISCLOSE: MsgType.DISCLOSE,
}


class Role(enum.Enum):
    CREATOR = 0
    JOINER = 1


@dataclass(frozen=True, slots=True)
class TimeoutPolicy:
    """When the warning comes (``warning``: seconds before the limit). The limit of every step is the
    match's bound ``move_time_s`` (spec/protocol.md §7)."""

    warning: float = 30.0


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
        if self.what in SEALED_TYPES or self.what is MsgType.ABORT:
            return "move"  # the sealed line's automatic steps (spec/sealed-line.md §2) are a move's time
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
    move_time_s: int = 120
    relay_key: bytes = ZERO_HASH
    deck: str = "shared"  # "sealed" or "shared" (spec/protocol.md §14)


@dataclass(frozen=True, slots=True)
class MatchStarted(Event):
    """The reveal is in: the match begins, with the settings both HELLOs bound."""

    match_id: bytes
    seat: int
    first_dealer: int
    settings: Settings
    opponent: str  # the opponent's fingerprint
    move_time_s: int = 120
    witness: str | None = None  # the relay key's fingerprint (None: no relay)
    deck: str = "shared"  # "sealed" or "shared", as both HELLOs bound it


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
    """This player's own time ran out; the opponent may now get the relay's certificate and win on time."""

    what: str


@dataclass(frozen=True, slots=True)
class CertificateNeeded(Event):
    """The opponent (``silent_seat``) has been silent for the move time: ask the relay for a silence
    certificate and pass it to :meth:`Session.witnessed`."""

    silent_seat: int


@dataclass(frozen=True, slots=True)
class CertificateRejected(Event):
    """A certificate given to :meth:`Session.witnessed` does not (yet) prove the silence; nothing was sent."""

    reason: str


@dataclass(frozen=True, slots=True)
class FrameDropped(Event):
    """A frame was dropped (the network or the relay may have done it): for logs; it ends nothing."""

    code: str
    message: str


class TranscriptDamaged(RemoteError, ValueError):
    """:meth:`Session.from_transcript` refuses a damaged transcript; ``str(e)`` is one line."""

    def __init__(self, message: str, record: int | None = None, code: str | None = None) -> None:
        self.message = message
        self.record = record
        self.code = code
        super().__init__(message)


class NotYourTurn(LocalError):
    pass


class SessionClosed(LocalError):
    pass


def _load(ref: Referee, frames: list[bytes], *, verify_signature: bool) -> Referee:
    """``ref`` after every frame of a transcript; the first that does not check is :class:`TranscriptDamaged`."""
    for i, f in enumerate(frames):
        try:
            ref.accept(f, verify_signature=verify_signature)
        except ProtocolError as e:
            at = f" (sequence {e.seq})" if e.seq is not None else ""
            raise TranscriptDamaged(f"record {i}{at} is damaged: {e.code}: {e.message}", i, e.code) from None
    return ref


class Session:
    """One seat's protocol state machine. Build with :meth:`create`, :meth:`join` or :meth:`from_transcript`."""

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
        move_time_s: int | None = 120,
        relay_key: bytes = ZERO_HASH,
        resend_after: float = 5.0,
        deck: str | None = "shared",
    ) -> None:
        if not room or len(room) > MAX_ROOM_CHARS:
            raise ValueError(f"a room code is 1 to {MAX_ROOM_CHARS} characters")
        if len(nonce) != 32:
            raise ValueError("a nonce is 32 bytes")
        if rounds is not None and rounds not in (6, 12):
            raise ValueError("rounds are 6 or 12")
        if move_time_s is not None and (type(move_time_s) is not int or not 0 <= move_time_s <= MAX_MOVE_TIME_S):
            raise ValueError(f"the move time is a whole number of seconds, 0 to {MAX_MOVE_TIME_S}")
        if type(relay_key) is not bytes or len(relay_key) != 32:
            raise ValueError("a relay key is 32 bytes")
        if not resend_after > 0:
            raise ValueError("resend_after is a positive number of seconds")
        if role is Role.CREATOR and (rounds is None or double_at_8 is None or move_time_s is None or deck is None):
            raise ValueError("the creator sets the room's rounds, doubling, move time and deck")
        if deck is not None and deck not in DECKS:
            raise ValueError(f"the deck is sealed or shared, not {deck!r}")
        self.key = key
        self.role = role
        self.seat = role.value
        self.room = room
        self.nonce = nonce
        self.expect_rounds = rounds
        self.expect_double = double_at_8
        self.expect_move_time = move_time_s
        self.expect_deck = deck
        self.own_relay_key = relay_key
        self.timeouts = timeouts or TimeoutPolicy()
        self.resend_after = float(resend_after)
        self.public_key = public_bytes(key)
        self.referee = Referee((self.seat, key))
        self._out: list[bytes] = []
        self._records: list[Record] = []
        self._seen: set[bytes] = set()
        self._buffer: dict[int, Msg] = {}
        self._dropped: dict[bytes, bytes] = {}  # the last frames dropped, by hash (to cite as junk)
        self._dropped_first_flagged: dict[bytes, bytes] = {}
        """The first few flagged frames dropped: a flagged frame is the witness's last frame of a seat only when
        it is that seat's first (spec/relay.md), so later flagged junk never pushes a citable frame out."""
        self._in_ctl = False
        self._gap_asked = -1
        self._own_end: bytes | None = None
        self._ended: MatchEnded | None = None
        self._epoch = 0
        self._warned = -1
        self._expired = -1
        self._tick_epoch = -1
        self._resends = 0
        self._cert_asks = 0
        self._resync = False
        self._lost_own: bytes | None = None
        """While resyncing: the hash of our last frame as the relay saw it, when our transcript does not hold it
        (the file lost its tail): nothing is decided until the opponent's answer brings it back."""
        self._started = False
        self._answers_left = MAX_ANSWERS
        self._answer_epoch = 0
        self._ack: bytes | None = None  # our ENDED of the opponent's end message (spec/protocol.md §7.4)
        self._owed: tuple[bytes, int] | None = None  # a request refused for the budget: answered at the next tick

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
        deck: str = "shared",
    ) -> Session:
        """The room's creator (seat 0): its settings (rounds, doubling, move time, deck) are the room's.
        ``deck``: ``"sealed"`` (spec/sealed-line.md) or ``"shared"`` (the shared-seed deal)."""
        return cls(
            key,
            Role.CREATOR,
            room,
            nonce,
            rounds=settings.rounds,
            double_at_8=settings.double_at_8,
            timeouts=timeouts,
            move_time_s=move_time_s,
            relay_key=relay_key,
            resend_after=resend_after,
            deck=deck,
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
        move_time_s: int | None = None,
        relay_key: bytes = ZERO_HASH,
        timeouts: TimeoutPolicy | None = None,
        resend_after: float = 5.0,
        deck: str | None = None,
    ) -> Session:
        """The joiner (seat 1). ``rounds``/``double_at_8``/``move_time_s``/``deck``, when given, are what the player
        expects: any difference from the creator's fails with ``settings_mismatch`` (None: accept the
        creator's). ``room`` is the code the player typed, normalised; ``relay_key`` the relay's key as
        announced to this client."""
        return cls(
            key,
            Role.JOINER,
            room,
            nonce,
            rounds=rounds,
            double_at_8=double_at_8,
            timeouts=timeouts,
            move_time_s=move_time_s,
            relay_key=relay_key,
            resend_after=resend_after,
            deck=deck,
        )

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
        if not frames:
            raise TranscriptDamaged("the transcript holds no message")
        ref = _load(Referee(), frames, verify_signature=True)
        pk = public_bytes(key)
        seats = [i for i, x in enumerate(ref.hellos) if x is not None and x.public_key == pk]
        if seat is not None and seat not in seats:
            raise ValueError(f"this transcript holds no HELLO of seat {seat} signed with this key: it is not yours")
        if not seats:
            raise ValueError("this transcript holds no HELLO signed with this key: it is not yours")
        if seat is None and len(seats) > 1:
            raise ValueError("this key signed both seats' HELLOs: say which seat to resume")
        me = seat if seat is not None else seats[0]
        h = ref.hellos[me]
        assert h is not None
        if ref.deck == "sealed":  # again as this seat: its own sealed messages must be what its key makes
            ref = _load(Referee((me, key)), frames, verify_signature=False)
        else:
            ref.viewer = (me, key)  # (a shared line holds no secret of the seat: no need to load it again)
        s = cls(
            key,
            Role(me),
            h.room,
            h.nonce,
            rounds=h.rounds,
            double_at_8=h.double_at_8,
            timeouts=timeouts,
            move_time_s=h.move_time_s,
            relay_key=h.relay_key,
            resend_after=resend_after,
            deck=h.deck,
        )
        s._started = True
        s.referee = ref
        s._seen.update(frames)
        last = ref.msgs[-1] if ref.msgs else None
        if last is not None and last.seat == me and last.type in END_TYPES:
            s._own_end = last.frame
        elif last is not None and ref.finished and last.type in END_TYPES:
            s._acknowledge(last)  # signed again, the same bytes (Ed25519 is deterministic)
        s._epoch = len(ref.msgs)
        if ref.finished:
            s._check_end([])
        else:
            s._resync = True
            s._queue_resend()
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
    def resyncing(self) -> bool:
        """True after :meth:`from_transcript` until the opponent has answered (nothing is decided till then)."""
        return self._resync

    @property
    def my_turn(self) -> bool:
        exp = self.referee.expected()
        return self._ended is None and not self._resync and exp is not None and exp == (self.seat, MsgType.MOVE)

    @property
    def move_time_s(self) -> int | None:
        """The bound move time once both HELLOs agreed; before that, this side's proposal or expectation."""
        bound = self.referee.move_time_s
        return bound if bound is not None else self.expect_move_time

    @property
    def relay_key(self) -> bytes:
        """The relay key this side bound in its HELLO."""
        return self.own_relay_key

    @property
    def deck(self) -> str:
        """The deck this session plays: ``"sealed"`` or ``"shared"`` — the creator's HELLO's once it is in
        the line (a joiner's differing expectation then ends the match ``settings_mismatch``), before that
        this side's proposal (a joiner that names none: ``"shared"`` until the creator's HELLO arrives)."""
        h = self.referee.hellos[0]
        if h is not None:
            return h.deck
        return self.expect_deck if self.expect_deck is not None else "shared"

    # (what the client reads of the line: read-only views of the referee's state)

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

    def wait(self) -> Wait | None:
        """What the match waits for now (None when finished). ``limit`` is None with no clock."""
        if self._ended is not None:
            return None
        exp = self.referee.expected()
        if exp is None:
            return None
        seat, t = exp
        mt = self.referee.move_time_s
        limit = float(mt) if mt else None
        # the warning comes `warning` seconds before the limit, but never before three quarters of it
        # have passed (a 30 s move time with the 30 s default would warn at once, every move)
        warn = None if limit is None else max(limit * 0.75, limit - self.timeouts.warning)
        return Wait(self._epoch, seat, t, limit, warn)

    def _sync_ticks(self, epoch: int) -> None:
        if self._tick_epoch != epoch:
            self._tick_epoch = epoch
            self._resends = 0
            self._cert_asks = 0

    def _resend_period(self) -> float:
        """How often to ask again while waiting: ``resend_after``, but at least four times per move time (the
        relay's witness counts a waiting seat's requests, so a frame lost on its way here is asked for well
        before the opponent may ask for a certificate; spec/protocol.md §5.2)."""
        mt = self.referee.move_time_s
        return min(self.resend_after, mt / 4) if mt else self.resend_after

    def _resending(self, w: Wait) -> bool:
        return w.seat != self.seat or self._resync

    def next_deadline(self) -> float | None:
        """Seconds into the current wait when :meth:`time_passed` has something to do."""
        w = self.wait()
        if w is None:
            return None
        self._sync_ticks(w.epoch)
        cands: list[float] = []
        if w.limit is not None and w.warn_at is not None:
            if self._warned != w.epoch and w.warn_at < w.limit:
                cands.append(w.warn_at)
            if self._expired != w.epoch:
                cands.append(w.limit)
            elif w.seat != self.seat:
                cands.append(w.limit + self._cert_asks * self.resend_after)
        if self._resending(w):
            cands.append((self._resends + 1) * self._resend_period())
        return min(cands) if cands else None

    # -- outputs ---------------------------------------------------------

    def frames_to_send(self) -> list[bytes]:
        out, self._out = self._out, []
        return out

    def records(self) -> list[Record]:
        out, self._records = self._records, []
        return out

    def is_control(self, frame: bytes) -> bool:
        """Whether to send ``frame`` with the relay's control flag: every frame but our last one (spec/protocol.md
        §5.2). The relay's witness then records, as this seat's frames, only its last frame — its newest
        message, or its ENDED — never a RESEND, an older message sent again, or the opponent's own messages sent
        back; so no one can make it remember something else as our last frame (an echo, a message older than
        a fork, a frame it forgot after a restart)."""
        return frame != self._last_frame()

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
            assert self.expect_move_time is not None and self.expect_deck is not None
            self._send_hello(self.expect_rounds, self.expect_double, self.expect_move_time, self.expect_deck)
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
        if self._resync:
            held = self._own_hashes()
            n = self.referee.next_seq
            lost = sorted((m for m in map(self._ours, own_frames)  # (one the line cut is not lost: it is seen)
                           if m is not None and m.hash not in held and m.frame not in self._seen and m.seq >= n),
                          key=lambda m: m.seq)  # fmt: skip
            if lost:
                self._lost_own = lost[-1].hash
                for m in lost:
                    events += self._receive(m.frame)
        if self._ended is None:
            self._queue_resend()
        self._out.extend(self.unacknowledged())
        last = self._last_frame()
        if last is not None and (not self._out or self._out[-1] != last):
            self._out.append(last)  # a relay that restarted learns our last frame again
        return events

    def _ours(self, frame: bytes) -> Msg | None:
        """``frame`` as a message of this match validly signed by this seat's key; None if it is not one."""
        r = self.referee
        try:
            m = parse(frame)
            if m.seat != self.seat or r.sid is None or m.match != r.sid:
                return None
            verify(r.signer_key(m), m)
        except ProtocolError:
            return None
        return m

    def receive(self, frame: bytes, *, ctl: bool = False) -> list[Event]:
        """One frame from the other side. Never raises, and never ends the match for anything the network
        could have done: such a frame is dropped (:class:`FrameDropped`); exact duplicates are ignored.

        ``ctl``: the relay delivered the frame with the control flag. The relay's witness counts every such
        frame as a request to send again, and a request left unanswered makes its sender "waiting, not
        silent"; so a flagged frame that is not a RESEND of this match (another match's, garbage, a repeat)
        is answered as an empty request would be (with our last message, within the answer budget):
        otherwise an awaited opponent could flag frames we never answer and never be silent."""
        rs = parse_resend(frame)
        if ctl:
            r = self.referee
            if rs is None or (rs[0] and r.sid is not None and rs[0] != r.sid):
                self._in_ctl = True
                try:
                    events = [] if rs is not None else self._receive(frame)
                finally:
                    self._in_ctl = False
                self._answer_resend(r.sid if r.sid is not None else b"", r.next_seq)
                return events
        if rs is not None:
            # a request; sent without the flag (only a modified client does that) it may be the opponent's last
            # frame, junk to cite; flagged, only if it was the opponent's first (kept apart: a flood of flagged
            # requests must not push a citable frame out, test_adversary_attack_resend_cite_eviction.py)
            self._in_ctl = ctl
            try:
                self._keep_to_cite(frame)
            finally:
                self._in_ctl = False
            self._answer_resend(*rs)
            return []
        return self._receive(frame)

    def _receive(self, frame: bytes) -> list[Event]:
        if frame in self._seen:
            if self._resync and self._ended is None and parse(frame).seat != self.seat:
                events: list[Event] = []
                self._heard(events)
                return events
            return []
        if self._ended is not None:
            return []
        try:
            msg = parse(frame)
        except ProtocolError as e:
            events = []
            self._drop(events, e.code, e.message, frame)
            return events
        events = []
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
        sl = self.referee.sealed
        if isinstance(sl, SealedSeat):  # [action, state before, keys] (spec/sealed-line.md §2)
            self._send(MsgType.MOVE, list(sl.move(action).body), events)
        else:
            self._send(MsgType.MOVE, [action.code, trial.state_hash()], events)
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
        cited = b""
        named = self.referee.silent_frame_needed(blob, self.seat)
        if named is not None:
            # junk the opponent sent last: cite it (one of our own messages, if it sent that unflagged)
            cited = (
                self._dropped.get(named)
                or self._dropped_first_flagged.get(named)
                or next((m.frame for m in self.referee.msgs if m.seat == self.seat and m.hash == named), b"")
            )
        problem = self.referee.certificate_problem(blob, cited, self.seat)
        if problem is not None:
            return [CertificateRejected(problem)]
        events: list[Event] = []
        self._send_end(MsgType.TIMEOUT, [blob, cited], events)
        return events

    def time_passed(self, epoch: int, seconds: float) -> list[Event]:
        """The client's clock: ``seconds`` since the wait with ``epoch`` began. Warns once before the limit;
        at the limit asks for a certificate (:class:`CertificateNeeded`) when the opponent is awaited, or
        says :class:`OwnTimeExpired`; asks the opponent to send again every ``resend_after`` seconds while
        waiting for it. Every call (also after the end, with any epoch) refills the RESEND-answer budget."""
        self._answers_left = MAX_ANSWERS
        if self._owed is not None:
            owed, self._owed = self._owed, None
            self._answer_resend(*owed)
        w = self.wait()
        if w is None or w.epoch != epoch:
            return []
        self._sync_ticks(epoch)
        events: list[Event] = []
        peer = w.seat != self.seat
        if w.limit is not None and w.warn_at is not None:
            if seconds >= w.limit:
                if self._expired != epoch:
                    self._expired = epoch
                    self._warned = epoch
                    if peer:
                        self._cert_asks = 1
                        self._before_certify(events, w.seat)
                    else:
                        events.append(OwnTimeExpired(w.what_text))
                elif peer and seconds >= w.limit + self._cert_asks * self.resend_after:
                    self._cert_asks = int((seconds - w.limit) // self.resend_after) + 1
                    self._before_certify(events, w.seat)
            elif seconds >= w.warn_at and self._warned != epoch:
                self._warned = epoch
                events.append(TimeoutWarning(w.seat, w.what_text, w.limit - seconds))
        period = self._resend_period()
        if self._resending(w) and seconds >= (self._resends + 1) * period:
            self._resends = int(seconds // period)
            self._queue_resend()
            if peer:
                # and our own messages it has not shown it has: one damaged on its way to the relay (which
                # recorded the damaged bytes as our last frame) reaches the relay and the opponent intact;
                # a repeat the relay already saw is not news to its clock (spec/protocol.md §5.2)
                self._out.extend(self.unacknowledged())
        return events

    # -- internals -------------------------------------------------------

    def _before_certify(self, events: list[Event], silent: int) -> None:
        """Ask for a certificate, our messages the opponent has not answered going first: the relay lists our
        recent frames in it, and a claim fits only when each of those messages is among them (spec/protocol.md
        §7.3, step 6b), whatever else we sent since (answers to its requests for older ones)."""
        self._out.extend(self.unacknowledged())
        events.append(CertificateNeeded(silent))

    def _require_open(self) -> None:
        if self._ended is not None:
            raise SessionClosed("the match has ended")

    def _queue_resend(self) -> None:
        r = self.referee
        self._out.append(resend_frame(r.sid if r.sid is not None else b"", r.next_seq))

    def _answer_resend(self, match: bytes, from_seq: int) -> None:
        r = self.referee
        if match and r.sid is not None and match != r.sid:
            return  # another match's request
        if self._answer_epoch != self._epoch:
            self._answer_epoch, self._answers_left = self._epoch, MAX_ANSWERS
        if self._answers_left <= 0:
            # more requests than an honest peer sends: the lowest is answered at the next tick (an asker's
            # request must not stay unanswered: the relay's witness counts it as waiting for us)
            if self._owed is None or from_seq < self._owed[1]:
                self._owed = (match, from_seq)
            return
        self._answers_left -= 1
        if not match and r.sid is not None:
            # asked by a side that holds no match id yet: it can use only the HELLOs (then it asks again
            # with the match id); never the whole line, so a forged RESEND(b"", 0) costs two frames
            hellos = [x.frame for x in r.msgs[from_seq:2]]
            self._out.extend(hellos)
            last, w = self._last_frame(), self.wait()
            if last is not None and last not in hellos and not (w is not None and w.seat == self.seat):
                self._out.append(last)  # our last frame: the relay's clock then sees the request answered
            return
        frames = [x.frame for x in r.msgs[from_seq : from_seq + MAX_ANSWER_MESSAGES]]
        if self._own_end is not None and self._own_end not in frames:
            frames.append(self._own_end)
        end = r.msgs[-1] if r.finished and r.msgs else None
        if end is not None and end.type in END_TYPES and end.frame not in frames:
            frames.append(end.frame)  # the opponent's own end message: the line is over, whatever it asks
        last = self._last_frame()
        w = self.wait()
        awaited = w is not None and w.seat == self.seat
        if not frames:
            # nothing new: show we heard, unless we are the one awaited (a re-sent message would look,
            # to the relay's clock, like an answer we have not given)
            if last is not None and not awaited:
                frames = [last]
        elif last is not None and frames[-1] != last:
            frames.append(last)  # the relay's last frame from us stays our last one
        self._out.extend(frames)

    def _last_frame(self) -> bytes | None:
        """Our last new frame, as the relay's witness records it: our ENDED after the opponent's end, else
        our last message (None: none yet)."""
        if self._ack is not None:
            return self._ack
        own = self.referee.last_of(self.seat)
        return own.frame if own is not None else None

    def _drop(self, events: list[Event], code: Code, message: str, frame: bytes = b"") -> None:
        events.append(FrameDropped(code, message))
        if frame:
            self._keep_to_cite(frame)

    def _keep_to_cite(self, frame: bytes) -> None:
        """Keep one of the opponent's frames this side did not use: if the relay names it as the opponent's
        last, a TIMEOUT cites it as junk (spec/protocol.md §7.3). The last ``MAX_BUFFERED``, each small enough
        to cite."""
        if len(frame) > MAX_EVIDENCE_BYTES:
            return
        if self._in_ctl:  # (only a seat's first frame, flagged, can be its last at the witness: keep the first few)
            if len(self._dropped_first_flagged) < FIRST_FLAGGED_KEPT:
                self._dropped_first_flagged[msg_hash(frame)] = frame
            return
        self._dropped[msg_hash(frame)] = frame
        while len(self._dropped) > MAX_BUFFERED:
            del self._dropped[next(iter(self._dropped))]

    def _own_hashes(self) -> set[bytes]:
        """The hashes of every frame of ours this side holds: its messages in the line, its end, its ENDED."""
        own = {m.hash for m in self.referee.msgs if m.seat == self.seat}
        own.update(msg_hash(f) for f in (self._own_end, self._ack) if f is not None)
        return own

    def _tail_lost(self) -> bool:
        """True while the relay's last frame of ours is still missing from the line (see :meth:`reconnected`)."""
        if self._lost_own is not None and self._lost_own in self._own_hashes():
            self._lost_own = None
        return self._lost_own is not None

    def _heard(self, events: list[Event]) -> None:
        """The opponent answered after a resume: decide again (unless our own lost message is still missing)."""
        if self._resync and not self._tail_lost():
            self._resync = False
            self._epoch += 1
            self._advance(events)
            self._check_end(events)

    def _take(self, msg: Msg, events: list[Event]) -> None:
        """Place ``msg`` by the line's one verdict (:meth:`Referee.judge`, the auditor's too): apply it, buffer
        it, ignore it, drop it, or abort with it as evidence when it proves its signer's fault."""
        r = self.referee
        j = r.judge(msg)
        d = j.disposition
        if j.attributed and self._resync and msg.seat != self.seat and not self._tail_lost():
            self._resync = False
            self._epoch += 1
        if d is Disposition.AHEAD:
            n = r.next_seq
            if msg.seq not in self._buffer and len(self._buffer) < MAX_BUFFERED:
                self._buffer[msg.seq] = msg
            if self._gap_asked != n:
                self._gap_asked = n
                self._queue_resend()
            return
        if d is Disposition.HELD:
            return
        assert d is Disposition.ACCEPTED or j.code is not None  # every other verdict names its code
        if d is Disposition.FAULT and j.code is not None:
            self._abort(events, j.code, j.message, *j.evidence)
            return
        if d is Disposition.DROPPED and j.code is not None:
            self._drop(events, j.code, j.message, msg.frame if j.junk else b"")  # junk may be cited (§7.3)
            return
        acc = j.accepted
        assert acc is not None
        self._seen.add(msg.frame)
        self._epoch += 1
        own = msg.seat == self.seat
        if own and msg.type in END_TYPES:
            self._own_end = msg.frame
        elif msg.type in END_TYPES and r.finished and r.msgs[-1].frame == msg.frame:
            self._acknowledge(msg)
        self._records.append(Record(msg.frame, own or bool(acc.round_results) or r.finished))
        self._after(msg.type, msg.seat, msg.seq, msg.body, acc.round_results, events)

    def _acknowledge(self, end: Msg) -> None:
        """Sign and send our ENDED of the opponent's end message (spec/protocol.md §7.4): our last frame at
        the relay then lies on this line only, so no silence claim against us can fit a line the opponent
        forked past its own end (an end and a move signed for one sequence number, each shown to one side)."""
        if self._ack is None:
            self._ack = build(self.key, MsgType.ENDED, end.match, end.seq + 1, end.hash, self.seat, [end.hash])
            self._out.append(self._ack)

    def _drain(self, events: list[Event]) -> None:
        r = self.referee
        while self._buffer and self._ended is None and not r.finished:
            n = r.next_seq
            for k in [k for k in self._buffer if k < n]:
                del self._buffer[k]
            msg = self._buffer.pop(n, None)
            if msg is None:
                break
            self._take(msg, events)
        if r.finished:
            self._buffer.clear()

    def _send(self, t: MsgType, body: list[object], events: list[Event]) -> None:
        r = self.referee
        frame = build(self.key, t, r.sid if r.sid is not None else b"", r.next_seq, r.head_hash, self.seat, body)
        acc = r.accept(frame, verify_signature=False)
        self._seen.add(frame)
        self._epoch += 1
        self._records.append(Record(frame, True))
        self._out.append(frame)
        self._after(t, self.seat, acc.msg.seq, acc.msg.body, acc.round_results, events)

    def _send_end(self, t: MsgType, body: list[object], events: list[Event]) -> None:
        r = self.referee
        frame = build(self.key, t, r.sid if r.sid is not None else b"", r.next_seq, r.head_hash, self.seat, body)
        r.accept(frame, verify_signature=False)
        self._own_end = frame
        self._seen.add(frame)
        self._epoch += 1
        self._buffer.clear()
        self._records.append(Record(frame, True))
        self._out.append(frame)
        self._check_end(events)

    def _send_hello(self, rounds: int, double_at_8: bool, move_time_s: int, deck: str) -> None:
        body: list[object] = [
            RULES_VERSION,
            self.room,
            rounds,
            double_at_8,
            move_time_s,
            deck,
            self.own_relay_key,
            self.public_key,
            self.nonce,
        ]
        assert body[HELLO_KEY_INDEX] is self.public_key
        self._send(MsgType.HELLO, body, [])

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
        if len(evidence) > MAX_EVIDENCE_BYTES or len(evidence2) > MAX_EVIDENCE_BYTES:
            self._drop(events, code, f"{message} (too large to cite as evidence)")
            return
        problem = r.evidence_problem(code, evidence, evidence2, self.seat)
        if problem is not None:
            self._drop(events, code, f"{message} ({problem})")
            return
        self._send_end(MsgType.ABORT, [code, message[:1000], evidence, evidence2], events)

    def _after(
        self, t: MsgType, seat: int, seq: int, body: tuple[object, ...], rounds: list[RoundResult], events: list[Event]
    ) -> None:
        r = self.referee
        if t is MsgType.HELLO and seat == 0 and self.seat == 1:
            h = r.hellos[0]
            assert h is not None
            events.append(
                RoomSettings(
                    Settings(h.rounds, h.double_at_8),
                    h.room,
                    fingerprint(h.public_key),
                    h.move_time_s,
                    h.relay_key,
                    h.deck,
                )
            )
        elif t is MsgType.REVEAL:
            assert r.sid is not None and r.first_dealer is not None and r.settings is not None
            opp = r.hellos[1 - self.seat]
            assert opp is not None
            rk = r.relay_key
            events.append(
                MatchStarted(
                    r.sid,
                    self.seat,
                    r.first_dealer,
                    r.settings,
                    fingerprint(opp.public_key),
                    r.move_time_s or 0,
                    fingerprint(rk) if rk is not None and rk != ZERO_HASH else None,
                    r.deck or "shared",
                )
            )
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
        while self._ended is None and not r.finished and not self._resync:
            sl = r.sealed
            if isinstance(sl, SealedSeat) and sl.owes_stop():
                outs = sl.pending()  # this seat's own stop (a check only its secrets make): its disclosure
                if not outs:
                    return
                for o in outs:
                    self._send(_TYPES[o.kind], list(o.body), events)
                continue
            exp = r.expected()
            if exp is None or exp[0] != self.seat:
                return
            t = exp[1]
            if t is MsgType.HELLO:
                h0 = r.hellos[0]
                assert h0 is not None
                rounds = self.expect_rounds if self.expect_rounds is not None else h0.rounds
                dbl = self.expect_double if self.expect_double is not None else h0.double_at_8
                mt = self.expect_move_time if self.expect_move_time is not None else h0.move_time_s
                deck = self.expect_deck if self.expect_deck is not None else h0.deck
                # sent even when it differs from the creator's: both sides then see the same mismatch
                self._send_hello(rounds, dbl, mt, deck)
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
            elif t is MsgType.ABORT:
                proof = r.sealed_abort()  # a sealed round's verification proved the opponent's fault
                if proof is None:
                    return
                self._abort(events, *proof)
                return
            elif isinstance(r.sealed, SealedSeat) and (t in SEALED_TYPES or r.sealed.made() is not None):
                outs = r.sealed.pending()  # the sealed line's automatic steps: deal, draw key, disclosure
                if not outs:
                    return
                for o in outs:
                    self._send(_TYPES[o.kind], list(o.body), events)
            else:
                return  # a move: the player decides

    def _check_end(self, events: list[Event]) -> None:
        if self._ended is not None:
            return
        o = self.referee.outcome()
        if o is None:
            return
        if o.status == "abandoned" and self.referee.mismatch:
            o = replace(o, message=describe_mismatch(self.referee.mismatch, self.seat))
            last = self.referee.msgs[-1] if self.referee.msgs else None
            if last is not None and last.seat != self.seat and last.type is MsgType.HELLO:
                # the opponent's HELLO ended it: acknowledge that one, so our last frame at the relay lies on
                # no line where the opponent's other HELLO bound a match (else its silence claim would fit)
                self._acknowledge(last)
        self._buffer.clear()
        self._ended = MatchEnded(o, self.seat)
        events.append(self._ended)
