"""Sealed mode's line of messages: one seat's side (:class:`SealedSeat`) and the auditor's (:func:`audit_line`).

Sans-IO. This module is the sealed deck (``spec/sealed.md``, :mod:`koikoi.protocol.sealed`) played
message by message on a seat-side match (:meth:`koikoi.engine.match.Match.for_seat`): it decides who
sends what next, builds each of this seat's messages, does every live check on what it receives, and
verifies each round after the two disclosures. The session wraps each :class:`Sent` in a signed
envelope (one message type per :class:`Kind`, the body as here); the auditor re-checks a whole line.

The line of one round (O = the round's dealer, K = the other seat)::

    K SHUFFLE [points]                      one deal attempt: steps 1-3 (a redeal starts again at 1)
    O SHUFFLE_LOCK [points, keys]
    K LOCK [points, keys, claim]
    O CLAIM [claim]                         step 4 (not sent when the attempt is redealt)
    M MOVE [action, state_hash, keys]       the player to move; keys = [position, hand key, deck key]
    P DRAW [key]                            for a play: the opponent's key for the drawn card, at once
    ...
    N DISCLOSE [secrets]                    the round's end: the round secret of every attempt; N is the
    K' DISCLOSE [secrets], K' SHUFFLE ...   next round's dealer, K' the other, whose disclosure completes
                                            the round and whose next SHUFFLE leaves with it

A MOVE's ``state_hash`` is the state *before* the move (the last point where neither seat waits for a
card; after a play both wait for the drawn card). A seat whose live check fails **stops**: its next
message is its DISCLOSE, at once, whoever's turn it is; the other seat must then disclose too (or lose
on time), and the verification names the fault (:attr:`SealedSeat.verdict`). A stop always ends the
match: a fault found forfeits it; a stop with no fault found is its sender's resignation.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..engine.actions import Action, ActionKind, NotationError, from_code
from ..engine.cards import CARD_IDS, four_of_a_month, mask_of
from ..engine.deal import Deal, deal_from_order
from ..engine.match import IllegalAction, Match, Phase, Settings
from ..errors import RemoteError
from .codes import Code
from .framing import encode
from .messages import private_bytes
from .proofs import context as proof_context
from .sealed import (
    DEALER_HAND,
    MAX_ATTEMPTS,
    OTHER_HAND,
    TABLE,
    Attempt,
    Claim,
    Disclose,
    Lock,
    PublishedKey,
    Role,
    SealedFault,
    SealedFormatError,
    SeatSecrets,
    Shuffle,
    ShuffleLock,
    StepOne,
    check_dealer_key,
    check_lock,
    check_shuffle,
    check_shuffle_lock,
    claim_step,
    deck_position,
    derive,
    is_valid_scalar,
    must_claim,
    open_card,
    open_claim,
    open_lock,
    open_lock_keys,
    receive_shuffle,
    receive_shuffle_lock,
    round_secret,
    shuffle_points,
    shuffle_step,
    verify_round,
)

__all__ = [
    "LINE_RULES",
    "MATCH_SECRET_LABEL",
    "Kind",
    "LineAudit",
    "LineError",
    "RevealedDeals",
    "SealedObserver",
    "SealedSeat",
    "Sent",
    "Verdict",
    "audit_line",
    "check_shape",
    "first_legal",
    "match_secret",
    "run_pair",
]

MATCH_SECRET_LABEL: Final = b"koikoi/sealed/match-secret/v1\x00"

LINE_RULES: Final = frozenset({Code.WRONG_CARD, Code.UNFOUNDED_STOP})
"""Faults of the line itself, beyond :data:`koikoi.protocol.sealed.RULES` (their texts:
:data:`~koikoi.protocol.codes.CODES`)."""


def match_secret(key: Ed25519PrivateKey, sid: bytes, seat: int) -> bytes:
    """A seat's sealed match secret: ``SHA-256(MATCH_SECRET_LABEL ‖ private key ‖ session id ‖ seat)``.

    Derived like :func:`koikoi.protocol.messages.commit_value`, so a resumed seat re-derives every key
    with nothing new stored; never sent (only the round secrets derived from it are disclosed)."""
    return hashlib.sha256(MATCH_SECRET_LABEL + private_bytes(key) + sid + bytes([seat])).digest()


class Kind(enum.Enum):
    SHUFFLE = "shuffle"
    SHUFFLE_LOCK = "shuffle_lock"
    LOCK = "lock"
    CLAIM = "claim"
    MOVE = "move"
    DRAW = "draw"
    DISCLOSE = "disclose"


_AUTOMATIC: Final = frozenset(Kind) - {Kind.MOVE}


@dataclass(frozen=True, slots=True)
class Sent:
    """One message of the sealed line: its signer, its kind and its body (the envelope's fields)."""

    seat: int
    kind: Kind
    body: tuple[Any, ...]

    def encode(self) -> bytes:
        """The body's canonical msgpack bytes (what the envelope carries)."""
        return encode(list(self.body))


class LineError(RemoteError):
    """A message the line refuses (out of turn, unexpected, illegal, out of sync): ``code`` is a protocol
    error code (``out_of_turn``, ``unexpected_message``, ``illegal_move``, ``desync``,
    ``malformed_message``); the state is unchanged."""

    def __init__(self, code: Code, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")


@dataclass(frozen=True, slots=True)
class Verdict:
    """A round's verification. ``fault``: the proven fault (its ``seat`` filled in), or None.
    ``stopped_by``: the seat that stopped the round early, if one did (no fault: its resignation).
    ``attempt``: the deal attempt the verdict is about (the fault's, else the round's last): an ABORT cites
    the accused's messages of that attempt and its disclosure (spec/sealed-line.md §3)."""

    round: int
    fault: SealedFault | None
    stopped_by: int | None
    deal: Deal | None
    attempt: int = 0

    @property
    def loser(self) -> int | None:
        if self.fault is not None:
            return self.fault.seat
        return self.stopped_by


@dataclass(slots=True)
class _Att:
    s1: Shuffle | None = None
    one: StepOne | None = None
    s2: ShuffleLock | None = None
    s3: Lock | None = None
    s4: Claim | None = None
    redeal: bool = False


@dataclass(slots=True)
class _Round:
    number: int
    dealer: int
    attempts: list[_Att] = field(default_factory=lambda: [_Att()])
    published: list[PublishedKey] = field(default_factory=list)
    played: set[int] = field(default_factory=set)
    plays: list[tuple[int, int, int]] = field(default_factory=list)
    draws: int = 0
    draw_due: int | None = None
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
    def att(self) -> _Att:
        return self.attempts[-1]


def _first_discloser(r: _Round, match: Match) -> int:
    """Who discloses a played-out round first: the next round's dealer (the engine has already moved the deal
    to it), so the other seat — the next round's K — discloses last and sends its next SHUFFLE with it, one
    hop a round less (spec/sealed-line.md §2); after the last round, the round's dealer."""
    return r.dealer if match.is_over else match.dealer


def _hand_positions(role: Role) -> range:
    return DEALER_HAND if role is Role.DEALER else OTHER_HAND


def _keys(k: bytes, o: bytes, role_of_k_key: Role) -> tuple[bytes, bytes]:
    return (k, o) if role_of_k_key is Role.OTHER else (o, k)


def _next_of_round(r: _Round, match: Match) -> tuple[int, Kind] | None:
    """Who sends the next message of round ``r``'s line, and of what kind (None: nothing more), once neither
    the line is finished nor a stop is due: one rule for a seat and for the auditor's observer."""
    if r.stopped_by is None and r.draw_due is not None:
        return r.draw_due, Kind.DRAW
    if r.stopped_by is not None or r.ended:
        first = r.stopped_by if r.stopped_by is not None else _first_discloser(r, match)
        for s in (first, 1 - first):
            if s not in r.disclosed:
                return s, Kind.DISCLOSE
        return None
    a = r.att
    k, o = r.seat(Role.OTHER), r.seat(Role.DEALER)
    if a.s1 is None:
        return k, Kind.SHUFFLE
    if a.s2 is None:
        return o, Kind.SHUFFLE_LOCK
    if a.s3 is None:
        return k, Kind.LOCK
    if a.s4 is None:
        return o, Kind.CLAIM
    return match.to_move, Kind.MOVE


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
    def _round(self) -> _Round:
        return self.line._round

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

    def made(self) -> Kind | None:
        """The kind of the first message this seat made that the line has not taken yet (None: none)."""
        return self._made[0].kind if self._made else None

    def owes_stop(self) -> bool:
        """True when this seat stops the round now: its disclosure is its next message, whoever's turn it is."""
        return self._stopping is not None and self._stop_open()

    def _stop_open(self) -> bool:
        r = self._round
        return not self.finished and r.stopped_by is None and not r.ended and self.seat not in r.disclosed

    def known_cards(self) -> dict[int, int]:
        """Position → card for every position this seat has opened this round."""
        return dict(self._cards)

    def secrets_now(self) -> SeatSecrets:
        """This seat's secrets for the current deal attempt (for tests: what it could try)."""
        return self._sec

    def published(self) -> list[PublishedKey]:
        return list(self._round.published)

    def expected(self) -> tuple[int, Kind] | None:
        """Who sends the next message of the line, and of what kind (None: nothing more): the judge's, but this
        seat's own stop first."""
        if self.owes_stop():
            return self.seat, Kind.DISCLOSE
        return self.line.expected()

    # -- sending ---------------------------------------------------------------

    def pending(self) -> list[Sent]:
        """Every message this seat sends by itself now, in order (empty when it waits or must decide)."""
        out: list[Sent] = []
        while True:
            exp = self.expected()
            if exp is None or exp[0] != self.seat or exp[1] not in _AUTOMATIC:
                return out
            msg = self._make(exp[1])
            if msg is None:
                continue  # its secrets found a fault in what it answers: it stops instead
            self._take(msg)
            self._made.append(msg)
            out.append(msg)

    def move(self, action: Action) -> Sent:
        """This seat's decision (a play carries its key for the played position and for the next deck card)."""
        if self.expected() != (self.seat, Kind.MOVE):
            raise LineError(Code.OUT_OF_TURN, "this seat has no move to make now")
        r, m = self._round, self.match
        before = m.state_hash()
        keys: list[Any] = []
        if action.kind is ActionKind.PLAY:
            mine = _hand_positions(self.role)
            pos = next((p for p in mine if p not in r.played and self._cards.get(p) == action.card), None)
            if pos is None:
                raise LineError(Code.ILLEGAL_MOVE, f"{CARD_IDS[action.card]} is not in this seat's hand")
            keys = [pos, self._sec.key(pos), self._sec.key(deck_position(r.draws))]
        trial = m.copy()
        try:
            trial.apply(action, self.seat)
        except IllegalAction as e:
            raise LineError(Code.ILLEGAL_MOVE, f"{action.text}: {e.message} ({e.rule})") from None
        made = Sent(self.seat, Kind.MOVE, (action.code, before, keys))
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
        if msg.kind is Kind.MOVE:
            try:
                made = self.move(from_code(msg.body[0]))
            except NotationError:
                raise LineError(Code.MALFORMED_MESSAGE, "a move of this seat's that is no action") from None
        else:
            if msg.kind is Kind.DISCLOSE and self._stopping is None and self._stop_open():
                exp = self.line.expected()
                if exp != (self.seat, Kind.DISCLOSE):
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

    def _make(self, kind: Kind) -> Sent | None:
        """This seat's message of ``kind``, due now; None when its secrets found a fault in the message it
        answers (it stops: its disclosure is due instead)."""
        r = self._round
        if kind is Kind.DISCLOSE:
            begun = sum(a.s1 is not None for a in r.attempts)  # one secret for each SHUFFLE of the round
            secrets = [round_secret(self._secret, r.number, n) for n in range(begun)]
            return Sent(self.seat, kind, (secrets,))
        if kind is Kind.SHUFFLE:
            return Sent(self.seat, kind, tuple(shuffle_step(self._sec, self.line.context()).body()))
        prepared, self._prepared = self._prepared, None
        if prepared is None or prepared.kind is not kind:
            raise AssertionError(f"no {kind.value} prepared")  # the receive that made it due prepares it
        return prepared

    def _take(self, msg: Sent) -> None:
        """One of this seat's own messages into the line (the judge's checks are this seat's too)."""
        self.line.accept(msg)
        if msg.kind is Kind.MOVE:
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
        if msg.kind is not Kind.DISCLOSE and (self.owes_stop() or self.line.stop_due == self.seat):
            return False
        self._att = self._round.att  # the deal attempt the message belongs to (a redeal starts the next one)
        try:
            self.line.accept(msg)
        except SealedFormatError as e:
            if self._round.stopped_by is not None or msg.kind is Kind.DISCLOSE:
                raise
            # without an envelope (no ABORT to send) the signed step itself proves its signer's fault: this
            # seat stops, and the verification names the shape (never the stopper)
            self.line.shape_fault(msg.seat, e)
            self._stopping = f"bad_shape: {e.message}"
            return True
        if self._round.stopped_by is not None:
            return True  # the round is stopped: only the disclosures count now
        learn = {
            Kind.SHUFFLE: self._on_shuffle,
            Kind.SHUFFLE_LOCK: self._on_shuffle_lock,
            Kind.LOCK: self._on_lock,
            Kind.CLAIM: self._on_claim,
            Kind.MOVE: self._on_move,
            Kind.DRAW: self._on_draw,
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
        self._prepared = Sent(self.seat, Kind.SHUFFLE_LOCK, tuple(res.body()))

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
            self._prepared = Sent(self.seat, Kind.LOCK, tuple(lock.body()))

    def _begin_deal(self) -> bool:
        hand = mask_of(self._cards[p] for p in _hand_positions(self.role))
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
        self._prepared = Sent(self.seat, Kind.CLAIM, tuple(claim_step(self._sec, must_claim(hand, table)).body()))

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
            self._prepared = Sent(self.seat, Kind.DRAW, (mine,))

    def _on_draw(self, msg: Sent) -> None:
        r = self._round
        d = deck_position(r.draws - 1)  # the judge has taken the draw already
        self._reveal(r.att, self._sec.key(d), msg.body[0], d)

    def _reveal(self, a: _Att, mine: bytes, theirs: bytes, d: int) -> bool:
        assert a.s3 is not None
        card = open_card(a.s3.points[d], *_keys(mine, theirs, self.role))
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
        r = self._round
        at = (r.number, len(r.attempts) - 1)
        if at != self._at:
            self._at = at
            self._sec = self._derive()
            self._cards = {}
            self._prepared = None

    def _derive(self) -> SeatSecrets:
        return derive(round_secret(self._secret, self._at[0], self._at[1]))


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
        self._round = _Round(self.match.round, self.match.dealer)
        self._stop_due: int | None = None
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
    def stop_due(self) -> int | None:
        """The seat whose disclosure a failed public opening made due (it must stop the round), or None."""
        return self._stop_due if self._round.stopped_by is None else None

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

    def expected(self) -> tuple[int, Kind] | None:
        if self.finished:
            return None
        if self._round.stopped_by is None and self._stop_due is not None:
            return self._stop_due, Kind.DISCLOSE
        return _next_of_round(self._round, self.match)

    def context(self) -> bytes:
        """What the proofs of the current deal attempt bind: the session, the round, the attempt."""
        r = self._round
        return proof_context(self.sid, r.number, len(r.attempts) - 1)

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
        if msg.kind is Kind.DISCLOSE:
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
        if msg.kind is Kind.SHUFFLE:
            s1 = Shuffle.from_body(msg.body)
            if not mine:
                self._refuse(check_shuffle(self.context(), s1))
            a.s1, a.one = s1, StepOne(s1)
        elif msg.kind is Kind.SHUFFLE_LOCK:
            s2 = ShuffleLock.from_body(msg.body)
            assert a.one is not None
            if not mine:
                self._refuse(check_shuffle_lock(self.context(), a.one, s2))
            a.s2 = s2
        elif msg.kind is Kind.LOCK:
            self._on_lock(Lock.from_body(msg.body), msg.seat)
        elif msg.kind is Kind.CLAIM:
            self._on_claim(Claim.from_body(msg.body), msg.seat)
        elif msg.kind is Kind.MOVE:
            self._on_move(msg)
        else:
            self._on_draw(msg)

    def _due_stop(self, receiver: int) -> None:
        self._stop_due = receiver

    def _dealer_key(self, step: str, pos: int, key: bytes) -> None:
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
                SealedFault(Code.FALSE_HAND_YAKU, Role.OTHER, "lock", None, "a claim in a deal that is redealt")
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
                self._refuse(SealedFault(Code.FALSE_HAND_YAKU, Role.OTHER, "lock", None, e.message))
        a.s3 = s3
        self.match.begin_observed_deal(mask)
        if four_of_a_month(mask):
            a.redeal = True
            if len(r.attempts) >= MAX_ATTEMPTS:
                self._due_stop(o)  # the cap: the dealer stops the round
                return
            r.attempts.append(_Att())
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
                self._dealer_key("claim", p, s4.keys[i])
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
                self._refuse(SealedFault(Code.FALSE_HAND_YAKU, Role.DEALER, "claim", None, e.message))
        a.s4 = s4
        try:
            self.match.claim_hand_yaku(sender, hand)
        except IllegalAction:
            self._due_stop(1 - sender)
            return
        self._after_engine()

    def _on_move(self, msg: Sent) -> None:
        r, m = self._round, self.match
        code, state_hash, keys = _move_body(msg)
        action = from_code(code)
        if state_hash != m.state_hash():
            raise LineError(Code.DESYNC, f"the state before {action.text} is not the line's")
        mover_role = r.role(msg.seat)
        receiver = 1 - msg.seat
        if action.kind is not ActionKind.PLAY:
            if keys:
                raise SealedFormatError("move", "only a play carries keys")
            try:
                m.apply(action, msg.seat)
            except IllegalAction as e:
                raise LineError(
                    Code.ILLEGAL_MOVE, f"{action.text} by seat {msg.seat}: {e.message} ({e.rule})"
                ) from None
            self._after_engine()
            return
        pos, hand_key, deck_key = _play_keys(keys, mover_role)
        if pos in r.played:
            raise LineError(Code.ILLEGAL_MOVE, f"position {pos} was played already")
        a = r.att
        assert a.s2 is not None and a.s3 is not None
        d = deck_position(r.draws)
        if mover_role is Role.DEALER:
            self._dealer_key("turn", pos, hand_key)
            self._dealer_key("turn", d, deck_key)
        other = a.s3.key_for(pos) if mover_role is Role.DEALER else a.s2.key_for(pos)
        card = open_card(a.s3.points[pos], *_keys(hand_key, other, mover_role))
        stop = card != action.card  # no card: O's key checked, K's key for O's hand was wrong (O should have stopped)
        if card is None and mover_role is Role.OTHER:  # O's key for K's hand was proven with step 2
            self._refuse(SealedFault(Code.WRONG_PUBLIC_KEY, mover_role, "turn", pos, "the keys open no card"))
        if card is not None and card != action.card:
            detail = f"the keys open {CARD_IDS[card]}, not {CARD_IDS[action.card]}"
            self._refuse(SealedFault(Code.WRONG_CARD, mover_role, "turn", pos, detail))
        if not stop:
            try:
                m.apply(action, msg.seat)
            except IllegalAction as e:
                if e.rule != "card_already_seen":
                    raise LineError(
                        Code.ILLEGAL_MOVE, f"{action.text} by seat {msg.seat}: {e.message} ({e.rule})"
                    ) from None
                stop = True
        r.plays.append((msg.seat, pos, action.card))
        r.published.extend([PublishedKey(mover_role, pos, hand_key), PublishedKey(mover_role, d, deck_key)])
        if stop:
            self._due_stop(receiver)
            return
        r.played.add(pos)
        r.draw_due = receiver

    def _on_draw(self, msg: Sent) -> None:
        r = self._round
        if len(msg.body) != 1 or not isinstance(msg.body[0], bytes):
            raise SealedFormatError("draw", "a draw is [key]")
        (key,) = msg.body
        d = deck_position(r.draws)
        mover = 1 - msg.seat
        role = r.role(msg.seat)
        if not is_valid_scalar(key):
            self._refuse(
                SealedFault(Code.BAD_SCALAR, role, "turn", d, "a draw key that is not a canonical non-zero scalar")
            )
            r.draw_due = None
            self._due_stop(mover)
            return
        if role is Role.DEALER:
            self._dealer_key("turn", d, key)
        mover_key = next(k.key for k in reversed(r.published) if k.position == d and k.role is r.role(mover))
        a = r.att
        assert a.s3 is not None
        card = open_card(a.s3.points[d], *_keys(key, mover_key, role))
        if card is None and role is Role.OTHER:  # O's deck key came with its play, checked there
            self._refuse(SealedFault(Code.WRONG_PUBLIC_KEY, role, "turn", d, "the keys open no card"))
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
        if exp != (msg.seat, Kind.DISCLOSE):
            if r.stopped_by is not None or r.ended:
                raise LineError(Code.OUT_OF_TURN, f"seat {msg.seat}'s disclosure is not due now")
        if r.stopped_by is None and not r.ended:
            r.stopped_by = msg.seat  # a stop: due after a failed public opening, or any seat's own finding
        self._stop_due = None
        r.disclosed[msg.seat] = d.secrets
        if len(r.disclosed) < 2:
            return
        if r.shape_fault is not None:
            v = Verdict(r.number, r.shape_fault, r.stopped_by, None, len(r.attempts) - 1)
        else:
            trusted = None if self.trusted is None else r.role(self.trusted)
            v = verify_line_round(
                r.attempts, r.disclosed, r.published, r.plays, r.dealer, r.number, r.stopped_by, trusted
            )
        r.verdict = v
        self.verdicts.append(v)
        if v.fault is None:
            self.deals.update(_orders(r.number, r.attempts, r.disclosed, r.dealer))
        if v.fault is None and v.stopped_by is None and not self.match.is_over:
            self._round = _Round(self.match.round, self.match.dealer)


class RevealedDeals:
    """A deal source of the deals a sealed line's disclosures revealed (for a full :class:`Match` replaying
    the line: ``koikoi replay``); a deal never disclosed is :class:`IllegalAction` ``not_disclosed``."""

    def __init__(self, orders: dict[tuple[int, int], tuple[int, ...]]) -> None:
        self.orders = orders

    def deal(self, round_number: int, attempt: int) -> Deal:
        order = self.orders.get((round_number, attempt))
        if order is None:
            raise IllegalAction("not_disclosed", f"round {round_number}'s deal was never disclosed")
        return deal_from_order(order)

    def first_dealer_cards(self, attempt: int) -> tuple[int, int]:
        raise IllegalAction("no_deal_source", "sealed mode turns no cards for the first dealer")


def _orders(
    number: int, attempts: Sequence[_Att], disclosed: dict[int, tuple[bytes, ...]], dealer: int
) -> dict[tuple[int, int], tuple[int, ...]]:
    out: dict[tuple[int, int], tuple[int, ...]] = {}
    for i, a in enumerate(attempts):
        if a.s2 is not None and i < len(disclosed[dealer]) and i < len(disclosed[1 - dealer]):
            ks, os_ = derive(disclosed[1 - dealer][i]), derive(disclosed[dealer][i])
            out[number, i] = tuple(ks.permutation[os_.permutation[p]] for p in range(48))
    return out


def _move_body(msg: Sent) -> tuple[int, bytes, Sequence[Any]]:
    body = msg.body
    if len(body) != 3 or not isinstance(body[2], list | tuple):
        raise SealedFormatError("move", "a move is [action, state_hash, keys]")
    code, state_hash, keys = body
    try:
        from_code(code)
    except NotationError:
        raise LineError(Code.ILLEGAL_MOVE, f"move code {code!r} is no action") from None
    return code, state_hash, keys


def _play_keys(keys: Sequence[Any], mover_role: Role) -> tuple[int, bytes, bytes]:
    if len(keys) != 3 or type(keys[0]) is not int or keys[0] not in _hand_positions(mover_role):
        raise SealedFormatError("move", "a play carries [position in the mover's hand, hand key, deck key]")
    pos, hand_key, deck_key = keys
    if not (isinstance(hand_key, bytes) and isinstance(deck_key, bytes)):
        raise SealedFormatError("move", "a play's keys are byte strings")
    return pos, hand_key, deck_key


def check_shape(msg: Sent, dealer: int) -> None:
    """Raise :class:`SealedFormatError` when ``msg``'s body is not its kind's shape (the signer's ``bad_shape``
    fault; ``dealer`` places a play's position). What the shape cannot say (turn, keys, cards) is not checked."""
    if msg.kind is Kind.SHUFFLE:
        Shuffle.from_body(msg.body)
    elif msg.kind is Kind.SHUFFLE_LOCK:
        ShuffleLock.from_body(msg.body)
    elif msg.kind is Kind.LOCK:
        Lock.from_body(msg.body)
    elif msg.kind is Kind.CLAIM:
        Claim.from_body(msg.body)
    elif msg.kind is Kind.DISCLOSE:
        Disclose.from_body(msg.body)
    elif msg.kind is Kind.DRAW:
        if len(msg.body) != 1 or not isinstance(msg.body[0], bytes):
            raise SealedFormatError("draw", "a draw is [key]")
    else:
        code, _, keys = _move_body(msg)
        if from_code(code).kind is ActionKind.PLAY:
            _play_keys(keys, Role.DEALER if msg.seat == dealer else Role.OTHER)
        elif keys:
            raise SealedFormatError("move", "only a play carries keys")


def verify_line_round(
    attempts: Sequence[_Att],
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
                f = SealedFault(Code.BAD_SCALAR, Role.OTHER, "disclose", None, "a round secret is 32 bytes")
            elif trusted is not Role.OTHER and shuffle_points(derive(ks[n])) != a.s1.points:
                f = SealedFault(Code.SECRET_MISMATCH, Role.OTHER, "shuffle", None, "not the secret's shuffle")
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
            Code.BAD_SHAPE, Role.OTHER if short == k_seat else Role.DEALER, "disclose", None, "one secret per deal"
        )
        return Verdict(number, f.with_seat(dealer), stopped_by, None, last)
    res = verify_round(steps, ks, os_, published, dealer=dealer, trusted=trusted)
    if isinstance(res, SealedFault):
        return Verdict(number, res, stopped_by, None, last if res.attempt is None else res.attempt)
    for seat, pos, card in plays:
        if pos not in (DEALER_HAND if seat == dealer else OTHER_HAND) or res.order[pos] != card:
            role = Role.DEALER if seat == dealer else Role.OTHER
            f = SealedFault(Code.WRONG_CARD, role, "turn", pos, f"the position does not hold {CARD_IDS[card]}", seat)
            return Verdict(number, f, stopped_by, res.deal, last)
    fault = None if stopped_by is None else _unfounded(stopped_by, dealer)
    return Verdict(number, fault, stopped_by, res.deal, last)


def _unfounded(stopper: int, dealer: int) -> SealedFault:
    role = Role.DEALER if stopper == dealer else Role.OTHER
    return SealedFault(Code.UNFOUNDED_STOP, role, "disclose", None, "the verification finds no fault", stopper)


# -- the auditor ----------------------------------------------------------------


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
    error: tuple[int, str, str] | None = None
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
        if m.kind is not Kind.MOVE:
            continue
        action = from_code(m.body[0])
        try:
            match.apply(action, m.seat)
        except IllegalAction as e:
            if e.rule != "not_disclosed":  # the judge took it: the full match must too (else a bug here)
                audit.error = (m.seat, Code.ILLEGAL_MOVE, f"{action.text}: {e.message} ({e.rule})")
            return audit
    return audit


# -- two seats in memory (tests, vectors, benchmarks) ------------------------------------------------


Chooser = Callable[[SealedSeat], Action]
Tamper = Callable[[Sent, SealedSeat], "Sent | None"]


def first_legal(seat: SealedSeat) -> Action:
    """The first legal action (a deterministic player for vectors)."""
    return seat.match.legal_actions()[0]


def run_pair(
    settings: Settings,
    first_dealer: int,
    secrets: tuple[bytes, bytes],
    choose: Chooser = first_legal,
    *,
    cheater: int | None = None,
    tamper: Tamper | None = None,
    until: Callable[[list[Sent]], bool] | None = None,
) -> tuple[list[SealedSeat], list[Sent]]:
    """Two seats playing through the line, every message delivered at once in the order it is made.
    ``tamper`` rewrites (or, returning None, withholds) the cheater's messages on the wire; the cheater's
    own record of a shuffle step is made to match what it sent, as a cheating program's would.
    ``until``: stop as soon as the line meets it."""
    seats = [SealedSeat(settings, s, first_dealer, secrets[s]) for s in (0, 1)]
    line: list[Sent] = []
    while True:
        moved = False
        for s in seats:
            outs = s.pending()
            if s.expected() == (s.seat, Kind.MOVE):
                outs.append(s.move(choose(s)))
            for o in outs:
                if tamper is not None and o.seat == cheater:
                    t = tamper(o, s)
                    if t is None:
                        return seats, line
                    if t != o and t.kind is Kind.SHUFFLE:
                        s._round.att.s1 = Shuffle.from_body(t.body)
                    elif t != o and t.kind is Kind.SHUFFLE_LOCK:
                        s._round.att.s2 = ShuffleLock.from_body(t.body)
                    o = t
                try:
                    taken = seats[1 - o.seat].receive(o)
                except LineError:
                    line.append(o)  # refused by the other seat's judge: the line ends there (audit_line says why)
                    return seats, line
                if taken:
                    line.append(o)  # (one that crossed the other seat's stop is superseded: not in the line)
                moved = True
                if until is not None and until(line):
                    return seats, line
        if not moved:
            return seats, line
