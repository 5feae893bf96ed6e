"""Issue 19, attempted attacks on what the proofs' challenges bind, and on points only the proofs look at
(regression tests: each attempt is refused, and fails if the binding it exercises is removed).

- **Replay across the context** (spec/sealed.md §4.3: session, round, attempt): an honest step 2 or step 3 made
  for another round, another attempt or another session, offered in this one — refused (``bad_shuffle``,
  ``bad_lock``). A cheating seat would gain a step it did not have to make for this deal (a step whose secret
  it could disclose from another deal).
- **Replay across the step** (the tag): an argument or lock proof made under another step's tag for the same
  points — refused. O's step-2 lock proof and K's step-3 lock proof are the same construction over different
  points; the tag keeps one from ever standing for the other.
- **Ambiguous encodings**: moving an item between the hashed lists, or a byte between the session id and the
  round, changes the digest (every list and the session id are length-prefixed).
- **Chain points outside the group** (the identity, small order, mixed order), which only the argument ever
  multiplies: ``bad_point`` at their index, the signer's, for step 1 and step 2 alike, including the last one
  (``ĉ_n``, which the verifier also subtracts ``E·H`` from: libsodium's subtraction accepts points the
  multiplication refuses, so only the multiplication's refusal catches it).

Mutation check, done by hand: ``_digest`` without the context makes the three context replays pass (the tests
fail); without the tag, the two tag replays pass.
"""

from __future__ import annotations

import dataclasses
import hashlib

import pytest
from nacl.bindings import crypto_core_ed25519_add

from koikoi.protocol import proofs as P
from koikoi.protocol import sealed as S
from koikoi.protocol.codes import Code
from koikoi.protocol.sealed import Role
from koikoi.protocol.steps import Step

SID = hashlib.sha256(b"koikoi/test/attack19-fs session").digest()
CTX = P.context(SID, 3, 1)
K_SEC = S.derive(hashlib.sha256(b"koikoi/test/attack19-fs K").digest())
O_SEC = S.derive(hashlib.sha256(b"koikoi/test/attack19-fs O").digest())
HONEST = S.honest_attempt(K_SEC, O_SEC, CTX)
ONE = S.StepOne(HONEST.shuffle)

OTHER_CONTEXTS = {
    "another round": P.context(SID, 4, 1),
    "another attempt": P.context(SID, 3, 0),
    "another session": P.context(bytes(32), 3, 1),
}


@pytest.mark.parametrize("where", list(OTHER_CONTEXTS))
def test_an_honest_step_of_another_deal_is_refused(where: str) -> None:
    other = OTHER_CONTEXTS[where]
    s2 = S.shuffle_lock_step(O_SEC, HONEST.shuffle, other)  # the same points, the proofs bound elsewhere
    assert s2.points == HONEST.shuffle_lock.points and s2.masked == HONEST.shuffle_lock.masked
    f2 = S.check_shuffle_lock(CTX, ONE, s2)
    assert f2 is not None and (f2.rule, f2.role) == ("bad_shuffle", Role.DEALER), f2
    s3 = S.lock_step(K_SEC, HONEST.shuffle_lock, False, other)
    f3 = S.check_lock(CTX, HONEST.shuffle_lock, s3)
    assert f3 is not None and (f3.rule, f3.role) == ("bad_lock", Role.OTHER), f3


def test_a_proof_under_another_steps_tag_is_refused() -> None:
    s2, s3 = HONEST.shuffle_lock, HONEST.lock
    assert s3 is not None
    x = HONEST.shuffle.points
    rekey_o = [S._smul(O_SEC.keys[i], O_SEC.mask_inverse) for i in range(48)]
    rekey_k = [S._smul(K_SEC.keys[i], K_SEC.mask_inverse) for i in range(48)]
    # O's argument for W made under step 1's tag; O's lock proof under step 3's tag; K's lock under step 2's
    mask_as_step1 = P.prove_shuffle(
        CTX, S.STEP1_TAG, x, s2.masked, O_SEC.mask_inverse, O_SEC.permutation, O_SEC.round_secret
    )
    lock2_as_3 = P.prove_rekey(CTX, S.STEP3_TAG, s2.masked, s2.points, rekey_o, O_SEC.round_secret)
    lock3_as_2 = P.prove_rekey(CTX, S.STEP2_LOCK_TAG, s2.points, s3.points, rekey_k, K_SEC.round_secret)
    for name, f in (
        ("mask", S.check_shuffle_lock(CTX, ONE, dataclasses.replace(s2, proof=mask_as_step1))),
        ("lock2", S.check_shuffle_lock(CTX, ONE, dataclasses.replace(s2, lock_proof=lock2_as_3))),
        ("lock3", S.check_lock(CTX, s2, dataclasses.replace(s3, lock_proof=lock3_as_2))),
    ):
        assert f is not None and f.rule in ("bad_shuffle", "bad_lock"), name


def test_the_hashed_encoding_is_unambiguous() -> None:
    a, b, c = (S.CARD_POINTS[i] for i in range(3))
    assert P._digest(CTX, b"t", [a, b], [c]) != P._digest(CTX, b"t", [a], [b, c])
    assert P._digest(CTX, b"t", [a], []) != P._digest(CTX, b"t", [], [a])
    assert P._digest(CTX, b"tag", [a]) != P._digest(CTX + b"t", b"ag", [a])
    assert len({P.context(s, r, t) for s in (b"", b"\x00", b"\x00\x00") for r in (0, 1) for t in (0, 1)}) == 12


IDENTITY = (1).to_bytes(32, "little")
ORDER_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
BAD_CHAIN = {
    "identity": IDENTITY,
    "order 8": ORDER_8,
    "mixed order": crypto_core_ed25519_add(P.H, ORDER_8),
}


@pytest.mark.parametrize("at", [0, 23, 47])
@pytest.mark.parametrize("name", list(BAD_CHAIN))
def test_a_chain_point_outside_the_group_is_the_signers_bad_point(name: str, at: int) -> None:
    bad = BAD_CHAIN[name]

    def with_bad(proof: P.ShuffleProof) -> P.ShuffleProof:
        chain = list(proof.chain)
        chain[at] = bad
        return dataclasses.replace(proof, chain=tuple(chain))

    s1 = dataclasses.replace(HONEST.shuffle, proof=with_bad(HONEST.shuffle.proof))
    assert S.check_shuffle(CTX, s1) == S.SealedFault(
        Code.BAD_POINT, Role.OTHER, Step.SHUFFLE, at, "not a point of the prime-order group"
    )
    s2 = dataclasses.replace(HONEST.shuffle_lock, proof=with_bad(HONEST.shuffle_lock.proof))
    f = S.check_shuffle_lock(CTX, ONE, s2)
    assert f is not None and (f.rule, f.role, f.index) == ("bad_point", Role.DEALER, at), f
