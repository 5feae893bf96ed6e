"""Issue 18, finding 7: a message the line itself superseded is not evidence of equivocation.

The cheater C stops a round (its DISCLOSE) while the honest seat H's draw key and next move are on their way
to it: the stop takes the draw key's sequence number and supersedes both. H rebuilds its line and discloses
at the next sequence number — where its superseded move was. C then ABORTs with ``equivocation`` citing H's
superseded MOVE and H's DISCLOSE, two different signed messages of H for one sequence number. §6.2 step 3
accepts any such pair today, so C's file audits valid with H the loser, while H's own file says C lost: one
match, two valid files with opposite winners.

By construction: the first time H answers C's play with its draw key and its own next move (H's turn at
once), C stops before either reaches it. C's file is its line with its ABORT where H's crosses it (each side
keeps its own end message, spec/protocol.md §6.4).

Required: the audit does not accept the manufactured forfeit (no valid file names H the loser), and the real
verdicts agree that the honest seat did not lose.
"""

from __future__ import annotations

import line_cheats
from line_judge import fail_text, file_verdict, problems_if_cheater_wins

from koikoi.engine import Settings
from koikoi.testing import Pair, make_pair

SEED = b"issue 18 finding 7"
CHEATER, HONEST = 1, 0


def _draw_and_move_in_transit(pair: Pair) -> int:
    """Step until H's draw key for C's play is in transit to C and H is to move; H moves (its move goes after
    its draw key, neither delivered). Returns the draw key's sequence number."""
    h = pair.sessions[HONEST]
    bot = pair.bots[HONEST]
    assert bot is not None
    for _ in range(100_000):
        q = pair.queues[CHEATER]
        if len(q) == 1 and not pair.queues[HONEST] and h.my_turn and line_cheats.frame_info(q[0]).kind == "draw":
            s = line_cheats.frame_info(q[0]).seq
            pair.note(HONEST, h.play(bot.choose(h.view())))
            pair.flush(HONEST)
            assert [line_cheats.frame_info(f).kind for f in pair.queues[CHEATER]] == ["draw", "move"]
            return s
        assert pair.step(), "the match ended before H answered a play with its draw key and a move"
    raise AssertionError("never reached")


def test_a_superseded_move_and_the_disclosure_after_it_are_no_equivocation() -> None:
    pair = make_pair(Settings(12), ("greedy", "greedy"), seed=SEED, deck="sealed")
    s = _draw_and_move_in_transit(pair)
    line_cheats.stop_now(pair, CHEATER)  # C's DISCLOSE takes sequence s: H's draw key and move are superseded
    pair.run()
    honest_file = line_cheats.line_frames(pair, HONEST)
    info = [line_cheats.frame_info(f) for f in honest_file]
    superseded_move = next(f for f, i in zip(honest_file, info, strict=True) if i.seq == s + 1 and i.kind == "move")
    disclose = next(f for f, i in zip(honest_file, info, strict=True) if i.seq == s + 1 and i.kind == "disclose")
    assert line_cheats.frame_info(next(f for f in honest_file if line_cheats.frame_info(f).seq == s)).seat == HONEST
    # C's file: the line to H's DISCLOSE (s + 1), then C's ABORT citing H's two messages at s + 1
    cheater_line = [f for f in line_cheats.line_frames(pair, CHEATER) if line_cheats.frame_info(f).seq <= s + 1]
    assert line_cheats.frame_info(cheater_line[-1]).kind == "disclose", "H's disclosure is not C's last message"
    head = line_cheats.frame_info(disclose)
    abort = line_cheats.sign(
        SEED,
        CHEATER,
        "abort",
        head.match,
        s + 2,
        head.hash,
        ["equivocation", f"seat {HONEST} signed two messages for sequence {s + 1}", superseded_move, disclose],
    )
    forged = file_verdict(line_cheats.transcript_of([*cheater_line, abort]), "the audit of the cheater's file")
    assert not (forged.valid and forged.loser == HONEST), (
        f"{forged.text()} -- the line itself superseded seat {HONEST}'s move at {s + 1}: it is no equivocation"
    )
    problems = problems_if_cheater_wins(pair, HONEST, "stop")
    assert not problems, fail_text(problems)
