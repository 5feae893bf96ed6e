"""The sealed deck: mental poker for one deal, so the cards a seat cannot see stay hidden from it.

Sans-IO and pure: no clock, no global randomness. A seat's secrets come in as arguments (its 32-byte
*match secret*, drawn by the client from the OS); everything else is derived. Every group operation is
libsodium's, through PyNaCl's ``nacl.bindings``, in the prime-order subgroup of edwards25519.
The protocol, the encodings and the argument are in ``spec/sealed.md``; in short (O = the dealer, K =
the other seat; ``P_c`` the point of card ``c``; positions as :func:`koikoi.engine.deal.deal_from_order`):

1. K :class:`Shuffle`: ``X_j = a · P_{πK[j]}`` (K's single mask ``a``, K's permutation ``πK``).
2. O :class:`ShuffleLock`: ``Y_i = b_i · X_{πO[i]}`` (O's per-position keys ``b_i``, O's permutation),
   plus ``b_i`` for K's hand (8–15) and the table (16–23).
3. K :class:`Lock`: ``Z_i = (a_i · a⁻¹) · Y_i``, plus ``a_i`` for O's hand (0–7) and the table, plus
   K's hand-yaku claim (``None``, or ``a_i`` for 8–15).
4. O :class:`Claim`: ``None``, or ``b_i`` for 0–7.

The card at position ``i`` is ``(a_i · b_i)⁻¹ · Z_i`` (:func:`open_card`). At the round's end both seats
disclose their round secrets and :func:`verify_deal` / :func:`verify_round` re-derive and re-compute
every step: the verified deal, or a :class:`SealedFault` naming the rule, the seat and the item.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from nacl.bindings import (
    crypto_core_ed25519_add,
    crypto_core_ed25519_from_uniform,
    crypto_core_ed25519_is_valid_point,
    crypto_core_ed25519_scalar_invert,
    crypto_core_ed25519_scalar_mul,
    crypto_core_ed25519_scalar_reduce,
    crypto_generichash_blake2b_salt_personal,
    crypto_hash_sha512,
    crypto_scalarmult_ed25519_noclamp,
)
from nacl.exceptions import RuntimeError as NaclRuntimeError

from ..engine.cards import CARD_IDS, four_of_a_month, mask_of
from ..engine.deal import Deal, deal_from_order, shuffle
from ..engine.yaku import Yaku, hand_yaku
from ..errors import RemoteError
from .codes import DEAL_RULES, Code
from .framing import encode
from .proofs import RekeyProof, ShuffleProof, prove_rekey, prove_shuffle, verify_rekey, verify_shuffle
from .steps import Step

__all__ = [
    "CARD_LABEL",
    "CARD_POINTS",
    "DEALER_HAND",
    "DECK",
    "GROUP_ORDER",
    "KEY_LABEL",
    "LOCK_KEY_POSITIONS",
    "MASK_LABEL",
    "MAX_ATTEMPTS",
    "MULTIPLICATION_VALIDATES",
    "OTHER_HAND",
    "PERMUTATION_LABEL",
    "REKEY_RESPONSES",
    "ROUND_LABEL",
    "RULES",
    "SHUFFLE_LOCK_KEY_POSITIONS",
    "SHUFFLE_RESPONSES",
    "STEP1_TAG",
    "STEP2_LOCK_TAG",
    "STEP2_TAG",
    "STEP3_TAG",
    "TABLE",
    "Attempt",
    "Claim",
    "Disclose",
    "Lock",
    "PublishedKey",
    "Role",
    "SealedFault",
    "SealedFormatError",
    "SeatSecrets",
    "Shuffle",
    "ShuffleLock",
    "StepOne",
    "VerifiedDeal",
    "card_of_point",
    "check_dealer_key",
    "check_lock",
    "check_lock_keys",
    "check_shuffle",
    "check_shuffle_lock",
    "claim_step",
    "deck_position",
    "derive",
    "honest_attempt",
    "is_valid_point",
    "is_valid_scalar",
    "lock_step",
    "must_claim",
    "open_card",
    "open_claim",
    "open_lock",
    "open_lock_keys",
    "open_shuffle_lock",
    "receive_shuffle",
    "receive_shuffle_lock",
    "round_secret",
    "shuffle_lock_step",
    "shuffle_points",
    "shuffle_step",
    "verify_deal",
    "verify_round",
]

GROUP_ORDER: Final = 2**252 + 27742317777372353535851937790883648493
"""L, the order of edwards25519's prime-order subgroup."""

CARD_LABEL: Final = b"koikoi/sealed/card/v1\x00"
ROUND_LABEL: Final = b"koikoi/sealed/round/v1\x00"
MASK_LABEL: Final = b"koikoi/sealed/mask/v1\x00"
KEY_LABEL: Final = b"koikoi/sealed/key/v1\x00"
PERMUTATION_LABEL: Final = b"koikoi/sealed/permutation/v1\x00"

DEALER_HAND: Final = range(0, 8)
OTHER_HAND: Final = range(8, 16)
TABLE: Final = range(16, 24)
DECK: Final = range(24, 48)

MAX_ATTEMPTS: Final = 8
"""At most this many deal attempts a round (spec/sealed.md §4.1): an honest round redeals seven times in a
row with probability ≈ 0.0043⁷ < 10⁻¹⁶, and only a cheating K can force redeals (re-locking the table,
``bad_lock``), so a round redealt at its eighth attempt is stopped by its dealer and verified."""

