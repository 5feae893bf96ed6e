"""What a watcher is told (spec/watching.md §3): the typed :class:`WatchEvent` s a
:class:`~koikoi.protocol.spectator.Spectator` reports, and the narration that makes them from the engine's
log (:class:`Narration`).

Sans-IO. Every card an event names is public when it is told: a card played or drawn, the table cards it
captured. A hand shown for a hand yaku is told as the yaku alone, and nothing names a card in a hand or
the deck: in sealed mode the watcher cannot know them, in shared mode it could compute them and does not
tell them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, ClassVar

from ..engine.cards import CARD_IDS, cards_of
from ..engine.events import Chosen, Dealt, Drawn, DrawnChoice, HandYaku, KoiKoi, Played, Redeal, Shobu
from ..engine.events import Event as EngineEvent
from ..engine.match import RoundResult
from ..engine.yaku import HAND_YAKU_POINTS, yaku_of
from .audit import AuditReport
from .codes import Code
from .session_events import Deck

__all__ = [
    "CaptureChosen",
    "CardDrawn",
    "CardPlayed",
    "FaultSeen",
    "KoiKoiCalled",
    "MatchSettings",
    "Narration",
    "Redealt",
    "RoundCounted",
    "RoundDealt",
    "RoundStopped",
    "ShobuCalled",
    "Superseded",
    "WatchEvent",
    "WatchKind",
    "WatchOver",
    "WatchStarted",
    "YakuMade",
    "card_ids",
]


def card_ids(mask: int) -> tuple[str, ...]:
    """The engine's ids of the cards in ``mask``, in card order."""
    return tuple(CARD_IDS[c] for c in cards_of(mask))


class WatchKind(StrEnum):
    """Each event's kind: the value is its ``"event"`` in JSON."""

    STARTED = "started"
    DEALT = "dealt"
    REDEALT = "redealt"
    PLAYED = "played"
    DRAWN = "drawn"
    CHOSEN = "chosen"
    YAKU = "yaku"
    KOIKOI = "koikoi"
    SHOBU = "shobu"
    ROUND_COUNTED = "round_counted"
    ROUND_STOPPED = "round_stopped"
    SUPERSEDED = "superseded"
    FAULT = "fault"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """The settings both HELLOs bound: the creator's. ``watchers``: the HELLO's watchers setting, None when
    the HELLO does not carry one."""

    rounds: int
    double_at_8: bool
    move_time_s: int
    deck: Deck
    watchers: bool | None

    def to_json(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds,
            "double_at_8": self.double_at_8,
            "move_time_s": self.move_time_s,
            "deck": self.deck.value,
            "watchers": self.watchers,
        }


class WatchEvent:
    """Base class of what a spectator reports. ``to_json()``: the event as one JSON object, its kind in
    ``"event"``."""

    __slots__ = ()
    kind: ClassVar[WatchKind]

    def _fields(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind.value, **self._fields()}


@dataclass(frozen=True, slots=True)
class WatchStarted(WatchEvent):
    """Both HELLOs are in the line and agree: the match id is bound, these are its settings and players
    (their keys' fingerprints, seat 0 first)."""

    kind: ClassVar[WatchKind] = WatchKind.STARTED
    settings: MatchSettings
    players: tuple[str, str]
    match_id: bytes

    def _fields(self) -> dict[str, Any]:
        return {"settings": self.settings.to_json(), "players": list(self.players), "match_id": self.match_id.hex()}


@dataclass(frozen=True, slots=True)
class RoundDealt(WatchEvent):
    """Round ``round`` is dealt; ``dealer`` plays first (the table is the board's)."""

    kind: ClassVar[WatchKind] = WatchKind.DEALT
    round: int
    dealer: int

    def _fields(self) -> dict[str, Any]:
        return {"round": self.round, "dealer": self.dealer}


