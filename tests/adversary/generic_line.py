"""The generic adversary's one coupling to the protocol's internals (``koikoi.protocol``).

Everything :mod:`generic_adversary` knows about frames, sessions, the relay's witness, verdicts and costs goes
through this module, so that a rewritten line needs only this file re-pointed. Its API:

- :class:`Fields` / :func:`fields`: a signed message as its named fields (``match``, ``seq``, ``prev``,
  ``seat``, then the body's, in order); None for a frame that is no message (a RESEND, junk).
- :func:`rebuild`: the message with some fields replaced, signed again with a key (what a modified client
  holding that key sends); :func:`keep_signature`: the same bytes with another frame's signature (not
  re-signed). :func:`stop_frame`: a signed RESIGN / ABORT / TIMEOUT / ENDED / DISCLOSE at a chosen place.
- :class:`World`: two seats in memory (an honest one and the cheater, both running the real session), the
  relay's witness and a protocol clock. Every frame the cheater's session would send goes through a hook
  that returns what is really sent (the witness sees what is really sent); :meth:`World.inject` sends more.
  Line queries: :meth:`World.line` (a seat's line, frames), :meth:`World.round_of`, :meth:`World.awaited`,
  :meth:`World.certificate`, :meth:`World.disclose_body` (the cheater's true disclosure now); :meth:`World.adopt`
  (the cheater's session takes a mutation as its own message: it then follows the line it really sent).
- :class:`Verdict`, :meth:`World.verdict` (a seat's own) and :func:`audit_verdict` (the auditor's on a file).
- :class:`Cost` and :meth:`World.costs`: what each frame the honest seat received cost it, counted in
  expensive operations (referee message applications — a line rebuild or replay is one per message —,
  signature verifications and sealed scalar multiplications), never in time.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.bindings import crypto_core_ed25519_from_uniform, crypto_core_ed25519_scalar_reduce

from koikoi.engine import Settings
from koikoi.protocol import messages as _messages
from koikoi.protocol import proofs as _proofs
from koikoi.protocol import referee as _referee
from koikoi.protocol import sealed as _sealed
from koikoi.protocol import session as _session
from koikoi.protocol.audit import DECIDED, audit
from koikoi.protocol.errors import PROVABLE, ProtocolError
from koikoi.protocol.framing import encode
from koikoi.protocol.messages import BODY_SCHEMA, SEALED_MOVE_SCHEMA, MsgType, build, parse, parse_resend
from koikoi.protocol.referee import SEALED_CODES
from koikoi.protocol.sealed import CARD_POINTS, GROUP_ORDER, round_secret
from koikoi.protocol.sealed_line import SealedSeat
from koikoi.protocol.transcript import record
from koikoi.testing import Pair, fixed_key, make_pair

__all__ = [
    "ABORT_CODES",
    "DECKS",
    "LINE_TYPES",
    "ROUNDS",
    "STOP_KINDS",
    "Cost",
    "Fields",
    "Verdict",
    "World",
    "audit_verdict",
    "card_point",
    "encode_list",
    "fields",
    "frame_hash",
    "keep_signature",
    "random_point",
    "random_scalar",
    "rebuild",
    "special_scalars",
    "stop_frame",
]

DECKS = ("sealed", "shared")
ROUNDS = 6
"""The matches are this many rounds: short enough that every run reaches the last."""
LINE_TYPES = tuple(t.name for t in MsgType if t is not MsgType.ENDED)
"""The names of the message types a seat sends in the line (what a cheat may wait for)."""
STOP_KINDS = ("RESIGN", "ABORT", "TIMEOUT", "ENDED", "DISCLOSE")
"""What :func:`stop_frame` builds (DISCLOSE: a sealed match's stop, with the cheater's true secrets)."""
ABORT_CODES = tuple(sorted(PROVABLE | SEALED_CODES))
"""Every fault an ABORT may name."""

MOVE_TIME_S = 120


# -- frames ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fields:
    """A message as named fields: ``kind`` its type's name, ``names``/``values`` the header then the body."""

    kind: str
    names: tuple[str, ...]
    values: tuple[Any, ...]

    def get(self, name: str) -> Any:
        return self.values[self.names.index(name)]


_HEADER = ("match", "seq", "prev", "seat")


