"""One round of the sealed line: its deal attempts and what its play made public (:class:`LineRound`), its
verification once both seats disclosed (:func:`verify_line_round`), and the deals the disclosures revealed
(:class:`RevealedDeals`).

Sans-IO. A :class:`LineRound` is the line's judge's (:class:`~koikoi.protocol.line_judge.SealedObserver`):
the judge alone changes it, and a seat (:class:`~koikoi.protocol.line_seat.SealedSeat`) reads its judge's
round for what its own secrets need (the attempt, the positions played, the draws). Who sends next
(:meth:`LineRound.next_message`) is one rule for a seat and for the auditor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..engine.cards import CARD_IDS
from ..engine.deal import Deal, deal_from_order
from ..engine.match import ActionRule, IllegalAction, Match
from .codes import Code
from .line_vocabulary import LineKind, Verdict
from .proofs import context as proof_context
from .sealed import (
    DEALER_HAND,
    MAX_ATTEMPTS,
    OTHER_HAND,
    Attempt,
    Claim,
    Lock,
    PublishedKey,
    Role,
    SealedFault,
    Shuffle,
    ShuffleLock,
    StepOne,
    deck_position,
    derive,
    shuffle_points,
    verify_round,
)
from .steps import Step

__all__ = ["DealAttempt", "LineRound", "RevealedDeals", "verify_line_round"]


@dataclass(slots=True)
class DealAttempt:
    """One deal attempt's steps as the line took them (None: not yet); ``redeal``: its table was redealt."""

    s1: Shuffle | None = None
    one: StepOne | None = None
    s2: ShuffleLock | None = None
    s3: Lock | None = None
    s4: Claim | None = None
    redeal: bool = False