SHUFFLE_RESPONSES: Final = 2 * 48 + 3
"""The scalars of a shuffle argument: the challenge, ``s_γ``, ``s_R``, then 48 and 48 responses."""
REKEY_RESPONSES: Final = 48 + 1
"""The scalars of a lock proof: the challenge, then one response a position."""
STEP1_TAG: Final = b"shuffle"
STEP2_TAG: Final = b"shuffle_lock/mask"
STEP2_LOCK_TAG: Final = b"shuffle_lock/keys"
STEP3_TAG: Final = b"lock"

SHUFFLE_LOCK_KEY_POSITIONS: Final = (*OTHER_HAND, *TABLE)
"""The positions of O's keys in step 2, in order: K's hand, then the table."""
LOCK_KEY_POSITIONS: Final = (*DEALER_HAND, *TABLE)
"""The positions of K's keys in step 3, in order: O's hand, then the table."""


# -- the group --------------------------------------------------------------


def is_valid_point(p: object) -> bool:
    """32 bytes, canonical, on the curve, in the prime-order subgroup, not of small order (not the identity)."""
    return isinstance(p, bytes) and len(p) == 32 and bool(crypto_core_ed25519_is_valid_point(p))


def is_valid_scalar(s: object) -> bool:
    """32 bytes, canonical (little-endian value below L), not zero."""
    if not isinstance(s, bytes) or len(s) != 32:
        return False
    v = int.from_bytes(s, "little")
    return 0 < v < GROUP_ORDER


def _card_points() -> tuple[bytes, ...]:
    pts = tuple(
        crypto_core_ed25519_from_uniform(crypto_hash_sha512(CARD_LABEL + cid.encode("ascii"))[:32]) for cid in CARD_IDS
    )
    if len(pts) != 48 or len(set(pts)) != 48 or not all(is_valid_point(p) for p in pts):
        raise RuntimeError("sealed: the card points are not 48 distinct valid points")
    return pts


CARD_POINTS: Final[tuple[bytes, ...]] = _card_points()
"""``P_c`` for the 48 cards in card-number order: from_uniform(SHA-512(CARD_LABEL ‖ card id)[:32])."""
_CARD_OF: Final[dict[bytes, int]] = {p: c for c, p in enumerate(CARD_POINTS)}


def card_of_point(p: bytes) -> int | None:
    """The card whose point is ``p``, or None."""
    return _CARD_OF.get(p)


def _blake2b(msg: bytes, *, key: bytes, digest_size: int) -> bytes:
    """BLAKE2b keyed with ``key`` (libsodium's crypto_generichash, no salt, no personalisation)."""
    return crypto_generichash_blake2b_salt_personal(msg, digest_size=digest_size, key=key)


def _mul(s: bytes, p: bytes) -> bytes | None:
    """``s · p`` (libsodium refuses invalid points and an identity result: then None)."""
    try:
        return crypto_scalarmult_ed25519_noclamp(s, p)
    except NaclRuntimeError:
        return None


def _multiplication_validates() -> bool:
    """Whether libsodium's scalar multiplication refuses every invalid point (it checks canonical
    encoding, small order, the curve and the prime-order subgroup); probed once at import. When it
    does, a point that is multiplied needs no separate validation (a third of a round's CPU)."""
    one = (1).to_bytes(32, "little")
    probes = [
        one,  # the identity
        bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),  # order 8
        (2).to_bytes(32, "little"),  # not on the curve
        (2**255 - 18).to_bytes(32, "little"),  # y = p + 1, non-canonical
        crypto_core_ed25519_add(CARD_POINTS[0], bytes(32)),  # a card point plus a point of order 4
    ]
    return all(_mul(one, q) is None for q in probes) and _mul(one, CARD_POINTS[0]) == CARD_POINTS[0]


def _smul(x: bytes, y: bytes) -> bytes:
    return crypto_core_ed25519_scalar_mul(x, y)


def _inv(x: bytes) -> bytes:
    return crypto_core_ed25519_scalar_invert(x)


MULTIPLICATION_VALIDATES: Final = _multiplication_validates()


def _mul_checked(s: bytes, p: bytes) -> bytes | None:
    """``s · p``, or None when ``p`` is not a valid point (validated by the multiplication itself when
    libsodium does so, see :data:`MULTIPLICATION_VALIDATES`, else explicitly)."""
    if not MULTIPLICATION_VALIDATES and not is_valid_point(p):
        return None
    return _mul(s, p) if isinstance(p, bytes) and len(p) == 32 else None


def open_card(point: bytes, key_k: bytes, key_o: bytes) -> int | None:
    """The card at a position locked as ``point`` (a step-3 point), given both seats' keys for it;
    None when the keys do not open a card (or an input is not a valid point/scalar)."""
    if not (is_valid_scalar(key_k) and is_valid_scalar(key_o)):
        return None
    p = _mul_checked(_inv(_smul(key_k, key_o)), point)
    return None if p is None else _CARD_OF.get(p)


# -- secrets ------------------------------------------------------------------


def round_secret(match_secret: bytes, round_number: int, attempt: int) -> bytes:
    """BLAKE2b-256(key = match secret, ROUND_LABEL ‖ round (2 bytes BE) ‖ attempt (2 bytes BE))."""
    if not isinstance(match_secret, bytes) or len(match_secret) != 32:
        raise ValueError("a match secret is exactly 32 bytes")
    if not (0 <= round_number < 65536 and 0 <= attempt < 65536):
        raise ValueError("round and attempt must fit in 2 bytes")
    msg = ROUND_LABEL + round_number.to_bytes(2, "big") + attempt.to_bytes(2, "big")
    return _blake2b(msg, key=match_secret, digest_size=32)


def _derive_scalar(secret: bytes, label: bytes) -> bytes:
    ctr = 0
    while True:  # a zero scalar has probability 2^-252: then the counter byte moves on
        s = crypto_core_ed25519_scalar_reduce(_blake2b(label + bytes([ctr]), key=secret, digest_size=64))
        if any(s):
            return s
        ctr += 1


