"""Attack: an awaited cheater wins on time on a fork of its own consecutive moves, one message of which it
sends *ahead* of the honest line ("signed messages ahead of the line", spec §12's named stall) — the stall
becomes a false WIN, no relay help, no network fault.

1. At its turn (SEQ i), when its turn takes two or more messages (play a card, then capture choice / draw
   / koi-koi decision), the cheater signs its moves c_i, c_{i+1}, … on its own line, so that line waits for
   the honest seat; it sends the honest side only the LAST of them, unflagged (never c_i).
2. The honest side buffers it (ahead of its line, SEQ i+1 while it waits for SEQ i) and asks RESEND(id, i).
   The witness records the cheater's frame as new: the cheater "spoke last".
3. The cheater answers each request with that same frame again, unflagged: a repeat of its last new frame
   counts as an answer to the witness (spec/relay.md), so the honest seat is never "waiting"; its requests
   move its silence on by at most 2 move times.
4. After 3 move times the witness certifies the honest seat silent: last[cheater] = the fork's last message,
   last[honest] = the honest seat's newest message. On the cheater's forked line every step of §7.3 holds
   (4: it waits for the honest seat; 5: last[cheater] is its last message; 6: the honest seat's newest
   message is in the line). The cheater's TIMEOUT: its file audits ``valid``, ``on_time``, cheater winner.
   The honest side cannot claim first: the cheater's last frame is no message of its line, nor junk
   (a signed message ahead of the line: §7.3 step 6), so its certificates are rejected.

Harm: a modified client wins any match where it has a multi-message turn (most turns): the honest seat,
which did nothing wrong, loses on time in the cheater's transcript, and the audit certifies it.

The flaw: a repeat of a seat's last new frame counts, to the witness, as an answer to the other seat's
request (so the requester is never "waiting"), while the claimer's line may hold messages the requester
never got. The fix (certificate version 2, spec/protocol.md §7.3 step 6b): the certificate lists the
claimer's last distinct frames the relay received, and a claim fits only when each of the claimer's
messages after the silent seat's last one is among them; the fork's first message was never sent.
"""

from __future__ import annotations

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.testing import make_pair

HONEST, CHEAT = 0, 1
MOVE = 20


def test_a_cheater_forking_its_multi_message_turn_never_wins_on_time() -> None:
    seed = b"x10b-ahead-fork"
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed, move_time_s=MOVE)
    c, h = pair.sessions[CHEAT], pair.sessions[HONEST]
    bot = pair.bots[CHEAT]
    assert bot is not None
    first = None
    for _ in range(20_000):
        if c.my_turn and not any(pair.queues) and c.referee.next_seq >= 10:
            m = c.referee.match
            assert m is not None
            a = bot.choose(c.view())
            trial = m.copy()
            trial.apply(a, CHEAT)
            if not trial.is_over and trial.to_move == CHEAT:
                first = a  # a turn of two or more messages
                break
            pair.note(CHEAT, c.play(a))
            pair.flush(CHEAT)
            continue
        assert pair.step()
    assert first is not None
    pair.silent[CHEAT] = True  # from here the cheater sends only what it injects by hand
    i = c.referee.next_seq
    fork: list[bytes] = []
    pair.note(CHEAT, c.play(first))  # 1. the fork, on its own line only
    fork += c.frames_to_send()
    while c.my_turn:
        pair.note(CHEAT, c.play(bot.choose(c.view())))
        fork += c.frames_to_send()
    pair.flush(CHEAT)  # its file holds the fork
    assert len(fork) >= 2 and c.referee.expected() is not None and c.referee.expected()[0] == HONEST  # type: ignore[index]
    pair.inject(CHEAT, fork[-1])  # 2. only the last, ahead of the honest line
    t_end, again = pair.now + 6 * MOVE, pair.now + MOVE / 4
    while pair.now < t_end and not c.is_finished and not h.is_finished:
        if pair.now >= again:
            pair.inject(CHEAT, fork[-1])  # 3. "answers" every request with the same frame
            again = pair.now + MOVE / 4
        if pair.step():
            continue
        pair.now = min(again, pair.now + 1)
        pair.tick()
    assert h.referee.next_seq == i, "the honest side never got the fork's first message"
    rep = audit(bytes(pair.files[CHEAT]))
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the cheater's forked file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending};"
        f" honest side: {h.ended}"
    )
