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
from koikoi.protocol import sealed as S
from koikoi.protocol.sealed import Attempt, PublishedKey, Role, SealedFault, SeatSecrets, VerifiedDeal

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

K_PLAIN, O_PLAIN = find_pair(plain, "plain")
HONEST = S.honest_attempt(K_PLAIN, O_PLAIN)
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
    # each seat's checks during the round open exactly its hand and the table
    k_view = S.check_shuffle_lock(K_PLAIN, HONEST.shuffle, HONEST.shuffle_lock)
    assert k_view == {i: ORDER[i] for i in (*S.OTHER_HAND, *S.TABLE)}
    o_view = S.check_lock(O_PLAIN, HONEST.shuffle_lock, HONEST.lock)
    assert o_view == {i: ORDER[i] for i in (*S.DEALER_HAND, *S.TABLE)}
    assert S.check_shuffle(HONEST.shuffle) is None
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
    assert len(HONEST.shuffle.encode()) == 1 + 3 + 48 * 34
    with pytest.raises(S.SealedFormatError, match="shuffle: points must be an array of 48"):
        S.Shuffle.from_body([list(HONEST.shuffle.points[:47])])
    with pytest.raises(S.SealedFormatError, match="lock: a claim must be an array of 8"):
        S.Lock.from_body([list(HONEST.lock.points), list(HONEST.lock.keys), [b"x"] * 7])
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
    pts = {i: [att.shuffle_lock.points[i]] + ([att.lock.points[i]] if att.lock else []) for i in range(48)}
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
    pts = {i: [x[O_PLAIN.permutation[i]], att.shuffle_lock.points[i], att.lock.points[i]] for i in range(48)}
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
    att = S.honest_attempt(k, o)
    assert att.lock is not None and att.lock.claim is not None
    opened = S.check_lock(o, att.shuffle_lock, att.lock)
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
    [*SMALL_ORDER, NOT_ON_CURVE, NON_CANONICAL, MIXED_ORDER, S.CARD_POINTS[0][:31], b""],
    ids=[
        "identity",
        "order 2",
        "order 4",
        "order 8",
        "not on the curve",
        "non-canonical",
        "mixed order",
        "31 bytes",
        "empty",
    ],
)
def test_points_outside_the_prime_order_group_are_refused(bad: bytes) -> None:
    assert not S.is_valid_point(bad)
    pts = list(HONEST.shuffle_lock.points)
    pts[13] = bad
    att = dataclasses.replace(HONEST, shuffle_lock=dataclasses.replace(HONEST.shuffle_lock, points=tuple(pts)))
    assert verify(att) == SealedFault("bad_point", O, "shuffle_lock", 13, "not a point of the prime-order group")
    live = S.check_shuffle_lock(K_PLAIN, HONEST.shuffle, att.shuffle_lock)
    assert isinstance(live, SealedFault) and (live.rule, live.role, live.index) == ("bad_point", O, 13)


@pytest.mark.parametrize(
    "bad",
    [bytes(32), L.to_bytes(32, "little"), (L + 1).to_bytes(32, "little"), b"\xff" * 32, b"\x01" * 31],
    ids=["zero", "L", "L+1", "2^256-1", "31 bytes"],
)
def test_keys_that_are_not_canonical_non_zero_scalars_are_refused(bad: bytes) -> None:
    assert not S.is_valid_scalar(bad)
    assert HONEST.lock is not None
    keys = list(HONEST.lock.keys)
    keys[3] = bad  # K's key for O's hand position 3
    att = dataclasses.replace(HONEST, lock=dataclasses.replace(HONEST.lock, keys=tuple(keys)))
    f = verify(att, dealer=1)
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.seat, f.step, f.index) == ("bad_scalar", K, 0, "lock", 3)
    assert f.message == "bad_scalar: K (seat 0), lock at 3: not a canonical non-zero scalar"
    assert S.open_card(HONEST.lock.points[3], bad, O_PLAIN.key(3)) is None