@dataclass(frozen=True, slots=True)
class SeatSecrets:
    """Everything one seat uses in one deal attempt, derived from its round secret by :func:`derive`."""

    round_secret: bytes
    mask: bytes
    """The single mask scalar (used by K; O's is derived the same way and never used)."""
    mask_inverse: bytes
    permutation: tuple[int, ...]
    """``permutation[i]`` = the index in the step's input that lands at position ``i``."""
    keys: tuple[bytes, ...]
    """The 48 per-position keys."""

    def key(self, position: int) -> bytes:
        return self.keys[position]

    def __repr__(self) -> str:  # never print a secret by accident
        return "SeatSecrets(<secret>)"


def derive(secret: bytes) -> SeatSecrets:
    """The seat's mask, permutation and 48 keys for the deal attempt whose round secret is ``secret``.

    mask = reduce(BLAKE2b-512(key=secret, MASK_LABEL ‖ ctr)); key i = reduce(BLAKE2b-512(key=secret,
    KEY_LABEL ‖ i ‖ ctr)) (i and ctr one byte each, ctr = 0 unless the result is zero); permutation =
    :func:`koikoi.engine.deal.shuffle` of BLAKE2b-256(key=secret, PERMUTATION_LABEL).
    """
    if not isinstance(secret, bytes) or len(secret) != 32:
        raise ValueError("a round secret is exactly 32 bytes")
    mask = _derive_scalar(secret, MASK_LABEL)
    keys = tuple(_derive_scalar(secret, KEY_LABEL + bytes([i])) for i in range(48))
    perm = tuple(shuffle(_blake2b(PERMUTATION_LABEL, key=secret, digest_size=32)))
    return SeatSecrets(secret, mask, _inv(mask), perm, keys)


def deck_position(draws: int) -> int:
    """The position of the next card drawn from the deck after ``draws`` draws this round (24 first)."""
    if not 0 <= draws < 24:
        raise ValueError("the deck holds 24 cards")
    return 24 + draws


# -- roles, faults ------------------------------------------------------------


class Role(enum.Enum):
    """O deals (the oya, positions 0–7 are its hand); K is the other seat (positions 8–15)."""

    DEALER = "dealer"
    OTHER = "other"

    def seat(self, dealer: int) -> int:
        return dealer if self is Role.DEALER else 1 - dealer

    @property
    def letter(self) -> str:
        """The spec's name: O for the dealer, K for the other seat."""
        return "O" if self is Role.DEALER else "K"


_O: Final = Role.DEALER
_K: Final = Role.OTHER

RULES: Final = DEAL_RULES
"""The faults of a deal the rules of spec/sealed.md §7 prove (their texts: :data:`~koikoi.protocol.codes.CODES`)."""


@dataclass(frozen=True, slots=True)
class SealedFault:
    """A proven fault of ``role``'s signer (``seat`` when the dealer's seat is known), named by ``rule``
    (one of :data:`RULES`), found in ``step`` at ``index`` (a position, or an item of the step);
    ``attempt``: the round's deal attempt it was found in (set by :func:`verify_round`)."""

    rule: Code
    role: Role
    step: Step
    index: int | None
    detail: str
    seat: int | None = None
    attempt: int | None = None

    @property
    def message(self) -> str:
        at = "" if self.index is None else f" at {self.index}"
        who = self.role.letter if self.seat is None else f"{self.role.letter} (seat {self.seat})"
        return f"{self.rule}: {who}, {self.step}{at}: {self.detail}"

    def with_seat(self, dealer: int) -> SealedFault:
        return replace(self, seat=self.role.seat(dealer))


class SealedFormatError(RemoteError, ValueError):
    """A step body that is not the step's shape (the signer's fault: rule ``bad_shape``)."""

    def __init__(self, step: Step, message: str) -> None:
        self.step = step
        self.message = f"{step}: {message}"
        super().__init__(self.message)


# -- the steps and their bodies ------------------------------------------------


def _blist(obj: object, n: int, step: Step, what: str) -> tuple[bytes, ...]:
    if not isinstance(obj, list | tuple) or len(obj) != n or not all(isinstance(x, bytes) for x in obj):
        raise SealedFormatError(step, f"{what} must be an array of {n} byte strings")
    return tuple(obj)


def _b32list(obj: object, n: int, step: Step, what: str) -> tuple[bytes, ...]:
    """A step's points or scalars: exactly ``n`` items of exactly 32 bytes (a wrong size is ``bad_shape``, as
    at the envelope's door: no item of another size reaches the group operations)."""
    items = _blist(obj, n, step, what)
    if not all(len(x) == 32 for x in items):
        raise SealedFormatError(step, f"{what} must be an array of {n} 32-byte strings")
    return items


def _claim_body(keys: tuple[bytes, ...] | None) -> list[bytes] | None:
    return None if keys is None else list(keys)


def _claim_of(obj: object, step: Step) -> tuple[bytes, ...] | None:
    return None if obj is None else _b32list(obj, 8, step, "a claim")


def _body(body: Sequence[Any], n: int, step: Step) -> Sequence[Any]:
    if not isinstance(body, list | tuple) or len(body) != n:
        raise SealedFormatError(step, f"the body must be an array of {n} fields")
    return body


def _proof_of(chain: object, responses: object, step: Step) -> ShuffleProof:
    return ShuffleProof(
        _b32list(chain, 48, step, "the chain"), _b32list(responses, SHUFFLE_RESPONSES, step, "the responses")
    )


def _rekey_of(obj: object, step: Step) -> RekeyProof:
    return RekeyProof(_b32list(obj, REKEY_RESPONSES, step, "the lock proof"))


