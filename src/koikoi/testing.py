"""For tests only: an in-memory harness, two sessions wired together, bots on both seats, transcripts in memory.

No module of the product (engine, protocol, relay, client) imports this one (pyproject's import-linter
contract); tests, benchmarks and the vector generators do.

``run_match(settings, bots=("random", "greedy"), seed=b"...")`` plays a whole
match through the protocol (handshake, commit-reveal, every move signed and
verified, the result countersigned) and returns both sessions, their
transcripts (bytes in the transcript format) and their events. A ``tamper``
hook sees every frame in transit and returns what is delivered instead
(nothing: dropped; two: duplicated; changed bytes: mutated; it may hold
frames back and release them later: reordered); :func:`chaos` makes one that
does all of it at random.

The pair keeps a protocol clock: when nothing can be delivered and no bot
can move, time jumps to the next deadline of either session (a RESEND, a
warning, a certificate request) — that is how a dropped frame gets repaired.
A :class:`Witness` plays the relay's part in time: it sees every frame a seat
sends and signs silence certificates, which the pair hands to the session
that asks (``auto_certify``).

Deterministic from ``seed``: keys, nonces, bots and the witness's key all derive from it.

``run_pair(settings, first_dealer, secrets)`` plays two sealed seats (:class:`SealedSeat`) against each
other without sessions or envelopes: the sealed line alone, message by message (its ``tamper`` rewrites
or withholds the cheater's messages).
"""

from __future__ import annotations

import hashlib
import importlib.util
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.signing import SigningKey

from .engine.actions import Action
from .engine.bots import Bot, make_bot
from .engine.match import Settings
from .protocol.audit import AuditReport, audit
from .protocol.messages import (
    BODY_SCHEMA,
    SEALED_MOVE_SCHEMA,
    ZERO_HASH,
    MsgType,
    build,
    parse,
    parse_resend,
    public_bytes,
)
from .protocol.sealed import Shuffle, ShuffleLock
from .protocol.sealed_line import LineError, LineKind, SealedSeat, Sent
from .protocol.session import CertificateNeeded, Event, MatchDecided, Session, TimeoutPolicy
from .protocol.transcript import MAGIC, record
from .protocol.witness import SeatClock, fingerprint, frame_hash, sign_certificate, silent_ms, witness_frame

__all__ = [
    "HarnessResult",
    "Pair",
    "Tamper",
    "Witness",
    "chaos",
    "first_legal",
    "fixed_key",
    "load_script",
    "make_pair",
    "reforge",
    "run_match",
    "run_pair",
    "seat_keys",
    "witness_key",
]

Tamper = Callable[[int, int, bytes], Sequence[bytes]]
"""``tamper(sender_seat, index, frame)`` -> the frames delivered instead (``index`` counts the
sender's frames from 0)."""


