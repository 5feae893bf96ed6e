"""The history index (issue 22): the first open of a transcript folder, and a warm one.

    python benchmarks/history.py [--files N] [--distinct D]

Prints one JSON object. A transcript folder of N files (default 10,000), copies of D distinct whole
matches (default 200; random and greedy bots, shared deck, 6 rounds) under N names, as
``koikoi history`` finds them. Wall-clock seconds of :func:`koikoi.client.history.open_history`:
``first_open_s`` with no index (every file audited, the index written), ``warm_open_s`` (median of 5:
nothing changed: the folder listed, the index read), ``one_changed_s`` (one file rewritten: it alone
is audited again). ``first_open_per_file_ms`` is the first open per file (auditing dominates).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from koikoi.client.history import open_history
from koikoi.engine.match import Settings
from koikoi.testing import run_match


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--distinct", type=int, default=200)
    args = ap.parse_args()
    matches = [
        run_match(Settings(6, True), ("random", "greedy"), seed=b"bench-history-%d" % i).transcripts[0]
        for i in range(args.distinct)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "transcripts"
        folder.mkdir()
        for n in range(args.files):
            (folder / f"20261201-{n // 60 % 24:02d}{n % 60:02d}00-R{n:06d}-host.koikoi").write_bytes(
                matches[n % args.distinct]
            )
        index = Path(tmp) / "history.sqlite3"
        t = time.perf_counter()
        first = open_history(folder, index)
        first_s = time.perf_counter() - t
        warm = []
        for _ in range(5):
            t = time.perf_counter()
            h = open_history(folder, index)
            warm.append(time.perf_counter() - t)
            assert h.audited == 0 and len(h.rows) == args.files
        victim = next(folder.iterdir())
        victim.write_bytes(matches[1])
        os.utime(victim, ns=(time.time_ns(), time.time_ns() + 1_000_000_000))
        t = time.perf_counter()
        again = open_history(folder, index)
        one_s = time.perf_counter() - t
        assert first.audited == args.files and again.audited == 1
        size = index.stat().st_size
    print(
        json.dumps(
            {
                "files": args.files,
                "distinct": args.distinct,
                "first_open_s": round(first_s, 2),
                "first_open_per_file_ms": round(1000 * first_s / args.files, 2),
                "warm_open_s": round(statistics.median(warm), 3),
                "one_changed_s": round(one_s, 3),
                "index_bytes": size,
            }
        )
    )


if __name__ == "__main__":
    main()
