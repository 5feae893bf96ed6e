"""Protocol figures: bytes per move, µs to sign and verify a move, transcript size, audit speed.

    python benchmarks/protocol.py [--matches N] [--seconds S]

Prints one JSON object. Everything runs in this one process (one core).
``audits_per_s`` audits complete 12-round transcripts (greedy vs greedy and
random vs greedy, played through the in-memory harness) per second of this
process's CPU time (one core's work, even when other processes share the
machine); ``audits_per_s_wall_clock`` is the same per second of wall-clock
time. The target is at least 50 per second. µs figures are CPU time too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.harness import fixed_key, run_match
from koikoi.protocol.messages import MsgType, build, parse, verify
from koikoi.protocol.transcript import parse_transcript


def _transcripts(n: int, bots: tuple[str, str]) -> list[bytes]:
    return [
        run_match(Settings(12), bots, b"bench %d %s" % (i, "-".join(bots).encode())).transcripts[0] for i in range(n)
    ]


def _audit_rate(ts: list[bytes], seconds: float) -> tuple[float, float]:
    """Audits per second of wall-clock time, and per second of this process's CPU time (what one
    core does when other processes share the machine)."""
    done = 0
    t0, c0 = time.perf_counter(), time.process_time()
    while True:
        for t in ts:
            rep = audit(t)
            assert rep.valid and rep.status == "complete"
            done += 1
        el = time.perf_counter() - t0
        if el >= seconds:
            return done / el, done / (time.process_time() - c0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=20, help="12-round matches per bot pairing (default 20)")
    p.add_argument("--seconds", type=float, default=3.0, help="time to spend on each audit-speed run")
    args = p.parse_args(argv)

    gg = _transcripts(args.matches, ("greedy", "greedy"))
    rg = _transcripts(args.matches, ("random", "greedy"))
    frames = [parse(f) for t in gg + rg for f in parse_transcript(t).frames]
    moves = [m for m in frames if m.type is MsgType.MOVE]
    msgs_gg = [len(parse_transcript(t).frames) for t in gg]
    msgs_rg = [len(parse_transcript(t).frames) for t in rg]

    key = fixed_key(b"bench", 0)
    pub = key.public_key()
    m = moves[len(moves) // 2]
    n = 2000
    t0 = time.process_time()
    for _ in range(n):
        build(key, m.type, m.match, m.seq, m.prev, 0, list(m.body))
    sign_us = (time.process_time() - t0) / n * 1e6
    signed = parse(build(key, m.type, m.match, m.seq, m.prev, 0, list(m.body)))
    t0 = time.process_time()
    for _ in range(n):
        verify(pub, signed)
    verify_us = (time.process_time() - t0) / n * 1e6

    rate_gg = _audit_rate(gg, args.seconds)
    rate_rg = _audit_rate(rg, args.seconds)
    out = {
        "bytes_per_move": round(statistics.mean(len(x.frame) for x in moves), 1),
        "bytes_per_move_in_transcript": round(statistics.mean(len(x.frame) + 4 for x in moves), 1),
        "sign_move_us": round(sign_us, 1),
        "verify_move_us": round(verify_us, 1),
        "transcript_bytes_12_rounds": {
            "greedy_vs_greedy_mean": round(statistics.mean(map(len, gg))),
            "greedy_vs_greedy_max": max(map(len, gg)),
            "random_vs_greedy_mean": round(statistics.mean(map(len, rg))),
        },
        "messages_per_12_round_match": {
            "greedy_vs_greedy_mean": round(statistics.mean(msgs_gg), 1),
            "random_vs_greedy_mean": round(statistics.mean(msgs_rg), 1),
        },
        "audits_per_s": {
            "greedy_vs_greedy": round(rate_gg[1], 1),
            "random_vs_greedy": round(rate_rg[1], 1),
        },
        "audits_per_s_wall_clock": {
            "greedy_vs_greedy": round(rate_gg[0], 1),
            "random_vs_greedy": round(rate_rg[0], 1),
        },
        "audit_us_per_message": round(1e6 / rate_gg[1] / statistics.mean(msgs_gg), 1),
        "target_audits_per_s": 50,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "python": sys.version.split()[0],
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
