"""The sealed deck (koikoi.protocol.sealed): honest deals, hiding, every cheat caught and attributed,
validation of points and scalars."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl.bindings import (
    crypto_core_ed25519_add,
    crypto_core_ed25519_from_uniform,
    crypto_core_ed25519_scalar_invert,
    crypto_core_ed25519_scalar_mul,
    crypto_scalarmult_ed25519_noclamp,
)

from koikoi.engine.cards import CARD_IDS, four_of_a_month, mask_of
from koikoi.engine.yaku import hand_yaku
from koikoi.protocol import proofs as P
from koikoi.protocol import sealed as S
from koikoi.protocol.codes import Code
from koikoi.protocol.sealed import Attempt, PublishedKey, Role, SealedFault, SeatSecrets, VerifiedDeal
from koikoi.protocol.steps import Step

K, O = Role.OTHER, Role.DEALER  # noqa: E741 (the spec's names)
L = S.GROUP_ORDER


def secret(label: str) -> bytes:
    return hashlib.sha256(b"koikoi/test/sealed\x00" + label.encode()).digest()


def order_of(k: SeatSecrets, o: SeatSecrets) -> list[int]:
    return [k.permutation[o.permutation[i]] for i in range(48)]


def find_pair(pred: Callable[[list[int]], bool], label: str) -> tuple[SeatSecrets, SeatSecrets]:
    """The first K secret (counting up) that, with O's fixed one, deals an order meeting ``pred``."""
    o = S.derive(secret(label + "/O"))
    for n in itertools.count():
        k = S.derive(secret(f"{label}/K/{n}"))
        if pred(order_of(k, o)):
            return k, o
    raise AssertionError("unreachable")


def stands(order: list[int]) -> bool:
    return not four_of_a_month(mask_of(order[16:24]))


def plain(order: list[int]) -> bool:
    """A deal that stands and in which neither hand holds a hand yaku."""
    return stands(order) and hand_yaku(mask_of(order[0:8])) is None and hand_yaku(mask_of(order[8:16])) is None


def mul(s: bytes, p: bytes) -> bytes:
    return crypto_scalarmult_ed25519_noclamp(s, p)


def inv(s: bytes) -> bytes:
    return crypto_core_ed25519_scalar_invert(s)


def smul(x: bytes, y: bytes) -> bytes:
    return crypto_core_ed25519_scalar_mul(x, y)


JOKER = crypto_core_ed25519_from_uniform(hashlib.sha512(b"koikoi/test/joker").digest()[:32])
OTHER_SCALAR = S.derive(secret("other scalar")).keys[0]

CTX = P.context(hashlib.sha256(b"koikoi/test/sealed session").digest(), 1, 0)
K_PLAIN, O_PLAIN = find_pair(plain, "plain")
HONEST = S.honest_attempt(K_PLAIN, O_PLAIN, CTX)
ONE = S.StepOne(HONEST.shuffle)
ORDER = order_of(K_PLAIN, O_PLAIN)


def verify(att: Attempt, k: SeatSecrets = K_PLAIN, o: SeatSecrets = O_PLAIN, **kw: object) -> object:
    return S.verify_deal(att, k.round_secret, o.round_secret, **kw)  # type: ignore[arg-type]


# -- card points, derivation ----------------------------------------------------------------


def test_card_points_are_the_hash_of_each_card_id_to_the_group() -> None:
    assert len(S.CARD_POINTS) == 48 == len(set(S.CARD_POINTS))
    for c, cid in enumerate(CARD_IDS):
        h = hashlib.sha512(b"koikoi/sealed/card/v1\x00" + cid.encode()).digest()[:32]
        assert S.CARD_POINTS[c] == crypto_core_ed25519_from_uniform(h)
        assert S.is_valid_point(S.CARD_POINTS[c])
        assert S.card_of_point(S.CARD_POINTS[c]) == c


def test_round_secrets_differ_by_round_attempt_and_match_secret_and_derive_valid_secrets() -> None:
    ms = secret("match")
    rs = {S.round_secret(ms, r, a) for r in (1, 2, 12) for a in (0, 1)} | {S.round_secret(secret("m2"), 1, 0)}
    assert len(rs) == 7
    expected = hashlib.blake2b(
        b"koikoi/sealed/round/v1\x00" + (3).to_bytes(2, "big") + (1).to_bytes(2, "big"), key=ms, digest_size=32
    ).digest()
    assert S.round_secret(ms, 3, 1) == expected
    sec = S.derive(expected)
    assert sorted(sec.permutation) == list(range(48))
    assert all(S.is_valid_scalar(x) for x in (sec.mask, sec.mask_inverse, *sec.keys))
    assert len(set(sec.keys)) == 48
    assert smul(sec.mask, sec.mask_inverse) == (1).to_bytes(32, "little")
    assert S.derive(expected) == sec and "SeatSecrets(<secret>)" == repr(sec)
    with pytest.raises(ValueError, match="32 bytes"):
        S.round_secret(b"short", 1, 0)
    with pytest.raises(ValueError, match="32 bytes"):
        S.derive(b"short")


