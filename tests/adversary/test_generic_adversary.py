"""The generic adversary (issue 18, "Tests"): one seat honest, the other a cheater that may, at any message
it would send, send any mutation of it instead (``generic_adversary``: what it may do and the invariant every
run keeps), in both deck modes, in every round of a 6-round match including the last.

Two profiles. The bounded one (CI): a fixed number of derandomised examples per deck (no database, no
shrinking: a failure prints the plan, ``run_plan(Plan(...))`` reproduces it). The long one, by hand:
``KOIKOI_ADVERSARY_LONG=1`` raises the budget (``KOIKOI_ADVERSARY_EXAMPLES``, default 2000 per deck), draws at
random and shrinks; or ``python tests/adversary/generic_adversary.py --minutes 25``, a seeded search that goes
on after a violation and reports each distinct one.

The last tests check the checker: an honest match breaks nothing, and each invariant does fire on a run
made to break it (a stop that is the honest seat's, an honest seat that never acts, a junk frame that costs
a rebuild of the line).
"""

from __future__ import annotations

import os

import pytest
from generic_adversary import ACTIONS, Cheat, Plan, Result, World, check, run_plan
from generic_line import DECKS, ROUNDS, Verdict, stop_frame
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

LONG = os.environ.get("KOIKOI_ADVERSARY_LONG") == "1"
EXAMPLES = {"sealed": 16, "shared": 200}
"""The bounded profile's examples per deck mode: a sealed run takes about 3 s of CPU (every deal step's proofs,
made and checked), a shared one 0.05 s. The long search (``generic_adversary.py --minutes N``) runs thousands."""
if LONG:
    EXAMPLES = dict.fromkeys(EXAMPLES, int(os.environ.get("KOIKOI_ADVERSARY_EXAMPLES", "2000")))

_TYPES = {
    "shared": ("HELLO", "COMMIT", "VALUE", "REVEAL", "MOVE", "RESULT"),
    "sealed": ("REVEAL", "MOVE", "RESULT", "SHUFFLE", "SHUFFLE_LOCK", "LOCK", "CLAIM", "DRAW", "DISCLOSE"),
}


def plans(deck: str) -> st.SearchStrategy[Plan]:
    cheat = st.builds(
        Cheat,
        round=st.one_of(st.just(ROUNDS), st.integers(0, ROUNDS)),  # half in the deciding round
        nth=st.integers(0, 30),
        want=st.one_of(st.none(), st.sampled_from(_TYPES[deck])),
        action=st.sampled_from(ACTIONS[1:]),
        arg=st.integers(0, 2**32 - 1),
    )
    return st.builds(
        Plan,
        deck=st.just(deck),
        seed=st.integers(0, 2**16),
        cheater=st.integers(0, 1),
        cheats=st.lists(cheat, min_size=1, max_size=3).map(tuple),
    )


