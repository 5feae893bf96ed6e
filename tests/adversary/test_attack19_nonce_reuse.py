"""Issue 19, attempted attacks on the derived nonces and the deterministic steps (regression tests).

A seat's steps are deterministic (spec/sealed.md §3, §4.3: every key, mask, permutation and nonce is derived from
the round secret, the nonces also from the statement), so that a resumed seat makes the same bytes again. An
opponent who could make the honest seat answer twice in one deal attempt would get two answers under the same
secrets:

- **Nonce reuse.** Two Schnorr-style responses ``s = ω + c·x`` with one nonce ``ω`` and two challenges give the
  witness ``x = (s − s')/(c − c')``. An equivocating O (two step 2s) against K's lock, or an equivocating K (two
  step 1s) against O's argument: with ``x = m⁻¹`` K would strip O's mask from every ``W_i`` and read the whole
  deck. Refused by construction: the nonce hashes the statement (``digest``), so two different statements never
  share one — the extraction gives nothing (mutation check, by hand: ``proofs._nonce`` without ``digest`` makes
  both extraction tests fail).
- **Permutation reuse.** Even with fresh nonces, O's second step 2 for a second step 1 of K's (its own points in
  another order it chose: a 48-cycle) uses the same ``πO`` and mask: comparing the two ``W`` gives ``πO⁻¹∘τ∘πO``,
  and with the one position K's own hand already places, the whole deal (shown below, 48 of 48 cards). So the
  honest O must never answer a second step 1 of one attempt: its line refuses a second SHUFFLE after it
  answered the first (``unexpected_message``: its LOCK is due), and answers nothing.
"""

from __future__ import annotations

import hashlib

import pytest

from koikoi.engine.match import Settings
from koikoi.protocol import proofs as P
from koikoi.protocol import sealed as S
from koikoi.protocol.sealed_line import LineError, LineKind, SealedSeat, Sent

L = S.GROUP_ORDER
CTX = P.context(hashlib.sha256(b"koikoi/test/attack19-nonce session").digest(), 2, 0)


def _sec(label: str) -> S.SeatSecrets:
    return S.derive(hashlib.sha256(b"koikoi/test/attack19-nonce\x00" + label.encode()).digest())


def iv(s: bytes) -> int:
    return int.from_bytes(s, "little")


def extract(s: int, s2: int, c: int, c2: int) -> int:
    """The witness two responses under one nonce would give."""
    return (s - s2) * pow(c - c2, -1, L) % L


K_SEC, O_SEC = _sec("K"), _sec("O")


def k_reordered(tau: list[int]) -> S.Shuffle:
    """K's second step 1: the same points in another order it chose (``X'_j = X_{τ(j)}``), proven honestly."""
    perm = tuple(K_SEC.permutation[tau[j]] for j in range(48))
    pts = S.shuffle_points(K_SEC)
    x2 = tuple(pts[tau[j]] for j in range(48))
    proof = P.prove_shuffle(CTX, S.STEP1_TAG, S.CARD_POINTS, x2, K_SEC.mask_inverse, perm, K_SEC.round_secret)
    return S.Shuffle(x2, proof)


CYCLE = [(j + 1) % 48 for j in range(48)]


def test_two_locks_for_two_step_2s_share_no_nonce() -> None:
    s1 = S.shuffle_step(K_SEC, CTX)
    s2a = S.shuffle_lock_step(O_SEC, s1, CTX)
    s2b = S.shuffle_lock_step(_sec("O, a second secret"), s1, CTX)  # the equivocating O's other step 2
    la, lb = S.lock_step(K_SEC, s2a, False, CTX), S.lock_step(K_SEC, s2b, False, CTX)
    ra, rb = [iv(x) for x in la.lock_proof.responses], [iv(x) for x in lb.lock_proof.responses]
    assert ra[0] != rb[0]
    witness = iv(S._smul(K_SEC.keys[5], K_SEC.mask_inverse))
    assert extract(ra[6], rb[6], ra[0], rb[0]) != witness


def test_two_step_2s_for_two_step_1s_share_no_nonce() -> None:
    s1a, s1b = S.shuffle_step(K_SEC, CTX), k_reordered(CYCLE)
    assert S.check_shuffle(CTX, s1b) is None  # a valid step 1: the equivocating K's other one
    pa = S.shuffle_lock_step(O_SEC, s1a, CTX).proof.responses
    pb = S.shuffle_lock_step(O_SEC, s1b, CTX).proof.responses
    ra, rb = [iv(x) for x in pa], [iv(x) for x in pb]
    assert extract(ra[1], rb[1], ra[0], rb[0]) != iv(O_SEC.mask_inverse)  # s_γ: O's m⁻¹ stays hidden


def test_a_second_answer_of_o_would_show_k_the_whole_deal() -> None:
    """Why the line must refuse a second step 1: O's two answers, and K's own hand, give every card."""
    s1a, s1b = S.shuffle_step(K_SEC, CTX), k_reordered(CYCLE)
    wa = S.shuffle_lock_step(O_SEC, s1a, CTX)
    wb = S.shuffle_lock_step(O_SEC, s1b, CTX)
    where = {p: i for i, p in enumerate(wa.masked)}
    rho = [where[p] for p in wb.masked]  # W'_i = W_{ρ(i)}: ρ = σ⁻¹∘τ∘σ
    one = S.StepOne(s1a)
    sigma = {8: one.opened_by(wa, 8, wa.key_for(8))}  # K's own first card: σ(8)
    i = 8
    for _ in range(47):
        j = sigma[i]
        assert j is not None
        sigma[rho[i]] = CYCLE[j]  # σ(ρ(i)) = τ(σ(i))
        i = rho[i]
    recovered = [K_SEC.permutation[j] for _, j in sorted(sigma.items()) if j is not None]
    assert recovered == [K_SEC.permutation[O_SEC.permutation[p]] for p in range(48)]


def test_the_honest_dealer_refuses_a_second_step_1_of_one_attempt() -> None:
    settings = Settings(rounds=6)
    secrets = [hashlib.sha256(b"koikoi/test/attack19-nonce seat" + bytes([s])).digest() for s in (0, 1)]
    o, k = (SealedSeat(settings, s, 0, secrets[s]) for s in (0, 1))  # seat 0 deals round 1
    (first,) = k.pending()
    assert first.kind is LineKind.SHUFFLE
    o.receive(first)
    (answer,) = o.pending()
    assert answer.kind is LineKind.SHUFFLE_LOCK
    # K's second SHUFFLE for the same attempt: its own points in a chosen order, with a valid argument
    k_sec = S.derive(S.round_secret(secrets[1], 1, 0))
    ctx = k.line.context()
    x = S.Shuffle.from_body(list(first.body)).points
    x2 = tuple(x[CYCLE[j]] for j in range(48))
    perm = tuple(k_sec.permutation[CYCLE[j]] for j in range(48))
    proof = P.prove_shuffle(ctx, S.STEP1_TAG, S.CARD_POINTS, x2, k_sec.mask_inverse, perm, k_sec.round_secret)
    second = Sent(1, LineKind.SHUFFLE, tuple(S.Shuffle(x2, proof).body()))
    assert S.check_shuffle(ctx, S.Shuffle(x2, proof)) is None
    with pytest.raises(LineError) as e:
        o.receive(second)
    assert e.value.code == "unexpected_message"
    assert o.pending() == []  # no second SHUFFLE_LOCK
