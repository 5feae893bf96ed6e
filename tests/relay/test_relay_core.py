"""The relay's rules in process, with a fake clock: no sockets, no waiting (relay/core.py).

Every per-address limit of issue 13: a stranger's limit never stops a different address.
"""

from __future__ import annotations

from typing import Any

import pytest
from nacl.signing import SigningKey

from koikoi.protocol.framing import decode, encode
from koikoi.protocol.witness import open_certificate, sign_seat_proof
from koikoi.relay import codes
from koikoi.relay.core import (
    Close,
    HashPassword,
    Log,
    RelayConfig,
    RelayCore,
    Send,
    VerifyPassword,
    address_key,
    client_address,
)

A = "198.51.100.1"
B = "192.0.2.7"


class World:
    """A core, a clock, and the messages each connection was sent."""

    def __init__(self, **cfg: Any) -> None:
        self.core = RelayCore(RelayConfig(**cfg))
        self.now = 1000.0
        self.inbox: dict[int, list[dict[str, Any]]] = {}
        self.closed: dict[int, str] = {}
        self.logs: list[Log] = []
        self.work: list[HashPassword | VerifyPassword] = []
        self.player = SigningKey(bytes(range(1, 33)))
        """The player key every seat here proves (the tests of seat keys pass their own ``key``/``proof``)."""
        self.nonces: dict[int, bytes] = {}

    def run(self) -> None:
        for e in self.core.out:
            if isinstance(e, Send):
                self.inbox.setdefault(e.conn, []).append(decode(e.data))
            elif isinstance(e, Close):
                self.closed[e.conn] = e.reason
            elif isinstance(e, Log):
                self.logs.append(e)
            elif isinstance(e, HashPassword | VerifyPassword):
                self.work.append(e)
        self.core.out.clear()

    def later(self, seconds: float) -> None:
        self.now += seconds
        self.core.tick(self.now)
        self.run()

    def connect(self, ip: str) -> int:
        cid, refusal = self.core.connect(self.now, ip)
        self.run()
        assert refusal is None, refusal
        hello = self.inbox[cid].pop(0)
        assert hello["t"] == "relay"
        self.nonces[cid] = hello["nonce"]
        return cid

    def prove(self, cid: int, key: SigningKey | None = None) -> dict[str, bytes]:
        """``key`` and ``proof`` fields for a seat request on ``cid`` (the world's player key by default)."""
        k = key or self.player
        return {"key": bytes(k.verify_key), "proof": sign_seat_proof(k, self.core.public_key, self.nonces[cid])}

    def send(self, cid: int, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Send ``obj`` from ``cid``; the first message ``cid`` gets back (older ones are dropped). A seat
        request (create, join, resume) without a ``key`` gets the world's player key and its proof."""
        if obj.get("t") in ("create", "join", "resume") and "key" not in obj and cid in self.nonces:
            obj = {**obj, **self.prove(cid)}
        self.inbox.pop(cid, None)
        self.core.message(self.now, cid, encode(obj))
        self.run()
        box = self.inbox.get(cid, [])
        return box.pop(0) if box else None

    def finish_work(self, result: Any = None) -> dict[str, Any] | None:
        """Do the password work the core asked for (really: scrypt), hand it back, return the reply."""
        w = self.work.pop(0)
        if isinstance(w, HashPassword):
            result = codes.hash_password(w.password) if result is None else result
        elif result is None:
            result = codes.verify_password(w.password, w.stored)
        self.core.work_done(self.now, w.conn, result)
        self.run()
        box = self.inbox.get(w.conn, [])
        return box.pop(0) if box else None

    def limits(self, limit: str) -> int:
        return self.core.metrics.limit_hits_total.get(limit, 0)

    def limit_logs(self, limit: str) -> list[dict[str, Any]]:
        return [e.fields for e in self.logs if e.event == "limit_hit" and e.fields["limit"] == limit]

    def disconnect(self, cid: int) -> None:
        self.core.disconnected(self.now, cid)
        self.run()


def test_addresses_count_per_ipv4_and_per_ipv6_64() -> None:
    assert address_key("198.51.100.1") == "198.51.100.1"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:198.51.100.1") == "198.51.100.1"


def test_connections_are_counted_before_and_after_the_handshake() -> None:
    w = World(max_connections_per_ip=3, max_handshakes_per_ip=2)
    core = w.core
    assert core.tcp_opened(w.now, A) and core.tcp_opened(w.now, A)
    assert not core.tcp_opened(w.now, A)  # a third still in the handshake: closed at once
    assert core.tcp_opened(w.now, B)  # another address is not affected
    w.run()
    assert (
        w.limits("handshakes_per_ip") == 1 and w.limit_logs("handshakes_per_ip")[0]["reason"] == "too_many_handshakes"
    )
    core.handshake_done(w.now, A, True)
    core.handshake_done(w.now, A, False)  # timed out
    w.run()
    assert w.limits("handshake") == 1
    for _ in range(3):
        w.connect(A)
    assert core.tcp_opened(w.now, A)  # one more may finish its handshake, to be told why it is refused:
    cid, refusal = core.connect(w.now, A)
    assert (cid, refusal) == (0, "too_many_connections")
    assert not core.tcp_opened(w.now, A)  # any more at once are cut before the handshake
    assert w.connect("2001:db8::1") and w.connect("2001:db8::2") and w.connect("2001:db8::3")
    assert core.connect(w.now, "2001:db8::ffff")[1] == "too_many_connections"  # the same /64
    assert core.connect(w.now, "2001:db8:0:1::1")[1] is None


def test_failed_attempts_are_counted_per_address_across_reconnects() -> None:
    w = World(attempts_per_conn=3, attempts_per_ip=5)
    guesses = 0
    for _ in range(2):  # reconnecting after each closed connection does not reset the count
        cid = w.connect(A)
        for _ in range(3):
            reply = w.send(cid, {"t": "join", "room": "QQQQQQQQQ"})
            guesses += 1
            if cid in w.closed:
                break
            assert reply is not None and reply["code"] == "room_not_found"
        assert w.closed[cid] == "too_many_attempts"
        w.disconnect(cid)
    assert guesses == 5
    cid = w.connect(A)
    reply = w.send(cid, {"t": "join", "room": "QQQQQQQQQ"})
    assert reply is not None and reply["code"] == "too_many_attempts" and w.closed[cid] == "too_many_attempts"
    assert w.limits("address_attempts") >= 2
    # another address is untouched
    other = w.connect(B)
    reply = w.send(other, {"t": "join", "room": "QQQQQQQQQ"})
    assert reply is not None and reply["code"] == "room_not_found"
    # after the window, A may try again
    w.later(61)
    again = w.connect(A)
    reply = w.send(again, {"t": "info", "room": "QQQQQQQQQ"})
    assert reply is not None and reply["code"] == "room_not_found"


def test_waiting_rooms_are_budgeted_per_address_and_abandoned_ones_close_fast() -> None:
    w = World(max_waiting_rooms_per_ip=2, waiting_grace=10, grace=120)
    made = []
    for _ in range(2):  # create and disconnect, in a loop
        cid = w.connect(A)
        reply = w.send(cid, {"t": "create"})
        assert reply is not None and reply["t"] == "created"
        made.append(reply["room"])
        w.disconnect(cid)
    cid = w.connect(A)
    reply = w.send(cid, {"t": "create"})
    assert reply is not None and reply["code"] == "too_many_waiting_rooms"
    assert w.limits("waiting_rooms") == 1
    honest = w.connect(B)
    reply = w.send(honest, {"t": "create"})
    assert reply is not None and reply["t"] == "created"
    # the rooms whose creator left close after waiting_grace, not the full grace
    w.later(10.5)
    assert set(made).isdisjoint(w.core.rooms)
    assert reply["room"] in w.core.rooms
    closed = [e.fields for e in w.logs if e.event == "room_closed"]
    assert [c["reason"] for c in closed] == ["abandoned", "abandoned"]
    reply = w.send(cid, {"t": "create"})
    assert reply is not None and reply["t"] == "created"


def test_a_joined_room_keeps_the_full_grace() -> None:
    w = World(waiting_grace=10, grace=120)
    host, guest = w.connect(A), w.connect(B)
    room = w.send(host, {"t": "create"})["room"]  # type: ignore[index]
    w.send(guest, {"t": "join", "room": room})
    w.send(guest, {"t": "frame", "n": 1, "d": b"hello"})
    w.disconnect(host)
    w.later(60)
    assert room in w.core.rooms
    w.later(61)
    assert room not in w.core.rooms and w.inbox[guest][-1]["reason"] == "opponent_left"


def test_password_work_is_budgeted_per_address() -> None:
    w = World(scrypt_per_ip=1)
    one, two = w.connect(A), w.connect(A)
    assert w.send(one, {"t": "create", "password": "pw"}) is None  # hashing: the reply waits for the work
    assert len(w.work) == 1 and isinstance(w.work[0], HashPassword)
    reply = w.send(two, {"t": "create", "password": "pw"})
    assert reply is not None and reply["code"] == "too_many_password_checks"
    assert w.limits("scrypt") == 1
    honest = w.connect(B)
    assert w.send(honest, {"t": "create", "password": "secret"}) is None and len(w.work) == 2
    assert w.finish_work()["t"] == "created"  # type: ignore[index]
    created = w.finish_work()
    assert created is not None and created["t"] == "created"
    reply = w.send(two, {"t": "create", "password": "pw"})  # A's one check is done: A may go on
    assert reply is None and len(w.work) == 1
    w.finish_work()


def test_a_silent_joiner_is_removed_and_the_room_goes_back_to_the_lobby() -> None:
    w = World(first_frame_timeout=30)
    host, squatter, friend = w.connect(A), w.connect("203.0.113.5"), w.connect(B)
    created = w.send(host, {"t": "create"})
    assert created is not None
    room = created["room"]
    w.send(host, {"t": "frame", "n": 1, "d": b"host hello"})
    joined = w.send(squatter, {"t": "join", "room": room})
    assert joined is not None and joined["t"] == "joined"
    assert w.send(friend, {"t": "list"})["rooms"] == []  # type: ignore[index]
    assert w.inbox.pop(squatter) == [{"t": "frame", "n": 1, "d": b"host hello"}]
    w.inbox.pop(host)
    w.later(29)
    assert w.core.rooms[room].seats[1].conn is not None
    w.later(2)
    assert w.inbox[squatter][0]["t"] == "room_closed" and w.inbox[squatter][0]["reason"] == "removed"
    assert w.inbox[host] == [{"t": "peer", "event": "left", "reason": "no_first_frame"}]
    assert w.limits("first_frame") == 1
    assert [r["room"] for r in w.send(friend, {"t": "list"})["rooms"]] == [room]  # type: ignore[index]
    # the squatter may not take it again; the friend may, and gets the host's frames again once the
    # host resends them (peer joined tells it from where)
    reply = w.send(squatter, {"t": "join", "room": room})
    assert reply is not None and reply["code"] == "too_many_attempts"
    w.inbox.pop(host, None)
    joined = w.send(friend, {"t": "join", "room": room})
    assert joined is not None and joined["t"] == "joined"
    assert w.inbox[host][0]["event"] == "joined" and w.inbox[host][0]["received"] == 0
    # a joiner that speaks in time stays
    w.send(friend, {"t": "frame", "n": 1, "d": b"friend hello"})
    w.later(60)
    assert w.core.rooms[room].seats[1].conn is not None


def test_every_refusal_has_its_own_code_and_counter() -> None:
    """Each per-address refusal: the code the client is told, a ``limit_hit`` log with its reason, a metric."""
    told: dict[str, str | None] = {}
    c = World(max_connections_per_ip=1, max_handshakes_per_ip=1, new_connections_burst=1)
    c.connect(A)
    told["connections_per_ip"] = c.core.connect(c.now, A)[1]
    assert c.core.tcp_opened(c.now, B) and not c.core.tcp_opened(c.now, B)  # handshakes_per_ip
    c.core.handshake_done(c.now, B, True)
    c.now += 0.1
    assert not c.core.tcp_opened(c.now, B)  # connection_rate (nothing can be told before the handshake)
    c.run()
    w = World(max_waiting_rooms_per_ip=1, max_rooms_per_ip=2, scrypt_per_ip=1, attempts_per_ip=1, first_frame_timeout=5)
    host, other = w.connect(A), w.connect(A)
    room = w.send(host, {"t": "create"})["room"]  # type: ignore[index]
    told["waiting_rooms"] = w.send(other, {"t": "create"})["code"]  # type: ignore[index]
    w.send(w.connect(B), {"t": "join", "room": room})  # never speaks: first_frame
    w.later(6)
    w.send(other, {"t": "join", "room": room})  # A joins its own room and speaks: not waiting any more
    w.send(other, {"t": "frame", "n": 1, "d": b"x"})
    w.disconnect(host)
    w.disconnect(other)
    assert w.send(w.connect(A), {"t": "create"})["t"] == "created"  # type: ignore[index]
    told["rooms_per_ip"] = w.send(w.connect(A), {"t": "create"})["code"]  # type: ignore[index]
    w.send(w.connect("203.0.113.10"), {"t": "create", "password": "x"})
    told["scrypt"] = w.send(w.connect("203.0.113.10"), {"t": "create", "password": "x"})["code"]  # type: ignore[index]
    guesser = w.connect("203.0.113.12")
    w.send(guesser, {"t": "join", "room": "QQQQQ"})
    told["address_attempts"] = w.closed.get(guesser)
    expected = {
        "connections_per_ip": ("too_many_connections", "too_many_connections"),
        "handshakes_per_ip": (None, "too_many_handshakes"),
        "connection_rate": (None, "too_many_new_connections"),
        "waiting_rooms": ("too_many_waiting_rooms", "too_many_waiting_rooms"),
        "rooms_per_ip": ("too_many_open_rooms", "too_many_open_rooms"),
        "scrypt": ("too_many_password_checks", "too_many_password_checks"),
        "address_attempts": ("too_many_attempts", "too_many_attempts"),
        "first_frame": (None, "no_first_frame"),
    }
    for limit, (code, reason) in expected.items():
        world = c if limit in ("connections_per_ip", "handshakes_per_ip", "connection_rate") else w
        assert world.limits(limit) == 1, limit
        assert [f["reason"] for f in world.limit_logs(limit)] == [reason], limit
        if code is not None:
            assert told[limit] == code, limit
    assert len({r for _, r in expected.values()}) == len(expected)  # each its own reason


@pytest.mark.parametrize(
    "bad", [{"t": "join", "room": "QQQQQ"}, {"t": "resume", "room": "QQQQQ", "seat": 0, "token": "x"}]
)
def test_failures_of_every_kind_count_for_the_address(bad: dict[str, Any]) -> None:
    w = World(attempts_per_conn=100, attempts_per_ip=3)
    cid = w.connect(A)
    for _ in range(3):
        w.send(cid, bad)
    assert w.closed.get(cid) == "too_many_attempts"


def test_a_relay_that_started_lately_takes_no_chosen_code() -> None:
    # it cannot know whether the code was a match's before its start: a cheater could create that room anew
    # and take both of its seats (tests/adversary/test_adversary_attack_recreated_room_theft.py)
    w = World()
    cid = w.connect(A)
    reply = w.send(cid, {"t": "create", "private": True, "room": codes.new_code(private=True)})
    assert reply is not None and reply["code"] == "room_taken" and "started lately" in reply["message"]


def test_a_creator_may_draw_the_code_itself() -> None:
    w = World(max_waiting_rooms_per_ip=10, chosen_codes_after_s=0)
    cid = w.connect(A)
    code = codes.new_code(private=True)
    created = w.send(cid, {"t": "create", "private": True, "room": codes.format_code(code).lower()})
    assert created is not None and created["room"] == code
    other = w.connect(B)
    reply = w.send(other, {"t": "create", "private": True, "room": code})
    assert reply is not None and reply["code"] == "room_taken"
    for bad in (code[:5], "QQQQQ", 12345):  # a public code for a private room, a wrong length, not text
        reply = w.send(other, {"t": "create", "private": True, "room": bad})
        assert reply is not None and reply["code"] == "bad_request", bad
    w.send(cid, {"t": "leave"})
    reply = w.send(other, {"t": "create", "private": True, "room": code})  # closed lately: still taken
    assert reply is not None and reply["code"] == "room_taken"


def test_the_lobby_shows_each_rooms_deck_and_an_old_client_gets_shared() -> None:
    """Issue 11: the creator's ``deck`` reaches the lobby row and the room's info; a creator that names none
    (a client from before the sealed deck) is shown ``shared``; anything else is refused."""
    w = World()
    sealed, old, other, bad, viewer = (w.connect(f"198.51.100.{i}") for i in range(1, 6))
    made = [w.send(sealed, {"t": "create", "deck": "sealed"}), w.send(old, {"t": "create"})]
    w.later(1)
    made.append(w.send(other, {"t": "create", "deck": "shared"}))
    assert all(m is not None and m["t"] == "created" for m in made)
    codes_ = [m["room"] for m in made if m is not None]
    for wrong in ("SEALED", 1, None, ["sealed"]):
        reply = w.send(bad, {"t": "create", "deck": wrong})
        assert reply is not None and reply["code"] == "bad_request" and "deck" in reply["message"], reply
    listing = w.send(viewer, {"t": "list"})
    assert listing is not None
    assert [(r["room"], r["deck"]) for r in listing["rooms"]] == list(
        zip(codes_, ["sealed", "shared", "shared"], strict=True)
    )
    info = w.send(viewer, {"t": "info", "room": codes_[0]})
    assert info is not None and info["t"] == "room" and info["deck"] == "sealed"
    assert made[0] is not None and made[0]["settings"]["deck"] == "sealed"


def test_rooms_are_budgeted_per_address_in_any_state() -> None:
    """Issue 13's room flood, without waiting rooms: create, join from a second connection of the same
    address, one frame, disconnect both (a playing room keeps the full grace); or rebuild made-up rooms
    with ``resume``. Either way one address holds at most ``max_rooms_per_ip`` rooms; another still creates."""
    w = World(max_rooms=20, max_rooms_per_ip=5)
    refused = None
    for _ in range(8):
        host, guest = w.connect(A), w.connect(A)
        created = w.send(host, {"t": "create"})
        assert created is not None
        if created["t"] != "created":
            refused = created["code"]
            break
        w.send(guest, {"t": "join", "room": created["room"]})
        w.send(guest, {"t": "frame", "n": 1, "d": b"x"})
        w.disconnect(host)
        w.disconnect(guest)
        w.later(1)
    assert refused == "too_many_open_rooms"
    assert w.limits("rooms_per_ip") == 1 and w.limit_logs("rooms_per_ip")[0]["reason"] == "too_many_open_rooms"
    for _ in range(3):  # rebuilding rooms that never were counts too (the same address)
        cid = w.connect(A)
        reply = w.send(
            cid,
            {"t": "resume", "room": codes.new_code(True), "seat": 0, "token": "t" * 24, "peer_check": bytes(32)},
        )
        assert reply is not None and reply["code"] == "too_many_open_rooms"
        w.disconnect(cid)
    assert sum(1 for r in w.core.rooms.values() if r.creator == A) == 5
    honest = w.connect(B)
    created = w.send(honest, {"t": "create"})
    assert created is not None and created["t"] == "created"
    # closed rooms give the budget back
    w.later(200)
    assert not any(r.creator == A for r in w.core.rooms.values())
    cid = w.connect(A)
    created = w.send(cid, {"t": "create"})
    assert created is not None and created["t"] == "created"


def test_rebuilt_rooms_count_for_the_address() -> None:
    w = World(max_rooms=20, max_rooms_per_ip=3)
    for i in range(5):
        cid = w.connect(A)
        reply = w.send(
            cid,
            {"t": "resume", "room": codes.new_code(True), "seat": 0, "token": "t" * 24, "peer_check": bytes(32)},
        )
        assert reply is not None
        assert reply["t"] == "resumed" if i < 3 else reply["code"] == "too_many_open_rooms", (i, reply)
        w.disconnect(cid)
    assert len(w.core.rooms) == 3
    other = w.connect(B)
    reply = w.send(
        other, {"t": "resume", "room": codes.new_code(True), "seat": 1, "token": "u" * 24, "peer_check": bytes(32)}
    )
    assert reply is not None and reply["t"] == "resumed"


def test_a_creator_away_when_someone_joins_gets_the_full_grace() -> None:
    """The short grace is for a room nobody waits on: once a joiner sits down, the creator who dropped has
    the full grace (from when it left) to come back."""
    w = World(waiting_grace=10, grace=120)
    host, guest = w.connect(A), w.connect(B)
    created = w.send(host, {"t": "create", "private": True})
    assert created is not None
    w.disconnect(host)
    w.later(5)
    joined = w.send(guest, {"t": "join", "room": created["room"]})
    assert joined is not None and joined["t"] == "joined" and joined["peer"] == "away"
    w.send(guest, {"t": "frame", "n": 1, "d": b"hello"})
    w.later(10)
    assert created["room"] in w.core.rooms
    w.later(100)  # 115 s after the creator left
    assert created["room"] in w.core.rooms
    w.later(6)
    assert created["room"] not in w.core.rooms and w.inbox[guest][-1]["reason"] == "opponent_left"


def test_the_address_behind_a_trusted_proxy() -> None:
    xff = [(b"X-Forwarded-For", b"203.0.113.9, 198.51.100.4")]
    assert client_address(xff, "127.0.0.1", trust_proxy=True) == "198.51.100.4"  # the entry the proxy added
    assert client_address(xff, "127.0.0.1", trust_proxy=False) == "127.0.0.1"  # a client's own header: ignored
    assert client_address([(b"x-real-ip", b" 2001:db8::1 ")], "127.0.0.1", trust_proxy=True) == "2001:db8::1"
    bad = [(b"x-forwarded-for", b"nonsense"), (b"x-real-ip", b"192.0.2.1")]
    assert client_address(bad, "127.0.0.1", trust_proxy=True) == "192.0.2.1"
    assert client_address([(b"x-forwarded-for", b"nonsense")], "127.0.0.1", trust_proxy=True) == "127.0.0.1"


def test_new_connections_are_rate_limited_per_address() -> None:
    w = World(new_connections_per_ip_per_s=2, new_connections_burst=3, max_handshakes_per_ip=100)
    core = w.core
    for _ in range(3):
        assert core.tcp_opened(w.now, A)
        core.handshake_done(w.now, A, True)
    assert not core.tcp_opened(w.now, A)  # the burst is spent: closed before the handshake
    assert core.tcp_opened(w.now, B)  # another address is not affected
    w.run()
    assert w.limits("connection_rate") == 1
    assert w.limit_logs("connection_rate")[0]["reason"] == "too_many_new_connections"
    w.now += 0.5  # 2 a second: one more after half a second
    assert core.tcp_opened(w.now, A) and not core.tcp_opened(w.now, A)
    # behind a trusted proxy every TCP peer is the proxy: the rate counts the forwarded address, after the
    # handshake, and the client is told why
    p = World(new_connections_per_ip_per_s=2, new_connections_burst=2, trust_proxy=True)
    p.connect(A)
    p.connect(A)
    assert p.core.connect(p.now, A) == (0, "too_many_connections")
    assert p.core.connect(p.now, B)[1] is None
    p.run()
    assert p.limits("connection_rate") == 1


def test_wrong_passwords_lock_out_the_guessing_address_not_the_room() -> None:
    w = World(attempts_per_room=3, attempts_per_ip=10, attempts_per_conn=10)
    host, guesser, friend = w.connect(A), w.connect("203.0.113.5"), w.connect(B)
    assert w.send(host, {"t": "create", "password": "right"}) is None
    created = w.finish_work()
    assert created is not None
    room = created["room"]
    for _ in range(3):
        assert w.send(guesser, {"t": "join", "room": room, "password": "wrong"}) is None
        reply = w.finish_work()
        assert reply is not None and reply["code"] == "wrong_password"
    reply = w.send(guesser, {"t": "join", "room": room, "password": "right"})  # even the right one, now
    assert reply is not None and reply["code"] == "too_many_attempts" and not w.work
    assert w.limit_logs("join_attempts")[0]["scope"] == "room"
    assert w.send(friend, {"t": "join", "room": room, "password": "right"}) is None
    joined = w.finish_work()
    assert joined is not None and joined["t"] == "joined"


def test_password_work_is_rate_limited_per_address() -> None:
    """One check at a time is not enough: checks done one after another are 2 a second (a burst of 10)."""
    w = World(scrypt_per_ip=1, scrypt_per_ip_per_s=2.0)
    cid = w.connect(A)
    digest = codes.hash_password("pw")  # hand back a ready hash: the budget is what is tested, not scrypt
    for _ in range(10):
        assert w.send(cid, {"t": "create", "password": "pw"}) is None
        assert w.finish_work(digest)["t"] == "created"  # type: ignore[index]
        w.send(cid, {"t": "leave"})
    reply = w.send(cid, {"t": "create", "password": "pw"})
    assert reply is not None and reply["code"] == "too_many_password_checks" and not w.work
    other = w.connect(B)
    assert w.send(other, {"t": "create", "password": "pw"}) is None and len(w.work) == 1
    w.finish_work(digest)
    w.now += 0.5
    assert w.send(cid, {"t": "create", "password": "pw"}) is None and len(w.work) == 1


# ------------------------------------------------------------------------ seats and keys


P0, P1, STRANGER = (SigningKey(bytes([n] * 32)) for n in (40, 41, 42))


def _certificate(w: World, cid: int) -> Any:
    reply = w.send(cid, {"t": "certify"})
    assert reply is not None and reply["t"] == "certificate", reply
    return open_certificate(reply["cert"])


def test_a_seat_needs_a_proven_key_and_stays_bound_to_it() -> None:
    """create, join and resume carry the player's key and its signature of the relay key and the connection's
    nonce; the seat is bound to that key, a resume must prove it again (the token alone is not enough), and a
    certificate names both seats' keys — what the players check against their HELLOs."""
    w = World()
    host, guest, thief = w.connect(A), w.connect(B), w.connect("203.0.113.9")
    for bad, code in (
        ({}, "bad_request"),  # no key at all
        ({"key": bytes(P0.verify_key), "proof": bytes(64)}, "bad_proof"),
        ({"key": bytes(P0.verify_key), "proof": w.prove(host, P1)["proof"]}, "bad_proof"),  # another key's proof
        ({**w.prove(guest, P0)}, "bad_proof"),  # a proof made for another connection's nonce
        ({"key": bytes(P0.verify_key)[:31], "proof": w.prove(host, P0)["proof"]}, "bad_request"),
    ):
        reply = w.send(host, {"t": "create", "key": b"", **bad})
        assert reply is not None and reply.get("code") == code, (bad, reply)
    created = w.send(host, {"t": "create", **w.prove(host, P0)})
    assert created is not None and created["t"] == "created"
    room = created["room"]
    joined = w.send(guest, {"t": "join", "room": room, **w.prove(guest, P1)})
    assert joined is not None and joined["t"] == "joined"
    w.send(host, {"t": "frame", "n": 1, "d": b"hello"})
    w.send(guest, {"t": "frame", "n": 1, "d": b"hello too"})
    assert _certificate(w, guest).seat_keys == (bytes(P0.verify_key), bytes(P1.verify_key))
    # the host's token in a thief's hands: without the host's key the seat is not taken
    w.disconnect(host)
    stolen = {"t": "resume", "room": room, "seat": 0, "token": created["token"], "received": 1}
    reply = w.send(thief, {**stolen, **w.prove(thief, STRANGER)})
    assert reply is not None and reply["code"] == "wrong_key", reply
    assert any(e.event == "seat_theft_refused" and e.fields.get("why") == "wrong_key" for e in w.logs)
    assert w.core.rooms[room].seats[0].conn is None  # still the host's, away
    back = w.connect(A)
    reply = w.send(back, {**stolen, **w.prove(back, P0)})
    assert reply is not None and reply["t"] == "resumed", reply
    assert _certificate(w, back).seat_keys == (bytes(P0.verify_key), bytes(P1.verify_key))


def test_a_wrong_key_counts_as_a_failed_attempt() -> None:
    w = World(attempts_per_conn=2)
    host, guest = w.connect(A), w.connect(B)
    created = w.send(host, {"t": "create", **w.prove(host, P0)})
    assert created is not None
    w.send(guest, {"t": "join", "room": created["room"], **w.prove(guest, P1)})
    thief = w.connect("203.0.113.9")
    stolen = {"t": "resume", "room": created["room"], "seat": 0, "token": created["token"], "received": 0}
    assert w.send(thief, {**stolen, **w.prove(thief, STRANGER)})["code"] == "wrong_key"  # type: ignore[index]
    w.send(thief, {**stolen, **w.prove(thief, STRANGER)})
    assert w.closed.get(thief) == "too_many_attempts"


def test_a_rebuilt_room_binds_each_seat_at_its_first_resume_and_a_freed_seat_forgets_its_key() -> None:
    w = World(first_frame_timeout=30)
    first = w.connect(A)
    code = codes.new_code(True)
    other_token = codes.new_token()
    rebuilt = {"t": "resume", "room": code, "seat": 0, "token": "t" * 24, "peer_check": codes.token_hash(other_token)}
    reply = w.send(first, {**rebuilt, **w.prove(first, P0)})
    assert reply is not None and reply["t"] == "resumed" and reply["restored"]
    seats = w.core.rooms[code].seats
    assert (seats[0].player_key, seats[1].player_key) == (bytes(P0.verify_key), None)
    second = w.connect(B)
    theirs = {"t": "resume", "room": code, "seat": 1, "token": other_token}
    assert w.send(second, {**theirs, **w.prove(second, P1)})["t"] == "resumed"  # type: ignore[index]
    assert seats[1].player_key == bytes(P1.verify_key)
    w.disconnect(second)
    again = w.connect(B)
    assert w.send(again, {**theirs, **w.prove(again, STRANGER)})["code"] == "wrong_key"  # type: ignore[index]
    # a joiner removed for silence takes its key with it: the next joiner's is the seat's
    host, squatter, friend = w.connect(A), w.connect("203.0.113.5"), w.connect("192.0.2.99")
    created = w.send(host, {"t": "create", **w.prove(host, P0)})
    assert created is not None
    w.send(squatter, {"t": "join", "room": created["room"], **w.prove(squatter, STRANGER)})
    assert w.core.rooms[created["room"]].seats[1].player_key == bytes(STRANGER.verify_key)
    w.later(31)
    assert w.core.rooms[created["room"]].seats[1].player_key is None
    w.send(friend, {"t": "join", "room": created["room"], **w.prove(friend, P1)})
    assert w.core.rooms[created["room"]].seats[1].player_key == bytes(P1.verify_key)


def test_only_refusals_of_new_connections_excuse_an_away_seat() -> None:
    """seat_locked_out (no certificate about a seat away from an address that a limit refused) counts only
    refusals that could have kept a returning holder out — new connections over a per-address limit — and only
    while they go on: a seat's own connection cut for what it sent, failed attempts and handshake timeouts do
    not count (else a cheater could get its own seat excused: test_adversary_attack_self_lockout.py)."""
    w = World(max_connections_per_ip=2, lockout_quiet_s=30)
    host, guest = w.connect(A), w.connect(B)
    created = w.send(host, {"t": "create"})
    assert created is not None
    w.send(guest, {"t": "join", "room": created["room"]})
    w.send(host, {"t": "frame", "n": 1, "d": b"h"})
    w.send(guest, {"t": "frame", "n": 1, "d": b"g"})
    w.core.message(w.now, guest, b"\x81\xa1t\xa5frame" + b"x" * (w.core.cfg.max_frame_bytes + 100))  # oversized
    w.run()
    assert w.closed.get(guest) == "oversized_frame"
    w.disconnect(guest)
    w.core.handshake_done(w.now, B, False)  # a handshake from B that timed out
    prober = w.connect(B)
    for _ in range(3):
        w.send(prober, {"t": "info", "room": "QQQQQ"})  # failed attempts from B
    w.disconnect(prober)
    w.later(1)
    assert _certificate(w, host).silent_seat == 1  # none of that excuses the away seat
    w.connect(B)
    w.connect(B)
    _cid, refusal = w.core.connect(w.now, B)  # a third connection from B: refused (it may be the holder)
    w.run()
    assert refusal == "too_many_connections"
    reply = w.send(host, {"t": "certify"})
    assert reply is not None and reply["code"] == "seat_locked_out"
    w.later(31)  # 30 s without another refusal: the address is quiet again
    assert _certificate(w, host).silent_seat == 1


def test_a_refusal_counts_rooms_in_plain_words() -> None:
    w = World(max_waiting_rooms_per_ip=1)
    cid = w.connect(A)
    assert w.send(cid, {"t": "create"})["t"] == "created"  # type: ignore[index]
    reply = w.send(w.connect(A), {"t": "create"})
    assert reply is not None and reply["message"] == "this address already has 1 room waiting for an opponent"


@pytest.mark.parametrize("done", [True, False])
def test_a_room_whose_match_finished_is_logged_finished_not_abandoned(done: bool) -> None:
    w = World(grace=120)
    host, guest = w.connect(A), w.connect(B)
    room = w.send(host, {"t": "create"})["room"]  # type: ignore[index]
    w.send(guest, {"t": "join", "room": room})
    w.send(guest, {"t": "frame", "n": 1, "d": b"hello"})
    left = w.send(host, {"t": "leave", "done": done})  # the host's last message: the match is over (or not)
    assert left == {"t": "left", "room": room} and room in w.core.rooms
    w.disconnect(guest)  # the guest's connection ends without a leave
    w.later(121)
    closed = [e.fields["reason"] for e in w.logs if e.event == "room_closed"]
    assert closed == (["finished"] if done else ["abandoned"])
    assert w.core.metrics.rooms_closed_total == {closed[0]: 1}
    again = w.send(w.connect(A), {"t": "resume", "room": room, "seat": 0, "token": "x" * 20, "received": 0})
    assert again is not None and again["code"] == "room_closed" and again["reason"] == closed[0]
