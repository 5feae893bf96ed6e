"""The referee: verifies a match's one line of signed messages, for either seat.

Both the players' sessions and the auditor feed every message through a
:class:`Referee`. It checks, in this order (see spec/protocol.md §5.1):

1. the frame (canonical msgpack; ``framing`` codes) and the envelope's shape
   (``unsupported_version``, ``unknown_type``, ``malformed_message``);
2. the signer: its HELLO must be in the line (``unexpected_message``), and the
   signature must verify with its key (``bad_signature``);
3. the match id (``replay``);
4. for an end message, its place (§6); otherwise the sequence number
   (``equivocation`` or ``replay`` when taken, ``sequence_gap`` when ahead);
5. the link to the previous message (``broken_chain``);
6. whose message is due and of what type (``out_of_turn``, ``unexpected_message``);
7. the content: the HELLOs' values (``malformed_message``) and agreement (the
   match ends, abandoned: ``room_mismatch``, ``relay_mismatch``,
   ``settings_mismatch``), the reveal (``commitment_mismatch``), the move's
   legality (``illegal_move``) and state hash (``desync``), the result
   (``bad_result``).

Nothing is applied unless every check passes (a failed move leaves the state
as it was). The engine decides whose message comes next, so the messages form
one line. RESIGN, TIMEOUT and ABORT (the *end* messages) may come from either
seat at any time, and may cut the line back to the message their sender last
saw, superseding messages of the *other* seat that crossed them in transit.
Whether an ABORT proves the accused's fault, and whether a TIMEOUT's
certificate proves the silence, is decided when the end message is accepted
(:attr:`Ending.proven`); an end message that proves nothing is its signer's
resignation.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..engine.actions import NotationError, from_code
from ..engine.deal import SeededDeal
from ..engine.match import STARTING_POINTS, IllegalAction, Match, RoundResult, Settings, choose_first_dealer
from .codes import Code, Status
from .errors import PROVABLE, ProtocolError
from .framing import FrameError, decode, encode
from .messages import (
    DECKS,
    END_TYPES,
    HELLO_KEY_INDEX,
    MAX_MOVE_TIME_S,
    MAX_ROOM_CHARS,
    RULES_VERSION,
    SEALED_TYPES,
    ZERO_HASH,
    Msg,
    MsgType,
    body_problem,
    commitment_of,
    load_public,
    match_seed,
    msg_hash,
    parse,
    parse_resend,
    public_bytes,
    resend_frame,
    session_id,
    verify,
)
from .sealed import RULES as SEALED_RULES
from .sealed import SealedFormatError
from .sealed_line import (
    LINE_RULES,
    Kind,
    LineError,
    RevealedDeals,
    SealedObserver,
    SealedSeat,
    Sent,
    check_shape,
    match_secret,
)
from .witness import CertificateError, fingerprint, open_certificate

__all__ = [
    "SEALED_CODES",
    "Accepted",
    "Disposition",
    "Ending",
    "Hello",
    "Judgement",
    "Outcome",
    "Referee",
    "Viewer",
    "describe_mismatch",
]

SEALED_CODES = frozenset(SEALED_RULES) | frozenset(LINE_RULES)
"""The sealed line's faults (spec/sealed.md §7, spec/sealed-line.md §3): an ABORT naming one is proven when
the round's verification from the line names it against the accused."""
_KIND_OF = {
    MsgType.SHUFFLE: Kind.SHUFFLE,
    MsgType.SHUFFLE_LOCK: Kind.SHUFFLE_LOCK,
    MsgType.LOCK: Kind.LOCK,
    MsgType.CLAIM: Kind.CLAIM,
    MsgType.MOVE: Kind.MOVE,
    MsgType.DRAW: Kind.DRAW,
    MsgType.DISCLOSE: Kind.DISCLOSE,
}
_TYPE_OF = {k: t for t, k in _KIND_OF.items()}
Viewer = tuple[int, Ed25519PrivateKey]
"""The seat a referee plays for and its key (its sealed secrets derive from it); None: an observer."""


@dataclass(frozen=True, slots=True)
class Hello:
    rules_version: int
    room: str
    rounds: int
    double_at_8: bool
    move_time_s: int
    deck: str
    relay_key: bytes
    public_key: bytes
    nonce: bytes

    @classmethod
    def of(cls, msg: Msg) -> Hello:
        rv, room, rounds, dbl, mt, deck, rk, pk, nonce = msg.body
        return cls(rv, room, rounds, dbl, mt, deck, rk, pk, nonce)


@dataclass(frozen=True, slots=True)
class Ending:
    """How the line ended early. ``kind`` is the end message's type (None: the HELLOs disagree).

    ``code``: for an ABORT the code it names; for a TIMEOUT ``timeout`` (the silent seat was connected)
    or ``opponent_left``; ``resigned``; or the mismatch's code. ``proven``: for an ABORT, whether its
    evidence proves the accused's fault; for a TIMEOUT, whether its certificate proves the silence
    (``reason`` says why not). ``witness``: the certificate's relay fingerprint.
    """

    kind: MsgType | None
    code: str
    message: str
    by: int | None
    seq: int
    evidence: bytes = b""
    proven: bool | None = None
    reason: str = ""
    witness: str | None = None


STATUSES: Final = (Status.COMPLETE, Status.RESIGNED, Status.FORFEIT, Status.ON_TIME, Status.ABANDONED)


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a match as both transcripts show it.

    ``status``: ``complete`` (played out, the result countersigned by both), ``resigned`` (a RESIGN,
    or an end message that proves nothing: its signer's resignation), ``forfeit`` (an ABORT whose
    evidence proves the accused's fault), ``on_time`` (a TIMEOUT with a valid relay certificate) or
    ``abandoned`` (the HELLOs disagree, or the match ended before the handshake bound it: no winner).
    ``by`` is the seat that signed the end message; ``loser`` the seat that lost by it;
    ``winner`` the match's winner (the engine's when the last round had already ended).
    ``evidence_verified``: for an ABORT, whether its evidence proves the fault it names.
    """

    status: Status
    code: str | None
    message: str
    by: int | None
    winner: int | None
    points: tuple[int, int]
    seq: int | None
    evidence_verified: bool | None = None
    loser: int | None = None
    witness: str | None = None


@dataclass(slots=True)
class Accepted:
    msg: Msg
    round_results: list[RoundResult] = field(default_factory=list)
    superseded: list[Msg] = field(default_factory=list)


class Disposition(enum.Enum):
    """What the line makes of one signed message (:meth:`Referee.judge`)."""

    ACCEPTED = "accepted"
    """It is in the line now."""
    HELD = "held"
    """Byte for byte the line's message at its SEQ: nothing to do."""
    AHEAD = "ahead"
    """Past the next SEQ: kept until the gap fills (a repair; nobody's fault)."""
    DROPPED = "dropped"
    """It changes nothing and proves nothing: nobody's fault (the network or the relay could have done it)."""
    FAULT = "fault"
    """Its signer's proven fault: :attr:`Judgement.evidence` proves it (the receiver aborts citing it)."""


