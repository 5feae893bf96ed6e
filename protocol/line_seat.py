"""One seat's side of the sealed line (:class:`SealedSeat`): the line's judge with this seat's secrets
plugged in.

Sans-IO. The seat makes its own messages (deal steps, moves with their keys, draw keys, disclosures), learns
its hand and the cards its secrets open on its seat-side :class:`Match`, and stops the round when a check
only its secrets can make fails; what the line accepts and each round's verdict stay its judge's
(:class:`~koikoi.protocol.line_judge.SealedObserver`, the auditor's code).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..engine.actions import Action, ActionKind, NotationError, from_code
from ..engine.cards import CARD_IDS, four_of_a_month, mask_of
from ..engine.match import IllegalAction, Match, Phase, Settings
from .codes import Code
from .line_judge import SealedObserver
from .line_round import DealAttempt, LineRound
from .line_vocabulary import AUTOMATIC, LineError, LineKind, Sent, Verdict, hand_positions, key_pair
from .sealed import (
    DEALER_HAND,
    OTHER_HAND,
    TABLE,
    Claim,
    Lock,
    PublishedKey,
    Role,
    SealedFault,
    SealedFormatError,
    SeatSecrets,
    Shuffle,
    ShuffleLock,
    claim_step,
    deck_position,
    derive,
    must_claim,
    open_card,
    open_claim,
    open_lock,
    receive_shuffle,
    receive_shuffle_lock,
    round_secret,
    shuffle_step,
)

__all__ = ["SealedSeat"]


class SealedSeat:
    """One seat's side of a sealed match: the line's one judge (:class:`SealedObserver`, the same code the
    auditor runs) with this seat's secrets plugged in.

    The judge alone decides what the line accepts, refuses and expects, and each round's verdict. The seat
    adds only what needs its secrets: it makes its own messages (deal steps, moves with their keys, draw
    keys, disclosures), learns its own hand and the cards it opens (its seat-side :class:`Match`, whose
    :meth:`~Match.view` the player sees), and stops the round — discloses at once — when a check only its
    secrets can make fails (its hand does not open, a card it holds turns up again). Whatever it stops for,
    the round's verification names the fault, the judge's for everyone.

    ``pending()`` gives the messages this seat sends by itself now (deal steps, the draw key, the
    disclosure); ``move(action)`` a decision of the player; ``receive(sent)`` the other seat's message.
    """

    def __init__(self, settings: Settings, seat: int, first_dealer: int, secret: bytes, *, sid: bytes = b"") -> None:
        """``sid``: the session id every proof's challenge binds (spec/sealed.md §5; empty without envelopes)."""
        if not isinstance(secret, bytes) or len(secret) != 32:
            raise ValueError("a match secret is exactly 32 bytes")
        self.seat = seat
        self.settings = settings
        self.line = SealedObserver(settings, first_dealer, trusted=seat, sid=sid)
        self.match = Match.for_seat(settings, seat, first_dealer)
        self._secret = secret
        self._at = (self.line.round, 0)  # the (round, attempt) whose secrets and cards these are
        self._sec = self._derive()
        self._cards: dict[int, int] = {}
        self._prepared: Sent | None = None  # the reply this seat's secrets made to the other seat's message
        self._stopping: str | None = None  # why this seat stops the round (its disclosure is due at once)
        self._made: list[Sent] = []  # made by pending()/move(), not yet taken by the line's envelope
        self._att = self._round.att

    def __repr__(self) -> str:  # never print a secret by accident
        return f"SealedSeat(seat {self.seat}, round {self.round})"

    @classmethod
    def resume(
        cls, settings: Settings, seat: int, first_dealer: int, secret: bytes, line: Sequence[Sent], *, sid: bytes = b""
    ) -> SealedSeat:
        """The seat after ``line`` (its transcript): the other seat's messages are received again, this
        seat's own are made again from its secret and must be the same (else :class:`LineError`)."""
        s = cls(settings, seat, first_dealer, secret, sid=sid)
        for msg in line:
            if msg.seat != seat:
                s.receive(msg)
            else:
                s.accept_own(msg)
        return s

    # -- queries (the judge's) -------------------------------------------------

    @property
    def _round(self) -> LineRound:
        """The judge's current round (read only: the judge changes it)."""
        return self.line.current

    @property
    def round(self) -> int:
        return self.line.round

    @property
    def dealer(self) -> int:
        """The current round's dealer."""
        return self.line.dealer

    @property
    def role(self) -> Role:
        return self._round.role(self.seat)

    @property
    def judge(self) -> SealedObserver:
        """The line's judge: the same code, and the same verdicts, as the auditor's."""
        return self.line

    @property
    def verdicts(self) -> list[Verdict]:
        return self.line.verdicts

    @property
    def verdict(self) -> Verdict | None:
        """The last round's verification when it ended the match (a fault, or a stop); else None."""
        return self.line.verdict

    @property
    def finished(self) -> bool:
        return self.line.finished

    def stopped(self) -> bool:
        """True once the current round is stopped (only disclosures count now)."""
        return self.line.stopped()

    def disclosed(self, seat: int) -> bool:
        """True once ``seat`` has disclosed the current round."""
        return self.line.disclosed(seat)

    def made(self) -> LineKind | None:
        """The kind of the first message this seat made that the line has not taken yet (None: none)."""
        return self._made[0].kind if self._made else None

    def owes_stop(self) -> bool:
        """True when this seat stops the round now: its disclosure is its next message, whoever's turn it is."""
        return self._stopping is not None and self._stop_open()

    def _stop_open(self) -> bool:
        r = self._round
        return not self.finished and r.is_open() and self.seat not in r.disclosed

    def known_cards(self) -> dict[int, int]:
        """Position → card for every position this seat has opened this round."""
        return dict(self._cards)

    def secrets_now(self) -> SeatSecrets:
        """This seat's secrets for the current deal attempt (for tests: what it could try)."""
        return self._sec

    def published(self) -> list[PublishedKey]:
        return list(self._round.published)

    def expected(self) -> tuple[int, LineKind] | None:
        """Who sends the next message of the line, and of what kind (None: nothing more): the judge's, but this
        seat's own stop first."""
        if self.owes_stop():
            return self.seat, LineKind.DISCLOSE
        return self.line.expected()

    # -- sending ---------------------------------------------------------------

    def pending(self) -> list[Sent]:
        """Every message this seat sends by itself now, in order (empty when it waits or must decide)."""
        out: list[Sent] = []
        while True:
            exp = self.expected()
            if exp is None or exp[0] != self.seat or exp[1] not in AUTOMATIC:
                return out
            msg = self._make(exp[1])
            if msg is None:
                continue  # its secrets found a fault in what it answers: it stops instead
            self._take(msg)
            self._made.append(msg)
            out.append(msg)

    def move(self, action: Action) -> Sent:
        """This seat's decision (a play carries its key for the played position and for the next deck card)."""
        if self.expected() != (self.seat, LineKind.MOVE):
            raise LineError(Code.OUT_OF_TURN, "this seat has no move to make now")
        r, m = self._round, self.match
        before = m.state_hash()
        keys: list[Any] = []
        if action.kind is ActionKind.PLAY:
            mine = hand_positions(self.role)
            pos = next((p for p in mine if p not in r.played and self._cards.get(p) == action.card), None)
            if pos is None:
                raise LineError(Code.ILLEGAL_MOVE, f"{CARD_IDS[action.card]} is not in this seat's hand")
            keys = [pos, self._sec.key(pos), self._sec.key(deck_position(r.draws))]
        trial = m.copy()
        try:
            trial.apply(action, self.seat)
        except IllegalAction as e:
            raise LineError(Code.ILLEGAL_MOVE, f"{action.text}: {e.message} ({e.rule})") from None
        made = Sent(self.seat, LineKind.MOVE, (action.code, before, keys))
        self._take(made)
        self._made.append(made)
        return made

    def accept_own(self, msg: Sent) -> None:
        """This seat's own message as the line holds it: the one :meth:`pending` or :meth:`move` made last
        (nothing to do), or — rebuilding from a transcript — made again now from the secret, which must
        give the same message (else :class:`LineError` ``replay``)."""
        if self._made and self._made[0] == msg:
            del self._made[0]
            return
        self._made.clear()
        if msg.kind is LineKind.MOVE:
            try:
                made = self.move(from_code(msg.body[0]))
            except NotationError:
                raise LineError(Code.MALFORMED_MESSAGE, "a move of this seat's that is no action") from None
        else:
            if msg.kind is LineKind.DISCLOSE and self._stopping is None and self._stop_open():
                exp = self.line.expected()
                if exp != (self.seat, LineKind.DISCLOSE):
                    self._stopping = "this seat stopped the round"
            exp = self.expected()
            if exp != (self.seat, msg.kind):
                raise LineError(Code.UNEXPECTED_MESSAGE, f"this seat's {msg.kind.value} is not due in the line")
            remade = self._make(msg.kind)
            if remade is None:
                raise LineError(Code.REPLAY, f"this seat's {msg.kind.value} is not what its secret makes")
            self._take(remade)
            made = remade
        self._made.clear()
        if made != msg:
            raise LineError(Code.REPLAY, f"this seat's {msg.kind.value} is not what its secret makes")

    def _make(self, kind: LineKind) -> Sent | None:
        """This seat's message of ``kind``, due now; None when its secrets found a fault in the message it
        answers (it stops: its disclosure is due instead)."""
        r = self._round
        if kind is LineKind.DISCLOSE:
            secrets = [round_secret(self._secret, r.number, n) for n in range(r.begun)]  # one for each SHUFFLE
            return Sent(self.seat, kind, (secrets,))
        if kind is LineKind.SHUFFLE:
            return Sent(self.seat, kind, tuple(shuffle_step(self._sec, self.line.context()).body()))
        prepared, self._prepared = self._prepared, None
        if prepared is None or prepared.kind is not kind:
            raise AssertionError(f"no {kind.value} prepared")  # the receive that made it due prepares it
        return prepared

    def _take(self, msg: Sent) -> None:
        """One of this seat's own messages into the line (the judge's checks are this seat's too)."""
        self.line.accept(msg)
        if msg.kind is LineKind.MOVE:
            self.match.apply(from_code(msg.body[0]), self.seat)  # tried on a copy when it was made
        self._follow()

    # -- receiving -------------------------------------------------------------

    def receive(self, msg: Sent) -> bool:
        """The other seat's message: the judge's checks (:class:`LineError`, or :class:`SealedFormatError` for
        a step of the wrong shape, nothing changing), then what this seat's secrets learn from it. False when
        it crossed this seat's stop and is set aside (without envelopes; with them the stop's DISCLOSE
        supersedes it, and a referee refuses it out of turn before it gets here)."""
        if msg.seat != 1 - self.seat:
            raise LineError(Code.UNEXPECTED_MESSAGE, "a message signed by this seat's own seat")
        if msg.kind is not LineKind.DISCLOSE and (self.owes_stop() or self.line.stop_due == self.seat):
            return False
        self._att = self._round.att  # the deal attempt the message belongs to (a redeal starts the next one)
        try:
            self.line.accept(msg)
        except SealedFormatError as e:
            if self._round.stopped_by is not None or msg.kind is LineKind.DISCLOSE:
                raise
            # without an envelope (no ABORT to send) the signed step itself proves its signer's fault: this
            # seat stops, and the verification names the shape (never the stopper)
            self.line.shape_fault(msg.seat, e)
            self._stopping = f"bad_shape: {e.message}"
            return True
        if self._round.stopped_by is not None:
            return True  # the round is stopped: only the disclosures count now
        learn = {
            LineKind.SHUFFLE: self._on_shuffle,
            LineKind.SHUFFLE_LOCK: self._on_shuffle_lock,
            LineKind.LOCK: self._on_lock,
            LineKind.CLAIM: self._on_claim,
            LineKind.MOVE: self._on_move,
            LineKind.DRAW: self._on_draw,
        }.get(msg.kind)
        if learn is not None and self.line.stop_due != self.seat:
            learn(msg)
        self._follow()
        return True

    def _stop(self, reason: str) -> None:
        if self._stopping is None:
            self._stopping = reason
        self._prepared = None

    def _fault(self, f: SealedFault) -> None:
        self._stop(f.with_seat(self._round.dealer).message)

    def _on_shuffle(self, msg: Sent) -> None:
        res = receive_shuffle(self._sec, Shuffle.from_body(msg.body), self.line.context())
        self._prepared = Sent(self.seat, LineKind.SHUFFLE_LOCK, tuple(res.body()))

    def _on_shuffle_lock(self, msg: Sent) -> None:
        a = self._att
        assert a.one is not None
        res = receive_shuffle_lock(self._sec, a.one, ShuffleLock.from_body(msg.body), self.line.context())
        if isinstance(res, SealedFault):
            self._fault(res)
            return
        seen, lock = res
        self._cards = dict(seen)
        if self._begin_deal():
            self._prepared = Sent(self.seat, LineKind.LOCK, tuple(lock.body()))

    def _begin_deal(self) -> bool:
        hand = mask_of(self._cards[p] for p in hand_positions(self.role))
        table = mask_of(self._cards[p] for p in TABLE)
        try:
            self.match.begin_deal(hand, table)
        except IllegalAction as e:
            self._stop(f"the deal is not a deal: {e.message}")
            return False
        return True

    def _on_lock(self, msg: Sent) -> None:
        a = self._att
        s3 = Lock.from_body(msg.body)
        assert a.s2 is not None
        res = open_lock(self._sec, a.s2, s3)
        if isinstance(res, SealedFault):
            self._fault(res)
            return
        self._cards = dict(res)
        if not self._begin_deal():
            return
        if four_of_a_month(mask_of(res[p] for p in TABLE)):
            return  # a redeal (the judge started the next attempt, or at the cap awaits this seat's stop)
        m = self.match
        if m.phase is Phase.CLAIM:
            other = None if s3.claim is None else mask_of(res[p] for p in OTHER_HAND)
            try:
                m.claim_hand_yaku(1 - self.seat, other)
            except IllegalAction as e:
                self._stop(f"{e.rule}: seat {1 - self.seat}'s claim: {e.message}")
                return
        hand = [res[p] for p in DEALER_HAND]
        table = [res[p] for p in TABLE]
        self._prepared = Sent(self.seat, LineKind.CLAIM, tuple(claim_step(self._sec, must_claim(hand, table)).body()))

    def _on_claim(self, msg: Sent) -> None:
        a = self._att
        assert a.s3 is not None
        res = open_claim(self._sec, a.s3, Claim.from_body(msg.body))
        if isinstance(res, SealedFault):
            self._fault(res)
            return
        if res is not None:
            self._cards.update(res)
        m = self.match
        if m.phase is Phase.CLAIM:
            try:
                m.claim_hand_yaku(1 - self.seat, None if res is None else mask_of(res.values()))
            except IllegalAction as e:
                self._stop(f"{e.rule}: seat {1 - self.seat}'s claim: {e.message}")

    def _on_move(self, msg: Sent) -> None:
        r, m = self._round, self.match
        code, _, keys = msg.body
        action = from_code(code)
        try:
            m.apply(action, msg.seat)
        except IllegalAction as e:  # a card this seat holds, played by the other seat: dealt twice
            self._stop(f"{e.rule}: {action.text} by seat {msg.seat}: {e.message}")
            return
        if action.kind is not ActionKind.PLAY:
            return
        pos, _, deck_key = keys
        self._cards[pos] = action.card
        d = deck_position(r.draws)
        mine = self._sec.key(d)
        if self._reveal(r.att, mine, deck_key, d):
            self._prepared = Sent(self.seat, LineKind.DRAW, (mine,))

    def _on_draw(self, msg: Sent) -> None:
        r = self._round
        d = deck_position(r.draws - 1)  # the judge has taken the draw already
        self._reveal(r.att, self._sec.key(d), msg.body[0], d)

    def _reveal(self, a: DealAttempt, mine: bytes, theirs: bytes, d: int) -> bool:
        assert a.s3 is not None
        card = open_card(a.s3.points[d], *key_pair(mine, theirs, self.role))
        if card is None:
            self._stop(f"wrong_public_key: the keys for deck position {d} open no card")
            return False
        try:
            self.match.reveal_draw(card)
        except IllegalAction as e:
            self._stop(f"{e.rule}: the card drawn at {d}: {e.message}")
            return False
        self._cards[d] = card
        return True

    def _follow(self) -> None:
        """After any message: a new deal attempt or a new round (the judge's) gets this seat's fresh secrets."""
        at = self._round.at
        if at != self._at:
            self._at = at
            self._sec = self._derive()
            self._cards = {}
            self._prepared = None

    def _derive(self) -> SeatSecrets:
        return derive(round_secret(self._secret, self._at[0], self._at[1]))
