"""Ratings of many transcripts (issue 22): auditing against rating, in seconds.

    python benchmarks/ratings.py [--matches N] [--players P] [--rated M] [--compare K]

Prints one JSON object. N matches (default 1,000) between P players (default 8, one key each, at four
levels: player p plays the greedy bot for (p mod 4)/3 of its decisions and the random bot for the rest;
shared deck, 6 rounds) are played through the in-memory harness and both seats' files of each written
to a temporary folder: 2N transcripts. Then the pipeline of ``koikoi ratings`` runs on
the folder, timed by stage (CPU time of this one process): ``read_s`` (listing and reading the files),
``audit_s`` (auditing; the same bytes are audited once, and both seats' files of a match are the same
bytes unless an end message crossed a move, so ``audits`` is N), ``count_s`` (grouping each match
once) and ``rate_s`` (OpenSkill, every update rounded), and ``per_10000_transcripts_s``: each stage
scaled to 10,000 transcripts (auditing scales with the distinct files; the figure assumes, as here, two
identical files a match — at worst, all distinct, it doubles ``audit_s``). ``rate_only`` rates M
synthetic decided matches (default 10,000) among P players: the rating stage alone, measured at 10,000.

``compare`` (with ``--compare K``): how well the rating recovers the levels, for OpenSkill as
``koikoi ratings`` rates (every update rounded) and for Glicko-2 (the ``glicko2`` package, when it is
installed: one rating period a match, rating − 2 RD), over K random orders of the same rated matches:
``order_right`` the share of orders whose final table puts every player above every player of a lower
level, ``order_right_at`` the same after the first quarter and half of the matches, and
``settled_median`` the median number of matches after which the order stays right.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from koikoi.client.ratings import Audited, BadInput, CountedMatch, audit_inputs, count_matches, rate, read_inputs
from koikoi.engine.actions import Action
from koikoi.engine.bots.basic import GreedyBot, RandomBot
from koikoi.engine.match import SeatView, Settings
from koikoi.protocol.messages import ZERO_HASH, fingerprint, public_bytes
from koikoi.protocol.session import Session
from koikoi.testing import Pair


def _key(i: int) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"koikoi/bench-ratings/%d" % i).digest())


class _Level:
    """The greedy bot for ``share`` of the decisions, else the random bot."""

    name = "level"

    def __init__(self, share: float, rng: random.Random) -> None:
        self.share, self.rng = share, rng
        self.bots = (RandomBot(random.Random(rng.getrandbits(64))), GreedyBot(random.Random(rng.getrandbits(64))))

    def choose(self, view: SeatView) -> Action:
        return self.bots[self.rng.random() < self.share].choose(view)


def level(p: int) -> int:
    return p % 4


def make_folder(folder: Path, matches: int, players: int) -> None:
    rng = random.Random(22)
    keys = [_key(i) for i in range(players)]
    for n in range(matches):
        a, b = rng.sample(range(players), 2)
        nonce = [hashlib.sha256(b"bench-nonce/%d/%d" % (n, s)).digest() for s in (0, 1)]
        x = Session.create(keys[a], "BENCH", Settings(6, True), nonce[0], relay_key=ZERO_HASH)
        y = Session.join(keys[b], "BENCH", nonce[1], relay_key=ZERO_HASH)
        bots = tuple(_Level(level(p) / 3, random.Random(rng.getrandbits(64))) for p in (a, b))
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
            CountedMatch(
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


def _right(order: list[int], levels: dict[int, int]) -> bool:
    """``order``: players best first; right when no player stands above one of a higher level."""
    seen = [levels[p] for p in order]
    return all(x >= y for x, y in itertools.pairwise(seen))


def _openskill_tables(ms: list[CountedMatch]) -> list[list[str]]:
    """The table (keys, best first) after each match, as koikoi ratings rates."""
    tables: list[list[str]] = []
    rate(ms, after=lambda ps: tables.append([p.key for p in sorted(ps, key=lambda p: (-p.rating, p.key))]))
    return tables


def compare(counted_matches: list[CountedMatch], players: int, k: int) -> dict[str, Any]:
    keys = {public_bytes(_key(i)).hex(): i for i in range(players)}
    levels = {i: level(i) for i in range(players)}
    rng = random.Random(11)
    orders = [rng.sample(counted_matches, len(counted_matches)) for _ in range(k)]
    n = len(counted_matches)

    def figures(tables_of: Any) -> dict[str, Any]:
        right_end, right_q, right_h, settled = 0, 0, 0, []
        for ms in orders:
            tables = tables_of(ms)
            ok = [_right([keys[x] for x in t], levels) and len(t) == players for t in tables]
            right_end += ok[-1]
            right_q += ok[n // 4 - 1]
            right_h += ok[n // 2 - 1]
            settled.append(next((i + 1 for i in range(n) if all(ok[i:])), n + 1))
        return {
            "order_right": round(right_end / k, 3),
            "order_right_at": {str(n // 4): round(right_q / k, 3), str(n // 2): round(right_h / k, 3)},
            "settled_median": sorted(settled)[k // 2],
        }

    out: dict[str, Any] = {"orders": k, "matches": n, "openskill": figures(_openskill_tables)}
    try:
        import glicko2  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        out["glicko2"] = "not installed (pip install glicko2)"
        return out

    def glicko_tables(ms: list[CountedMatch]) -> list[list[str]]:
        ps: dict[str, Any] = {}
        tables = []
        for m in ms:
            a, b = (ps.setdefault(key, glicko2.Player()) for key in m.keys)
            score = 0.5 if m.winner is None else 1.0 if m.winner == 0 else 0.0
            ra, da, rb, db = a.rating, a.rd, b.rating, b.rd
            a.update_player([rb], [db], [score])
            b.update_player([ra], [da], [1 - score])
            tables.append(sorted(ps, key=lambda key: (-(ps[key].rating - 2 * ps[key].rd), key)))
        return tables

    out["glicko2"] = figures(glicko_tables)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matches", type=int, default=1000)
    ap.add_argument("--players", type=int, default=8)
    ap.add_argument("--rated", type=int, default=10_000)
    ap.add_argument("--compare", type=int, default=0, metavar="K")
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
    if args.compare:
        out["compare"] = compare(counted.matches, args.players, args.compare)
    out["rate_only"] = {
        "matches": args.rated,
        "players": args.players,
        "s": round(rate_only(args.rated, args.players), 3),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
