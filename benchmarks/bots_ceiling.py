"""What would seeing the hidden cards be worth to the master bot? (A ceiling, not a bot to ship.)

Plays the master bot against an opponent on exactly the games of
``benchmarks/bots.py`` (same ``--seed``, match seeds, seats and bot
randomness), except that the master bot is given what no seat may see: with
``--knows hand`` its every world holds the opponent's true hand (the deck
shuffled at random among the other unseen cards, as usual); with ``--knows
all`` the true deck order too, so every world is the real one. Nothing else
changes (budget, tree, koi-koi model) unless ``--model-opponent`` is given:
then the opponent's plays in master's search tree are the rollout policy's
(a model of the opponent, close to ``greedy``, instead of its best reply).
The gap between this and the honest bot's rate on the same deals says how
much better reading the opponent (hand) could gain at most, and how much of
what is left is the luck of the draw (all). Prints one JSON object: wins,
losses, draws, the rate over decided matches with its 95 % Wilson interval,
and CPU seconds a match. ``--per-game
FILE`` appends each match as a JSON line (``game``, ``seat``, ``result``,
``points``: the fields of a ``bots.py --per-game`` record that pair it with the
honest bot's record of the same game; and the run: ``bot``, ``knows``,
``rollouts``, ``model_opponent``, ``seed``, ``rounds_per_match``, ``double_at_8``);
``--rollouts N`` gives a smaller budget for a quick look, and the figures and
records say which budget played.

    nice -n 15 python benchmarks/bots_ceiling.py --knows all --opponent greedy --games 100
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from koikoi.engine.bots import Bot, make_bot
from koikoi.engine.bots.master import MasterBot
from koikoi.engine.bots.playout import Root, shuffle
from koikoi.engine.cards import Card
from koikoi.engine.deal import SeededDeal
from koikoi.engine.match import Match, Settings, choose_first_dealer
from koikoi.engine.selfplay import bot_rng, game_seed

sys.path.insert(0, str(Path(__file__).parent))

from bots import (  # the sibling script's
    after_play,
    append_records,
    check_bots,
    check_games,
    check_seed,
    check_writable,
    count,
    index,
    os_error,
    run_of,
    wilson,
)


class _Seeing(MasterBot):
    """Master whose worlds are dealt from the true hidden cards of ``match``."""

    def __init__(
        self,
        rng: random.Random,
        match: Match,
        knows_deck: bool,
        rollouts: int | None = None,
        model_opponent: bool = False,
    ) -> None:
        if rollouts is None:
            super().__init__(rng)
        else:
            super().__init__(rng, rollouts=rollouts, decide_rollouts=max(1, rollouts * 3 // 8))
        self.match = match
        self.knows_deck = knows_deck
        self.model_opponent = model_opponent

    def _sample(self, root: Root) -> tuple[int, tuple[Card, ...]]:
        m = self.match
        opp = m.hand(1 - root.me)
        if self.knows_deck:
            return opp, tuple(m._deck[m._deck_pos :])
        rest = [c for c in root.unseen if not opp >> c & 1]
        shuffle(rest, self.rng)
        return opp, tuple(rest)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=Path(__file__).name, description=__doc__.splitlines()[0])
    p.add_argument("--knows", choices=("hand", "all"), default="all")
    p.add_argument("--opponent", default="greedy")
    p.add_argument("--games", type=count, default=100)
    p.add_argument("--first-game", type=index, default=0, metavar="K")
    p.add_argument("--seed", default="bench")
    p.add_argument(
        "--rollouts",
        type=count,
        metavar="N",
        help="the budget of a play decision (default: master's; koi-koi 3/8 of it)",
    )
    p.add_argument(
        "--model-opponent",
        action="store_true",
        help="in master's search tree the opponent plays the rollout policy, not its best reply",
    )
    p.add_argument("--per-game", metavar="FILE", help="append each match's result as a JSON line")
    args = p.parse_args(argv)
    check_bots(p, [args.opponent])
    check_games(p, args.first_game, args.games)
    base = check_seed(p, args.seed)
    check_writable(p, "--per-game", args.per_game)
    settings = Settings(rounds=6, double_at_8=True)
    results: list[float] = []
    unwritten: str | None = None
    cpu = 0.0
    for i in range(args.first_game, args.first_game + args.games):
        seed = game_seed(base, i)
        seat = i % 2
        source = SeededDeal(seed)
        dealer, _ = choose_first_dealer(source)
        m = Match(settings, source, dealer)
        bots: list[Bot] = [make_bot(args.opponent, bot_rng(seed, s)) for s in (0, 1)]
        seeing = _Seeing(bot_rng(seed, seat), m, args.knows == "all", args.rollouts, args.model_opponent)
        bots[seat] = seeing
        t = time.process_time()
        while not m.is_over:
            s = m.to_move
            m.apply(bots[s].choose(m.view(s)), s)
        cpu += time.process_time() - t
        results.append(0.5 if m.winner is None else float(m.winner == seat))
        if args.per_game is not None and unwritten is None:
            record = run_of("master", args.seed, settings.rounds, settings.double_at_8)
            record |= {"knows": args.knows, "rollouts": seeing.rollouts, "model_opponent": args.model_opponent}
            record |= {
                "opponent": args.opponent,
                "game": i,
                "seat": seat,
                "result": results[-1],
                "points": m.points[seat],
            }
            try:
                append_records(args.per_game, [record])
            except OSError as e:
                unwritten = os_error("--per-game", args.per_game, e)
    wins = results.count(1.0)
    losses = results.count(0.0)
    lo, hi = wilson(wins, wins + losses)
    out = {
        "bot": "master",
        "knows": args.knows,
        "rollouts": seeing.rollouts,
        "model_opponent": args.model_opponent,
        "opponent": args.opponent,
        "games": args.games,
        "first_game": args.first_game,
        "seed": args.seed,
        "wins": wins,
        "losses": losses,
        "draws": len(results) - wins - losses,
        "win_rate_decided": round(wins / (wins + losses), 4) if wins + losses else None,
        "ci95": [round(lo, 4), round(hi, 4)],
        "cpu_s_per_match": round(cpu / len(results), 3) if results else None,
    }
    json.dump(out, sys.stdout)
    print()
    return after_play(p, unwritten)


if __name__ == "__main__":
    raise SystemExit(main())