def fields(frame: bytes) -> Fields | None:
    """``frame`` as a message's fields (its signature not checked); None when it is no message."""
    if parse_resend(frame) is not None:
        return None
    try:
        m = parse(frame)
    except ProtocolError:
        return None
    schema = SEALED_MOVE_SCHEMA if m.type is MsgType.MOVE and len(m.body) == 3 else BODY_SCHEMA[m.type]
    names = (*_HEADER, *(n for n, _ in schema))
    return Fields(m.type.name, names, (m.match, m.seq, m.prev, m.seat, *m.body))


def rebuild(f: Fields, key: Ed25519PrivateKey, changes: dict[str, Any]) -> bytes:
    """``f`` with ``changes`` (field name -> value), encoded and signed with ``key``."""
    v = dict(zip(f.names, f.values, strict=True))
    v.update(changes)
    body = [v[n] for n in f.names[len(_HEADER) :]]
    return _build_any(key, MsgType[f.kind], v["match"], v["seq"], v["prev"], v["seat"], body)


def _build_any(
    key: Ed25519PrivateKey, t: MsgType, match: Any, seq: Any, prev: Any, seat: Any, body: list[Any]
) -> bytes:
    """:func:`build`, for any field values msgpack can encode (a wrong type or size included)."""
    return build(key, t, match, seq, prev, seat, body)


def keep_signature(new: bytes, old: bytes) -> bytes:
    """``new`` with ``old``'s signature (a mutation not signed again)."""
    return new[:-64] + old[-64:]


def stop_frame(
    kind: str, key: Ed25519PrivateKey, match: bytes, seq: int, prev: bytes, seat: int, body: list[Any]
) -> bytes:
    """A signed ``kind`` (one of :data:`STOP_KINDS`) with ``body``: RESIGN ``[]``; ABORT ``[code, message,
    evidence, evidence2]``; TIMEOUT ``[certificate, silent_frame]``; ENDED ``[hash]``; DISCLOSE ``[secrets]``."""
    return _build_any(key, MsgType[kind], match, seq, prev, seat, body)


def frame_hash(frame: bytes) -> bytes:
    """A message's hash (what PREV and evidence name)."""
    return _messages.msg_hash(frame)


def encode_list(frames: list[bytes]) -> bytes:
    """Frames as one msgpack list (the shape of a sealed fault's evidence)."""
    return encode(frames)


def random_point(rng: random.Random) -> bytes:
    """A valid group element that is no card (another point)."""
    return bytes(crypto_core_ed25519_from_uniform(rng.randbytes(32)))


def random_scalar(rng: random.Random) -> bytes:
    """A valid non-zero scalar."""
    return bytes(crypto_core_ed25519_scalar_reduce(rng.randbytes(64)))


def card_point(i: int) -> bytes:
    return CARD_POINTS[i % len(CARD_POINTS)]


def special_scalars() -> tuple[bytes, ...]:
    """Scalars of the right size that are not valid: zero, the group order L, L + 1, all ones."""
    return (bytes(32), GROUP_ORDER.to_bytes(32, "little"), (GROUP_ORDER + 1).to_bytes(32, "little"), b"\xff" * 32)


# -- verdicts ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Verdict:
    """How a match ended as one view says: ``status`` (complete, resigned, forfeit, on_time, abandoned,
    unfinished, invalid), the winner (None: a draw or none), the loser of an early ending, its code."""

    status: str
    winner: int | None
    loser: int | None
    code: str | None

    @property
    def decided(self) -> bool:
        return self.status in DECIDED

    def __str__(self) -> str:
        return f"{self.status}/{self.code} winner={self.winner} loser={self.loser}"


def audit_verdict(data: bytes) -> Verdict:
    """What ``koikoi audit`` says of a transcript's bytes."""
    rep = audit(data)
    if not rep.valid:
        return Verdict(rep.status, None, None, rep.errors[0].code if rep.errors else None)
    e = rep.ending or {}
    return Verdict(rep.status, rep.result.get("winner"), e.get("loser"), e.get("code"))


# -- costs ----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Cost:
    """What one frame received cost the honest seat: referee message applications beyond the messages the
    line gained (``replays``), signature verifications, sealed scalar multiplications; whether the frame
    ended the honest seat's match or cut its line back (then one rebuild of the line is allowed), and the
    line's length when it arrived."""

    kind: str
    applies: int = 0
    grew: int = 0
    verifies: int = 0
    mults: int = 0
    ended: bool = False
    cut: bool = False
    line: int = 0

    @property
    def replays(self) -> int:
        return max(0, self.applies - self.grew)


