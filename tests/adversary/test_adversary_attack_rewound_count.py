"""Attack (relay/core.py, not today's certificate change): a seat's ``resume`` says how many frames it
``received`` from the other seat, and the relay then sets the OTHER seat's frame count back to it
(``_attach``: ``other.in_count = received``) and tells it to send again from there (``peer back``). A
cheater that resumes with a small ``received`` makes the honest client resend its whole log at once; past
the relay's burst (200 frames) the relay kicks it (``rate_limited``); it comes back, resends from where the
relay got to, is kicked again — and the cheater, resuming again each time the honest seat is away, keeps its
count at the same low number. The honest seat's new frames (its move) sit at the end of its log and never
reach the witness: it is certified silent and loses on time.

1. During its own turn the cheater makes the honest side's resend log long (here: RESEND requests for old
   parts of the line, each answered with 16 messages and its last frame; a long match does it alone).
2. It resumes with ``received`` = 450 frames less than the honest seat sent. The honest client resends 450
   frames at once and is kicked at the relay's burst.
3. The cheater plays its turn (the frames wait for the honest seat at the relay) and from then on resumes
   again with the same ``received`` whenever the honest seat is away, and sends its last message again every
   quarter move time (to the witness, an answer to the honest seat's requests).
4. Each time the honest seat comes back, it resends ~200 of those 450 frames (old, flagged or repeats: no news
   to the witness) and is kicked; its move, made as soon as it gets the cheater's turn, never arrives.
5. After 3 move times the cheater's unmodified session gets a certificate of the honest seat's silence that
   fits (last[honest] = its last message in the line, last[cheater] = its turn's last, ``recent`` holds the
   turn): its file audits ``valid``, ``on_time``, cheater the winner.

Harm: a false win on time against an honest client with an honest relay, by a modified client using only the
seat's own token — whenever the honest side's log is longer than the relay's burst.

The fix (relay/core.py ``_attach``): a ``resume`` sets the other seat's count back by at most ``MAX_REWIND``
(64) frames, well inside the burst; the resumed client takes the gap (relay/client.py) and the match
protocol asks for what it lacks.
"""

from __future__ import annotations

from relay_world import World

from koikoi.protocol.audit import audit

HONEST, CHEAT = 0, 1
MOVE = 60
BACK = 450


def test_a_cheater_rewinding_the_honest_seats_frame_count_never_wins_on_time() -> None:
    world = World(b"x10c-rewound-count", MOVE)
    world.open()
    h, c = world.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None and c.bot is not None and h.bot is not None
    world.grow_log(CHEAT)  # 1. the honest side's log grows
    assert h.sent > BACK + 20, f"the honest side sent only {h.sent} frames"
    low = h.sent - BACK
    assert h.cid

    def rewind() -> None:
        r = world.resume(c, received=low)
        c.sent = r["received"]

    rewind()  # 2. (the honest client is kicked for its resend)
    turn: list[bytes] = []
    while cs.my_turn:  # 3. its turn, on the line both sides hold
        cs.play(c.bot.choose(cs.view()))
        turn += cs.frames_to_send()
    world.flush(c)
    for f in turn:
        world.send(c, f, False)
    line_at = cs.referee.next_seq

    t_end, again, back_at = world.now + 5 * MOVE, world.now + MOVE / 4, world.now + 1
    while world.now < t_end and not cs.is_finished and not hs.is_finished:
        if not h.cid and world.now >= back_at:
            rewind()  # (the cheater saw "peer away")
            world.now += 0.5
            world.resume(h)  # 4. the honest client comes back
            back_at = world.now + 1
        if world.now >= again:
            world.send(c, turn[-1], False)  # "answers" the honest seat's requests
            again = world.now + MOVE / 4
            if world.now > t_end - 2 * MOVE:  # 5.
                r = world.request(c, {"t": "certify"}, "certificate")
                if r is not None:
                    world.note(c, cs.witnessed(r["cert"]))
        if hs.my_turn:
            world.note(h, hs.play(h.bot.choose(hs.view())))
        world.pump()
        world.tick(h)
        world.now += 0.25
        world.core.tick(world.now)
    rep = audit(bytes(c.file))
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the cheater's file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending}; the honest"
        f" client was kicked {h.kicked} times; its line at {hs.referee.next_seq} (the cheater's turn ended at"
        f" {line_at}), it sent {h.sent} frames, the relay got {world.core.rooms[world.room].seats[HONEST].in_count}"
    )
