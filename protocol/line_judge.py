"""The sealed line's one judge (:class:`SealedObserver`): what the line accepts, refuses and expects, and
each round's verdict — the same code for a seat's view of its opponent and for the auditor.

Sans-IO. The judge follows the line without a secret: every message in its place and turn, every card the
line makes public opened and played on :meth:`Match.for_observer`, each round (:class:`LineRound`, which the
judge alone changes) verified once both seats disclosed.
"""

from __future__ import annotations

from ..engine.actions import Action, from_code
from ..engine.cards import CARD_IDS, four_of_a_month, mask_of
from ..engine.match import ActionRule, IllegalAction, Match, Settings
from .codes import Code
from .line_round import LineRound
from .line_vocabulary import LineError, LineKind, Sent, Verdict, draw_key, key_pair, move_body, move_keys
from .sealed import (
    DEALER_HAND,
    OTHER_HAND,
    TABLE,
    Claim,
    Disclose,
    Lock,
    PublishedKey,
    Role,
    SealedFault,
    SealedFormatError,
    Shuffle,
    ShuffleLock,
    StepOne,
    check_dealer_key,
    check_lock,
    check_shuffle,
    check_shuffle_lock,
    deck_position,
    is_valid_scalar,
    open_card,
    open_lock_keys,
)
from .steps import Step

__all__ = ["SealedObserver"]


def _illegal(action: Action, seat: int, e: IllegalAction) -> LineError:
    return LineError(Code.ILLEGAL_MOVE, f"{action.text} by seat {seat}: {e.message} ({e.rule})")


