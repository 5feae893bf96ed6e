"""Attack (relay/core.py ``_attach``, 432b5fc): ``MAX_REWIND`` bounds how far ONE ``resume`` sets the other
seat's frame count back (``other.in_count -= MAX_REWIND``, from wherever the count is now), not how far it
gets set back in all. A cheater that resumes again and again — each ``resume`` on a new connection, from a
few addresses, within every per-address limit (2 new connections a second, no bursts) — sets the honest
seat's count back 64 frames each time, so the rewound_count attack
(tests/adversary/test_adversary_attack_rewound_count.py) works as before, in steps of 64.

1. During its own turn the cheater makes the honest side's resend log long (RESEND requests for old parts of
   the line, each answered with 16 messages; a long match does it alone).
2. The cheater resumes its seat from 8 addresses (an IPv6 /56 holds 256 /64s, each one address to the
   relay), every half second per address, with ``received`` = 0: 16 resumes a second, each setting the
   honest seat's count back 64 more frames (down to 0: the honest client's log of 4096 keeps them all, so
   it never renumbers). (In this model 7 addresses win, 6 do not.)
3. Each ``peer back`` (and each of its own resumes) makes the honest client resend everything past the
   count, at once (relay/client.py ``_resend`` is not paced); past the relay's burst (200) it is kicked
   (``rate_limited``), comes back, resends 200 more and is kicked again, while the count falls 1 000 frames
   a second. Two seconds in, the cheater plays its turn (the honest seat gets it on each resume); the honest
   move, at the end of the honest log, never reaches the witness.
4. The cheater sends its last message again every quarter move time (an answer to the honest seat's
   requests, which sit behind the backlog anyway). After 3 move times its unmodified session gets a
   certificate of the honest seat's silence that fits; its file audits ``valid``, ``on_time``, cheater the
   winner.

Harm: a false win on time against an honest client with an honest relay, by a modified client using only the
seat's own token and a handful of addresses.

The fix (relay/core.py ``_attach``): the rewind is bounded from the highest count the other seat ever reached
(``Seat.highest``), so resuming again and again cannot walk it back in steps.
"""

from __future__ import annotations

from relay_world import IPS, World

from koikoi.protocol.audit import audit

HONEST, CHEAT = 0, 1
MOVE = 60
ADDRESSES = [f"203.0.113.{i}" for i in range(1, 9)]


def test_a_cheater_rewinding_the_honest_count_in_steps_never_wins_on_time() -> None:
    world = World(b"x10d-rewind-steps", MOVE)
    world.open()
    h, c = world.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None and c.bot is not None and h.bot is not None
    world.grow_log(CHEAT)  # 1. the honest side's log grows
    assert 400 < h.sent < 4096, f"the honest side sent {h.sent} frames"

    core = world.core
    last_resume = {ip: world.now - i * 0.5 / len(ADDRESSES) for i, ip in enumerate(ADDRESSES)}  # spread out
    resumes = 0

    def rewind(ip: str) -> None:
        """A resume from ``ip`` on a new connection, through the relay's per-address limits."""
        nonlocal resumes
        c.sent = world.resume_from(c, ip, 0)["received"]
        resumes += 1

    delay, back_at = 0.1, 0.0

    def honest_back() -> None:
        """The honest client's link (client/link.py ``_keep_up``): connect again after ``delay`` (0.1 s, doubled
        up to 3 s while the relay refuses the connection), then resume, through the same per-address limits."""
        nonlocal delay, back_at
        if not core.tcp_opened(world.now, IPS[HONEST]):
            delay = min(delay * 2, 3.0)
            back_at = world.now + delay
            return
        core.handshake_done(world.now, IPS[HONEST], True)
        world.resume(h)
        delay, back_at = 0.1, 0.0

    turn: list[bytes] = []
    line_at = 0
    start = world.now
    t_end, again = world.now + 5 * MOVE, world.now + MOVE / 4
    while world.now < t_end and not cs.is_finished and not hs.is_finished:
        if not turn and world.now >= start + 2:
            while cs.my_turn:  # 3. its turn (on the line both sides hold), once the honest seat's count is falling
                cs.play(c.bot.choose(cs.view()))
                turn += cs.frames_to_send()
            world.flush(c)
            for f in turn:
                world.send(c, f, False)
            line_at = cs.referee.next_seq
        for ip in ADDRESSES:  # 2.-3. every half second from each address
            if world.now - last_resume[ip] >= 0.5:
                last_resume[ip] += 0.5
                rewind(ip)
        if not h.cid:
            if not back_at:
                back_at = world.now + delay + 0.1  # (and its handshake)
            elif world.now >= back_at:
                honest_back()
        if turn and world.now >= again:  # 4.
            world.send(c, turn[-1], False)
            again = world.now + MOVE / 4
            if world.now > t_end - 2 * MOVE:
                r = world.request(c, {"t": "certify"}, "certificate")
                if r is not None:
                    world.note(c, cs.witnessed(r["cert"]))
        if hs.my_turn:
            world.note(h, hs.play(h.bot.choose(hs.view())))
        world.pump()
        world.tick(h)
        world.now += 0.05
        core.tick(world.now)
    rep = audit(bytes(c.file))
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the cheater's file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending}; {resumes}"
        f" resumes of the cheater; the honest client was kicked {h.kicked} times; its line at"
        f" {hs.referee.next_seq} (the cheater's turn ended at {line_at}), it sent {h.sent} frames, the relay got"
        f" {core.rooms[world.room].seats[HONEST].in_count}"
    )
