"""How the sealed-line regression tests (``test_line_NN_*.py``, issue 18) cheat: the ONE module coupled to the
protocol's internals.

The tests drive whole matches through :mod:`koikoi.testing` and judge them only by public verdicts
(:func:`koikoi.protocol.audit.audit` on both files, the honest session's ``ended``). What a cheater does, and
where its fields sit, lives here; when the sealed line is rewritten, re-point this module and nothing else.

A **cheating seat** is the harness's own session for that seat, holding its own key, with one change to what
it sends: it signs a changed body (:func:`cheat`, a :class:`Change` from the constructors below), or withholds
a message (:func:`withhold`). The changed message is what the cheater's own line and transcript hold (a
modified client records what it sends); if the cheater's own referee refuses it, it is sent anyway, outside
the cheater's line (a modified client sends what it likes). Everything else the cheating seat does is the
honest session's code: it discloses when due, proves faults it finds, claims a timeout when its opponent is
silent.

Small API:

- :class:`Seen`: what a cheat sees of the message its seat is about to send (``seat``, ``kind``, ``round``,
  ``dealer``, ``match_over``, ``winner`` — the seat's own engine's — and the honest ``body``).
- :func:`play` ``(install, settings, label) -> (pair, fired, seed)``: a whole match with a cheat in place.
- :func:`cheat` ``(monkeypatch, change, seats=…, when=…) -> Fired``: the first message of ``change.kind`` that
  one of ``seats`` sends with ``when(seen)`` true is sent changed (``change.body(seen)``; a change that
  returns None passes that message by). ``Fired.cheater`` / ``Fired.seen`` say who and when.
- :func:`withhold` ``(monkeypatch, kind, seats=…, when=…) -> Fired``: that message is never sent.
- Changes: :func:`draw_key`, :func:`disclose_secrets`, :func:`disclose_body`, :func:`play_hand_key`,
  :func:`shuffle_point`, :func:`sums_peek`.
- :func:`stop_now`: a seat stops the round (discloses at once) as if a live check had failed.
- :func:`line_frames`, :func:`frame_info`, :func:`sign`, :func:`junk`, :func:`transcript_of`: the line's
  frames, what a frame is, a frame the cheater signs, signed junk, a transcript file made of frames.
- :func:`round_of`: the round a session's sealed line is in.
- :func:`expensive_calls`: counts of the costly work (scalar multiplications, line messages applied).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import nacl.bindings
import pytest
from nacl.bindings import crypto_core_ed25519_add, crypto_scalarmult_ed25519_noclamp

from koikoi.engine.match import Settings
from koikoi.protocol.errors import ProtocolError
from koikoi.protocol.messages import MsgType, build, parse
from koikoi.protocol.referee import Referee
from koikoi.protocol.sealed import GROUP_ORDER, OTHER_HAND, SealedFormatError, Shuffle, ShuffleLock
from koikoi.protocol.sealed_line import LineError, LineKind, SealedSeat, Sent
from koikoi.protocol.session import Session
from koikoi.protocol.transcript import MAGIC, parse_transcript, record
from koikoi.testing import Pair, fixed_key, make_pair, reforge

__all__ = [
    "GROUP_ORDER",
    "KINDS",
    "Change",
    "Counts",
    "Fired",
    "FrameInfo",
    "Seen",
    "cheat",
    "claim_timeout",
    "disclose_body",
    "disclose_secrets",
    "draw_key",
    "expensive_calls",
    "frame_info",
    "junk",
    "line_frames",
    "never_abort",
    "play",
    "play_hand_key",
    "round_of",
    "shuffle_point",
    "sign",
    "stop_now",
    "sums_peek",
    "transcript_of",
    "withhold",
]

KINDS = ("shuffle", "shuffle_lock", "lock", "claim", "move", "draw", "disclose")
"""The sealed line's message kinds (spec/sealed-line.md §2), by the names the tests use."""

Body = list[Any]