@dataclass(frozen=True, slots=True)
class Shuffle:
    """Step 1, K: body ``[points, chain, responses]``: 48 points ``X``; the shuffle argument that they are
    the card points under one scalar, in some order (48 points, 99 scalars)."""

    points: tuple[bytes, ...]
    proof: ShuffleProof

    def body(self) -> list[Any]:
        return [list(self.points), list(self.proof.chain), list(self.proof.responses)]

    def encode(self) -> bytes:
        return encode(self.body())

    @classmethod
    def from_body(cls, body: Sequence[Any]) -> Shuffle:
        pts, chain, resp = _body(body, 3, Step.SHUFFLE)
        return cls(_b32list(pts, 48, Step.SHUFFLE, "points"), _proof_of(chain, resp, Step.SHUFFLE))


@dataclass(frozen=True, slots=True)
class ShuffleLock:
    """Step 2, O: body ``[points, keys, masked, chain, responses, lock_proof]``: 48 points ``Y``; 16 keys,
    O's for positions 8–15 then 16–23; 48 points ``W`` (step 1 under O's mask, in O's order); the shuffle
    argument for ``W`` (48 points, 99 scalars); the proof that each ``Y_i`` is ``W_i`` re-keyed (49 scalars)."""

    points: tuple[bytes, ...]
    keys: tuple[bytes, ...]
    masked: tuple[bytes, ...]
    proof: ShuffleProof
    lock_proof: RekeyProof

    def body(self) -> list[Any]:
        return [
            list(self.points),
            list(self.keys),
            list(self.masked),
            list(self.proof.chain),
            list(self.proof.responses),
            list(self.lock_proof.responses),
        ]

    def encode(self) -> bytes:
        return encode(self.body())

    def key_for(self, position: int) -> bytes:
        return self.keys[SHUFFLE_LOCK_KEY_POSITIONS.index(position)]

    @classmethod
    def from_body(cls, body: Sequence[Any]) -> ShuffleLock:
        pts, keys, masked, chain, resp, rekey = _body(body, 6, Step.SHUFFLE_LOCK)
        return cls(
            _b32list(pts, 48, Step.SHUFFLE_LOCK, "points"),
            _b32list(keys, 16, Step.SHUFFLE_LOCK, "keys"),
            _b32list(masked, 48, Step.SHUFFLE_LOCK, "the masked points"),
            _proof_of(chain, resp, Step.SHUFFLE_LOCK),
            _rekey_of(rekey, Step.SHUFFLE_LOCK),
        )


@dataclass(frozen=True, slots=True)
class Lock:
    """Step 3, K: body ``[points, keys, claim, lock_proof]``: 48 points; 16 keys, K's for 0–7 then 16–23;
    claim ``nil`` (no hand yaku) or K's 8 keys for its hand, 8–15; the proof that each ``Z_i`` is ``Y_i``
    re-keyed (49 scalars)."""

    points: tuple[bytes, ...]
    keys: tuple[bytes, ...]
    claim: tuple[bytes, ...] | None
    lock_proof: RekeyProof

    def body(self) -> list[Any]:
        return [list(self.points), list(self.keys), _claim_body(self.claim), list(self.lock_proof.responses)]

    def encode(self) -> bytes:
        return encode(self.body())

    def key_for(self, position: int) -> bytes:
        return self.keys[LOCK_KEY_POSITIONS.index(position)]

    @classmethod
    def from_body(cls, body: Sequence[Any]) -> Lock:
        pts, keys, claim, rekey = _body(body, 4, Step.LOCK)
        return cls(
            _b32list(pts, 48, Step.LOCK, "points"),
            _b32list(keys, 16, Step.LOCK, "keys"),
            _claim_of(claim, Step.LOCK),
            _rekey_of(rekey, Step.LOCK),
        )


@dataclass(frozen=True, slots=True)
class Claim:
    """Step 4, O: body ``[claim]``: ``nil`` (no hand yaku) or O's 8 keys for its hand, 0–7."""

    keys: tuple[bytes, ...] | None

    def body(self) -> list[Any]:
        return [_claim_body(self.keys)]

    def encode(self) -> bytes:
        return encode(self.body())

    @classmethod
    def from_body(cls, body: Sequence[Any]) -> Claim:
        (claim,) = _body(body, 1, Step.CLAIM)
        return cls(_claim_of(claim, Step.CLAIM))


@dataclass(frozen=True, slots=True)
class Disclose:
    """The round's end: body ``[secrets]``, the round secrets of every deal attempt of the round, in order."""

    secrets: tuple[bytes, ...]

    def body(self) -> list[Any]:
        return [list(self.secrets)]

    def encode(self) -> bytes:
        return encode(self.body())

    @classmethod
    def from_body(cls, body: Sequence[Any]) -> Disclose:
        (secrets,) = _body(body, 1, Step.DISCLOSE)
        if not isinstance(secrets, list | tuple) or not 0 <= len(secrets) <= MAX_ATTEMPTS:
            raise SealedFormatError(Step.DISCLOSE, f"secrets must be an array of 0 to {MAX_ATTEMPTS} byte strings")
        return cls(_blist(secrets, len(secrets), Step.DISCLOSE, "secrets"))


def shuffle_points(k: SeatSecrets) -> tuple[bytes, ...]:
    """Step 1's points: every card point masked with ``a``, in K's permutation."""
    return tuple(_mul_ok(k.mask, CARD_POINTS[k.permutation[j]]) for j in range(48))


def shuffle_step(k: SeatSecrets, ctx: bytes) -> Shuffle:
    """K's step 1, with its shuffle argument (``ctx``: :func:`koikoi.protocol.proofs.context`)."""
    pts = shuffle_points(k)
    return Shuffle(pts, prove_shuffle(ctx, STEP1_TAG, CARD_POINTS, pts, k.mask_inverse, k.permutation, k.round_secret))


