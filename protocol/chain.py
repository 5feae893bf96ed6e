"""The chain of a match's line (spec/protocol.md §5.1 steps 4–5, §6): its messages in sequence order, each
linked to the one before, and the messages the line set aside.

:class:`Chain` keeps two invariants: message ``i`` of :attr:`Chain.msgs` has sequence number ``i`` and links
to message ``i - 1`` (the first to :data:`~koikoi.protocol.messages.ZERO_HASH`); and a message leaves the
line only when a later end message or stop cuts it back, and then stays in :attr:`Chain.superseded` for
good (a rebuild of the line's state keeps it). It decides what a message's place makes of it: held already,
ahead, an equivocation, a cut — before anything is replayed or computed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ..engine.match import RoundResult
from .codes import Code
from .errors import ProtocolError
from .messages import END_TYPES, ZERO_HASH, Msg, MsgType

__all__ = ["Accepted", "Chain", "Disposition", "Judgement"]


@dataclass(slots=True)
class Accepted:
    msg: Msg
    round_results: list[RoundResult] = field(default_factory=list)
    superseded: list[Msg] = field(default_factory=list)


class Disposition(enum.Enum):
    """What the line makes of one signed message (:meth:`~koikoi.protocol.referee.Referee.judge`)."""

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

    @property
    def reason(self) -> Code:
        """The code of a verdict other than ACCEPTED: each names one."""
        assert self.code is not None, self.disposition
        return self.code


class Chain:
    """The line's messages (:attr:`msgs`, message ``i`` at sequence ``i``) and those it set aside."""

    msgs: list[Msg]
    superseded: list[Msg]

    def __init__(self) -> None:
        self.msgs = []
        self.superseded = []

    def clear(self) -> None:
        """Empty the line, to apply its messages again (what it set aside stays set aside)."""
        self.msgs = []

    @property
    def next_seq(self) -> int:
        return len(self.msgs)

    @property
    def head_hash(self) -> bytes:
        return self.msgs[-1].hash if self.msgs else ZERO_HASH

    def last_of(self, seat: int) -> Msg | None:
        """``seat``'s last message in the line."""
        for x in reversed(self.msgs):
            if x.seat == seat:
                return x
        return None

    def append(self, msg: Msg) -> None:
        assert msg.seq == len(self.msgs), "a message goes at its own sequence number"
        assert msg.prev == self.head_hash, "a message links to the line's head"
        self.msgs.append(msg)

    def set_aside(self, cut: list[Msg]) -> None:
        """``cut`` left the line (an end message or a stop took the place of its first message)."""
        self.superseded.extend(cut)

    def placed(self, msg: Msg, *, matched: bool, bound: bool, cuts: bool) -> Judgement | None:
        """What ``msg``'s place alone makes of it (a signed message of this match), cheap before dear: ahead of
        the line; or, for a place the line holds (unless ``msg`` is an end message or a stop that ``cuts``),
        held already, its signer's equivocation, or dropped; None when only applying it can tell.
        ``matched``: the HELLOs bound a match; ``bound``: matched, and ``msg`` is not the judging seat's own."""
        D = Disposition
        n = len(self.msgs)
        if msg.seq > n:
            return Judgement(
                D.AHEAD, Code.SEQUENCE_GAP, f"sequence {msg.seq} arrived while {n} was expected", attributed=True
            )
        if msg.seq >= n or msg.type in END_TYPES or cuts:
            return None
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
            return Judgement(D.DROPPED, Code.EQUIVOCATION if matched else Code.REPLAY, text, attributed=True)
        # the other seat's message for a place the line holds: it crossed, or it is junk; it changes nothing
        # and proves nothing worth a replay of the line (cheap before dear)
        return Judgement(D.DROPPED, Code.REPLAY, f"sequence {msg.seq} is taken", attributed=True, junk=bound)

    def check_next(self, msg: Msg, *, matched: bool) -> None:
        """Raise unless ``msg`` (no end message, no stop) goes at the line's next place and links to its head:
        ``replay`` for a place taken (``equivocation`` when its seat's own, once ``matched``), ``sequence_gap``
        ahead, ``broken_chain`` unlinked."""
        t = msg.type
        n = len(self.msgs)
        if msg.seq < n:
            held = self.msgs[msg.seq]
            if held.frame == msg.frame:
                raise ProtocolError(Code.REPLAY, f"the {t.label} at sequence {msg.seq} repeats a message of the line")
            if held.seat == msg.seat and matched:
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

    def end_cut(self, msg: Msg, *, matched: bool) -> list[Msg]:
        """The messages the end message ``msg`` cuts from the line (those from its place on: the other seat's,
        which crossed it in transit), or raise: it must link to the message before its place, and may cut none
        of its own seat's (``equivocation`` for the message at its place, once ``matched``; else ``replay``)."""
        t = msg.type
        n = len(self.msgs)
        if msg.seq > n:
            raise ProtocolError(Code.SEQUENCE_GAP, f"sequence {msg.seq} arrived while {n} was expected")
        if msg.seq < 1:
            raise ProtocolError(Code.REPLAY, f"sequence {msg.seq} is already taken by another message")
        if msg.prev != self.msgs[msg.seq - 1].hash:
            raise ProtocolError(
                Code.BROKEN_CHAIN, f"the {t.label} at sequence {msg.seq} does not link to the previous message"
            )
        cut = self.msgs[msg.seq :]
        if cut and cut[0].seat == msg.seat and matched:
            raise ProtocolError(
                Code.EQUIVOCATION, f"seat {msg.seat} signed two different messages for sequence {msg.seq}"
            )
        if any(x.seat == msg.seat for x in cut):
            raise ProtocolError(
                Code.REPLAY, f"the {t.label} at sequence {msg.seq} ignores its sender's own later message"
            )
        return cut

    def stop_cut(self, msg: Msg) -> list[Msg]:
        """The messages the stop ``msg`` (a DISCLOSE for a taken place) would cut, or raise: it must link to the
        message before its place and cut none of its own seat's, nor a DISCLOSE of seat 0 (of two stops that
        cross, seat 0's stands; spec/sealed-line.md §2)."""
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
        return cut