@dataclass(frozen=True, slots=True)
class Judgement:
    """The line's verdict on one message: ``disposition``; for all but ACCEPTED and HELD the ``code`` and
    ``message`` that say why; ``accepted`` for ACCEPTED; ``evidence`` (one message, or two for
    ``equivocation``) for FAULT. ``attributed``: the message is signed with its seat's key for this match
    (whatever became of it). ``junk``: it may be its sender's last frame at the relay, to cite (§7.3)."""

    disposition: Disposition
    code: Code | None = None
    message: str = ""
    accepted: Accepted | None = None
    evidence: tuple[bytes, bytes] = (b"", b"")
    attributed: bool = False
    junk: bool = False


_FIELD_LABELS = {
    "rules_version": "rules version",
    "room": "room",
    "rounds": "rounds",
    "double_at_8": "doubling at 8+",
    "move_time_s": "move time",
    "deck": "deck",
    "relay_key": "relay",
}
_COMPARED = ("room", "relay_key", "rules_version", "rounds", "double_at_8", "move_time_s", "deck")


def _show(v: object) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, bytes):
        return "none" if v == ZERO_HASH else fingerprint(v)
    return str(v)


def _show_field(name: str, v: object) -> str:
    if name == "move_time_s":
        return "none" if v == 0 else f"{v} s"
    return _show(v)


def describe_mismatch(diffs: list[tuple[str, object, object]], mine: int | None) -> str:
    """``rounds: you 6, opponent 12`` from seat ``mine``'s side (``creator …, joiner …`` when None)."""
    parts = []
    for name, v0, v1 in diffs:
        label = _FIELD_LABELS.get(name, name)
        if mine is None:
            parts.append(f"{label}: creator {_show_field(name, v0)}, joiner {_show_field(name, v1)}")
        else:
            you, opp = (v0, v1) if mine == 0 else (v1, v0)
            parts.append(f"{label}: you {_show_field(name, you)}, opponent {_show_field(name, opp)}")
    return "; ".join(parts)


