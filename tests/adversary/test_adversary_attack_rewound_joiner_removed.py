"""Attack: "a joiner that sent any frame keeps its seat" (``first_frame`` timer, relay/core.py ``_tick``) is
checked as ``not seat.in_count`` — the relay's count of the joiner's frames — but a cheating HOST moves that count
back to 0 at will: it resumes its seat saying it got nothing (``received: 0``), and ``_attach`` sets the joiner's
count to ``max(received, highest - MAX_REWIND, floor)``, 0 for a joiner that sent at most 64 frames and never
resumed. The honest joiner sends its frames again when it hears ``peer back`` (``received: 0``), but that takes
a round trip: a host that resumes just before the timer (30 s after the join) gets the honest joiner removed
as "silent" (``_remove_silent_joiner``: token, key and seat gone, ``room_closed`` ``removed``). The honest
client takes its seat back, is refused (``bad_token``) and stops, the match unfinished.

Steps (a modified host; an honest relay; an honest joiner):
1. The match starts; the host plays on to one of its turns (a few seconds after the join) and stops there.
2. At ``first_frame_timeout`` after the join, less one round trip, the host resumes its seat on a new
   connection with ``received: 0``; the relay resets the joiner's count to 0 and tells the joiner ``peer back``
   with ``received: 0``; the joiner's resends are in flight when the timer fires (modelled here by the relay's
   clock reaching the timer before the joiner's resends arrive).
3. The timer removes the joiner as one that sent no frame. The honest client, told ``removed``, takes its
   seat back and is refused: no certificate, ever, of the host's silence.

Harm: a cheating host ends any match at will in its first 30 s with no loss (a deal it dislikes, or a move it
cannot answer in time, escapes the loss on time that ``leave`` or silence would bring: issue 10's secondary
rule), and an honest joiner that sent frames is thrown out of the room.

Suggested fix: decide "sent any frame" on something no resume moves back: ``seat.highest`` (or a flag
``seat.spoke`` set on the first frame taken and cleared only by ``_remove_silent_joiner``), i.e. remove a joiner
only when ``not seat.highest``.
"""

from __future__ import annotations

from relay_world import World

from koikoi.protocol.framing import encode
from koikoi.protocol.session import MatchDecided

CHEAT, HONEST = 0, 1
MOVE = 60


def test_a_host_cannot_get_an_honest_joiner_removed_by_rewinding_its_count() -> None:
    w = World(b"x10k-rewound-joiner-removed", MOVE)
    w.open()
    joined_at = w.now
    c, h = w.ends[CHEAT], w.ends[HONEST]
    cs, hs = c.session, h.session
    assert cs is not None and hs is not None
    for _ in range(20_000):  # 1. the host plays on to one of its turns in play, and stops there
        if cs.my_turn and cs.referee.next_seq >= 8 and not w.core.out:
            break
        assert w.step()
    c.silent = True
    timer = joined_at + w.core.cfg.first_frame_timeout
    assert w.now < timer - 1, "the match reached the host's turn within the joiner's first 30 s"
    w.wait_as_client(h, timer - 0.5)  # the honest joiner waits for the host's move
    assert not hs.is_finished
    w.now = timer  # 2. the host resumes saying it got nothing, one round trip before the timer
    w.connect(c)
    resume = {"t": "resume", "room": w.room, "seat": CHEAT, "token": c.token, "received": 0}
    w.core.message(w.now, c.cid, encode(resume | w.prove(c.cid, cs.key)))
    w.core.tick(w.now)  # (the joiner's resends, asked for by ``peer back``, are still on their way)
    w.pump()
    notices = w.wait_as_client(h, w.now + w.core.cfg.grace + 10 * MOVE)  # 3. the honest client waits
    e = hs.ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"the host resumed with received=0 just before the joiner's first-frame timer and stayed silent; the"
        f" honest joiner never won: the honest session ended {e}; the relay said"
        f" {[(n.get('t'), n.get('reason') or n.get('code')) for n in notices]}"
    )
