"""Attack: the ENDED fork defence (§7.4) undone by an echo, and the cheater's own file wins on time.

1. At its turn (SEQ n) the cheater sends a RESIGN at n; the honest side takes it, wins, signs ENDED (its last
   frame at the relay).
2. On its own line the cheater plays a move X at n instead (a fork), so its line waits for the honest seat.
3. It makes the witness forget that it sent its RESIGN: 4097 junk frames evict it from its ``seen``
   (``SEEN_HASHES``) — or, with variant ``flagged``, it sent the RESIGN with the ``ctl`` flag in the first
   place, and the honest session applied it anyway (``receive(ctl=True)`` passes non-RESEND frames on).
4. It asks the (lingering) honest side ``RESEND(match id, n)``: the answer is the line from n, i.e. the
   cheater's RESIGN, then the honest ENDED. The RESIGN is no longer "a frame the other seat sent first", so
   the witness records it as the honest seat's *new last frame*; the ENDED is a repeat and changes nothing.
5. It sends X again (new again to the witness: evicted / never seen), waits one move time, asks a certificate
   of the honest seat's silence: last[honest] = hash(its own RESIGN), last[cheater] = hash(X).
6. Its file: its line (… X), then TIMEOUT citing its own RESIGN as the honest seat's "junk" last frame
   (§7.3 step 6: a frame that does not name the silent seat is junk).

Harm: the cheater's transcript audits ``valid``, ``on_time``, the cheater the winner, while the honest file
says the cheater resigned — the fork §7.4 was written to stop, won.

Suggested fix: (a) never apply a ``ctl`` frame (see test_attack_flagged_moves.py); (b) the echo rule must not
depend on a bounded memory the echoed seat can flush (see test_attack_echo_eviction.py); and/or (c) in
§7.3 step 6, a cited junk frame that is a message validly signed by the *claimer* (of any match) is not junk
the silent seat sent: an honest seat never sends the claimer's messages as its own except as an echo, so
such a frame proves nothing about the silent seat (``_junk``: also return False when the frame verifies with
the claimer's key). (c) alone closes this win; (a)+(b) close the stalls.
"""

from __future__ import annotations

import pytest
from in_memory import step_until

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, build, resend_frame
from koikoi.protocol.transcript import record
from koikoi.protocol.witness import SEEN_HASHES
from koikoi.testing import fixed_key, make_pair

HONEST, CHEAT = 0, 1
MOVE = 30


@pytest.mark.parametrize("variant", ["junk_flood", "flagged"])
def test_a_fork_after_the_cheaters_own_end_never_wins_on_time(variant: str) -> None:
    seed = b"x10-fork-echo-" + variant.encode()
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed, move_time_s=MOVE)
    c, h = pair.sessions[CHEAT], pair.sessions[HONEST]
    step_until(pair, lambda: c.referee.next_seq >= 10 and c.my_turn and not any(pair.queues), 20_000)
    pair.silent[CHEAT] = True  # the cheater sends only what it injects by hand
    key = fixed_key(seed, CHEAT)
    r = c.referee
    sid, n = r.sid, r.next_seq
    assert sid is not None

    def to_honest(frame: bytes, *, ctl: bool = False) -> None:
        pair.inject(CHEAT, frame, ctl=ctl)
        while pair.queues[HONEST]:
            pair.receive_one(HONEST)
        pair.queues[CHEAT].clear()  # the cheater reads nothing more

    resign = build(key, MsgType.RESIGN, sid, n, r.head_hash, CHEAT, [])
    to_honest(resign, ctl=variant == "flagged")  # 1.
    if h.ended is None:
        assert variant == "flagged"  # a flagged frame was not applied: nothing to fork from (the defence)
        return
    assert h.ended.outcome.winner == HONEST
    bot = pair.bots[CHEAT]
    assert bot is not None
    fork: list[bytes] = []
    while c.my_turn:  # 2. the fork: its own move(s) at n, on its own line only
        c.play(bot.choose(c.view()))
        for rec in c.records():
            pair.files[CHEAT].extend(record(rec.frame))
        fork += c.frames_to_send()
    for f in fork:
        to_honest(f)
    if variant == "junk_flood":  # 3.
        for i in range(SEEN_HASHES + 1):
            to_honest(b"\xc1junk" + i.to_bytes(4, "big"))
    pair.now += 1
    to_honest(resend_frame(sid, n), ctl=True)  # 4.
    to_honest(fork[-1])  # 5.
    pair.now += MOVE + 1
    assert pair.witness is not None
    cert = pair.witness.certify(HONEST, pair.now)
    timeout = build(key, MsgType.TIMEOUT, sid, r.next_seq, r.head_hash, CHEAT, [cert, resign])  # 6.
    rep = audit(bytes(pair.files[CHEAT]) + record(timeout))
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the cheater's forked file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending}"
    )