@dataclass(frozen=True, slots=True)
class Redealt(WatchEvent):
    """Deal attempt ``attempt`` of round ``round`` put four cards of a month on the table: dealt again."""

    kind: ClassVar[WatchKind] = WatchKind.REDEALT
    round: int
    attempt: int

    def _fields(self) -> dict[str, Any]:
        return {"round": self.round, "attempt": self.attempt}


@dataclass(frozen=True, slots=True)
class CardPlayed(WatchEvent):
    """``seat`` played ``card`` from its hand and captured ``captured`` (table cards; none: it went to the
    table)."""

    kind: ClassVar[WatchKind] = WatchKind.PLAYED
    seat: int
    card: str
    captured: tuple[str, ...]

    def _fields(self) -> dict[str, Any]:
        return {"seat": self.seat, "card": self.card, "captured": list(self.captured)}


@dataclass(frozen=True, slots=True)
class CardDrawn(WatchEvent):
    """``seat`` turned ``card`` from the deck and captured ``captured`` (none: it went to the table, or,
    ``choosing``, it matches two table cards and ``seat`` chooses which it captures: :class:`CaptureChosen`)."""

    kind: ClassVar[WatchKind] = WatchKind.DRAWN
    seat: int
    card: str
    captured: tuple[str, ...]
    choosing: bool = False

    def _fields(self) -> dict[str, Any]:
        return {"seat": self.seat, "card": self.card, "captured": list(self.captured), "choosing": self.choosing}


@dataclass(frozen=True, slots=True)
class CaptureChosen(WatchEvent):
    """``seat`` captured ``captured`` (one table card) with the drawn ``card``."""

    kind: ClassVar[WatchKind] = WatchKind.CHOSEN
    seat: int
    card: str
    captured: tuple[str, ...]

    def _fields(self) -> dict[str, Any]:
        return {"seat": self.seat, "card": self.card, "captured": list(self.captured)}


@dataclass(frozen=True, slots=True)
class YakuMade(WatchEvent):
    """``seat`` made ``yaku`` (its id, worth ``points``) this round: in its captures, or a hand yaku shown
    at the deal (the hand's cards are not told)."""

    kind: ClassVar[WatchKind] = WatchKind.YAKU
    seat: int
    yaku: str
    points: int

    def _fields(self) -> dict[str, Any]:
        return {"seat": self.seat, "yaku": self.yaku, "points": self.points}


@dataclass(frozen=True, slots=True)
class KoiKoiCalled(WatchEvent):
    """``seat`` called koi-koi with yaku worth ``total`` points, and plays on."""

    kind: ClassVar[WatchKind] = WatchKind.KOIKOI
    seat: int
    total: int

    def _fields(self) -> dict[str, Any]:
        return {"seat": self.seat, "total": self.total}


@dataclass(frozen=True, slots=True)
class ShobuCalled(WatchEvent):
    """``seat`` called shōbu with yaku worth ``total`` points: the round ends (it counts once
    :class:`RoundCounted` says so)."""

    kind: ClassVar[WatchKind] = WatchKind.SHOBU
    seat: int
    total: int

    def _fields(self) -> dict[str, Any]:
        return {"seat": self.seat, "total": self.total}


@dataclass(frozen=True, slots=True)
class RoundCounted(WatchEvent):
    """A round counts: ``result`` says how it ended, who was paid, and the pools after it (in sealed mode
    once both seats' disclosures of the round verified clean)."""

    kind: ClassVar[WatchKind] = WatchKind.ROUND_COUNTED
    result: RoundResult

    def _fields(self) -> dict[str, Any]:
        return {"result": self.result.to_json()}


@dataclass(frozen=True, slots=True)
class RoundStopped(WatchEvent):
    """Sealed mode: ``seat`` stopped round ``round`` before it was played out (its disclosure came first);
    the round does not count."""

    kind: ClassVar[WatchKind] = WatchKind.ROUND_STOPPED
    round: int
    seat: int

    def _fields(self) -> dict[str, Any]:
        return {"round": self.round, "seat": self.seat}


