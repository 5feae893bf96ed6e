"""Proofs that each step of a sealed deal is honest, checked before anything that depends on it is sent.

Sans-IO and pure. Two non-interactive zero-knowledge arguments (Fiat–Shamir), composed of libsodium's
edwards25519 group operations (PyNaCl's ``nacl.bindings``) and BLAKE2b; ``spec/sealed.md`` §5 states them,
their soundness and zero-knowledge, the byte layouts and the cost:

- :func:`prove_shuffle` / :func:`verify_shuffle`: a **same-exponent shuffle**. Given points ``U`` and
  ``V``, the prover knows a scalar ``β`` and a permutation ``π`` with ``V_i = β·U_{π(i)}``. The argument
  is Terelius–Wikström's permutation-matrix argument with ``V`` itself as the commitment to the matrix
  (the points ``U`` have no known discrete-logarithm relation, so ``V`` binds it): for a challenge vector
  ``e``, ``β⁻¹·Σ e_i V_i = Σ_j e'_j U_j`` with ``e'`` the permuted ``e``, ``β⁻¹·ΣV = ΣU`` (the columns sum
  to one), and ``Π e'_j = Π e_j`` by a chain of Pedersen commitments.
- :func:`prove_rekey` / :func:`verify_rekey`: for each position ``i``, knowledge of ``x_i`` with
  ``T_i = x_i·B_i`` (Schnorr's proof, one challenge for all positions): a re-keyed point is its base
  under a key its signer knows, so it locks the same card.

Every challenge binds a context (the session id, the round, the attempt) and a tag naming the step, and
everything the statement holds. Nonces are derived from the prover's round secret and the statement
(never drawn at random), so a seat that resumes after a crash makes the same bytes again, and two
statements never share a nonce.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from nacl.bindings import (
    crypto_core_ed25519_add,
    crypto_core_ed25519_from_uniform,
    crypto_core_ed25519_scalar_add,
    crypto_core_ed25519_scalar_mul,
    crypto_core_ed25519_scalar_reduce,
    crypto_core_ed25519_sub,
    crypto_hash_sha512,
    crypto_scalarmult_ed25519_base_noclamp,
    crypto_scalarmult_ed25519_noclamp,
)
from nacl.exceptions import RuntimeError as NaclRuntimeError
from nacl.exceptions import TypeError as NaclTypeError

__all__ = [
    "CHALLENGE_LABEL",
    "GENERATOR_LABEL",
    "NONCE_LABEL",
    "ProofCounter",
    "RekeyProof",
    "ShuffleProof",
    "context",
    "prove_rekey",
    "prove_shuffle",
    "verify_rekey",
    "verify_shuffle",
]

GENERATOR_LABEL: Final = b"koikoi/sealed/proof-generator/v1\x00"
CHALLENGE_LABEL: Final = b"koikoi/sealed/challenge/v1\x00"
NONCE_LABEL: Final = b"koikoi/sealed/nonce/v1\x00"
CONTEXT_LABEL: Final = b"koikoi/sealed/context/v1\x00"

_L: Final = 2**252 + 27742317777372353535851937790883648493

_REFUSED: Final = (NaclRuntimeError, NaclTypeError)
"""What libsodium raises for an input it refuses: an invalid point or an identity result (RuntimeError), an input
that is not 32 bytes (TypeError). A received point of the wrong size is as invalid as one off the curve."""

H: Final = crypto_core_ed25519_from_uniform(crypto_hash_sha512(GENERATOR_LABEL)[:32])
"""The chain's second generator (``G`` is edwards25519's base point): from a hash, so nobody knows
``log_G H``."""


class ProofCounter:
    """Counts the group's scalar multiplications (variable base and fixed base), for the benchmarks."""

    variable = 0
    fixed = 0

    @classmethod
    def reset(cls) -> None:
        cls.variable = 0
        cls.fixed = 0


def context(sid: bytes, round_number: int, attempt: int) -> bytes:
    """What every challenge of one deal attempt binds: the session id, the round (from 1), the attempt."""
    return (
        CONTEXT_LABEL + len(sid).to_bytes(1, "big") + sid + round_number.to_bytes(2, "big") + attempt.to_bytes(2, "big")
    )


# -- the group and the scalars, libsodium's ----------------------------------


def _reduce(h: bytes) -> bytes:
    return crypto_core_ed25519_scalar_reduce(h)


def _sadd(x: bytes, y: bytes) -> bytes:
    return crypto_core_ed25519_scalar_add(x, y)


def _smul(x: bytes, y: bytes) -> bytes:
    return crypto_core_ed25519_scalar_mul(x, y)


def _mul(s: bytes, p: bytes) -> bytes | None:
    """``s·p``, or None when ``p`` is not a valid point of the prime-order group (or the product is the
    identity): libsodium refuses both."""
    ProofCounter.variable += 1
    try:
        return crypto_scalarmult_ed25519_noclamp(s, p)
    except _REFUSED:
        return None


