"""Attack: a losing cheater leaves its seat in a way that makes its own address "refused by a limit since it
left", so relay/core.py ``_no_certificate`` says ``seat_locked_out`` about it: no ``certify`` answers and the
room's ``opponent_left`` closing carries no certificate. The cheater escapes every loss on time at will.

spec/relay.md ("Seats after a disconnect") names this as a stall ("or a cheater avoiding its own loss on time
that way"); this test shows how cheap it is: one message.

Steps (a modified client, an honest relay, an honest opponent):
1. The match is played normally; at one of its turns (losing, say) the cheater, instead of its move:
   ``oversized``: sends one message over the relay's size limit on its seat's connection. ``_admit`` counts
   the limit (``_limit``: ``addr.refused_at = now``) and kicks the connection (``_detach``: ``away_since =
   now``), so ``refused_at >= away_since``.
   ``guesses``: disconnects, then from its own address asks ``info`` about 10 made-up room codes (or opens a
   33rd connection: any limit does it).
2. It never comes back. The honest session asks for certificates: refused ``seat_locked_out``; after the
   grace the room closes ``opponent_left`` without a certificate; the honest client stops, the match
   unfinished.

Harm: issue 10's "a losing player escapes for free", at will, with no relay help: the guard against a
cheater *behind the same NAT* locking the honest seat out is also a cheater's own way out.

Suggested fix: a seat's own connection being cut for its own misbehaviour (size, rate, protocol) is no
reason to doubt its silence: count for ``seat_locked_out`` only refusals that could have kept a *returning*
holder out — connection-count and pre-handshake refusals, not failed attempts (a token holder is exempt from
those already) nor cuts of connections that were let in. Better still, let a connection over the per-address
connection cap in for one ``resume`` proving the seat's key (and close it otherwise), so that only the
pre-handshake limits remain, and bound how long those can excuse a seat (e.g. one ``connect_rate`` window).
"""

from __future__ import annotations

import pytest
from relay_world import IPS, World

from koikoi.protocol.framing import encode
from koikoi.protocol.session import MatchDecided

HONEST, CHEAT = 0, 1
MOVE = 20


@pytest.mark.parametrize("how", ["oversized", "guesses"])
def test_a_cheater_that_gets_its_own_address_refused_still_loses_on_time(how: str) -> None:
    w = World(b"x10h-self-lockout-" + how.encode(), MOVE)
    w.open()
    h, c = w.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None
    for _ in range(20_000):  # 1. the match goes on to a turn of the cheater, in play
        if cs.my_turn and cs.referee.next_seq >= 12 and not w.core.out:
            break
        assert w.step()
    c.silent = True
    core = w.core
    if how == "oversized":
        core.message(w.now, c.cid, b"\x00" * (core.cfg.max_frame_bytes + 1024))
    else:
        core.disconnected(w.now, c.cid)
        w.now += 1
        probe = w.connect_raw(IPS[CHEAT])
        for i in range(core.cfg.attempts_per_ip):
            core.message(w.now, probe, encode({"t": "info", "room": "WXYZ" + "34679"[i % 5]}))
        core.disconnected(w.now, probe)
    w.pump()
    c.cid = 0
    said = w.wait_as_client(h, w.now + core.cfg.grace + 10 * MOVE)  # 2. the honest client waits
    e = hs.ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"the cheater left at its turn ({how}) and never lost on time: the honest session ended {e}; the relay: {said}"
    )
