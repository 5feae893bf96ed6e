"""How a match's line ends: :class:`Ending` (an early end: the HELLOs disagree, or an end message) and
:class:`Outcome`, the one verdict both seats and the auditor read off the line (:func:`outcome`).

An early end always names a loser and the other seat wins, whatever the rounds played said: a RESIGN's
signer; a TIMEOUT's silent seat when its certificate proves the silence, else its signer; an ABORT's accused
when its evidence proves the fault it names, else its signer. Before the handshake bound a match, or when
the HELLOs disagree, nobody wins or loses (abandoned).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from .codes import Code, Status
from .messages import MsgType

__all__ = ["STATUSES", "EndKind", "Ending", "Outcome", "outcome"]


class EndKind(enum.Enum):
    """What ended the line early."""

    MISMATCH = "mismatch"
    """The HELLOs disagree: the match never began."""
    RESIGN = "resign"
    TIMEOUT = "timeout"
    ABORT = "abort"

    @classmethod
    def of(cls, t: MsgType) -> EndKind:
        """The end message type ``t``'s kind."""
        return _OF_TYPE[t]


_OF_TYPE = {MsgType.RESIGN: EndKind.RESIGN, MsgType.TIMEOUT: EndKind.TIMEOUT, MsgType.ABORT: EndKind.ABORT}


@dataclass(frozen=True, slots=True)
class Ending:
    """How the line ended early: ``kind``, and what the end message (or the mismatch) says.

    ``code``: for an ABORT the code it names; for a TIMEOUT ``timeout`` (the silent seat was connected)
    or ``opponent_left``; ``resigned``; or the mismatch's code. ``proven``: for an ABORT, whether its
    evidence proves the accused's fault; for a TIMEOUT, whether its certificate proves the silence
    (``reason`` says why not). ``witness``: the certificate's relay fingerprint.
    """

    kind: EndKind
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


def outcome(
    ending: Ending | None,
    points: tuple[int, int],
    *,
    played_out: tuple[int | None, int] | None,
    bound: bool,
) -> Outcome | None:
    """The match's end, once there is one. ``points``: those of the rounds that count; ``played_out``: the
    engine's winner and the last sequence number when both seats signed the result, else None; ``bound``:
    the handshake bound a match."""
    if played_out is not None:
        winner, last = played_out
        return Outcome(
            Status.COMPLETE,
            None,
            "the match was played out and both players signed the result",
            None,
            winner,
            points,
            last,
        )
    e = ending
    if e is None:
        return None
    if e.kind is EndKind.MISMATCH:
        return Outcome(Status.ABANDONED, e.code, e.message, None, None, points, e.seq)
    if not bound:  # ended before the handshake bound a match: nothing to win or lose
        return Outcome(
            Status.ABANDONED, e.code, f"{e.message} (before the handshake was done)", e.by, None, points, e.seq
        )
    by = e.by
    assert by is not None
    verified: bool | None = None
    witness: str | None = None
    code: str = e.code
    message = e.message
    if e.kind is EndKind.RESIGN:
        status, loser = Status.RESIGNED, by
    elif e.kind is EndKind.TIMEOUT:
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