def _base(s: bytes) -> bytes | None:
    ProofCounter.fixed += 1
    try:
        return crypto_scalarmult_ed25519_base_noclamp(s)
    except _REFUSED:
        return None


def _add(p: bytes, q: bytes) -> bytes | None:
    try:
        return crypto_core_ed25519_add(p, q)
    except _REFUSED:
        return None


def _sub(p: bytes, q: bytes) -> bytes | None:
    try:
        return crypto_core_ed25519_sub(p, q)
    except _REFUSED:
        return None


def _sum(points: Sequence[bytes | None]) -> bytes | None:
    if not points or any(p is None for p in points):
        return None
    acc = points[0]
    for p in points[1:]:
        assert acc is not None and p is not None
        acc = _add(acc, p)
        if acc is None:
            return None
    return acc


def _combination(scalars: Sequence[bytes], points: Sequence[bytes]) -> bytes | None:
    """``Σ s_i·P_i``, or None when a point is invalid."""
    return _sum([_mul(s, p) for s, p in zip(scalars, points, strict=True)])


def _canonical(s: bytes) -> bool:
    return len(s) == 32 and 0 < int.from_bytes(s, "little") < _L


# -- Fiat–Shamir -----------------------------------------------------------------


def _digest(ctx: bytes, tag: bytes, *lists: Sequence[bytes]) -> bytes:
    h = hashlib.blake2b(digest_size=32)
    h.update(CHALLENGE_LABEL)
    h.update(len(ctx).to_bytes(2, "big") + ctx)
    h.update(len(tag).to_bytes(1, "big") + tag)
    for items in lists:
        h.update(len(items).to_bytes(2, "big"))
        for x in items:
            h.update(x)
    return h.digest()


def _challenge(digest: bytes, *lists: Sequence[bytes]) -> bytes:
    h = hashlib.blake2b(digest_size=64)
    h.update(CHALLENGE_LABEL + b"c" + digest)
    for items in lists:
        h.update(len(items).to_bytes(2, "big"))
        for x in items:
            h.update(x)
    return _reduce(h.digest())


def _vector(digest: bytes, n: int) -> list[bytes]:
    return [
        _reduce(hashlib.blake2b(CHALLENGE_LABEL + b"e" + digest + i.to_bytes(2, "big"), digest_size=64).digest())
        for i in range(n)
    ]


def _nonce(secret: bytes, digest: bytes, what: bytes, i: int) -> bytes:
    h = hashlib.blake2b(NONCE_LABEL + digest + what + i.to_bytes(2, "big"), key=secret, digest_size=64)
    return _reduce(h.digest())


# -- the same-exponent shuffle ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShuffleProof:
    """The argument that ``V`` is a permutation of ``U`` under one secret scalar: the chain ``ĉ_1 … ĉ_n``
    (points) and the responses ``[c, s_γ, s_R, s'_1 … s'_n, ŝ_1 … ŝ_n]`` (scalars)."""

    chain: tuple[bytes, ...]
    responses: tuple[bytes, ...]

    @property
    def size(self) -> int:
        return 32 * (len(self.chain) + len(self.responses))


def _shuffle_statement(ctx: bytes, tag: bytes, u: Sequence[bytes], v: Sequence[bytes]) -> tuple[bytes, list[bytes]]:
    digest = _digest(ctx, tag, u, v)
    return digest, _vector(digest, len(u))


def prove_shuffle(
    ctx: bytes, tag: bytes, u: Sequence[bytes], v: Sequence[bytes], gamma: bytes, perm: Sequence[int], secret: bytes
) -> ShuffleProof:
    """The argument for ``v[i] = γ⁻¹·u[perm[i]]`` (``gamma`` is the inverse of the shuffle's scalar);
    ``secret`` keys the nonces."""
    n = len(u)
    digest, e = _shuffle_statement(ctx, tag, u, v)
    where = [0] * n
    for i, j in enumerate(perm):
        where[j] = i
    ep = [e[where[j]] for j in range(n)]  # e'_j: the challenge of the output that input j went to
    chain: list[bytes] = []
    r_acc = bytes(32)
    prev = H
    rs = [_nonce(secret, digest, b"r", j) for j in range(n)]
    for j in range(n):
        c = _sum([_base(rs[j]), _mul(ep[j], prev)])
        assert c is not None
        chain.append(c)
        r_acc = _sadd(rs[j], _smul(ep[j], r_acc))
        prev = c
    w_g, w_r = _nonce(secret, digest, b"g", 0), _nonce(secret, digest, b"R", 0)
    w_e = [_nonce(secret, digest, b"e", j) for j in range(n)]
    w_c = [_nonce(secret, digest, b"c", j) for j in range(n)]
    q = _combination(e, v)
    sum_v = _sum(list(v))
    assert q is not None and sum_v is not None
    t_a = _mul(w_g, sum_v)
    t_b = _sub_checked(_mul(w_g, q), _combination(w_e, u))
    links = [H, *chain[:-1]]
    t_c = [_sum([_base(w_c[j]), _mul(w_e[j], links[j])]) for j in range(n)]
    t_d = _base(w_r)
    firsts = [t_a, t_b, *t_c, t_d]
    assert all(x is not None for x in firsts)
    ch = _challenge(digest, chain, [x for x in firsts if x is not None])
    resp = [
        ch,
        _sadd(w_g, _smul(ch, gamma)),
        _sadd(w_r, _smul(ch, r_acc)),
        *(_sadd(w_e[j], _smul(ch, ep[j])) for j in range(n)),
        *(_sadd(w_c[j], _smul(ch, rs[j])) for j in range(n)),
    ]
    return ShuffleProof(tuple(chain), tuple(resp))