def test_scalar_bounds() -> None:
    assert S.is_valid_scalar((1).to_bytes(32, "little")) and S.is_valid_scalar((L - 1).to_bytes(32, "little"))


# -- cheats ----------------------------------------------------------------------------------


def replace_point(points: tuple[bytes, ...], i: int, p: bytes) -> tuple[bytes, ...]:
    out = list(points)
    out[i] = p
    return tuple(out)


def replace_key(keys: tuple[bytes, ...], positions: tuple[int, ...], pos: int, key: bytes) -> tuple[bytes, ...]:
    out = list(keys)
    out[positions.index(pos)] = key
    return tuple(out)


def relock(att: Attempt, k: SeatSecrets = K_PLAIN) -> Attempt:
    """Re-run K's lock honestly on a changed step 2 (the cheat is O's; K follows the protocol)."""
    assert att.lock is not None
    return dataclasses.replace(att, lock=S.lock_step(k, att.shuffle_lock, att.lock.claim is not None))


def redo_from_step1(s1: S.Shuffle) -> Attempt:
    """O and K follow the protocol on a changed step 1."""
    s2 = S.shuffle_lock_step(O_PLAIN, s1)
    return Attempt(s1, s2, S.lock_step(K_PLAIN, s2, False), S.claim_step(O_PLAIN, False))


def y_of(i: int, source: int) -> bytes:
    """O's step-2 point at position ``i`` locking step-1 point ``source``."""
    return mul(O_PLAIN.keys[i], HONEST.shuffle.points[source])


def cheat_k_duplicates() -> tuple[Attempt, list[PublishedKey]]:
    return redo_from_step1(S.Shuffle(replace_point(HONEST.shuffle.points, 5, HONEST.shuffle.points[3]))), []


def cheat_k_replaces() -> tuple[Attempt, list[PublishedKey]]:
    return redo_from_step1(S.Shuffle(replace_point(HONEST.shuffle.points, 5, mul(K_PLAIN.mask, JOKER)))), []


def cheat_o_duplicates() -> tuple[Attempt, list[PublishedKey]]:
    s2 = HONEST.shuffle_lock
    pts = replace_point(s2.points, 40, y_of(40, O_PLAIN.permutation[30]))
    return relock(dataclasses.replace(HONEST, shuffle_lock=dataclasses.replace(s2, points=pts))), []


def cheat_o_replaces() -> tuple[Attempt, list[PublishedKey]]:
    s2 = HONEST.shuffle_lock
    pts = replace_point(s2.points, 30, mul(O_PLAIN.keys[30], JOKER))
    return relock(dataclasses.replace(HONEST, shuffle_lock=dataclasses.replace(s2, points=pts))), []


def cheat_o_swaps_without_its_permutation() -> tuple[Attempt, list[PublishedKey]]:
    s2 = HONEST.shuffle_lock
    a, b = O_PLAIN.permutation[30], O_PLAIN.permutation[31]
    pts = replace_point(replace_point(s2.points, 30, y_of(30, b)), 31, y_of(31, a))
    return relock(dataclasses.replace(HONEST, shuffle_lock=dataclasses.replace(s2, points=pts))), []


def with_o_key(pos: int) -> Callable[[], tuple[Attempt, list[PublishedKey]]]:
    def cheat() -> tuple[Attempt, list[PublishedKey]]:
        s2 = HONEST.shuffle_lock
        keys = replace_key(s2.keys, S.SHUFFLE_LOCK_KEY_POSITIONS, pos, OTHER_SCALAR)
        return dataclasses.replace(HONEST, shuffle_lock=dataclasses.replace(s2, keys=keys)), []

    return cheat


def with_k_key(pos: int) -> Callable[[], tuple[Attempt, list[PublishedKey]]]:
    def cheat() -> tuple[Attempt, list[PublishedKey]]:
        assert HONEST.lock is not None
        keys = replace_key(HONEST.lock.keys, S.LOCK_KEY_POSITIONS, pos, OTHER_SCALAR)
        return dataclasses.replace(HONEST, lock=dataclasses.replace(HONEST.lock, keys=keys)), []

    return cheat


