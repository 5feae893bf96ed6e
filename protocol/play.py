"""The play of a match's line, after the handshake: the engine's match, the sealed line's rounds, and the
countersigned result.

:class:`Play` holds the match the line's moves are applied to (a shared deck's full :class:`Match`; in
sealed mode the sealed line's own — a seat's :class:`SealedSeat`, with its secrets, or the auditor's
:class:`SealedObserver`), where the sealed line's current round begins in the line, and both seats'
RESULTs. A move is tried on a copy of the match first: a refused one leaves the play as it was.
"""

from __future__ import annotations

from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..engine.actions import NotationError, from_code
from ..engine.deal import SeededDeal
from ..engine.match import IllegalAction, Match, RoundResult, Settings
from .chain import Accepted, Chain
from .codes import Code
from .errors import ProtocolError
from .framing import encode
from .messages import SEALED_TYPES, Msg, MsgType
from .sealed import SealedFormatError
from .sealed_line import (
    LineError,
    LineKind,
    RevealedDeals,
    SealedObserver,
    SealedSeat,
    Sent,
    check_shape,
    match_secret,
)

__all__ = ["KIND_OF", "TYPE_OF", "Play", "Viewer"]

KIND_OF: Final = {
    MsgType.SHUFFLE: LineKind.SHUFFLE,
    MsgType.SHUFFLE_LOCK: LineKind.SHUFFLE_LOCK,
    MsgType.LOCK: LineKind.LOCK,
    MsgType.CLAIM: LineKind.CLAIM,
    MsgType.MOVE: LineKind.MOVE,
    MsgType.DRAW: LineKind.DRAW,
    MsgType.DISCLOSE: LineKind.DISCLOSE,
}
TYPE_OF: Final = {k: t for t, k in KIND_OF.items()}
"""The sealed line's message kinds and the protocol's message types, both ways: the one map."""
Viewer = tuple[int, Ed25519PrivateKey]
"""The seat a referee plays for and its key (its sealed secrets derive from it); None: an observer."""


class Play:
    """The match played on the line after the handshake (None of it before the REVEAL), and its results."""

    match: Match | None
    sealed: SealedSeat | SealedObserver | None
    results: list[Msg | None]
    round_from: int
    """The sequence number where the sealed line's current round begins."""

    def __init__(self, chain: Chain) -> None:
        self._chain = chain
        self.match = None
        self.sealed = None
        self.results = [None, None]
        self.round_from = 0
        self._round_no = 0  # the sealed line's current round (its messages start at round_from)
        self._rounds_told = 0  # the sealed match's rounds already reported in an Accepted

    def start(
        self,
        settings: Settings,
        source: SeededDeal,
        first_dealer: int,
        sid: bytes,
        acc: Accepted,
        *,
        sealed: bool,
        seat: Viewer | None,
    ) -> None:
        """The match begins at the REVEAL: a shared deck's dealt from ``source``; a ``sealed`` deck's as
        ``seat``'s (its key signed its seat's HELLO), or as an observer's when None (the seed picks the first
        dealer and nothing else: no card derives from it)."""
        if sealed:
            if seat is not None:
                secret = match_secret(seat[1], sid, seat[0])
                self.sealed = SealedSeat(settings, seat[0], first_dealer, secret, sid=sid)
            else:
                self.sealed = SealedObserver(settings, first_dealer, sid=sid)
            self.round_from = len(self._chain.msgs) + 1
            self._round_no = self.sealed.round
            self.match = self.sealed.match
            return
        self.match = Match(settings, source, first_dealer)
        acc.round_results.extend(self.match.history)  # a dealt hand yaku can end round 1 at once

    # -- queries ---------------------------------------------------------

    @property
    def complete(self) -> bool:
        """Both seats signed the result."""
        return self.results[1] is not None

    def expected(self) -> tuple[int, MsgType]:
        """Who sends the next message of a line not finished, and of what type, once the match began."""
        m = self.match
        assert m is not None
        sl = self.sealed
        if sl is not None:
            made = sl.made() if isinstance(sl, SealedSeat) else None
            if made is not None and isinstance(sl, SealedSeat):
                return sl.seat, TYPE_OF[made]
            e = sl.judge.expected()  # the line's one judge, the auditor's too (a seat's own stop is its own)
            if e is not None:
                return e[0], TYPE_OF[e[1]]
            v = sl.verdict
            if v is not None and v.loser is not None:
                return 1 - v.loser, MsgType.ABORT  # the round's verification proved a fault: its victim ends it
        elif not m.is_over:
            return m.to_move, MsgType.MOVE
        if self.results[0] is None:
            return 0, MsgType.RESULT
        return 1, MsgType.RESULT

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

    def deal_source(self, seed: bytes | None) -> SeededDeal | RevealedDeals | None:
        """Where the match's deals come from (see :meth:`~koikoi.protocol.referee.Referee.deal_source`)."""
        if seed is None:
            return None
        if self.sealed is None:
            return SeededDeal(seed)
        return RevealedDeals(self.sealed.deals) if isinstance(self.sealed, SealedObserver) else None

    def cuts(self, msg: Msg) -> bool:
        """True when ``msg`` may cut the line back like an end message: a sealed match's DISCLOSE (a stop
        crosses the other seat's messages in transit)."""
        return msg.type is MsgType.DISCLOSE and self.sealed is not None

    def stop_allowed(self, seat: int) -> bool:
        """``seat`` may stop the sealed line's round now: it is under way and ``seat`` has not disclosed it."""
        sl = self.sealed.judge if self.sealed is not None else None
        return sl is not None and not sl.finished and not sl.disclosed(seat) and sl.expected() is not None

    def secrets_due(self, upto: int | None = None) -> int:
        """How many round secrets a DISCLOSE of the sealed line's current round holds: one for each deal attempt
        begun, that is each SHUFFLE of the round in the line (before ``upto``, for a stop that cuts the line
        back there; spec/sealed-line.md §2)."""
        return sum(x.type is MsgType.SHUFFLE for x in self._chain.msgs[self.round_from : upto])

    def check_secrets(self, msg: Msg, upto: int | None = None) -> None:
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
        for x in self._chain.msgs[self.round_from :]:
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

    # -- applying a message --------------------------------------------

    def apply(self, msg: Msg, acc: Accepted) -> None:
        """Check and apply a MOVE, a sealed line's message or a RESULT (its place and turn checked)."""
        t = msg.type
        if self.sealed is not None and t is not MsgType.RESULT:
            self._on_sealed(msg, acc)
        elif t is MsgType.MOVE:
            if len(msg.body) != 2:
                raise ProtocolError(Code.MALFORMED_MESSAGE, "a move of a shared-deck match is [action, state_hash]")
            self._on_move(msg, acc)
        else:
            assert t is MsgType.RESULT, t
            self._on_result(msg)

    def _on_sealed(self, msg: Msg, acc: Accepted) -> None:
        t = msg.type
        kind = KIND_OF.get(t)
        sl = self.sealed
        assert sl is not None
        if kind is None:
            raise ProtocolError(Code.UNEXPECTED_MESSAGE, f"a {t.label} in the sealed line")
        if t is MsgType.MOVE and len(msg.body) != 3:
            raise ProtocolError(Code.BAD_SHAPE, "a move of a sealed match is [action, state_hash, keys]")
        sent = Sent(msg.seat, kind, msg.body)
        if t is MsgType.DISCLOSE:
            self.check_secrets(msg)
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
            self.round_from = len(self._chain.msgs) + 1

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

    def _on_result(self, msg: Msg) -> None:
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
