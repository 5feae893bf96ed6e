"""Attack (relay/core.py ``_attach``, relay/client.py): a seat's ``resume`` may set the OTHER seat's frame count
FORWARD, without limit (``received >= other.in_count - MAX_REWIND`` → ``other.in_count = received``:
MAX_REWIND bounds only a step back), and the other seat's client believes it (``peer back`` with a
``received`` above what it sent: ``ticket.sent = received``, "a stale ticket after a restart"). Every frame
of the honest seat on its way to the relay when the count jumps is numbered below the new count: the relay
drops it (``frames_dropped``) unwitnessed, and the honest client never sends it again (the relay "has" it).

1. A cheater resumes its seat on a new connection again and again — from 8 addresses, each within the relay's
   limit of 2 new connections a second (an IPv6 /56 holds 256 /64s, each one address to the relay) — each
   time with ``received`` 50 above the last: 16 jumps a second, one every 62 ms.
2. The honest client, 50 ms from the relay (a 100 ms round trip), learns each new count 50 ms after it is set;
   what it sent meanwhile arrives numbered from the old one and is dropped. Its move (the answer to the
   cheater's turn, which it receives: the relay → honest direction is untouched), its RESENDs and every copy
   of its move (``reconnected`` on each ``peer back``, ``unacknowledged`` every resend period) arrive a
   round trip after the count they were numbered from — always after the next jump.
3. The witness never records the honest move: the honest seat's last frame stays its previous message,
   which is its last message in the cheater's line (which lacks the move), and it sends nothing new. After
   the move time the cheater's unmodified session gets a certificate of the honest seat's silence that fits;
   its file audits ``valid``, ``on_time``, cheater the winner.

Harm: a false win on time against an honest client with an honest relay, by a modified client using only its
own token and a handful of addresses: it needs a jump more often than the honest seat's round trip (in this
model: 100 ms round trip, 6 addresses win, 5 do not; 300 ms round trip, 2 addresses win).

The fix (relay/core.py ``_attach``): a seat's ``received`` is clamped to the count the relay holds for the
other seat: a resume never sets that count forward.
"""

from __future__ import annotations

from relay_lag import LagWorld
from relay_world import IPS

from koikoi.protocol.audit import audit

HONEST, CHEAT = 0, 1
MOVE = 20
LAG = 0.05
STEP = 0.0125
ADDRESSES = [f"203.0.113.{i}" for i in range(1, 9)]


def test_a_cheater_moving_the_honest_count_forward_never_wins_on_time() -> None:
    world = LagWorld(b"x10d-count-jump", MOVE, 0.0, HONEST)
    world.open()
    world.lag = LAG
    h, c = world.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None and c.bot is not None and h.bot is not None
    for _ in range(20_000):
        if cs.my_turn and cs.referee.next_seq >= 20 and not world.core.out and not world.down and not world.up:
            break
        world.now += STEP
        if not world.pump():
            for e in world.ends:
                s = e.session
                assert s is not None and e.bot is not None
                if s.my_turn:
                    world.note(e, s.play(e.bot.choose(s.view())))
    c.silent = True
    core = world.core
    count = core.rooms[world.room].seats[HONEST].in_count
    assert count is not None
    jumps = 0

    def jump(ip: str) -> None:
        """1. A resume from ``ip`` on a new connection (within the relay's per-address limits)."""
        nonlocal count, jumps
        count += 50
        world.resume_from(c, ip, count)
        jumps += 1

    delay, back_at = 0.1, 0.0

    def honest_back() -> None:
        """The honest client's link (client/link.py ``_keep_up``), should the relay close its connection."""
        nonlocal delay, back_at
        if not core.tcp_opened(world.now, IPS[HONEST]):
            delay = min(delay * 2, 3.0)
            back_at = world.now + delay
            return
        core.handshake_done(world.now, IPS[HONEST], True)
        world.resume(h)
        delay, back_at = 0.1, 0.0

    due = {ip: world.now + i * 0.5 / len(ADDRESSES) for i, ip in enumerate(ADDRESSES)}
    start = world.now
    turn: list[bytes] = []
    line_at = 0
    t_end, again = world.now + 4 * MOVE, world.now + 1 + MOVE / 4
    while world.now < t_end and not cs.is_finished and not hs.is_finished:
        for ip in ADDRESSES:
            if world.now >= due[ip]:
                due[ip] += 0.5
                jump(ip)
        if not turn and world.now >= start + 1:
            while cs.my_turn:  # its turn, once the jumps run
                cs.play(c.bot.choose(cs.view()))
                turn += cs.frames_to_send()
            world.flush(c)
            for f in turn:
                world.send(c, f, False)
            line_at = cs.referee.next_seq
        if turn and world.now >= again:
            world.send(c, turn[-1], False)  # (an answer, should a request of the honest seat get through)
            again = world.now + MOVE / 4
            if world.now > start + 1 + MOVE:  # 3.
                r = world.request(c, {"t": "certify"}, "certificate")
                if r is not None:
                    world.note(c, cs.witnessed(r["cert"]))
        if not h.cid:
            if not back_at:
                back_at = world.now + delay + 2 * LAG
            elif world.now >= back_at:
                honest_back()
        if hs.my_turn:
            world.note(h, hs.play(h.bot.choose(hs.view())))
        world.pump()
        world.tick(h)
        world.now += STEP
        core.tick(world.now)
    rep = audit(bytes(c.file))
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the cheater's file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending}; {jumps} jumps;"
        f" honest line at {hs.referee.next_seq} (the cheater's turn ended at {line_at}), it sent {h.sent} frames,"
        f" the relay dropped {core.metrics.frames_dropped_total}; it was cut off {h.kicked} times"
    )