def cheat_k_swaps_its_own_card() -> tuple[Attempt, list[PublishedKey]]:
    """K knows O's keys for its hand: it locks its position 10 as a card of its choice."""
    assert HONEST.lock is not None
    wanted = next(c for c in range(48) if c not in ORDER[8:24])
    z = mul(smul(K_PLAIN.keys[10], O_PLAIN.keys[10]), S.CARD_POINTS[wanted])
    assert S.open_card(z, K_PLAIN.keys[10], O_PLAIN.keys[10]) == wanted
    return dataclasses.replace(
        HONEST, lock=dataclasses.replace(HONEST.lock, points=replace_point(HONEST.lock.points, 10, z))
    ), []


def cheat_k_false_claim() -> tuple[Attempt, list[PublishedKey]]:
    assert HONEST.lock is not None
    return dataclasses.replace(HONEST, lock=S.lock_step(K_PLAIN, HONEST.shuffle_lock, True)), []


def cheat_o_false_claim() -> tuple[Attempt, list[PublishedKey]]:
    return dataclasses.replace(HONEST, claim=S.claim_step(O_PLAIN, True)), []


def cheat_wrong_turn_key() -> tuple[Attempt, list[PublishedKey]]:
    return HONEST, [PublishedKey(O, 2, O_PLAIN.key(2)), PublishedKey(K, 30, OTHER_SCALAR)]


CHEATS: list[tuple[str, Callable[[], tuple[Attempt, list[PublishedKey]]], tuple[str, Role, str, int | None]]] = [
    ("K's shuffle repeats a card", cheat_k_duplicates, ("duplicate_card", K, "shuffle", 5)),
    ("K's shuffle replaces a card", cheat_k_replaces, ("replaced_card", K, "shuffle", 5)),
    ("O's shuffle repeats a card", cheat_o_duplicates, ("duplicate_card", O, "shuffle_lock", 40)),
    ("O's shuffle replaces a card", cheat_o_replaces, ("replaced_card", O, "shuffle_lock", 30)),
    (
        "O's shuffle is not its permutation",
        cheat_o_swaps_without_its_permutation,
        ("secret_mismatch", O, "shuffle_lock", 30),
    ),
    ("O's private key for K's hand", with_o_key(9), ("wrong_private_key", O, "shuffle_lock", 9)),
    ("O's public key for the table", with_o_key(17), ("wrong_public_key", O, "shuffle_lock", 17)),
    ("K's private key for O's hand", with_k_key(2), ("wrong_private_key", K, "lock", 2)),
    ("K's public key for the table", with_k_key(20), ("wrong_public_key", K, "lock", 20)),
    ("K swaps a card of its hand", cheat_k_swaps_its_own_card, ("bad_lock", K, "lock", 10)),
    ("K claims a hand yaku it has not", cheat_k_false_claim, ("false_hand_yaku", K, "lock", None)),
    ("O claims a hand yaku it has not", cheat_o_false_claim, ("false_hand_yaku", O, "claim", None)),
    ("K publishes a wrong key for a drawn card", cheat_wrong_turn_key, ("wrong_public_key", K, "turn", 30)),
]


