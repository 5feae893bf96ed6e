"""The spectator (issue 22): frames per second a watcher follows, and the memory it holds at the end.

    python benchmarks/spectator.py [--rounds N] [--repeat N]

Prints one JSON object. For each deck mode, one whole match between two bots (random and random, N
rounds, default 12; the first seed whose match plays every round) through the in-memory harness, its frames
recorded in the order the harness delivers them (the relay's order: every frame either seat sent, RESENDs
and repeats included); then a fresh
:class:`~koikoi.protocol.spectator.Spectator` fed them all, ``--repeat`` times (default 3; the median).
Times are this process's CPU time (one core's work, even when other processes share the machine).

Per deck: ``frames`` fed, ``messages`` in the line; ``follow_s`` for the whole match (with the audit of the
line that ends it: the ``WatchOver`` event carries ``report()``), ``follow_fps`` = frames / follow_s;
``before_end_fps``, the frames before the last one (the line followed, every signature, rule and sealed
proof checked as it comes) over their time; ``report_s``, one ``report()`` (the audit of the transcript).
``held_bytes`` (sealed only): the memory the spectator holds once the match is over, measured with
``tracemalloc`` (frames copied as they are fed, so their bytes count), with the line's frame bytes
(``line_bytes``) for comparison. ``compiled``: whether the engine runs compiled by mypyc.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
import tracemalloc
from collections.abc import Sequence
from typing import Any

from koikoi.engine import match as match_module
from koikoi.engine.match import Settings
from koikoi.protocol.spectator import Spectator, WatchOver
from koikoi.testing import make_pair


def relay_order(deck: str, rounds: int) -> list[tuple[int, bytes]]:
    """One bot match's frames in the order the harness delivers them (the first seed whose match plays every
    round: a pool that runs dry ends a match early)."""
    for n in range(100):
        frames = _relay_order(deck, rounds, f"bench-spectator/{deck}/{n}".encode())
        if frames:
            return frames
    raise RuntimeError("no match of 100 played every round")


def _relay_order(deck: str, rounds: int, seed: bytes) -> list[tuple[int, bytes]] | None:
    frames: list[tuple[int, bytes]] = []

    def record(seat: int, index: int, frame: bytes) -> Sequence[bytes]:
        frames.append((seat, frame))
        return [frame]

    pair = make_pair(Settings(rounds=rounds), ("random", "random"), seed, deck=deck, tamper=record)
    assert not pair.run()
    m = pair.sessions[0].referee.match
    return frames if m is not None and len(m.history) == rounds else None


def follow(frames: list[tuple[int, bytes]]) -> tuple[float, float, Spectator]:
    sp = Spectator()
    t = time.process_time()
    for seat, frame in frames[:-1]:
        sp.feed(seat, frame)
    before = time.process_time() - t
    events = sp.feed(*frames[-1])
    total = time.process_time() - t
    assert sp.over and isinstance(events[-1], WatchOver) and events[-1].report.valid
    return total, before, sp


def held(frames: list[tuple[int, bytes]]) -> tuple[int, int]:
    """The bytes a spectator holds at the end of ``frames`` (tracemalloc), and its line's frame bytes."""
    gc.collect()
    tracemalloc.start()
    sp = Spectator()
    for seat, frame in frames:
        sp.feed(seat, bytes(bytearray(frame)))  # a copy: its allocation is traced
    gc.collect()
    current, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return current, sum(map(len, sp.line))


def figures(deck: str, rounds: int, repeat: int) -> dict[str, Any]:
    frames = relay_order(deck, rounds)
    runs = [follow(frames) for _ in range(repeat)]
    total = statistics.median(r[0] for r in runs)
    before = statistics.median(r[1] for r in runs)
    sp = runs[0][2]
    t = time.process_time()
    sp.report()
    report_s = time.process_time() - t
    out: dict[str, Any] = {
        "frames": len(frames),
        "messages": len(sp.referee.msgs),
        "follow_s": round(total, 3),
        "follow_fps": round(len(frames) / total, 1),
        "before_end_fps": round((len(frames) - 1) / before, 1),
        "report_s": round(report_s, 3),
    }
    if deck == "sealed":
        held_bytes, line_bytes = held(frames)
        out |= {"held_bytes": held_bytes, "line_bytes": line_bytes}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=12, choices=(6, 12))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    result: dict[str, Any] = {"rounds": args.rounds, "compiled": not str(match_module.__file__).endswith(".py")}
    for deck in ("sealed", "shared"):
        result[deck] = figures(deck, args.rounds, args.repeat)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
