"""Ratings of many transcripts (issue 22): auditing against rating, in seconds.

    python benchmarks/ratings.py [--matches N] [--players P] [--rated M]

Prints one JSON object. N matches (default 1,000) between P players (default 8, one key each; random
and greedy bots, shared deck, 6 rounds) are played through the in-memory harness and both seats' files
of each written to a temporary folder: 2N transcripts. Then the pipeline of ``koikoi ratings`` runs on
the folder, timed by stage (CPU time of this one process): ``read_s`` (listing and reading the files),
``audit_s`` (auditing; the same bytes are audited once, and both seats' files of a match are the same
bytes unless an end message crossed a move, so ``audits`` is N), ``count_s`` (grouping each match
once) and ``rate_s`` (OpenSkill, every update rounded), and ``per_10000_transcripts_s``: each stage
scaled to 10,000 transcripts (auditing scales with the distinct files; the figure assumes, as here, two
identical files a match — at worst, all distinct, it doubles ``audit_s``). ``rate_only`` rates M
synthetic decided matches (default 10,000) among P players: the rating stage alone, measured at 10,000.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from koikoi.client.ratings import Audited, BadInput, Match, audit_inputs, count_matches, rate, read_inputs
from koikoi.engine.bots import make_bot
from koikoi.engine.match import Settings
from koikoi.protocol.messages import ZERO_HASH, fingerprint, public_bytes
from koikoi.protocol.session import Session
from koikoi.testing import Pair


def _key(i: int) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"koikoi/bench-ratings/%d" % i).digest())


def make_folder(folder: Path, matches: int, players: int) -> None:
    rng = random.Random(22)
    keys = [_key(i) for i in range(players)]
    for n in range(matches):
        a, b = rng.sample(range(players), 2)
        nonce = [hashlib.sha256(b"bench-nonce/%d/%d" % (n, s)).digest() for s in (0, 1)]
        x = Session.create(keys[a], "BENCH", Settings(6, True), nonce[0], relay_key=ZERO_HASH)
        y = Session.join(keys[b], "BENCH", nonce[1], relay_key=ZERO_HASH)
        bots = tuple(make_bot("greedy" if p % 2 else "random", random.Random(rng.getrandbits(64))) for p in (a, b))
        pair = Pair((x, y), (bots[0], bots[1]))
        pair.note(0, x.start())
        pair.note(1, y.start())
        r = pair.result(pair.run())
        for seat in (0, 1):
            (folder / f"{n:06d}-{seat}.koikoi").write_bytes(r.transcripts[seat])


def rate_only(matches: int, players: int) -> float:
    rng = random.Random(7)
    keys = [public_bytes(_key(i)) for i in range(players)]
    ms = []
    for n in range(matches):
        a, b = rng.sample(range(players), 2)
        w = rng.choice((0, 1, 0, 1, None))
        ms.append(
            Match(
                f"{n:064x}",
                "complete",
                (keys[a].hex(), keys[b].hex()),
                (fingerprint(keys[a]), fingerprint(keys[b])),
                w,
                (),
            )
        )
    t = time.process_time()
    rate(ms)
    return time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matches", type=int, default=1000)
    ap.add_argument("--players", type=int, default=8)
    ap.add_argument("--rated", type=int, default=10_000)
    args = ap.parse_args()
    out: dict[str, Any] = {"matches": args.matches, "transcripts": 2 * args.matches, "players": args.players}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        make_folder(folder, args.matches, args.players)
        out["made_in_s"] = round(time.perf_counter() - t, 1)
        t0 = time.process_time()
        items = list(read_inputs([str(folder)]))
        t1 = time.process_time()
        files: list[Audited] = [a for a in audit_inputs(items) if not isinstance(a, BadInput)]
        t2 = time.process_time()
        counted = count_matches(files)
        t3 = time.process_time()
        players = rate(counted.matches)
        t4 = time.process_time()
    scale = 10_000 / (2 * args.matches)
    stages = {"read_s": t1 - t0, "audit_s": t2 - t1, "count_s": t3 - t2, "rate_s": t4 - t3}
    out.update({k: round(v, 3) for k, v in stages.items()})
    out["audits"] = len({f.sha256 for f in files})
    out["rated"] = len(counted.matches)
    out["rated_players"] = len(players)
    out["per_10000_transcripts_s"] = {k: round(v * scale, 2) for k, v in stages.items()}
    out["per_10000_transcripts_s"]["total"] = round(sum(stages.values()) * scale, 2)
    out["rate_only"] = {
        "matches": args.rated,
        "players": args.players,
        "s": round(rate_only(args.rated, args.players), 3),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