# -- an honest deal ------------------------------------------------------------------------


def test_an_honest_deal_verifies_and_every_position_opens_to_its_card() -> None:
    v = verify(HONEST)
    assert isinstance(v, VerifiedDeal)
    assert list(v.order) == ORDER and sorted(v.order) == list(range(48))
    assert v.complete and not v.redeal and v.hand_yaku is None
    assert v.deal.deck == tuple(ORDER[24:])
    assert HONEST.lock is not None
    for i in range(48):
        assert S.open_card(HONEST.lock.points[i], K_PLAIN.keys[i], O_PLAIN.keys[i]) == ORDER[i]
    # every step passes the checks made at once, and each seat opens exactly its hand and the table
    assert S.check_shuffle(CTX, HONEST.shuffle) is None
    assert S.check_shuffle_lock(CTX, ONE, HONEST.shuffle_lock) is None
    assert S.check_lock(CTX, HONEST.shuffle_lock, HONEST.lock) is None
    assert S.check_lock_keys(HONEST.shuffle_lock, HONEST.lock) is None
    k_view = S.open_shuffle_lock(K_PLAIN, ONE, HONEST.shuffle_lock)
    assert k_view == {i: ORDER[i] for i in (*S.OTHER_HAND, *S.TABLE)}
    o_view = S.open_lock(O_PLAIN, HONEST.shuffle_lock, HONEST.lock)
    assert o_view == {i: ORDER[i] for i in (*S.DEALER_HAND, *S.TABLE)}
    # the masked points are step 1 under O's mask, in O's order
    assert HONEST.shuffle_lock.masked == tuple(
        mul(O_PLAIN.mask, HONEST.shuffle.points[O_PLAIN.permutation[i]]) for i in range(48)
    )
    # a live seat that trusts its own steps reaches the same deal
    assert verify(HONEST, trusted=K) == v == verify(HONEST, trusted=O)


def test_the_per_turn_keys_open_played_and_drawn_cards() -> None:
    assert HONEST.lock is not None
    z = HONEST.lock.points
    for draws in range(24):
        pos = S.deck_position(draws)
        assert S.open_card(z[pos], K_PLAIN.key(pos), O_PLAIN.key(pos)) == ORDER[pos]
    assert S.open_card(z[24], K_PLAIN.key(25), O_PLAIN.key(24)) is None  # one wrong key opens nothing
    published = [PublishedKey(K, 9, K_PLAIN.key(9)), PublishedKey(O, 24, O_PLAIN.key(24))]
    assert isinstance(verify(HONEST, published=published), VerifiedDeal)
    with pytest.raises(ValueError, match="24 cards"):
        S.deck_position(24)


def test_bodies_round_trip_and_reject_the_wrong_shape() -> None:
    assert HONEST.lock is not None and HONEST.claim is not None
    for step, cls in (
        (HONEST.shuffle, S.Shuffle),
        (HONEST.shuffle_lock, S.ShuffleLock),
        (HONEST.lock, S.Lock),
        (HONEST.claim, S.Claim),
    ):
        assert cls.from_body(step.body()) == step
    assert len(HONEST.shuffle.encode()) == 1 + 3 * 3 + (48 + 48 + 99) * 34
    body = HONEST.shuffle.body()
    with pytest.raises(S.SealedFormatError, match="shuffle: points must be an array of 48"):
        S.Shuffle.from_body([body[0][:47], body[1], body[2]])
    with pytest.raises(S.SealedFormatError, match="shuffle: the responses must be an array of 99"):
        S.Shuffle.from_body([body[0], body[1], body[2][:98]])
    with pytest.raises(S.SealedFormatError, match="lock: a claim must be an array of 8"):
        S.Lock.from_body([list(HONEST.lock.points), list(HONEST.lock.keys), [b"x"] * 7, HONEST.lock.body()[3]])
    with pytest.raises(S.SealedFormatError, match="lock: the lock proof must be an array of 49"):
        S.Lock.from_body([list(HONEST.lock.points), list(HONEST.lock.keys), None, []])
    with pytest.raises(S.SealedFormatError, match="claim: the body must be an array of 1"):
        S.Claim.from_body([None, None])


# -- hiding ------------------------------------------------------------------------------