PROFILE = settings(
    deadline=None,
    derandomize=not LONG,
    database=None,
    phases=(Phase.explicit, Phase.generate, Phase.shrink) if LONG else (Phase.explicit, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=LONG,
)


def _assert_kept(r: Result) -> None:
    assert not r.violations, "\n" + r.report()


@pytest.mark.parametrize("deck", DECKS)
def test_the_generic_adversary_breaks_nothing(deck: str) -> None:
    @settings(PROFILE, max_examples=EXAMPLES[deck])
    @given(plan=plans(deck))
    def run(plan: Plan) -> None:
        _assert_kept(run_plan(plan))

    run()


# -- the checker checked ------------------------------------------------------------------------------------


@pytest.mark.parametrize("deck", DECKS)
def test_an_honest_match_keeps_the_invariant(deck: str) -> None:
    """Both seats honest (the cheater only lets its frames pass): nothing breaks, the match is played out, and the
    counters count (a received frame costs signature checks; in sealed mode, scalar multiplications)."""
    r = run_plan(Plan(deck, 7, 1, (Cheat(0, 0, None, "pass", 0),)))
    _assert_kept(r)
    assert r.verdicts["honest seat"].startswith("complete"), r.report()
    assert r.max_cost["verifies"] >= 1
    assert (r.max_cost["mults"] > 0) == (deck == "sealed")


def _views(w: World) -> dict[str, Verdict | None]:
    return {"honest seat": w.verdict(w.honest), "honest file": Verdict("unfinished", None, None, None),
            "cheater seat": None, "cheater file": Verdict("unfinished", None, None, None)}  # fmt: skip


def test_the_check_names_an_honest_loss_a_false_win_and_a_stuck_honest_seat() -> None:
    w = World("shared", 1, 1, lambda f, c: [(f, c)])
    views = _views(w)
    views["honest seat"] = Verdict("forfeit", 1, 0, "desync")
    names = {v.invariant for v in check(w, False, views, False)}
    assert {"honest_loses", "cheater_wins_by_ending", "honest_audit_disagrees"} <= names
    views["honest seat"] = Verdict("forfeit", 1, 1, "bad_result")
    assert "winner_is_loser" in {v.invariant for v in check(w, False, views, False)}
    # an honest seat that never moves (and a relay that certifies nothing): the run stalls waiting for it
    w = World("shared", 1, 1, lambda f, c: [(f, c)])
    w.pair.bots = (None, w.pair.bots[1])
    w.pair.auto_certify = False
    stalled = w.run(20_000)
    assert stalled and w.awaited(0) == 0
    assert "honest_stuck" in {v.invariant for v in check(w, stalled, _views(w), False)}


def test_the_counter_sees_a_junk_frame_that_costs_a_line_rebuild(monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame at a taken sequence number made to cost a rebuild of the whole line (the referee's
    ``state_before``, as the honest session does for one today) breaks ``cpu_replays``: the counter counts
    what the referee does, whatever the session's code path."""
    from koikoi.protocol import session as session_module

    orig = session_module.Session._take

    def take(self: session_module.Session, msg: object, events: list[object]) -> None:
        self.referee.state_before(self.referee.next_seq)  # a rebuild for every frame
        orig(self, msg, events)  # type: ignore[arg-type]

    monkeypatch.setattr(session_module.Session, "_take", take)
    r = run_plan(Plan("shared", 7, 1, (Cheat(0, 0, None, "pass", 0),)))
    assert "cpu_replays" in {v.invariant for v in r.violations}, r.report()


def test_a_forged_stop_is_well_formed_and_signed() -> None:
    """The adversary's stops are real messages: a RESIGN at the honest head ends the match, the cheater the loser."""
    w = World("shared", 3, 1, lambda f, c: [(f, c)])
    assert not w.run(5_000) and w.verdict(0) is not None
    w2 = World("shared", 3, 1, lambda f, c: [(f, c)])
    for _ in range(200):
        w2.pair.step()
        if len(w2.line(0)) > 10:
            break
    line = w2.line(0)
    from generic_line import frame_hash

    w2.inject(stop_frame("RESIGN", w2.key, w2.match_id(), len(line), frame_hash(line[-1]), 1, []))
    w2.run(5_000)
    assert w2.verdict(0) == Verdict("resigned", 0, 1, "resigned")


# -- what the long search found, kept as fixed examples ------------------------------------------------------

FOUND = {
    "a doubled HELLO: the honest host lost on time in the cheater's file": Plan(
        "shared", 107, 1, (Cheat(0, 0, None, "mutate_both", 25),)
    ),
    "the cheater's own seat re-made its superseded move and judged the honest ABORT unproven": Plan(
        "sealed", 55644, 0, (Cheat(0, 0, "MOVE", "mutate_both", 919251833),)
    ),
    "a last RESULT withheld: the winner and the loser were one seat (on_time)": Plan(
        "shared", 8485, 0, (Cheat(6, 5, None, "withhold", 1),)
    ),
    "a stop in round 2: the honest proof audited as its own resignation": Plan(
        "sealed", 37721, 0, (Cheat(2, 3, None, "stop", 1784465482),)
    ),
    "a mutated draw in round 2: a junk frame cost a replay of the line": Plan(
        "sealed", 175, 0, (Cheat(2, 0, "DRAW", "mutate", 3606550933),)
    ),
    "a 31-byte LOCK point: a forfeit under another code than bad_shape": Plan(
        "sealed", 45688, 0, (Cheat(0, 0, "LOCK", "mutate", 3318844810),)
    ),
    "a withheld last RESULT of the winner: its complete file, the honest seat's win on time": Plan(
        "sealed", 35580, 1, (Cheat(4, 0, "RESULT", "withhold", 1764069299),)
    ),
}


@pytest.mark.parametrize("name", list(FOUND))
def test_what_the_search_found_stays_fixed(name: str) -> None:
    _assert_kept(run_plan(FOUND[name]))
