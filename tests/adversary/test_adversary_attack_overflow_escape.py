"""Attack: while the honest seat is briefly away (a dropped connection, a laptop lid, a phone that slept —
something the network causes, never a player's fault), a losing cheater sends 257 small junk frames: the
relay buffers them for the absent seat, passes its ``seat_buffer_frames`` (256) and closes the room
``buffer_overflow``, with no certificate and a tombstone that refuses the honest seat's ``resume``. The
match the cheater was losing stays unfinished for ever.

Steps (a modified client, an honest relay, an honest opponent whose connection drops for a few seconds):
1. The match is played normally; the cheater is losing (any moment will do).
2. The honest seat's connection drops (``peer away`` to the cheater, with the grace: 120 s).
3. At once the cheater sends 257 unflagged junk frames of 6 bytes (in about 5 s, inside its rate limit: 50/s
   and a burst of 200; 17 frames of 64 KiB past the 1 MiB ``seat_buffer_bytes`` do it too).
   relay/core.py ``_on_frame`` buffers them for the absent seat; the 257th passes the limit and
   ``_close_room(room, "buffer_overflow")`` ends the room: no certificate (only ``opponent_left`` carries
   one), a tombstone.
4. The honest client comes back 5 s later: ``resume`` gets ``room_closed`` (``buffer_overflow``) without a
   certificate; client/match_loop.py ``_gave_up`` stops, the match unfinished. Its session never sees a
   certificate; the cheater never loses.

Harm: a losing cheater escapes its loss whenever its opponent's connection drops for a moment (issue 10: "a
losing player escapes for free"; "whatever the network could have caused is never a player's fault" — here
the honest player's dropped connection costs it a won match). ``test_adversary_attack_resend_overflow.py``
closed the same door when the honest side's own answers filled the buffer; the cheater's own frames still open
it.

Suggested fix: a seat buffer that overflows is the *sender's* problem, not the room's: drop the sender's
frames past the limit (the relay tells a seat that comes back how far it got from the other, ``peer back``
``received``, and a client resends from its log) or close the sender's connection; never close the room
while the absent seat's grace runs. (If closing stays, close it ``opponent_left``-style with a certificate
of the flooder's silence — its junk is citable, §7.3 step 6 — once its move time has passed.)
"""

from __future__ import annotations

from relay_world import World

from koikoi.protocol.framing import encode
from koikoi.protocol.session import MatchDecided

HONEST, CHEAT = 0, 1
MOVE = 20
FLOOD = 257  # one more than the relay's seat_buffer_frames


def test_a_cheater_that_floods_the_absent_honest_seat_s_buffer_still_loses_on_time() -> None:
    w = World(b"x10h-overflow-escape", MOVE)
    w.open()
    h, c = w.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None
    core = w.core
    for _ in range(20_000):  # 1. the match goes on to a turn of the cheater, in play
        if cs.my_turn and cs.referee.next_seq >= 12 and not core.out:
            break
        assert w.step()
    c.silent = True
    core.disconnected(w.now, h.cid)  # 2. the honest seat's connection drops
    h.cid = 0
    w.pump()
    for i in range(FLOOD):  # 3. 257 small junk frames, within the cheater's rate limit (50/s, a burst of 200)
        w.now += 0.02
        c.sent += 1
        core.message(w.now, c.cid, encode({"t": "frame", "n": c.sent, "d": b"junk" + i.to_bytes(2, "big")}))
    w.pump()
    w.now += 5  # 4. the honest client is back, and takes its seat back
    notices = w.wait_as_client(h, w.now + core.cfg.grace + 10 * MOVE, resume_first=True)
    e = hs.ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        "the cheater flooded the absent honest seat's buffer and never lost: the honest session ended"
        f" {e}; the relay said {[(n.get('t'), n.get('code'), n.get('reason'), 'cert' in n) for n in notices]}"
    )