@dataclass(slots=True)
class LineRound:
    """Round ``number`` of the line, dealt by ``dealer``: its deal attempts (the last is the current one),
    the keys its play published, the positions played and the draws made, who must send a DRAW or stop
    (``draw_due``, ``stop_due``), whether play ended, each seat's disclosure, who stopped the round, and its
    verdict once both disclosed."""

    number: int
    dealer: int
    attempts: list[DealAttempt] = field(default_factory=lambda: [DealAttempt()])
    published: list[PublishedKey] = field(default_factory=list)
    played: set[int] = field(default_factory=set)
    plays: list[tuple[int, int, int]] = field(default_factory=list)
    draws: int = 0
    draw_due: int | None = None
    stop_due: int | None = None  # the seat a failed public opening makes stop the round (its disclosure is due)
    ended: bool = False
    disclosed: dict[int, tuple[bytes, ...]] = field(default_factory=dict)
    stopped_by: int | None = None
    verdict: Verdict | None = None
    shape_fault: SealedFault | None = None  # a signed step of the wrong shape: its signer's fault, whatever follows

    def role(self, seat: int) -> Role:
        return Role.DEALER if seat == self.dealer else Role.OTHER

    def seat(self, role: Role) -> int:
        return role.seat(self.dealer)

    @property
    def att(self) -> DealAttempt:
        """The current deal attempt."""
        return self.attempts[-1]

    @property
    def at(self) -> tuple[int, int]:
        """(round, attempt) of the current deal attempt: what a seat's secrets for it derive from."""
        return self.number, len(self.attempts) - 1

    @property
    def begun(self) -> int:
        """The deal attempts begun (each SHUFFLE): a seat discloses one round secret for each."""
        return sum(a.s1 is not None for a in self.attempts)

    def context(self, sid: bytes) -> bytes:
        """What the proofs of the current deal attempt bind: the session, the round, the attempt."""
        return proof_context(sid, self.number, len(self.attempts) - 1)

    def play(self, seat: int, pos: int, card: int, hand_key: bytes, deck_key: bytes, *, opened: bool) -> None:
        """``seat``'s play of ``card`` from ``pos`` with its keys for the position and the next deck card, both
        published. ``opened``: the keys open the card it names and the judge's match took it, so the other
        seat's DRAW is due; else the other seat must stop the round."""
        role = self.role(seat)
        self.plays.append((seat, pos, card))
        self.published.extend(
            [PublishedKey(role, pos, hand_key), PublishedKey(role, deck_position(self.draws), deck_key)]
        )
        if not opened:
            self.stop_due = 1 - seat
            return
        self.played.add(pos)
        self.draw_due = 1 - seat

    def key_of(self, role: Role, position: int) -> bytes:
        """The key ``role`` published last for ``position`` this round."""
        return next(k.key for k in reversed(self.published) if k.position == position and k.role is role)

    def redeal(self) -> bool:
        """The current attempt's table is redealt: the next attempt begins (False at the cap: none does)."""
        self.att.redeal = True
        if len(self.attempts) >= MAX_ATTEMPTS:
            return False
        self.attempts.append(DealAttempt())
        return True

    def is_open(self) -> bool:
        """True while neither a seat stopped the round nor its play ended (a stop is still possible)."""
        return self.stopped_by is None and not self.ended

    def next_message(self, match: Match) -> tuple[int, LineKind] | None:
        """Who sends the round's next message, and of what kind (None: nothing more), ``match`` being the
        judge's: one rule for a seat and for the auditor's observer."""
        if self.stopped_by is None and self.stop_due is not None:
            return self.stop_due, LineKind.DISCLOSE
        if self.stopped_by is None and self.draw_due is not None:
            return self.draw_due, LineKind.DRAW
        if not self.is_open():
            first = self.stopped_by if self.stopped_by is not None else self._first_discloser(match)
            for s in (first, 1 - first):
                if s not in self.disclosed:
                    return s, LineKind.DISCLOSE
            return None
        a = self.att
        k, o = self.seat(Role.OTHER), self.seat(Role.DEALER)
        if a.s1 is None:
            return k, LineKind.SHUFFLE
        if a.s2 is None:
            return o, LineKind.SHUFFLE_LOCK
        if a.s3 is None:
            return k, LineKind.LOCK
        if a.s4 is None:
            return o, LineKind.CLAIM
        return match.to_move, LineKind.MOVE

    def _first_discloser(self, match: Match) -> int:
        """Who discloses a played-out round first: the next round's dealer (the engine has already moved the
        deal to it), so the other seat — the next round's K — discloses last and sends its next SHUFFLE with
        it, one hop a round less (spec/sealed-line.md §2); after the last round, the round's dealer."""
        return self.dealer if match.is_over else match.dealer

    def disclose(self, seat: int, secrets: tuple[bytes, ...], trusted: Role | None) -> Verdict | None:
        """``seat``'s disclosure (a stop when the round is open); the round's verdict once both disclosed
        (``trusted``: the role whose own steps the verification takes as made), else None."""
        if self.is_open():
            self.stopped_by = seat  # a stop: due after a failed public opening, or any seat's own finding
        self.stop_due = None
        self.disclosed[seat] = secrets
        if len(self.disclosed) < 2:
            return None
        if self.shape_fault is not None:
            v = Verdict(self.number, self.shape_fault, self.stopped_by, None, len(self.attempts) - 1)
        else:
            v = verify_line_round(
                self.attempts,
                self.disclosed,
                self.published,
                self.plays,
                self.dealer,
                self.number,
                self.stopped_by,
                trusted,
            )
        self.verdict = v
        return v

    def orders(self) -> dict[tuple[int, int], tuple[int, ...]]:
        """Each deal attempt's card order, by (round, attempt), that both disclosures reveal."""
        out: dict[tuple[int, int], tuple[int, ...]] = {}
        dealer, disclosed = self.dealer, self.disclosed
        for i, a in enumerate(self.attempts):
            if a.s2 is not None and i < len(disclosed[dealer]) and i < len(disclosed[1 - dealer]):
                ks, os_ = derive(disclosed[1 - dealer][i]), derive(disclosed[dealer][i])
                out[self.number, i] = tuple(ks.permutation[os_.permutation[p]] for p in range(48))
        return out