class _Meter:
    def __init__(self) -> None:
        self.on = False
        self.applies = 0
        self.verifies = 0
        self.mults = 0


_METER = _Meter()


@contextmanager
def _metered() -> Iterator[None]:
    """Count, while ``_METER.on``, every referee message application, signature check and scalar multiplication."""
    orig_accept = _referee.Referee.accept_msg
    orig_verify = _messages.verify
    orig_mul = _sealed._mul
    orig_proof_mul, orig_proof_base = _proofs._mul, _proofs._base

    def accept_msg(self: Any, msg: Any, *, verify_signature: bool = True) -> Any:
        if _METER.on:
            _METER.applies += 1
        return orig_accept(self, msg, verify_signature=verify_signature)

    def verify(key: Any, msg: Any) -> None:
        if _METER.on:
            _METER.verifies += 1
        orig_verify(key, msg)

    def mul(s: bytes, p: bytes) -> bytes | None:
        if _METER.on:
            _METER.mults += 1
        return orig_mul(s, p)

    def proof_mul(s: bytes, p: bytes) -> bytes | None:
        if _METER.on:
            _METER.mults += 1
        return orig_proof_mul(s, p)

    def proof_base(s: bytes) -> bytes | None:
        if _METER.on:
            _METER.mults += 1
        return orig_proof_base(s)

    patched = [
        (_referee.Referee, "accept_msg", accept_msg),
        (_messages, "verify", verify),
        (_referee, "verify", verify),
        (_session, "verify", verify),
        (_sealed, "_mul", mul),
        (_proofs, "_mul", proof_mul),
        (_proofs, "_base", proof_base),
    ]
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patched]
    try:
        for obj, name, new in patched:
            setattr(obj, name, new)
        yield
    finally:
        for obj, name, old in saved:
            setattr(obj, name, old)


# -- the world --------------------------------------------------------------------------------------------

SendHook = Callable[[bytes, bool], list[tuple[bytes, bool]]]
"""``hook(frame, ctl)`` -> the ``(frame, ctl)`` pairs the cheater really sends instead of ``frame``."""


class _CheatPair(Pair):
    cheater: int = 1
    hook: SendHook | None = None
    costs: list[Cost]
    received: list[bytes]

    def deliver(self, seat: int, frame: bytes) -> None:
        if seat != self.cheater or self.hook is None:
            super().deliver(seat, frame)
            return
        ctl = self.sessions[seat].is_control(frame)
        for f, c in self.hook(frame, ctl):
            self.inject(seat, f, ctl=c)

    def receive_one(self, seat: int) -> None:
        if seat == self.cheater:
            self.received.append(self.queues[seat][0])
            super().receive_one(seat)
            return
        frame = self.queues[seat][0]
        s = self.sessions[seat]
        f = fields(frame)
        cost = Cost(f.kind if f is not None else "RESEND" if parse_resend(frame) else "junk")
        r = s.referee
        before, superseded, was_ended = r.next_seq, len(r.superseded), s.ended is not None
        cost.line = before
        _METER.applies = _METER.verifies = _METER.mults = 0
        _METER.on = True
        try:
            super().receive_one(seat)
        finally:
            _METER.on = False
        r = s.referee
        cost.applies, cost.verifies, cost.mults = _METER.applies, _METER.verifies, _METER.mults
        cost.grew = max(0, r.next_seq - before) + (len(r.superseded) - superseded)
        cost.cut = len(r.superseded) > superseded
        cost.ended = s.ended is not None and not was_ended
        self.costs.append(cost)