def _mul_ok(s: bytes, p: bytes) -> bytes:
    r = _mul(s, p)
    if r is None:  # only from an invalid point, which every caller has validated away
        raise ValueError("sealed: scalar multiplication of an invalid point")
    return r


def shuffle_lock_step(o: SeatSecrets, shuffled: Shuffle, ctx: bytes) -> ShuffleLock:
    """O's step 2 on a step 1 whose argument verified: ``W_i = m·X_{πO[i]}`` with its shuffle argument, then
    ``Y_i = (b_i·m⁻¹)·W_i = b_i·X_{πO[i]}`` with the proof of the re-keying."""
    x = shuffled.points
    w = tuple(_mul_ok(o.mask, x[o.permutation[i]]) for i in range(48))
    rekey = tuple(_smul(o.keys[i], o.mask_inverse) for i in range(48))
    y = tuple(_mul_ok(rekey[i], w[i]) for i in range(48))
    return ShuffleLock(
        y,
        tuple(o.keys[i] for i in SHUFFLE_LOCK_KEY_POSITIONS),
        w,
        prove_shuffle(ctx, STEP2_TAG, x, w, o.mask_inverse, o.permutation, o.round_secret),
        prove_rekey(ctx, STEP2_LOCK_TAG, w, y, rekey, o.round_secret),
    )


def lock_step(k: SeatSecrets, locked: ShuffleLock, claim: bool, ctx: bytes) -> Lock:
    """K's step 3 on a step 2 whose proofs verified; ``claim``: K's hand holds a hand yaku (:func:`must_claim`)."""
    rekey = tuple(_smul(k.keys[i], k.mask_inverse) for i in range(48))
    pts = tuple(_mul_ok(rekey[i], locked.points[i]) for i in range(48))
    return Lock(
        pts,
        tuple(k.keys[i] for i in LOCK_KEY_POSITIONS),
        tuple(k.keys[i] for i in OTHER_HAND) if claim else None,
        prove_rekey(ctx, STEP3_TAG, locked.points, pts, rekey, k.round_secret),
    )


def claim_step(o: SeatSecrets, claim: bool) -> Claim:
    """O's step 4: its hand-yaku claim."""
    return Claim(tuple(o.keys[i] for i in DEALER_HAND) if claim else None)


def must_claim(hand: Iterable[int], table: Iterable[int]) -> bool:
    """Whether a seat with this dealt hand must claim: the deal stands (no four of a month on the table)
    and the hand holds Teshi or Kuttsuki."""
    return not four_of_a_month(mask_of(table)) and hand_yaku(mask_of(hand)) is not None


def honest_attempt(k: SeatSecrets, o: SeatSecrets, ctx: bytes = b"") -> Attempt:
    """One whole deal attempt by two honest seats (for tests, vectors, benchmarks and the harness):
    the four steps, each seat claiming exactly when its hand holds a hand yaku and the deal stands."""
    s1 = shuffle_step(k, ctx)
    s2 = shuffle_lock_step(o, s1, ctx)
    order = [k.permutation[o.permutation[i]] for i in range(48)]
    s3 = lock_step(k, s2, must_claim(order[8:16], order[16:24]), ctx)
    redeal = four_of_a_month(mask_of(order[16:24]))
    return Attempt(s1, s2, s3, None if redeal else claim_step(o, must_claim(order[0:8], order[16:24])))


# -- the checks anyone makes at once (spec/sealed.md §5): no secret needed -----------------


def _points_fault(points: Sequence[bytes], role: Role, step: Step) -> SealedFault | None:
    for i, p in enumerate(points):
        if not is_valid_point(p):
            return SealedFault(Code.BAD_POINT, role, step, i, "not a point of the prime-order group")
    return None


def _scalars_fault(keys: Sequence[bytes], positions: Sequence[int], role: Role, step: Step) -> SealedFault | None:
    for pos, s in zip(positions, keys, strict=True):
        if not is_valid_scalar(s):
            return SealedFault(Code.BAD_SCALAR, role, step, pos, "not a canonical non-zero scalar")
    return None


def check_shuffle(ctx: bytes, shuffled: Shuffle) -> SealedFault | None:
    """Step 1's argument: its 48 points are the 48 card points under one scalar, in some order. A failure is
    ``bad_point`` (a point, or a point of the chain, that is not valid) or ``bad_shuffle``, K's."""
    if not MULTIPLICATION_VALIDATES:  # the proofs validate each point by the multiplication that uses it
        f = _points_fault(shuffled.points, _K, Step.SHUFFLE) or _points_fault(shuffled.proof.chain, _K, Step.SHUFFLE)
        if f:
            return f
    if verify_shuffle(ctx, STEP1_TAG, CARD_POINTS, shuffled.points, shuffled.proof):
        return None
    f = _points_fault(shuffled.points, _K, Step.SHUFFLE) or _points_fault(shuffled.proof.chain, _K, Step.SHUFFLE)
    return f or SealedFault(Code.BAD_SHUFFLE, _K, Step.SHUFFLE, None, "the shuffle argument does not verify")


class StepOne:
    """Step 1's points, indexed: where each lies (an O key is checked by the step-1 point it opens)."""

    __slots__ = ("index", "points")

    def __init__(self, shuffled: Shuffle) -> None:
        self.points = shuffled.points
        self.index = {p: j for j, p in enumerate(shuffled.points)}

    def opened_by(self, locked: ShuffleLock, position: int, key: bytes) -> int | None:
        """The step-1 index O's ``key`` opens ``position`` of step 2 to (``key⁻¹·Y_i``), or None. Since step 2
        is proven a re-keyed permutation of step 1, only O's own key for the position opens one."""
        if not is_valid_scalar(key):
            return None
        x = _mul_checked(_inv(key), locked.points[position])
        return None if x is None else self.index.get(x)


