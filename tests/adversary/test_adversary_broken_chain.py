"""A broken chain is not a proven fault (adversary hole 3): a cheater that sends one move and keeps another
at the same sequence number in its own file must not make the honest player's next message look like the
honest player's fault. A message that does not link to the line is dropped and repaired, as the network's
faults are.
"""

from __future__ import annotations

import pytest
from in_memory import step_until

from koikoi.engine.match import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, parse, parse_resend
from koikoi.protocol.transcript import record
from koikoi.testing import fixed_key, make_pair, reforge, run_match

pytestmark = pytest.mark.net  # (in memory, but part of the adversary suite)


def test_a_cheater_cannot_frame_the_honest_player_with_a_broken_chain() -> None:
    """The cheater sends the honest player one move and keeps another, different move at the same
    sequence number in its own transcript (it signed both: equivocation, seen by nobody else). The
    honest player's next message chains to the move it received, so against the cheater's own line it
    "breaks the chain": the cheater's transcript must not audit as the honest player's proven fault."""
    seed = b"frame-chain"
    pair = make_pair(Settings(6, True), ("greedy", "greedy"), seed, move_time_s=10)
    _a, b = pair.sessions
    step_until(pair, lambda: b.referee.next_seq >= 10 and b.my_turn and not any(pair.queues))
    m = b.match
    assert m is not None
    acts = m.legal_actions()
    assert len(acts) >= 2, acts
    key = fixed_key(seed, 1)
    r = b.referee
    trial = m.copy()
    trial.apply(acts[1], 1)
    shown = reforge(r.msgs[-1].frame, key, type=MsgType.MOVE, seq=r.next_seq, prev=r.head_hash, seat=1,
                    action=acts[1].code, state_hash=trial.state_hash())  # fmt: skip
    pair.note(1, b.play(acts[0]))  # kept in the cheater's own line
    for rec in b.records():
        pair.files[1].extend(record(rec.frame))
    b.frames_to_send()  # never sent
    pair.queues[0].append(shown)  # the honest player sees another move
    pair.run(patience=120)
    cheat = audit(bytes(pair.files[1]))
    honest = audit(bytes(pair.files[0]))
    assert not (cheat.valid and cheat.result["winner"] == 1 and cheat.status in ("forfeit",)), (
        cheat.to_json("cheater"),
        honest.to_json("honest"),
    )


def test_a_move_that_does_not_link_is_dropped_and_repaired() -> None:
    """A modified client's move whose previous-message hash is wrong is dropped (it proves nothing: the
    relay cannot forge it, but its signer may hold another line); the real move is asked for again and the
    match completes."""
    sent = [False]

    def tamper(seat: int, i: int, frame: bytes) -> list[bytes]:
        if not sent[0] and seat == 0 and parse_resend(frame) is None and parse(frame).type is MsgType.MOVE:
            sent[0] = True
            return [reforge(frame, fixed_key(b"cheat", 0), prev=bytes(32))]
        return [frame]

    r = run_match(Settings(6), ("random", "random"), b"cheat", tamper=tamper)
    assert sent[0] and not r.stalled
    for s in r.sessions:
        assert s.ended is not None and s.ended.outcome.status == "complete", s.ended
    assert all(rep.valid and rep.status == "complete" for rep in r.audits())
