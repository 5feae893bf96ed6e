"""Attack: ``test_adversary_attack_lockout_give_up.py`` again, with the relay's global connection limit instead
of the per-address one. 9db744b made the client keep trying past its reconnect deadline on the per-address
refusals (client/link.py ``KEEP_TRYING``: ``too_many_connections``, ``too_many_attempts``), but not on
``relay_full`` — which the relay also counts as a refusal of the honest address (``_limit_ip``: the seat is
excused, ``seat_locked_out``, and the grace waits), and which a stranger causes from any addresses, not only
the honest player's. The honest client gives up at its deadline (180 s); 30 s after its last try the excuse
lapses and the relay certifies the honest seat silent.

Steps (a modified opponent client with a helper — a few hundred IPv6 /64s, a /55 of any cheap host, or any
crowd of addresses; an honest relay with its default limits; the honest connection drops once, as a phone's
does):
1. The match runs; the honest seat is awaited. Its connection drops.
2. The helper opens connections from IPv6 /64s, 25 each (within every per-address limit: handshakes,
   connection rate, ``max_connections_per_ip``), until the relay holds ``max_connections`` (10 000). Idle
   connections that answer pings are never closed. It does nothing else.
3. The honest client reconnects with backoff (0.1 s doubling to 3 s): refused ``relay_full`` each time (in
   ``RETRY``, not in ``KEEP_TRYING``); each refusal sets its address's ``refused_at``; the grace waits.
4. At its reconnect deadline (180 s) it gives up (``GaveUp``, the seat kept for ``koikoi resume``). 30 s later
   the waiting grace timer closes the room ``opponent_left`` and gives the cheater (seated all along) the
   witness's certificate: the honest seat, awaited, silent, not connected.
5. The cheater's TIMEOUT with it fits every step of §7.3: it wins ``on_time``.

Harm: an honest player loses on time, kept out by a stranger's (or the opponent's) flood of idle connections
(issue 10). Not the named limit (a helper on the honest player's own address exhausting the pre-handshake rate):
this one is refused after the handshake by a live relay, from any addresses. (A relay that is simply full for
three minutes does the same to an honest player with no cheater at all.)

(The test models ``_keep_up`` as ``…_lockout_give_up.py`` does: its backoff, ``RETRY``, ``KEEP_TRYING`` and
``reconnect_s`` come from the client.)

Suggested fix: put ``relay_full`` in ``KEEP_TRYING`` (the relay already excuses the seat for it); or have the
relay keep a seat excused while the relay itself is full (a full relay is nobody's own doing).
"""

from __future__ import annotations

from relay_world import IPS, World

from koikoi.client.link import KEEP_TRYING, RETRY
from koikoi.client.tuning import Tuning
from koikoi.protocol.session import MatchDecided

HONEST, CHEAT = 0, 1
MOVE = 20
RECONNECT_S = Tuning().reconnect_s  # KOIKOI_RECONNECT_TIMEOUT (180 s)
PER_NET = 25


def test_an_honest_seat_kept_out_of_a_full_relay_never_loses_on_time_when_its_client_gives_up() -> None:
    w = World(b"x10j-full-relay-give-up", MOVE)
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
    net = 0
    while len(core.conns) < core.cfg.max_connections:  # 2. the helper fills the relay, /64 by /64
        net += 1
        ip = f"2001:db8:{net >> 16:x}:{net & 0xFFFF:x}::1"
        for _ in range(min(PER_NET, core.cfg.max_connections - len(core.conns))):
            assert core.tcp_opened(w.now, ip), "a per-address limit refused the helper"
            core.handshake_done(w.now, ip, True)
            _, refusal = core.connect(w.now, ip)
            assert refusal is None, refusal
        core.out.clear()
    dropped = w.now
    deadline, delay, at = dropped + RECONNECT_S, 0.1, dropped + 0.1
    gave_up = False
    refused = 0
    closed: dict[str, object] | None = None
    while w.now < dropped + RECONNECT_S + 3 * core.cfg.lockout_quiet_s + core.cfg.grace and closed is None:
        if not gave_up and w.now >= at:  # 3. client/link.py _keep_up (modelled): backoff, retried in RETRY
            _, refusal = core.connect(w.now, IPS[HONEST])
            assert refusal == "relay_full", refusal
            refused += 1
            if refusal in KEEP_TRYING:  # (on these the link keeps trying past its deadline)
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
        f"the honest seat, kept out of a full relay ({len(core.conns)} connections from {net} /64s) until its client"
        f" gave up ({refused} refusals over {RECONNECT_S:g} s), lost on time {w.now - dropped - RECONNECT_S:.0f} s"
        f" later: {won[0].outcome}"
    )