@dataclass(frozen=True)
class Seen:
    """The message a seat is about to send, as a cheat sees it (``body``: the honest body; empty for a
    message about to be withheld, which is never made)."""

    seat: int
    kind: str
    round: int
    dealer: int
    match_over: bool
    winner: int | None
    opponent_disclosed: bool
    """The opponent has disclosed this round already (for a DISCLOSE: this seat discloses second)."""
    body: Body
    line: Any = field(repr=False, default=None)
    """The seat's sealed line object (for the cheats of this module only: the tests never look)."""


@dataclass(frozen=True)
class Change:
    """What a cheat does to a message of ``kind``: ``body(seen)`` is the body sent instead (None: not this
    message, send it unchanged)."""

    kind: str
    body: Callable[[Seen], Body | None]


@dataclass
class Fired:
    """Where a cheat fired: ``cheater`` (None: never), and what it saw then."""

    cheater: int | None = None
    seen: Seen | None = None
    refused: bool = False
    """The cheater's own line refused what it sent (it went out anyway, outside its line)."""
    forged: dict[tuple[int, str, bytes], Body | None] = field(default_factory=dict)
    """By (seat, kind, honest body bytes): the body sent instead (None: withheld). A rebuilt line re-makes the
    cheater's messages from its secret: the same honest message is then changed again, the same way."""


class _Withheld(Exception):
    pass


def _seen(line: SealedSeat, kind: LineKind) -> Seen:
    """The context of the message ``line`` is about to make (before making it changes the line's state)."""
    m = line.match
    other = line.disclosed(1 - line.seat)
    return Seen(line.seat, kind.value, line.round, line.dealer, m.is_over, m.winner, other, [], line)


def _install(
    monkeypatch: pytest.MonkeyPatch,
    fired: Fired,
    change: Change | None,
    withheld: str | None,
    seats: tuple[int, ...],
    when: Callable[[Seen], bool],
) -> None:
    orig_send = SealedSeat._make
    orig_take = SealedSeat._take
    orig_move = SealedSeat.move
    orig_pending = SealedSeat.pending
    orig_session_send = Session._send

    def changed(line: SealedSeat, msg: Sent, before: Seen) -> Sent:
        if change is None or line.seat not in seats or msg.kind.value != change.kind:
            return msg
        key = (line.seat, msg.kind.value, msg.encode())
        if key in fired.forged:
            body = fired.forged[key]
            return msg if body is None else Sent(msg.seat, msg.kind, tuple(body))
        if fired.cheater is not None:
            return msg
        seen = replace(before, body=list(msg.body))
        if not when(seen):
            return msg
        body = change.body(seen)
        if body is None:
            return msg
        fired.cheater, fired.seen = line.seat, seen
        fired.forged[key] = body
        new = Sent(msg.seat, msg.kind, tuple(body))
        # the cheater's own record of its shuffle steps is what it sent, as a cheating program's would
        a = line._round.att
        try:
            if msg.kind is LineKind.SHUFFLE:
                a.s1 = Shuffle.from_body(new.body)
            elif msg.kind is LineKind.SHUFFLE_LOCK:
                a.s2 = ShuffleLock.from_body(new.body)
        except ValueError:
            pass
        return new

    def send(self: SealedSeat, kind: LineKind) -> Sent | None:
        before = _seen(self, kind)
        if withheld == kind.value and self.seat in seats:
            if fired.cheater == self.seat or (fired.cheater is None and when(before)):
                fired.cheater = self.seat
                if fired.seen is None:
                    fired.seen = before
                raise _Withheld
        msg = orig_send(self, kind)
        return None if msg is None else changed(self, msg, before)

    def take(self: SealedSeat, msg: Sent) -> None:
        try:
            orig_take(self, msg)
        except (LineError, SealedFormatError):
            if self.seat != fired.cheater:
                raise  # (a cheater's own judge refusing what it sent: a modified client goes on regardless)
            if msg.kind is not LineKind.MOVE:  # its line never took it, so it would be due again: sent, and no more
                self._made.append(msg)
                raise _Withheld from None

    def move(self: SealedSeat, action: Any) -> Sent:
        before = _seen(self, LineKind.MOVE)
        msg = orig_move(self, action)
        new = changed(self, msg, before)
        if new is not msg and self._made and self._made[-1] == msg:
            self._made[-1] = new
        return new

    def pending(self: SealedSeat) -> list[Sent]:
        if fired.refused and self.seat == fired.cheater:
            return []  # what it sent is off its own line: it makes nothing more by itself
        before = len(self._made)
        try:
            return orig_pending(self)
        except _Withheld:
            return list(self._made[before:])

    def session_send(self: Session, t: MsgType, body: list[object], events: list[Any]) -> None:
        try:
            orig_session_send(self, t, body, events)
        except ProtocolError:
            if self.seat != fired.cheater:
                raise
            r = self.referee  # the cheater's own line refuses what it sent: it goes out anyway
            self._out.append(build(self.key, t, r.sid or b"", r.next_seq, r.head_hash, self.seat, body))
            fired.refused = True  # and its player stops deciding: its own view of the match is off the line

    orig_my_turn = Session.my_turn

    def my_turn(self: Session) -> bool:
        return not (fired.refused and self.seat == fired.cheater) and bool(orig_my_turn.fget(self))  # type: ignore[attr-defined]

    monkeypatch.setattr(SealedSeat, "_make", send)
    monkeypatch.setattr(SealedSeat, "_take", take)
    monkeypatch.setattr(SealedSeat, "move", move)
    monkeypatch.setattr(SealedSeat, "pending", pending)
    monkeypatch.setattr(Session, "_send", session_send)
    monkeypatch.setattr(Session, "my_turn", property(my_turn))


