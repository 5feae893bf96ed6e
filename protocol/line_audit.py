"""The sealed line's auditor (:func:`audit_line`): a whole line re-checked by the line's one judge, then the
match replayed on the deals its disclosures revealed (:class:`LineAudit`).

Sans-IO. Without envelopes: the transcript's auditor (:mod:`koikoi.protocol.audit`) runs the same judge
through its referee.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..engine.actions import from_code
from ..engine.match import ActionRule, IllegalAction, Match, Settings
from .codes import Code
from .line_judge import SealedObserver
from .line_round import RevealedDeals
from .line_vocabulary import LineError, LineKind, Sent, Verdict
from .sealed import SealedFault, SealedFormatError

__all__ = ["LineAudit", "audit_line"]


@dataclass(slots=True)
class LineAudit:
    """A sealed line re-checked. ``verdicts``: each disclosed round's verification; ``match``: the full
    match replayed on the revealed deals; ``fault``: the proven fault the line's verification names (the
    judge's: a rule of spec/sealed.md §7, ``wrong_card``, ``unfounded_stop``); ``error``: ``(seat, code,
    message)`` of the first message the line refuses; ``undisclosed_round``: the round the line stops in
    before its disclosures (an early end)."""

    verdicts: list[Verdict]
    match: Match | None
    fault: SealedFault | None = None
    error: tuple[int, Code, str] | None = None
    undisclosed_round: int | None = None


def audit_line(settings: Settings, first_dealer: int, msgs: Sequence[Sent]) -> LineAudit:
    """Re-check a whole sealed line without envelopes: every message through the line's one judge
    (:class:`SealedObserver`, the code each seat's referee and the auditor's run, so the verdict is theirs),
    then the whole match replayed with a full :class:`Match` on the deals the disclosures revealed (what
    ``koikoi replay`` shows)."""
    judge = SealedObserver(settings, first_dealer)
    for m in msgs:
        try:
            judge.accept(m)
        except LineError as e:
            return LineAudit(list(judge.verdicts), None, error=(m.seat, e.code, e.message))
        except SealedFormatError as e:
            return LineAudit(list(judge.verdicts), None, error=(m.seat, Code.BAD_SHAPE, e.message))
        v = judge.verdict
        if v is not None and v.fault is not None:
            return LineAudit(list(judge.verdicts), None, fault=v.fault)
    audit = LineAudit(list(judge.verdicts), None)
    if not judge.finished:
        audit.undisclosed_round = judge.round
    try:
        match = Match(settings, RevealedDeals(judge.deals), first_dealer)
    except IllegalAction:
        return audit
    audit.match = match
    for m in msgs:
        if m.kind is not LineKind.MOVE:
            continue
        action = from_code(m.body[0])
        try:
            match.apply(action, m.seat)
        except IllegalAction as e:
            if e.rule is not ActionRule.NOT_DISCLOSED:  # the judge took it: the full match must too (else a bug here)
                audit.error = (m.seat, Code.ILLEGAL_MOVE, f"{action.text}: {e.message} ({e.rule})")
            return audit
    return audit
