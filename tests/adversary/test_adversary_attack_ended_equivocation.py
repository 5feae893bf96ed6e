"""Attack: an honest seat's ENDED cited as half of an ``equivocation``.

When the cheater's end message (here a RESIGN) cuts back over two consecutive honest messages (the honest
seat sent its messages at SEQ s and s+1, e.g. a play then a koi-koi decision or a capture choice, and the
cheater signs RESIGN at SEQ s, PREV = message s-1, which both sides and the auditor accept: everything it
supersedes is the other seat's), the honest session takes it and signs ENDED at SEQ s+1 (spec §7.4). It has
now signed two different messages for SEQ s+1: its superseded move and its ENDED. The referee's equivocation
check (``Referee._evidence_problem``) never looks at the type, so the cheater writes its own transcript as
the line up to s+1 (its RESIGN left out) and then an ABORT naming ``equivocation`` with the honest move at
s+1 and the honest ENDED as evidence.

Harm: the cheater's file audits ``valid``, status ``forfeit``, the cheater the winner (the honest file says
the cheater resigned): two valid transcripts with opposite winners, the honest side "proven" a cheat by a
message the protocol made it sign. Spec §7.4 says an ENDED is never evidence.

Suggested fix: in ``_evidence_problem`` (and so in the session's pre-check), refuse an ENDED as either
evidence message (``e.type is MsgType.ENDED`` -> "an ENDED is never evidence"), for every code, equivocation
included; say so in §6.2 step 2/3.
"""

from __future__ import annotations

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, build, parse
from koikoi.protocol.transcript import record
from koikoi.testing import fixed_key, make_pair

SEED = b"x10-ended-equivocation"
HONEST, CHEAT = 0, 1


def test_an_honest_ended_is_never_half_of_an_equivocation() -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), SEED)
    c = pair.sessions[CHEAT]
    for _ in range(20_000):  # until the cheater's line ends with two honest messages, nothing in transit
        msgs = c.referee.msgs
        if len(msgs) >= 7 and msgs[-1].seat == HONEST and msgs[-2].seat == HONEST and not any(pair.queues):
            break
        assert pair.step()
    else:
        raise AssertionError("no two consecutive honest messages")
    pair.bots = (pair.bots[0], None)  # the cheater drives its seat by hand from here
    r = c.referee
    s = r.next_seq - 2
    honest_move = r.msgs[s + 1].frame
    key = fixed_key(SEED, CHEAT)
    pair.inject(CHEAT, build(key, MsgType.RESIGN, r.sid or b"", s, r.msgs[s - 1].hash, CHEAT, []))
    for _ in range(50):
        if not pair.step():
            break
    h = pair.sessions[HONEST].ended
    assert h is not None and h.outcome.winner == HONEST  # the honest side took the resignation
    pair.sessions[HONEST].reconnected()  # what it sends again: its ENDED last
    ended = [f for f in pair.sessions[HONEST].frames_to_send() if parse(f).type is MsgType.ENDED]
    assert ended, "the honest side signed no ENDED"
    ack = ended[0]
    assert parse(ack).seq == s + 1 and parse(honest_move).seq == s + 1
    # the cheater's own file: the line it holds (its RESIGN was never written there), then the ABORT
    abort = build(key, MsgType.ABORT, r.sid or b"", r.next_seq, r.head_hash, CHEAT,
                  ["equivocation", "two messages for one sequence number", honest_move, ack])  # fmt: skip
    forged_file = bytes(pair.files[CHEAT]) + record(abort)
    rep = audit(forged_file)
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the cheater's transcript audits {rep.status} (valid={rep.valid}), winner seat {rep.result['winner']}: "
        f"{rep.ending}"
    )