@dataclass(frozen=True, slots=True)
class Superseded(WatchEvent):
    """``messages`` of ``seat``'s messages left the line: the other seat's end message or stop, which crossed
    them, took their place (what they played is no longer on the board)."""

    kind: ClassVar[WatchKind] = WatchKind.SUPERSEDED
    seat: int
    messages: int

    def _fields(self) -> dict[str, Any]:
        return {"seat": self.seat, "messages": self.messages}


@dataclass(frozen=True, slots=True)
class FaultSeen(WatchEvent):
    """A signed message proves ``seat``'s fault ``code`` (or a sealed round's verification does). It decides
    nothing: the line ends by the other seat's ABORT, as for everyone."""

    kind: ClassVar[WatchKind] = WatchKind.FAULT
    seat: int
    code: Code
    message: str

    def _fields(self) -> dict[str, Any]:
        return {"seat": self.seat, "code": self.code.value, "message": self.message}


@dataclass(frozen=True, slots=True)
class WatchOver(WatchEvent):
    """The line has an outcome: ``report`` is the audit's verdict on the line followed (its ``referee``
    left out: the spectator's own is the same line)."""

    kind: ClassVar[WatchKind] = WatchKind.OVER
    report: AuditReport

    @classmethod
    def of(cls, report: AuditReport) -> WatchOver:
        return cls(replace(report, referee=None))

    def _fields(self) -> dict[str, Any]:
        out = self.report.to_json("")
        del out["file"]
        return {"report": out}


class Narration:
    """The engine's log told as watch events, one entry at a time (:meth:`take`), with what this round's
    captures made (the yaku told already) and the koi-koi calls of this round."""

    def __init__(self) -> None:
        self.captures = [0, 0]
        self.made: list[set[str]] = [set(), set()]
        self.calls = [0, 0]
        self.rounds_ended = 0

    def _captured(self, seat: int, mask: int) -> list[WatchEvent]:
        self.captures[seat] |= mask
        out: list[WatchEvent] = []
        for y, points in yaku_of(self.captures[seat]):
            if y.value not in self.made[seat]:
                self.made[seat].add(y.value)
                out.append(YakuMade(seat, y.value, points))
        return out

    def take(self, ev: EngineEvent) -> list[WatchEvent]:
        """The watch events of one engine log entry (a round's end is told by the spectator, once it
        counts; the match's end by its outcome)."""
        if isinstance(ev, Dealt):
            self.captures, self.made, self.calls = [0, 0], [set(), set()], [0, 0]
            return [RoundDealt(ev.round, ev.dealer)]
        if isinstance(ev, Redeal):
            return [Redealt(ev.round, ev.attempt)]
        if isinstance(ev, HandYaku):
            return [YakuMade(ev.seat, ev.yaku.value, HAND_YAKU_POINTS)]
        if isinstance(ev, Played):
            out: list[WatchEvent] = [CardPlayed(ev.seat, CARD_IDS[ev.card], card_ids(ev.taken))]
            if ev.taken:
                out += self._captured(ev.seat, ev.taken | 1 << ev.card)
            return out
        if isinstance(ev, Drawn):
            out = [CardDrawn(ev.seat, CARD_IDS[ev.card], card_ids(ev.taken))]
            if ev.taken:
                out += self._captured(ev.seat, ev.taken | 1 << ev.card)
            return out
        if isinstance(ev, DrawnChoice):
            return [CardDrawn(ev.seat, CARD_IDS[ev.card], (), choosing=True)]
        if isinstance(ev, Chosen):
            chosen = CaptureChosen(ev.seat, CARD_IDS[ev.card], card_ids(ev.taken))
            return [chosen, *self._captured(ev.seat, ev.taken | 1 << ev.card)]
        if isinstance(ev, KoiKoi):
            self.calls[ev.seat] += 1
            return [KoiKoiCalled(ev.seat, ev.total)]
        if isinstance(ev, Shobu):
            return [ShobuCalled(ev.seat, ev.total)]
        return []