def load_script(path: Path, name: str) -> ModuleType:
    """The script at ``path`` (a benchmark, a vector generator: not a package module) imported as module ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fixed_key(seed: bytes, seat: int) -> Ed25519PrivateKey:
    """A deterministic key for tests and vectors (never for real play)."""
    return Ed25519PrivateKey.from_private_bytes(
        hashlib.sha256(b"koikoi/test-key/v1\x00" + seed + bytes([seat])).digest()
    )


def seat_keys(seed: bytes) -> tuple[bytes, bytes]:
    """The public keys of :func:`fixed_key` for both seats: what the relay's seats are bound to in a pair
    made from ``seed`` (the witness names them in its certificates)."""
    return public_bytes(fixed_key(seed, 0)), public_bytes(fixed_key(seed, 1))


def witness_key(seed: bytes) -> SigningKey:
    """A deterministic relay key for tests and vectors (never for a real relay)."""
    return SigningKey(hashlib.sha256(b"koikoi/test-relay-key/v1\x00" + seed).digest())


class Witness:
    """The relay's clock, in memory: exactly what ``koikoi relay`` records and certifies (spec/relay.md "What
    the witness records"), with the same code (:func:`koikoi.protocol.witness.witness_frame` and
    :func:`~koikoi.protocol.witness.silent_ms`): RESEND frames, which clients send with the ``ctl`` flag,
    are requests to send again, never a seat's last frame; a repeat of a seat's earlier frame is not news."""

    def __init__(
        self,
        key: SigningKey,
        room: str,
        move_time_s: int | None = 120,
        *,
        seated_at: float = 0.0,
        seat_keys: tuple[bytes, bytes] = (b"", b""),
    ) -> None:
        self.key = key
        self.room = room
        self.move_time_s = move_time_s
        self.seat_keys = seat_keys
        """The player keys that proved each seat at the relay (the certificate names them)."""
        self.clocks = (SeatClock(seated_at), SeatClock(seated_at))
        self.connected = [True, True]

    @property
    def public_key(self) -> bytes:
        return bytes(self.key.verify_key)

    @property
    def last(self) -> tuple[bytes, bytes]:
        """The hash of the last new witnessed frame of each seat (empty: none)."""
        return self.clocks[0].last_hash, self.clocks[1].last_hash

    def saw(self, seat: int, frame: bytes, now: float, *, ctl: bool | None = None) -> None:
        """The relay received ``frame`` from ``seat`` at ``now``; ``ctl``: sent with the control flag (None: as
        an honest client sends it — a RESEND frame with the flag, anything else without)."""
        if ctl is None:
            ctl = parse_resend(frame) is not None
        witness_frame(self.clocks[seat], self.clocks[1 - seat], frame_hash(frame), now, ctl=ctl, frame=frame)

    def silent_ms(self, silent_seat: int, now: float) -> int:
        return silent_ms(self.clocks[silent_seat], self.clocks[1 - silent_seat], now, self.move_time_s)

    def certify(self, silent_seat: int, now: float) -> bytes:
        return sign_certificate(
            self.key,
            self.room,
            silent_seat,
            self.last,
            self.silent_ms(silent_seat, now),
            self.connected[silent_seat],
            list(self.clocks[1 - silent_seat].recent),
            self.seat_keys,
        )


def _nonce(seed: bytes, seat: int) -> bytes:
    return hashlib.sha256(b"koikoi/test-nonce/v1\x00" + seed + bytes([seat])).digest()


def reforge(
    frame: bytes,
    key: Ed25519PrivateKey,
    *,
    type: MsgType | None = None,
    match: bytes | None = None,
    seq: int | None = None,
    prev: bytes | None = None,
    seat: int | None = None,
    **body: Any,
) -> bytes:
    """A message like ``frame`` with some fields changed, signed again with ``key``: what a modified
    client (holding that key) could send. Body fields by name (``action=…``, ``state_hash=…``)."""
    msg = parse(frame)
    t = type or msg.type
    fields = list(msg.body) if t is msg.type else [None] * len(BODY_SCHEMA[t])
    schema = SEALED_MOVE_SCHEMA if t is MsgType.MOVE and len(fields) == 3 else BODY_SCHEMA[t]
    names = [n for n, _ in schema]
    for name, value in body.items():
        fields[names.index(name)] = value
    return build(
        key,
        t,
        msg.match if match is None else match,
        msg.seq if seq is None else seq,
        msg.prev if prev is None else prev,
        msg.seat if seat is None else seat,
        fields,
    )


@dataclass
class HarnessResult:
    sessions: tuple[Session, Session]
    transcripts: tuple[bytes, bytes]
    events: tuple[list[Event], list[Event]]
    stalled: bool

    def ended(self, seat: int) -> MatchDecided | None:
        return self.sessions[seat].ended

    def audits(self) -> tuple[AuditReport, AuditReport]:
        """Both transcripts audited."""
        return audit(self.transcripts[0]), audit(self.transcripts[1])


@dataclass
class Pair:
    """Two sessions joined by in-memory queues, stepped by :meth:`run`."""

    sessions: tuple[Session, Session]
    bots: tuple[Bot | None, Bot | None]
    tamper: Tamper | None = None
    witness: Witness | None = None
    auto_certify: bool = True
    files: tuple[bytearray, bytearray] = field(default_factory=lambda: (bytearray(MAGIC), bytearray(MAGIC)))
    events: tuple[list[Event], list[Event]] = field(default_factory=lambda: ([], []))
    queues: tuple[deque[bytes], deque[bytes]] = field(default_factory=lambda: (deque(), deque()))
    sent: list[int] = field(default_factory=lambda: [0, 0])
    now: float = 0.0
    started: list[float] = field(default_factory=lambda: [0.0, 0.0])
    epochs: list[int] = field(default_factory=lambda: [-1, -1])
    silent: list[bool] = field(default_factory=lambda: [False, False])
    """A seat marked silent sends nothing at all (its process is stopped), though its session runs on."""
    _unusual: dict[bytes, int] = field(default_factory=dict)
    """Copies in transit whose control flag is not the usual one (RESENDs flagged, everything else not), by
    frame: an honest session's older message sent again, or what a modified client flags as it likes."""

    @property
    def witness_fingerprint(self) -> str | None:
        """The witness's key fingerprint (what the auditor reports for ``on_time``)."""
        return fingerprint(self.witness.public_key) if self.witness is not None else None

    def note(self, seat: int, events: list[Event]) -> None:
        """Keep ``seat``'s events; hand it a certificate when it asks for one (``auto_certify``)."""
        s = self.sessions[seat]
        self.events[seat].extend(events)
        for ev in events:
            if isinstance(ev, CertificateNeeded) and self.auto_certify and self.witness is not None:
                self.flush(seat)  # as the client sends its frames before it asks the relay
                self.note(seat, s.witnessed(self.witness.certify(ev.silent_seat, self.now)))

    def flush(self, seat: int) -> None:
        s = self.sessions[seat]
        f = self.files[seat]
        for rec in s.records():
            f += record(rec.frame)
        for frame in s.frames_to_send():
            if not self.silent[seat]:
                self.deliver(seat, frame)

    def deliver(self, seat: int, frame: bytes) -> None:
        """Put ``seat``'s frame in transit (the witness sees it as sent, with the control flag the session
        gives it; then the tamper hook)."""
        ctl = self.sessions[seat].is_control(frame)
        if self.witness is not None:
            self.witness.saw(seat, frame, self.now, ctl=ctl)
        out: Sequence[bytes] = [frame]
        if self.tamper is not None:
            out = self.tamper(seat, self.sent[seat], frame)
        self.sent[seat] += 1
        for f in out:
            self._in_transit(f, ctl)
        self.queues[1 - seat].extend(out)

    def inject(self, seat: int, frame: bytes, *, ctl: bool = False) -> None:
        """A frame a modified client at ``seat`` sends through the relay (the witness sees it; no tamper hook),
        with the control flag when ``ctl``."""
        if self.witness is not None:
            self.witness.saw(seat, frame, self.now, ctl=ctl)
        self._in_transit(frame, ctl)
        self.queues[1 - seat].append(frame)

    def _in_transit(self, frame: bytes, ctl: bool) -> None:
        if ctl != (parse_resend(frame) is not None):
            self._unusual[frame] = self._unusual.get(frame, 0) + 1

    def receive_one(self, seat: int) -> None:
        """Deliver the next frame of ``seat``'s queue, with the control flag it was sent with (a frame a test
        put in the queue itself goes as an honest client would send it: flagged if it is a RESEND)."""
        frame = self.queues[seat].popleft()
        ctl = parse_resend(frame) is not None
        n = self._unusual.get(frame, 0)
        if n:
            ctl = not ctl
            if n == 1:
                del self._unusual[frame]
            else:
                self._unusual[frame] = n - 1
        self.note(seat, self.sessions[seat].receive(frame, ctl=ctl))
        self.flush(seat)

    def step(self) -> bool:
        """Deliver one frame or make one bot move; False when nothing can happen now."""
        for seat in (0, 1):
            self.flush(seat)
        for seat in (0, 1):
            if self.queues[seat]:
                self.receive_one(seat)
                return True
        for seat in (0, 1):
            s = self.sessions[seat]
            bot = self.bots[seat]
            if s.my_turn and bot is not None and not self.silent[seat]:
                self.note(seat, s.play(bot.choose(s.view())))
                self.flush(seat)
                return True
        return False

    def tick(self) -> bool:
        """Move the clock to the next deadline of either session and tell it; False when none is due."""
        due: list[tuple[float, int]] = []
        for seat in (0, 1):
            s = self.sessions[seat]
            w = s.wait()
            if w is None:  # finished: it lingers, answering the opponent's RESENDs
                s.time_passed(-1, 0.0)
                continue
            if w.epoch != self.epochs[seat]:
                self.epochs[seat], self.started[seat] = w.epoch, self.now
            d = s.next_deadline()
            if d is not None:
                due.append((self.started[seat] + d, seat))
        if not due:
            return False
        at, seat = min(due)
        self.now = max(self.now, at)
        s = self.sessions[seat]
        self.note(seat, s.time_passed(self.epochs[seat], self.now - self.started[seat]))
        self.flush(seat)
        return True

    def run(self, max_steps: int = 200_000, *, clock: bool = True, patience: float = 900.0) -> bool:
        """Step until both sessions end or nothing more can happen; returns True when it stalled.

        With ``clock``, when nothing can happen now the clock jumps to the next deadline; it stalls when
        ``patience`` seconds of protocol time pass with no message entering either line."""
        progress, progress_at = -1, self.now
        for _ in range(max_steps):
            if all(s.is_finished for s in self.sessions) and not any(self.queues):
                self.flush(0)
                self.flush(1)
                return False
            if self.step():
                continue
            if all(s.is_finished for s in self.sessions):
                return False
            if not clock:
                return True
            marks = sum(s.next_seq for s in self.sessions)
            if marks != progress:
                progress, progress_at = marks, self.now
            elif self.now - progress_at > patience:
                return True
            if not self.tick():
                return True
        raise RuntimeError("the harness did not finish")

    def reconnect(self) -> None:
        """Both sides reconnect: each queues a RESEND and what the other may lack (through the tamper hook)."""
        for seat in (0, 1):
            self.note(seat, self.sessions[seat].reconnected())
            self.flush(seat)

    def result(self, stalled: bool) -> HarnessResult:
        return HarnessResult(self.sessions, (bytes(self.files[0]), bytes(self.files[1])), self.events, stalled)