def matches(
    points_by_position: dict[int, list[bytes]], scalars_by_position: dict[int, list[bytes]], theirs: list[bytes]
) -> set[tuple[int, int]]:
    """Every (position, card) a seat can confirm: each point it holds for a position, stripped by every
    product of a subset of the scalars it knows for that position, alone or times any key of the
    opponent's it holds (for any position), compared with every card point."""
    found: set[tuple[int, int]] = set()
    one = (1).to_bytes(32, "little")
    for pos, points in points_by_position.items():
        own = scalars_by_position[pos]
        products = []
        for r in range(len(own) + 1):
            for subset in itertools.combinations(own, r):
                t = one
                for x in subset:
                    t = smul(t, x)
                products.append(t)
        trials = {inv(t) for t in products} | {inv(smul(t, x)) for t in products for x in theirs}
        for m in points:
            for f in trials:
                c = S.card_of_point(mul(f, m))
                if c is not None:
                    found.add((pos, c))
    return found


Holdings = tuple[dict[int, list[bytes]], dict[int, list[bytes]], list[bytes]]


def k_holdings(att: Attempt, published: list[PublishedKey]) -> Holdings:
    """Everything K holds: its secrets, every step, O's keys (step 2, claim, published)."""
    o_keys = {pos: att.shuffle_lock.key_for(pos) for pos in S.SHUFFLE_LOCK_KEY_POSITIONS}
    if att.claim is not None and att.claim.keys is not None:
        o_keys.update(zip(S.DEALER_HAND, att.claim.keys, strict=True))
    o_keys.update({p.position: p.key for p in published if p.role is O})
    s2 = att.shuffle_lock
    pts = {i: [s2.masked[i], s2.points[i]] + ([att.lock.points[i]] if att.lock else []) for i in range(48)}
    scal = {i: [K_PLAIN.mask, K_PLAIN.keys[i], *([o_keys[i]] if i in o_keys else [])] for i in range(48)}
    return pts, scal, sorted(set(o_keys.values()))


def o_holdings(att: Attempt, published: list[PublishedKey]) -> Holdings:
    """Everything O holds: its secrets (so it knows where each step-1 point went), every step, K's keys."""
    assert att.lock is not None
    k_keys = {pos: att.lock.key_for(pos) for pos in S.LOCK_KEY_POSITIONS}
    if att.lock.claim is not None:
        k_keys.update(zip(S.OTHER_HAND, att.lock.claim, strict=True))
    k_keys.update({p.position: p.key for p in published if p.role is K})
    x = att.shuffle.points
    s2 = att.shuffle_lock
    pts = {i: [x[O_PLAIN.permutation[i]], s2.masked[i], s2.points[i], att.lock.points[i]] for i in range(48)}
    scal = {i: [O_PLAIN.mask, O_PLAIN.keys[i], *([k_keys[i]] if i in k_keys else [])] for i in range(48)}
    return pts, scal, sorted(set(k_keys.values()))


def expected(positions: set[int]) -> set[tuple[int, int]]:
    return {(i, ORDER[i]) for i in positions}


def test_hiding_each_seat_confirms_exactly_its_hand_and_the_public_cards() -> None:
    # K after step 2 (before its lock): its hand and the table, nothing else
    before_lock = Attempt(HONEST.shuffle, HONEST.shuffle_lock)
    assert matches(*k_holdings(before_lock, [])) == expected(set(S.OTHER_HAND) | set(S.TABLE))
    # O after step 3: its hand and the table
    assert matches(*o_holdings(HONEST, [])) == expected(set(S.DEALER_HAND) | set(S.TABLE))
    # mid-round: K played positions 9 and 12, O played 2; deck 24..27 drawn (both keys of each published)
    published = [PublishedKey(K, 9, K_PLAIN.key(9)), PublishedKey(O, 2, O_PLAIN.key(2))]
    published += [PublishedKey(K, 12, K_PLAIN.key(12))]
    for pos in range(24, 28):
        published += [PublishedKey(K, pos, K_PLAIN.key(pos)), PublishedKey(O, pos, O_PLAIN.key(pos))]
    public = {2, 9, 12, 24, 25, 26, 27} | set(S.TABLE)
    assert matches(*k_holdings(HONEST, published)) == expected(set(S.OTHER_HAND) | public)
    assert matches(*o_holdings(HONEST, published)) == expected(set(S.DEALER_HAND) | public)


def test_hiding_a_hand_yaku_claim_opens_that_hand_to_the_other_seat() -> None:
    k, o = find_pair(lambda order: stands(order) and hand_yaku(mask_of(order[8:16])) is not None, "k-yaku")
    att = S.honest_attempt(k, o, CTX)
    assert att.lock is not None and att.lock.claim is not None
    opened = S.open_lock(o, att.shuffle_lock, att.lock)
    order = order_of(k, o)
    assert opened == {i: order[i] for i in range(24)}
    v = S.verify_deal(att, k.round_secret, o.round_secret)
    assert isinstance(v, VerifiedDeal) and v.hand_yaku is not None and v.hand_yaku[0] is K


# -- validation ------------------------------------------------------------------------------