def check_shuffle_lock(ctx: bytes, one: StepOne, locked: ShuffleLock) -> SealedFault | None:
    """Step 2's proofs (``W`` a permutation of step 1 under O's mask; each ``Y_i`` is ``W_i`` re-keyed) and
    O's 16 keys (each opens its position to a point of step 1). Failures are O's: ``bad_point``,
    ``bad_shuffle``, then ``wrong_private_key`` (8–15) or ``wrong_public_key`` (16–23)."""
    if not MULTIPLICATION_VALIDATES:  # the proofs validate each point by the multiplication that uses it
        for pts in (locked.masked, locked.points, locked.proof.chain):
            f = _points_fault(pts, _O, Step.SHUFFLE_LOCK)
            if f:
                return f
    ok = verify_shuffle(ctx, STEP2_TAG, one.points, locked.masked, locked.proof) and verify_rekey(
        ctx, STEP2_LOCK_TAG, locked.masked, locked.points, locked.lock_proof
    )
    if not ok:
        f = (
            _points_fault(locked.masked, _O, Step.SHUFFLE_LOCK)
            or _points_fault(locked.points, _O, Step.SHUFFLE_LOCK)
            or _points_fault(locked.proof.chain, _O, Step.SHUFFLE_LOCK)
        )
        return f or SealedFault(Code.BAD_SHUFFLE, _O, Step.SHUFFLE_LOCK, None, "the shuffle argument does not verify")
    for pos, key in zip(SHUFFLE_LOCK_KEY_POSITIONS, locked.keys, strict=True):
        if one.opened_by(locked, pos, key) is None:
            rule = Code.WRONG_PRIVATE_KEY if pos in OTHER_HAND else Code.WRONG_PUBLIC_KEY
            return SealedFault(rule, _O, Step.SHUFFLE_LOCK, pos, "the key opens no point of step 1")
    return None


def check_lock(ctx: bytes, locked: ShuffleLock, lock: Lock) -> SealedFault | None:
    """Step 3's proof (each ``Z_i`` is ``Y_i`` re-keyed): ``bad_point`` or ``bad_lock``, K's. K's published
    keys (the table, a claim) are checked by :func:`open_card` with O's, where the line opens them."""
    if not MULTIPLICATION_VALIDATES:  # the proofs validate each point by the multiplication that uses it
        f = _points_fault(lock.points, _K, Step.LOCK)
        if f:
            return f
    if verify_rekey(ctx, STEP3_TAG, locked.points, lock.points, lock.lock_proof):
        return None
    f = _points_fault(lock.points, _K, Step.LOCK)
    return f or SealedFault(Code.BAD_LOCK, _K, Step.LOCK, None, "the lock proof does not verify")


def check_dealer_key(one: StepOne, locked: ShuffleLock, position: int, key: bytes, step: Step) -> SealedFault | None:
    """A key of O's for ``position`` (published in ``step``): it must open its step-2 point to a point of step
    1, else ``wrong_public_key``, O's. Proven steps leave O's own key the only one that does."""
    if one.opened_by(locked, position, key) is None:
        return SealedFault(Code.WRONG_PUBLIC_KEY, _O, step, position, "the key opens no point of step 1")
    return None


def open_lock_keys(locked: ShuffleLock, lock: Lock) -> dict[int, int] | SealedFault:
    """The cards K's published keys in step 3 open (the table; its hand when it claims), each with O's key
    from step 2 (proven there); a key that opens no card is ``wrong_public_key``, K's."""
    opened = [(p, lock.key_for(p)) for p in TABLE]
    if lock.claim is not None:
        opened += list(zip(OTHER_HAND, lock.claim, strict=True))
    out: dict[int, int] = {}
    for pos, key in opened:
        c = open_card(lock.points[pos], key, locked.key_for(pos))
        if c is None:
            return SealedFault(Code.WRONG_PUBLIC_KEY, _K, Step.LOCK, pos, "the keys open no card")
        out[pos] = c
    return out


def check_lock_keys(locked: ShuffleLock, lock: Lock) -> SealedFault | None:
    """:func:`open_lock_keys`'s fault, if any."""
    res = open_lock_keys(locked, lock)
    return res if isinstance(res, SealedFault) else None


# -- what a seat's secrets learn (after the checks above passed) ----------------------------


def receive_shuffle(o: SeatSecrets, shuffled: Shuffle, ctx: bytes) -> ShuffleLock:
    """O on a step 1 whose argument verified: its step 2."""
    return shuffle_lock_step(o, shuffled, ctx)


def receive_shuffle_lock(
    k: SeatSecrets, one: StepOne, locked: ShuffleLock, ctx: bytes
) -> tuple[dict[int, int], Lock] | SealedFault:
    """K on a step 2 whose proofs and keys verified: its hand and the table (each of O's 16 keys opens a
    step-1 point, whose card K knows), then its lock with the claim its hand calls for (:func:`must_claim`)."""
    seen = open_shuffle_lock(k, one, locked)
    if isinstance(seen, SealedFault):
        return seen
    claim = must_claim([seen[i] for i in OTHER_HAND], [seen[i] for i in TABLE])
    return seen, lock_step(k, locked, claim, ctx)


