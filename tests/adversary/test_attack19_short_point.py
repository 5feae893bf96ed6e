"""Issue 19 attack: a 31-byte point in a sealed step crashes the honest seat instead of being its signer's fault.

Attack. Without envelopes (``SealedSeat`` alone: the sans-IO line, spec/sealed-line.md §2), a cheater signs a
step whose body has one point of the wrong size: a 31-byte point of step 1, of step 1's chain, of step 2's
masked points or of step 3. ``Shuffle.from_body`` / ``ShuffleLock.from_body`` / ``Lock.from_body`` only check
that each item is a byte string, and the new proofs (``proofs.verify_shuffle``, ``verify_rekey``) hand every
point straight to libsodium, which raises ``nacl.exceptions.TypeError`` for a wrong-sized input (it is not the
``RuntimeError`` ``proofs._mul`` catches). Before the proofs, every received point went through
``sealed._mul_checked`` (which refuses a wrong size). So the honest seat's ``receive`` raises a library
exception — a traceback — instead of the rule spec/sealed-line.md §2 names for exactly this body ("a 31-byte
point": ``bad_shape``, the signer's, the honest seat stopping) and spec/sealed.md §1 ("exactly 32 bytes ...
anything else is ``bad_point``").

Gain. The cheater stalls or crashes the honest program with one signed step; the honest seat never stops the
round, so no verification ever names the cheater. (Through a session the envelope's door, messages.check_body,
refuses the size first: this is the sans-IO line and the public check functions.)

Suggested fix (protocol/sealed.py): the step bodies' ``from_body`` refuse an item that is not exactly 32 bytes
(``SealedFormatError``: ``bad_shape``, as the door does), so no wrong-sized point or scalar reaches a proof.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Callable

import pytest

from koikoi.engine.match import Settings
from koikoi.protocol import proofs
from koikoi.protocol import sealed as s
from koikoi.protocol.sealed_line import LineError, LineKind, SealedSeat, Sent, audit_line

SETTINGS = Settings(rounds=6)
Change = Callable[[Sent], Sent]


def _secret(seat: int) -> bytes:
    return hashlib.sha256(b"koikoi/test/attack19-short-point\x00" + bytes([seat])).digest()


def _shorten(field: int, item: int) -> Change:
    def change(m: Sent) -> Sent:
        body = list(m.body)
        items = list(body[field])
        items[item] = items[item][:31]
        body[field] = items
        return Sent(m.seat, m.kind, tuple(body))

    return change


# seat 0 deals round 1 (O), seat 1 is K
CASES: dict[str, tuple[int, LineKind, Change]] = {
    "K's shuffle, a point": (1, LineKind.SHUFFLE, _shorten(0, 3)),
    "K's shuffle, a chain point": (1, LineKind.SHUFFLE, _shorten(1, 0)),
    "O's shuffle-lock, a point": (0, LineKind.SHUFFLE_LOCK, _shorten(0, 5)),
    "O's shuffle-lock, a masked point": (0, LineKind.SHUFFLE_LOCK, _shorten(2, 7)),
    "O's shuffle-lock, a chain point": (0, LineKind.SHUFFLE_LOCK, _shorten(3, 47)),
    "K's lock, a point": (1, LineKind.LOCK, _shorten(0, 30)),
}


def _outgoing(seat: SealedSeat, rng: random.Random) -> list[Sent]:
    """What ``seat`` sends now: its due steps, and a random legal move when one is its turn."""
    due = seat.pending()
    if seat.expected() == (seat.seat, LineKind.MOVE):
        due.append(seat.move(rng.choice(seat.match.legal_actions())))
    return due


def _play(cheater: int, kind: LineKind, change: Change) -> tuple[list[SealedSeat], list[Sent]]:
    """Both seats through the line; the cheater's first message of ``kind`` is changed on the wire."""
    rng = random.Random(19)
    seats = [SealedSeat(SETTINGS, s, 0, _secret(s)) for s in (0, 1)]
    line: list[Sent] = []
    while batch := [m for seat in seats for m in _outgoing(seat, rng)]:
        for msg in batch:
            if msg.seat == cheater and msg.kind is kind and not any(m.kind is kind for m in line):
                msg = change(msg)
            line.append(msg)
            try:
                seats[1 - msg.seat].receive(msg)
            except LineError:
                return seats, line
    assert any(m.kind is kind and m.seat == cheater for m in line), "the cheater never sent the step"
    return seats, line


@pytest.mark.parametrize("name", list(CASES))
def test_a_31_byte_point_is_its_signers_bad_shape_not_a_crash(name: str) -> None:
    cheater, kind, change = CASES[name]
    seats, line = _play(cheater, kind, change)  # today: nacl.exceptions.TypeError out of receive()
    honest = seats[1 - cheater]
    v = honest.verdict
    assert v is not None and v.fault is not None, "the round was not stopped and verified"
    assert v.fault.rule == "bad_shape" and v.loser == cheater, v.fault.message
    audit = audit_line(SETTINGS, 0, line)
    blamed = audit.fault.seat if audit.fault is not None else (audit.error[0] if audit.error else None)
    assert blamed == cheater, (audit.fault, audit.error)


def test_the_check_functions_name_a_31_byte_point_bad_point() -> None:
    """spec/sealed.md §1: a received point is exactly 32 bytes, anything else ``bad_point`` — also when a caller
    hands the public checks a step it built itself (today: nacl.exceptions.TypeError)."""
    k = s.derive(_secret(1))
    o = s.derive(_secret(0))
    ctx = proofs.context(bytes(32), 1, 0)
    att = s.honest_attempt(k, o, ctx)
    one = s.StepOne(att.shuffle)
    assert att.lock is not None
    short = att.shuffle.points[4][:31]
    chain = (*att.shuffle.proof.chain[:47], short)
    faults = [
        s.check_shuffle(
            ctx, dataclasses.replace(att.shuffle, points=(*att.shuffle.points[:4], short, *att.shuffle.points[5:]))
        ),
        s.check_shuffle(ctx, s.Shuffle(att.shuffle.points, dataclasses.replace(att.shuffle.proof, chain=chain))),
        s.check_shuffle_lock(
            ctx, one, dataclasses.replace(att.shuffle_lock, masked=(short, *att.shuffle_lock.masked[1:]))
        ),
        s.check_lock(ctx, att.shuffle_lock, dataclasses.replace(att.lock, points=(*att.lock.points[:47], short))),
    ]
    assert [None if f is None else f.rule for f in faults] == ["bad_point"] * 4