IDENTITY = (1).to_bytes(32, "little")
SMALL_ORDER = [
    IDENTITY,
    bytes.fromhex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),  # order 2
    bytes.fromhex("0000000000000000000000000000000000000000000000000000000000000000"),  # order 4
    bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),  # order 8
]
NOT_ON_CURVE = (2).to_bytes(32, "little")  # y = 2 has no x on edwards25519
NON_CANONICAL = (2**255 - 19 + 1).to_bytes(32, "little")  # y = p + 1: the identity, encoded non-canonically
MIXED_ORDER = crypto_core_ed25519_add(S.CARD_POINTS[0], SMALL_ORDER[3])  # a card point plus a torsion point


@pytest.mark.parametrize(
    "bad",
    [*SMALL_ORDER, NOT_ON_CURVE, NON_CANONICAL, MIXED_ORDER],
    ids=["identity", "order 2", "order 4", "order 8", "not on the curve", "non-canonical", "mixed order"],
)
def test_points_outside_the_prime_order_group_are_refused_at_once(bad: bytes) -> None:
    assert not S.is_valid_point(bad)
    s1 = dataclasses.replace(HONEST.shuffle, points=replace_point(HONEST.shuffle.points, 7, bad))
    assert S.check_shuffle(CTX, s1) == SealedFault(
        Code.BAD_POINT, K, Step.SHUFFLE, 7, "not a point of the prime-order group"
    )
    h2 = HONEST.shuffle_lock
    for field, s2 in (
        ("points", dataclasses.replace(h2, points=replace_point(h2.points, 13, bad))),
        ("masked", dataclasses.replace(h2, masked=replace_point(h2.masked, 13, bad))),
    ):
        f = S.check_shuffle_lock(CTX, ONE, s2)
        assert isinstance(f, SealedFault) and (f.rule, f.role, f.index) == ("bad_point", O, 13), field
    assert HONEST.lock is not None
    s3 = dataclasses.replace(HONEST.lock, points=replace_point(HONEST.lock.points, 3, bad))
    f = S.check_lock(CTX, HONEST.shuffle_lock, s3)
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.index) == ("bad_point", K, 3)
    assert S.open_card(bad, K_PLAIN.keys[3], O_PLAIN.keys[3]) is None


def test_scalar_bounds() -> None:
    assert S.is_valid_scalar((1).to_bytes(32, "little")) and S.is_valid_scalar((L - 1).to_bytes(32, "little"))
    for bad in (bytes(32), L.to_bytes(32, "little"), b"\xff" * 32, b"\x01" * 31):
        assert not S.is_valid_scalar(bad)
        assert S.open_card(HONEST.shuffle_lock.points[3], bad, O_PLAIN.key(3)) is None
        assert ONE.opened_by(HONEST.shuffle_lock, 8, bad) is None


# -- cheats ----------------------------------------------------------------------------------


def replace_point(points: tuple[bytes, ...], i: int, p: bytes) -> tuple[bytes, ...]:
    out = list(points)
    out[i] = p
    return tuple(out)


def replace_key(keys: tuple[bytes, ...], positions: tuple[int, ...], pos: int, key: bytes) -> tuple[bytes, ...]:
    out = list(keys)
    out[positions.index(pos)] = key
    return tuple(out)


def k_shuffle(points: tuple[bytes, ...]) -> S.Shuffle:
    """A cheating K's best: the honest argument's algorithm run on points that are not its shuffle."""
    return S.Shuffle(
        points,
        P.prove_shuffle(
            CTX, S.STEP1_TAG, S.CARD_POINTS, points, K_PLAIN.mask_inverse, K_PLAIN.permutation, K_PLAIN.round_secret
        ),
    )


O_REKEY = [smul(O_PLAIN.keys[i], O_PLAIN.mask_inverse) for i in range(48)]
K_REKEY = [smul(K_PLAIN.keys[i], K_PLAIN.mask_inverse) for i in range(48)]


def o_step2(y: tuple[bytes, ...], w: tuple[bytes, ...] | None = None) -> S.ShuffleLock:
    """A cheating O's best: the honest proofs' algorithms run on the points it sends."""
    w = HONEST.shuffle_lock.masked if w is None else w
    x = HONEST.shuffle.points
    sec = O_PLAIN.round_secret
    return S.ShuffleLock(
        y,
        HONEST.shuffle_lock.keys,
        w,
        P.prove_shuffle(CTX, S.STEP2_TAG, x, w, O_PLAIN.mask_inverse, O_PLAIN.permutation, sec),
        P.prove_rekey(CTX, S.STEP2_LOCK_TAG, w, y, O_REKEY, sec),
    )


def k_lock(z: tuple[bytes, ...]) -> S.Lock:
    assert HONEST.lock is not None
    proof = P.prove_rekey(CTX, S.STEP3_TAG, HONEST.shuffle_lock.points, z, K_REKEY, K_PLAIN.round_secret)
    return dataclasses.replace(HONEST.lock, points=z, lock_proof=proof)


