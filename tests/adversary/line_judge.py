"""The public verdicts on a match the sealed-line regression tests played (issue 18): the honest session's own
ending and :func:`koikoi.protocol.audit.audit` of both seats' transcripts. Nothing here knows the protocol's
internals."""

from __future__ import annotations

from dataclasses import dataclass

from koikoi.protocol.audit import audit
from koikoi.testing import Pair


@dataclass(frozen=True)
class Verdict:
    """One verdict on the match: who says it, and what (``loser``: the seat the ending names; ``winner``: the
    result's)."""

    source: str
    valid: bool
    status: str
    code: str | None
    loser: int | None
    winner: int | None
    errors: str = ""

    def text(self) -> str:
        if not self.valid:
            return f"{self.source}: not valid ({self.status}: {self.errors})"
        return f"{self.source}: {self.status} {self.code or ''}, loser {self.loser}, winner {self.winner}"


def session_verdict(pair: Pair, seat: int) -> Verdict:
    ended = pair.sessions[seat].ended
    if ended is None:
        return Verdict(f"seat {seat}'s session", False, "not ended", None, None, None, "its match never ended")
    o = ended.outcome
    return Verdict(f"seat {seat}'s session", True, o.status, o.code, o.loser, o.winner)


def file_verdict(data: bytes, source: str) -> Verdict:
    rep = audit(data)
    e = rep.ending or {}
    errors = "; ".join(f"{x.code}: {x.message}" for x in rep.errors)
    return Verdict(source, rep.valid, rep.status, e.get("code"), e.get("loser"), rep.result.get("winner"), errors)


def verdicts(pair: Pair, honest: int) -> list[Verdict]:
    """The honest session's ending, then the audit of the honest seat's file, then of the other seat's."""
    pair.flush(0)
    pair.flush(1)
    return [
        session_verdict(pair, honest),
        file_verdict(bytes(pair.files[honest]), f"the audit of honest seat {honest}'s file"),
        file_verdict(bytes(pair.files[1 - honest]), f"the audit of cheating seat {1 - honest}'s file"),
    ]


def problems_if_cheater_wins(pair: Pair, honest: int, what: str) -> list[str]:
    """What is wrong when the cheating seat (``1 - honest``), whose only deviation is ``what``, is not the one
    that loses: the honest session must end with the cheater as its loser, the honest file must audit valid
    and say so, and the cheater's file, where it audits valid, must agree; the winner is the honest seat. No
    verdict may name one seat both the winner and the loser. One line per verdict that is wrong."""
    cheater = 1 - honest
    out: list[str] = []
    for i, v in enumerate(verdicts(pair, honest)):
        wrong: list[str] = []
        if not v.valid:
            if i < 2:
                wrong.append("the match must end with the cheater's loss")
        elif v.loser != cheater:
            wrong.append(f"the loser must be the cheater (seat {cheater})")
        if v.valid and v.winner == cheater:
            wrong.append("the cheater wins")
        elif v.valid and v.winner is None:
            wrong.append(f"nobody wins: the honest seat {honest} must")
        if v.valid and v.loser is not None and v.winner == v.loser:
            wrong.append(f"seat {v.loser} is both the winner and the loser")
        if wrong:
            out.append(f"{v.text()} -- {'; '.join(wrong)}")
    if out:
        out.insert(0, f"the cheater's {what} does not make it lose:")
    return out


def fail_text(problems: list[str]) -> str:
    """The assertion message: the problems, one a line."""
    return "\n  ".join(problems)
