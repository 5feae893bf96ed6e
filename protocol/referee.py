"""The referee: verifies a match's one line of signed messages, for either seat.

Both the players' sessions and the auditor feed every message through a
:class:`Referee`. It checks, in this order (see spec/protocol.md):

1. the frame (canonical msgpack; ``framing`` codes) and the envelope's shape
   (``unsupported_version``, ``unknown_type``, ``malformed_message``);
2. the signature, with the signing seat's key (``bad_signature``);
3. the match id (``replay``; ``commitment_mismatch`` for a COMMIT);
4. the sequence number (``replay`` when taken, ``sequence_gap`` when ahead);
5. the link to the previous message (``broken_chain``);
6. whose message is due and of what type (``out_of_turn``, ``unexpected_message``);
7. the content: settings (``settings_mismatch`` ends the match), the reveal
   (``commitment_mismatch``), the move's legality (``illegal_move``) and state
   hash (``desync``), the result (``bad_result``).

Nothing is applied unless every check passes (a failed move leaves the state
as it was). The engine decides whose message comes next, so the messages form
one line. RESIGN, TIMEOUT and ABORT (the *end* messages) may come from either
seat at any time, and may cut the line back to the message their sender last
saw, superseding messages of the *other* seat that crossed them in transit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..engine.actions import NotationError, from_code
from ..engine.deal import SeededDeal
from ..engine.match import STARTING_POINTS, IllegalAction, Match, RoundResult, Settings
from ..engine.selfplay import choose_first_dealer
from .errors import ATTRIBUTABLE, ProtocolError
from .messages import (
    END_TYPES,
    MAX_ROOM_CHARS,
    RULES_VERSION,
    ZERO_HASH,
    Msg,
    MsgType,
    commitment_of,
    load_public,
    match_seed,
    parse,
    session_id,
    verify,
)

__all__ = ["Accepted", "Ending", "Hello", "Outcome", "Referee", "describe_mismatch"]


@dataclass(frozen=True, slots=True)
class Hello:
    rules_version: int
    room: str
    rounds: int
    double_at_8: bool
    public_key: bytes
    nonce: bytes

    @classmethod
    def of(cls, msg: Msg) -> Hello:
        rv, room, rounds, dbl, pk, nonce = msg.body
        return cls(rv, room, rounds, dbl, pk, nonce)


@dataclass(frozen=True, slots=True)
class Ending:
    """How the line ended early. ``kind`` is the end message's type (None: settings mismatch)."""

    kind: MsgType | None
    code: str
    message: str
    by: int | None
    seq: int
    evidence: bytes = b""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a match as both transcripts show it.

    ``status`` is ``complete`` (played out, the result countersigned by both)
    or ``aborted`` (``code`` says why and ``by`` who ended it).
    ``evidence_verified`` is set for an ABORT: whether its evidence reproduces the
    named flaw.
    """

    status: str
    code: str | None
    message: str
    by: int | None
    winner: int | None
    points: tuple[int, int]
    seq: int | None
    evidence_verified: bool | None = None


@dataclass(slots=True)
class Accepted:
    msg: Msg
    round_results: list[RoundResult] = field(default_factory=list)
    superseded: list[Msg] = field(default_factory=list)


_FIELD_LABELS = {
    "rules_version": "rules version",
    "room": "room",
    "rounds": "rounds",
    "double_at_8": "doubling at 8+",
}


def _show(v: object) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    return str(v)


def describe_mismatch(diffs: list[tuple[str, object, object]], mine: int | None) -> str:
    """``rounds: you 6, opponent 12`` from seat ``mine``'s side (``creator …, joiner …`` when None)."""
    parts = []
    for name, v0, v1 in diffs:
        label = _FIELD_LABELS.get(name, name)
        if mine is None:
            parts.append(f"{label}: creator {_show(v0)}, joiner {_show(v1)}")
        else:
            you, opp = (v0, v1) if mine == 0 else (v1, v0)
            parts.append(f"{label}: you {_show(you)}, opponent {_show(opp)}")
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

    def __init__(self) -> None:
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
        if not m.is_over:
            return m.to_move, MsgType.MOVE
        if self.results[0] is None:
            return 0, MsgType.RESULT
        return 1, MsgType.RESULT

    def outcome(self) -> Outcome | None:
        """The match's end, once there is one."""
        m = self.match
        points = (m.points[0], m.points[1]) if m is not None else (STARTING_POINTS, STARTING_POINTS)
        over = m is not None and m.is_over
        if self.complete and m is not None:
            return Outcome(
                "complete",
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
        verified: bool | None = None
        if e.kind is None:
            winner = None
        elif over:
            winner = m.winner if m is not None else None
        elif e.kind is MsgType.RESIGN:
            winner = 1 - (e.by or 0)
        elif e.kind is MsgType.TIMEOUT:
            winner = e.by
        else:
            verified = self.check_evidence()
            winner = e.by if verified and e.code in ATTRIBUTABLE else None
        if e.kind is MsgType.ABORT and verified is None:
            verified = self.check_evidence()
        return Outcome("aborted", e.code, e.message, e.by, winner, points, e.seq, verified)

    # -- verification ----------------------------------------------------

    def accept(self, frame: bytes, *, verify_signature: bool = True) -> Accepted:
        """Verify ``frame`` as the next message and apply it, or raise :class:`ProtocolError`."""
        msg = parse(frame)
        try:
            return self._accept(msg, verify_signature)
        except ProtocolError as e:
            if e.seq is None:
                e.seq = msg.seq
            raise

    def _accept(self, msg: Msg, verify_signature: bool) -> Accepted:
        t = msg.type
        # 2. signature
        key: Ed25519PublicKey | None
        if t is MsgType.HELLO:
            key = load_public(msg.body[4])
        else:
            key = self.keys[msg.seat]
        if verify_signature and key is not None:
            verify(key, msg)
        # 3. match id
        want = self.sid if self.sid is not None else b""
        if msg.match != want:
            if t is MsgType.COMMIT:
                raise ProtocolError("commitment_mismatch", "the commitment is bound to another session")
            raise ProtocolError("replay", f"the {t.label} at sequence {msg.seq} belongs to another match")
        n = len(self.msgs)
        # 4/5. sequence and link
        if t in END_TYPES:
            return self._accept_end(msg, key)
        if self.finished:
            raise ProtocolError("unexpected_message", f"a {t.label} after the match ended")
        if msg.seq < n:
            raise ProtocolError("replay", f"sequence {msg.seq} is already taken by another message")
        if msg.seq > n:
            raise ProtocolError("sequence_gap", f"sequence {msg.seq} arrived while {n} was expected")
        if msg.prev != self.head_hash:
            raise ProtocolError(
                "broken_chain", f"the {t.label} at sequence {msg.seq} does not link to the previous message"
            )
        # 6. turn
        exp = self.expected()
        assert exp is not None
        seat, want_t = exp
        if msg.seat != seat:
            raise ProtocolError(
                "out_of_turn", f"seat {msg.seat} sent a {t.label} at sequence {msg.seq}; it is seat {seat}'s turn"
            )
        if t is not want_t:
            raise ProtocolError("unexpected_message", f"a {t.label} at sequence {msg.seq}; a {want_t.label} is due")
        if key is None:  # cannot happen: the seat's HELLO came first
            raise ProtocolError("unexpected_message", "a message before its sender's hello")
        # 7. content
        acc = Accepted(msg)
        getattr(self, "_on_" + t.label)(msg, acc)
        self.msgs.append(msg)
        return acc

    def _on_hello(self, msg: Msg, acc: Accepted) -> None:
        h = Hello.of(msg)
        if not h.room or len(h.room) > MAX_ROOM_CHARS:
            raise ProtocolError("malformed_message", f"a room code is 1 to {MAX_ROOM_CHARS} characters")
        if h.rounds not in (6, 12):
            raise ProtocolError("malformed_message", f"rounds are 6 or 12, not {h.rounds}")
        self.hellos[msg.seat] = h
        self.keys[msg.seat] = load_public(h.public_key)
        if msg.seat == 0:
            return
        h0 = self.hellos[0]
        assert h0 is not None
        diffs: list[tuple[str, object, object]] = []
        for name in ("room", "rules_version", "rounds", "double_at_8"):
            a, b = getattr(h0, name), getattr(h, name)
            if a != b:
                diffs.append((name, a, b))
        if diffs:
            self.mismatch = diffs
            self.ending = Ending(None, "settings_mismatch", describe_mismatch(diffs, None), None, msg.seq)
            return
        if h0.rules_version != RULES_VERSION:
            self.mismatch = [("rules_version", h0.rules_version, RULES_VERSION)]
            self.ending = Ending(
                None,
                "settings_mismatch",
                f"rules version {h0.rules_version}; this client plays {RULES_VERSION}",
                None,
                msg.seq,
            )
            return
        self.settings = Settings(rounds=h0.rounds, double_at_8=h0.double_at_8)
        self.sid = session_id(h0.room, self.settings, (h0.public_key, h.public_key), (h0.nonce, h.nonce))

    def _on_commit(self, msg: Msg, acc: Accepted) -> None:
        self.commitment = msg.body[0]

    def _on_value(self, msg: Msg, acc: Accepted) -> None:
        self.values[1] = msg.body[0]

    def _on_reveal(self, msg: Msg, acc: Accepted) -> None:
        value = msg.body[0]
        assert self.sid is not None and self.settings is not None and self.values[1] is not None
        if commitment_of(self.sid, value) != self.commitment:
            raise ProtocolError("commitment_mismatch", "the revealed value does not open the creator's commitment")
        self.values[0] = value
        self.seed = match_seed(self.sid, value, self.values[1])
        source = SeededDeal(self.seed)
        self.first_dealer, _ = choose_first_dealer(source)
        self.match = Match(self.settings, source, self.first_dealer)
        acc.round_results.extend(self.match.history)  # a dealt hand yaku can end round 1 at once

    def _on_move(self, msg: Msg, acc: Accepted) -> None:
        m = self.match
        assert m is not None
        code, state_hash = msg.body
        try:
            action = from_code(code)
        except NotationError:
            raise ProtocolError("illegal_move", f"move code {code} is no action") from None
        before = len(m.history)
        try:
            m.apply(action, msg.seat)
        except IllegalAction as e:
            raise ProtocolError("illegal_move", f"{action.text} by seat {msg.seat}: {e.message} ({e.rule})") from None
        if m.state_hash() != state_hash:
            self._rebuild(len(self.msgs))  # undo the move
            raise ProtocolError(
                "desync", f"after {action.text} at sequence {msg.seq} the sender's state hash is not the state's"
            )
        if len(m.history) > before:
            acc.round_results.extend(m.history[before:])

    def _on_result(self, msg: Msg, acc: Accepted) -> None:
        m = self.match
        assert m is not None
        p0, p1, winner, state_hash = msg.body
        if (p0, p1) != (m.points[0], m.points[1]) or winner != m.winner or state_hash != m.state_hash():
            raise ProtocolError(
                "bad_result",
                f"seat {msg.seat} signed the result {p0}–{p1} (winner {winner}); the match ended "
                f"{m.points[0]}–{m.points[1]} (winner {m.winner})",
            )
        self.results[msg.seat] = msg

    def _accept_end(self, msg: Msg, key: Ed25519PublicKey | None) -> Accepted:
        t = msg.type
        n = len(self.msgs)
        if key is None:
            raise ProtocolError("unexpected_message", f"a {t.label} before its sender's hello")
        if self.finished:
            raise ProtocolError("unexpected_message", f"a {t.label} after the match ended")
        if msg.seq > n:
            raise ProtocolError("sequence_gap", f"sequence {msg.seq} arrived while {n} was expected")
        if msg.seq < 1:
            raise ProtocolError("replay", f"sequence {msg.seq} is already taken by another message")
        if msg.prev != self.msgs[msg.seq - 1].hash:
            raise ProtocolError(
                "broken_chain", f"the {t.label} at sequence {msg.seq} does not link to the previous message"
            )
        cut = self.msgs[msg.seq :]
        if any(x.seat == msg.seat for x in cut):
            raise ProtocolError("replay", f"sequence {msg.seq} is already taken by seat {msg.seat}'s own message")
        # the state the end message's sender saw: every message before it
        if t is MsgType.TIMEOUT:
            reason = msg.body[0]
            if msg.seq < 2:
                raise ProtocolError("unexpected_message", "a timeout claim before the handshake")
            if reason not in ("turn", "left"):
                raise ProtocolError("malformed_message", f"a timeout's reason is 'turn' or 'left', not {reason!r}")
            if reason == "turn":
                exp = self.expected()
                awaited = cut[0].seat if cut else (exp[0] if exp is not None else msg.seat)
                if awaited == msg.seat:
                    raise ProtocolError("unexpected_message", f"seat {msg.seat} claimed a timeout while it was to move")
        if cut:
            self._rebuild(msg.seq)
            self.superseded.extend(cut)
        acc = Accepted(msg, superseded=cut)
        other = 1 - msg.seat
        if t is MsgType.RESIGN:
            self.ending = Ending(t, "resigned", f"seat {msg.seat} resigned", msg.seat, msg.seq)
        elif t is MsgType.TIMEOUT:
            reason, limit = msg.body
            if reason == "left":
                text = f"seat {msg.seat} claims seat {other} left and did not come back within {limit} s"
            else:
                text = f"seat {msg.seat} claims seat {other} did not answer within {limit} s"
            self.ending = Ending(t, "timeout" if reason == "turn" else "opponent_left", text, msg.seat, msg.seq)
        else:
            code, message, evidence = msg.body
            self.ending = Ending(t, code, message, msg.seat, msg.seq, evidence)
        self.msgs.append(msg)
        return acc

    def _rebuild(self, n: int) -> None:
        """Go back to the state after the first ``n`` messages (they were all verified before)."""
        frames = [x.frame for x in self.msgs[:n]]
        self._reset()
        for f in frames:
            self.accept(f, verify_signature=False)

    def state_before(self, seq: int) -> Referee:
        """A new referee in the state after messages ``0 … seq-1`` of this line."""
        r = Referee()
        for x in self.msgs[:seq]:
            r.accept(x.frame, verify_signature=False)
        return r

    def check_evidence(self) -> bool:
        """For an ABORT ending: does its evidence, given after the message before the ABORT, fail with
        the code the ABORT names?"""
        e = self.ending
        if e is None or e.kind is not MsgType.ABORT:
            return False
        r = self.state_before(e.seq)
        try:
            r.accept(e.evidence)
        except ProtocolError as err:
            return err.code == e.code
        return False