def _always(seen: Seen) -> bool:
    return True


def cheat(
    monkeypatch: pytest.MonkeyPatch,
    change: Change,
    *,
    seats: tuple[int, ...] = (0, 1),
    when: Callable[[Seen], bool] = _always,
) -> Fired:
    """The first message of ``change.kind`` one of ``seats`` sends with ``when(seen)`` is sent changed."""
    if change.kind not in KINDS:
        raise ValueError(f"no sealed message kind {change.kind!r}")
    fired = Fired()
    _install(monkeypatch, fired, change, None, seats, when)
    return fired


def withhold(
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    *,
    seats: tuple[int, ...] = (0, 1),
    when: Callable[[Seen], bool] = _always,
) -> Fired:
    """The first automatic message of ``kind`` (not a move) one of ``seats`` would send with ``when(seen)``
    is never sent, nor any later one of that kind from that seat (its later messages of the line wait behind
    it: the cheater falls silent there)."""
    if kind not in KINDS or kind == "move":
        raise ValueError(f"{kind!r} is not an automatic message of the sealed line")
    fired = Fired()
    _install(monkeypatch, fired, None, kind, seats, when)
    return fired


# -- changes ------------------------------------------------------------------------------------------------


def draw_key(key: bytes) -> Change:
    """A DRAW whose key (its one field) is ``key``."""
    return Change("draw", lambda seen: [key])


def disclose_secrets(f: Callable[[list[bytes]], list[Any]]) -> Change:
    """A DISCLOSE whose list of round secrets is ``f(the honest list)``."""
    return Change("disclose", lambda seen: [f(list(seen.body[0]))])


def disclose_body(body: Body) -> Change:
    """A DISCLOSE whose whole body is ``body`` (a body of the wrong shape)."""
    return Change("disclose", lambda seen: list(body))


def play_hand_key(key: bytes) -> Change:
    """A play (a MOVE that plays a hand card) whose key for the played hand position is ``key``."""

    def body(seen: Seen) -> Body | None:
        action, before, keys = seen.body
        if not keys:
            return None
        pos, _, deck = keys
        return [action, before, [pos, key, deck]]

    return Change("move", body)


def shuffle_point(index: int, point: bytes) -> Change:
    """A SHUFFLE whose point at ``index`` is ``point``."""

    def body(seen: Seen) -> Body:
        points = list(seen.body[0])
        points[index] = point
        return [points, *seen.body[1:]]

    return Change("shuffle", body)


