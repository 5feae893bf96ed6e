"""What a :class:`~koikoi.protocol.session.Session` reports: its typed events, and the values they carry
(the deck a match plays, what a wait is for). Importers take them from :mod:`koikoi.protocol.session`,
whose ``__all__`` lists them.

:func:`line_events` is the one translation of what the line accepted into events, for one seat, and
:func:`decision` of how the line ended.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from ..engine.actions import Action, from_code
from ..engine.match import RoundResult, Settings
from .codes import Code, Status
from .messages import ZERO_HASH, Msg, MsgType, fingerprint
from .referee import Outcome, Referee, describe_mismatch


class Deck(StrEnum):
    """The deck a match plays (HELLO's ``deck``, spec/protocol.md §14): the value is the wire and JSON string."""

    SEALED = "sealed"
    """The sealed deal (spec/sealed-line.md): neither side sees a card it should not."""
    SHARED = "shared"
    """The shared-seed deal: both programs can compute the whole deck."""


class WaitFor(StrEnum):
    """What a wait's time is for, as the player is told (the value is the word the client looks up)."""

    MOVE = "move"
    """A move, or one of the sealed line's automatic steps (spec/sealed-line.md §2), or an ABORT."""
    RESULT = "result"
    """The countersigned RESULT."""
    HANDSHAKE = "handshake"
    """HELLO, COMMIT, VALUE or REVEAL."""


class Event:
    """Base class of what a session reports."""


@dataclass(frozen=True, slots=True)
class RoomSettings(Event):
    """The creator's signed HELLO arrived (joiner only): the room's real settings."""

    settings: Settings
    room: str
    creator: str  # the creator's fingerprint
    move_time_s: int = 120
    relay_key: bytes = ZERO_HASH
    deck: Deck = Deck.SHARED
    watchers: bool = False  # whether watchers may follow the room


@dataclass(frozen=True, slots=True)
class MatchStarted(Event):
    """The reveal is in: the match begins, with the settings both HELLOs bound."""

    match_id: bytes
    seat: int
    first_dealer: int
    settings: Settings
    opponent: str  # the opponent's fingerprint
    move_time_s: int = 120
    witness: str | None = None  # the relay key's fingerprint (None: no relay)
    deck: Deck = Deck.SHARED  # as both HELLOs bound it
    watchers: bool = False  # whether watchers may follow the match, as both HELLOs bound it


@dataclass(frozen=True, slots=True)
class ActionApplied(Event):
    seat: int
    action: Action
    seq: int


@dataclass(frozen=True, slots=True)
class RoundScored(Event):
    """A round ended in the line: ``result`` says how, who was paid, and the pools after it."""

    result: RoundResult


@dataclass(frozen=True, slots=True)
class MatchOver(Event):
    """The last round ended; the result is being countersigned."""

    points: tuple[int, int]
    winner: int | None


@dataclass(frozen=True, slots=True)
class MatchDecided(Event):
    """The session is finished: ``outcome.status`` is complete or aborted (``outcome.code`` says why)."""

    outcome: Outcome
    seat: int

    @property
    def message(self) -> str:
        return self.outcome.message


@dataclass(frozen=True, slots=True, init=False)
class TimeoutWarning(Event):
    """``seat``'s time for ``what`` runs out in ``seconds_left`` (``what`` may be given as its word)."""

    seat: int
    what: WaitFor
    seconds_left: float

    def __init__(self, seat: int, what: WaitFor | str, seconds_left: float) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "what", WaitFor(what))
        object.__setattr__(self, "seconds_left", seconds_left)


@dataclass(frozen=True, slots=True, init=False)
class OwnTimeExpired(Event):
    """This player's own time ran out; the opponent may now get the relay's certificate and win on time."""

    what: WaitFor

    def __init__(self, what: WaitFor | str) -> None:
        object.__setattr__(self, "what", WaitFor(what))


@dataclass(frozen=True, slots=True)
class CertificateNeeded(Event):
    """The opponent (``silent_seat``) has been silent for the move time: ask the relay for a silence
    certificate and pass it to :meth:`Session.witnessed`."""

    silent_seat: int


@dataclass(frozen=True, slots=True)
class CertificateRejected(Event):
    """A certificate given to :meth:`Session.witnessed` does not (yet) prove the silence; nothing was sent."""

    reason: str


@dataclass(frozen=True, slots=True)
class FrameDropped(Event):
    """A frame was dropped (the network or the relay may have done it): for logs; it ends nothing."""

    code: Code
    message: str


def decision(line: Referee, me: int) -> tuple[MatchDecided, Msg | None] | None:
    """What seat ``me`` reports when ``line`` has ended (None: it has not), with the opponent's HELLO when that
    ended it (the HELLOs disagree): ``me`` acknowledges that one, so its last frame at the relay lies on no
    line where the opponent's other HELLO bound a match (else its silence claim would fit)."""
    o = line.outcome()
    if o is None:
        return None
    hello = None
    if o.status is Status.ABANDONED and line.mismatch:
        o = replace(o, message=describe_mismatch(line.mismatch, me))
        last = line.msgs[-1] if line.msgs else None
        if last is not None and last.seat != me and last.type is MsgType.HELLO:
            hello = last
    return MatchDecided(o, me), hello


def line_events(
    line: Referee, me: int, t: MsgType, seat: int, body: tuple[object, ...], seq: int, rounds: list[RoundResult]
) -> list[Event]:
    """What seat ``me`` reports when ``line`` has just accepted ``seat``'s message of type ``t`` (its ``body``
    at ``seq``), which ended the rounds ``rounds``."""
    events: list[Event] = []
    if t is MsgType.HELLO and seat == 0 and me == 1:
        h = line.hellos[0]
        assert h is not None
        settings, creator = Settings(h.rounds, h.double_at_8), fingerprint(h.public_key)
        events.append(RoomSettings(settings, h.room, creator, h.move_time_s, h.relay_key, Deck(h.deck), h.watchers))
    elif t is MsgType.REVEAL:
        assert line.sid is not None and line.first_dealer is not None and line.settings is not None
        opp = line.hellos[1 - me]
        assert opp is not None
        rk = line.relay_key
        events.append(
            MatchStarted(
                line.sid,
                me,
                line.first_dealer,
                line.settings,
                fingerprint(opp.public_key),
                line.move_time_s or 0,
                fingerprint(rk) if rk is not None and rk != ZERO_HASH else None,
                Deck(line.deck) if line.deck else Deck.SHARED,
                bool(line.watchers),
            )
        )
    elif t is MsgType.MOVE:
        code = body[0]
        assert isinstance(code, int)
        events.append(ActionApplied(seat, from_code(code), seq))
    events.extend(RoundScored(x) for x in rounds)
    m = line.match
    if rounds and m is not None and m.is_over:
        events.append(MatchOver((m.points[0], m.points[1]), m.winner))
    return events
