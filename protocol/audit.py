"""The auditor: checks a whole transcript and reports what it proves.

``audit(data)`` parses the transcript, feeds every record through a fresh
:class:`~koikoi.protocol.referee.Referee` (format, every signature, the chain
and sequence, the handshake's binding, the commitment and reveal, the engine
replayed with every state hash, the result and both countersignatures), and
returns an :class:`AuditReport`. The first failure stops the audit: a
transcript is evidence only when every byte of it checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from ..engine.match import RoundResult
from .codes import Code, Status
from .errors import ProtocolError
from .messages import ZERO_HASH, fingerprint, parse
from .referee import Disposition, Outcome, Referee
from .transcript import parse_transcript

__all__ = ["DECIDED", "STATUSES", "AuditError", "AuditReport", "audit", "ending_json", "round_json"]


@dataclass(frozen=True, slots=True)
class AuditError:
    code: Code
    message: str
    seq: int | None

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "seq": self.seq}


STATUSES: Final = tuple(Status)
"""Every status a report may have; ``valid`` is true for all but the last two."""
DECIDED: Final = frozenset({Status.COMPLETE, Status.RESIGNED, Status.FORFEIT, Status.ON_TIME})
"""The statuses with a result (``result.winner`` is set only for these; None for a drawn match)."""


@dataclass(slots=True)
class AuditReport:
    """What a transcript proves. ``status``: one of :data:`STATUSES`."""

    valid: bool = False
    status: Status = Status.INVALID
    errors: list[AuditError] = field(default_factory=list)
    settings: dict[str, Any] | None = None
    players: list[str | None] = field(default_factory=lambda: [None, None])
    publish: list[bool | None] = field(default_factory=lambda: [None, None])
    """Each seat's HELLO's consent to a public archive (None before its HELLO)."""
    first_dealer: int | None = None
    rounds: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=lambda: {"points": [25, 25], "winner": None})
    ending: dict[str, Any] | None = None
    messages: int = 0
    superseded: int = 0
    room: str | None = None
    relay: str | None = None
    match_id: str | None = None
    referee: Referee | None = None

    def to_json(self, file: str) -> dict[str, Any]:
        return {
            "file": file,
            "valid": self.valid,
            "status": self.status,
            "errors": [e.to_json() for e in self.errors],
            "settings": self.settings,
            "players": self.players,
            "publish": self.publish,
            "first_dealer": self.first_dealer,
            "rounds": self.rounds,
            "result": self.result,
            "ending": self.ending,
            "room": self.room,
            "relay": self.relay,
            "match_id": self.match_id,
            "messages": self.messages,
        }


def round_json(r: RoundResult) -> dict[str, Any]:
    """A round in the report: the engine's one JSON shape (round, dealer, end, winner, yaku, payment, points)."""
    return r.to_json()


def _fill(rep: AuditReport, ref: Referee) -> None:
    h0, h1 = ref.hellos
    if h0 is not None:
        rep.settings = {
            "rounds": h0.rounds,
            "double_at_8": h0.double_at_8,
            "move_time_s": h0.move_time_s,
            "deck": h0.deck,
            "watchers": h0.watchers,
        }
        rep.room = h0.room
        rep.relay = None if h0.relay_key == ZERO_HASH else fingerprint(h0.relay_key)
    rep.players = [fingerprint(h.public_key) if h is not None else None for h in (h0, h1)]
    rep.publish = [h.publish if h is not None else None for h in (h0, h1)]
    rep.first_dealer = ref.first_dealer
    rep.match_id = ref.sid.hex() if ref.sid is not None else None
    if ref.match is not None:
        counted = ref.verified_history  # in sealed mode only the rounds whose disclosures verified
        rep.rounds = [round_json(r) for r in counted]
        points = counted[-1].points if counted else (25, 25)
        rep.result = {"points": [points[0], points[1]], "winner": None}
    rep.messages = len(ref.msgs)
    rep.superseded = len(ref.superseded)


def _waiting_text(ref: Referee) -> str:
    exp = ref.expected()
    if exp is None:
        return "nothing"
    seat, t = exp
    return f"seat {seat}'s {t.label}"


def audit(data: bytes) -> AuditReport:
    """Audit one transcript's bytes."""
    rep = AuditReport()
    try:
        parsed = parse_transcript(data)
    except ProtocolError as e:
        rep.errors.append(AuditError(e.code, e.message, None))
        return rep
    ref = Referee()
    rep.referee = ref
    seen: set[bytes] = set()
    for i, frame in enumerate(parsed.frames):
        try:  # every record through the line's one verdict (Referee.judge, the seats' too): accepted, or invalid
            if frame in seen:
                raise ProtocolError(Code.REPLAY, f"record {i} repeats an earlier message")
            seen.add(frame)
            msg = parse(frame)
            j = ref.judge(msg)
            if j.disposition is not Disposition.ACCEPTED:
                raise ProtocolError(j.reason, j.message, msg.seq)
        except ProtocolError as e:
            _fill(rep, ref)
            rep.errors.append(AuditError(e.code, f"record {i}: {e.message}", e.seq))
            return rep
    _fill(rep, ref)
    if parsed.tail_error is not None:
        tail = parsed.tail_error
        rep.errors.append(AuditError(tail.code, tail.message, ref.next_seq))
        return rep
    o = ref.outcome()
    if o is None:
        rep.status = Status.UNFINISHED
        rep.errors.append(
            AuditError(
                Code.UNFINISHED,
                f"the transcript stops after sequence {ref.next_seq - 1}, waiting for {_waiting_text(ref)}",
                ref.next_seq,
            )
        )
        return rep
    rep.valid = True
    rep.status = o.status
    rep.result = {"points": [o.points[0], o.points[1]], "winner": o.winner if o.status in DECIDED else None}
    if o.status is not Status.COMPLETE:
        rep.ending = ending_json(o)
    return rep


def ending_json(o: Outcome) -> dict[str, Any]:
    """The report's ``ending``: who ended the match (``by``, the signer of the end message), why
    (``code``), at which sequence number, who lost by it, and the witness (relay fingerprint, on_time)."""
    return {
        "by": o.by,
        "code": o.code,
        "message": o.message,
        "seq": o.seq,
        "loser": o.loser,
        "witness": o.witness,
        "evidence_verified": o.evidence_verified,
    }
