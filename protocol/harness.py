"""An in-memory harness: two sessions wired together, bots on both seats, transcripts in memory.

``run_match(settings, bots=("random", "greedy"), seed=b"...")`` plays a whole
match through the protocol (handshake, commit-reveal, every move signed and
verified, the result countersigned) and returns both sessions, their
transcripts (bytes in the transcript format) and their events. A ``tamper``
hook sees every frame in transit and returns what is delivered instead
(nothing: dropped; two: duplicated; changed bytes: mutated; it may hold
frames back and release them later: reordered).

Deterministic from ``seed``: keys, nonces and bots all derive from it.
"""

from __future__ import annotations

import hashlib
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..engine.bots import Bot, make_bot
from ..engine.match import Settings
from .audit import AuditReport, audit
from .messages import BODY_SCHEMA, MsgType, build, parse
from .session import Event, MatchEnded, Session, TimeoutPolicy
from .transcript import MAGIC, record

__all__ = [
    "HarnessResult",
    "Pair",
    "Tamper",
    "fixed_key",
    "reforge",
    "run_match",
]

Tamper = Callable[[int, int, bytes], Sequence[bytes]]
"""``tamper(sender_seat, index, frame)`` -> the frames delivered instead (``index`` counts the
sender's frames from 0)."""


def fixed_key(seed: bytes, seat: int) -> Ed25519PrivateKey:
    """A deterministic key for tests and vectors (never for real play)."""
    return Ed25519PrivateKey.from_private_bytes(
        hashlib.sha256(b"koikoi/test-key/v1\x00" + seed + bytes([seat])).digest()
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
    names = [n for n, _ in BODY_SCHEMA[t]]
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

    def ended(self, seat: int) -> MatchEnded | None:
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
    files: tuple[bytearray, bytearray] = field(default_factory=lambda: (bytearray(MAGIC), bytearray(MAGIC)))
    events: tuple[list[Event], list[Event]] = field(default_factory=lambda: ([], []))
    queues: tuple[deque[bytes], deque[bytes]] = field(default_factory=lambda: (deque(), deque()))
    sent: list[int] = field(default_factory=lambda: [0, 0])

    def flush(self, seat: int) -> None:
        s = self.sessions[seat]
        f = self.files[seat]
        for rec in s.records():
            f += record(rec.frame)
        for frame in s.frames_to_send():
            self.deliver(seat, frame)

    def deliver(self, seat: int, frame: bytes) -> None:
        """Put ``seat``'s frame in transit (through the tamper hook)."""
        out: Sequence[bytes] = [frame]
        if self.tamper is not None:
            out = self.tamper(seat, self.sent[seat], frame)
        self.sent[seat] += 1
        self.queues[1 - seat].extend(out)

    def step(self) -> bool:
        """Deliver one frame or make one bot move; False when nothing can happen."""
        for seat in (0, 1):
            self.flush(seat)
        for seat in (0, 1):
            q = self.queues[seat]
            if q:
                self.events[seat].extend(self.sessions[seat].receive(q.popleft()))
                self.flush(seat)
                return True
        for seat in (0, 1):
            s = self.sessions[seat]
            bot = self.bots[seat]
            if s.my_turn and bot is not None:
                self.events[seat].extend(s.play(bot.choose(s.view())))
                self.flush(seat)
                return True
        return False

    def run(self, max_steps: int = 100_000) -> bool:
        """Step until both sessions end or nothing can happen; returns True when it stalled."""
        for _ in range(max_steps):
            if all(s.is_finished for s in self.sessions) and not any(self.queues):
                self.flush(0)
                self.flush(1)
                return False
            if not self.step():
                return not all(s.is_finished for s in self.sessions)
        raise RuntimeError("the harness did not finish")

    def reconnect(self) -> None:
        """Both sides send again what the other has not acknowledged (as after a lost connection)."""
        for seat in (0, 1):
            for frame in self.sessions[seat].unacknowledged():
                self.queues[1 - seat].append(frame)

    def result(self, stalled: bool) -> HarnessResult:
        return HarnessResult(self.sessions, (bytes(self.files[0]), bytes(self.files[1])), self.events, stalled)


def make_pair(
    settings: Settings,
    bots: tuple[str | None, str | None] = ("random", "greedy"),
    seed: bytes = b"harness",
    *,
    room: str = "TEST-ROOM",
    join_rounds: int | None = None,
    join_double: bool | None = None,
    tamper: Tamper | None = None,
    timeouts: TimeoutPolicy | None = None,
) -> Pair:
    a = Session.create(fixed_key(seed, 0), room, settings, _nonce(seed, 0), timeouts)
    b = Session.join(
        fixed_key(seed, 1), room, _nonce(seed, 1), rounds=join_rounds, double_at_8=join_double, timeouts=timeouts
    )
    rng = random.Random(int.from_bytes(hashlib.sha256(b"koikoi/harness-bots\x00" + seed).digest(), "big"))
    bot_objs = tuple(make_bot(n, random.Random(rng.getrandbits(64))) if n else None for n in bots)
    pair = Pair((a, b), (bot_objs[0], bot_objs[1]), tamper)
    pair.events[0].extend(a.start())
    pair.events[1].extend(b.start())
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
) -> HarnessResult:
    """Play a whole match between two bots through two protocol sessions, in memory."""
    pair = make_pair(settings, bots, seed, room=room, join_rounds=join_rounds, join_double=join_double, tamper=tamper)
    stalled = pair.run()
    return pair.result(stalled)