@pytest.mark.parametrize(("name", "cheat", "want"), CHEATS, ids=[c[0] for c in CHEATS])
def test_every_cheat_is_caught_and_attributed(
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
        att = S.honest_attempt(k, o)
        assert att.lock is not None
        if who is K:
            att = dataclasses.replace(att, lock=S.lock_step(k, att.shuffle_lock, False))
        else:
            att = dataclasses.replace(att, claim=S.claim_step(o, False))
        f = S.verify_deal(att, k.round_secret, o.round_secret)
        assert isinstance(f, SealedFault) and (f.rule, f.role) == ("false_no_hand_yaku", who)


def test_the_dealers_hand_yaku_wins_when_both_hold_one() -> None:
    def both(order: list[int]) -> bool:
        return (
            stands(order) and hand_yaku(mask_of(order[0:8])) is not None and hand_yaku(mask_of(order[8:16])) is not None
        )

    # the first K secret (counting up, as find_pair does) that with O's deals both hands a hand yaku: found once,
    # pinned here (the search took two minutes); the deal it makes is checked, so a changed shuffle fails loudly
    o = S.derive(secret("both/O"))
    k = S.derive(secret("both/K/29918"))
    assert both(order_of(k, o)), "the pinned secrets no longer deal both hands a hand yaku: find_pair(both, 'both')"
    v = S.verify_deal(S.honest_attempt(k, o), k.round_secret, o.round_secret)
    assert isinstance(v, VerifiedDeal) and v.hand_yaku is not None and v.hand_yaku[0] is O


def test_a_redeal_claims_nothing_and_the_next_attempt_must_follow() -> None:
    k, o = find_pair(lambda order: not stands(order), "redeal")
    att = S.honest_attempt(k, o)
    assert att.claim is None
    v = S.verify_deal(att, k.round_secret, o.round_secret)
    assert isinstance(v, VerifiedDeal) and v.redeal and v.complete
    assert att.lock is not None
    claimed = dataclasses.replace(att, lock=S.lock_step(k, att.shuffle_lock, True))
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
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.step) == ("secret_mismatch", K, "shuffle")
    f = verify(HONEST, o=S.derive(secret("another O")))
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.step) == ("secret_mismatch", O, "shuffle_lock")
    f = S.verify_deal(HONEST, K_PLAIN.round_secret[:31], O_PLAIN.round_secret)
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.step) == ("bad_scalar", K, "disclose")


def test_live_checks_stop_the_round_on_the_cheaters_step() -> None:
    att, _ = cheat_k_duplicates()
    f = S.check_shuffle(att.shuffle)
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.index) == ("duplicate_card", K, 5)
    assert S.receive_shuffle(O_PLAIN, att.shuffle) == f
    att, _ = with_o_key(9)()
    f2 = S.check_shuffle_lock(K_PLAIN, att.shuffle, att.shuffle_lock)
    assert isinstance(f2, SealedFault) and (f2.rule, f2.role, f2.index) == ("does_not_open", O, 9)
    assert S.receive_shuffle_lock(K_PLAIN, att.shuffle, att.shuffle_lock) == f2
    att, _ = with_k_key(2)()
    assert att.lock is not None
    f3 = S.check_lock(O_PLAIN, att.shuffle_lock, att.lock)
    assert isinstance(f3, SealedFault) and (f3.rule, f3.role, f3.index) == ("does_not_open", K, 2)
    assert HONEST.lock is not None
    bad_claim = S.Claim((OTHER_SCALAR, *(O_PLAIN.keys[i] for i in range(1, 8))))
    f4 = S.check_claim(K_PLAIN, HONEST.lock, bad_claim)
    assert isinstance(f4, SealedFault) and (f4.rule, f4.role, f4.index) == ("does_not_open", O, 0)
    assert S.check_claim(K_PLAIN, HONEST.lock, S.Claim(None)) is None
    good = S.check_claim(K_PLAIN, HONEST.lock, S.claim_step(O_PLAIN, True))
    assert good == {i: ORDER[i] for i in S.DEALER_HAND}


# -- properties ------------------------------------------------------------------------------

SECRETS = st.binary(min_size=32, max_size=32)


@settings(max_examples=12, deadline=None)
@given(SECRETS, SECRETS)
def test_any_honest_deal_verifies_to_the_composed_permutations(ks: bytes, os_: bytes) -> None:
    k, o = S.derive(ks), S.derive(os_)
    att = S.honest_attempt(k, o)
    v = S.verify_deal(att, ks, os_)
    assert isinstance(v, VerifiedDeal)
    assert list(v.order) == order_of(k, o) and sorted(v.order) == list(range(48))
    assert att.lock is not None
    i = (ks[0] + os_[0]) % 48
    assert S.open_card(att.lock.points[i], k.keys[i], o.keys[i]) == v.order[i]