class SealedObserver:
    """A sealed line followed without a secret (the auditor's referee): every message in its place and turn,
    every card the line makes public opened (the table, hand-yaku claims, each played and drawn card) and
    played on :meth:`Match.for_observer`, and each round verified after its two disclosures. What needs a
    seat's secret (its hand, the deck) the disclosure proves. Where a public opening fails, the seat that
    received the message stops the round: its disclosure is what the line awaits next."""

    def __init__(self, settings: Settings, first_dealer: int, *, trusted: int | None = None, sid: bytes = b"") -> None:
        """``trusted``: the seat whose own messages the caller made itself (a seat's judge): their proofs are
        not checked and their steps not re-computed at the verification, which is otherwise the same (the
        auditor passes None). ``sid``: the session id the proofs bind (empty without envelopes)."""
        self.settings = settings
        self.trusted = trusted
        self.sid = sid
        self.match = Match.for_observer(settings, first_dealer)
        self._round = LineRound(self.match.round, self.match.dealer)
        self._mine = False  # the message being accepted is the trusted seat's own
        self.verdicts: list[Verdict] = []
        self.deals: dict[tuple[int, int], tuple[int, ...]] = {}
        """Each disclosed deal attempt's order, by (round, attempt): what the disclosures revealed."""

    @property
    def verdict(self) -> Verdict | None:
        v = self.verdicts[-1] if self.verdicts else None
        return v if v is not None and (v.fault is not None or v.stopped_by is not None) else None

    @property
    def finished(self) -> bool:
        return self.verdict is not None or (self.match.is_over and self._round.verdict is not None)

    @property
    def judge(self) -> SealedObserver:
        """The line's judge: this observer itself (a :class:`SealedSeat`'s is its ``line``)."""
        return self

    @property
    def current(self) -> LineRound:
        """The current round of the line (the judge's to change: read it, never write it)."""
        return self._round

    @property
    def stop_due(self) -> int | None:
        """The seat whose disclosure a failed public opening made due (it must stop the round), or None."""
        r = self._round
        return r.stop_due if r.stopped_by is None else None

    def shape_fault(self, seat: int, e: SealedFormatError) -> None:
        """A signed step of the wrong shape, met without an envelope (no ABORT can cite it): the round's
        verification names it against its signer, whatever follows."""
        r = self._round
        if r.shape_fault is None:
            r.shape_fault = SealedFault(Code.BAD_SHAPE, r.role(seat), e.step, None, e.message, seat)

    @property
    def round(self) -> int:
        return self._round.number

    @property
    def dealer(self) -> int:
        return self._round.dealer

    def stopped(self) -> bool:
        return self._round.stopped_by is not None

    def disclosed(self, seat: int) -> bool:
        return seat in self._round.disclosed

    def expected(self) -> tuple[int, LineKind] | None:
        if self.finished:
            return None
        return self._round.next_message(self.match)

    def context(self) -> bytes:
        """What the proofs of the current deal attempt bind: the session, the round, the attempt."""
        return self._round.context(self.sid)

    def _refuse(self, f: SealedFault | None) -> None:
        """A fault the message shows at once against the line before it: its signer's, provable by it alone
        (refused: :class:`LineError`). The trusted seat's own message is never refused by its own judge: a
        seat that sent it goes on with the line it really sent, where the fault stops the round."""
        if f is not None and not self._mine:
            raise LineError(f.rule, f.with_seat(self._round.dealer).message)

    def accept(self, msg: Sent) -> None:
        """The next message of the line (either seat's), or :class:`LineError` (nothing changes: a fault the
        message proves at once names its rule, spec/sealed.md §7) or :class:`SealedFormatError` (a signed step
        of the wrong shape)."""
        r = self._round
        if msg.kind is LineKind.DISCLOSE:
            self._disclose(msg)
            return
        exp = self.expected()
        if exp is None:
            raise LineError(Code.UNEXPECTED_MESSAGE, f"a {msg.kind.value} after the line finished")
        if exp[0] != msg.seat:
            raise LineError(Code.OUT_OF_TURN, f"a {msg.kind.value} from seat {msg.seat}; seat {exp[0]} is due")
        if exp[1] is not msg.kind:
            raise LineError(Code.UNEXPECTED_MESSAGE, f"a {msg.kind.value}; a {exp[1].value} is due")
        a = r.att
        mine = self._mine = msg.seat == self.trusted
        if msg.kind is LineKind.SHUFFLE:
            s1 = Shuffle.from_body(msg.body)
            if not mine:
                self._refuse(check_shuffle(self.context(), s1))
            a.s1, a.one = s1, StepOne(s1)
        elif msg.kind is LineKind.SHUFFLE_LOCK:
            s2 = ShuffleLock.from_body(msg.body)
            assert a.one is not None
            if not mine:
                self._refuse(check_shuffle_lock(self.context(), a.one, s2))
            a.s2 = s2
        elif msg.kind is LineKind.LOCK:
            self._on_lock(Lock.from_body(msg.body), msg.seat)
        elif msg.kind is LineKind.CLAIM:
            self._on_claim(Claim.from_body(msg.body), msg.seat)
        elif msg.kind is LineKind.MOVE:
            self._on_move(msg)
        else:
            self._on_draw(msg)

    def _due_stop(self, receiver: int) -> None:
        self._round.stop_due = receiver

    def _dealer_key(self, step: Step, pos: int, key: bytes) -> None:
        a = self._round.att
        assert a.one is not None and a.s2 is not None
        self._refuse(check_dealer_key(a.one, a.s2, pos, key, step))

    def _on_lock(self, s3: Lock, sender: int) -> None:
        r = self._round
        a = r.att
        assert a.s2 is not None
        if sender != self.trusted:
            self._refuse(check_lock(self.context(), a.s2, s3))
        o = r.dealer
        opened = open_lock_keys(a.s2, s3)  # K's table and claim keys, with O's proven ones
        if isinstance(opened, SealedFault):
            self._refuse(opened)
            opened = {}  # (the trusted seat's own wrong key: its cards are not these)
        hand = None if s3.claim is None else mask_of(opened[p] for p in OTHER_HAND if p in opened)
        mask = mask_of(opened[p] for p in TABLE if p in opened)
        if four_of_a_month(mask) and s3.claim is not None:
            self._refuse(
                SealedFault(Code.FALSE_HAND_YAKU, Role.OTHER, Step.LOCK, None, "a claim in a deal that is redealt")
            )
        trial = self.match.copy()
        try:
            trial.begin_observed_deal(mask)
        except IllegalAction:
            a.s3 = s3
            self._due_stop(o)
            return
        if not four_of_a_month(mask):
            try:
                trial.claim_hand_yaku(sender, hand)
            except IllegalAction as e:
                self._refuse(SealedFault(Code.FALSE_HAND_YAKU, Role.OTHER, Step.LOCK, None, e.message))
        a.s3 = s3
        self.match.begin_observed_deal(mask)
        if four_of_a_month(mask):
            if not r.redeal():
                self._due_stop(o)  # the cap: the dealer stops the round
            return
        try:
            self.match.claim_hand_yaku(sender, hand)
        except IllegalAction:  # (the trusted seat's own false claim: refused above for anyone else's)
            self._due_stop(o)

    def _on_claim(self, s4: Claim, sender: int) -> None:
        r = self._round
        a = r.att
        assert a.s3 is not None
        hand: int | None = None
        if s4.keys is not None:
            for i, p in enumerate(DEALER_HAND):
                self._dealer_key(Step.CLAIM, p, s4.keys[i])
            cards = [open_card(a.s3.points[p], a.s3.key_for(p), s4.keys[i]) for i, p in enumerate(DEALER_HAND)]
            if any(c is None for c in cards):  # K's keys for O's hand were wrong: O should have stopped
                a.s4 = s4
                self._due_stop(1 - sender)
                return
            hand = mask_of(c for c in cards if c is not None)
            trial = self.match.copy()
            try:
                trial.claim_hand_yaku(sender, hand)
            except IllegalAction as e:
                self._refuse(SealedFault(Code.FALSE_HAND_YAKU, Role.DEALER, Step.CLAIM, None, e.message))
        a.s4 = s4
        try:
            self.match.claim_hand_yaku(sender, hand)
        except IllegalAction:
            self._due_stop(1 - sender)
            return
        self._after_engine()

    def _on_move(self, msg: Sent) -> None:
        r, m = self._round, self.match
        code, state_hash, keys = move_body(msg)
        action = from_code(code)
        if state_hash != m.state_hash():
            raise LineError(Code.DESYNC, f"the state before {action.text} is not the line's")
        mover_role = r.role(msg.seat)
        played = move_keys(action, keys, mover_role)
        if played is None:
            try:
                m.apply(action, msg.seat)
            except IllegalAction as e:
                raise _illegal(action, msg.seat, e) from None
            self._after_engine()
            return
        pos, hand_key, deck_key = played
        if pos in r.played:
            raise LineError(Code.ILLEGAL_MOVE, f"position {pos} was played already")
        a = r.att
        assert a.s2 is not None and a.s3 is not None
        d = deck_position(r.draws)
        if mover_role is Role.DEALER:
            self._dealer_key(Step.TURN, pos, hand_key)
            self._dealer_key(Step.TURN, d, deck_key)
        other = a.s3.key_for(pos) if mover_role is Role.DEALER else a.s2.key_for(pos)
        card = open_card(a.s3.points[pos], *key_pair(hand_key, other, mover_role))
        stop = card != action.card  # no card: O's key checked, K's key for O's hand was wrong (O should have stopped)
        if card is None and mover_role is Role.OTHER:  # O's key for K's hand was proven with step 2
            self._refuse(SealedFault(Code.WRONG_PUBLIC_KEY, mover_role, Step.TURN, pos, "the keys open no card"))
        if card is not None and card != action.card:
            detail = f"the keys open {CARD_IDS[card]}, not {CARD_IDS[action.card]}"
            self._refuse(SealedFault(Code.WRONG_CARD, mover_role, Step.TURN, pos, detail))
        if not stop:
            try:
                m.apply(action, msg.seat)
            except IllegalAction as e:
                if e.rule is not ActionRule.CARD_ALREADY_SEEN:
                    raise _illegal(action, msg.seat, e) from None
                stop = True
        r.play(msg.seat, pos, action.card, hand_key, deck_key, opened=not stop)

    def _on_draw(self, msg: Sent) -> None:
        r = self._round
        key = draw_key(msg)
        d = deck_position(r.draws)
        mover = 1 - msg.seat
        role = r.role(msg.seat)
        if not is_valid_scalar(key):
            self._refuse(
                SealedFault(Code.BAD_SCALAR, role, Step.TURN, d, "a draw key that is not a canonical non-zero scalar")
            )
            r.draw_due = None
            self._due_stop(mover)
            return
        if role is Role.DEALER:
            self._dealer_key(Step.TURN, d, key)
        mover_key = r.key_of(r.role(mover), d)
        a = r.att
        assert a.s3 is not None
        card = open_card(a.s3.points[d], *key_pair(key, mover_key, role))
        if card is None and role is Role.OTHER:  # O's deck key came with its play, checked there
            self._refuse(SealedFault(Code.WRONG_PUBLIC_KEY, role, Step.TURN, d, "the keys open no card"))
        r.draw_due = None
        r.published.append(PublishedKey(role, d, key))
        if card is None:  # K's deck key was wrong (O's is checked): the mover, K, must stop
            self._due_stop(mover)
            return
        try:
            self.match.reveal_draw(card)
        except IllegalAction:
            self._due_stop(mover)
            return
        r.draws += 1
        self._after_engine()

    def _after_engine(self) -> None:
        m = self.match
        if m.is_over or m.round != self._round.number:
            self._round.ended = True

    def _disclose(self, msg: Sent) -> None:
        r = self._round
        d = Disclose.from_body(msg.body)
        if self.finished:
            raise LineError(Code.UNEXPECTED_MESSAGE, "a disclosure after the line finished")
        if msg.seat in r.disclosed:
            raise LineError(Code.UNEXPECTED_MESSAGE, f"seat {msg.seat} disclosed round {r.number} already")
        exp = self.expected()
        if exp != (msg.seat, LineKind.DISCLOSE) and not r.is_open():
            raise LineError(Code.OUT_OF_TURN, f"seat {msg.seat}'s disclosure is not due now")
        v = r.disclose(msg.seat, d.secrets, None if self.trusted is None else r.role(self.trusted))
        if v is None:
            return
        self.verdicts.append(v)
        if v.fault is None:
            self.deals.update(r.orders())
        if v.fault is None and v.stopped_by is None and not self.match.is_over:
            self._round = LineRound(self.match.round, self.match.dealer)