def y_of(i: int, p: bytes) -> bytes:
    return mul(O_PLAIN.keys[i], p)


X = HONEST.shuffle.points


def sums_at_dealer_hand() -> tuple[bytes, ...]:
    """The peek at K's hand: O locks a sum of two step-1 points at each of its hand positions 0-3."""
    pts = list(HONEST.shuffle_lock.points)
    for i in range(4):
        pts[i] = y_of(i, crypto_core_ed25519_add(X[2 * i], X[2 * i + 1]))
    return tuple(pts)


AT_ONCE: list[tuple[str, Callable[[], SealedFault | None], tuple[str, Role, str, int | None]]] = [
    (
        "K's shuffle repeats a card",
        lambda: S.check_shuffle(CTX, k_shuffle(replace_point(X, 5, X[3]))),
        ("bad_shuffle", K, "shuffle", None),
    ),
    (
        "K's shuffle replaces a card",
        lambda: S.check_shuffle(CTX, k_shuffle(replace_point(X, 5, mul(K_PLAIN.mask, JOKER)))),
        ("bad_shuffle", K, "shuffle", None),
    ),
    (
        "K's shuffle masks one card with another scalar",
        lambda: S.check_shuffle(CTX, k_shuffle(replace_point(X, 5, mul(OTHER_SCALAR, S.CARD_POINTS[0])))),
        ("bad_shuffle", K, "shuffle", None),
    ),
    (
        "K's honest shuffle for another session",
        lambda: S.check_shuffle(CTX, S.shuffle_step(K_PLAIN, P.context(bytes(32), 1, 0))),
        ("bad_shuffle", K, "shuffle", None),
    ),
    (
        "K's honest shuffle for another attempt",
        lambda: S.check_shuffle(CTX, S.shuffle_step(K_PLAIN, P.context(CTX[-36:-4], 1, 1))),
        ("bad_shuffle", K, "shuffle", None),
    ),
    (
        "O locks sums of step-1 points at its hand",
        lambda: S.check_shuffle_lock(CTX, ONE, o_step2(sums_at_dealer_hand())),
        ("bad_shuffle", O, "shuffle_lock", None),
    ),
    (
        "O masks a sum of step-1 points",
        lambda: S.check_shuffle_lock(
            CTX,
            ONE,
            o_step2(
                replace_point(
                    HONEST.shuffle_lock.points,
                    0,
                    mul(O_REKEY[0], mul(O_PLAIN.mask, crypto_core_ed25519_add(X[0], X[1]))),
                ),
                replace_point(HONEST.shuffle_lock.masked, 0, mul(O_PLAIN.mask, crypto_core_ed25519_add(X[0], X[1]))),
            ),
        ),
        ("bad_shuffle", O, "shuffle_lock", None),
    ),
    (
        "O locks one step-1 point twice (the deck peek)",
        lambda: S.check_shuffle_lock(
            CTX, ONE, o_step2(replace_point(HONEST.shuffle_lock.points, 40, y_of(40, X[O_PLAIN.permutation[3]])))
        ),
        ("bad_shuffle", O, "shuffle_lock", None),
    ),
    (
        "O locks a non-card",
        lambda: S.check_shuffle_lock(CTX, ONE, o_step2(replace_point(HONEST.shuffle_lock.points, 30, y_of(30, JOKER)))),
        ("bad_shuffle", O, "shuffle_lock", None),
    ),
    (
        "O swaps two positions without its permutation",
        lambda: S.check_shuffle_lock(
            CTX,
            ONE,
            o_step2(
                replace_point(
                    replace_point(HONEST.shuffle_lock.points, 30, y_of(30, X[O_PLAIN.permutation[31]])),
                    31,
                    y_of(31, X[O_PLAIN.permutation[30]]),
                )
            ),
        ),
        ("bad_shuffle", O, "shuffle_lock", None),
    ),
    (
        "O's private key for K's hand",
        lambda: S.check_shuffle_lock(
            CTX,
            ONE,
            dataclasses.replace(
                HONEST.shuffle_lock,
                keys=replace_key(HONEST.shuffle_lock.keys, S.SHUFFLE_LOCK_KEY_POSITIONS, 9, OTHER_SCALAR),
            ),
        ),
        ("wrong_private_key", O, "shuffle_lock", 9),
    ),
    (
        "O's public key for the table",
        lambda: S.check_shuffle_lock(
            CTX,
            ONE,
            dataclasses.replace(
                HONEST.shuffle_lock,
                keys=replace_key(HONEST.shuffle_lock.keys, S.SHUFFLE_LOCK_KEY_POSITIONS, 17, OTHER_SCALAR),
            ),
        ),
        ("wrong_public_key", O, "shuffle_lock", 17),
    ),
    (
        "K re-locks a card of its hand as a card of its choice",
        lambda: S.check_lock(CTX, HONEST.shuffle_lock, k_lock(relocked_hand())),
        ("bad_lock", K, "lock", None),
    ),
    (
        "K's public key for the table",
        lambda: S.check_lock_keys(HONEST.shuffle_lock, with_k_key(20)),
        ("wrong_public_key", K, "lock", 20),
    ),
    (
        "O's key for a drawn card",
        lambda: S.check_dealer_key(ONE, HONEST.shuffle_lock, 30, OTHER_SCALAR, Step.TURN),
        ("wrong_public_key", O, "turn", 30),
    ),
    (
        "O's key for another position of its own",
        lambda: S.check_dealer_key(ONE, HONEST.shuffle_lock, 30, O_PLAIN.key(31), Step.TURN),
        ("wrong_public_key", O, "turn", 30),
    ),
]


