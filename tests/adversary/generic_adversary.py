"""A generic adversary for the match line: one seat honest, the other a cheater that may, at any message it
would send, send something else — and the invariant every run must keep.

A :class:`Plan` is a deck mode, a game seed, the cheater's seat and a few :class:`Cheat` s. Each cheat waits
for a moment of the cheater's line (a round, the n-th new message of that round, optionally a message type)
and then does one thing instead of, or besides, sending that message (:data:`ACTIONS`): drop it once,
withhold it for good, duplicate it, hold it and release it after later frames (out of order), replace one of
its fields — anywhere in the message, inside the sealed lists too — by a wrong-sized value, another valid
point or scalar, an invalid scalar of the right size, or a value from another message or round, signed again
with the cheater's key (or not), send it at another sequence number (a taken one, linked where it lies, or
one ahead), send it besides an old frame (a replay), flood junk at taken sequence numbers, or send a
well-formed, signed stop (RESIGN, ABORT naming any fault with any evidence, TIMEOUT with the relay's real
certificate or none, ENDED, a sealed DISCLOSE) in place of it, after it, at the honest seat's head or cutting
back its line. After the run every frame the cheater sent is sent again (after the stop).

The cheater's session is the real one; it does not know what its hook changed (it records what it meant to
send, unless a cheat makes it adopt the mutation: then its line holds what it sent, its inner state what it
meant), so its own verdict counts only where it has one: not after an adoption, and it is compared with the
honest seat's only when the cheater sent nothing its session did not make and kept back nothing it made.
The checks (:func:`check`), on the
honest seat's verdict, the cheater's, and ``koikoi audit``'s on both transcripts:

- ``honest_loses``: no view names the honest seat the loser of an early ending;
- ``cheater_wins_by_ending``: none names the cheater the winner of anything but a played-out match;
- ``winner_is_loser``: none names one seat both the winner and the loser;
- ``honest_audit_disagrees`` / ``honest_file_invalid``: the honest seat's verdict is the auditor's on its file;
- ``cheater_audit_disagrees``, ``views_disagree``, ``files_disagree``: the cheater's session agrees with the
  auditor on its file and with the honest seat; two files that both decide the match decide it alike;
- ``honest_stuck``: a run that stalls never waits for the honest seat itself (a cheater that kept its own
  line would then win on time);
- ``verdict_changed``: frames re-sent after the end change nothing;
- ``shape_not_at_door``: a run whose one cheat gave a 32-byte field another size (signed) and ended in a
  forfeit names ``bad_shape`` (or ``malformed_message``), not a fault found later;
- ``cpu_replays``, ``cpu_verifies``, ``cpu_mults``: each frame the honest seat receives costs it a bounded
  number of referee message applications (beyond what the line gained), signature checks and scalar
  multiplications, counted, not timed; a frame that ends its match or cuts its line back may cost one
  rebuild of the line;
- ``raised``, ``no_end``: nothing raises, and the run ends.

Run by hand: ``python tests/adversary/generic_adversary.py --minutes 25 --out violations.json`` (a seeded
search that keeps going after a violation and shrinks the first example of each distinct one).
Everything about the protocol itself is in :mod:`generic_line`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from generic_line import (
    ABORT_CODES,
    DECKS,
    ROUNDS,
    STOP_KINDS,
    Cost,
    Fields,
    Verdict,
    World,
    audit_verdict,
    card_point,
    encode_list,
    fields,
    frame_hash,
    keep_signature,
    random_point,
    random_scalar,
    rebuild,
    special_scalars,
    stop_frame,
)

ACTIONS = (
    "pass",
    "drop",
    "withhold",
    "duplicate",
    "hold",
    "mutate",
    "mutate_unsigned",
    "mutate_both",
    "mutate_adopt",
    "mutate_adopt",
    "reseq",
    "replay",
    "flood",
    "stop",
    "stop_after",
)
STOP_ACTIONS = frozenset({"stop", "stop_after"})

REPLAYS_PER_FRAME = 24
"""Referee message applications a received frame may cost beyond the messages the line gained (an honest
match needs at most a few: one undo of a refused move is a rebuild only in a line that keeps none)."""
VERIFIES_PER_FRAME = 8
"""Signature checks per received frame (the frame's own, an ABORT's evidence, a certificate's frame)."""
MULTS_PER_FRAME = 1000
"""Sealed scalar multiplications per received frame, the proofs' included (honest play: at most about 700, O's
check of K's SHUFFLE and its own SHUFFLE_LOCK with its proofs; a frame refused early costs far less)."""
END_REBUILDS = 8
"""Line rebuilds a frame that ends the match or cuts the line back may cost (its scalar multiplications are then
bounded by those of the rebuilds)."""
MAX_STEPS = 30_000
WRONG_SIZES = (0, 1, 31, 33, 64, 700, 40_000)
WRONG_SIZED = " (wrong size)"


@dataclass(frozen=True, slots=True)
class Cheat:
    """At the first new message of the cheater at or after the ``nth`` of ``round`` (0: the handshake), of
    type ``want`` if set, do ``action``; ``arg`` chooses its details."""

    round: int
    nth: int
    want: str | None
    action: str
    arg: int

    def __str__(self) -> str:
        w = f" {self.want}" if self.want else ""
        return f"{self.action}@r{self.round}#{self.nth}{w}/{self.arg}"


@dataclass(frozen=True, slots=True)
class Plan:
    deck: str
    seed: int
    cheater: int
    cheats: tuple[Cheat, ...]

    def __str__(self) -> str:
        return f"Plan({self.deck!r}, seed={self.seed}, cheater={self.cheater}, [{', '.join(map(str, self.cheats))}])"

    def code(self) -> str:
        """The plan as Python (to paste into a regression test)."""
        cs = ", ".join(f"Cheat({c.round}, {c.nth}, {c.want!r}, {c.action!r}, {c.arg})" for c in self.cheats)
        return f"Plan({self.deck!r}, {self.seed}, {self.cheater}, ({cs},))"


@dataclass(slots=True)
class Violation:
    invariant: str
    detail: str

    def __str__(self) -> str:
        return f"{self.invariant}: {self.detail}"


@dataclass(slots=True)
class Result:
    plan: Plan
    violations: list[Violation]
    fired: list[str]
    fired_round: int | None
    verdicts: dict[str, str]
    frames: int
    max_cost: dict[str, int]

    def report(self) -> str:
        lines = [
            f"plan: {self.plan}",
            f"  repro: run_plan({self.plan.code()})",
            f"  fired: {self.fired or 'nothing'}",
            f"  verdicts: {self.verdicts}",
            f"  honest frames received: {self.frames}, max cost per frame: {self.max_cost}",
        ]
        lines += [f"  VIOLATION {v}" for v in self.violations]
        return "\n".join(lines)


# -- values -----------------------------------------------------------------------------------------------


def _paths(value: Any, path: tuple[int, ...] = ()) -> list[tuple[tuple[int, ...], Any]]:
    """Every node of a field's value (lists and what they hold), with its path."""
    out = [(path, value)]
    if isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


def _replace(value: Any, path: tuple[int, ...], new: Any) -> Any:
    if not path:
        return new
    out = list(value)
    out[path[0]] = _replace(value[path[0]], path[1:], new)
    return out


def _as_list(v: Any) -> Any:
    return [_as_list(x) for x in v] if isinstance(v, (list, tuple)) else v


class AdversaryBug(Exception):
    """The adversary's own code failed (not the protocol's): the run proves nothing."""


class Adversary:
    """The cheater's send hook: carries out a :class:`Plan` on the cheater's outgoing frames."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.pending = list(plan.cheats)
        self.fired: list[str] = []
        self.fired_round: int | None = None
        self.world: World | None = None
        self.held: list[list[Any]] = []  # [frames left before release, frame, ctl]
        self.withheld: set[bytes] = set()
        self.replaced: dict[bytes, bytes] = {}  # a mutation sent for every later copy of the original
        self.seen: set[bytes] = set()
        self.originals: set[bytes] = set()  # every frame the cheater's session made
        self.sent: list[bytes] = []  # every frame the cheater really sent (for the re-sends after the end)
        self.per_round: dict[int, int] = {}
        self.adopted = 0  # mutations the cheater's session took as its own (its verdict then counts for nothing)
        self.wrong_sized = 0  # signed mutations that gave a 32-byte field another size
        self.pool: list[Fields] = []  # every message seen, cheater's and honest's

    # -- the hook

    def hook(self, frame: bytes, ctl: bool) -> list[tuple[bytes, bool]]:
        try:
            return self._hook(frame, ctl)
        except Exception as e:  # a bug of this test, never a violation of the protocol's
            raise AdversaryBug(f"the adversary itself failed: {type(e).__name__}: {e}") from e

    def _hook(self, frame: bytes, ctl: bool) -> list[tuple[bytes, bool]]:
        out: list[tuple[bytes, bool]] = []
        self.originals.add(frame)
        for h in self.held:
            h[0] -= 1
        for h in [h for h in self.held if h[0] <= 0]:
            self.held.remove(h)
            out.append((h[1], h[2]))
        if frame in self.withheld:
            return self._sent(out)
        if frame in self.replaced:
            out.append((self.replaced[frame], ctl))
            return self._sent(out)
        w = self.world
        assert w is not None
        f = fields(frame)
        new = f is not None and f.kind != "ENDED" and frame not in self.seen
        rnd = w.round_of(w.cheater)
        cheat = self._due(f, rnd, new)
        if new:
            assert f is not None
            self.seen.add(frame)
            self.pool.append(f)
            self.per_round[rnd] = self.per_round.get(rnd, 0) + 1
        self._learn_honest()
        if cheat is None:
            out.append((frame, ctl))
            return self._sent(out)
        self.pending.remove(cheat)
        if self.fired_round is None:
            self.fired_round = rnd
        rng = random.Random(cheat.arg)
        what, frames = self._do(cheat, f, frame, ctl, rng)
        self.fired.append(f"r{rnd} {f.kind if f else 'frame'} seq {f.get('seq') if f else '-'}: {cheat.action} {what}")
        out += frames
        return self._sent(out)

    def _sent(self, out: list[tuple[bytes, bool]]) -> list[tuple[bytes, bool]]:
        self.sent += [f for f, _ in out]
        return out

    def forked(self) -> bool:
        """True when the cheater sent a message its own session did not make (a mutation, a forged stop), or
        kept back for good a message its session made (its line then holds what the other never got: withholding
        its last RESULT gives it a complete file while the honest seat wins on time, spec/protocol.md §6.1)."""
        honest = set(self.honest_msgs)
        sent = set(self.sent)
        if any(f not in sent and fields(f) is not None for f in self.originals):
            return True
        return any(f not in self.originals and f not in honest and fields(f) is not None for f in self.sent)

    def _due(self, f: Fields | None, rnd: int, new: bool) -> Cheat | None:
        count = self.per_round.get(rnd, 0)
        for c in self.pending:
            if not new and c.action not in STOP_ACTIONS:
                continue
            if c.want is not None and (f is None or f.kind != c.want):
                continue
            if rnd > c.round or (rnd == c.round and count >= c.nth):
                return c
        return None

    def _learn_honest(self) -> None:
        w = self.world
        assert w is not None
        for frame in w.received[len(self._honest_seen) :]:
            self._honest_seen.append(frame)
            f = fields(frame)
            if f is not None:
                self.pool.append(f)
                self.honest_msgs.append(frame)

    _honest_seen: list[bytes]
    honest_msgs: list[bytes]

    def attach(self, world: World) -> None:
        self.world = world
        self._honest_seen = []
        self.honest_msgs = []

    # -- the cheats

    def _do(
        self, c: Cheat, f: Fields | None, frame: bytes, ctl: bool, rng: random.Random
    ) -> tuple[str, list[tuple[bytes, bool]]]:
        a = c.action
        w = self.world
        assert w is not None
        if a == "pass":
            return "", [(frame, ctl)]
        if a == "drop":
            return "", []
        if a == "withhold":
            self.withheld.add(frame)
            return "", []
        if a == "duplicate":
            return "", [(frame, ctl), (frame, ctl)]
        if a == "hold":
            n = 1 + rng.randrange(4)
            self.held.append([n, frame, ctl])
            return f"for {n} frames", []
        if a in STOP_ACTIONS:
            what, stop = self._stop(f, frame, rng)
            return what, [(stop, False)] if a == "stop" else [(frame, ctl), (stop, False)]
        assert f is not None
        if a == "replay":
            old = self.sent[rng.randrange(len(self.sent))] if self.sent and rng.random() < 0.5 else None
            if old is None and self.honest_msgs:
                old = rng.choice(self.honest_msgs)
            return "an old frame", [(frame, ctl)] + ([(old, False)] if old is not None else [])
        if a == "reseq":
            what, bad = self._reseq(f, rng)
            return what, [(bad, ctl)]
        if a == "flood":
            junk = [self._reseq(f, rng)[1] for _ in range(8)]
            return "8 frames at taken sequence numbers", [(frame, ctl)] + [(j, False) for j in junk]
        what, bad = self._mutate(f, rng)
        if a in ("mutate", "mutate_adopt") and what.endswith(WRONG_SIZED):
            self.wrong_sized += 1
        if a == "mutate_unsigned":
            bad = keep_signature(bad, frame)
        if a == "mutate_both":
            pair = [(frame, ctl), (bad, ctl)] if rng.random() < 0.5 else [(bad, ctl), (frame, ctl)]
            return what, pair
        if a == "mutate_adopt":  # the cheater's session takes the mutation as its own (else every copy is replaced)
            adopted = w.adopt(frame, bad)
            self.adopted += adopted
            self.replaced[frame] = bad
            return what + (" (adopted)" if adopted else " (every copy)"), [(bad, ctl)]
        return what, [(bad, ctl)]

    def _mutate(self, f: Fields, rng: random.Random) -> tuple[str, bytes]:
        w = self.world
        assert w is not None
        nodes = [(i, p, v) for i in range(len(f.names)) for p, v in _paths(_as_list(f.values[i]))]
        body_nodes = [n for n in nodes if n[0] >= 4]
        if body_nodes and rng.random() < 0.8:
            nodes = body_nodes
        i, path, old = rng.choice(nodes)
        name = f.names[i]
        kind, new = self._value(f, name, path, old, rng)
        if isinstance(old, bytes) and len(old) == 32 and isinstance(new, bytes) and len(new) != 32:
            kind += WRONG_SIZED
        value = _replace(_as_list(f.values[i]), path, new)
        where = name + "".join(f"[{p}]" for p in path)
        return f"{where} <- {kind}", rebuild(f, w.key, {name: value})

    def _value(self, f: Fields, name: str, path: tuple[int, ...], old: Any, rng: random.Random) -> tuple[str, Any]:
        """A replacement for one node: (what it is, the value)."""
        kinds: list[str] = ["other_field", "other_round"]
        if isinstance(old, bytes):
            kinds += ["wrong_size", "wrong_size", "point", "scalar", "bad_scalar", "card"]
        elif isinstance(old, bool) or old is None:
            kinds += ["int"]
        elif isinstance(old, int):
            kinds += ["plus", "minus", "big", "zero"]
        elif isinstance(old, list):
            kinds += ["drop_one", "add_one", "add_junk", "empty", "huge", "swap"]
        else:
            kinds += ["int"]
        k = rng.choice(kinds)
        if k == "wrong_size":
            n = rng.choice(WRONG_SIZES)
            return f"{n} bytes", rng.randbytes(n)
        if k == "point":
            return "another valid point", random_point(rng)
        if k == "scalar":
            return "another valid scalar", random_scalar(rng)
        if k == "bad_scalar":
            return "an invalid scalar", rng.choice(special_scalars())
        if k == "card":
            return "a card point", card_point(rng.randrange(48))
        if k == "int":
            return "an int", 7
        if k == "plus":
            return "+1", old + 1
        if k == "minus":
            return "-1", max(0, old - 1) if old > 0 else 1
        if k == "big":
            return "2^32", 1 << 32
        if k == "zero":
            return "0", 0
        if k == "drop_one":
            return "one fewer", old[:-1]
        if k == "add_one":
            return "one more (a copy)", [*old, old[0]] if old else [bytes(32)]
        if k == "add_junk":
            return "one more (random)", [*old, rng.randbytes(32)]
        if k == "empty":
            return "empty", []
        if k == "huge":
            return "40 KB", rng.randbytes(40_000)
        if k == "swap":
            if len(old) < 2:
                return "empty", []
            j = rng.randrange(len(old) - 1)
            return "two swapped", [*old[:j], old[j + 1], old[j], *old[j + 2 :]]
        # a value from another message: the same field of an earlier message of this type (another round)
        # or any value of the same Python type anywhere
        same: list[Any] = []
        if k == "other_round":
            for g in self.pool:
                if g.kind == f.kind and name in g.names and g.values != f.values:
                    for p, v in _paths(_as_list(g.get(name))):
                        if p == path and v != old:
                            same.append(v)
        if not same:
            for g in self.pool[-200:]:
                for j in range(len(g.names)):
                    for _p, v in _paths(_as_list(g.values[j])):
                        if type(v) is type(old) and v != old and (not isinstance(v, bytes) or len(v) < 5000):
                            same.append(v)
            k = "other_field"
        if not same:
            return "40 KB", rng.randbytes(40_000)
        return f"{k.replace('_', ' ')}", rng.choice(same)

    def _reseq(self, f: Fields, rng: random.Random) -> tuple[str, bytes]:
        """``f`` at another sequence number: a taken one where the honest seat's message lies (linked to the
        message before it there), or one ahead."""
        w = self.world
        assert w is not None
        line = w.line(w.honest)
        honest_at = [i for i, fr in enumerate(line) if i >= 2 and _seat(fr) == w.honest]
        if honest_at and rng.random() < 0.8:
            s = max(honest_at) if rng.random() < 0.5 else rng.choice(honest_at)
            return f"seq {s} (taken, linked)", rebuild(f, w.key, {"seq": s, "prev": frame_hash(line[s - 1])})
        s = f.get("seq") + 1 + rng.randrange(3)
        return f"seq {s} (ahead)", rebuild(f, w.key, {"seq": s})

    def _stop(self, f: Fields | None, frame: bytes, rng: random.Random) -> tuple[str, bytes]:
        w = self.world
        assert w is not None
        kinds = [k for k in STOP_KINDS if k != "DISCLOSE" or w.deck == "sealed"]
        kind = rng.choice(kinds)
        line = w.line(w.honest)
        place = rng.randrange(3)
        if place == 0 and f is not None:
            seq, prev, where = f.get("seq"), f.get("prev"), "in its place"
        elif place == 1 or len(line) < 4:
            seq, prev, where = len(line), frame_hash(line[-1]) if line else bytes(32), "at the honest head"
        else:
            back = 1 + rng.randrange(min(3, len(line) - 3))
            seq, prev, where = len(line) - back, frame_hash(line[len(line) - back - 1]), f"{back} back"
        body: list[Any]
        honest = self.honest_msgs
        if kind == "RESIGN":
            body, what = [], ""
        elif kind == "ABORT":
            twins = self._twins()
            if twins and rng.random() < 0.5:  # two honest messages for one sequence number: "equivocation"
                code, (ev, ev2) = "equivocation", rng.choice(twins)
            else:
                code = rng.choice(ABORT_CODES)
                ev, ev2 = self._evidence(rng)
            body, what = [code, "generic adversary", ev, ev2], code
        elif kind == "TIMEOUT":
            cert = rng.choice([w.certificate(w.honest), w.certificate(w.honest), b"", rng.randbytes(100)])
            silent = rng.choice([b"", b"", rng.choice(honest) if honest else b"", rng.randbytes(50)])
            body, what = [cert, silent], "with a certificate" if cert else "no certificate"
        elif kind == "ENDED":
            pool = honest or [frame]
            body, what = [frame_hash(rng.choice(pool))], ""
        else:
            d = w.disclose_body()
            body, what = (
                (d, "true secrets") if d is not None and rng.random() < 0.8 else ([[random_scalar(rng)]], "junk")
            )
        stop = stop_frame(kind, w.key, w.match_id(), seq, prev, w.cheater, body)
        return f"{kind} {what} {where} (seq {seq})", stop

    def _twins(self) -> list[tuple[bytes, bytes]]:
        """Pairs of different honest messages for one sequence number (one superseded by a cut)."""
        by_seq: dict[int, set[bytes]] = {}
        for fr in self.honest_msgs:
            g = fields(fr)
            if g is not None:
                by_seq.setdefault(g.get("seq"), set()).add(fr)
        out: list[tuple[bytes, bytes]] = []
        for v in by_seq.values():
            if len(v) > 1:
                a, b = sorted(v)[:2]
                out.append((a, b))
        return out

    def _evidence(self, rng: random.Random) -> tuple[bytes, bytes]:
        honest = self.honest_msgs
        if not honest:
            return b"", b""
        by_seq: dict[int, list[bytes]] = {}
        for fr in honest:
            g = fields(fr)
            if g is not None:
                by_seq.setdefault(g.get("seq"), []).append(fr)
        k = rng.randrange(6)
        if k == 0:
            return b"", b""
        if k == 1 and self._twins():
            return rng.choice(self._twins())
        if k == 2:
            return rng.choice(honest), rng.choice(honest)
        if k == 3:
            return encode_list(honest[-rng.randrange(1, 12) :]), b""
        if k == 4:
            return rng.randbytes(40_000), b""
        return rng.choice(honest), b""


# -- a run and its checks ---------------------------------------------------------------------------------


def _cost_violations(costs: list[Cost]) -> list[Violation]:
    """Each received frame within the bounds; one that ends the honest seat's match or cuts its line back (once
    a match, or once a round) may cost up to :data:`END_REBUILDS` rebuilds of the line instead."""
    out: list[Violation] = []
    seen: set[str] = set()
    for c in costs:
        once = c.ended or c.cut
        checks = (
            ("cpu_replays", c.replays, REPLAYS_PER_FRAME + (END_REBUILDS * c.line if once else 0)),
            ("cpu_verifies", c.verifies, VERIFIES_PER_FRAME),
            ("cpu_mults", c.mults, MULTS_PER_FRAME if not once else None),
        )
        for name, got, bound in checks:
            if bound is not None and got > bound and name not in seen:
                seen.add(name)
                out.append(Violation(name, f"a {c.kind} received at line length {c.line} cost {got} (bound {bound})"))
    return out


def check(w: World, stalled: bool, views: dict[str, Verdict | None], forked: bool) -> list[Violation]:
    """The invariant on one finished run (see the module's docstring). ``forked``: the cheater sent a message
    its own session did not make (its session's view is then not an honest one)."""
    out: list[Violation] = []
    honest, cheater = w.honest, w.cheater
    rules: tuple[tuple[str, Callable[[Verdict], bool]], ...] = (
        ("honest_loses", lambda v: v.loser == honest),
        ("cheater_wins_by_ending", lambda v: v.winner == cheater and v.status != "complete"),
        ("winner_is_loser", lambda v: v.winner is not None and v.winner == v.loser),
    )
    for invariant, broken in rules:
        bad = [f"{name}: {v}" for name, v in views.items() if v is not None and broken(v)]
        if bad:
            out.append(Violation(invariant, "; ".join(bad)))
    hv, ha = views["honest seat"], views["honest file"]
    cv, ca = views["cheater seat"], views["cheater file"]
    assert ha is not None and ca is not None
    if ha.status == "invalid":
        out.append(Violation("honest_file_invalid", f"honest file: {ha}"))
    if hv is not None and _key(ha) != _key(hv):
        out.append(Violation("honest_audit_disagrees", f"honest seat {hv}, audit of its file {ha}"))
    if hv is None and ha.status not in ("unfinished", "invalid"):
        out.append(Violation("honest_audit_disagrees", f"honest seat unfinished, audit of its file {ha}"))
    if cv is not None and _key(ca) != _key(cv):
        out.append(Violation("cheater_audit_disagrees", f"cheater seat {cv}, audit of its file {ca}"))
    if not forked and cv is not None and hv is not None and _key(cv) != _key(hv):
        out.append(Violation("views_disagree", f"honest seat {hv}, cheater seat {cv}"))
    if not forked and ca.decided and ha.decided and _key(ca) != _key(ha):
        out.append(Violation("files_disagree", f"honest file {ha}, cheater file {ca}"))
    if stalled and hv is None and w.awaited(honest) == honest:
        line = len(w.line(honest))
        out.append(Violation("honest_stuck", f"the honest seat's line waits for the honest seat itself (line {line})"))
    return out


def _where(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)[-1]
    return f"{type(e).__name__}: {e} at {Path(tb.filename).name}:{tb.lineno}"


def _seat(frame: bytes) -> int | None:
    f = fields(frame)
    return None if f is None else int(f.get("seat"))


def _key(v: Verdict) -> tuple[str, int | None, int | None, str | None]:
    return v.status, v.winner, v.loser, v.code


def run_plan(plan: Plan, *, max_steps: int = MAX_STEPS) -> Result:
    """Play ``plan`` and check the invariant."""
    adv = Adversary(plan)
    w = World(plan.deck, plan.seed, plan.cheater, adv.hook)
    adv.attach(w)
    violations: list[Violation] = []
    stalled = True
    try:
        stalled = w.run(max_steps)
    except AdversaryBug:
        raise
    except RuntimeError as e:
        if "did not finish" not in str(e):
            raise
        violations.append(Violation("no_end", f"{max_steps} steps and no end"))
    except Exception as e:  # a session that raises is a violation, with where it raised
        violations.append(Violation("raised", _where(e)))
    views: dict[str, Verdict | None] = {}
    if not any(v.invariant == "raised" for v in violations):
        before = w.verdict(w.honest)
        if before is not None:  # every frame the cheater sent, again, after the end
            for frame in adv.sent[-300:]:
                w.inject(frame)
            try:
                w.deliver_now()
            except Exception as e:
                violations.append(Violation("raised", f"after the end: {type(e).__name__}: {e}"))
            after = w.verdict(w.honest)
            if after != before:
                violations.append(Violation("verdict_changed", f"{before} became {after} after re-sent frames"))
        try:
            views = {
                "honest seat": w.verdict(w.honest),
                "honest file": audit_verdict(w.transcript(w.honest)),
                # a session that adopted a message its referee never checked has no verdict of its own
                "cheater seat": None if adv.adopted else w.verdict(w.cheater),
                "cheater file": audit_verdict(w.transcript(w.cheater)),
            }
            violations += check(w, stalled, views, adv.forked())
            hv = views["honest seat"]
            if adv.wrong_sized and len(adv.fired) == 1 and hv is not None and hv.status == "forfeit":
                if hv.code not in ("bad_shape", "malformed_message"):
                    violations.append(Violation("shape_not_at_door", f"a wrong-sized field forfeited as {hv.code}"))
        except Exception as e:
            tb = traceback.extract_tb(e.__traceback__)[-1]
            violations.append(
                Violation("raised", f"checking: {type(e).__name__}: {e} at {Path(tb.filename).name}:{tb.lineno}")
            )
    violations += _cost_violations(w.costs)
    max_cost = {
        "replays": max((c.replays for c in w.costs if not (c.ended or c.cut)), default=0),
        "verifies": max((c.verifies for c in w.costs), default=0),
        "mults": max((c.mults for c in w.costs), default=0),
    }
    return Result(
        plan,
        violations,
        adv.fired,
        adv.fired_round,
        {k: str(v) for k, v in views.items()},
        len(w.costs),
        max_cost,
    )


# -- the long search --------------------------------------------------------------------------------------


def random_plan(rng: random.Random, deck: str | None = None) -> Plan:
    d = deck or rng.choice(DECKS)
    types = _types(d)
    cheats = tuple(
        Cheat(
            rng.randrange(ROUNDS + 1),
            rng.randrange(30),
            rng.choice([None, None, *types]),
            rng.choice(ACTIONS[1:]),
            rng.getrandbits(32),
        )
        for _ in range(rng.choice((1, 1, 2, 3)))
    )
    return Plan(d, rng.getrandbits(16), rng.randrange(2), cheats)


def _types(deck: str) -> tuple[str, ...]:
    shared = ("HELLO", "COMMIT", "VALUE", "REVEAL", "MOVE", "RESULT")
    sealed = ("SHUFFLE", "SHUFFLE_LOCK", "LOCK", "CLAIM", "DRAW", "DISCLOSE")
    return shared + sealed if deck == "sealed" else shared


def signature(r: Result, v: Violation) -> str:
    """What tells two violations apart in a report: the invariant, the deck, the first cheat's action and the
    message kind it hit."""
    first = r.fired[0].split(":")[0].split(" ", 1)[1].rsplit(" seq", 1)[0] if r.fired else "-"
    action = r.fired[0].split(": ", 1)[1].split(" ", 1)[0] if r.fired else "-"
    return f"{v.invariant} | {r.plan.deck} | {action} | {first}"


def shrink(plan: Plan, invariant: str) -> Plan:
    """A smaller plan that still breaks ``invariant``: cheats taken away, then earlier moments."""
    best = plan
    changed = True
    while changed:
        changed = False
        cands: list[Plan] = []
        for i in range(len(best.cheats)):
            if len(best.cheats) > 1:
                cands.append(Plan(best.deck, best.seed, best.cheater, best.cheats[:i] + best.cheats[i + 1 :]))
        for i, c in enumerate(best.cheats):
            for c2 in (Cheat(c.round, 0, c.want, c.action, c.arg), Cheat(c.round, c.nth // 2, c.want, c.action, c.arg),
                       Cheat(c.round, c.nth, None, c.action, c.arg)):  # fmt: skip
                if c2 != c:
                    cheats = (*best.cheats[:i], c2, *best.cheats[i + 1 :])
                    cands.append(Plan(best.deck, best.seed, best.cheater, cheats))
        for p in cands:
            try:
                r = run_plan(p)
            except Exception:
                continue
            if any(v.invariant == invariant for v in r.violations):
                best, changed = p, True
                break
    return best


def search(minutes: float, seed: int, out: Path | None, deck: str | None = None) -> dict[str, Any]:
    rng = random.Random(seed)
    t_end = time.monotonic() + minutes * 60
    found: dict[str, dict[str, Any]] = {}
    runs = 0
    by_invariant: dict[str, int] = {}
    while time.monotonic() < t_end:
        plan = random_plan(rng, deck)
        try:
            r = run_plan(plan)
        except AdversaryBug:
            print(f"adversary bug on {plan.code()}:\n{traceback.format_exc()}", flush=True)
            continue
        runs += 1
        for v in r.violations:
            by_invariant[v.invariant] = by_invariant.get(v.invariant, 0) + 1
            sig = signature(r, v)
            if sig in found:
                found[sig]["count"] += 1
                continue
            small = shrink(plan, v.invariant)
            rs = run_plan(small)
            vs = [x for x in rs.violations if x.invariant == v.invariant]
            found[sig] = {
                "signature": sig,
                "invariant": v.invariant,
                "deck": plan.deck,
                "round": rs.fired_round,
                "detail": str(vs[0]) if vs else str(v),
                "plan": small.code(),
                "fired": rs.fired,
                "verdicts": rs.verdicts,
                "count": 1,
            }
            print(
                f"[{runs}] NEW {sig}\n    {found[sig]['detail']}\n    {found[sig]['plan']}\n    {rs.fired}", flush=True
            )
        if runs % 50 == 0:
            print(f"[{runs}] runs, {len(found)} distinct, by invariant {by_invariant}", flush=True)
            if out is not None:
                _save(out, runs, seed, minutes, found, by_invariant)
    if out is not None:
        _save(out, runs, seed, minutes, found, by_invariant)
    return {"runs": runs, "found": found, "by_invariant": by_invariant}


def _save(out: Path, runs: int, seed: int, minutes: float, found: dict[str, Any], by_inv: dict[str, int]) -> None:
    out.write_text(json.dumps({"runs": runs, "seed": seed, "minutes": minutes, "by_invariant": by_inv,
                               "violations": list(found.values())}, indent=2) + "\n")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="the generic adversary's long search (by hand)")
    p.add_argument("--minutes", type=float, default=25.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--deck", choices=DECKS)
    p.add_argument("--out", type=Path)
    a = p.parse_args(argv)
    res = search(a.minutes, a.seed, a.out, a.deck)
    print(f"{res['runs']} runs, {len(res['found'])} distinct violations")
    return 1 if res["found"] else 0


__all__ = [
    "ACTIONS",
    "Adversary",
    "AdversaryBug",
    "Cheat",
    "Plan",
    "Result",
    "Violation",
    "World",
    "check",
    "main",
    "random_plan",
    "run_plan",
    "search",
    "shrink",
]  # fmt: skip

if __name__ == "__main__":
    sys.exit(main())
