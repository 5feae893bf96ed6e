"""Attack (a stall the spec does not name): after a relay restart, an awaited cheater sends the honest seat's
newest message first, as its own frame; the witness then never records the honest seat's last frame again,
and no certificate can ever prove the cheater's silence.

1. The line waits for the cheater. The relay restarts (its witness starts afresh: spec §12 names only "a seat
   awaited across the restart that never sends a frame again").
2. The cheater, first to reconnect, sends the honest seat's newest message m (it holds it) without the flag.
   It is new to the fresh witness: recorded as the cheater's frame.
3. The honest side reconnects: ``reconnected()`` sends its last frame m again, unflagged — but m is now
   "among the other seat's recent frames and not among this seat's" (spec/relay.md): nothing at all. Every
   other frame the honest side ever sends goes flagged (it is awaiting, it sends only RESENDs), so its last
   frame stays empty for ever.
4. The cheater sends its own last message again (new to the fresh witness) and falls silent.
5. Every certificate now names last[honest] = empty: §7.3 step 5 fails (the claimer has messages in the line),
   so the honest side can never claim. The cheater, awaited, silent, never loses.

Harm: a losing cheater stalls any match for ever after any relay restart (and keeps it resumable), with
frames it is allowed to send; spec §12 says a seat that comes back and sends frames is clocked from there.

The fix: the witness has no echo rule any more. An honest client sends the other seat's messages only
flagged (in answers), so the first unflagged sender of a message is not always its signer, but the
honest seat's re-send of its own message is new to its own seat and becomes its last frame; and a seat whose
last frame is the other seat's message sent it unflagged itself: the claim cites it as junk (§7.3 step 6).
Both ends are tested: the cheater sends its own last message again after the echo (4.), or stops at the echo.
"""

from __future__ import annotations

import pytest

from koikoi.engine import Settings
from koikoi.protocol.session import MatchDecided
from koikoi.testing import Witness, make_pair, seat_keys, witness_key

HONEST, CHEAT = 0, 1
MOVE = 10


@pytest.mark.parametrize("then_own", [True, False])
def test_an_awaited_cheater_echoing_the_honest_message_after_a_relay_restart_still_loses_on_time(
    then_own: bool,
) -> None:
    seed = b"x10b-restart-echo"
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed, move_time_s=MOVE)
    c, h = pair.sessions[CHEAT], pair.sessions[HONEST]
    for _ in range(20_000):
        if c.referee.next_seq >= 12 and c.my_turn and not any(pair.queues):
            break
        assert pair.step()
    pair.silent[CHEAT] = True
    m = h.referee.last_of(HONEST)
    own = c.referee.last_of(CHEAT)
    assert m is not None and own is not None and h.referee.expected() == (CHEAT, h.referee.expected()[1])  # type: ignore[index]
    pair.now += 1
    pair.witness = Witness(
        witness_key(seed), "TEST-ROOM", MOVE, seated_at=pair.now, seat_keys=seat_keys(seed)
    )  # 1. the relay restarts
    pair.inject(CHEAT, m.frame)  # 2. the honest seat's newest message, as the cheater's frame
    pair.reconnect()  # 3. the honest side sends its last frame again (the silent cheater's session sends nothing)
    if then_own:
        pair.inject(CHEAT, own.frame)  # 4.
    t_end = pair.now + 20 * MOVE
    while pair.now < t_end and not h.is_finished:
        if pair.step():
            continue
        if not pair.tick():
            pair.now += 1
    e = h.ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"20 move times after the restart the awaited cheater is still not certified silent "
        f"(last frames {pair.witness.last}): {e}"
    )
