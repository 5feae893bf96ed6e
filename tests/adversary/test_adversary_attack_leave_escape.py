"""Attack: a losing cheater sends the relay ``{"t": "leave"}`` (or ``leave`` with ``done: true``) in the middle
of the match; the relay closes the room at once (``opponent_quit`` / ``match_over``) with no certificate, keeps
a tombstone that refuses every ``resume``, and the honest side can never win on time: the match it was winning
stays unfinished for ever.

Steps (a modified client, an honest relay, an honest opponent):
1. The match is played normally; at one of its turns (losing, say) the cheater sends ``leave`` instead of its
   move. relay/core.py ``_on_leave`` closes the room: ``room_closed`` to the honest seat, reason
   ``opponent_quit`` (``match_over`` with ``done: true``, which the relay takes on the leaver's word), and
   ``_close_room`` attaches a certificate only for ``opponent_left``.
2. The honest client (client/match_loop.py ``_room_closed``): no certificate, so it takes its seat back;
   the ``resume`` gets the tombstone's ``room_closed`` error, again without a certificate; ``_gave_up``
   stops the match unfinished ("nobody wins"). Its session is never given a certificate; ``certify`` has no
   room to answer from.

Harm: issue 10's "a losing player escapes for free", with one control message and no relay help; spec/protocol.md
§12 says a modified client may "stall, leave, or resign at any time: the first two end the match on time (with
a certificate)" — ``leave`` does not. (``done: true`` is also a false "the match is over" the relay believes.)

Suggested fix: a ``leave`` from a seat of a room both seats took (and, for ``done``, unless the other seat
said ``done`` too) is a disconnect, not a close: the seat goes away, the other seat is told ``peer away``, and
the grace period runs as for a lost connection, ending in ``opponent_left`` with its certificate; or the relay
keeps the room open for ``certify`` until the leaver's silence can be certified. An honest client leaves only
when its match has ended, and then the other side has ended too (or will, by the same certificate).
"""

from __future__ import annotations

from typing import Any

import pytest
from relay_world import World

from koikoi.protocol.framing import encode
from koikoi.protocol.session import MatchDecided

HONEST, CHEAT = 0, 1
MOVE = 20


@pytest.mark.parametrize("done", [False, True])
def test_a_cheater_that_leaves_the_room_mid_match_still_loses_on_time(done: bool) -> None:
    w = World(b"x10h-leave-escape-" + str(done).encode(), MOVE)
    w.open()
    h, c = w.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None
    for _ in range(20_000):  # 1. the match goes on to a turn of the cheater, in play
        if cs.my_turn and cs.referee.next_seq >= 12 and not w.core.out:
            break
        assert w.step()
    c.silent = True
    leave: dict[str, Any] = {"t": "leave", "done": True} if done else {"t": "leave"}
    w.core.message(w.now, c.cid, encode(leave))
    w.pump()
    notices = w.wait_as_client(h, w.now + w.core.cfg.grace + 10 * MOVE)  # 2. the honest client waits
    e = hs.ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"the cheater left mid-match ({leave}) and never lost: the honest session ended {e}; the relay said"
        f" {[(n.get('t'), n.get('reason'), 'cert' in n) for n in notices]}"
    )
