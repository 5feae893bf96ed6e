"""Issue 19, attempted attack on the hiding with the proofs in the messages (a regression test).

The new messages give each seat more than the locked points: O's masked points ``W`` and both seats' chains and
responses. A proof leaks a hidden card if the other seat can get either of its shuffle's secrets from it:

- **the mask** (``γ``: O's ``m⁻¹``, K's ``a⁻¹``): then ``γ·W_i`` (K) or ``γ·X_j`` (O) is a step-1 point or a
  card point at every hidden position. Attempt: every scalar of the proofs, alone and divided by its challenge
  (the witness itself, were a nonce zero), as ``γ``.
- **the permutation**, through the weights ``e'_j = e_{π⁻¹(j)}`` the argument commits to: O's ``πO`` shows K the
  deal, K's ``πK`` shows it to O. Attempt: every response, alone and divided by its challenge, compared with each
  challenge ``e_i``; and each chain point compared with ``e_i·ĉ_{j−1}`` (an unblinded chain link).

Nothing is found, either way. Mutation check, done by hand: a prover whose ``s_γ`` is ``γ``, or whose ``s'_j`` is
``e'_j`` (no nonce), or whose chain has no blinding (``r̂_j·G`` left out, prover and verifier alike), fails this
test.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from nacl.bindings import crypto_scalarmult_ed25519_noclamp

from koikoi.protocol import proofs as P
from koikoi.protocol import sealed as S

K_SEC = S.derive(hashlib.sha256(b"koikoi/test/attack19-hiding K").digest())
O_SEC = S.derive(hashlib.sha256(b"koikoi/test/attack19-hiding O").digest())
CTX = P.context(hashlib.sha256(b"koikoi/test/attack19-hiding session").digest(), 1, 0)
ATT = S.honest_attempt(K_SEC, O_SEC, CTX)


def candidates(*responses: Sequence[bytes]) -> set[bytes]:
    """Every proof scalar, alone and divided by its proof's challenge (the first response)."""
    out: set[bytes] = set()
    for resp in responses:
        c_inv = S._inv(resp[0])
        for s in resp:
            out |= {s, S._smul(s, c_inv)}
    return out


def mask_hits(points: Sequence[bytes], keys: set[bytes], targets: set[bytes]) -> int:
    return sum(crypto_scalarmult_ed25519_noclamp(k, p) in targets for p in points for k in keys)


def weight_hits(tag: bytes, u: Sequence[bytes], v: Sequence[bytes], proof: P.ShuffleProof) -> int:
    e = P._vector(P._digest(CTX, tag, u, v), len(u))
    scalars = candidates(proof.responses)
    links = [P.H, *proof.chain[:-1]]
    unblinded = sum(crypto_scalarmult_ed25519_noclamp(x, links[j]) == proof.chain[j] for j in range(48) for x in e)
    return len(scalars & set(e)) + unblinded


def test_k_gets_neither_os_mask_nor_os_permutation_from_step_2() -> None:
    s1, s2 = ATT.shuffle, ATT.shuffle_lock
    hidden = [s2.masked[i] for i in (*S.DEALER_HAND, *S.DECK)]
    keys = candidates(s2.proof.responses, s2.lock_proof.responses)
    assert mask_hits(hidden, keys, set(s1.points) | set(S.CARD_POINTS)) == 0
    assert weight_hits(S.STEP2_TAG, s1.points, s2.masked, s2.proof) == 0


def test_o_gets_neither_ks_mask_nor_ks_permutation_from_steps_1_and_3() -> None:
    assert ATT.lock is not None
    s1 = ATT.shuffle
    hidden = [s1.points[O_SEC.permutation[i]] for i in (*S.OTHER_HAND, *S.DECK)]  # O knows where they went
    keys = candidates(s1.proof.responses, ATT.lock.lock_proof.responses)
    assert mask_hits(hidden, keys, set(S.CARD_POINTS)) == 0
    assert weight_hits(S.STEP1_TAG, S.CARD_POINTS, s1.points, s1.proof) == 0
