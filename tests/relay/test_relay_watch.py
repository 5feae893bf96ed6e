"""Watchers and the room's log in the relay's core, in process with a fake clock (relay/watchers.py): ``watch``,
the log replayed from ``from``, the refusals and limits, the room's close told to watchers, the archive."""

from __future__ import annotations

from typing import Any

from nacl.signing import SigningKey

from koikoi.protocol.framing import decode, encode
from koikoi.protocol.witness import sign_seat_proof
from koikoi.relay import codes
from koikoi.relay.core import Archive, Close, Log, RelayConfig, RelayCore, Replay, Send
from koikoi.relay.effects import HashPassword, VerifyPassword
from koikoi.relay.watchlog import LATE_HASHES, RoomLog

A = "198.51.100.1"
B = "192.0.2.7"
C = "203.0.113.9"
SECRET = "open sesame"
ANY = 1 << 30
"""A relay-wide log budget no test here reaches."""


class World:
    """A core, a clock, the messages each connection was sent (a replay as the ``seen`` messages it stands for),
    and the rooms handed to the archive."""

    def __init__(self, **cfg: Any) -> None:
        cfg.setdefault("chosen_codes_after_s", 0)
        self.core = RelayCore(RelayConfig(**cfg))
        self.now = 1000.0
        self.inbox: dict[int, list[dict[str, Any]]] = {}
        self.closed: dict[int, str] = {}
        self.logs: list[Log] = []
        self.work: list[HashPassword | VerifyPassword] = []
        self.archives: list[Archive] = []
        self.replays: list[Replay] = []
        self.player = SigningKey(bytes(range(1, 33)))
        self.nonces: dict[int, bytes] = {}
        self.sent: dict[int, int] = {}

    def run(self) -> None:
        for e in self.core.out:
            if isinstance(e, Send):
                self.inbox.setdefault(e.conn, []).append(decode(e.data))
            elif isinstance(e, Replay):
                self.replays.append(e)
                box = self.inbox.setdefault(e.conn, [])
                box.extend({"t": "seen", "i": e.first + k, "seat": s, "d": d} for k, (s, d) in enumerate(e.frames))
            elif isinstance(e, Close):
                self.closed[e.conn] = e.reason
            elif isinstance(e, Log):
                self.logs.append(e)
            elif isinstance(e, Archive):
                self.archives.append(e)
            else:
                self.work.append(e)
        self.core.out.clear()

    def later(self, seconds: float) -> None:
        self.now += seconds
        self.core.tick(self.now)
        self.run()

    def connect(self, ip: str = A) -> int:
        cid, refusal = self.core.connect(self.now, ip)
        self.run()
        assert refusal is None, refusal
        hello = self.inbox[cid].pop(0)
        self.nonces[cid] = hello["nonce"]
        return cid

    def send(self, cid: int, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Send ``obj`` from ``cid`` (a seat request proves the world's player key); the first message ``cid``
        gets back, the rest left in its inbox."""
        if obj.get("t") in ("create", "join", "resume") and "key" not in obj:
            k = self.player
            obj = {
                **obj,
                "key": bytes(k.verify_key),
                "proof": sign_seat_proof(k, self.core.public_key, self.nonces[cid]),
            }
        self.inbox.pop(cid, None)
        self.core.message(self.now, cid, encode(obj))
        self.run()
        box = self.inbox.get(cid, [])
        return box.pop(0) if box else None

    def frame(self, cid: int, d: bytes, *, ctl: bool = False) -> None:
        """A player frame from ``cid``'s seat, numbered next."""
        n = self.sent[cid] = self.sent.get(cid, 0) + 1
        self.core.message(self.now, cid, encode({"t": "frame", "n": n, "d": d, **({"ctl": True} if ctl else {})}))
        self.run()

    def seen(self, cid: int) -> list[tuple[int, int, bytes]]:
        """The ``seen`` messages ``cid`` got since last asked: ``(i, seat, d)`` each."""
        box = self.inbox.get(cid, [])
        got = [(m["i"], m["seat"], m["d"]) for m in box if m["t"] == "seen"]
        self.inbox[cid] = [m for m in box if m["t"] != "seen"]
        return got

    def finish_work(self) -> dict[str, Any] | None:
        """Do the password work the core asked for (really: scrypt), hand it back, return the reply."""
        w = self.work.pop(0)
        result: Any = (
            codes.hash_password(w.password)
            if isinstance(w, HashPassword)
            else codes.verify_password(w.password, w.stored)
        )
        self.inbox.pop(w.conn, None)
        self.core.work_done(self.now, w.conn, result)
        self.run()
        box = self.inbox.get(w.conn, [])
        return box.pop(0) if box else None

    def room(self, **create: Any) -> tuple[str, int, int]:
        """A room both seats took (a host from A, a joiner from B): its code and the two connections."""
        host, guest = self.connect(A), self.connect(B)
        made = self.send(host, {"t": "create", **create})
        if made is None:  # a password room: its password is hashed first
            made = self.finish_work()
        assert made is not None and made["t"] == "created", made
        joined = self.send(guest, {"t": "join", "room": made["room"], **create_password(create)})
        if joined is None:  # a password room: the join waits for its check
            joined = self.finish_work()
        assert joined is not None and joined["t"] == "joined", joined
        self.inbox.pop(host, None)
        return made["room"], host, guest

    def watcher(self, code: str, ip: str = C, *, first: int | None = None) -> tuple[int, dict[str, Any]]:
        """A new connection from ``ip`` that watches ``code`` (from log index ``first``), and the answer."""
        cid = self.connect(ip)
        reply = self.send(cid, {"t": "watch", "room": code, **({} if first is None else {"from": first})})
        assert reply is not None, "no answer"
        return cid, reply

    def limits(self, limit: str) -> int:
        return self.core.metrics.limit_hits_total.get(limit, 0)


def create_password(create: dict[str, Any]) -> dict[str, Any]:
    return {"password": create["password"]} if "password" in create else {}


def test_a_watcher_gets_the_room_then_every_distinct_frame_of_both_seats_in_order() -> None:
    w = World()
    code, host, guest = w.room(deck="sealed")  # (a sealed room allows watchers unless its creator says no)
    cid, reply = w.watcher(code)
    assert reply == {
        "t": "watching",
        "room": code,
        "display": codes.format_code(code),
        "settings": {
            "rounds": 6,
            "double_at_8": True,
            "doubling": "×2 at 8+",
            "move_time_s": 120,
            "deck": "sealed",
            "watchers": True,
        },
        "seats": ["present", "present"],
        "frames": 0,
        "watchers": 1,
    }
    assert w.core.gauges()["watchers"] == 1 and "koikoi_relay_watchers 1" in w.core.metrics.render()
    w.frame(host, b"hello from 0")
    w.frame(guest, b"hello from 1")
    w.frame(host, b"hello from 0", ctl=True)  # a repeat (another number, the same bytes): not news to a watcher
    w.frame(guest, b"hello from 0", ctl=True)  # the other seat's message sent back: the room has it already
    w.frame(guest, b"resend please", ctl=True)  # a flagged frame is a frame: the watcher judges it
    w.frame(host, b"move")
    assert w.seen(cid) == [(0, 0, b"hello from 0"), (1, 1, b"hello from 1"), (2, 1, b"resend please"), (3, 0, b"move")]
    # the seats got every frame as before, the watcher's own outbox apart
    assert [m["d"] for m in w.inbox[guest] if m["t"] == "frame"] == [b"hello from 0", b"hello from 0", b"move"]
    assert w.core.metrics.watch_frames_total == 4 and w.core.metrics.watches_total == 1


def test_a_late_watcher_gets_the_log_then_the_live_frames() -> None:
    w = World()
    code, host, guest = w.room(deck="sealed")
    for k in range(5):
        w.frame(host if k % 2 == 0 else guest, b"frame %d" % k)
    cid, reply = w.watcher(code)
    assert reply["frames"] == 5
    assert w.seen(cid) == [(k, k % 2, b"frame %d" % k) for k in range(5)]
    assert len(w.replays) == 1 and w.replays[0].first == 0  # the whole catch-up: one place in its outbox
    w.frame(guest, b"frame 5")
    assert w.seen(cid) == [(5, 1, b"frame 5")]


def test_a_watcher_that_lost_its_connection_watches_again_from_where_it_was() -> None:
    w = World()
    code, host, guest = w.room(deck="sealed")
    first, _ = w.watcher(code)
    w.frame(host, b"a")
    w.frame(guest, b"b")
    got = w.seen(first)
    assert [i for i, _, _ in got] == [0, 1]
    w.core.disconnected(w.now, first)
    w.run()
    assert w.core.gauges()["watchers"] == 0
    w.frame(host, b"c")  # while it was away
    w.frame(guest, b"d")
    again, reply = w.watcher(code, first=got[-1][0] + 1)
    assert reply["t"] == "watching" and reply["frames"] == 4 and reply["watchers"] == 1
    assert w.seen(again) == [(2, 0, b"c"), (3, 1, b"d")]
    # from past the log's end: nothing replayed, live frames go on
    third, reply = w.watcher(code, first=99)
    assert reply["frames"] == 4 and w.seen(third) == []
    w.frame(host, b"e")
    assert w.seen(third) == [(4, 0, b"e")] and w.seen(again) == [(4, 0, b"e")]


def test_a_room_takes_16_watchers_by_default() -> None:
    w = World()
    code, _, _ = w.room(deck="sealed")
    addresses = [f"203.0.113.{k}" for k in range(1, 18)]  # (one each: the per-address limit is not the point)
    for ip in addresses[:16]:
        assert w.watcher(code, ip)[1]["t"] == "watching"
    cid, reply = w.watcher(code, addresses[16])
    assert reply["t"] == "error" and reply["re"] == "watch" and reply["code"] == "too_many_watchers", reply
    assert "16" in reply["message"] and w.limits("watchers_per_room") == 1 and cid not in w.closed
    info = w.send(cid, {"t": "info", "room": code})
    assert info is not None and info["watching"] == 16 and info["watchers"] is True


def test_an_address_watches_with_16_connections_at_most_and_another_address_is_not_stopped() -> None:
    w = World()
    rooms = [w.room(deck="sealed")[0] for _ in range(2)]
    for k in range(16):
        assert w.watcher(rooms[k % 2], C)[1]["t"] == "watching"
    cid, reply = w.watcher(rooms[0], C)
    assert reply["code"] == "too_many_watching" and "16" in reply["message"], reply
    assert w.limits("watching_per_ip") == 1
    assert w.watcher(rooms[0], "192.0.2.200")[1]["t"] == "watching"
    # a watcher of that address leaves: the address may watch again
    some = next(c for c, conn in w.core.conns.items() if conn.watching is w.core.rooms[rooms[0]] and conn.ip == C)
    assert w.send(some, {"t": "leave"}) == {"t": "left", "room": rooms[0]}
    again = w.send(cid, {"t": "watch", "room": rooms[1]})
    assert again is not None and again["t"] == "watching" and w.core.addrs[C].watching == 16


def test_watchers_off_by_the_creator_or_by_default_in_a_shared_room() -> None:
    w = World()
    for create, allowed in (
        ({}, False),  # shared by default: a watcher could compute every hand
        ({"deck": "shared"}, False),
        ({"deck": "shared", "watchers": True}, True),
        ({"deck": "sealed"}, True),
        ({"deck": "sealed", "watchers": False}, False),
    ):
        code, _, _ = w.room(**create)
        room = w.core.rooms[code]
        assert (room.watch.log is not None) == allowed  # (no log kept for a room nobody may watch)
        cid, reply = w.watcher(code)
        if allowed:
            assert reply["t"] == "watching", create
        else:
            assert reply["code"] == "watchers_off" and reply["message"] == "this room does not allow watchers", create
            assert cid not in w.closed
    listed = w.connect(A)
    bad = w.send(listed, {"t": "create", "watchers": "yes"})
    assert bad is not None and bad["code"] == "bad_request" and "watchers" in bad["message"]


def test_the_lobby_shows_watchers_watching_and_the_archive() -> None:
    w = World(archive=True)
    host = w.connect(A)
    made = w.send(host, {"t": "create", "deck": "sealed"})
    assert made is not None and made["settings"]["watchers"] is True
    w.watcher(made["room"])
    w.watcher(made["room"])
    other = w.connect(B)
    shared = w.send(other, {"t": "create"})
    assert shared is not None and shared["settings"]["watchers"] is False
    listing = w.send(w.connect(C), {"t": "list"})
    assert listing is not None and listing["archive"] is True
    assert [(r["room"], r["watchers"], r["watching"]) for r in listing["rooms"]] == [
        (made["room"], True, 2),
        (shared["room"], False, 0),
    ]
    info = w.send(w.connect(C), {"t": "info", "room": shared["room"]})
    assert info is not None and (info["watchers"], info["watching"], info["archive"]) == (False, 0, True)
    # a joiner may say what it expects: a room that allows watchers when it wants none is refused before any frame
    refused = w.send(w.connect(B), {"t": "join", "room": made["room"], "watchers": False})
    assert refused is not None and refused["code"] == "settings_mismatch" and refused["settings"]["watchers"] is True
    joined = w.send(w.connect(B), {"t": "join", "room": made["room"], "watchers": True})
    assert joined is not None and joined["t"] == "joined" and joined["settings"]["watchers"] is True


def test_a_watcher_is_read_only_and_may_leave_list_and_ask_info() -> None:
    w = World()
    code, host, _guest = w.room(deck="sealed")
    cid, _ = w.watcher(code)
    w.frame(cid, b"a move of my own")
    refusal = w.inbox[cid].pop()
    assert refusal["t"] == "error" and refusal["re"] == "frame" and refusal["code"] == "watching", refusal
    assert w.seen(host) == [] and not any(m["t"] == "frame" for m in w.inbox.get(host, []))
    for t in ("create", "join", "resume", "certify", "watch"):
        reply = w.send(cid, {"t": t, "room": code, "seat": 0, "token": "x", "received": 0})
        assert reply is not None and reply["code"] == "watching" and reply["re"] == t, (t, reply)
        assert f"{t} is refused" in reply["message"]
    listing = w.send(cid, {"t": "list"})
    info = w.send(cid, {"t": "info", "room": code})
    assert listing is not None and listing["t"] == "rooms" and info is not None and info["t"] == "room"
    assert w.send(cid, {"t": "leave"}) == {"t": "left", "room": code}
    assert w.core.rooms[code].watch.conns == {} and w.core.gauges()["watchers"] == 0
    w.frame(host, b"after")
    assert w.seen(cid) == []
    made = w.send(cid, {"t": "create"})  # back in the lobby
    assert made is not None and made["t"] == "created"
    # a seat does not watch
    again = w.send(host, {"t": "watch", "room": code})
    assert again is not None and again["code"] == "already_seated"
    assert cid not in w.closed and host not in w.closed


def test_an_unknown_room_code_to_watch_is_a_failed_attempt_as_for_join() -> None:
    w = World(attempts_per_conn=5)
    cid = w.connect(C)
    for _ in range(2):
        reply = w.send(cid, {"t": "join", "room": "KKKKKKKKK"})
        assert reply is not None and reply["code"] == "room_not_found"
    for k in range(3):
        reply = w.send(cid, {"t": "watch", "room": "MMMMMMMMM"})
        assert reply is not None and reply["code"] == "room_not_found" and reply["re"] == "watch"
        assert (cid in w.closed) == (k == 2)
    assert w.closed[cid] == "too_many_attempts"
    assert w.core.metrics.join_failures_total["room_not_found"] == 5
    failed = [e.fields for e in w.logs if e.event == "attempt_failed"]
    assert [f["op"] for f in failed] == ["join", "join", "watch", "watch", "watch"]
    bad = w.send(w.connect(A), {"t": "watch", "room": "MMMMMMMMM", "from": -1})
    assert bad is not None and bad["code"] == "bad_request" and "from" in bad["message"]


def test_a_password_room_is_watched_with_its_password_checked_as_for_join() -> None:
    w = World(attempts_per_room=2)
    code, host, _ = w.room(deck="sealed", private=True, password=SECRET)
    cid = w.connect(C)
    none = w.send(cid, {"t": "watch", "room": code})
    assert none is not None and none["code"] == "wrong_password" and none["message"] == "this room needs a password"
    assert w.send(cid, {"t": "watch", "room": code, "password": "guess"}) is None  # scrypt, in the driver's thread
    assert isinstance(w.work[0], VerifyPassword) and w.core.busy(cid)
    wrong = w.finish_work()
    assert wrong is not None and wrong["code"] == "wrong_password" and wrong["re"] == "watch"
    assert w.send(cid, {"t": "watch", "room": code, "password": "guess again"}) is None
    assert w.finish_work() is not None
    assert [e.fields["op"] for e in w.logs if e.event == "attempt_failed"] == ["watch", "watch"]
    locked = w.send(cid, {"t": "watch", "room": code, "password": SECRET})  # this address guessed enough here
    assert locked is not None and locked["code"] == "too_many_attempts", locked
    w.frame(host, b"private frame")
    other = w.connect("192.0.2.99")
    assert w.send(other, {"t": "watch", "room": code, "password": SECRET}) is None
    ok = w.finish_work()
    assert ok is not None and ok["t"] == "watching" and ok["frames"] == 1
    assert w.seen(other) == [(0, 0, b"private frame")]


def test_the_log_stops_growing_at_its_bound_and_live_frames_still_flow() -> None:
    w = World(watch_log_frames=3)
    code, host, guest = w.room(deck="sealed")
    early, _ = w.watcher(code)
    for k in range(5):
        w.frame(host, b"f%d" % k)
    assert [i for i, _, _ in w.seen(early)] == [0, 1, 2, 3, 4]  # a watcher that was there got them all
    full = [e.fields for e in w.logs if e.event == "limit_hit" and e.fields["limit"] == "watch_log"]
    assert len(full) == 1 and full[0]["reason"] == "watch_log_full" and w.limits("watch_log") == 1
    assert (full[0]["scope"], full[0]["frames"]) == ("room", 3)
    late, reply = w.watcher(code, ip="192.0.2.50")
    assert reply["frames"] == 5
    assert w.seen(late) == [(0, 0, b"f0"), (1, 0, b"f1"), (2, 0, b"f2")]  # the rest of the history is missed
    w.frame(guest, b"g")
    w.frame(host, b"f4", ctl=True)  # a repeat of one it did not keep is still known for one
    assert w.seen(late) == [(5, 1, b"g")] and w.seen(early) == [(5, 1, b"g")]
    assert w.limits("watch_log") == 1  # logged once
    # and by bytes
    log = RoomLog(100, 10)
    takes = [log.take(0, b"12345", b"a", ANY), log.take(1, b"123456", b"b", ANY), log.take(0, b"1", b"c", ANY)]
    assert takes == [0, 1, 2]
    assert log.frames() == ((0, b"12345"),) and log.full and log.count == 3
    log.check()


def test_a_full_log_remembers_a_bounded_number_of_hashes() -> None:
    log = RoomLog(1, 1 << 20)
    log.take(0, b"kept", b"k", ANY)
    for k in range(LATE_HASHES + 10):
        assert log.take(0, b"x", b"%d" % k, ANY) == k + 1
    log.check()
    assert log.take(0, b"x", b"k", ANY) is None  # a kept frame is known for ever
    assert log.take(0, b"x", b"%d" % (LATE_HASHES + 9), ANY) is None  # a recent one too
    assert log.take(0, b"x", b"0", ANY) == LATE_HASHES + 11  # the oldest not kept is forgotten


def test_all_the_rooms_logs_together_keep_at_most_watch_log_total_bytes() -> None:
    w = World(watch_log_total_bytes=10)
    _code_a, host_a, guest_a = w.room(deck="sealed")
    code_b, host_b, _ = w.room(deck="sealed")
    w.frame(host_a, b"aaaaaa")
    w.frame(host_b, b"bbbb")
    w.frame(host_b, b"b")  # over the relay's budget: room b's log is full (room a's has room of its own)
    assert w.core.watchers.log_bytes == 10
    full = [e.fields for e in w.logs if e.event == "limit_hit" and e.fields["limit"] == "watch_log"]
    assert [(f["scope"], f["frames"]) for f in full] == [("relay", 1)]  # (frames: how many it keeps)
    late, reply = w.watcher(code_b)
    assert reply["frames"] == 2 and w.seen(late) == [(0, 0, b"bbbb")]
    w.send(host_a, {"t": "leave", "done": True})
    w.send(guest_a, {"t": "leave", "done": True})
    assert w.core.watchers.log_bytes == 4  # a closed room's log is freed
    code_c, host_c, _ = w.room(deck="sealed")
    w.frame(host_c, b"cccccc")
    assert w.core.watchers.log_bytes == 10 and w.core.rooms[code_c].watch.log is not None
    assert w.core.rooms[code_c].watch.log.frames() == ((0, b"cccccc"),)


def test_the_rooms_close_reaches_its_watchers_and_they_are_back_in_the_lobby() -> None:
    w = World()
    code, host, guest = w.room(deck="sealed")
    cid, _ = w.watcher(code)
    w.send(host, {"t": "leave", "done": True})
    w.send(guest, {"t": "leave", "done": True})
    notice = w.inbox[cid].pop()
    assert notice == {
        "t": "room_closed",
        "room": code,
        "reason": "match_over",
        "message": "both players left the room: the match is over",
    }
    assert w.core.gauges()["watchers"] == 0 and w.core.addrs[C].watching == 0
    made = w.send(cid, {"t": "create"})
    assert made is not None and made["t"] == "created"
    # a room that ends after the grace period too
    code2, _host2, guest2 = w.room(deck="sealed")
    cid2, _ = w.watcher(code2)
    w.frame(guest2, b"hello")  # (a joiner that never spoke would be removed, the room kept)
    w.core.disconnected(w.now, guest2)
    w.run()
    w.later(121)
    assert w.inbox[cid2][-1] == {
        "t": "room_closed",
        "room": code2,
        "reason": "opponent_left",
        "message": "a player did not come back within the grace period",
    }  # (the seat still there got the certificate; a watcher none)


def test_a_slow_watcher_is_closed_and_never_slows_a_seat() -> None:
    w = World()
    code, host, guest = w.room(deck="sealed")
    cid, _ = w.watcher(code)
    w.core.slow_consumer(w.now, cid)
    w.run()
    assert w.closed[cid] == "slow_consumer" and w.core.rooms[code].watch.conns == {}
    w.frame(host, b"on we go")
    assert [m["d"] for m in w.inbox[guest] if m["t"] == "frame"] == [b"on we go"]
    assert w.core.gauges()["watchers"] == 0


def test_the_archive_gets_each_room_both_seats_took_once_with_its_frames_in_order() -> None:
    w = World(archive=True)
    code, host, guest = w.room()  # (a shared room: no watchers, but the archive keeps its log)
    assert w.core.rooms[code].watch.log is not None
    frames = [(host, b"h0"), (guest, b"g0"), (host, b"h0"), (host, b"h1"), (guest, b"g1")]
    for cid, d in frames:
        w.frame(cid, d)
    w.send(host, {"t": "leave", "done": True})
    assert w.archives == []
    w.send(guest, {"t": "leave", "done": True})
    assert w.archives == [Archive(code, False, ((0, b"h0"), (1, b"g0"), (0, b"h1"), (1, b"g1")))]
    assert w.core.metrics.archives_total == 1
    assert [e.fields["frames"] for e in w.logs if e.event == "room_archived"] == [4]
    # a room nobody joined, and a room nobody sent a frame in: nothing
    lone = w.connect(A)
    made = w.send(lone, {"t": "create", "private": True})
    assert made is not None
    w.frame(lone, b"alone")
    w.send(lone, {"t": "leave"})
    _code2, host2, guest2 = w.room(private=True)
    w.send(host2, {"t": "leave", "done": True})
    w.send(guest2, {"t": "leave", "done": True})
    assert len(w.archives) == 1
    # the rooms still open when the relay stops go as they are (the hook keeps the finished ones), once
    code3, host3, _guest3 = w.room(private=True)
    w.frame(host3, b"x")
    w.core.shutdown(w.now)
    w.run()
    assert w.archives[1:] == [Archive(code3, True, ((0, b"x"),))]
    w.core.shutdown(w.now)
    w.run()
    assert len(w.archives) == 2 and w.core.metrics.archives_total == 2


def test_no_archive_unless_the_relay_keeps_one() -> None:
    w = World()
    _code, host, guest = w.room(deck="sealed")
    w.frame(host, b"h")
    w.send(host, {"t": "leave", "done": True})
    w.send(guest, {"t": "leave", "done": True})
    assert w.archives == [] and w.core.metrics.archives_total == 0
