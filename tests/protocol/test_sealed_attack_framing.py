"""Attack on sealed mode's line: make the honest seat the one blamed. A cheater signs a sealed step whose body
has the wrong shape (too few points, a point that is not a byte string, a key list one short). The honest
seat's live check stops the round (``bad_shape``) and discloses; the verification must then name the cheater
(whose signed, malformed step is the evidence), never call the honest seat's stop unfounded."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

import pytest

from koikoi.engine.match import Settings
from koikoi.protocol.sealed_line import LineKind, SealedSeat, Sent, audit_line

Tamper = Callable[[Sent, SealedSeat], Sent | None]
SETTINGS = Settings(rounds=6)


def secret(label: str) -> bytes:
    return hashlib.sha256(b"koikoi/test/sealed-attack\x00" + label.encode()).digest()


def once(kind: LineKind, change: Callable[[Sent], Sent]) -> Tamper:
    done = [False]

    def t(m: Sent, s: SealedSeat) -> Sent | None:
        if m.kind is not kind or done[0]:
            return m
        done[0] = True
        return change(m)

    return t


def short_points(m: Sent) -> Sent:
    return Sent(m.seat, m.kind, (list(m.body[0])[:47], *m.body[1:]))


def int_point(m: Sent) -> Sent:
    pts: list[object] = list(m.body[0])
    pts[3] = 7
    return Sent(m.seat, m.kind, (pts, *m.body[1:]))


def short_keys(m: Sent) -> Sent:
    return Sent(m.seat, m.kind, (m.body[0], list(m.body[1])[:15], *m.body[2:]))


# seat 0 deals round 1 (O), seat 1 is K
CASES: dict[str, tuple[int, Tamper]] = {
    "K's shuffle with 47 points": (1, once(LineKind.SHUFFLE, short_points)),
    "K's shuffle with an integer for a point": (1, once(LineKind.SHUFFLE, int_point)),
    "O's shuffle-lock with 47 points": (0, once(LineKind.SHUFFLE_LOCK, short_points)),
    "O's shuffle-lock one key short": (0, once(LineKind.SHUFFLE_LOCK, short_keys)),
    "K's lock with 47 points": (1, once(LineKind.LOCK, short_points)),
    "K's lock one key short": (1, once(LineKind.LOCK, short_keys)),
}


def run(cheater: int, tamper: Tamper, seed: int) -> tuple[list[SealedSeat], list[Sent]]:
    """Two seats through the line, every message delivered at once (as ``sealed_line.run_pair``, whose
    own-record bookkeeping cannot parse a malformed step: the cheater's record is irrelevant here)."""
    rng = random.Random(seed)
    seats = [SealedSeat(SETTINGS, s, 0, secret(f"seat {s}")) for s in (0, 1)]
    line: list[Sent] = []
    for _ in range(10_000):
        moved = False
        for s in seats:
            outs = s.pending()
            if s.expected() == (s.seat, LineKind.MOVE):
                outs.append(s.move(rng.choice(s.match.legal_actions())))
            for o in outs:
                if o.seat == cheater:
                    t = tamper(o, s)
                    assert t is not None
                    o = t
                line.append(o)
                seats[1 - o.seat].receive(o)
                moved = True
        if not moved:
            break
    return seats, line


@pytest.mark.parametrize("name", list(CASES))
def test_a_malformed_signed_step_is_its_signers_fault_not_the_stoppers(name: str) -> None:
    cheater, tamper = CASES[name]
    seats, line = run(cheater, tamper, 5)
    honest = seats[1 - cheater]
    v = honest.verdict
    assert v is not None and v.round == 1, "the round was not stopped and verified"
    assert v.stopped_by == 1 - cheater
    assert v.loser == cheater, f"the honest seat {1 - cheater} is blamed: {v.fault and v.fault.message}"
    audit = audit_line(SETTINGS, 0, line)
    blamed = audit.fault.seat if audit.fault is not None else (audit.error[0] if audit.error else None)
    assert blamed == cheater, (audit.fault, audit.error)
