"""Attack on the sealed deck's point validation: the checks made at once (check_shuffle, check_shuffle_lock,
check_lock: each point validated by the proof's multiplication that uses it, and open_card) trust
libsodium's scalar multiplication to refuse every
point ``is_valid_point`` refuses (MULTIPLICATION_VALIDATES, probed at import with five points). Here every
encoding an attacker could pick that is close to an edge: each y below 19 and its non-canonical twin y + p,
with either sign bit (the identity and "negative zero" among them), every torsion point added to a card
point (mixed order), the top of the field, and random strings — the multiplication must refuse exactly
what the validator refuses, and each receiver must name the sender's bad point at its index."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest
from nacl.bindings import crypto_core_ed25519_add, crypto_core_ed25519_is_valid_point

from koikoi.protocol import proofs
from koikoi.protocol import sealed as S
from koikoi.protocol.sealed import Role

P = 2**255 - 19
K = S.derive(hashlib.sha256(b"points-attack-k").digest())
DEALER = S.derive(hashlib.sha256(b"points-attack-o").digest())
CTX = proofs.context(hashlib.sha256(b"points-attack-session").digest(), 1, 0)
HONEST = S.honest_attempt(K, DEALER, CTX)


def enc(y: int, sign: int) -> bytes:
    b = bytearray(y.to_bytes(32, "little"))
    b[31] |= sign << 7
    return bytes(b)


def _edge_encodings() -> list[bytes]:
    out = []
    for y in range(19):
        for sign in (0, 1):
            out.append(enc(y, sign))
            out.append(enc(y + P, sign))  # the non-canonical twin (y + p < 2^255)
    for y in (P - 1, P, 2**255 - 1):
        out += [enc(y, 0), enc(y, 1)]
    return out


def _torsion() -> list[bytes]:
    """The 7 points of small order but the identity (the multiples of a point of order 8): adding any of them
    to a card point gives a point outside the prime-order subgroup."""
    order8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
    pts = [S.CARD_POINTS[0]]
    t = order8
    for _ in range(7):
        pts.append(t)
        t = crypto_core_ed25519_add(t, order8)
    return pts[1:]


def _mixed() -> list[bytes]:
    return [crypto_core_ed25519_add(S.CARD_POINTS[c], t) for c in (0, 17, 47) for t in _torsion()]


EDGES = _edge_encodings()
MIXED = _mixed()
RANDOM = [hashlib.sha256(b"pt" + i.to_bytes(4, "big")).digest() for i in range(400)]
INVALID = [q for q in EDGES + MIXED + RANDOM if not crypto_core_ed25519_is_valid_point(q)]


def test_the_probe_holds_and_mixed_order_points_are_really_outside_the_subgroup() -> None:
    assert S.MULTIPLICATION_VALIDATES  # the shortcut is on: the receivers below rely on it
    assert len(MIXED) == 21 and not any(S.is_valid_point(q) for q in MIXED)
    assert len(INVALID) > 200


@pytest.mark.parametrize("scalar", [b"\x01" + bytes(31), K.mask, (S.GROUP_ORDER - 1).to_bytes(32, "little")])
def test_multiplication_refuses_exactly_what_the_validator_refuses(scalar: bytes) -> None:
    for q in EDGES + MIXED + RANDOM:
        valid = S.is_valid_point(q)
        assert (S._mul_checked(scalar, q) is not None) == valid, q.hex()
        assert (S._mul(scalar, q) is not None) == valid, q.hex()


def test_check_shuffle_names_ks_bad_point_at_its_index() -> None:
    for n, q in enumerate(INVALID[:48]):
        at = n % 48
        pts = list(HONEST.shuffle.points)
        pts[at] = q
        got = S.check_shuffle(CTX, dataclasses.replace(HONEST.shuffle, points=tuple(pts)))
        assert isinstance(got, S.SealedFault), q.hex()
        assert (got.rule, got.role, got.step, got.index) == ("bad_point", Role.OTHER, "shuffle", at), (q.hex(), got)


def test_check_shuffle_lock_names_os_bad_point_at_its_index() -> None:
    for n, q in enumerate(INVALID[:48]):
        at = 24 + n % 24  # a deck position: no key opens it now, the proof's multiplication must refuse it
        pts = list(HONEST.shuffle_lock.points)
        pts[at] = q
        lock = dataclasses.replace(HONEST.shuffle_lock, points=tuple(pts))
        got = S.check_shuffle_lock(CTX, S.StepOne(HONEST.shuffle), lock)
        assert isinstance(got, S.SealedFault), q.hex()
        assert (got.rule, got.role, got.step, got.index) == ("bad_point", Role.DEALER, "shuffle_lock", at), got


def test_check_lock_names_ks_bad_point_at_its_index() -> None:
    assert HONEST.lock is not None
    for n, q in enumerate(INVALID[:48]):
        at = n % 48
        pts = list(HONEST.lock.points)
        pts[at] = q
        got = S.check_lock(CTX, HONEST.shuffle_lock, dataclasses.replace(HONEST.lock, points=tuple(pts)))
        assert isinstance(got, S.SealedFault), q.hex()
        assert (got.rule, got.role, got.step, got.index) == ("bad_point", Role.OTHER, "lock", at), got
        assert S.open_card(q, K.keys[at], DEALER.keys[at]) is None