def chaos(seed: bytes, rate: float = 0.1, *, others: Sequence[bytes] = ()) -> Tamper:
    """A relay that misbehaves at random (deterministic from ``seed``): each frame in transit is, with
    probability ``rate`` each, dropped, duplicated, garbled (one bit flipped), held back and delivered
    after a later frame (reordered), or followed by a replay of an earlier frame (of this match, or one
    of ``others``: frames of another match)."""
    rng = random.Random(hashlib.sha256(b"koikoi/chaos\x00" + seed).digest())
    held: list[bytes] = []
    seen: list[bytes] = []

    def tamper(seat: int, index: int, frame: bytes) -> list[bytes]:
        seen.append(frame)
        x = rng.random()
        out: list[bytes]
        if x < rate:
            out = []
        elif x < 2 * rate:
            out = [frame, frame]
        elif x < 3 * rate:
            b = bytearray(frame)
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            out = [bytes(b)]
        elif x < 4 * rate:
            held.append(frame)
            out = []
        elif x < 5 * rate:
            pool = [*seen, *others]
            out = [frame, pool[rng.randrange(len(pool))]]
        else:
            out = [frame]
        if held and rng.random() < 0.5:
            out.append(held.pop(0))
        return out

    return tamper


def make_pair(
    settings: Settings,
    bots: tuple[str | None, str | None] = ("random", "greedy"),
    seed: bytes = b"harness",
    *,
    room: str = "TEST-ROOM",
    join_room: str | None = None,
    join_rounds: int | None = None,
    join_double: bool | None = None,
    join_move_time: int | None = None,
    move_time_s: int = 120,
    relay: bool = True,
    join_relay_key: bytes | None = None,
    auto_certify: bool = True,
    tamper: Tamper | None = None,
    timeouts: TimeoutPolicy | None = None,
    resend_after: float = 5.0,
    nonces: tuple[bytes, bytes] | None = None,
    deck: str = "shared",
    join_deck: str | None = None,
    watchers: bool | None = None,
    join_watchers: bool | None = None,
    publish: tuple[bool, bool] = (False, False),
) -> Pair:
    """Two sessions ready to play. With ``relay`` a :class:`Witness` (key from ``seed``) stands for the
    relay and both HELLOs bind its key; without, both bind 32 zero bytes (no certificate can check).
    ``deck``: the creator's (``"shared"`` or ``"sealed"``); ``join_deck`` the joiner's expectation (None: any).
    ``watchers``: the creator's (None: the deck's default); ``join_watchers`` the joiner's expectation (None:
    any); ``publish``: each seat's consent to a public archive."""
    witness = Witness(witness_key(seed), room, move_time_s, seat_keys=seat_keys(seed)) if relay else None
    rk = witness.public_key if witness is not None else ZERO_HASH
    a = Session.create(
        fixed_key(seed, 0),
        room,
        settings,
        nonces[0] if nonces is not None else _nonce(seed, 0),
        timeouts,
        move_time_s=move_time_s,
        relay_key=rk,
        resend_after=resend_after,
        deck=deck,
        watchers=watchers,
        publish=publish[0],
    )
    b = Session.join(
        fixed_key(seed, 1),
        join_room if join_room is not None else room,
        nonces[1] if nonces is not None else _nonce(seed, 1),
        rounds=join_rounds,
        double_at_8=join_double,
        move_time_s=join_move_time,
        relay_key=join_relay_key if join_relay_key is not None else rk,
        timeouts=timeouts,
        resend_after=resend_after,
        deck=join_deck,
        watchers=join_watchers,
        publish=publish[1],
    )
    rng = random.Random(int.from_bytes(hashlib.sha256(b"koikoi/harness-bots\x00" + seed).digest(), "big"))
    bot_objs = tuple(make_bot(n, random.Random(rng.getrandbits(64))) if n else None for n in bots)
    pair = Pair((a, b), (bot_objs[0], bot_objs[1]), tamper, witness, auto_certify)
    pair.note(0, a.start())
    pair.note(1, b.start())
    return pair