def relocked_hand() -> tuple[bytes, ...]:
    """K knows O's keys for its hand: it locks its position 10 as a card of its choice."""
    assert HONEST.lock is not None
    wanted = next(c for c in range(48) if c not in ORDER[8:24])
    z = mul(smul(K_PLAIN.keys[10], O_PLAIN.keys[10]), S.CARD_POINTS[wanted])
    assert S.open_card(z, K_PLAIN.keys[10], O_PLAIN.keys[10]) == wanted
    return replace_point(HONEST.lock.points, 10, z)


def with_k_key(pos: int) -> S.Lock:
    assert HONEST.lock is not None
    return dataclasses.replace(HONEST.lock, keys=replace_key(HONEST.lock.keys, S.LOCK_KEY_POSITIONS, pos, OTHER_SCALAR))


@pytest.mark.parametrize(("name", "check", "want"), AT_ONCE, ids=[c[0] for c in AT_ONCE])
def test_every_cheat_a_proof_shows_is_refused_at_once_and_attributed(
    name: str, check: Callable[[], SealedFault | None], want: tuple[str, Role, str, int | None]
) -> None:
    f = check()
    assert isinstance(f, SealedFault), name
    assert (f.rule, f.role, f.step, f.index) == want and f.rule in S.RULES


def test_the_sums_peek_would_have_named_k_s_hand() -> None:
    """Why step 2 needs its proof: with K's keys for O's hand, each sum position names two cards of K's
    hand (the attack the shuffle argument refuses before K sends those keys)."""
    pts = sums_at_dealer_hand()
    assert HONEST.lock is not None
    seen: set[int] = set()
    for i in range(4):
        z = mul(smul(K_PLAIN.keys[i], K_PLAIN.mask_inverse), pts[i])  # K's honest lock of O's cheat
        p = mul(inv(smul(K_PLAIN.keys[i], O_PLAIN.keys[i])), z)
        pair = {
            (a, b)
            for a in range(48)
            for b in range(a + 1, 48)
            if crypto_core_ed25519_add(S.CARD_POINTS[a], S.CARD_POINTS[b]) == p
        }
        assert pair == {tuple(sorted((K_PLAIN.permutation[2 * i], K_PLAIN.permutation[2 * i + 1])))}
        seen |= set(next(iter(pair)))
    assert len(seen) == 8
    assert S.check_shuffle_lock(CTX, ONE, o_step2(pts)) is not None


def verify_cheat(att: Attempt, published: list[PublishedKey], trusted: Role | None = None) -> object:
    return verify(att, published=published, dealer=0 if trusted is None else None, trusted=trusted)


AT_DISCLOSURE: list[tuple[str, Callable[[], tuple[Attempt, list[PublishedKey]]], tuple[str, Role, str, int | None]]] = [
    (
        "K's private key for O's hand",
        lambda: (dataclasses.replace(HONEST, lock=with_k_key(2)), []),
        ("wrong_private_key", K, "lock", 2),
    ),
    (
        "K claims a hand yaku it has not",
        lambda: (dataclasses.replace(HONEST, lock=S.lock_step(K_PLAIN, HONEST.shuffle_lock, True, CTX)), []),
        ("false_hand_yaku", K, "lock", None),
    ),
    (
        "O claims a hand yaku it has not",
        lambda: (dataclasses.replace(HONEST, claim=S.claim_step(O_PLAIN, True)), []),
        ("false_hand_yaku", O, "claim", None),
    ),
    (
        "K publishes a wrong key for a drawn card",
        lambda: (HONEST, [PublishedKey(O, 2, O_PLAIN.key(2)), PublishedKey(K, 30, OTHER_SCALAR)]),
        ("wrong_public_key", K, "turn", 30),
    ),
]


