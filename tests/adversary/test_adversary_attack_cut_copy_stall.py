"""Attack (9bcadc4, the relay's copies of a seat's recent frames; protocol/session.py ``reconnected``): a
resumed session takes every message of its own among the relay's copies that is not in its line for one
its file LOST, and waits (``_lost_own``: signs nothing) until its line holds the newest of them. In a sealed
match a stop's DISCLOSE cuts the other seat's messages it crossed (spec/sealed-line.md §2): after the cut they
are no longer in that seat's line — though its file, and the relay's copies, hold them. A resumed session then
waits for a message that can never be in its line again, for ever, and loses on time.

1. Sealed match. The cheater (seat 0) lets the honest seat send a message at SEQ s, then signs a stop (a valid
   DISCLOSE) for SEQ s, as if it had not seen it (a crossing stop: legal, and it stands: seat 0's). The honest
   session rebuilds its line without its message s, discloses, verifies (``unfounded_stop``, the cheater's
   forfeit) and signs its ABORT — writing each record before sending.
2. The honest machine goes down while writing that last record (its ABORT: the file's torn final record,
   dropped on resume, "it cannot have been sent" — spec/protocol.md §8 tolerates exactly this). Its file
   holds its cut message s, the cheater's stop and its own DISCLOSE, all valid.
3. It resumes: ``from_transcript``, then ``reconnected(own_frames=…)`` with the relay's true copies. Its cut
   message s is "ours, this match, signed, not in the line": taken for a lost message; ``_receive`` ignores
   it (already seen), and ``_lost_own`` = its hash is never in the line again. The session never decides: no
   ABORT, no RESIGN, nothing.
4. The cheater's unmodified session, whose line now waits for the honest ABORT, asks for a certificate after
   the move time (the honest requests extend it 2 move times at most) and sends the TIMEOUT: its file audits
   ``valid``, ``on_time``, cheater the winner — a win by a cheater whose stop was unfounded.

Harm: a loss on time for an honest seat that should have won by forfeit, after a crash at one moment (rare),
from a cheater's crossing stop (or an honest one that crossed a message by chance). The same holds for any
copy of an own message the line no longer holds.

The fix (protocol/session.py ``reconnected``): a copy is a lost message only when the transcript never held
it and its SEQ is not behind the line (a cut message is in the file: not lost).
"""

from __future__ import annotations

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, build, parse
from koikoi.protocol.sealed import round_secret
from koikoi.protocol.sealed_line import SealedSeat
from koikoi.protocol.session import Session
from koikoi.protocol.transcript import encode_transcript, parse_transcript
from koikoi.testing import fixed_key, make_pair

SEED = b"x10d cut copy stall"
CHEATER, HONEST = 0, 1
MOVE = 20


def test_a_resumed_side_never_waits_for_its_own_cut_message() -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed=SEED, deck="sealed", move_time_s=MOVE)
    cheater = pair.sessions[CHEATER]
    w = pair.witness
    assert w is not None
    for _ in range(10_000):
        msgs = cheater.referee.msgs
        if len(msgs) > 8 and msgs[-1].seat == HONEST and not pair.queues[HONEST] and not pair.queues[CHEATER]:
            break
        assert pair.step()
    msgs = cheater.referee.msgs
    s = len(msgs) - 1  # 1. the honest seat's latest message, in the cheater's hands
    cut = msgs[s].frame
    sid = cheater.referee.sid
    sl = cheater.referee.sealed
    assert sid is not None and isinstance(sl, SealedSeat)
    secrets = [round_secret(sl._secret, sl._round.number, n) for n in range(len(sl._round.attempts))]
    stop = build(fixed_key(SEED, CHEATER), MsgType.DISCLOSE, sid, s, msgs[s - 1].hash, CHEATER, [secrets])
    cheater.receive(stop)  # (its own session takes its stop: it cuts the honest message s there too)
    assert cheater.referee.msgs[s].frame == stop
    pair.silent[HONEST] = True  # the honest machine writes, and goes down before it sends
    pair.inject(CHEATER, stop)
    while pair.step():
        pass
    frames = parse_transcript(bytes(pair.files[HONEST])).frames
    assert cut in frames and parse(frames[-1]).type is MsgType.ABORT, "the honest side did not forfeit the cheater"
    kept = frames[:-1]  # 2. its ABORT was the torn final record
    own_frames = list(w.clocks[HONEST].copies.values())  # the relay's true copies
    assert cut in own_frames
    resumed = Session.from_transcript(fixed_key(SEED, HONEST), kept)  # 3.
    pair.sessions = (cheater, resumed)
    pair.files[HONEST][:] = encode_transcript(kept)
    pair.silent[HONEST] = False
    pair.note(HONEST, resumed.reconnected(own_frames=own_frames))
    t_end = pair.now + 6 * MOVE  # 4.
    while pair.now < t_end and not (resumed.is_finished and cheater.is_finished):
        if not pair.step():
            pair.now += 0.5
            pair.tick()
    rep = audit(bytes(pair.files[CHEATER]))
    assert not (rep.valid and rep.result.get("winner") == CHEATER), (
        f"the cheater's file audits {rep.status}, winner seat {rep.result.get('winner')}: {rep.ending}; the"
        f" resumed side: resyncing {resumed.resyncing}, ended {resumed.ended}"
    )