@settings(max_examples=15, deadline=None)
@given(
    st.sampled_from(["shuffle", "shuffle_lock", "lock"]), st.integers(0, 47), st.integers(0, 31), st.integers(1, 255)
)
def test_any_changed_point_is_the_fault_of_its_steps_signer(step: str, i: int, byte: int, xor: int) -> None:
    assert HONEST.lock is not None

    def changed(points: tuple[bytes, ...]) -> tuple[bytes, ...]:
        p = bytearray(points[i])
        p[byte] ^= xor
        return replace_point(points, i, bytes(p))

    if step == "shuffle":
        att = dataclasses.replace(HONEST, shuffle=S.Shuffle(changed(HONEST.shuffle.points)))
    elif step == "shuffle_lock":
        s2 = HONEST.shuffle_lock
        att = dataclasses.replace(HONEST, shuffle_lock=dataclasses.replace(s2, points=changed(s2.points)))
    else:
        att = dataclasses.replace(HONEST, lock=dataclasses.replace(HONEST.lock, points=changed(HONEST.lock.points)))
    f = verify(att)
    assert isinstance(f, SealedFault)
    assert f.role is (O if step == "shuffle_lock" else K) and f.step == step


# -- the one-pass receivers (points validated by the multiplication that uses them) ------------


def test_libsodium_multiplication_refuses_every_invalid_point_we_know() -> None:
    assert S.MULTIPLICATION_VALIDATES
    for bad in [*SMALL_ORDER, NOT_ON_CURVE, NON_CANONICAL, MIXED_ORDER]:
        with pytest.raises(Exception, match="Unexpected library error"):
            mul(K_PLAIN.keys[0], bad)


def test_the_receivers_equal_the_checks_and_steps_of_an_honest_deal() -> None:
    assert S.receive_shuffle(O_PLAIN, HONEST.shuffle) == HONEST.shuffle_lock
    got = S.receive_shuffle_lock(K_PLAIN, HONEST.shuffle, HONEST.shuffle_lock)
    assert got == (S.check_shuffle_lock(K_PLAIN, HONEST.shuffle, HONEST.shuffle_lock), HONEST.lock)


@pytest.mark.parametrize("explicit", [False, True], ids=["by multiplication", "explicit"])
@pytest.mark.parametrize(
    "bad",
    [IDENTITY, SMALL_ORDER[3], NOT_ON_CURVE, NON_CANONICAL, MIXED_ORDER, b"\x01" * 31],
    ids=["identity", "order 8", "not on the curve", "non-canonical", "mixed order", "31 bytes"],
)
def test_the_receivers_refuse_bad_points_and_name_the_signer(
    bad: bytes, explicit: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if explicit:
        monkeypatch.setattr(S, "MULTIPLICATION_VALIDATES", False)
    s1 = S.Shuffle(replace_point(HONEST.shuffle.points, 7, bad))
    f = S.receive_shuffle(O_PLAIN, s1)
    assert isinstance(f, SealedFault) and (f.rule, f.role, f.step, f.index) == ("bad_point", K, "shuffle", 7)
    for pos in (12, 40):  # one K opens at once, one it only locks
        s2 = dataclasses.replace(HONEST.shuffle_lock, points=replace_point(HONEST.shuffle_lock.points, pos, bad))
        g = S.receive_shuffle_lock(K_PLAIN, HONEST.shuffle, s2)
        assert isinstance(g, SealedFault) and (g.rule, g.role, g.index) == ("bad_point", O, pos)
    assert HONEST.lock is not None
    s3 = dataclasses.replace(HONEST.lock, points=replace_point(HONEST.lock.points, 3, bad))
    h = S.check_lock(O_PLAIN, HONEST.shuffle_lock, s3)
    assert isinstance(h, SealedFault) and (h.rule, h.role, h.index) == ("bad_point", K, 3)
    assert S.open_card(bad, K_PLAIN.keys[3], O_PLAIN.keys[3]) is None
