"""Attack: a watcher that loops ``watch`` → ``leave`` → ``watch`` on a room with a full log makes the relay send
the whole log (up to ``watch_log_bytes``, 4 MiB) again at every ``watch``: a 30-byte request for 4 MiB out,
within the connection's message rate (50 a second). Measured before the fix: one connection, 10 seconds at its
rate, 250 catch-ups, 1 000 MB queued to send.

Held after the fix: the catch-ups are budgeted per address (``watches_per_ip_per_s``, a burst of twice
``max_watching_per_ip``): a refused ``watch`` is ``too_many_requests`` and the connection stays; another address
is not stopped, and an address's first 16 watchers all get in at once."""

from __future__ import annotations

from watch_attack_world import C, CoreWorld

FRAME = 1000
FRAMES = 4096


def _full_room(w: CoreWorld) -> tuple[str, int, int]:
    code, host, guest = w.room(deck="sealed")
    for k in range(FRAMES):
        w.now += 0.021  # (within the seat's frame rate)
        w.frame(host if k % 2 == 0 else guest, k.to_bytes(4, "big") * (FRAME // 4))
    room = w.core.rooms[code]
    assert room.watch.log is not None and len(room.watch.log.entries) == FRAMES
    return code, host, guest


def test_a_watch_leave_loop_gets_the_whole_log_a_bounded_number_of_times() -> None:
    w = CoreWorld()
    code, _, _ = _full_room(w)
    cid = w.connect(C)
    start = w.now
    replays = 0
    refused = 0
    for _ in range(250):  # 500 messages in 10 s: the connection's sustained rate (50 a second)
        w.now += 0.02
        reply = w.send(cid, {"t": "watch", "room": code})
        assert reply is not None
        if reply["t"] == "watching":
            w.now += 0.02
            assert w.send(cid, {"t": "leave"}) == {"t": "left", "room": code}
        else:
            assert reply["t"] == "error" and reply["code"] == "too_many_requests", reply
            refused += 1
            w.now += 0.02
    assert cid not in w.closed  # (refused, never closed: a watcher that came back too often waits a second)
    elapsed = w.now - start
    replays = sum(1 for r in w.replays if r.conn == cid)
    sent = sum(len(d) for r in w.replays if r.conn == cid for _, d in r.frames)
    cfg = w.core.cfg
    most = 2 * cfg.max_watching_per_ip + elapsed * cfg.watches_per_ip_per_s + 1
    assert replays <= most, (replays, sent)
    assert refused > 0
    # another address still watches; this one again a second later
    other = w.connect("192.0.2.200")
    assert w.send(other, {"t": "watch", "room": code}) is not None
    assert any(r.conn == other for r in w.replays)
    w.now += 1.0
    again = w.send(cid, {"t": "watch", "room": code})
    assert again is not None and again["t"] == "watching"


def test_an_address_first_16_watchers_get_in_at_once() -> None:
    w = CoreWorld()
    rooms = [w.room(deck="sealed")[0] for _ in range(2)]
    for k in range(16):
        cid = w.connect(C)
        reply = w.send(cid, {"t": "watch", "room": rooms[k % 2]})
        assert reply is not None and reply["t"] == "watching", (k, reply)