class RevealedDeals:
    """A deal source of the deals a sealed line's disclosures revealed (for a full :class:`Match` replaying
    the line: ``koikoi replay``); a deal never disclosed is :class:`IllegalAction` ``not_disclosed``."""

    def __init__(self, orders: dict[tuple[int, int], tuple[int, ...]]) -> None:
        self.orders = orders

    def deal(self, round_number: int, attempt: int) -> Deal:
        order = self.orders.get((round_number, attempt))
        if order is None:
            raise IllegalAction(ActionRule.NOT_DISCLOSED, f"round {round_number}'s deal was never disclosed")
        return deal_from_order(order)

    def first_dealer_cards(self, attempt: int) -> tuple[int, int]:
        raise IllegalAction(ActionRule.NO_DEAL_SOURCE, "sealed mode turns no cards for the first dealer")


def verify_line_round(
    attempts: Sequence[DealAttempt],
    disclosed: dict[int, tuple[bytes, ...]],
    published: Sequence[PublishedKey],
    plays: Sequence[tuple[int, int, int]],
    dealer: int,
    number: int,
    stopped_by: int | None,
    trusted: Role | None,
) -> Verdict:
    """One round's verification from its steps, both disclosures and the keys published during play."""
    k_seat = 1 - dealer
    steps: list[Attempt] = []
    begun = 0  # a last attempt stopped at step 1 (after a redeal): K disclosed its secret too
    for a in attempts:
        if a.s1 is None:
            break
        if a.s2 is None:  # stopped at step 1: the shuffle alone, against K's disclosed secret
            f: SealedFault | None = None  # (its argument was checked when it came)
            ks = disclosed[k_seat]
            n = len(steps)
            if len(ks) <= n or not isinstance(ks[n], bytes) or len(ks[n]) != 32:
                f = SealedFault(Code.BAD_SCALAR, Role.OTHER, Step.DISCLOSE, None, "a round secret is 32 bytes")
            elif trusted is not Role.OTHER and shuffle_points(derive(ks[n])) != a.s1.points:
                f = SealedFault(Code.SECRET_MISMATCH, Role.OTHER, Step.SHUFFLE, None, "not the secret's shuffle")
            if f is not None:
                return Verdict(number, f.with_seat(dealer), stopped_by, None, len(steps))
            begun = 1
            break
        steps.append(Attempt(a.s1, a.s2, a.s3, a.s4))
    if not steps:
        fault = None if stopped_by is None else _unfounded(stopped_by, dealer)
        return Verdict(number, fault, stopped_by, None)
    n = len(steps)
    last = n - 1 + begun  # the round's last attempt: its play, its stop
    ks, os_ = (tuple(disclosed[k_seat])[:n], tuple(disclosed[dealer])[:n])
    k_ok = len(disclosed[k_seat]) == n + begun  # one secret for each attempt begun (each SHUFFLE)
    o_ok = len(disclosed[dealer]) == n + begun
    if not (k_ok and o_ok):
        short = k_seat if not k_ok else dealer
        f = SealedFault(
            Code.BAD_SHAPE, Role.OTHER if short == k_seat else Role.DEALER, Step.DISCLOSE, None, "one secret per deal"
        )
        return Verdict(number, f.with_seat(dealer), stopped_by, None, last)
    res = verify_round(steps, ks, os_, published, dealer=dealer, trusted=trusted)
    if isinstance(res, SealedFault):
        return Verdict(number, res, stopped_by, None, last if res.attempt is None else res.attempt)
    for seat, pos, card in plays:
        if pos not in (DEALER_HAND if seat == dealer else OTHER_HAND) or res.order[pos] != card:
            role = Role.DEALER if seat == dealer else Role.OTHER
            f = SealedFault(Code.WRONG_CARD, role, Step.TURN, pos, f"the position does not hold {CARD_IDS[card]}", seat)
            return Verdict(number, f, stopped_by, res.deal, last)
    fault = None if stopped_by is None else _unfounded(stopped_by, dealer)
    return Verdict(number, fault, stopped_by, res.deal, last)


def _unfounded(stopper: int, dealer: int) -> SealedFault:
    role = Role.DEALER if stopper == dealer else Role.OTHER
    return SealedFault(Code.UNFOUNDED_STOP, role, Step.DISCLOSE, None, "the verification finds no fault", stopper)
