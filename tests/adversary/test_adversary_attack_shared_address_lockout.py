"""Attack: a cheater that shares the honest player's address (one home, one office, a carrier-grade NAT)
spends that address's failed-attempt budget, so the honest seat cannot resume after a connection drop, and
the room's grace then ends with ``opponent_left`` and a silence certificate the cheater wins with ON TIME.

Steps (a modified opponent client, an honest relay, no hostile network; the honest connection drops once,
as a phone's or a laptop's does):
1. The match runs; the cheater (seat 1) moves, the honest seat (0) takes the move and is now awaited.
2. The honest connection drops. Its client reconnects with backoff and sends ``resume``.
3. From the SAME address (the per-address key of relay/core.py ``address_key``), the cheater's helper opens
   connections and sends ``resume`` with wrong tokens for the room: ``attempts_per_ip`` (10) failures in
   ``attempts_window`` (60 s). From then on ``_check_attempts`` refuses every ``resume`` from that address
   (``too_many_attempts``) — also the honest holder's, with its right token. The helper tops the budget up
   the moment one of its failures leaves the window (it knows their times), before the honest client's
   next try. Variant ``connections``: the helper instead holds the address's ``max_connections_per_ip`` (32)
   connections open; ``connect`` refuses the honest client ``too_many_connections``.
   (Holding the lockout is more than needed: the honest client's link, client/link.py ``_keep_up``, gives up
   at the first refusal — ``too_many_attempts`` / ``too_many_connections`` are not in ``RETRY`` — so a
   lockout at the moment of its first reconnect is enough; the test keeps trying every 5 s regardless.)
4. After ``grace`` (120 s) the relay closes the room ``opponent_left`` and gives the cheater (still seated)
   the witness's certificate: the honest seat, awaited, silent for > the move time, not connected.
5. The cheater's TIMEOUT with that certificate fits (referee ``certificate_problem`` is None): it wins
   ``opponent_left``, and any third party checking the transcript agrees.

Harm: an honest player loses on time without ever being away longer than a reconnect, to an opponent on its
address; the relay's per-address limits (meant against strangers) are turned against the seat holder.

The fix (relay/core.py): the holder of a seat's token is never refused a resume for failed attempts from its
address; and the witness certifies no silence of a seat that is away from an address some limit refused or
cut since it left (``_no_certificate``: a stall, never a loss); the client retries these refusals until its
reconnect deadline (client/link.py ``RETRY``).
"""

from __future__ import annotations

import pytest
from relay_world import IPS, World

from koikoi.protocol.framing import decode, encode
from koikoi.protocol.session import MatchDecided
from koikoi.relay.core import Send
from koikoi.testing import fixed_key

MOVE = 20


@pytest.mark.parametrize("how", ["attempts", "connections"])
def test_a_shared_address_cannot_lock_the_honest_seat_out_into_a_loss_on_time(how: str) -> None:
    w = World(b"x10g-shared-address-" + how.encode(), MOVE)
    w.open()
    h, c = w.ends
    assert h.session is not None and c.session is not None
    for _ in range(4000):  # 1. play until the honest seat is awaited, a few moves in
        w.step()
        if h.session.my_turn and len(h.session.referee.msgs) >= 8:
            break
    assert h.session.my_turn
    # 2. the honest connection drops (no hostile network: just a drop)
    w.core.disconnected(w.now, h.cid)
    h.cid = 0
    w.pump()
    core = w.core

    spent: list[float] = []  # the helper's own failures: it knows when each leaves the relay's window

    held: list[int] = []

    def hold() -> None:  # 3'. or it holds every connection the address may have (max_connections_per_ip)
        while True:
            cid, refusal = core.connect(w.now, IPS[0])
            if refusal is not None:
                return
            held.append(cid)
            core.out.clear()

    def burn() -> None:  # 3. the cheater's helper, on the honest side's address, fills its attempt budget
        window, budget = core.cfg.attempts_window, core.cfg.attempts_per_ip
        spent[:] = [t for t in spent if t > w.now - window]
        while len(spent) < budget:
            cid = w.connect_raw(IPS[0])
            helper = fixed_key(w.seed + b"-helper", 0)
            for _ in range(min(5, budget - len(spent))):  # (5 a connection: attempts_per_conn)
                bad = {"t": "resume", "room": w.room, "seat": 0, "token": "x" * 40} | w.prove(cid, helper)
                core.message(w.now, cid, encode(bad))
                spent.append(w.now)
            w.pump()
            core.out.clear()

    refused = 0
    resumed = False
    closed: dict[str, object] | None = None
    start = w.now
    while w.now - start < 200 and closed is None:
        (burn if how == "attempts" else hold)()
        if int((w.now - start) * 10) % 50 == 0:  # the honest client tries to resume every 5 s
            cid, refusal = core.connect(w.now, IPS[0])
            if refusal is None:
                w.take_announcement(cid)
                back = {"t": "resume", "room": w.room, "seat": 0, "token": h.token, "received": h.received}
                core.message(w.now, cid, encode(back | w.prove(cid, fixed_key(w.seed, 0))))
                replies = [decode(e.data, max_size=1 << 20) for e in core.out if isinstance(e, Send) and e.conn == cid]
                if any(r.get("t") == "resumed" for r in replies):
                    resumed = True  # the lockout failed: the honest seat is back, the match goes on
                    break
                assert any(r.get("code") == "too_many_attempts" for r in replies), replies
                refused += 1
            else:
                assert refusal == "too_many_connections", refusal
                refused += 1
                core.out[:] = [e for e in core.out if getattr(e, "conn", None) != cid]
        w.now += 0.1
        core.tick(w.now)
        w.pump()
        for r in list(c.replies):
            if r.get("t") == "room_closed":
                closed = r
    if resumed:
        return  # the attack is resisted
    assert refused > 10  # the honest holder kept trying, refused each time
    if closed is None:  # the grace waits while the honest seat's address is refused: nothing to claim with
        assert w.room in core.rooms and c.session.ended is None
        return
    assert closed["reason"] == "opponent_left"
    cert = closed.get("cert")
    cert = cert if isinstance(cert, bytes) else b""
    # 5. the attack succeeds when the cheater's certificate proves the honest seat's silence
    problem = c.session.referee.certificate_problem(cert, b"", 1)
    won = [] if problem is not None else [e for e in c.session.witnessed(cert) if isinstance(e, MatchDecided)]
    assert problem is not None, f"the cheater wins on time, the honest seat locked out by its own address: {won}"
