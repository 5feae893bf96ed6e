"""Attack: the shared-address lockout (``test_adversary_attack_shared_address_lockout.py``) turned back into a
loss on time by the honest client's own reconnect deadline. Since 33c8caa the excuse ``seat_locked_out`` holds
only while the address keeps being refused (``lockout_quiet_s``, 30 s after the last refusal); but the only
refusals left are the honest client's own attempts, and client/link.py ``_keep_up`` gives up after
``KOIKOI_RECONNECT_TIMEOUT`` (180 s). Thirty seconds after its last try the excuse lapses, the grace that was
waiting ends, and the relay certifies the honest seat silent.

Steps (a modified opponent client with a helper on the honest player's address — one home, one office, a
carrier-grade NAT; an honest relay; the honest connection drops once, as a phone's does):
1. The match runs; the honest seat is awaited. Its connection drops.
2. The helper holds every connection the address may have (``max_connections_per_ip``, 32): it does nothing
   else — no refusal is its own; it only has to be there first.
3. The honest client reconnects with backoff (0.1 s doubling to 3 s) and is refused ``too_many_connections``
   each time: each refusal sets the address's ``refused_at``; ``certify`` is refused ``seat_locked_out`` and
   the grace waits (relay/core.py ``tick``). Good so far.
4. At its reconnect deadline (180 s) the honest client gives up (``GaveUp`` → ``relay_unreachable``, the seat
   kept for ``koikoi resume``). Nobody is refused any more: 30 s after its last attempt ``_locked_out`` is
   False, the waiting grace timer closes the room ``opponent_left`` and gives the cheater (seated all along)
   the witness's certificate: the honest seat, awaited, silent for more than 200 s, not connected.
5. The cheater's TIMEOUT with it fits every step of §7.3: it wins ``opponent_left``, and its transcript audits
   so.

Harm: an honest player loses on time, kept out for the whole time by an opponent on its address — exactly
what ``seat_locked_out`` was for (issue 10: nothing the network, the relay or a stranger does is the honest
side's fault). The helper needs no timing at all.

(The test models ``_keep_up``: its backoff, ``RETRY`` and ``reconnect_s`` come from the client; a client fix
that keeps trying on these refusals must be mirrored in the test's loop, step 3.)

Suggested fix: the client does not give up on the refusals a shared address can cause (``too_many_connections``,
``too_many_attempts``, ``relay_full``): it keeps trying, slowly (every few seconds, within the relay's rates),
for as long as the match can be decided, so the address stays "refused" and the stall stays a stall; or the
relay keeps a seat excused from its first refusal until the seat is taken back or the room is left (at the price
of the self-lockout stall, which the quiet period was for).
"""

from __future__ import annotations

from relay_world import IPS, World

from koikoi.client.link import KEEP_TRYING, RETRY
from koikoi.client.tuning import Tuning
from koikoi.protocol.session import MatchDecided

HONEST, CHEAT = 0, 1
MOVE = 20
RECONNECT_S = Tuning().reconnect_s  # KOIKOI_RECONNECT_TIMEOUT (180 s)


def test_an_honest_seat_locked_out_by_its_own_address_never_loses_on_time_when_its_client_gives_up() -> None:
    w = World(b"x10i-lockout-give-up", MOVE)
    w.open()
    h, c = w.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None
    core = w.core
    for _ in range(4000):  # 1. play until the honest seat is awaited, a few moves in
        w.step()
        if hs.my_turn and len(hs.referee.msgs) >= 8 and not core.out:
            break
    assert hs.my_turn
    core.disconnected(w.now, h.cid)  # its connection drops
    h.cid = 0
    w.pump()
    held: list[int] = []
    while True:  # 2. the helper holds every connection the honest address may have
        cid, refusal = core.connect(w.now, IPS[HONEST])
        if refusal is not None:
            break
        held.append(cid)
        core.out.clear()
    dropped = w.now
    deadline, delay, at = dropped + RECONNECT_S, 0.1, dropped + 0.1
    gave_up = False
    refused = 0
    closed: dict[str, object] | None = None
    while w.now < dropped + RECONNECT_S + 3 * core.cfg.lockout_quiet_s + core.cfg.grace and closed is None:
        if not gave_up and w.now >= at:  # 3. client/link.py _keep_up (modelled): backoff, retried in RETRY
            cid, refusal = core.connect(w.now, IPS[HONEST])
            assert refusal == "too_many_connections", refusal
            refused += 1
            if refusal in KEEP_TRYING:  # (the fix: on these the link keeps trying past its deadline)
                deadline = max(deadline, w.now + delay + 1)
            if refusal not in RETRY or w.now + delay > deadline:
                gave_up = True  # 4. GaveUp: relay_unreachable, the seat kept, the program stops
            at, delay = w.now + delay, min(delay * 2, 3.0)
        w.now += 0.1
        core.tick(w.now)
        w.pump()
        closed = next((r for r in c.replies if r.get("t") == "room_closed"), None)
    assert refused > 50
    cert = closed.get("cert") if closed is not None else None
    won: list[MatchDecided] = []
    if isinstance(cert, bytes):  # 5. the cheater claims with the closing certificate
        won = [e for e in cs.witnessed(cert) if isinstance(e, MatchDecided) and e.outcome.winner == CHEAT]
    assert not won, (
        f"the honest seat, kept out by its own address until its client gave up ({refused} refusals over"
        f" {RECONNECT_S:g} s), lost on time {w.now - dropped - RECONNECT_S:.0f} s later: {won[0].outcome}"
    )