@pytest.mark.parametrize(("name", "cheat", "want"), AT_DISCLOSURE, ids=[c[0] for c in AT_DISCLOSURE])
def test_every_cheat_only_a_secret_shows_is_named_at_the_disclosure(
    name: str, cheat: Callable[[], tuple[Attempt, list[PublishedKey]]], want: tuple[str, Role, str, int | None]
) -> None:
    att, published = cheat()
    f = verify(att, published=published, dealer=0)
    assert isinstance(f, SealedFault), name
    assert (f.rule, f.role, f.step, f.index) == want
    assert f.seat == (0 if want[1] is O else 1) and f.rule in S.RULES
    # the live seat that trusts its own steps (the honest one) names the same fault
    honest = K if want[1] is O else O
    assert verify(att, published=published, trusted=honest) == dataclasses.replace(f, seat=None)


def test_false_none_is_caught_for_either_seat() -> None:
    for who, label in ((K, "k-none"), (O, "o-none")):
        hand = slice(8, 16) if who is K else slice(0, 8)

        def has_yaku(order: list[int], h: slice = hand) -> bool:
            return stands(order) and hand_yaku(mask_of(order[h])) is not None

        k, o = find_pair(has_yaku, label)
        att = S.honest_attempt(k, o, CTX)
        assert att.lock is not None
        if who is K:
            att = dataclasses.replace(att, lock=S.lock_step(k, att.shuffle_lock, False, CTX))
        else:
            att = dataclasses.replace(att, claim=S.claim_step(o, False))
        f = S.verify_deal(att, k.round_secret, o.round_secret)
        assert isinstance(f, SealedFault) and (f.rule, f.role) == ("false_no_hand_yaku", who)


BOTH_HOLD_ONE = 29918


def test_the_dealers_hand_yaku_wins_when_both_hold_one() -> None:
    o = S.derive(secret("both/O"))
    k = S.derive(secret(f"both/K/{BOTH_HOLD_ONE}"))  # found once by counting up; the deal is checked here
    order = order_of(k, o)
    assert stands(order)
    assert hand_yaku(mask_of(order[0:8])) is not None and hand_yaku(mask_of(order[8:16])) is not None
    v = S.verify_deal(S.honest_attempt(k, o, CTX), k.round_secret, o.round_secret)
    assert isinstance(v, VerifiedDeal) and v.hand_yaku is not None and v.hand_yaku[0] is O


def test_a_redeal_claims_nothing_and_the_next_attempt_must_follow() -> None:
    k, o = find_pair(lambda order: not stands(order), "redeal")
    att = S.honest_attempt(k, o, CTX)
    assert att.claim is None
    v = S.verify_deal(att, k.round_secret, o.round_secret)
    assert isinstance(v, VerifiedDeal) and v.redeal and v.complete
    assert att.lock is not None
    claimed = dataclasses.replace(att, lock=S.lock_step(k, att.shuffle_lock, True, CTX))
    f = S.verify_deal(claimed, k.round_secret, o.round_secret)
    assert isinstance(f, SealedFault) and (f.rule, f.role) == ("false_hand_yaku", K)
    # a round: the redealt attempt, then the plain one
    r = S.verify_round(
        [att, HONEST], [k.round_secret, K_PLAIN.round_secret], [o.round_secret, O_PLAIN.round_secret], dealer=1
    )
    assert isinstance(r, VerifiedDeal) and list(r.order) == ORDER
    r = S.verify_round([HONEST, att], [K_PLAIN.round_secret, k.round_secret], [O_PLAIN.round_secret, o.round_secret])
    assert isinstance(r, SealedFault) and r.rule == "bad_shape"
    r = S.verify_round([HONEST], [K_PLAIN.round_secret], [])
    assert isinstance(r, SealedFault) and (r.rule, r.role, r.step) == ("bad_shape", O, "disclose")


def test_a_disclosed_secret_that_does_not_re_derive_what_was_sent() -> None:
    f = verify(HONEST, k=S.derive(secret("another K")))
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.step) == ("secret_mismatch", K, "lock")
    f = verify(HONEST, o=S.derive(secret("another O")))
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.step) == ("secret_mismatch", O, "shuffle_lock")
    f = S.verify_deal(HONEST, K_PLAIN.round_secret[:31], O_PLAIN.round_secret)
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.step) == ("bad_scalar", K, "disclose")
    # a round stopped after step 2: the steps themselves re-computed
    early = Attempt(HONEST.shuffle, HONEST.shuffle_lock)
    assert isinstance(verify(early), VerifiedDeal)
    f = verify(early, k=S.derive(secret("another K")))
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.step) == ("secret_mismatch", K, "shuffle")
    f = verify(early, o=S.derive(secret("another O")))
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.step) == ("secret_mismatch", O, "shuffle_lock")


