"""Attack: after a redeal, a dealer that stops right after K's new SHUFFLE gets the HONEST K blamed
(``bad_shape``, "one secret per deal") by the verification — K's own and the auditor's.

Attack. In verify_line_round (protocol/sealed_line.py) a round stopped at step 1 of an attempt checks
that shuffle alone and ``break``s *without* counting the attempt in ``steps``; then it requires each seat
to have disclosed exactly ``len(steps)`` secrets. But an honest K discloses one secret per attempt it
started (``len(r.attempts)``), including the one its SHUFFLE began. So in any round with a redeal, O (the
cheater) simply discloses (a stop) on receiving K's SHUFFLE of the new attempt: K discloses its two round
secrets, as it must, and the verification names K: ``bad_shape``, K's proven fault, whatever O disclosed.

Harm. Goal (1): a proven fault is put on the honest seat (mis-attribution). The honest seat's own referee
then waits for the cheater's ABORT "proving" it (spec/sealed-line.md §3); the auditor's SealedObserver
computes the same verdict, so a transcript ends with the honest seat as the round's faulty seat. Redeals
happen in ≈0.4 % of rounds (≈5 % of 12-round matches): the cheater just waits for one. (In the session,
the generic ``bad_shape`` evidence path cannot prove it with one message, so the final outcome there is a
stuck line awaiting an ABORT that proves nothing — see the report; the verdict itself is wrong.)

Suggested fix. In verify_line_round, count the attempt stopped at step 1: compare disclosures with the
number of attempts begun (``len(steps) + 1`` in that branch), or check the step-1-only attempt's secret
from ``ks[len(steps)]`` and then accept K's list of length ``len(steps) + 1`` and O's of either length.
Add a test with a redeal followed by a stop at each step of the next attempt.
"""

from __future__ import annotations

import hashlib

from koikoi.engine import Settings
from koikoi.protocol.sealed import round_secret
from koikoi.protocol.sealed_line import LineKind, Sent
from koikoi.testing import run_pair

N = 252  # secrets whose round 1 (seat 0 deals) is redealt: four of a month on the table
SK = hashlib.sha256(b"x11k%d" % N).digest()  # seat 1, K, honest
SO = hashlib.sha256(b"x11o%d" % N).digest()  # seat 0, O, the cheater


def test_a_stop_after_the_redeal_shuffle_blames_the_honest_shuffler() -> None:
    seats, line = run_pair(
        Settings(6),
        0,
        (SO, SK),
        until=lambda ln: sum(m.kind is LineKind.SHUFFLE for m in ln) == 2,
    )
    assert [m.kind for m in line].count(LineKind.SHUFFLE) == 2  # the first attempt was redealt
    k = seats[1]
    # O stops: it discloses both attempts' round secrets, truthfully
    k.receive(Sent(0, LineKind.DISCLOSE, ([round_secret(SO, 1, 0), round_secret(SO, 1, 1)],)))
    out = k.pending()
    assert [m.kind for m in out] == [LineKind.DISCLOSE]
    v = k.verdicts[-1]
    assert v.loser != 1, f"the honest K is the loser: {v.fault}"