def open_shuffle_lock(k: SeatSecrets, one: StepOne, locked: ShuffleLock) -> dict[int, int] | SealedFault:
    """K's hand and the table: the cards O's 16 keys open (different cards of step 1)."""
    out: dict[int, int] = {}
    for pos, key in zip(SHUFFLE_LOCK_KEY_POSITIONS, locked.keys, strict=True):
        j = one.opened_by(locked, pos, key)
        if j is None:
            rule = Code.WRONG_PRIVATE_KEY if pos in OTHER_HAND else Code.WRONG_PUBLIC_KEY
            return SealedFault(rule, _O, Step.SHUFFLE_LOCK, pos, "the key opens no point of step 1")
        out[pos] = k.permutation[j]
    return out


def open_lock(o: SeatSecrets, locked: ShuffleLock, lock: Lock) -> dict[int, int] | SealedFault:
    """O on a step 3 whose proof verified: its hand, the table (and K's hand, if K claimed), opened with K's
    keys; a key of K's that opens no card is K's (``wrong_private_key`` for O's hand, else ``wrong_public_key``)."""
    keys_k = dict(zip(LOCK_KEY_POSITIONS, lock.keys, strict=True))
    if lock.claim is not None:
        keys_k.update(zip(OTHER_HAND, lock.claim, strict=True))
    out: dict[int, int] = {}
    for pos, key in sorted(keys_k.items()):
        c = open_card(lock.points[pos], key, o.keys[pos])
        if c is None:
            rule = Code.WRONG_PRIVATE_KEY if pos in DEALER_HAND else Code.WRONG_PUBLIC_KEY
            return SealedFault(rule, _K, Step.LOCK, pos, "the keys do not open a card")
        out[pos] = c
    return out


def open_claim(k: SeatSecrets, lock: Lock, claim: Claim) -> dict[int, int] | SealedFault | None:
    """K on receiving step 4: None for no claim, else O's hand (the claim's keys must open 8 cards)."""
    if claim.keys is None:
        return None
    out: dict[int, int] = {}
    for pos, key in zip(DEALER_HAND, claim.keys, strict=True):
        c = open_card(lock.points[pos], k.keys[pos], key)
        if c is None:
            return SealedFault(Code.WRONG_PUBLIC_KEY, _O, Step.CLAIM, pos, "the keys do not open a card")
        out[pos] = c
    return out


# -- verification after the disclosure -------------------------------------------


@dataclass(frozen=True, slots=True)
class Attempt:
    """The signed steps of one deal attempt (``lock``/``claim`` None when they were not sent: the round
    stopped early, or the attempt was redealt, which sends no claim)."""

    shuffle: Shuffle
    shuffle_lock: ShuffleLock
    lock: Lock | None = None
    claim: Claim | None = None


@dataclass(frozen=True, slots=True)
class PublishedKey:
    """A key published during play: by ``role``, for ``position`` (a played hand card, a drawn card)."""

    role: Role
    position: int
    key: bytes


@dataclass(frozen=True, slots=True)
class VerifiedDeal:
    """Every position's card, whether the table forces a redeal, and the hand yaku that ends the round
    (the dealer's first), if any. ``complete``: every step was sent (a stopped round's is not)."""

    order: tuple[int, ...]
    redeal: bool
    hand_yaku: tuple[Role, Yaku] | None
    complete: bool

    @property
    def deal(self) -> Deal:
        return deal_from_order(self.order)


def _keys_fault(
    sec: SeatSecrets, role: Role, step: Step, positions: Sequence[int], keys: Sequence[bytes], private: range
) -> SealedFault | None:
    for pos, key in zip(positions, keys, strict=True):
        if key != sec.keys[pos]:
            rule = Code.WRONG_PRIVATE_KEY if pos in private else Code.WRONG_PUBLIC_KEY
            return SealedFault(rule, role, step, pos, "not the key the disclosed secret derives")
    return None


def _secrets(secret: object, role: Role) -> SeatSecrets | SealedFault:
    if not isinstance(secret, bytes) or len(secret) != 32:
        return SealedFault(Code.BAD_SCALAR, role, Step.DISCLOSE, None, "a round secret is 32 bytes")
    return derive(secret)


def _mismatch(k: SeatSecrets, o: SeatSecrets, attempt: Attempt, trusted: Role | None) -> SealedFault | None:
    """Whether the disclosed secrets derive what their signers sent: with step 3, every position opened by
    both derived keys to the card both derived permutations put there (48 multiplications); a mismatch is
    then O's when its derived key does not open its step-2 point to the step-1 point its permutation names,
    else K's. Before step 3 (a stop), steps 1 and 2 re-computed."""
    s1, s2, s3 = attempt.shuffle, attempt.shuffle_lock, attempt.lock
    if s3 is not None:
        bad = next(
            (i for i in range(48) if open_card(s3.points[i], k.keys[i], o.keys[i]) != k.permutation[o.permutation[i]]),
            None,
        )
        if bad is None:
            return None
        x = _mul(_inv(o.keys[bad]), s2.points[bad])
        if trusted is not _O and x != s1.points[o.permutation[bad]]:
            return SealedFault(Code.SECRET_MISMATCH, _O, Step.SHUFFLE_LOCK, bad, "not the disclosed secret's keys")
        return SealedFault(Code.SECRET_MISMATCH, _K, Step.LOCK, bad, "not the disclosed secret's keys")
    if trusted is not _K and shuffle_points(k) != s1.points:
        return SealedFault(Code.SECRET_MISMATCH, _K, Step.SHUFFLE, None, "not the disclosed secret's shuffle")
    if trusted is not _O:
        for i in range(48):
            if _mul(o.keys[i], s1.points[o.permutation[i]]) != s2.points[i]:
                return SealedFault(Code.SECRET_MISMATCH, _O, Step.SHUFFLE_LOCK, i, "not the disclosed secret's keys")
    return None


