"""Issue 19, attempted attacks on the shuffle argument (regression tests: each is refused, and each must fail if
the relation it targets is dropped from ``proofs.verify_shuffle``).

A cheating prover does better than running the honest algorithm on cheating points: it knows the matrix ``M`` it
used (``V_i = β·Σ_j M_ij·U_j``) and answers with the weights ``e' = Mᵀe`` that make relation (B) hold exactly,
with a chain of Pedersen commitments to those very weights. Each forgery below then satisfies every relation of
spec/sealed.md §4.3 but one:

- **Sums peek, column sums kept at one** (O's step 2): at its hand positions 0–3, O masks ``X_{πO[i]} +
  X_{πO[8+i]}`` (its card plus one of K's hand), and pays each extra ``X`` back at a deck position (``X_{πO[40+i]}
  − X_{πO[8+i]}``), so (A) ``γ·ΣV = ΣU`` holds and (B) holds; only (C), the product of the weights, fails. Gain
  if accepted: K's honest keys for O's hand give ``P_c + P_{c'}`` at four positions, which name four cards of K's
  hand (shown below).
- **Duplicate peek, column sums kept at one** (O's step 2): at its hand position 1, O masks the step-1 point of
  deck position 30, and balances the columns at position 45 (``X_{πO[45]} + X_{πO[1]} − X_{πO[30]}``): (A), (B)
  hold, (C) fails. Gain if accepted: K's key for O's hand names the card K will draw at position 30.
- **Many masks, product one** (K's step 1): ``X_j = λ_j·a·P_{πK[j]}`` with ``Π λ_j = 1``: (B) and (C) hold,
  only (A) fails.
- **Sums with a permuted challenge** (O's step 2): the sums peek answered with ``e'`` a permutation of ``e`` (so
  (A) and (C) hold, as for an honest shuffle): only (B) fails.

Each test asserts which relations its forgery meets (the verifier's equations recomputed here against the
prover's first messages: so each forgery is refused by exactly the one relation named) and that the check made
at once (what the receiver's judge runs before it answers) refuses it as its signer's ``bad_shuffle``. Mutation
check, done by hand: ``check_shuffle_lock`` without ``verify_shuffle`` (the lock proof and O's keys still
checked) lets the three step-2 forgeries through, and ``check_shuffle`` without its argument the many-masks one:
those four tests then fail. (A relation cannot be dropped from the verifier alone: the honest argument would
fail with it.)
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from nacl.bindings import (
    crypto_core_ed25519_add,
    crypto_core_ed25519_sub,
    crypto_scalarmult_ed25519_base_noclamp,
    crypto_scalarmult_ed25519_noclamp,
)

from koikoi.protocol import proofs as P
from koikoi.protocol import sealed as S
from koikoi.protocol.sealed import Role

L = S.GROUP_ORDER
Row = dict[int, int]  # the step-1 (or card) indices a point sums, with small integer coefficients


def _secret(label: str) -> bytes:
    return hashlib.sha256(b"koikoi/test/attack19-matrix\x00" + label.encode()).digest()


def sc(x: int) -> bytes:
    return (x % L).to_bytes(32, "little")


def iv(s: bytes) -> int:
    return int.from_bytes(s, "little")


def mul(s: int, p: bytes) -> bytes:
    return crypto_scalarmult_ed25519_noclamp(sc(s), p)


def combine(coeffs: Sequence[int], points: Sequence[bytes]) -> bytes:
    """``Σ c_i·P_i`` for non-zero integer coefficients."""
    acc: bytes | None = None
    for c, p in zip(coeffs, points, strict=True):
        if c % L == 0:
            continue
        t = mul(c, p)
        acc = t if acc is None else crypto_core_ed25519_add(acc, t)
    assert acc is not None
    return acc


def point_of(row: Row, u: Sequence[bytes], scale: int) -> bytes:
    return mul(scale, combine(list(row.values()), [u[j] for j in row]))


@dataclass(frozen=True)
class Forged:
    proof: P.ShuffleProof
    firsts: list[bytes]  # T_A, T_B, T_1 … T_n, T_D as the prover made them


def forge(
    ctx: bytes, tag: bytes, u: Sequence[bytes], v: Sequence[bytes], gamma: int, ep: list[int], key: bytes
) -> Forged:
    """The argument of spec/sealed.md §4.3 made with weights ``ep`` (``e'``) of the prover's choice: honest in every
    other respect (the chain commits to ``ep``, the responses answer the challenge)."""
    n = len(u)
    digest = P._digest(ctx, tag, u, v)
    e = [iv(x) for x in P._vector(digest, n)]

    def nonce(w: bytes, j: int) -> int:
        return iv(P._nonce(key, digest, w, j))

    rs = [nonce(b"r", j) for j in range(n)]
    chain, prev, r_acc = [], P.H, 0
    for j in range(n):
        prev = crypto_core_ed25519_add(crypto_scalarmult_ed25519_base_noclamp(sc(rs[j])), mul(ep[j], prev))
        chain.append(prev)
        r_acc = (rs[j] + ep[j] * r_acc) % L
    w_g, w_r = nonce(b"g", 0), nonce(b"R", 0)
    w_e = [nonce(b"e", j) for j in range(n)]
    w_c = [nonce(b"c", j) for j in range(n)]
    q = combine(e, v)
    t_a = mul(w_g, combine([1] * n, v))
    t_b = crypto_core_ed25519_sub(mul(w_g, q), combine(w_e, u))
    links = [P.H, *chain[:-1]]
    t_c = [
        crypto_core_ed25519_add(crypto_scalarmult_ed25519_base_noclamp(sc(w_c[j])), mul(w_e[j], links[j]))
        for j in range(n)
    ]
    t_d = crypto_scalarmult_ed25519_base_noclamp(sc(w_r))
    firsts = [t_a, t_b, *t_c, t_d]
    c = iv(P._challenge(digest, chain, firsts))
    resp = [sc(c), sc(w_g + c * gamma), sc(w_r + c * r_acc)]
    resp += [sc(w_e[j] + c * ep[j]) for j in range(n)] + [sc(w_c[j] + c * rs[j]) for j in range(n)]
    return Forged(P.ShuffleProof(tuple(chain), tuple(resp)), firsts)


def relations(ctx: bytes, tag: bytes, u: Sequence[bytes], v: Sequence[bytes], f: Forged) -> dict[str, bool]:
    """Which of (A), (B), (C) the forgery meets: the verifier's re-computed first messages against the prover's."""
    n = len(u)
    s = [iv(x) for x in f.proof.responses]
    c, s_g, s_r, s_e, s_c = s[0], s[1], s[2], s[3 : 3 + n], s[3 + n :]
    e = [iv(x) for x in P._vector(P._digest(ctx, tag, u, v), n)]
    neg = L - c
    t_a = crypto_core_ed25519_add(mul(s_g, combine([1] * n, v)), mul(neg, combine([1] * n, u)))
    t_b = crypto_core_ed25519_sub(mul(s_g, combine(e, v)), combine(s_e, u))
    chain = f.proof.chain
    links = [P.H, *chain[:-1]]
    t_c = [
        crypto_core_ed25519_add(
            crypto_core_ed25519_add(crypto_scalarmult_ed25519_base_noclamp(sc(s_c[j])), mul(s_e[j], links[j])),
            mul(neg, chain[j]),
        )
        for j in range(n)
    ]
    big_e = 1
    for x in e:
        big_e = big_e * x % L
    rest = crypto_core_ed25519_sub(chain[-1], mul(big_e, P.H))
    t_d = crypto_core_ed25519_add(crypto_scalarmult_ed25519_base_noclamp(sc(s_r)), mul(neg, rest))
    return {
        "A": t_a == f.firsts[0],
        "B": t_b == f.firsts[1],
        "chain": t_c == f.firsts[2:-1],
        "C": t_d == f.firsts[-1],
    }


def weights(ctx: bytes, tag: bytes, u: Sequence[bytes], v: Sequence[bytes], rows: Sequence[Row]) -> list[int]:
    """``e' = Mᵀe``: the weights that make (B) hold for the matrix ``rows``."""
    e = [iv(x) for x in P._vector(P._digest(ctx, tag, u, v), len(u))]
    ep = [0] * len(u)
    for i, row in enumerate(rows):
        for j, coeff in row.items():
            ep[j] = (ep[j] + coeff * e[i]) % L
    return ep


K_SEC = S.derive(_secret("K"))
O_SEC = S.derive(_secret("O"))
CTX = P.context(hashlib.sha256(b"koikoi/test/attack19-matrix session").digest(), 1, 0)
HONEST = S.honest_attempt(K_SEC, O_SEC, CTX)
X = HONEST.shuffle.points
ONE = S.StepOne(HONEST.shuffle)
PI_O = O_SEC.permutation


def honest_rows() -> list[Row]:
    return [{PI_O[i]: 1} for i in range(48)]


def sums_rows() -> list[Row]:
    rows = honest_rows()
    for i in range(4):
        rows[i] = {PI_O[i]: 1, PI_O[8 + i]: 1}  # O's card plus one of K's hand
        rows[40 + i] = {PI_O[40 + i]: 1, PI_O[8 + i]: -1}  # paid back at the deck: every column sums to one
    return rows


def duplicate_rows() -> list[Row]:
    rows = honest_rows()
    rows[1] = {PI_O[30]: 1}  # deck position 30's point at O's hand
    rows[45] = {PI_O[45]: 1, PI_O[1]: 1, PI_O[30]: -1}
    return rows


def o_forgery(rows: list[Row], ep: list[int] | None = None) -> tuple[S.ShuffleLock, Forged]:
    """O's step 2 with ``W_i = m·Σ_j M_ij X_j``, its forged argument, and the honest lock proof for ``Y_i =
    (b_i·m⁻¹)·W_i`` (O knows those scalars whatever ``W`` is), with O's honest keys for positions 8–23."""
    m = iv(O_SEC.mask)
    w = tuple(point_of(row, X, m) for row in rows)
    rekey = [S._smul(O_SEC.keys[i], O_SEC.mask_inverse) for i in range(48)]
    y = tuple(crypto_scalarmult_ed25519_noclamp(rekey[i], w[i]) for i in range(48))
    ep = weights(CTX, S.STEP2_TAG, X, w, rows) if ep is None else ep
    f = forge(CTX, S.STEP2_TAG, X, w, iv(O_SEC.mask_inverse), ep, O_SEC.round_secret)
    lock_proof = P.prove_rekey(CTX, S.STEP2_LOCK_TAG, w, y, rekey, O_SEC.round_secret)
    return S.ShuffleLock(y, HONEST.shuffle_lock.keys, w, f.proof, lock_proof), f


def k_opens_for_o(s2: S.ShuffleLock, position: int) -> bytes:
    """What O gets at one of its hand positions from K's honest LOCK and keys: ``(a_i·b_i)⁻¹·Z_i``."""
    lock = S.lock_step(K_SEC, s2, False, CTX)
    key = S._smul(K_SEC.keys[position], O_SEC.keys[position])
    return crypto_scalarmult_ed25519_noclamp(S._inv(key), lock.points[position])


def test_the_honest_forger_is_the_honest_argument() -> None:
    """The forger with an honest matrix makes exactly the honest step's argument (so what it changes is the cheat)."""
    s2, f = o_forgery(honest_rows())
    assert s2.proof == HONEST.shuffle_lock.proof
    assert relations(CTX, S.STEP2_TAG, X, s2.masked, f) == {"A": True, "B": True, "chain": True, "C": True}


def test_the_sums_peek_with_balanced_columns_fails_only_the_product_and_is_refused() -> None:
    s2, f = o_forgery(sums_rows())
    assert relations(CTX, S.STEP2_TAG, X, s2.masked, f) == {"A": True, "B": True, "chain": True, "C": False}
    # what it would gain: K's honest keys for O's hand name a card of K's hand at each of positions 0-3
    order = [K_SEC.permutation[PI_O[i]] for i in range(48)]
    for i in range(4):
        want = crypto_core_ed25519_add(S.CARD_POINTS[order[i]], S.CARD_POINTS[order[8 + i]])
        assert k_opens_for_o(s2, i) == want
    fault = S.check_shuffle_lock(CTX, ONE, s2)
    assert fault is not None and (fault.rule, fault.role) == ("bad_shuffle", Role.DEALER), fault


def test_the_duplicate_peek_with_balanced_columns_fails_only_the_product_and_is_refused() -> None:
    s2, f = o_forgery(duplicate_rows())
    assert relations(CTX, S.STEP2_TAG, X, s2.masked, f) == {"A": True, "B": True, "chain": True, "C": False}
    drawn_at_30 = K_SEC.permutation[PI_O[30]]
    assert S.card_of_point(k_opens_for_o(s2, 1)) == drawn_at_30  # the deck card O would see
    fault = S.check_shuffle_lock(CTX, ONE, s2)
    assert fault is not None and (fault.rule, fault.role) == ("bad_shuffle", Role.DEALER), fault


def test_the_sums_peek_with_a_permuted_challenge_fails_only_b_and_is_refused() -> None:
    rows = sums_rows()
    w = tuple(point_of(row, X, iv(O_SEC.mask)) for row in rows)
    # the weights of an honest shuffle of these outputs: e permuted, the product right
    e = [iv(x) for x in P._vector(P._digest(CTX, S.STEP2_TAG, X, w), 48)]
    ep = [0] * 48
    for i in range(48):
        ep[PI_O[i]] = e[i]
    s2, f = o_forgery(rows, ep)
    assert relations(CTX, S.STEP2_TAG, X, s2.masked, f) == {"A": True, "B": False, "chain": True, "C": True}
    fault = S.check_shuffle_lock(CTX, ONE, s2)
    assert fault is not None and (fault.rule, fault.role) == ("bad_shuffle", Role.DEALER), fault


def test_many_masks_whose_product_is_one_fail_only_a_and_are_refused() -> None:
    lam = [2, 3] + [1] * 46
    lam[2] = pow(6, -1, L)  # Π λ_j = 1
    perm = K_SEC.permutation
    a = iv(K_SEC.mask)
    x = tuple(mul(a * lam[j], S.CARD_POINTS[perm[j]]) for j in range(48))
    # V_j = λ_j·a·U_{π(j)}: M has λ_j where the honest one has 1, and e'_{π(j)} = λ_j·e_j
    e = [iv(v) for v in P._vector(P._digest(CTX, S.STEP1_TAG, S.CARD_POINTS, x), 48)]
    ep = [0] * 48
    for j in range(48):
        ep[perm[j]] = lam[j] * e[j] % L
    f = forge(CTX, S.STEP1_TAG, S.CARD_POINTS, x, iv(K_SEC.mask_inverse), ep, K_SEC.round_secret)
    assert relations(CTX, S.STEP1_TAG, S.CARD_POINTS, x, f) == {"A": False, "B": True, "chain": True, "C": True}
    fault = S.check_shuffle(CTX, S.Shuffle(x, f.proof))
    assert fault is not None and (fault.rule, fault.role) == ("bad_shuffle", Role.OTHER), fault