class World:
    """An honest seat and a cheater in memory, in a 6-round match of ``deck``; greedy bots on both seats."""

    def __init__(self, deck: str, seed: int, cheater: int, hook: SendHook) -> None:
        self.deck = deck
        self.cheater = cheater
        self.honest = 1 - cheater
        self.seed = b"generic adversary %d" % seed
        base = make_pair(Settings(ROUNDS), ("greedy", "greedy"), seed=self.seed, deck=deck, move_time_s=MOVE_TIME_S)
        pair = _CheatPair(base.sessions, base.bots, None, base.witness, base.auto_certify)
        pair.files, pair.events = base.files, base.events
        pair.queues, pair.now = base.queues, base.now
        pair.cheater, pair.hook, pair.costs, pair.received = cheater, hook, [], []
        # the sessions' first frames (the creator's HELLO) are still queued in them: they go through the hook
        self.pair = pair
        self.key: Ed25519PrivateKey = fixed_key(self.seed, cheater)

    # -- running

    def run(self, max_steps: int) -> bool:
        """Run until both seats end or nothing more can happen (True: it stalled). ``RuntimeError`` when
        ``max_steps`` pass first."""
        with _metered():
            return self.pair.run(max_steps)

    def inject(self, frame: bytes, *, ctl: bool = False) -> None:
        """The cheater sends ``frame`` now (the witness sees it)."""
        self.pair.inject(self.cheater, frame, ctl=ctl)

    def adopt(self, original: bytes, replacement: bytes) -> bool:
        """Make the cheater's session hold ``replacement`` where it holds its own ``original`` — in its line
        and in its transcript — as a modified client that records what it really sends; its inner state (its
        engine, its sealed secrets) stays what ``original`` made. Only for the cheater's newest message (later
        ones would link to ``original``); False when it is not that, or ``replacement`` is no message."""
        s = self.pair.sessions[self.cheater]
        r = s.referee
        try:
            new = parse(replacement)
            new_rec = record(replacement)
        except (ProtocolError, ValueError):
            return False
        if not r.msgs or r.msgs[-1].frame != original:
            return False
        r.msgs[-1] = new
        s._seen.add(replacement)
        f = self.pair.files[self.cheater]
        old_rec = record(original)
        at = f.rfind(old_rec)
        if at >= 0:
            f[at : at + len(old_rec)] = new_rec
        return True

    def deliver_now(self) -> None:
        """Hand the honest seat every frame in transit to it now (after the run: re-sent frames)."""
        with _metered():
            while self.pair.queues[self.honest]:
                self.pair.receive_one(self.honest)

    @property
    def received(self) -> list[bytes]:
        """Every frame the honest seat sent that reached the cheater, in order."""
        return self.pair.received

    @property
    def costs(self) -> list[Cost]:
        return self.pair.costs

    @property
    def now(self) -> float:
        return self.pair.now

    # -- the line

    def line(self, seat: int) -> list[bytes]:
        """``seat``'s line as its session holds it (superseded messages left out)."""
        return [m.frame for m in self.pair.sessions[seat].referee.msgs]

    def match_id(self) -> bytes:
        sid = self.pair.sessions[self.cheater].referee.sid
        return sid if sid is not None else b""

    def round_of(self, seat: int) -> int:
        """The round ``seat``'s match is in (0 before the handshake is done; the last round after it)."""
        m = self.pair.sessions[seat].referee.match
        return 0 if m is None else m.round

    def awaited(self, seat: int) -> int | None:
        """Whom ``seat``'s line waits for (None: it is finished)."""
        s = self.pair.sessions[seat]
        if s.ended is not None:
            return None
        exp = s.referee.expected()
        return None if exp is None else exp[0]

    def certificate(self, silent_seat: int) -> bytes:
        """The relay's silence certificate against ``silent_seat`` now (empty without a witness)."""
        w = self.pair.witness
        return w.certify(silent_seat, self.pair.now) if w is not None else b""

    def disclose_body(self) -> list[Any] | None:
        """The cheater's true DISCLOSE body for its current round (sealed mode), or None."""
        sl = self.pair.sessions[self.cheater].referee.sealed
        if not isinstance(sl, SealedSeat):
            return None
        r = sl._round
        return [[round_secret(sl._secret, r.number, n) for n in range(max(1, len(r.attempts)))]]

    # -- verdicts

    def verdict(self, seat: int) -> Verdict | None:
        """``seat``'s session's own verdict (None: its match has not ended)."""
        e = self.pair.sessions[seat].ended
        if e is None:
            return None
        o = e.outcome
        return Verdict(o.status, o.winner if o.status in DECIDED else None, o.loser, o.code)

    def transcript(self, seat: int) -> bytes:
        for s in (0, 1):
            self.pair.flush(s)
        return bytes(self.pair.files[seat])
