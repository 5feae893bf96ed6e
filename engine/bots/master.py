"""The master bot: determinized Monte Carlo search in which both players may call koi-koi.

Like :mod:`.strong` (whose search it extends), it sees only its
:class:`~koikoi.engine.match.SeatView` and samples *worlds* for what it cannot
see (the opponent's hand and the deck order, dealt at random among the unseen
cards), plays each candidate action in them and rolls the round out by a fast
greedy policy; a rolled-out round is scored by what it means for the match
(:func:`~koikoi.engine.bots.value.match_value`: the pools after the capped
payment, the rounds left, who deals next).

What it adds:

* **koi-koi in the rollouts, for both players.** A rollout player with a new
  yaku never calls with no turn to come, takes the points when that takes
  everything the loser has left, calls when shōbu in the last round would
  still leave it behind, and otherwise calls with a chance that grows with the
  cards left in its hand (:func:`~.playout.calls_koikoi`: the chance given,
  at 4 cards left). The opponent's is fitted to how often it has called in
  this match (the koi-koi calls the bot has seen against the opponent's
  decisions: those calls and its shōbu wins, with a prior of ``prior_calls``
  calls in ``prior_decisions`` decisions); the bot's own is ``my_call`` (0.35:
  the bot itself called at 12 of 26 decisions against strong). Every
  call raises the one shared multiplier, and the count is this game's exactly
  (×2 at 8+, the multiplier, the cap at what the loser has left).
* **a reading of the opponent's plays.** A turn in which the opponent captured
  nothing says that it held no card of a month on the table it faced (a
  player that can capture usually does; a card whose month is on the table
  must). Those cards are kept out of its hand in a share ``trust`` of the
  worlds (an opponent may keep a capturing card back: ``strong`` does), the
  rest are dealt as before. What the bot remembers between decisions (these
  months, the opponent's calls, its own last action) comes from the views it
  was shown and its own choices.
* **the koi-koi/shōbu decision** compares the exact value of shōbu (the
  payment, the pools, the rounds left, dealing next) with koi-koi estimated
  over ``decide_rollouts`` rollouts of that model;
* **a search tree below each action** (``explore``, 0.35; None: flat Monte
  Carlo): the plays of both seats after the searched action are chosen by
  information-set MCTS (:class:`~.playout.Walk`: UCB1 with availability counts
  on nodes shared by every sampled world) until a play new to the tree, then
  the rollout policy plays on;
* **a larger budget**: ``rollouts`` (16,000) a play decision, spread by
  sequential halving over the actions on common worlds, and ``decide_rollouts``
  (6,000) for koi-koi: a median of about 0.17 s of CPU a decision with
  the playout compiled (:mod:`.playout`), about 0.47 s in pure Python.

Budgets are counts of rollouts, never time, and every random choice comes from
the ``random.Random`` given, so a decision depends only on the views the bot
has been shown and its seed.
"""

from __future__ import annotations

import random

from ..actions import Action, ActionKind
from ..cards import CARD_MONTH_MASK, Card
from ..match import RoundEnd, SeatView
from .playout import Root, deal_world_avoiding
from .strong import StrongBot

__all__ = ["MasterBot"]


class MasterBot(StrongBot):
    """Determinized Monte Carlo search with koi-koi in the rollouts, fitted to the opponent."""

    name = "master"

    def __init__(
        self,
        rng: random.Random,
        *,
        rollouts: int = 16000,
        decide_rollouts: int = 6000,
        my_call: float = 0.35,
        prior_calls: float = 0.5,
        prior_decisions: float = 3.0,
        trust: float = 0.8,
        explore: float | None = 0.35,
    ) -> None:
        super().__init__(rng, rollouts=rollouts, decide_rollouts=decide_rollouts)
        self.explore = explore
        self.my_call = my_call
        self.prior_calls = prior_calls
        self.prior_decisions = prior_decisions
        self.trust = trust
        self._opponent_calls: dict[int, int] = {}  # round -> the opponent's calls seen in it
        self._last: tuple[int, int, int, int] | None = None  # round, table after my action, opponent's captures, count
        self._excluded = 0  # cards the opponent cannot hold this round (see _infer)

    def _observe(self, view: SeatView) -> None:
        if self._opponent_calls and view.round < max(self._opponent_calls):
            self._opponent_calls.clear()  # a new match
        seen = self._opponent_calls.get(view.round, 0)
        self._opponent_calls[view.round] = max(seen, view.calls[1 - view.seat])

    def opponent_call_rate(self, view: SeatView) -> float:
        """The chance that the opponent calls koi-koi at a decision, as fitted so far."""
        opp = 1 - view.seat
        calls = sum(self._opponent_calls.values())
        shobu = sum(1 for r in view.history if r.winner == opp and r.end is RoundEnd.SHOBU)
        return (calls + self.prior_calls) / (calls + shobu + self.prior_decisions)

    def _call_policy(self, view: SeatView) -> tuple[float, float]:
        q = [0.0, 0.0]
        q[view.seat] = self.my_call
        q[1 - view.seat] = self.opponent_call_rate(view)
        return q[0], q[1]

    # -- what the opponent's plays tell ----------------------------------------

    def _infer(self, view: SeatView) -> None:
        """Cards the opponent cannot hold: it played without capturing, so it held no card of a table month.

        A player captures whenever it can (every built-in bot does, and a card whose
        month is on the table must capture), so a turn in which the opponent took
        nothing says that no card in its hand matched a month on the table it
        faced. That table is known in part: the table after this seat's last
        action, less what this seat's draw then took. When the opponent deals and
        took nothing on its first turn, its card and its draw are alone in their
        months on the table, so every month with two table cards was dealt there.
        """
        me = view.seat
        last = self._last
        if last is None or last[0] != view.round:
            self._excluded = 0
            opp = 1 - me
            if view.dealer == opp and view.opponent_hand_count == 7 and not view.captures_mask(opp):
                table = view.table_mask
                x = table
                while x:
                    low = x & -x
                    month = CARD_MONTH_MASK[low.bit_length() - 1]
                    if (table & month).bit_count() >= 2:
                        self._excluded |= month
                    x ^= low
            return
        _, table_after, opp_caps, opp_count = last
        opp = 1 - me
        if view.opponent_hand_count < opp_count and view.captures_mask(opp) == opp_caps:
            faced = table_after & ~view.captures_mask(me)
            months = 0
            while faced:
                low = faced & -faced
                months |= CARD_MONTH_MASK[low.bit_length() - 1]
                faced ^= low
            self._excluded |= months

    def _remember(self, view: SeatView, action: Action) -> None:
        table = view.table_mask
        if action.kind is ActionKind.PLAY:
            c = action.card
            mm = table & CARD_MONTH_MASK[c]
            if not mm:
                table |= 1 << c
            else:
                table &= ~((1 << action.target) if action.target >= 0 else mm)
        elif action.kind is ActionKind.CHOOSE:
            table &= ~(1 << action.target)
        opp = 1 - view.seat
        self._last = (view.round, table, view.captures_mask(opp), view.opponent_hand_count)

    def _sample(self, root: Root) -> tuple[int, tuple[Card, ...]]:
        excluded = self._excluded
        if not excluded or self.rng.random() >= self.trust:
            return super()._sample(root)
        world = deal_world_avoiding(root.unseen, root.opponent_count, excluded, self.rng)
        return super()._sample(root) if world is None else world

    def choose(self, view: SeatView) -> Action:
        self._observe(view)
        self._infer(view)
        action = super().choose(view)
        self._remember(view, action)
        return action