def _sub_checked(p: bytes | None, q: bytes | None) -> bytes | None:
    return None if p is None or q is None else _sub(p, q)


def verify_shuffle(ctx: bytes, tag: bytes, u: Sequence[bytes], v: Sequence[bytes], proof: ShuffleProof) -> bool:
    """Whether ``proof`` shows ``v`` is a permutation of ``u`` under one scalar its prover knows. False also
    when a point of ``v`` or of the chain is not a valid point of the group (each is multiplied here)."""
    n = len(u)
    if len(v) != n or len(proof.chain) != n or len(proof.responses) != 2 * n + 3:
        return False
    if not all(_canonical(s) for s in proof.responses):
        return False
    ch, s_g, s_r = proof.responses[:3]
    s_e, s_c = proof.responses[3 : 3 + n], proof.responses[3 + n :]
    digest, e = _shuffle_statement(ctx, tag, u, v)
    q = _combination(e, v)
    sum_v, sum_u = _sum(list(v)), _sum(list(u))
    if q is None or sum_v is None or sum_u is None:
        return False
    t_a = _sub_checked(_mul(s_g, sum_v), _mul(ch, sum_u))
    t_b = _sub_checked(_mul(s_g, q), _combination(s_e, u))
    links = [H, *proof.chain[:-1]]
    t_c = [_sub_checked(_sum([_base(s_c[j]), _mul(s_e[j], links[j])]), _mul(ch, proof.chain[j])) for j in range(n)]
    big_e = (1).to_bytes(32, "little")
    for x in e:
        big_e = _smul(big_e, x)
    rest = _sub_checked(proof.chain[-1], _mul(big_e, H))
    t_d = None if rest is None else _sub_checked(_base(s_r), _mul(ch, rest))
    firsts = [t_a, t_b, *t_c, t_d]
    if any(x is None for x in firsts):
        return False
    return _challenge(digest, proof.chain, [x for x in firsts if x is not None]) == ch


# -- re-keying: a Schnorr proof per position, one challenge ---------------------------


@dataclass(frozen=True, slots=True)
class RekeyProof:
    """The proof that each ``T_i = x_i·B_i`` with ``x_i`` known to its prover: ``[c, s_1 … s_n]``."""

    responses: tuple[bytes, ...]

    @property
    def size(self) -> int:
        return 32 * len(self.responses)


def prove_rekey(
    ctx: bytes, tag: bytes, bases: Sequence[bytes], targets: Sequence[bytes], keys: Sequence[bytes], secret: bytes
) -> RekeyProof:
    """The proof for ``targets[i] = keys[i]·bases[i]``; ``secret`` keys the nonces."""
    digest = _digest(ctx, tag, bases, targets)
    w = [_nonce(secret, digest, b"w", i) for i in range(len(bases))]
    firsts = [_mul(wi, b) for wi, b in zip(w, bases, strict=True)]
    assert all(x is not None for x in firsts)
    ch = _challenge(digest, [x for x in firsts if x is not None])
    return RekeyProof((ch, *(_sadd(wi, _smul(ch, k)) for wi, k in zip(w, keys, strict=True))))


def verify_rekey(ctx: bytes, tag: bytes, bases: Sequence[bytes], targets: Sequence[bytes], proof: RekeyProof) -> bool:
    """Whether ``proof`` shows each target is its base under a key its prover knows (False also when a
    base or a target is not a valid point of the group)."""
    n = len(bases)
    if len(targets) != n or len(proof.responses) != n + 1 or not all(_canonical(s) for s in proof.responses):
        return False
    ch, s = proof.responses[0], proof.responses[1:]
    digest = _digest(ctx, tag, bases, targets)
    firsts = [_sub_checked(_mul(s[i], bases[i]), _mul(ch, targets[i])) for i in range(n)]
    if any(x is None for x in firsts):
        return False
    return _challenge(digest, [x for x in firsts if x is not None]) == ch