def sums_peek(pairs: int = 4) -> Change:
    """The dealer's SHUFFLE_LOCK with the peek of spec/sealed.md §9: at its own hand positions 0 … pairs-1 it
    locks the sum of the two step-1 points it sends to K's hand positions 8+2i and 9+2i, so K's key for that
    position (in LOCK) leaves ``P_j + P_k``: K's whole hand for pairs = 4 (its own cards there are lost)."""

    def body(seen: Seen) -> Body:
        line = seen.line
        s1 = line._round.att.s1
        sec = line._sec
        points = list(seen.body[0])
        for i in range(pairs):
            j, k = sec.permutation[OTHER_HAND[2 * i]], sec.permutation[OTHER_HAND[2 * i + 1]]
            points[i] = crypto_scalarmult_ed25519_noclamp(
                sec.key(i), crypto_core_ed25519_add(s1.points[j], s1.points[k])
            )
        return [points, *seen.body[1:]]  # its keys, and the proofs made for the honest points

    return Change("shuffle_lock", body)


# -- playing ------------------------------------------------------------------------------------------------


def play(
    install: Callable[[pytest.MonkeyPatch], Fired],
    settings: Settings,
    label: bytes,
    *,
    tries: int = 4,
    bots: tuple[str, str] = ("greedy", "greedy"),
) -> tuple[Pair, Fired, bytes]:
    """A sealed match in memory with the cheat ``install`` puts in place (only while it plays): returns the
    pair, where the cheat fired and the harness seed. The seed is ``label`` and a counter: the first of
    ``tries`` whose match reaches the cheat (a short, documented search — a deal where the match ends before
    the cheat's moment, say round 2, is played again with the next seed; each try is one match, < 1 s). When
    the match stalls after the cheat (the line awaits what the honest seat cannot send), the cheater claims
    the honest seat's silence (:func:`claim_timeout`)."""
    for i in range(tries):
        seed = label + b"/" + str(i).encode()
        with pytest.MonkeyPatch.context() as mp:
            fired = install(mp)
            pair = make_pair(settings, bots, seed=seed, deck="sealed")
            stalled = pair.run()
            if fired.cheater is None:
                continue
            if stalled:
                claim_timeout(pair, fired.cheater, seed)
                pair.run()
            return pair, fired, seed
    raise AssertionError(f"no match of {tries} seeds ({label!r}/…) reached the cheat")


# -- acting and looking -------------------------------------------------------------------------------------


def never_abort(monkeypatch: pytest.MonkeyPatch, seat: int) -> None:
    """``seat`` never sends an ABORT: a cheater does not accuse when its accusation would only prove its own
    deviation (its session, which does not know what it changed, would)."""
    orig_abort = Session._abort

    def abort(self: Session, events: list[Any], *args: Any, **kwargs: Any) -> None:
        if self.seat != seat:
            orig_abort(self, events, *args, **kwargs)

    monkeypatch.setattr(Session, "_abort", abort)


def claim_timeout(pair: Pair, seat: int, seed: bytes) -> bytes:
    """``seat`` claims the other seat's silence now, as a modified client would whatever its own session
    thinks: the relay's (the harness witness's) certificate in a TIMEOUT signed at ``seat``'s next sequence
    number, delivered to the other seat; returns the frame."""
    assert pair.witness is not None, "no relay to witness time"
    s = pair.sessions[seat]
    r = s.referee
    assert r.sid is not None
    blob = pair.witness.certify(1 - seat, pair.now)
    frame = build(fixed_key(seed, seat), MsgType.TIMEOUT, r.sid, r.next_seq, r.head_hash, seat, [blob, b""])
    pair.inject(seat, frame)
    return frame


def round_of(session: Session) -> int:
    """The round the session's sealed line is in (0 before the deal begins)."""
    sl = session.referee.sealed
    return sl.round if sl is not None else 0


