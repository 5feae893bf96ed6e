"""Attack (issue 18, the junk rule of spec/protocol.md §7.3 step 6): a seat-1 cheater's stop that crosses the
honest seat 0's stop makes seat 0's standing DISCLOSE "junk", and seat 0 is certified silent where its own
line never waits for it.

The line's rule (spec/sealed-line.md §2): of two stops that cross, seat 0's stands and seat 1 then discloses
after it. ``Referee._accept_stop_cut`` applies it: seat 1's DISCLOSE at a SEQ holding seat 0's DISCLOSE is
dropped (``replay``). But ``Referee._off_the_line`` calls a message of the silent seat junk when "the line
holds the other seat's DISCLOSE at its SEQ, after the same PREV" — without asking whether that DISCLOSE could
stand there: a seat-0 DISCLOSE under a seat-1 stop is the stop that stands, not a message the stop took the
place of.

The play. The cheater is K of round 1 (seat 1), the honest dealer O is seat 0. K sends a wrong key for O's hand in its
LOCK (``test_attack18_redeal_stop``'s cheat, which no proof covers: only O's key opens it), so O's secrets
see the fault and O stops at once: its DISCLOSE at sequence k+1, PREV = K's LOCK. K, having read O's stop,
signs a DISCLOSE of its own for k+1 with the same PREV (a "stop" it pretends crossed O's). O's line drops it
(seat 0's stands) and waits for K's disclosure at k+2. Then O's connection drops for one move time (nobody's
fault; in O's line it is K's turn, so O's absence costs it nothing). K's file: … LOCK, K's DISCLOSE (k+1),
TIMEOUT (k+2) with the relay's honest certificate (O silent for the move time, O's last frame its DISCLOSE)
citing O's DISCLOSE as junk. The auditor takes it: **O loses on time** in K's file, while O's own file, once
O is back, says K lost on time. One match, two valid files with opposite winners, made by the cheater.

Suggested fix: in ``Referee._off_the_line`` (and spec/protocol.md §7.3 step 6) the held DISCLOSE must be one
that could take ``m``'s place: not when ``m`` is itself a DISCLOSE of seat 0 and the held one seat 1's
(``held.seat == 1 and m.type is DISCLOSE`` → not junk), i.e. exactly the check ``_accept_stop_cut`` makes.
"""

from __future__ import annotations

import line_cheats
import pytest
from in_memory import step_until
from line_judge import file_verdict
from test_attack18_redeal_stop import _forge_redeal

from koikoi.engine import Settings
from koikoi.protocol.messages import MsgType, build, parse
from koikoi.protocol.sealed import round_secret
from koikoi.protocol.sealed_line import SealedSeat
from koikoi.testing import fixed_key, make_pair

SEED = b"attack18b seat0 stop junk/4"  # the first (counting up) that makes seat 0 round 1's dealer: asserted below
HONEST, CHEATER = 0, 1


def test_a_seat0_stop_is_no_junk_under_a_seat1_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed=SEED, deck="sealed")
    step_until(pair, lambda: all(s.referee.sealed is not None for s in pair.sessions))
    sl = pair.sessions[HONEST].referee.sealed
    assert sl is not None and sl.dealer == HONEST, "the seed must make seat 0 round 1's dealer"
    _forge_redeal(monkeypatch, CHEATER)

    def honest_stop_in_transit() -> bool:
        q = pair.queues[CHEATER]
        return bool(q) and parse(q[0]).type is MsgType.DISCLOSE and parse(q[0]).seat == HONEST

    step_until(pair, honest_stop_in_transit)
    o_stop = pair.queues[CHEATER].popleft()  # the cheater's client reads it; its line never takes it
    stop = parse(o_stop)
    assert pair.sessions[HONEST].referee.msgs[stop.seq - 1].type is MsgType.LOCK, "O's stop answers K's LOCK"

    # K signs its own "crossing" stop: its round secrets for the attempts begun before k+1, the same PREV
    k_ref = pair.sessions[CHEATER].referee
    k_line = k_ref.sealed
    assert isinstance(k_line, SealedSeat)
    begun = sum(x.type is MsgType.SHUFFLE for x in k_ref.msgs[k_ref._round_from : stop.seq])
    secrets = [round_secret(k_line._secret, k_line.round, n) for n in range(begun)]
    assert k_ref.sid is not None
    k_stop = build(fixed_key(SEED, CHEATER), MsgType.DISCLOSE, k_ref.sid, stop.seq, stop.prev, CHEATER, [secrets])
    pair.silent[CHEATER] = True  # the cheater's session sends nothing more on its own
    pair.inject(CHEATER, k_stop)
    pair.silent[HONEST] = True  # O's link drops: nothing reaches the relay from it for a while
    while pair.queues[HONEST]:
        pair.receive_one(HONEST)
    o_ref = pair.sessions[HONEST].referee
    assert o_ref.msgs[stop.seq].frame == o_stop, "O's stop stands in O's line (seat 0's stands)"
    want = o_ref.expected()
    assert want is not None and want[0] == CHEATER, "O's line waits for K"

    # one move time later K claims O's silence with the relay's honest certificate, citing O's stop as junk
    assert pair.witness is not None and o_ref.move_time_s is not None
    pair.now += o_ref.move_time_s + 1
    blob = pair.witness.certify(HONEST, pair.now)
    k_frames = [f for f in line_cheats.line_frames(pair, CHEATER) if parse(f).seq < stop.seq]
    claim = build(
        fixed_key(SEED, CHEATER), MsgType.TIMEOUT, k_ref.sid, stop.seq + 1, parse(k_stop).hash, CHEATER,
        [blob, o_stop],
    )  # fmt: skip
    k_file = line_cheats.transcript_of([*k_frames, k_stop, claim])
    v = file_verdict(k_file, "the audit of the cheater's file")

    # O comes back and, K silent, claims in its own line
    pair.silent[HONEST] = False
    pair.run()
    pair.flush(HONEST)
    h = file_verdict(bytes(pair.files[HONEST]), "the audit of the honest seat's file")
    assert not (v.valid and v.loser == HONEST), (
        f"{v.text()} -- seat 0's standing stop cited as junk: the honest seat loses on time where its line "
        f"never waited for it (and {h.text()})"
    )