class Referee:
    """The state of one match's line of messages, verified message by message."""

    msgs: list[Msg]
    hellos: list[Hello | None]
    keys: list[Ed25519PublicKey | None]
    sid: bytes | None
    settings: Settings | None
    commitment: bytes | None
    values: list[bytes | None]
    seed: bytes | None
    first_dealer: int | None
    match: Match | None
    results: list[Msg | None]
    ending: Ending | None
    mismatch: list[tuple[str, object, object]]
    superseded: list[Msg]
    sealed: SealedSeat | SealedObserver | None

    def __init__(self, viewer: Viewer | None = None) -> None:
        """``viewer``: the seat this referee plays for and its key, for a sealed match (its seat-side match
        and secrets); without one a sealed line is followed as an observer (the auditor)."""
        self.viewer = viewer
        self._reset()
        self.superseded = []

    def _reset(self) -> None:
        self.msgs = []
        self.hellos = [None, None]
        self.keys = [None, None]
        self.sid = None
        self.settings = None
        self.commitment = None
        self.values = [None, None]
        self.seed = None
        self.first_dealer = None
        self.match = None
        self.results = [None, None]
        self.ending = None
        self.mismatch = []
        self.sealed = None
        self._round_from = 0  # the sequence number where the sealed line's current round begins
        self._round_no = 0  # the sealed line's current round (its messages start at _round_from)
        self._rounds_told = 0  # the sealed match's rounds already reported in an Accepted

    # -- queries ---------------------------------------------------------

    @property
    def next_seq(self) -> int:
        return len(self.msgs)

    @property
    def head_hash(self) -> bytes:
        return self.msgs[-1].hash if self.msgs else ZERO_HASH

    @property
    def complete(self) -> bool:
        return self.results[1] is not None

    @property
    def finished(self) -> bool:
        """True once nothing more goes in the line (complete, or ended early)."""
        return self.ending is not None or self.complete

    @property
    def move_time_s(self) -> int | None:
        """The bound move time (None until both HELLOs agreed; 0: no clock)."""
        h = self.hellos[0]
        return h.move_time_s if self.sid is not None and h is not None else None

    @property
    def deck(self) -> str | None:
        """The bound deck, ``"sealed"`` or ``"shared"`` (None until both HELLOs agreed)."""
        h = self.hellos[0]
        return h.deck if self.sid is not None and h is not None else None

    @property
    def relay_key(self) -> bytes | None:
        """The bound relay key (None until both HELLOs agreed)."""
        h = self.hellos[0]
        return h.relay_key if self.sid is not None and h is not None else None

    def expected(self) -> tuple[int, MsgType] | None:
        """Who sends the next line message, and of what type (None when the line is finished)."""
        if self.finished:
            return None
        n = len(self.msgs)
        if n == 0:
            return 0, MsgType.HELLO
        if n == 1:
            return 1, MsgType.HELLO
        if n == 2:
            return 0, MsgType.COMMIT
        if n == 3:
            return 1, MsgType.VALUE
        if n == 4:
            return 0, MsgType.REVEAL
        m = self.match
        assert m is not None
        sl = self.sealed
        if sl is not None:
            made = sl.made() if isinstance(sl, SealedSeat) else None
            if made is not None and isinstance(sl, SealedSeat):
                return sl.seat, _TYPE_OF[made]
            e = sl.judge.expected()  # the line's one judge, the auditor's too (a seat's own stop is its own)
            if e is not None:
                return e[0], _TYPE_OF[e[1]]
            v = sl.verdict
            if v is not None and v.loser is not None:
                return 1 - v.loser, MsgType.ABORT  # the round's verification proved a fault: its victim ends it
        elif not m.is_over:
            return m.to_move, MsgType.MOVE
        if self.results[0] is None:
            return 0, MsgType.RESULT
        return 1, MsgType.RESULT

    def last_of(self, seat: int) -> Msg | None:
        """``seat``'s last message in the line."""
        for x in reversed(self.msgs):
            if x.seat == seat:
                return x
        return None

    @property
    def verified_history(self) -> list[RoundResult]:
        """The rounds that count: in shared mode every round the engine ended; in sealed mode only the rounds
        whose two disclosures verified clean (spec/sealed.md §9: no round is scored before its verification)."""
        m = self.match
        if m is None:
            return []
        sl = self.sealed
        if sl is None:
            return list(m.history)
        clean = sum(1 for v in sl.verdicts if v.fault is None and v.stopped_by is None)
        return list(m.history[:clean])

    def outcome(self) -> Outcome | None:
        """The match's end, once there is one: one verdict for the seats and the auditor alike. An early end
        (RESIGN, TIMEOUT, ABORT) always names a loser and the other seat wins, whatever the rounds played
        said; the points are those of the rounds that count (:attr:`verified_history`)."""
        m = self.match
        counted = self.verified_history
        points = counted[-1].points if counted else (STARTING_POINTS, STARTING_POINTS)
        if self.complete and m is not None:
            return Outcome(
                Status.COMPLETE,
                None,
                "the match was played out and both players signed the result",
                None,
                m.winner,
                points,
                len(self.msgs) - 1,
            )
        e = self.ending
        if e is None:
            return None
        if e.kind is None:
            return Outcome(Status.ABANDONED, e.code, e.message, None, None, points, e.seq)
        if self.sid is None:  # ended before the handshake bound a match: nothing to win or lose
            return Outcome(
                Status.ABANDONED, e.code, f"{e.message} (before the handshake was done)", e.by, None, points, e.seq
            )
        by = e.by
        assert by is not None
        verified: bool | None = None
        witness: str | None = None
        code: str = e.code
        message = e.message
        if e.kind is MsgType.RESIGN:
            status, loser = Status.RESIGNED, by
        elif e.kind is MsgType.TIMEOUT:
            if e.proven:
                status, loser, witness = Status.ON_TIME, 1 - by, e.witness
            else:
                status, loser, code = Status.RESIGNED, by, Code.UNWITNESSED_TIMEOUT
                message = f"seat {by} claimed a timeout without a valid certificate ({e.reason}): its resignation"
        else:
            verified = bool(e.proven)
            if e.proven:
                status, loser = Status.FORFEIT, 1 - by
            else:
                status, loser, code = Status.RESIGNED, by, Code.UNPROVEN_ABORT
                message = (
                    f"seat {by} aborted naming {e.code} ({e.message}), but its evidence does not prove "
                    f"seat {1 - by}'s fault ({e.reason}): its resignation"
                )
        return Outcome(status, code, message, by, 1 - loser, points, e.seq, verified, loser, witness)

    # -- verification ----------------------------------------------------

    def signer_key(self, msg: Msg) -> Ed25519PublicKey:
        """The key ``msg`` must verify with (a HELLO's own; else its seat's, from the line's HELLO)."""
        if msg.type is MsgType.HELLO:
            return load_public(msg.body[HELLO_KEY_INDEX])
        key = self.keys[msg.seat]
        if key is None:
            raise ProtocolError(
                Code.UNEXPECTED_MESSAGE, f"a {msg.type.label} from seat {msg.seat}, whose HELLO is not in the line"
            )
        return key

    def judge(self, msg: Msg) -> Judgement:
        """The one verdict on a signed message, for a seat and for the auditor alike: accepted into the line,
        held already, ahead of it, dropped (nobody's fault), or its signer's proven fault with the evidence.
        Cheap before dear: the signature, the match id and the place are checked before anything is replayed
        or computed, and a message for a place the line holds is never replayed against the line."""
        D = Disposition
        try:
            verify(self.signer_key(msg), msg)
        except ProtocolError as e:
            return Judgement(D.DROPPED, e.code, e.message, junk=True)
        if msg.match != (self.sid if self.sid is not None else b""):
            return Judgement(D.DROPPED, Code.REPLAY, f"a {msg.type.label} from another match or session", junk=True)
        if msg.type is MsgType.ENDED:
            return Judgement(D.DROPPED, Code.AFTER_THE_END, "an ENDED acknowledges an end: never a move of the line")
        n = len(self.msgs)
        if msg.seq > n:
            return Judgement(
                D.AHEAD, Code.SEQUENCE_GAP, f"sequence {msg.seq} arrived while {n} was expected", attributed=True
            )
        bound = self.sid is not None and (self.viewer is None or msg.seat != self.viewer[0])
        if msg.seq < n and msg.type not in END_TYPES and not self.cuts(msg):
            held = self.msgs[msg.seq]
            if held.frame == msg.frame:
                return Judgement(
                    D.HELD,
                    Code.REPLAY,
                    f"the {msg.type.label} at sequence {msg.seq} repeats the line's",
                    attributed=True,
                )
            if held.seat == msg.seat and bound and held.prev == msg.prev:
                text = f"seat {msg.seat} signed two messages for sequence {msg.seq}"
                return Judgement(D.FAULT, Code.EQUIVOCATION, text, evidence=(msg.frame, held.frame), attributed=True)
            if held.seat == msg.seat:
                text = f"seat {msg.seat}'s {msg.type.label} at sequence {msg.seq} answers another line"
                return Judgement(
                    D.DROPPED, Code.EQUIVOCATION if self.sid is not None else Code.REPLAY, text, attributed=True
                )
            # the other seat's message for a place the line holds: it crossed, or it is junk; it changes nothing
            # and proves nothing worth a replay of the line (cheap before dear)
            return Judgement(D.DROPPED, Code.REPLAY, f"sequence {msg.seq} is taken", attributed=True, junk=bound)
        try:
            acc = self.accept_msg(msg, verify_signature=False)
        except ProtocolError as e:
            if bound and e.code in PROVABLE:
                other = self.msgs[msg.seq].frame if e.code == Code.EQUIVOCATION else b""
                return Judgement(D.FAULT, e.code, e.message, evidence=(msg.frame, other), attributed=True)
            return Judgement(D.DROPPED, e.code, e.message, attributed=True, junk=True)
        return Judgement(D.ACCEPTED, accepted=acc, attributed=True)

    def accept(self, frame: bytes, *, verify_signature: bool = True) -> Accepted:
        """Verify ``frame`` as the next message and apply it, or raise :class:`ProtocolError`."""
        msg = parse(frame)
        try:
            return self.accept_msg(msg, verify_signature=verify_signature)
        except ProtocolError as e:
            if e.seq is None:
                e.seq = msg.seq
            raise

    def accept_msg(self, msg: Msg, *, verify_signature: bool = True) -> Accepted:
        t = msg.type
        # 2. the signer and its signature
        key = self.signer_key(msg)
        if verify_signature:
            verify(key, msg)
        # 3. match id
        want = self.sid if self.sid is not None else b""
        if msg.match != want:
            raise ProtocolError(Code.REPLAY, f"the {t.label} at sequence {msg.seq} belongs to another match or session")
        n = len(self.msgs)
        if t is MsgType.ENDED:  # never part of any line, never evidence (spec/protocol.md §7.4)
            raise ProtocolError(
                Code.AFTER_THE_END, f"an ended at sequence {msg.seq} acknowledges an end; it is no move"
            )
        # 3b. the body's exact schema, before any replay or crypto: a wrong one is its signer's proven fault
        # (bad_shape, bad_scalar), but an end message's is no end message at all (malformed_message)
        problem = body_problem(msg)
        if problem is not None:
            code = Code.MALFORMED_MESSAGE if t in END_TYPES else problem[0]
            raise ProtocolError(code, f"seat {msg.seat}'s {problem[1]}")
        # 4/5. sequence and link
        if t in END_TYPES:
            return self._accept_end(msg)
        if self.finished:
            raise ProtocolError(Code.UNEXPECTED_MESSAGE, f"a {t.label} after the match ended")
        if self.cuts(msg) and msg.seq < n:
            return self._accept_stop_cut(msg)
        if msg.seq < n:
            held = self.msgs[msg.seq]
            if held.frame == msg.frame:
                raise ProtocolError(Code.REPLAY, f"the {t.label} at sequence {msg.seq} repeats a message of the line")
            if held.seat == msg.seat and self.sid is not None:
                raise ProtocolError(
                    Code.EQUIVOCATION, f"seat {msg.seat} signed two different messages for sequence {msg.seq}"
                )
            raise ProtocolError(Code.REPLAY, f"sequence {msg.seq} is already taken by another message")
        if msg.seq > n:
            raise ProtocolError(Code.SEQUENCE_GAP, f"sequence {msg.seq} arrived while {n} was expected")
        if msg.prev != self.head_hash:
            raise ProtocolError(
                Code.BROKEN_CHAIN, f"the {t.label} at sequence {msg.seq} does not link to the previous message"
            )
        # 6. turn
        exp = self.expected()
        assert exp is not None
        seat, want_t = exp
        if self.cuts(msg) and self._stop_allowed(msg.seat):
            seat, want_t = msg.seat, t  # a stop: a seat may disclose the round at any time (spec/sealed-line.md §2)
        if msg.seat != seat:
            raise ProtocolError(
                Code.OUT_OF_TURN, f"seat {msg.seat} sent a {t.label} at sequence {msg.seq}; it is seat {seat}'s turn"
            )
        if t is not want_t:
            raise ProtocolError(Code.UNEXPECTED_MESSAGE, f"a {t.label} at sequence {msg.seq}; a {want_t.label} is due")
        # 7. content
        acc = Accepted(msg)
        if self.sealed is not None and t is not MsgType.RESULT:
            self._on_sealed(msg, acc)
        else:
            if t is MsgType.MOVE and len(msg.body) != 2:
                raise ProtocolError(Code.MALFORMED_MESSAGE, "a move of a shared-deck match is [action, state_hash]")
            getattr(self, "_on_" + t.label)(msg, acc)
        self.msgs.append(msg)
        return acc

    # -- the sealed line (spec/sealed-line.md) -------------------------------

    def deal_source(self) -> SeededDeal | RevealedDeals | None:
        """Where the match's deals come from, for a full :class:`Match` replaying the line (``koikoi replay``):
        the shared seed; in sealed mode the deals the disclosures revealed (an observer's referee, the
        auditor's); None before the reveal or for a seat's own referee in sealed mode."""
        if self.seed is None:
            return None
        if self.sealed is None:
            return SeededDeal(self.seed)
        return RevealedDeals(self.sealed.deals) if isinstance(self.sealed, SealedObserver) else None

    def cuts(self, msg: Msg) -> bool:
        """True when ``msg`` may cut the line back like an end message: a sealed match's DISCLOSE (a stop
        crosses the other seat's messages in transit)."""
        return msg.type is MsgType.DISCLOSE and self.sealed is not None

    def _stop_allowed(self, seat: int) -> bool:
        sl = self.sealed.judge if self.sealed is not None else None
        return sl is not None and not sl.finished and not sl.disclosed(seat) and sl.expected() is not None

    def _accept_stop_cut(self, msg: Msg) -> Accepted:
        """A DISCLOSE for a taken sequence number: its sender stopped the round before it saw the other seat's
        messages from there on; it supersedes them (never a DISCLOSE: of two crossing stops seat 0's stands)."""
        seq = msg.seq
        if seq < 1 or msg.prev != self.msgs[seq - 1].hash:
            raise ProtocolError(
                Code.BROKEN_CHAIN, f"the disclose at sequence {seq} does not link to the previous message"
            )
        cut = self.msgs[seq:]
        if any(x.seat == msg.seat for x in cut):
            if cut[0].seat == msg.seat:
                raise ProtocolError(
                    Code.EQUIVOCATION, f"seat {msg.seat} signed two different messages for sequence {seq}"
                )
            raise ProtocolError(Code.REPLAY, f"the disclose at sequence {seq} ignores its sender's own later message")
        if any(x.type is MsgType.DISCLOSE and x.seat < msg.seat for x in cut):
            raise ProtocolError(Code.REPLAY, f"sequence {seq} is taken by seat {cut[0].seat}'s disclosure")
        # cheap before dear: what the state at ``seq`` decides is read off the line before it is rebuilt, so a
        # stop that cannot stand costs no replay (a cut never reaches behind the current round: the round's
        # closing disclosures would be in it, one of them the sender's own)
        if seq < self._round_from:
            raise ProtocolError(Code.REPLAY, f"the disclose at sequence {seq} lies in a round already verified")
        self._check_secrets(msg, seq)
        self._rebuild(seq)
        try:
            acc = self.accept_msg(msg, verify_signature=False)
        except ProtocolError:
            for x in cut:  # a stop that does not check cuts nothing: the line is put back as it was
                self.accept_msg(x, verify_signature=False)
            raise
        self.superseded.extend(cut)
        acc.superseded = cut
        return acc

    def _on_sealed(self, msg: Msg, acc: Accepted) -> None:
        t = msg.type
        kind = _KIND_OF.get(t)
        sl = self.sealed
        assert sl is not None
        if kind is None:
            raise ProtocolError(Code.UNEXPECTED_MESSAGE, f"a {t.label} in the sealed line")
        if t is MsgType.MOVE and len(msg.body) != 3:
            raise ProtocolError(Code.BAD_SHAPE, "a move of a sealed match is [action, state_hash, keys]")
        sent = Sent(msg.seat, kind, msg.body)
        if t is MsgType.DISCLOSE:
            self._check_secrets(msg)
        try:
            check_shape(sent, sl.dealer)
            if isinstance(sl, SealedObserver):
                sl.accept(sent)
            elif msg.seat == sl.seat:
                sl.accept_own(sent)
            elif not sl.receive(sent):
                # it crossed this seat's own stop (a check only its secrets make, its DISCLOSE not sent yet):
                # set aside, nobody's fault — the stop takes its place and supersedes it at its sender
                raise ProtocolError(Code.CROSSED_STOP, f"the {t.label} at sequence {msg.seq} crossed this seat's stop")
        except SealedFormatError as e:
            raise ProtocolError(Code.BAD_SHAPE, f"seat {msg.seat}'s {e.message}") from None
        except LineError as e:
            raise ProtocolError(e.code, e.message) from None
        # rounds the seat-side match ended since the last message (also by this seat's own move or step,
        # which its SealedSeat applied when it made the message)
        acc.round_results.extend(sl.match.history[self._rounds_told :])
        self._rounds_told = len(sl.match.history)
        if sl.round != self._round_no:  # this message closed a round verified clean: the next begins after it
            self._round_no = sl.round
            self._round_from = len(self.msgs) + 1

    def secrets_due(self, upto: int | None = None) -> int:
        """How many round secrets a DISCLOSE of the sealed line's current round holds: one for each deal attempt
        begun, that is each SHUFFLE of the round in the line (before ``upto``, for a stop that cuts the line
        back there; spec/sealed-line.md §2)."""
        return sum(x.type is MsgType.SHUFFLE for x in self.msgs[self._round_from : upto])

    def _check_secrets(self, msg: Msg, upto: int | None = None) -> None:
        """``bad_shape`` unless the DISCLOSE ``msg``, placed before ``upto``, holds :meth:`secrets_due` secrets."""
        due = self.secrets_due(upto)
        if len(msg.body[0]) != due:
            raise ProtocolError(
                Code.BAD_SHAPE,
                f"seat {msg.seat}'s disclose holds {len(msg.body[0])} round secrets, not one for each of the round's "
                f"{due} shuffles",
            )

    def sealed_round(self, seat: int, attempt: int | None = None) -> list[Msg]:
        """``seat``'s messages of the sealed line's current round (from its first SHUFFLE); with ``attempt``,
        only those of that deal attempt (its steps, moves and draw keys) and its DISCLOSE (the evidence of a
        sealed fault, spec/sealed-line.md §3: at most one attempt's, so it fits an ABORT however many redeals)."""
        out: list[Msg] = []
        n = -1  # the deal attempt: each SHUFFLE starts one
        for x in self.msgs[self._round_from :]:
            n += x.type is MsgType.SHUFFLE
            if x.seat != seat or not (x.type in SEALED_TYPES or x.type is MsgType.MOVE):
                continue
            if attempt is None or n == attempt or x.type is MsgType.DISCLOSE:
                out.append(x)
        return out

    def sealed_abort(self) -> tuple[Code, str, bytes] | None:
        """``(code, message, evidence)`` of the ABORT the line awaits after a round's verification proved a
        fault (spec/sealed-line.md §3), or None."""
        sl = self.sealed
        v = sl.verdict if sl is not None else None
        if v is None or v.fault is None or v.loser is None:
            return None
        accused = v.loser
        evidence = encode([x.frame for x in self.sealed_round(accused, v.attempt)])
        return v.fault.rule, f"seat {accused}: {v.fault.message}", evidence

    def _on_hello(self, msg: Msg, acc: Accepted) -> None:
        h = Hello.of(msg)
        if not h.room or len(h.room) > MAX_ROOM_CHARS:
            raise ProtocolError(Code.MALFORMED_MESSAGE, f"a room code is 1 to {MAX_ROOM_CHARS} characters")
        if h.rounds not in (6, 12):
            raise ProtocolError(Code.MALFORMED_MESSAGE, f"rounds are 6 or 12, not {h.rounds}")
        if h.move_time_s > MAX_MOVE_TIME_S:
            raise ProtocolError(Code.MALFORMED_MESSAGE, f"a move time is 0 to {MAX_MOVE_TIME_S} s, not {h.move_time_s}")
        if h.deck not in DECKS:
            raise ProtocolError(Code.MALFORMED_MESSAGE, f"the deck is sealed or shared, not {h.deck!r}")
        self.hellos[msg.seat] = h
        self.keys[msg.seat] = load_public(h.public_key)
        if msg.seat == 0:
            return
        h0 = self.hellos[0]
        assert h0 is not None
        diffs: list[tuple[str, object, object]] = []
        for name in _COMPARED:
            a, b = getattr(h0, name), getattr(h, name)
            if a != b:
                diffs.append((name, a, b))
        if diffs:
            names = {d[0] for d in diffs}
            code = (
                Code.ROOM_MISMATCH
                if "room" in names
                else Code.RELAY_MISMATCH
                if "relay_key" in names
                else Code.SETTINGS_MISMATCH
            )
            self.mismatch = diffs
            self.ending = Ending(None, code, describe_mismatch(diffs, None), None, msg.seq)
            return
        if h0.rules_version != RULES_VERSION:
            self.mismatch = [("rules_version", h0.rules_version, RULES_VERSION)]
            self.ending = Ending(
                None,
                Code.SETTINGS_MISMATCH,
                f"rules version {h0.rules_version}; this client plays {RULES_VERSION}",
                None,
                msg.seq,
            )
            return
        self.settings = Settings(rounds=h0.rounds, double_at_8=h0.double_at_8)
        self.sid = session_id(
            h0.room,
            self.settings,
            (h0.public_key, h.public_key),
            (h0.nonce, h.nonce),
            move_time_s=h0.move_time_s,
            relay_key=h0.relay_key,
            deck=h0.deck,
        )

    def _on_commit(self, msg: Msg, acc: Accepted) -> None:
        self.commitment = msg.body[0]

    def _on_value(self, msg: Msg, acc: Accepted) -> None:
        self.values[1] = msg.body[0]

    def _on_reveal(self, msg: Msg, acc: Accepted) -> None:
        value = msg.body[0]
        assert self.sid is not None and self.settings is not None and self.values[1] is not None
        if commitment_of(self.sid, value) != self.commitment:
            raise ProtocolError(Code.COMMITMENT_MISMATCH, "the revealed value does not open the creator's commitment")
        self.values[0] = value
        self.seed = match_seed(self.sid, value, self.values[1])
        source = SeededDeal(self.seed)
        self.first_dealer, _ = choose_first_dealer(source)
        if self.deck == "sealed":  # the seed picks the first dealer and nothing else: no card derives from it
            v = self.viewer
            h = self.hellos[v[0]] if v is not None else None
            if v is not None and h is not None and h.public_key == public_bytes(v[1]):
                secret = match_secret(v[1], self.sid, v[0])
                self.sealed = SealedSeat(self.settings, v[0], self.first_dealer, secret, sid=self.sid)
            else:
                self.sealed = SealedObserver(self.settings, self.first_dealer, sid=self.sid)
            self._round_from = len(self.msgs) + 1
            self._round_no = self.sealed.round
            self.match = self.sealed.match
            return
        self.match = Match(self.settings, source, self.first_dealer)
        acc.round_results.extend(self.match.history)  # a dealt hand yaku can end round 1 at once

    def _on_move(self, msg: Msg, acc: Accepted) -> None:
        m = self.match
        assert m is not None
        code, state_hash = msg.body
        try:
            action = from_code(code)
        except NotationError:
            raise ProtocolError(Code.ILLEGAL_MOVE, f"move code {code} is no action") from None
        before = len(m.history)
        trial = m.copy()  # the move on a copy first: a refused one leaves the match as it was, at no replay's cost
        try:
            trial.apply(action, msg.seat)
        except IllegalAction as e:
            raise ProtocolError(
                Code.ILLEGAL_MOVE, f"{action.text} by seat {msg.seat}: {e.message} ({e.rule})"
            ) from None
        if trial.state_hash() != state_hash:
            raise ProtocolError(
                Code.DESYNC, f"after {action.text} at sequence {msg.seq} the sender's state hash is not the state's"
            )
        m.apply(action, msg.seat)
        if len(m.history) > before:
            acc.round_results.extend(m.history[before:])

    def _on_result(self, msg: Msg, acc: Accepted) -> None:
        m = self.match
        assert m is not None
        p0, p1, winner, state_hash = msg.body
        if (p0, p1) != (m.points[0], m.points[1]) or winner != m.winner or state_hash != m.state_hash():
            raise ProtocolError(
                Code.BAD_RESULT,
                f"seat {msg.seat} signed the result {p0}–{p1} (winner {winner}); the match ended "
                f"{m.points[0]}–{m.points[1]} (winner {m.winner})",
            )
        self.results[msg.seat] = msg

    def _accept_end(self, msg: Msg) -> Accepted:
        t = msg.type
        n = len(self.msgs)
        if self.finished:
            raise ProtocolError(Code.UNEXPECTED_MESSAGE, f"a {t.label} after the match ended")
        if msg.seq > n:
            raise ProtocolError(Code.SEQUENCE_GAP, f"sequence {msg.seq} arrived while {n} was expected")
        if msg.seq < 1:
            raise ProtocolError(Code.REPLAY, f"sequence {msg.seq} is already taken by another message")
        if msg.prev != self.msgs[msg.seq - 1].hash:
            raise ProtocolError(
                Code.BROKEN_CHAIN, f"the {t.label} at sequence {msg.seq} does not link to the previous message"
            )
        cut = self.msgs[msg.seq :]
        if cut and cut[0].seat == msg.seat and self.sid is not None:
            raise ProtocolError(
                Code.EQUIVOCATION, f"seat {msg.seat} signed two different messages for sequence {msg.seq}"
            )
        if any(x.seat == msg.seat for x in cut):
            raise ProtocolError(
                Code.REPLAY, f"the {t.label} at sequence {msg.seq} ignores its sender's own later message"
            )
        if cut:  # the state the end message's sender saw: every message before it
            self._rebuild(msg.seq)
            self.superseded.extend(cut)
        acc = Accepted(msg, superseded=cut)
        other = 1 - msg.seat
        if t is MsgType.RESIGN:
            self.ending = Ending(t, Code.RESIGNED, f"seat {msg.seat} resigned", msg.seat, msg.seq)
        elif t is MsgType.TIMEOUT:
            blob, silent_frame = msg.body
            problem, cert_seat_connected, witness = self._certificate_problem(blob, silent_frame, msg.seat, msg.seq)
            if problem is None:
                code = Code.TIMEOUT if cert_seat_connected else Code.OPPONENT_LEFT
                how = "did not answer" if cert_seat_connected else "left and did not come back"
                text = f"seat {other} {how} within {self.move_time_s} s (witnessed by relay {witness})"
                self.ending = Ending(t, code, text, msg.seat, msg.seq, proven=True, witness=witness)
            else:
                text = f"seat {msg.seat} claims seat {other} did not answer in time"
                self.ending = Ending(t, Code.TIMEOUT, text, msg.seat, msg.seq, proven=False, reason=problem)
        else:
            code, message, evidence, evidence2 = msg.body
            problem = self._evidence_problem(code, evidence, evidence2, msg.seat, msg.seq)
            self.ending = Ending(
                t, code, message, msg.seat, msg.seq, evidence, proven=problem is None, reason=problem or ""
            )
        self.msgs.append(msg)
        return acc

    # -- proofs: a certificate, evidence ---------------------------------

    def certificate_problem(self, blob: bytes, silent_frame: bytes, claimer: int) -> str | None:
        """Why a TIMEOUT by ``claimer`` carrying ``blob`` (and ``silent_frame``), sent now (at the next
        sequence number), would not be witnessed; None when it would be."""
        return self._certificate_problem(blob, silent_frame, claimer, len(self.msgs))[0]

    def silent_frame_needed(self, blob: bytes, claimer: int) -> bytes | None:
        """The hash of the silent seat's last frame the certificate names, when it is neither that seat's
        last message nor the RESEND for the next sequence number (the claimer must then cite the frame)."""
        try:
            cert = open_certificate(blob)
        except CertificateError:
            return None
        silent = 1 - claimer
        named = cert.last_frame[silent]
        return None if named in self._silent_last_ok(silent, len(self.msgs)) else named

    def _silent_last_ok(self, silent: int, seq: int) -> set[bytes]:
        """What the witness may name as the awaited seat's last frame, with no frame cited (§7.3, step 6): a
        message of it in the line — its last, or an earlier one (an honest seat's last witnessed frame is always
        its newest message, every other frame going with the control flag, §5.2; an older one means it sent its
        later messages flagged to hide them from the witness) — or empty when it has none, or the RESEND for
        ``seq`` (it is silent there, asking for the line)."""
        ok = {m.hash for m in self.msgs[:seq] if m.seat == silent} or {b""}
        if self.sid is not None:
            ok.add(msg_hash(resend_frame(self.sid, seq)))
        return ok

    def _junk(self, frame: bytes, seat: int, seq: int) -> bool:
        """True when ``frame`` is neither ``RESEND(match id, seq)`` nor a message validly signed with ``seat``'s
        key (of any match: after a replayed HELLO an honest seat may be in another session than the claimer's
        line, and its frames there are not junk) unless :meth:`_off_the_line` shows it can never continue the
        line: something only a broken or cheating client sends, which cannot have moved the line. Any other
        RESEND is junk here: it was the seat's last *witnessed* frame, so the seat sent it without the control
        flag, which an honest client never does (spec/protocol.md §7.3). So is a message of the *other* seat:
        an honest client sends the other seat's messages (in answers) only with the flag."""
        if parse_resend(frame) is not None:
            return self.sid is None or frame != resend_frame(self.sid, seq)
        try:
            m = parse(frame)
        except ProtocolError:
            return True
        key = self.keys[seat]
        if m.seat != seat or key is None:
            return True
        try:
            verify(key, m)
        except ProtocolError:
            return True
        return self._off_the_line(m, seat, seq)

    def _off_the_line(self, m: Msg, seat: int, seq: int) -> bool:
        """A message of ``seat`` (its signature checked) that its own signatures in the line show can never
        continue it, whatever the claimer did: of another match id once ``seat`` signed a message of this
        one after the HELLOs (an honest seat is in one session of a room), or an end message behind the line
        whose cut would take away a message ``seat`` signed itself (an honest seat signs nothing after its own
        end, and an end cuts only the other seat's messages), or a message the other seat's stop took the place
        of (it follows the same message as that stop). spec/protocol.md §7.3, step 6."""
        if m.match != self.sid:
            return any(x.seat == seat and x.seq >= 2 for x in self.msgs[:seq])
        if m.type in END_TYPES and m.seq < seq:
            return any(x.seat == seat for x in self.msgs[m.seq : seq])
        if m.seq < seq:
            # a message the claimer's stop set aside: the line holds the claimer's DISCLOSE at its place, after
            # the same message; its sender, sent that stop (the certificate lists it), discloses or is silent
            held = self.msgs[m.seq]
            if m.type is MsgType.DISCLOSE and m.seat < held.seat:
                return False  # of two stops that cross, seat 0's stands (spec/sealed-line.md §2): it is no junk
            return held.seat != seat and held.type is MsgType.DISCLOSE and held.prev == m.prev
        return False

    def _certificate_problem(
        self, blob: bytes, silent_frame: bytes, claimer: int, seq: int
    ) -> tuple[str | None, bool, str | None]:
        """``(problem, connected, witness)`` for a TIMEOUT at ``seq`` (the line holds ``seq`` messages)."""
        silent = 1 - claimer
        mt, rk = self.move_time_s, self.relay_key
        if self.sid is None or mt is None or rk is None:
            return "no match is bound yet (the HELLOs are not both in)", False, None
        if mt == 0:
            return "this match has no clock (move time none)", False, None
        if rk == ZERO_HASH:
            return "this match has no relay to witness time", False, None
        if not blob:
            return "no certificate", False, None
        try:
            cert = open_certificate(blob)
        except CertificateError as e:
            return e.message, False, None
        if cert.relay_key != rk:
            return f"the certificate is signed by relay {cert.witness}, not the relay both HELLOs bound", False, None
        h0 = self.hellos[0]
        assert h0 is not None
        if cert.room != h0.room:
            return f"the certificate is for room {cert.room!r}, not {h0.room!r}", False, None
        if cert.silent_seat != silent:
            return f"the certificate says seat {cert.silent_seat} is silent, not seat {silent}", False, None
        for seat in (silent, claimer):
            hello = self.hellos[seat]
            assert hello is not None
            if cert.seat_keys[seat] != hello.public_key:
                held = fingerprint(cert.seat_keys[seat]) if cert.seat_keys[seat] else "no proven key"
                return (
                    f"the relay's seat {seat} was held by {held}, not the key seat {seat}'s HELLO binds",
                    False,
                    None,
                )
        exp = self.expected()
        if exp is None or exp[0] != silent:
            return f"the line does not wait for seat {silent}", False, None
        for seat in (claimer, silent):
            if seat == silent:
                ok = self._silent_last_ok(silent, seq)
            else:
                last = self.last_of(seat)
                ok = {last.hash if last is not None else b""}
            named = cert.last_frame[seat]
            if seat == silent and silent_frame:
                if msg_hash(silent_frame) != named:
                    return "the cited frame is not the silent seat's last frame the certificate names", False, None
                if not self._junk(silent_frame, silent, seq):
                    return "the cited frame is a message or a request of the silent seat, not junk", False, None
                continue
            if named not in ok:
                return (
                    f"the relay's last frame from seat {seat} is not its last message (stale or crossed)",
                    False,
                    None,
                )
        line = self.msgs[:seq]
        since = max((i for i, m in enumerate(line) if m.seat == silent), default=-1)
        for m in line[since + 1 :]:
            if m.hash not in cert.recent:
                return (
                    f"the relay lists no frame of seat {claimer}'s message {m.seq}: the silent seat may never have"
                    " got it",
                    False,
                    None,
                )
        if cert.silent_ms < mt * 1000:
            return f"seat {silent} was silent {cert.silent_ms} ms, less than the move time ({mt} s)", False, None
        return None, cert.connected, cert.witness

    def evidence_problem(self, code: str, evidence: bytes, evidence2: bytes, aborter: int) -> str | None:
        """Why an ABORT by ``aborter`` naming ``code``, sent now (at the next sequence number), would not
        prove the accused's fault; None when it would."""
        return self._evidence_problem(code, evidence, evidence2, aborter, len(self.msgs))

    def _evidence_problem(self, code: str, evidence: bytes, evidence2: bytes, aborter: int, seq: int) -> str | None:
        """Why an ABORT by ``aborter`` at ``seq`` (the line holds ``seq`` messages) does not prove the
        accused's fault; None when it does."""
        accused = 1 - aborter
        key = self.keys[accused]
        if self.sid is None or key is None:
            return "no match is bound yet"
        if code in SEALED_CODES:  # a fault the round's verification names: the line itself proves it
            problem = self._sealed_evidence_problem(code, evidence, accused, seq)
            if problem is None or code not in PROVABLE:
                return problem
        if code not in PROVABLE:
            return f"{code} is not a fault a signed message can prove"
        gone = {x.hash for x in self.superseded}
        signed: list[Msg] = []
        for raw in (evidence, evidence2) if code == Code.EQUIVOCATION else (evidence,):
            try:
                e = parse(raw)
                if e.seat != accused:
                    return f"the evidence is signed for seat {e.seat}, not the accused seat {accused}"
                verify(key, e)
            except ProtocolError as err:
                return f"the evidence is not a message of seat {accused} ({err.code})"
            if e.match != self.sid:
                return "the evidence belongs to another match"
            if e.type is MsgType.ENDED:  # it acknowledges an end and is never part of a line (§7.4)
                return "an ENDED is never evidence"
            if e.hash in gone:  # the line set it aside: its signer answered the line as it then stood (§6.4)
                return f"the {e.type.label} at sequence {e.seq} is a message the line superseded"
            signed.append(e)
        if code == "equivocation":
            a, b = signed
            if a.seq != b.seq or a.frame == b.frame:
                return "the two messages are not different messages for one sequence number"
            if a.prev != b.prev:
                # each answers another line (a stop or an end cut the line between them, and its sender answered
                # the line as it then stood): a fork signs two messages after one same message (spec §6.2)
                return "the two messages follow different messages: they answer two lines, not one"
            return None
        (e,) = signed
        local = body_problem(e)  # a body off its schema: the one message proves it, wherever it stands
        if local is not None:
            if e.type in END_TYPES:
                return "an end message off its schema is no message at all (malformed_message)"
            return None if local[0] == code else f"the evidence fails with {local[0]}, not {code}"
        if e.seq > seq:
            return "the evidence lies ahead of the line"
        if e.seq < seq and self.msgs[e.seq].frame == e.frame:
            return "the evidence is a message of the line"
        r = self.state_before(e.seq, observer=True)  # the auditor's judge, whoever asks: one verdict
        try:
            r.accept_msg(e, verify_signature=False)
        except ProtocolError as err:
            if err.code == code:
                return None
            return f"the evidence fails with {err.code}, not {code}"
        return "the evidence is a valid message"

    def _sealed_evidence_problem(self, code: str, evidence: bytes, accused: int, seq: int) -> str | None:
        """A sealed fault is proven by the line itself: the round's two disclosures are in it and its
        verification names ``code`` against the accused; the evidence is the accused's messages of that round."""
        r = self if seq >= len(self.msgs) else self.state_before(seq, observer=True)
        sl = r.sealed
        if sl is None:
            return "this is not a sealed match"
        v = sl.verdict
        if v is None or v.fault is None:
            return "no round of the line is verified with a fault"
        if v.loser != accused:
            return f"the round's verification names seat {v.loser}, not the accused seat {accused}"
        if v.fault.rule != code:
            return f"the round's verification names {v.fault.rule}, not {code}"
        try:
            frames = decode(evidence)
        except FrameError as e:
            return f"the evidence is not a list of messages ({e.code})"
        if frames != [x.frame for x in r.sealed_round(accused, v.attempt)]:
            return "the evidence is not the accused's messages of the verified attempt and its disclosure"
        return None

    def _rebuild(self, n: int) -> None:
        """Go back to the state after the first ``n`` messages (they were all verified before)."""
        frames = [x.frame for x in self.msgs[:n]]
        self._reset()
        for f in frames:
            self.accept(f, verify_signature=False)

    def state_before(self, seq: int, *, observer: bool = False) -> Referee:
        """A new referee in the state after messages ``0 … seq-1`` of this line; with ``observer``, the
        auditor's (no seat's secrets: a seat's own message is then checked like anyone's, never re-made)."""
        r = Referee(None if observer else self.viewer)
        for x in self.msgs[:seq]:
            r.accept_msg(x, verify_signature=False)
        return r
