"""Seed grinding (issue 10): does a creator that refuses to reveal on bad seeds gain anything?

The creator commits first, then sees the joiner's VALUE, and so knows the match's seed (and the whole
deal) before it must REVEAL. A grinding creator plays a few quick greedy-vs-greedy playouts of that
deal and, when they say it will lose, does not reveal:

- before issue 10 that was a free escape (garbage or silence ended the match with no winner): counted
  over the matches that were played, its win rate rose from 49% to 70%;
- with issue 10 not revealing is silence at sequence 4: the joiner gets the relay's certificate and
  wins on time, so every escape is a lost match.

Run (in-memory: :mod:`koikoi.testing`, its :class:`Witness` standing for the relay)::

    python tests/adversary/seed_grinding.py --matches 400 --playouts 5

For every seed it plays the honest match (greedy vs greedy) and the grinder's match (the same seed,
keys and bots, so where the grinder reveals the match is the same), checking that each escape really
ends ``on_time`` with the joiner as winner in both transcripts' audits.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass

from koikoi.engine.bots import make_bot
from koikoi.engine.deal import SeededDeal
from koikoi.engine.match import Match, Settings, choose_first_dealer
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, commit_value, match_seed, parse
from koikoi.testing import make_pair

SETTINGS = Settings(6, True)
MOVE_TIME_S = 10


def predicted_win(seed: bytes, playouts: int, rng: random.Random) -> float:
    """The share of ``playouts`` greedy-vs-greedy plays of this deal that the creator (seat 0) wins."""
    source = SeededDeal(seed)
    first, _ = choose_first_dealer(source)
    start = Match(SETTINGS, source, first)
    wins = 0
    for _ in range(playouts):
        m = start.copy()
        bots = (
            make_bot("greedy", random.Random(rng.getrandbits(64))),
            make_bot("greedy", random.Random(rng.getrandbits(64))),
        )
        while not m.is_over:
            seat = m.to_move
            m.apply(bots[seat].choose(m.view(seat)), seat)
        wins += m.winner == 0
    return wins / playouts


@dataclass
class Outcome:
    honest_winner: int | None
    escaped: bool
    grinder_winner: int | None
    grinder_status: tuple[str, str]


def one(seed: bytes, playouts: int) -> Outcome:
    honest = make_pair(SETTINGS, ("greedy", "greedy"), seed, move_time_s=MOVE_TIME_S)
    assert not honest.run()
    hw = honest.sessions[0].ended
    assert hw is not None and hw.outcome.status == "complete", hw
    pair = make_pair(SETTINGS, ("greedy", "greedy"), seed, move_time_s=MOVE_TIME_S)
    creator = pair.sessions[0]
    escaped = False
    while not all(s.is_finished for s in pair.sessions):
        q = pair.queues[0]
        if q and not escaped and not pair.silent[0]:
            try:
                msg = parse(q[0])
            except Exception:
                msg = None
            if msg is not None and msg.type is MsgType.VALUE and creator.referee.sid is not None:
                sid = creator.referee.sid
                seed_ = match_seed(sid, commit_value(creator.key, sid, 0), msg.body[0])
                rng = random.Random(seed_)
                if predicted_win(seed_, playouts, rng) < 0.5:
                    escaped = True
                    pair.silent[0] = True  # refuses to reveal: sends nothing more
        if pair.step():
            continue
        if not pair.tick():
            break
    pair.flush(0)
    pair.flush(1)
    ends = [s.ended for s in pair.sessions]
    reports = [audit(bytes(f)) for f in pair.files]
    if escaped:
        # the mechanism: every escape is a lost match, witnessed, in both transcripts
        assert ends[1] is not None and ends[1].outcome.status == "on_time" and ends[1].outcome.winner == 1, ends
        assert reports[1].status == "on_time" and reports[1].result["winner"] == 1, reports[1].to_json("joiner")
    gw = ends[1].outcome.winner if ends[1] is not None else None
    return Outcome(hw.outcome.winner, escaped, gw, (reports[0].status, reports[1].status))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--matches", type=int, default=200)
    p.add_argument("--playouts", type=int, default=5)
    p.add_argument("--seed", default="grind")
    args = p.parse_args(argv)
    results = [one(f"{args.seed}-{i}".encode(), args.playouts) for i in range(args.matches)]
    n = len(results)
    honest = sum(r.honest_winner == 0 for r in results)
    played = [r for r in results if not r.escaped]
    escaped = n - len(played)
    old_rules = sum(r.honest_winner == 0 for r in played)  # an escape was free: only played matches count
    new_rules = sum(r.grinder_winner == 0 for r in results)  # an escape is a loss on time
    statuses: dict[tuple[str, str], int] = {}
    for r in results:
        statuses[r.grinder_status] = statuses.get(r.grinder_status, 0) + 1
    print(f"matches {n}, playouts per decision {args.playouts}, move time {MOVE_TIME_S} s (protocol time)")
    print(f"honest creator (greedy vs greedy): wins {honest}/{n} = {honest / n:.1%}")
    print(f"grinder escapes {escaped}/{n} seeds")
    print(f"  old rules (escape free): wins {old_rules}/{len(played)} played = {old_rules / max(1, len(played)):.1%}")
    print(f"  issue 10 (escape = loss on time): wins {new_rules}/{n} = {new_rules / n:.1%}")
    print(f"  grinder's audit statuses (creator, joiner): {statuses}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
