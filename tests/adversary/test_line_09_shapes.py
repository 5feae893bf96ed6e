"""Issue 18, finding 9: shapes at the door (spec/protocol.md §2.2).

- A SHUFFLE point of 31, 33 or 700 bytes is a field of the wrong size: ``bad_shape``, the signer's fault
  proven by that one message, at once. Today it is taken and only forfeited later, after a stop and both
  disclosures, as ``bad_point``.
- An ABORT whose ``evidence`` is over 30 KiB breaks the envelope's field rule (§2.2: each at most 30 KiB):
  ``malformed_message``, dropped as any frame a relay could have damaged, never a line's message. Today it
  is accepted as an end and counted as its sender's resignation (``unproven_abort``), and a file holding it
  audits valid.

By construction: the cheater is round 1's K (the seat that shuffles first); it sends the oversized ABORT at
its first chance once the deal has begun and nothing is in transit.
"""

from __future__ import annotations

import line_cheats
import pytest
from line_judge import fail_text, file_verdict, problems_if_cheater_wins, verdicts

from koikoi.engine import Settings
from koikoi.protocol.session import FrameDropped
from koikoi.testing import make_pair

POINTS = {"31 bytes": 31, "33 bytes": 33, "700 bytes": 700}


@pytest.mark.parametrize("name", list(POINTS))
def test_a_wrong_sized_shuffle_point_is_bad_shape_at_once(name: str) -> None:
    def install(mp: pytest.MonkeyPatch) -> line_cheats.Fired:
        return line_cheats.cheat(mp, line_cheats.shuffle_point(5, bytes([0x42]) * POINTS[name]))

    pair, fired, _ = line_cheats.play(install, Settings(12), b"issue 18 finding 9 point")
    assert fired.cheater is not None
    honest = 1 - fired.cheater
    problems = problems_if_cheater_wins(pair, honest, f"shuffle point of {name}")
    own, mine, _ = verdicts(pair, honest)
    for v in (own, mine):
        if v.valid and v.code != "bad_shape":
            problems.append(f"{v.text()} -- a {name} point must be bad_shape at once, proven by that one message")
    assert not problems, fail_text(problems)


def test_an_abort_with_evidence_over_30_kib_is_a_malformed_message() -> None:
    seed = b"issue 18 finding 9 evidence"
    cheater, honest = 1, 0
    pair = make_pair(Settings(12), ("greedy", "greedy"), seed=seed, deck="sealed")
    while not (len(line_cheats.line_frames(pair, honest)) >= 8 and not any(pair.queues)):
        assert pair.step(), "the match stopped before the deal"
    line = line_cheats.line_frames(pair, honest)
    head = line_cheats.frame_info(line[-1])
    evidence = bytes(30 * 1024 + 1)
    abort = line_cheats.sign(
        seed, cheater, "abort", head.match, head.seq + 1, head.hash, ["illegal_move", "no", evidence, b""]
    )
    pair.inject(cheater, abort)
    pair.run()
    problems: list[str] = []
    dropped = [e.code for e in pair.events[honest] if isinstance(e, FrameDropped)]
    if "malformed_message" not in dropped:
        problems.append(
            f"the honest session did not drop the ABORT as malformed_message (dropped: {dropped or 'nothing'}); "
            f"{verdicts(pair, honest)[0].text()}"
        )
    forged = file_verdict(line_cheats.transcript_of([*line, abort]), "the audit of a file ending with that ABORT")
    if forged.valid or "malformed_message" not in forged.errors:
        problems.append(f"{forged.text()} -- the record is a malformed_message: the file is not valid")
    assert not problems, fail_text(["an ABORT with 30 KiB + 1 of evidence is taken as a message:", *problems])
