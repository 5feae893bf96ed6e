"""Sealed-deck figures: crypto CPU per round per seat, bytes per round, and the auditor's re-verification.

    python benchmarks/sealed.py [--rounds N] [--audits N]

Prints one JSON object. Everything runs in this one process; times are this process's CPU time (one
core's work, even when other processes share the machine), the median over N rounds with different
secrets. A *round* is one deal attempt plus play: 16 turns, each opening the played hand card and the
drawn deck card, so each seat opens 24 positions (the opponent's 8 played cards and 16 drawn cards; its
own hand it opened at the deal), then the disclosure and the seat's verification of the other's steps
(``verify_deal(trusted=own role)``); every step's proofs are checked by the seat that receives it (and the
auditor). Targets (issue 19): <= 1,000 extra scalar multiplications per seat per round (the proofs, proving and
verifying, and O's masked points), about 80 ms; <= 8 KB of proofs per seat per round; >= 1 audit per second of a
12-round sealed transcript on one core.

``audits_per_s_12_rounds`` adds the sealed re-verification of 12 rounds (with the measured redeal rate)
to the measured audit time of today's 12-round shared-seed transcript (signatures, engine replay), the
estimate until the integration writes sealed transcripts. The functions here are meant to be called by
``benchmarks/protocol.py`` later (:func:`figures`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

from nacl.bindings import crypto_core_ed25519_scalar_mul, crypto_scalarmult_ed25519_noclamp

from koikoi.engine import Settings
from koikoi.engine.cards import four_of_a_month, mask_of
from koikoi.protocol import proofs as P
from koikoi.protocol import sealed as S
from koikoi.protocol.audit import audit
from koikoi.protocol.framing import encode
from koikoi.protocol.steps import Step
from koikoi.testing import run_match

T = TypeVar("T")
KEY_BYTES = len(encode(bytes(32)))  # a key or a secret in a msgpack body: 34
ENVELOPE_BYTES = 140  # messages.py's envelope around a body: version, type, match, seq, prev, seat, signature


def _cpu(f: Callable[[], T]) -> tuple[T, float]:
    c0 = time.process_time()
    r = f()
    return r, time.process_time() - c0


def _secret(label: str) -> bytes:
    return hashlib.sha256(b"koikoi/bench/sealed\x00" + label.encode()).digest()


def one_round(n: int) -> dict[str, float]:
    """Both seats' crypto CPU (seconds) and their extra multiplications (the proofs', and O's masked points)
    for round ``n``'s deal and play, and the auditor's."""
    k_ms, o_ms = _secret(f"K {n}"), _secret(f"O {n}")
    ctx = P.context(_secret("session"), 1, 0)
    k_cpu = o_cpu = 0.0
    mults = {"K": 0, "O": 0, "audit": 0}

    def run(who: str, f: Callable[[], T]) -> tuple[T, float]:
        P.ProofCounter.reset()
        r, t = _cpu(f)
        mults[who] += P.ProofCounter.variable + P.ProofCounter.fixed
        return r, t

    # K: derive, shuffle and prove it
    k, t = _cpu(lambda: S.derive(S.round_secret(k_ms, 1, 0)))
    k_cpu += t
    s1, t = run("K", lambda: S.shuffle_step(k, ctx))
    k_cpu += t
    # O: check step 1's argument; mask, shuffle, lock and prove it
    o, t = _cpu(lambda: S.derive(S.round_secret(o_ms, 1, 0)))
    o_cpu += t
    f, t = run("O", lambda: S.check_shuffle(ctx, s1))
    o_cpu += t
    assert f is None
    s2, t = run("O", lambda: S.receive_shuffle(o, s1, ctx))
    o_cpu += t
    mults["O"] += 48  # the masked points W
    # K: check step 2's proofs and O's keys, open its hand and the table, lock (and claim) and prove it
    one, t = _cpu(lambda: S.StepOne(s1))
    k_cpu += t
    f, t = run("K", lambda: S.check_shuffle_lock(ctx, one, s2))
    k_cpu += t
    assert f is None
    got, t = run("K", lambda: S.receive_shuffle_lock(k, one, s2, ctx))
    k_cpu += t
    assert not isinstance(got, S.SealedFault)
    s3 = got[1]
    # O: check step 3's proof and K's table keys, open its hand and the table, claim
    f, t = run("O", lambda: S.check_lock(ctx, s2, s3) or S.check_lock_keys(s2, s3))
    o_cpu += t
    assert f is None
    seen_o, t = _cpu(lambda: S.open_lock(o, s2, s3))
    o_cpu += t
    assert isinstance(seen_o, dict)
    s4, t = _cpu(
        lambda: S.claim_step(o, S.must_claim([seen_o[i] for i in S.DEALER_HAND], [seen_o[i] for i in S.TABLE]))
    )
    o_cpu += t
    _, t = _cpu(lambda: S.open_claim(k, s3, s4))
    k_cpu += t
    # play: each seat opens the other's 8 played cards and the 16 drawn cards; O's keys are checked against
    # step 1 where they are published (8 plays, 16 deck keys)
    z = s3.points
    _, t = _cpu(lambda: [S.open_card(z[p], k.key(p), o.key(p)) for p in (*S.DEALER_HAND, *range(24, 40))])
    k_cpu += t
    _, t = _cpu(lambda: [S.check_dealer_key(one, s2, p, o.key(p), Step.TURN) for p in (*S.DEALER_HAND, *range(24, 40))])
    k_cpu += t
    mults["K"] += 24
    _, t = _cpu(lambda: [S.open_card(z[p], k.key(p), o.key(p)) for p in (*S.OTHER_HAND, *range(24, 40))])
    o_cpu += t
    att = S.Attempt(s1, s2, s3, s4)
    published = [S.PublishedKey(S.Role.DEALER, p, o.key(p)) for p in (*S.DEALER_HAND, *range(24, 40))]
    published += [S.PublishedKey(S.Role.OTHER, p, k.key(p)) for p in (*S.OTHER_HAND, *range(24, 40))]
    # the disclosure: each seat verifies the other's
    v, t = _cpu(lambda: S.verify_deal(att, k.round_secret, o.round_secret, published, trusted=S.Role.OTHER))
    k_cpu += t
    assert isinstance(v, S.VerifiedDeal)
    v, t = _cpu(lambda: S.verify_deal(att, k.round_secret, o.round_secret, published, trusted=S.Role.DEALER))
    o_cpu += t

    def audit_attempt() -> S.VerifiedDeal | S.SealedFault:
        one_a = S.StepOne(s1)
        assert S.check_shuffle(ctx, s1) is None and S.check_shuffle_lock(ctx, one_a, s2) is None
        assert S.check_lock(ctx, s2, s3) is None and S.check_lock_keys(s2, s3) is None
        for p in (*S.DEALER_HAND, *range(24, 40)):
            assert S.check_dealer_key(one_a, s2, p, o.key(p), Step.TURN) is None
        return S.verify_deal(att, k.round_secret, o.round_secret, published)

    v, audit_cpu = run("audit", audit_attempt)
    assert isinstance(v, S.VerifiedDeal)
    return {"k": k_cpu, "o": o_cpu, "audit": audit_cpu, "k_mults": mults["K"], "o_mults": mults["O"]}


def proof_bytes() -> dict[str, int]:
    """The bytes the proofs add to a seat's steps in a deal attempt (encoded as in the bodies: 34 a value):
    the chains and responses; and O's masked points ``W``, the statement its argument is about."""
    k, o = S.derive(_secret("bytes K")), S.derive(_secret("bytes O"))
    att = S.honest_attempt(k, o, P.context(_secret("session"), 1, 0))
    assert att.lock is not None
    s1, s2, s3 = att.shuffle, att.shuffle_lock, att.lock
    k_extra = len(encode(s1.body())) - len(encode([list(s1.points)]))
    k_extra += len(encode(s3.body())) - len(encode(s3.body()[:3]))
    masked = len(encode(list(s2.masked)))
    o_extra = len(encode(s2.body())) - len(encode(s2.body()[:2])) - masked
    return {"K": k_extra, "O": o_extra, "O_masked_points": masked, "target_per_seat": 8192}


