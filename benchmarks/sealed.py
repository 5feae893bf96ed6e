"""Sealed-deck figures: crypto CPU per round per seat, bytes per round, and the auditor's re-verification.

    python benchmarks/sealed.py [--rounds N] [--audits N]

Prints one JSON object. Everything runs in this one process; times are this process's CPU time (one
core's work, even when other processes share the machine), the median over N rounds with different
secrets. A *round* is one deal attempt plus play: 16 turns, each opening the played hand card and the
drawn deck card, so each seat opens 24 positions (the opponent's 8 played cards and 16 drawn cards; its
own hand it opened at the deal), then the disclosure and the seat's verification of the other's steps
(``verify_deal(trusted=own role)``). Targets: <= 25 ms per seat per round; >= 4 audits per second of a
12-round sealed transcript on one core (the auditor runs ``verify_deal`` with nothing trusted: 144
scalar multiplications an attempt, no point validation on the equal path).

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

from nacl.bindings import crypto_scalarmult_ed25519_noclamp

from koikoi.engine import Settings
from koikoi.engine.cards import four_of_a_month, mask_of
from koikoi.protocol import sealed as S
from koikoi.protocol.audit import audit
from koikoi.protocol.framing import encode
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
    """Both seats' crypto CPU (seconds) for round ``n``'s deal and play, and the auditor's."""
    k_ms, o_ms = _secret(f"K {n}"), _secret(f"O {n}")
    k_cpu = o_cpu = 0.0
    # K: derive, shuffle
    k, t = _cpu(lambda: S.derive(S.round_secret(k_ms, 1, 0)))
    k_cpu += t
    s1, t = _cpu(lambda: S.shuffle_step(k))
    k_cpu += t
    # O: derive, check, shuffle and lock
    o, t = _cpu(lambda: S.derive(S.round_secret(o_ms, 1, 0)))
    o_cpu += t
    s2r, t = _cpu(lambda: S.receive_shuffle(o, s1))  # validates step 1 as it locks it
    o_cpu += t
    assert isinstance(s2r, S.ShuffleLock)
    s2 = s2r
    # K: open its hand and the table, lock (and claim)
    got, t = _cpu(lambda: S.receive_shuffle_lock(k, s1, s2))
    k_cpu += t
    assert not isinstance(got, S.SealedFault)
    s3 = got[1]
    # O: open its hand and the table, claim
    seen_o, t = _cpu(lambda: S.check_lock(o, s2, s3))
    o_cpu += t
    assert isinstance(seen_o, dict)
    s4, t = _cpu(
        lambda: S.claim_step(o, S.must_claim([seen_o[i] for i in S.DEALER_HAND], [seen_o[i] for i in S.TABLE]))
    )
    o_cpu += t
    _, t = _cpu(lambda: S.check_claim(k, s3, s4))
    k_cpu += t
    # play: each seat opens the other's 8 played cards and the 16 drawn cards
    z = s3.points
    _, t = _cpu(lambda: [S.open_card(z[p], k.key(p), o.key(p)) for p in (*S.DEALER_HAND, *range(24, 40))])
    k_cpu += t
    _, t = _cpu(lambda: [S.open_card(z[p], k.key(p), o.key(p)) for p in (*S.OTHER_HAND, *range(24, 40))])
    o_cpu += t
    att = S.Attempt(s1, s2, s3, s4)
    published = [S.PublishedKey(S.Role.DEALER, p, o.key(p)) for p in (*S.DEALER_HAND, *range(24, 40))]
    published += [S.PublishedKey(S.Role.OTHER, p, k.key(p)) for p in (*S.OTHER_HAND, *range(24, 40))]
    # the disclosure: each seat verifies the other's steps
    v, t = _cpu(lambda: S.verify_deal(att, k.round_secret, o.round_secret, published, trusted=S.Role.OTHER))
    k_cpu += t
    assert isinstance(v, S.VerifiedDeal)
    v, t = _cpu(lambda: S.verify_deal(att, k.round_secret, o.round_secret, published, trusted=S.Role.DEALER))
    o_cpu += t
    v, audit_cpu = _cpu(lambda: S.verify_deal(att, k.round_secret, o.round_secret, published))
    assert isinstance(v, S.VerifiedDeal)
    return {"k": k_cpu, "o": o_cpu, "audit": audit_cpu}


def round_bytes() -> dict[str, int]:
    """Bytes of a round's sealed payload (bodies of the four steps, the keys riding on 16 turns, the
    16 automatic answers, the disclosures), and the extra envelopes sealed mode adds."""
    k, o = S.derive(_secret("bytes K")), S.derive(_secret("bytes O"))
    att = S.honest_attempt(k, o)
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
    return {
        "rounds": rounds,
        "scalarmult_us": round(mult_us(), 1),
        "cpu_ms_per_round": {"K": round(k_ms, 2), "O": round(o_ms, 2), "target": 25},
        "bytes_per_round": b,
        "bytes_per_12_rounds": round(12 * (b["with_envelopes"] + p * (b["deal_steps"] + 3 * ENVELOPE_BYTES))),
        "redeal_rate": round(p, 4),
        "audit_ms_per_round": round(audit_ms, 2),
        "audit_ms_12_rounds_sealed_part": round(sealed_12 * 1000, 1),
        "audit_ms_12_rounds_shared_part": round(shared * 1000, 1),
        "audits_per_s_12_rounds": round(1 / (shared + sealed_12), 2),
        "audits_target": 4,
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
