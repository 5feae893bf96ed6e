"""Whether an ABORT's evidence proves the fault it names against the accused (spec/protocol.md §6.2,
spec/sealed-line.md §3).

:class:`AbortCheck` judges the evidence against the line as it stands: a message of the accused for this
match, not set aside by the line, that fails with exactly the code named when applied where it claims to go
(replayed from the line before it, with the auditor's judge: one verdict whoever asks); two such messages
for one place after one same message (equivocation); or, for a sealed fault, the accused's messages of the
attempt the round's verification names with that very code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import messages
from .chain import Chain
from .codes import Code
from .errors import PROVABLE, ProtocolError
from .framing import FrameError, decode
from .handshake import Handshake
from .messages import END_TYPES, Msg, MsgType, body_problem, parse
from .sealed import RULES as SEALED_RULES
from .sealed_line import LINE_RULES

if TYPE_CHECKING:
    from .referee import Referee

__all__ = ["SEALED_CODES", "AbortCheck"]

SEALED_CODES = frozenset(SEALED_RULES) | frozenset(LINE_RULES)
"""The sealed line's faults (spec/sealed.md §7, spec/sealed-line.md §3): an ABORT naming one is proven when
the round's verification from the line names it against the accused."""


class AbortCheck:
    """The evidence rule over one line: its handshake and chain, and the referee that holds them (whose
    states before a place, :meth:`~koikoi.protocol.referee.Referee.state_before`, replay the evidence)."""

    def __init__(self, handshake: Handshake, chain: Chain, line: Referee) -> None:
        self._handshake = handshake
        self._chain = chain
        self._line = line

    def problem(self, code: str, evidence: bytes, evidence2: bytes, aborter: int, seq: int) -> str | None:
        """Why an ABORT by ``aborter`` at ``seq`` (the line holds ``seq`` messages) does not prove the
        accused's fault; None when it does."""
        accused = 1 - aborter
        sid = self._handshake.sid
        key = self._handshake.keys[accused]
        if sid is None or key is None:
            return "no match is bound yet"
        if code in SEALED_CODES:  # a fault the round's verification names: the line itself proves it
            problem = self._sealed_problem(code, evidence, accused, seq)
            if problem is None or code not in PROVABLE:
                return problem
        if code not in PROVABLE:
            return f"{code} is not a fault a signed message can prove"
        gone = {x.hash for x in self._chain.superseded}
        signed: list[Msg] = []
        for raw in (evidence, evidence2) if code == Code.EQUIVOCATION else (evidence,):
            try:
                e = parse(raw)
                if e.seat != accused:
                    return f"the evidence is signed for seat {e.seat}, not the accused seat {accused}"
                messages.verify(key, e)
            except ProtocolError as err:
                return f"the evidence is not a message of seat {accused} ({err.code})"
            if e.match != sid:
                return "the evidence belongs to another match"
            if e.type is MsgType.ENDED:  # it acknowledges an end and is never part of a line (§7.4)
                return "an ENDED is never evidence"
            if e.hash in gone:  # the line set it aside: its signer answered the line as it then stood (§6.4)
                return f"the {e.type.label} at sequence {e.seq} is a message the line superseded"
            signed.append(e)
        if code == Code.EQUIVOCATION:
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
        if e.seq < seq and self._chain.msgs[e.seq].frame == e.frame:
            return "the evidence is a message of the line"
        r = self._line.state_before(e.seq, observer=True)  # the auditor's judge, whoever asks: one verdict
        try:
            r.accept_msg(e, verify_signature=False)
        except ProtocolError as err:
            if err.code == code:
                return None
            return f"the evidence fails with {err.code}, not {code}"
        return "the evidence is a valid message"

    def _sealed_problem(self, code: str, evidence: bytes, accused: int, seq: int) -> str | None:
        """A sealed fault is proven by the line itself: the round's two disclosures are in it and its
        verification names ``code`` against the accused; the evidence is the accused's messages of that round."""
        r = self._line if seq >= len(self._chain.msgs) else self._line.state_before(seq, observer=True)
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
