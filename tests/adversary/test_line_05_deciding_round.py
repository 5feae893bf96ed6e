"""Issue 18, finding 5: a fault or silence in the match-deciding round decides it against the faulty seat.

``Referee.outcome`` today takes the engine's winner once the engine's match is over, before the last
round's disclosures are verified: a cheater that leads on points when the last round's play ends keeps its
win whatever it does at the disclosure — the ending names it the loser and the result the winner. The same
holds for a resignation in the RESULT phase of a shared match.

By construction: the cheater is the seat the engine names the winner when the match's play is over (seat 0
when the engine's match is drawn), and it cheats at its disclosure of that round:

- it never discloses (the honest seat claims its silence: ``on_time``);
- it discloses a body of the wrong shape (no secrets: ``bad_shape``, proven by the one message).

Required: no verdict names one seat both the winner and the loser; the faulty seat loses and the honest seat
wins (spec/sealed.md §9: no round is scored before both disclosures are verified).
"""

from __future__ import annotations

import line_cheats
import pytest
from line_judge import fail_text, problems_if_cheater_wins, verdicts

from koikoi.engine import Settings
from koikoi.testing import make_pair


def _leader_at_the_end(seen: line_cheats.Seen) -> bool:
    """The seat the engine names the winner of the played-out match (seat 0 for a drawn one)."""
    return seen.match_over and seen.seat == (seen.winner if seen.winner is not None else 0)


def test_silence_at_the_deciding_disclosure_loses_the_match() -> None:
    def install(mp: pytest.MonkeyPatch) -> line_cheats.Fired:
        return line_cheats.withhold(mp, "disclose", when=_leader_at_the_end)

    pair, fired, _ = line_cheats.play(install, Settings(6), b"issue 18 finding 5 silence")
    assert fired.cheater is not None
    problems = problems_if_cheater_wins(pair, 1 - fired.cheater, "silence at the deciding round's disclosure")
    assert not problems, fail_text(problems)


def test_a_malformed_deciding_disclosure_loses_the_match() -> None:
    def install(mp: pytest.MonkeyPatch) -> line_cheats.Fired:
        return line_cheats.cheat(mp, line_cheats.disclose_body([[]]), when=_leader_at_the_end)

    pair, fired, _ = line_cheats.play(install, Settings(6), b"issue 18 finding 5 shape")
    assert fired.cheater is not None
    problems = problems_if_cheater_wins(pair, 1 - fired.cheater, "malformed disclosure in the deciding round")
    assert not problems, fail_text(problems)


def test_a_resignation_in_the_result_phase_names_no_seat_both_winner_and_loser() -> None:
    """Shared deck: the engine's winner resigns once the match's play is over, before the RESULTs are both
    in. The first of a few seeds whose match the engine does not draw (a short documented search: a
    shared match is ≈ 50 ms)."""
    for i in range(8):
        pair = make_pair(Settings(6), ("greedy", "greedy"), seed=b"issue 18 finding 5 result/%d" % i)
        resigner: int | None = None
        while resigner is None and pair.step():
            for seat in (0, 1):
                s, m = pair.sessions[seat], pair.sessions[seat].match
                if m is not None and m.is_over and m.winner == seat and not s.is_finished:
                    pair.note(seat, s.resign())
                    pair.flush(seat)
                    resigner = seat
                    break
        if resigner is None:
            continue  # a drawn match (or it ended otherwise): the next seed
        pair.run()
        wrong = [
            v.text() for v in verdicts(pair, 1 - resigner) if v.valid and v.loser is not None and v.winner == v.loser
        ]
        assert not wrong, "a report names the resigner both the winner and the loser:\n  " + "\n  ".join(wrong)
        return
    raise AssertionError("no seed gave a match with an engine winner")
