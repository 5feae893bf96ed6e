"""Attack (needs an honest relay restart between the cheater's end and its claim): the ENDED fork defence
(§7.4) undone, and the cheater's own file wins on time.

1. At its turn (SEQ n) the cheater sends RESIGN; the honest side takes it (wins) and signs ENDED.
2. On its own line the cheater plays a move X at n instead (a fork that waits for the honest seat).
3. The relay restarts (its rooms are restored, its witness clocks start afresh, nothing remembered).
4. The honest client reconnects and sends its ENDED (its last frame at the new relay).
5. The cheater sends, to the new relay, its own messages after the honest seat's last one P and its
   RESIGN (so the witness knows it sent them), then asks ``RESEND(match id, P.seq)``: the honest side answers
   P, the cheater's messages, the RESIGN, then ENDED. P is new to the restarted witness, the rest are the
   cheater's or repeats: the honest seat's last frame is now P — its last message on the fork.
6. The cheater sends X again, waits one move time, and gets a certificate of the honest seat's silence that
   fits its fork: last[honest] = P, last[cheater] = X. Its file: its line (… X), then TIMEOUT.

Harm: the cheater's transcript audits valid, ``on_time``, the cheater the winner; the honest file says the
cheater resigned.

Suggested fix: the witness state survives a restart (see test_attack_relay_restart.py); or a restored room
certifies nothing until each seat has sent a new frame *that is not a repeat of a frame the session holds*
(not checkable by the relay) — simplest is persistence. Session-side mitigation: after its line ended, a
lingering session answers with its ENDED only, plus the end message (the asker, whose end it is, holds the line).
"""

from __future__ import annotations

from in_memory import step_until

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, build, resend_frame
from koikoi.protocol.transcript import record
from koikoi.protocol.witness import SeatClock
from koikoi.testing import fixed_key, make_pair

HONEST, CHEAT = 0, 1
MOVE = 30
SEED = b"x10-restart-fork"


def test_a_fork_after_the_cheaters_own_end_never_wins_on_time_across_a_relay_restart() -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), SEED, move_time_s=MOVE)
    c, h = pair.sessions[CHEAT], pair.sessions[HONEST]
    step_until(pair, lambda: c.referee.next_seq >= 10 and c.my_turn and not any(pair.queues), 20_000)
    pair.silent[CHEAT] = True
    key = fixed_key(SEED, CHEAT)
    r = c.referee
    sid, n = r.sid, r.next_seq
    assert sid is not None
    p = r.last_of(HONEST)
    assert p is not None

    def to_honest(frame: bytes, *, ctl: bool = False) -> None:
        pair.inject(CHEAT, frame, ctl=ctl)
        while pair.queues[HONEST]:
            pair.receive_one(HONEST)
        pair.queues[CHEAT].clear()

    resign = build(key, MsgType.RESIGN, sid, n, r.head_hash, CHEAT, [])
    to_honest(resign)  # 1.
    assert h.ended is not None and h.ended.outcome.winner == HONEST
    bot = pair.bots[CHEAT]
    assert bot is not None
    fork: list[bytes] = []
    while c.my_turn:  # 2.
        c.play(bot.choose(c.view()))
        for rec in c.records():
            pair.files[CHEAT].extend(record(rec.frame))
        fork += c.frames_to_send()
    for f in fork:
        to_honest(f)
    w = pair.witness
    assert w is not None
    pair.now += 5
    w.clocks = (SeatClock(pair.now), SeatClock(pair.now))  # 3.
    pair.note(HONEST, h.reconnected())  # 4.
    pair.flush(HONEST)
    pair.queues[CHEAT].clear()
    for m in r.msgs[p.seq + 1 : n]:  # 5.
        to_honest(m.frame)
    to_honest(resign)
    to_honest(resend_frame(sid, p.seq), ctl=True)
    to_honest(fork[-1])  # 6.
    pair.now += MOVE + 1
    cert = w.certify(HONEST, pair.now)
    timeout = build(key, MsgType.TIMEOUT, sid, r.next_seq, r.head_hash, CHEAT, [cert, b""])
    rep = audit(bytes(pair.files[CHEAT]) + record(timeout))
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the cheater's forked file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending}"
    )