def run_match(
    settings: Settings,
    bots: tuple[str, str] = ("random", "greedy"),
    seed: bytes = b"harness",
    *,
    room: str = "TEST-ROOM",
    join_rounds: int | None = None,
    join_double: bool | None = None,
    tamper: Tamper | None = None,
    **options: Any,
) -> HarnessResult:
    """Play a whole match between two bots through two protocol sessions, in memory (options: see
    :func:`make_pair`)."""
    pair = make_pair(
        settings, bots, seed, room=room, join_rounds=join_rounds, join_double=join_double, tamper=tamper, **options
    )
    stalled = pair.run()
    return pair.result(stalled)


# -- two sealed seats in memory, without sessions (tests, the sealed line's vectors) ---------------------


LineChooser = Callable[[SealedSeat], Action]
"""``choose(seat)`` -> the decision of the seat that must move."""
LineTamper = Callable[[Sent, SealedSeat], "Sent | None"]
"""``tamper(message, its seat)`` -> the message delivered instead (None: withheld, and the pair stops)."""


def first_legal(seat: SealedSeat) -> Action:
    """The first legal action (a deterministic player for vectors)."""
    return seat.match.legal_actions()[0]


def run_pair(
    settings: Settings,
    first_dealer: int,
    secrets: tuple[bytes, bytes],
    choose: LineChooser = first_legal,
    *,
    cheater: int | None = None,
    tamper: LineTamper | None = None,
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
            if s.expected() == (s.seat, LineKind.MOVE):
                outs.append(s.move(choose(s)))
            for o in outs:
                if tamper is not None and o.seat == cheater:
                    t = tamper(o, s)
                    if t is None:
                        return seats, line
                    if t != o and t.kind is LineKind.SHUFFLE:
                        s.line.current.att.s1 = Shuffle.from_body(t.body)
                    elif t != o and t.kind is LineKind.SHUFFLE_LOCK:
                        s.line.current.att.s2 = ShuffleLock.from_body(t.body)
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
