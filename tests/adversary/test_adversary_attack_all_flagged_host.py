"""Attack: a cheating host sends every frame of the match with the relay's ``ctl`` flag, from its HELLO on. The
honest joiner applies flagged messages (spec/protocol.md §5.2), so the match is played as usual; but the
witness records a flagged frame only as a request, never as the seat's last frame (``witness_frame``), so it
names no last frame of seat 0 at all (empty). §7.3 step 6 accepts an empty last frame only for a seat that has
no message in the line: every certificate of the host's silence is rejected, for the whole match.

``test_adversary_attack_flagged_moves.py`` closed the case of a cheater that flags its *later* moves (step 6
accepts an earlier message of the seat); the joiner cannot flag everything either (it is removed as a silent
joiner after 30 s: ``test_adversary_attack_removed_escape.py``). The host can: nothing removes it.

Steps (a modified host, an honest relay, an honest joiner):
1. The cheater creates a room and plays normally, every frame flagged (its HELLO, COMMIT, REVEAL, moves).
2. When losing, it stops at its turn (connected or gone).
3. The honest joiner asks for certificates: each names seat 0's last frame as empty while seat 0 has messages
   in the line: "the relay's last frame from seat 0 is not its last message" — rejected, again and again; the
   room's ``opponent_left`` certificate (if it leaves) fails the same way.

Harm: any cheating host escapes every loss at will (issue 10: "a losing player must not escape for free").

Suggested fix: the witness takes a seat's frame as its last frame when it has none yet, flagged or not
(``witness_frame``: when ``me.last_hash`` is empty), so a seat with messages always has a named last frame (its
flagged HELLO: a message of its own, step 6); or step 6 accepts an empty last frame for a seat whose first
frame was never witnessed unflagged while the certificate says it has been awaited since the claimer's
messages (which the recent list shows the relay forwarded).
"""

from __future__ import annotations

import pytest
from relay_world import End, World

from koikoi.protocol.session import CertificateRejected, MatchDecided

CHEAT, HONEST = 0, 1
MOVE = 20


@pytest.mark.parametrize("how", ["silent", "gone"])
def test_a_host_that_flags_every_frame_still_loses_on_time(how: str) -> None:
    w = World(b"x10i-all-flagged-host-" + how.encode(), MOVE)
    c, h = w.ends[CHEAT], w.ends[HONEST]
    send = w.send

    def sender(end: End, d: bytes, ctl: bool) -> None:
        send(end, d, ctl or end is c)  # 1. every frame of the host flagged

    w.send = sender  # type: ignore[method-assign]
    w.open()
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None
    for _ in range(20_000):  # it plays, then stops at one of its turns in play
        if cs.my_turn and cs.referee.next_seq >= 12 and not w.core.out:
            break
        assert w.step()
    c.silent = True  # 2.
    if how == "gone":
        w.core.disconnected(w.now, c.cid)
        c.cid = 0
    t_end = w.now + w.core.cfg.grace + 10 * MOVE
    while w.now < t_end and not hs.is_finished:  # 3. the honest joiner asks for certificates
        w.now += 0.5
        w.core.tick(w.now)
        w.pump()
        closed = [r for r in h.replies if r.get("t") == "room_closed"]
        if closed:
            if isinstance(closed[0].get("cert"), bytes):
                w.note(h, hs.witnessed(closed[0]["cert"]))
            break
        w.tick(h)
    e = hs.ended
    why = [ev.reason for ev in h.events if isinstance(ev, CertificateRejected)]
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"the host flagged every frame and, silent for {10 * MOVE} s at its turn ({how}), never lost on time:"
        f" the honest session ended {e}; last of {len(why)} certificates rejected: {why[-1] if why else None!r}"
    )