def cut_and_choose(n: int, rounds: int = 40) -> dict[str, float]:
    """The alternative measured (LibTMCG's kind, for one seat's shuffle): ``rounds`` intermediate shuffles
    of the output, each opened either back to the input or on to the output by one challenge bit, for a
    soundness of 2^-rounds. Built from the same libsodium calls; CPU seconds and bytes for one shuffle of
    48 points, proved and verified (never used by the protocol)."""
    k, o = S.derive(_secret(f"cc K {n}")), S.derive(_secret(f"cc O {n}"))
    u = S.shuffle_points(k)
    v = tuple(crypto_scalarmult_ed25519_noclamp(o.mask, u[o.permutation[i]]) for i in range(48))
    c0 = time.process_time()
    mids = []
    for r in range(rounds):
        t = S.derive(_secret(f"cc {n} {r}"))
        mids.append((t, tuple(crypto_scalarmult_ed25519_noclamp(t.mask, u[t.permutation[i]]) for i in range(48))))
    bits = hashlib.sha512(b"".join(m for _, pts in mids for m in pts)).digest()
    openings = []
    for r, (t, _mid) in enumerate(mids):
        if bits[r // 8] >> (r % 8) & 1:  # open input -> mid: the scalar and the permutation
            openings.append((t.mask, t.permutation))
        else:  # open mid -> output: output = (m / t) · mid in a composed order
            ratio = crypto_core_ed25519_scalar_mul(o.mask, t.mask_inverse)
            where = [0] * 48
            for i, j in enumerate(t.permutation):
                where[j] = i
            openings.append((ratio, tuple(where[o.permutation[i]] for i in range(48))))
    prove = time.process_time() - c0
    c0 = time.process_time()
    for r, ((_t, mid), (s, perm)) in enumerate(zip(mids, openings, strict=True)):
        src, dst = (u, mid) if bits[r // 8] >> (r % 8) & 1 else (mid, v)
        assert all(crypto_scalarmult_ed25519_noclamp(s, src[perm[i]]) == dst[i] for i in range(48))
    verify = time.process_time() - c0
    return {"prove_s": prove, "verify_s": verify, "bytes": rounds * (48 * 34 + 34 + 48)}


def round_bytes() -> dict[str, int]:
    """Bytes of a round's sealed payload (bodies of the four steps, the keys riding on 16 turns, the
    16 automatic answers, the disclosures), and the extra envelopes sealed mode adds."""
    k, o = S.derive(_secret("bytes K")), S.derive(_secret("bytes O"))
    att = S.honest_attempt(k, o, P.context(_secret("session"), 1, 0))
    assert att.lock is not None and att.claim is not None
    steps = len(att.shuffle.encode()) + len(att.shuffle_lock.encode()) + len(att.lock.encode())
    steps += len(att.claim.encode())
    turns = 16 * 3 * KEY_BYTES  # the mover's two keys, the opponent's answer
    disclose = 2 * len(encode([[k.round_secret]]))
    # new messages: SHUFFLE, SHUFFLE_LOCK, LOCK (O's claim rides on its first move), 16 answers, 2 DISCLOSE
    extra_messages = 3 + 16 + 2
    return {
        "deal_steps": steps,
        "turn_keys": turns,
        "disclosures": disclose,
        "payload_total": steps + turns + disclose,
        "extra_messages": extra_messages,
        "with_envelopes": steps + turns + disclose + extra_messages * ENVELOPE_BYTES,
    }


def redeal_rate(n: int = 20000) -> float:
    """The share of deal attempts whose table holds four of a month (no multiplication needed)."""
    hits = 0
    for i in range(n):
        k, o = S.derive(_secret(f"rd K {i}")), S.derive(_secret(f"rd O {i}"))
        table = [k.permutation[o.permutation[p]] for p in S.TABLE]
        hits += four_of_a_month(mask_of(table))
    return hits / n


def shared_audit_s(n: int) -> float:
    """CPU seconds to audit one of today's 12-round shared-seed transcripts (greedy vs greedy)."""
    ts = [run_match(Settings(12), ("greedy", "greedy"), b"sealed bench %d" % i).transcripts[0] for i in range(n)]
    c0 = time.process_time()
    for t in ts:
        assert audit(t).valid
    return (time.process_time() - c0) / n


def mult_us(n: int = 2000) -> float:
    p, s = S.CARD_POINTS[0], S.derive(_secret("mult")).keys[0]
    c0 = time.process_time()
    for _ in range(n):
        crypto_scalarmult_ed25519_noclamp(s, p)
    return (time.process_time() - c0) / n * 1e6


def figures(rounds: int = 20, audits: int = 3) -> dict[str, Any]:
    runs = [one_round(i) for i in range(rounds)]
    k_ms = statistics.median(r["k"] for r in runs) * 1000
    o_ms = statistics.median(r["o"] for r in runs) * 1000
    audit_ms = statistics.median(r["audit"] for r in runs) * 1000
    p = redeal_rate()
    shared = shared_audit_s(audits)
    sealed_12 = 12 * (1 + p) * audit_ms / 1000
    b = round_bytes()
    cc = [cut_and_choose(i) for i in range(3)]
    return {
        "rounds": rounds,
        "scalarmult_us": round(mult_us(), 1),
        "cpu_ms_per_round": {"K": round(k_ms, 2), "O": round(o_ms, 2), "target": 80},
        "extra_multiplications_per_round": {
            "K": int(statistics.median(r["k_mults"] for r in runs)),
            "O": int(statistics.median(r["o_mults"] for r in runs)),
            "target": 1000,
        },
        "proof_bytes_per_round": proof_bytes(),
        "bytes_per_round": b,
        "bytes_per_12_rounds": round(12 * (b["with_envelopes"] + p * (b["deal_steps"] + 3 * ENVELOPE_BYTES))),
        "redeal_rate": round(p, 4),
        "audit_ms_per_round": round(audit_ms, 2),
        "audit_ms_12_rounds_sealed_part": round(sealed_12 * 1000, 1),
        "audit_ms_12_rounds_shared_part": round(shared * 1000, 1),
        "audits_per_s_12_rounds": round(1 / (shared + sealed_12), 2),
        "audits_target": 1,
        "alternative_cut_and_choose_40": {
            "prove_ms": round(statistics.median(c["prove_s"] for c in cc) * 1000, 1),
            "verify_ms": round(statistics.median(c["verify_s"] for c in cc) * 1000, 1),
            "multiplications": 40 * 48 * 2,
            "bytes": int(cc[0]["bytes"]),
        },
        "round_trips_per_turn": {
            "shared": 0.5,
            "sealed_draw_without_decision": 0.5,
            "sealed_draw_needing_a_decision": 1.5,
            "note": "a turn is half a round trip in shared mode (the move crosses once); in sealed mode the "
            "opponent's deck key crosses back: free when it rides with the opponent's next move, one more "
            "round trip when the mover must decide after seeing its draw (the model; measured on whole lines: "
            "benchmarks/protocol.py, sealed.hops_breakdown, spec/sealed.md section 6)",
        },
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--audits", type=int, default=3)
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.audits < 1:
        print("--rounds and --audits must be at least 1", file=sys.stderr)
        return 2
    print(json.dumps(figures(a.rounds, a.audits), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
