"""The cost of durability: fsync before every own message, per move (issue 10).

    python benchmarks/fsync.py [--matches N] [--dir DIR]

Prints one JSON object. A 12-round match (greedy vs greedy) is played in memory; then seat 0's
transcript is written again record by record exactly as ``koikoi host`` writes it — one unbuffered
write per record, and an fsync before each of its own messages is sent — into a new file in DIR
(default: the user data dir, where transcripts go; a tmpfs would make fsync free). Figures, in µs of
wall-clock time: ``fsync_us`` (median, p90, p99 of one fsync), ``write_us_per_move`` (one record's
write without fsync), ``durable_us_per_move`` (the whole write-and-fsync of one own message), and
``fsyncs_per_match``. The match's pace is set by people and the network (a move every few seconds);
the figure to compare is the fsync against that.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from koikoi.client.transcript_file import TranscriptWriter, data_dir
from koikoi.engine import Settings
from koikoi.protocol.messages import parse
from koikoi.protocol.transcript import parse_transcript
from koikoi.testing import run_match


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=5, help="12-round matches to write (default 5)")
    p.add_argument("--dir", type=Path, default=None, help="where to write (default: the user data dir)")
    args = p.parse_args(argv)
    base = args.dir if args.dir is not None else data_dir()
    base.mkdir(parents=True, exist_ok=True)

    fsyncs: list[float] = []
    durable: list[float] = []
    plain: list[float] = []
    per_match: list[int] = []
    with tempfile.TemporaryDirectory(dir=base, prefix=".fsync-bench-") as tmp:
        for i in range(args.matches):
            frames = parse_transcript(
                run_match(Settings(12), ("greedy", "greedy"), b"fsync %d" % i).transcripts[0]
            ).frames
            path = Path(tmp) / f"m{i}.koikoi"
            count = 0
            with TranscriptWriter(path) as w:
                for f in frames:
                    t0 = time.perf_counter()
                    w.append(f)
                    t1 = time.perf_counter()
                    if parse(f).seat == 0:  # an own message: on disk before it is sent
                        w.sync()
                        t2 = time.perf_counter()
                        fsyncs.append((t2 - t1) * 1e6)
                        durable.append((t2 - t0) * 1e6)
                        count += 1
                    else:
                        plain.append((t1 - t0) * 1e6)
            per_match.append(count)
            os.unlink(path)

    print(
        json.dumps(
            {
                "dir": str(base),
                "matches": args.matches,
                "fsyncs_per_match": round(statistics.mean(per_match), 1),
                "fsync_us": {
                    "median": round(statistics.median(fsyncs)),
                    "p90": round(_pct(fsyncs, 0.9)),
                    "p99": round(_pct(fsyncs, 0.99)),
                },
                "write_us_per_move": round(statistics.median(plain), 1),
                "durable_us_per_move": round(statistics.median(durable)),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
