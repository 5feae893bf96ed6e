"""Attack: a resumed side that lost its file's tail "decides nothing" (14e628e, ``_lost_own``) — but it still
signs an ABORT when the opponent sends it a provable fault, at the sequence number of the message it lost:
two messages of its own for one SEQ, a proven equivocation in the cheater's file.

1. The honest seat sends its move s at SEQ p; the cheater takes it. The honest file loses s (a restored
   backup); it resumes (``from_transcript``, line at p) and ``reconnected(...)`` with the relay's word: resyncing,
   deciding nothing until s comes back.
2. The cheater sends a message it signed for SEQ p that is provably wrong on the honest line (here s itself
   signed again as the cheater's: a MOVE out of turn at p; any illegal move or desync would do).
3. The honest session, resyncing or not, takes it as the next message, finds ``out_of_turn`` (provable) and
   sends an ABORT at SEQ p citing it — a valid, proven ABORT on its own (truncated) line.
4. The cheater's (unmodified) session now holds s and that ABORT: two messages of the honest seat for SEQ p
   (``_accept_end``: the cut's first message is the sender's own) — ``equivocation``, proven; it sends its
   ABORT citing both. Its file audits ``valid``, ``forfeit``, cheater the winner; both messages really are
   the honest key's, so no third party can tell it apart from a real equivocation.

Harm: an honest player who restored a backup loses by forfeit to an opponent that sends one bad message —
the loss §8 and ``_lost_own`` were written to prevent, through the one thing a resyncing session still signs.

The fix: while its own lost messages are missing, a session signs no ABORT (the offending frame is kept)
and no RESIGN. The relay's copy of the last frame gives back only the last lost message, so the test loses
two (one turn of two messages): the first stays missing, withheld.
"""

from __future__ import annotations

from in_memory import step_until

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, parse
from koikoi.protocol.session import Session
from koikoi.protocol.transcript import encode_transcript, parse_transcript
from koikoi.testing import fixed_key, make_pair, reforge

HONEST, CHEAT = 0, 1
MOVE = 20


def test_a_resumed_side_that_lost_its_tail_never_signs_a_second_message_for_that_seq() -> None:
    seed = b"x10c-tail-abort"
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed, move_time_s=MOVE)
    h, c = pair.sessions[HONEST], pair.sessions[CHEAT]
    w = pair.witness
    assert w is not None

    def honest_moved_twice() -> bool:  # two messages of one turn: the relay keeps a copy of the last only
        m = h.referee.msgs
        return len(m) >= 12 and m[-1].seat == m[-2].seat == HONEST and m[-1].type is m[-2].type is MsgType.MOVE

    step_until(pair, honest_moved_twice)
    s = h.referee.msgs[-2]
    p = s.seq
    pair.silent[HONEST] = True  # the honest machine goes down right after sending s
    pair.silent[CHEAT] = True  # the cheater sends only what the test injects
    while pair.step():
        pass
    assert c.referee.msgs[p].frame == s.frame
    kept = parse_transcript(bytes(pair.files[HONEST])).frames[:p]  # 1. the restored backup lost s and the next
    resumed = Session.from_transcript(fixed_key(seed, HONEST), kept)
    pair.sessions = (resumed, c)
    pair.files[HONEST][:] = encode_transcript(kept)
    pair.silent[HONEST] = False
    # the relay's copies give back the newest lost message only: the earlier copy was pushed out (the relay
    # keeps 32 frames of a seat, and answers to requests for old messages count)
    pair.note(HONEST, resumed.reconnected(own_frames=[h.referee.msgs[-1].frame]))
    pair.flush(HONEST)
    assert resumed.resyncing and resumed.referee.next_seq == p  # the relay's copy (p + 1) waits for s

    bad = reforge(s.frame, fixed_key(seed, CHEAT), seat=CHEAT)  # 2. a MOVE of the cheater at p: out of turn
    pair.inject(CHEAT, bad)
    while pair.step():  # 3. the honest side answers; 4. the cheater's session takes what it sent
        pass
    signed_at_p = [f for f in parse_transcript(bytes(pair.files[HONEST])).frames if parse(f).seq == p]
    rep = audit(bytes(pair.files[CHEAT]))
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the resumed honest side signed {[parse(f).type.label for f in signed_at_p]} at SEQ {p}, where its lost"
        f" move is; the cheater's file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending}"
    )