def test_the_seats_open_what_their_secrets_open() -> None:
    assert HONEST.lock is not None
    f = S.open_lock(O_PLAIN, HONEST.shuffle_lock, with_k_key(2))
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.index) == ("wrong_private_key", K, 2)
    bad_claim = S.Claim((OTHER_SCALAR, *(O_PLAIN.keys[i] for i in range(1, 8))))
    f4 = S.open_claim(K_PLAIN, HONEST.lock, bad_claim)
    assert isinstance(f4, SealedFault) and (f4.rule, f4.role, f4.index) == ("wrong_public_key", O, 0)
    assert S.open_claim(K_PLAIN, HONEST.lock, S.Claim(None)) is None
    good = S.open_claim(K_PLAIN, HONEST.lock, S.claim_step(O_PLAIN, True))
    assert good == {i: ORDER[i] for i in S.DEALER_HAND}
    assert S.receive_shuffle(O_PLAIN, HONEST.shuffle, CTX) == HONEST.shuffle_lock
    got = S.receive_shuffle_lock(K_PLAIN, ONE, HONEST.shuffle_lock, CTX)
    assert got == (S.open_shuffle_lock(K_PLAIN, ONE, HONEST.shuffle_lock), HONEST.lock)


# -- properties ------------------------------------------------------------------------------

SECRETS = st.binary(min_size=32, max_size=32)


@settings(max_examples=6, deadline=None)
@given(SECRETS, SECRETS)
def test_any_honest_deal_passes_every_check_and_verifies_to_the_composed_permutations(ks: bytes, os_: bytes) -> None:
    k, o = S.derive(ks), S.derive(os_)
    att = S.honest_attempt(k, o, CTX)
    assert att.lock is not None
    assert S.check_shuffle(CTX, att.shuffle) is None
    assert S.check_shuffle_lock(CTX, S.StepOne(att.shuffle), att.shuffle_lock) is None
    assert S.check_lock(CTX, att.shuffle_lock, att.lock) is None
    v = S.verify_deal(att, ks, os_)
    assert isinstance(v, VerifiedDeal)
    assert list(v.order) == order_of(k, o) and sorted(v.order) == list(range(48))
    i = (ks[0] + os_[0]) % 48
    assert S.open_card(att.lock.points[i], k.keys[i], o.keys[i]) == v.order[i]


@settings(max_examples=12, deadline=None)
@given(
    st.sampled_from(["shuffle", "chain", "responses", "masked", "shuffle_lock", "lock_proof2", "lock", "lock_proof3"]),
    st.integers(0, 47),
    st.integers(0, 31),
    st.integers(1, 255),
)
def test_any_changed_point_or_proof_byte_is_refused_and_the_fault_of_its_steps_signer(
    field: str, i: int, byte: int, xor: int
) -> None:
    assert HONEST.lock is not None

    def changed(items: tuple[bytes, ...]) -> tuple[bytes, ...]:
        p = bytearray(items[i % len(items)])
        p[byte] ^= xor
        return replace_point(items, i % len(items), bytes(p))

    s1, s2, s3 = HONEST.shuffle, HONEST.shuffle_lock, HONEST.lock
    f: SealedFault | None
    if field == "shuffle":
        f = S.check_shuffle(CTX, dataclasses.replace(s1, points=changed(s1.points)))
    elif field in ("chain", "responses"):
        proof = s1.proof
        proof = dataclasses.replace(proof, **{field: changed(getattr(proof, field))})
        f = S.check_shuffle(CTX, dataclasses.replace(s1, proof=proof))
    elif field in ("masked", "shuffle_lock"):
        if field == "masked":
            f = S.check_shuffle_lock(CTX, ONE, dataclasses.replace(s2, masked=changed(s2.masked)))
        else:
            f = S.check_shuffle_lock(CTX, ONE, dataclasses.replace(s2, points=changed(s2.points)))
    elif field == "lock_proof2":
        rk = P.RekeyProof(changed(s2.lock_proof.responses))
        f = S.check_shuffle_lock(CTX, ONE, dataclasses.replace(s2, lock_proof=rk))
    elif field == "lock":
        f = S.check_lock(CTX, s2, dataclasses.replace(s3, points=changed(s3.points)))
    else:
        rk = P.RekeyProof(changed(s3.lock_proof.responses))
        f = S.check_lock(CTX, s2, dataclasses.replace(s3, lock_proof=rk))
    assert isinstance(f, SealedFault)
    assert f.role is (O if field in ("masked", "shuffle_lock", "lock_proof2") else K)
    assert f.rule in ("bad_point", "bad_shuffle", "bad_lock")


def test_libsodium_multiplication_refuses_every_invalid_point_we_know() -> None:
    assert S.MULTIPLICATION_VALIDATES
    for bad in [*SMALL_ORDER, NOT_ON_CURVE, NON_CANONICAL, MIXED_ORDER]:
        with pytest.raises(Exception, match="Unexpected library error"):
            mul(K_PLAIN.keys[0], bad)