def stop_now(pair: Pair, seat: int) -> None:
    """``seat`` stops the round now, as when a live check fails: its DISCLOSE is its next message (sent at
    once, at its next sequence number, whatever of the opponent's is in transit)."""
    s = pair.sessions[seat]
    sl = s.referee.sealed
    assert isinstance(sl, SealedSeat), "not a sealed seat"
    sl._stop("the test stops the round")
    events: list[Any] = []
    s._advance(events)
    pair.note(seat, events)
    pair.flush(seat)


@dataclass(frozen=True)
class FrameInfo:
    seat: int
    seq: int
    kind: str
    """``move``, a sealed kind (:data:`KINDS`), or the envelope's type name (``abort``, ``hello``, …)."""
    prev: bytes
    hash: bytes
    """What the next message's PREV names."""
    match: bytes


def frame_info(frame: bytes) -> FrameInfo:
    m = parse(frame)
    return FrameInfo(m.seat, m.seq, m.type.label, m.prev, m.hash, m.match)


def line_frames(pair: Pair, seat: int) -> list[bytes]:
    """The frames of ``seat``'s transcript so far, in file order."""
    pair.flush(seat)
    return list(parse_transcript(bytes(pair.files[seat])).frames)


def sign(seed: bytes, seat: int, kind: str, match: bytes, seq: int, prev: bytes, body: Body) -> bytes:
    """A message ``seat`` (key from the harness ``seed``) signs: its type by :class:`FrameInfo` ``kind``."""
    return build(fixed_key(seed, seat), MsgType[kind.upper()], match, seq, prev, seat, body)


def transcript_of(frames: list[bytes]) -> bytes:
    """A transcript file holding ``frames`` (what a player could hand an auditor)."""
    return MAGIC + b"".join(record(f) for f in frames)


def junk(pair: Pair, seat: int, seed: bytes, count: int) -> list[bytes]:
    """``count`` frames ``seat`` signs that no line can take: its own MOVE re-signed at sequence numbers the
    line already holds (the other seat's messages, from the latest back), each with a PREV that is no
    message's hash. Nothing the network could not also have sent (but signed: attributed to ``seat``)."""
    frames = line_frames(pair, 1 - seat)
    own_move = next(f for f in reversed(frames) if frame_info(f).seat == seat and frame_info(f).kind == "move")
    taken = [frame_info(f).seq for f in frames if frame_info(f).seat == 1 - seat][::-1]
    key = fixed_key(seed, seat)
    return [
        reforge(own_move, key, seq=taken[i % len(taken)], prev=hashlib.sha256(b"junk" + bytes([i % 256])).digest())
        for i in range(count)
    ]


# -- cost ----------------------------------------------------------------------------------------------------


@dataclass
class Counts:
    mults: int = 0
    """Scalar multiplications on the curve (libsodium's ``crypto_scalarmult_ed25519_noclamp``): the sealed
    line's crypto, ≈ 0.1 ms each."""
    applied: int = 0
    """Messages a referee applied to a line (a replay or rebuild applies every message again)."""


@contextmanager
def expensive_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counts]:
    """Count the costly work done inside the block (every koikoi module's reference to the multiplication is
    counted, however it imported it)."""
    counts = Counts()
    mul = nacl.bindings.crypto_scalarmult_ed25519_noclamp

    def counted_mul(s: bytes, p: bytes) -> bytes:
        counts.mults += 1
        return mul(s, p)

    for name, mod in list(sys.modules.items()):
        if name.startswith("koikoi.") and mod is not None:
            for attr, value in list(vars(mod).items()):
                if value is mul:
                    monkeypatch.setattr(mod, attr, counted_mul)
    monkeypatch.setattr(nacl.bindings, "crypto_scalarmult_ed25519_noclamp", counted_mul)
    orig_accept = Referee.accept_msg

    def accept_msg(self: Referee, msg: Any, *, verify_signature: bool = True) -> Any:
        counts.applied += 1
        return orig_accept(self, msg, verify_signature=verify_signature)

    monkeypatch.setattr(Referee, "accept_msg", accept_msg)
    yield counts
