"""Attack: step 6b (certificate v2, 9e4d5b1) checks that the relay *received* each of the claimer's messages the
silent seat owes an answer to — not that the silent seat *got* them. A frame the relay received and then
lost on its way to the honest seat, which the cheater is asked to send again and does not, reopens the
"fork ahead of the line" false win (tests/adversary/test_adversary_attack_ahead_fork_win.py), with an honest
relay (relay/core.py, as it runs), and no relay lie.

1. At its turn (SEQ i) taking two or more messages, the cheater signs its whole turn f1 … fk on its own line
   (which then waits for the honest seat) and sends f1 … f(k-1) unflagged: the witness records them (they are
   in the cheater's ``recent``), but they never reach the honest session:
   * ``connection_lost``: the honest seat's connection drops (its network, or a hostile network) after the
     relay wrote them to it. It resumes with ``received`` = what it got; the relay (``_attach``) sets the
     cheater's count back to it and tells the cheater (``peer back``) to send again from there;
   * ``relay_restart``: an honest relay restart (a deploy). The cheater resumes first: in the restored room its
     frame numbers are unknown (``in_count`` None), so it numbers f1 … f(k-1) from 1; they wait for the
     honest seat, whose ``resume`` (``received`` larger) drops them as already delivered (``_attach``).
2. The cheater sends fk only (the next number the relay asks for). The honest side buffers it (ahead of its
   line) and asks RESEND(id, i) for ever; the cheater answers each request with fk again — to the witness a
   repeat of its last new frame is an answer, so the honest seat is never "waiting".
3. After 3 move times the witness certifies the honest seat silent: last[honest] = its newest message (in the
   cheater's line), last[cheater] = fk (its last message), and f1 … fk are all in ``recent`` (step 6b holds).
   The cheater's unmodified session sends the TIMEOUT; its file audits ``valid``, ``on_time``, cheater the
   winner. The honest side can never claim (fk is a message of the cheater not in its line, not junk).

Harm: a false WIN for a modified client whenever the honest seat's connection drops (or the relay restarts)
during a turn of two or more messages of the cheater — most turns.

The fix (relay/core.py ``_attach``): the relay numbers each seat's frames it witnessed (``Seat.numbered``);
when a seat's ``resume`` shows frames of the other seat were never delivered (sent again from its
``received``, or dropped from the buffer as misnumbered), their hashes leave the sender's ``recent`` until it
sends them again.
"""

from __future__ import annotations

import pytest
from relay_world import World

from koikoi.protocol.audit import audit
from koikoi.protocol.session import CertificateRejected
from koikoi.relay.core import RelayConfig, RelayCore

HONEST, CHEAT = 0, 1
MOVE = 20


@pytest.mark.parametrize("how", ["connection_lost", "relay_restart"])
def test_frames_the_relay_got_but_the_honest_seat_never_did_never_win_on_time(how: str) -> None:
    world = World(b"x10c-undelivered-fork", MOVE)
    world.open()
    h, c = world.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None and c.bot is not None
    i, fork = world.fork_a_turn(CHEAT)  # 1. its whole turn, on its own line only

    if how == "connection_lost":
        world.lost.add(h.cid)  # the honest seat's connection is dying: what the relay writes to it is lost
        for f in fork[:-1]:
            world.send(c, f, False)
        world.pump()
        world.core.disconnected(world.now, h.cid)
        h.cid = 0
        world.now += 1
        world.resume(h)
    else:
        world.core = RelayCore(RelayConfig(), key=world.key)  # the relay restarts (same key, rooms rebuilt)
        h.cid = c.cid = 0  # every connection is gone
        world.now += 1
        world.resume(c)  # the cheater is back first
        c.sent = 0
        for f in fork[:-1]:
            world.send(c, f, False)  # numbered from 1: the restored room does not know its count
        world.now += 1
        world.resume(h)  # its `received` is larger: those frames are dropped as delivered
    back = next(x for x in c.replies if x.get("event") == "back")
    c.sent = back["received"]  # 2. told to send again from there, it sends fk instead of f1
    world.send(c, fork[-1], False)
    world.pump()
    assert hs.referee.next_seq == i, "the honest seat got the cheater's first message"

    t_end, again = world.now + 6 * MOVE, world.now + MOVE / 4
    while world.now < t_end and not cs.is_finished and not hs.is_finished:
        if world.now >= again:
            world.send(c, fork[-1], False)  # "answers" each request with fk again
            again = world.now + MOVE / 4
            if world.now > t_end - 3 * MOVE:  # 3. its session asks for a certificate now and then
                r = world.request(c, {"t": "certify"}, "certificate")
                if r is not None:  # (none in a room rebuilt after a restart)
                    world.note(c, cs.witnessed(r["cert"]))
        world.pump()
        world.tick(h)
        world.now += 0.25
        world.core.tick(world.now)
    assert hs.referee.next_seq == i, "the honest seat got the cheater's first message after all"
    rejected = [e for e in h.events if isinstance(e, CertificateRejected)]
    rep = audit(bytes(c.file))
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the cheater's file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending};"
        f" honest side: {hs.ended}, {len(rejected)} certificates rejected; honest line at"
        f" {hs.referee.next_seq}, fork at {i}…{i + len(fork) - 1}"
    )