def verify_deal(
    attempt: Attempt,
    k_secret: bytes,
    o_secret: bytes,
    published: Sequence[PublishedKey] = (),
    *,
    dealer: int | None = None,
    trusted: Role | None = None,
) -> VerifiedDeal | SealedFault:
    """The disclosure's checks of an ``attempt`` whose steps passed the checks made at once (their proofs,
    :func:`check_shuffle`, :func:`check_shuffle_lock`, :func:`check_lock`).

    Checks, in this order (the first fault is returned): the disclosed secrets' length (K's, O's); that
    they derive what was sent (``secret_mismatch``); every key sent in steps 2, 3 and 4 against the derived
    keys (``wrong_private_key`` for the other seat's hand, else ``wrong_public_key``); the claims against
    the dealt hands (K's, then O's: ``false_hand_yaku``, ``false_no_hand_yaku``); the published keys, in
    order. ``trusted``: a role whose steps the caller made itself (a live seat; the auditor passes None).
    ``dealer``: the dealer's seat, to fill in :attr:`SealedFault.seat`."""
    fault = _verify(attempt, k_secret, o_secret, published, trusted)
    if isinstance(fault, SealedFault) and dealer is not None:
        return fault.with_seat(dealer)
    return fault


def _verify(
    attempt: Attempt, k_secret: bytes, o_secret: bytes, published: Sequence[PublishedKey], trusted: Role | None
) -> VerifiedDeal | SealedFault:
    k = _secrets(k_secret, _K)
    if isinstance(k, SealedFault):
        return k
    o = _secrets(o_secret, _O)
    if isinstance(o, SealedFault):
        return o
    s2, s3, s4 = attempt.shuffle_lock, attempt.lock, attempt.claim
    f = _mismatch(k, o, attempt, trusted)
    if f:
        return f
    if trusted is not _O:
        f = _keys_fault(o, _O, Step.SHUFFLE_LOCK, SHUFFLE_LOCK_KEY_POSITIONS, s2.keys, OTHER_HAND)
        if f:
            return f
    if s3 is not None and trusted is not _K:
        f = _keys_fault(k, _K, Step.LOCK, LOCK_KEY_POSITIONS, s3.keys, DEALER_HAND)
        if f:
            return f
        if s3.claim is not None:
            f = _keys_fault(k, _K, Step.LOCK, OTHER_HAND, s3.claim, range(0))
            if f:
                return f
    if s4 is not None and s4.keys is not None and trusted is not _O:
        f = _keys_fault(o, _O, Step.CLAIM, DEALER_HAND, s4.keys, range(0))
        if f:
            return f
    order = tuple(k.permutation[o.permutation[i]] for i in range(48))
    deal = deal_from_order(order)
    redeal = four_of_a_month(deal.table)
    winner: tuple[Role, Yaku] | None = None
    for role, claim, hand, step, sent in (
        (_K, None if s3 is None else s3.claim, deal.other_hand, Step.LOCK, s3 is not None),
        (_O, None if s4 is None else s4.keys, deal.dealer_hand, Step.CLAIM, s4 is not None),
    ):
        if not sent:
            continue
        y = None if redeal else hand_yaku(hand)
        if claim is not None and y is None:
            return SealedFault(Code.FALSE_HAND_YAKU, role, step, None, "the hand holds no hand yaku that counts")
        if claim is None and y is not None:
            return SealedFault(Code.FALSE_NO_HAND_YAKU, role, step, None, f"the hand holds {y.value}")
        if y is not None and (winner is None or role is _O):
            winner = (role, y)  # the dealer's hand yaku is checked first and wins
    for n, pk in enumerate(published):
        sec = k if pk.role is _K else o
        if not isinstance(pk.position, int) or not 0 <= pk.position < 48:
            return SealedFault(Code.BAD_SHAPE, pk.role, Step.TURN, n, "a key for no position")
        if not is_valid_scalar(pk.key):
            return SealedFault(Code.BAD_SCALAR, pk.role, Step.TURN, pk.position, "not a canonical non-zero scalar")
        if pk.key != sec.keys[pk.position]:
            return SealedFault(Code.WRONG_PUBLIC_KEY, pk.role, Step.TURN, pk.position, "not the key the secret derives")
    return VerifiedDeal(order, redeal, winner, s3 is not None and (redeal or s4 is not None))


def verify_round(
    attempts: Sequence[Attempt],
    k_secrets: Sequence[bytes],
    o_secrets: Sequence[bytes],
    published: Sequence[PublishedKey] = (),
    *,
    dealer: int | None = None,
    trusted: Role | None = None,
) -> VerifiedDeal | SealedFault:
    """A round's attempts in order (every one but the last a redeal), with one disclosed secret per attempt
    and seat; ``published`` belongs to the last attempt. Returns the last attempt's verified deal."""
    if not attempts:
        raise ValueError("a round has at least one deal attempt")
    for role, secrets in ((_K, k_secrets), (_O, o_secrets)):
        if len(secrets) != len(attempts):
            detail = f"{len(secrets)} secrets for {len(attempts)} deals"
            f = SealedFault(Code.BAD_SHAPE, role, Step.DISCLOSE, None, detail, None, len(attempts) - 1)
            return f.with_seat(dealer) if dealer is not None else f
    result: VerifiedDeal | SealedFault | None = None
    for n, att in enumerate(attempts):
        last = n == len(attempts) - 1
        result = verify_deal(att, k_secrets[n], o_secrets[n], published if last else (), dealer=dealer, trusted=trusted)
        if isinstance(result, SealedFault):
            return replace(result, attempt=n)
        if not last and not result.redeal:
            f = SealedFault(
                Code.BAD_SHAPE, _K, Step.SHUFFLE, None, f"deal {n} stands, yet another deal followed", None, n
            )
            return f.with_seat(dealer) if dealer is not None else f
    assert result is not None
    return result
