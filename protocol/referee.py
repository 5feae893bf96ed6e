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

The referee is a facade over the objects that keep the line's state, each with its own invariants:
:class:`~koikoi.protocol.handshake.Handshake` (what the first five messages bind),
:class:`~koikoi.protocol.chain.Chain` (the messages in order, their links, what the line set aside),
:class:`~koikoi.protocol.play.Play` (the match and the sealed line's rounds, the results) and the
:class:`~koikoi.protocol.ending.Ending`; the end messages' proofs are judged by
:class:`~koikoi.protocol.timeout_check.TimeoutCheck` and :class:`~koikoi.protocol.abort_check.AbortCheck`.
"""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..engine.deal import SeededDeal
from ..engine.match import STARTING_POINTS, Match, RoundResult, Settings
from .abort_check import SEALED_CODES, AbortCheck
from .chain import Accepted, Chain, Disposition, Judgement
from .codes import Code
from .ending import STATUSES, Ending, EndKind, Outcome, outcome
from .errors import PROVABLE, ProtocolError
from .handshake import HANDSHAKE_MESSAGES, Handshake, Hello, Mismatch, describe_mismatch
from .messages import END_TYPES, Msg, MsgType, body_problem, parse, public_bytes, verify
from .play import Play, Viewer
from .sealed_line import RevealedDeals, SealedObserver, SealedSeat
from .timeout_check import TimeoutCheck

__all__ = [
    "SEALED_CODES",
    "STATUSES",
    "Accepted",
    "Disposition",
    "EndKind",
    "Ending",
    "Hello",
    "Judgement",
    "Outcome",
    "Referee",
    "Viewer",
    "describe_mismatch",
]


class Referee:
    """The state of one match's line of messages, verified message by message."""

    viewer: Viewer | None
    chain: Chain
    handshake: Handshake
    play: Play
    ending: Ending | None

    def __init__(self, viewer: Viewer | None = None) -> None:
        """``viewer``: the seat this referee plays for and its key, for a sealed match (its seat-side match
        and secrets); without one a sealed line is followed as an observer (the auditor)."""
        self.viewer = viewer
        self.chain = Chain()
        self._reset()

    def _reset(self) -> None:
        """The state before any message (the messages the line set aside stay set aside)."""
        self.chain.clear()
        self.handshake = Handshake()
        self.play = Play(self.chain)
        self.ending = None
        self._timeouts = TimeoutCheck(self.handshake, self.chain, self.expected)
        self._aborts = AbortCheck(self.handshake, self.chain, self)

    # -- the state, by its owners ----------------------------------------

    @property
    def msgs(self) -> list[Msg]:
        return self.chain.msgs

    @property
    def superseded(self) -> list[Msg]:
        return self.chain.superseded

    @property
    def hellos(self) -> list[Hello | None]:
        return self.handshake.hellos

    @property
    def keys(self) -> list[Ed25519PublicKey | None]:
        return self.handshake.keys

    @property
    def sid(self) -> bytes | None:
        return self.handshake.sid

    @property
    def settings(self) -> Settings | None:
        return self.handshake.settings

    @property
    def commitment(self) -> bytes | None:
        return self.handshake.commitment

    @property
    def values(self) -> list[bytes | None]:
        return self.handshake.values

    @property
    def seed(self) -> bytes | None:
        return self.handshake.seed

    @property
    def first_dealer(self) -> int | None:
        return self.handshake.first_dealer

    @property
    def mismatch(self) -> list[Mismatch]:
        return self.handshake.mismatch

    @property
    def match(self) -> Match | None:
        return self.play.match

    @property
    def sealed(self) -> SealedSeat | SealedObserver | None:
        return self.play.sealed

    @property
    def results(self) -> list[Msg | None]:
        return self.play.results

    @property
    def _round_from(self) -> int:
        return self.play.round_from

    # -- queries ---------------------------------------------------------

    @property
    def next_seq(self) -> int:
        return self.chain.next_seq

    @property
    def head_hash(self) -> bytes:
        return self.chain.head_hash

    @property
    def complete(self) -> bool:
        return self.play.complete

    @property
    def finished(self) -> bool:
        """True once nothing more goes in the line (complete, or ended early)."""
        return self.ending is not None or self.complete

    @property
    def move_time_s(self) -> int | None:
        """The bound move time (None until both HELLOs agreed; 0: no clock)."""
        return self.handshake.move_time_s

    @property
    def deck(self) -> str | None:
        """The bound deck, ``"sealed"`` or ``"shared"`` (None until both HELLOs agreed)."""
        return self.handshake.deck

    @property
    def relay_key(self) -> bytes | None:
        """The bound relay key (None until both HELLOs agreed)."""
        return self.handshake.relay_key

    @property
    def watchers(self) -> bool | None:
        """Whether watchers may follow the match, as bound (None until both HELLOs agreed)."""
        return self.handshake.watchers

    @property
    def publish(self) -> tuple[bool, bool] | None:
        """Each seat's consent to a public archive, the creator's first (None until both HELLOs are in)."""
        return self.handshake.publish

    def expected(self) -> tuple[int, MsgType] | None:
        """Who sends the next line message, and of what type (None when the line is finished)."""
        if self.finished:
            return None
        n = len(self.chain.msgs)
        if n < HANDSHAKE_MESSAGES:
            return self.handshake.expected(n)
        return self.play.expected()

    def last_of(self, seat: int) -> Msg | None:
        """``seat``'s last message in the line."""
        return self.chain.last_of(seat)

    @property
    def verified_history(self) -> list[RoundResult]:
        """The rounds that count: in shared mode every round the engine ended; in sealed mode only the rounds
        whose two disclosures verified clean (spec/sealed.md §9: no round is scored before its verification)."""
        return self.play.verified_history

    def outcome(self) -> Outcome | None:
        """The match's end, once there is one: one verdict for the seats and the auditor alike. An early end
        (RESIGN, TIMEOUT, ABORT) always names a loser and the other seat wins, whatever the rounds played
        said; the points are those of the rounds that count (:attr:`verified_history`)."""
        counted = self.verified_history
        points = counted[-1].points if counted else (STARTING_POINTS, STARTING_POINTS)
        m = self.match
        played_out = (m.winner, len(self.msgs) - 1) if self.complete and m is not None else None
        return outcome(self.ending, points, played_out=played_out, bound=self.sid is not None)

    # -- verification ----------------------------------------------------

    def signer_key(self, msg: Msg) -> Ed25519PublicKey:
        """The key ``msg`` must verify with (a HELLO's own; else its seat's, from the line's HELLO)."""
        return self.handshake.signer_key(msg)

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
        matched = self.sid is not None
        bound = matched and (self.viewer is None or msg.seat != self.viewer[0])
        placed = self.chain.placed(msg, matched=matched, bound=bound, cuts=self.cuts(msg))
        if placed is not None:
            return placed
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
        if self.cuts(msg) and msg.seq < len(self.msgs):
            return self._accept_stop_cut(msg)
        self.chain.check_next(msg, matched=self.sid is not None)
        # 6. turn
        exp = self.expected()
        assert exp is not None
        seat, want_t = exp
        if self.cuts(msg) and self.play.stop_allowed(msg.seat):
            seat, want_t = msg.seat, t  # a stop: a seat may disclose the round at any time (spec/sealed-line.md §2)
        if msg.seat != seat:
            raise ProtocolError(
                Code.OUT_OF_TURN, f"seat {msg.seat} sent a {t.label} at sequence {msg.seq}; it is seat {seat}'s turn"
            )
        if t is not want_t:
            raise ProtocolError(Code.UNEXPECTED_MESSAGE, f"a {t.label} at sequence {msg.seq}; a {want_t.label} is due")
        # 7. content
        acc = Accepted(msg)
        self._apply(msg, acc)
        self.chain.append(msg)
        return acc

    def _apply(self, msg: Msg, acc: Accepted) -> None:
        """Step 7, a message's content, by the object it concerns: the handshake's, or the play's."""
        hs = self.handshake
        t = msg.type
        if t is MsgType.HELLO:
            mismatch = hs.on_hello(msg)
            if mismatch is not None:
                self.ending = Ending(EndKind.MISMATCH, mismatch[0], mismatch[1], None, msg.seq)
        elif t is MsgType.COMMIT:
            hs.on_commit(msg)
        elif t is MsgType.VALUE:
            hs.on_value(msg)
        elif t is MsgType.REVEAL:
            source = hs.on_reveal(msg)
            assert hs.settings is not None and hs.first_dealer is not None and hs.sid is not None
            v = self.viewer
            h = hs.hellos[v[0]] if v is not None else None
            own = v is not None and h is not None and h.public_key == public_bytes(v[1])
            self.play.start(
                hs.settings, source, hs.first_dealer, hs.sid, acc, sealed=hs.deck == "sealed", seat=v if own else None
            )
        else:
            self.play.apply(msg, acc)

    # -- the sealed line (spec/sealed-line.md) -------------------------------

    def deal_source(self) -> SeededDeal | RevealedDeals | None:
        """Where the match's deals come from, for a full :class:`Match` replaying the line (``koikoi replay``):
        the shared seed; in sealed mode the deals the disclosures revealed (an observer's referee, the
        auditor's); None before the reveal or for a seat's own referee in sealed mode."""
        return self.play.deal_source(self.seed)

    def cuts(self, msg: Msg) -> bool:
        """True when ``msg`` may cut the line back like an end message: a sealed match's DISCLOSE (a stop
        crosses the other seat's messages in transit)."""
        return self.play.cuts(msg)

    def _accept_stop_cut(self, msg: Msg) -> Accepted:
        """A DISCLOSE for a taken sequence number: its sender stopped the round before it saw the other seat's
        messages from there on; it supersedes them (never a DISCLOSE: of two crossing stops seat 0's stands)."""
        seq = msg.seq
        cut = self.chain.stop_cut(msg)
        # cheap before dear: what the state at ``seq`` decides is read off the line before it is rebuilt, so a
        # stop that cannot stand costs no replay (a cut never reaches behind the current round: the round's
        # closing disclosures would be in it, one of them the sender's own)
        if seq < self.play.round_from:
            raise ProtocolError(Code.REPLAY, f"the disclose at sequence {seq} lies in a round already verified")
        self.play.check_secrets(msg, seq)
        self._rebuild(seq)
        try:
            acc = self.accept_msg(msg, verify_signature=False)
        except ProtocolError:
            for x in cut:  # a stop that does not check cuts nothing: the line is put back as it was
                self.accept_msg(x, verify_signature=False)
            raise
        self.chain.set_aside(cut)
        acc.superseded = cut
        return acc

    def secrets_due(self, upto: int | None = None) -> int:
        """How many round secrets a DISCLOSE of the sealed line's current round holds: one for each deal attempt
        begun, that is each SHUFFLE of the round in the line (before ``upto``, for a stop that cuts the line
        back there; spec/sealed-line.md §2)."""
        return self.play.secrets_due(upto)

    def sealed_round(self, seat: int, attempt: int | None = None) -> list[Msg]:
        """``seat``'s messages of the sealed line's current round (from its first SHUFFLE); with ``attempt``,
        only those of that deal attempt and its DISCLOSE (:meth:`Play.sealed_round`)."""
        return self.play.sealed_round(seat, attempt)

    def sealed_abort(self) -> tuple[Code, str, bytes] | None:
        """``(code, message, evidence)`` of the ABORT the line awaits after a round's verification proved a
        fault (spec/sealed-line.md §3), or None."""
        return self.play.sealed_abort()

    # -- the end messages --------------------------------------------------

    def _accept_end(self, msg: Msg) -> Accepted:
        t = msg.type
        if self.finished:
            raise ProtocolError(Code.UNEXPECTED_MESSAGE, f"a {t.label} after the match ended")
        cut = self.chain.end_cut(msg, matched=self.sid is not None)
        if cut:  # the state the end message's sender saw: every message before it
            self._rebuild(msg.seq)
            self.chain.set_aside(cut)
        acc = Accepted(msg, superseded=cut)
        other = 1 - msg.seat
        kind = EndKind.of(t)
        if kind is EndKind.RESIGN:
            self.ending = Ending(kind, Code.RESIGNED, f"seat {msg.seat} resigned", msg.seat, msg.seq)
        elif kind is EndKind.TIMEOUT:
            blob, silent_frame = msg.body
            problem, cert_seat_connected, witness = self._timeouts.problem(blob, silent_frame, msg.seat, msg.seq)
            if problem is None:
                code = Code.TIMEOUT if cert_seat_connected else Code.OPPONENT_LEFT
                how = "did not answer" if cert_seat_connected else "left and did not come back"
                text = f"seat {other} {how} within {self.move_time_s} s (witnessed by relay {witness})"
                self.ending = Ending(kind, code, text, msg.seat, msg.seq, proven=True, witness=witness)
            else:
                text = f"seat {msg.seat} claims seat {other} did not answer in time"
                self.ending = Ending(kind, Code.TIMEOUT, text, msg.seat, msg.seq, proven=False, reason=problem)
        else:
            code, message, evidence, evidence2 = msg.body
            problem = self._aborts.problem(code, evidence, evidence2, msg.seat, msg.seq)
            self.ending = Ending(
                kind, code, message, msg.seat, msg.seq, evidence, proven=problem is None, reason=problem or ""
            )
        self.chain.append(msg)
        return acc

    def certificate_problem(self, blob: bytes, silent_frame: bytes, claimer: int) -> str | None:
        """Why a TIMEOUT by ``claimer`` carrying ``blob`` (and ``silent_frame``), sent now (at the next
        sequence number), would not be witnessed; None when it would be."""
        return self._timeouts.problem(blob, silent_frame, claimer, len(self.msgs))[0]

    def silent_frame_needed(self, blob: bytes, claimer: int) -> bytes | None:
        """The hash of the silent seat's last frame the certificate names, when it is neither that seat's
        last message nor the RESEND for the next sequence number (the claimer must then cite the frame)."""
        return self._timeouts.silent_frame_needed(blob, claimer)

    def evidence_problem(self, code: str, evidence: bytes, evidence2: bytes, aborter: int) -> str | None:
        """Why an ABORT by ``aborter`` naming ``code``, sent now (at the next sequence number), would not
        prove the accused's fault; None when it would."""
        return self._aborts.problem(code, evidence, evidence2, aborter, len(self.msgs))

    # -- the line again ----------------------------------------------------

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
