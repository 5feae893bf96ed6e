"""The relay, in process: rooms, lobby, passwords, seats and tokens, limits, logs, metrics, shutdown."""

from __future__ import annotations

import io
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.signing import SigningKey
from trio_websocket import ConnectionClosed, open_websocket_url

from koikoi.protocol.framing import decode, encode
from koikoi.protocol.witness import fingerprint, sign_seat_proof
from koikoi.relay import codes
from koikoi.relay.client import (
    Frame,
    PeerNotice,
    RelayClient,
    RelayClosed,
    RelayError,
    RoomClosed,
    SeatTicket,
    connect,
    routed_url,
)
from koikoi.relay.core import MAX_REWIND
from koikoi.relay.observe import EventLog
from koikoi.relay.server import Relay, RelayConfig, open_relay

SECRET = "correct horse battery staple"


@asynccontextmanager
async def relay_for_test(**kw: Any) -> AsyncIterator[tuple[Relay, io.StringIO]]:
    buf = io.StringIO()
    kw.setdefault("port", 0)
    async with open_relay(RelayConfig(**kw), log=EventLog(buf)) as relay:
        yield relay, buf


def events(buf: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buf.getvalue().splitlines()]


@asynccontextmanager
async def take_back(url: str, ticket: SeatTicket) -> AsyncIterator[RelayClient]:
    """A new connection that takes the ticket's seat back (the relay is up: one try)."""
    async with connect(url, identity=ticket.identity) as client:
        await client.resume(ticket)
        yield client


async def next_event(c: RelayClient, timeout: float = 5.0) -> Frame | PeerNotice:
    with trio.fail_after(timeout):
        return await c.receive()


async def expect_frames(c: RelayClient, payloads: list[bytes]) -> None:
    got: list[bytes] = []
    while len(got) < len(payloads):
        ev = await next_event(c)
        if isinstance(ev, Frame):
            got.append(ev.data)
    assert got == payloads


async def expect_peer(c: RelayClient, event: str) -> PeerNotice:
    while True:
        ev = await next_event(c)
        if isinstance(ev, PeerNotice) and ev.event == event:
            return ev


@asynccontextmanager
async def open_raw(url: str, **kw: Any) -> AsyncIterator[Any]:
    """A bare WebSocket to the relay, past its announcement (checked: a 32-byte key and its fingerprint)."""
    async with open_websocket_url(url, **kw) as ws:
        with trio.fail_after(5):
            first = await ws.get_message()
        assert isinstance(first, bytes)
        hello = decode(first)
        assert hello["t"] == "relay" and len(hello["key"]) == 32
        assert hello["fingerprint"] == fingerprint(hello["key"])
        _ANNOUNCED[id(ws)] = (hello["key"], hello["nonce"])
        try:
            yield ws
        finally:
            del _ANNOUNCED[id(ws)]


_ANNOUNCED: dict[int, tuple[bytes, bytes]] = {}
"""The relay key and nonce each raw connection was announced (a seat request proves a key over them)."""
RAW_PLAYER = SigningKey(bytes(range(2, 34)))


def proved(ws: Any, obj: dict[str, Any]) -> dict[str, Any]:
    """A seat request (create, join, resume) with ``RAW_PLAYER``'s key and proof for ``ws``, unless it has one."""
    if obj.get("t") not in ("create", "join", "resume") or "key" in obj or id(ws) not in _ANNOUNCED:
        return obj
    relay_key, nonce = _ANNOUNCED[id(ws)]
    return {**obj, "key": bytes(RAW_PLAYER.verify_key), "proof": sign_seat_proof(RAW_PLAYER, relay_key, nonce)}


async def raw_request(ws: Any, obj: dict[str, Any]) -> dict[str, Any]:
    await ws.send_message(encode(proved(ws, obj)))
    with trio.fail_after(5):
        reply = decode(await ws.get_message())
    assert isinstance(reply, dict)
    return reply


async def wait_closed(ws: Any, timeout: float = 5.0) -> tuple[list[dict[str, Any]], int | None, str | None]:
    """Read until the relay closes the connection: the messages seen, the close code and reason."""
    seen = []
    with trio.fail_after(timeout):
        while True:
            try:
                seen.append(decode(await ws.get_message()))
            except ConnectionClosed as e:
                assert e.reason is not None
                return seen, e.reason.code, e.reason.reason


# ------------------------------------------------------------------ rooms and lobby


async def test_create_list_join_and_forward() -> None:
    async with relay_for_test() as (relay, buf):
        async with connect(relay.url) as a, connect(relay.url) as b, connect(relay.url) as c:
            ta = await a.create_room(rounds=6, double_at_8=True)
            assert ta.seat == 0 and len(ta.room) == codes.PUBLIC_CODE_LENGTH
            await c.create_room(rounds=12, double_at_8=False, password=SECRET)
            async with connect(relay.url) as d:
                await d.create_room(private=True)
                rooms = await b.list_rooms()
            by_code = {r.room: r for r in rooms}
            assert len(rooms) == 2  # the private room is never listed
            ra = by_code[ta.room]
            assert (ra.rounds, ra.double_at_8, ra.doubling, ra.password) == (6, True, "×2 at 8+", False)
            assert isinstance(ra.waiting_s, int) and 0 <= ra.waiting_s <= 2
            rc = next(r for r in rooms if r.room != ta.room)
            assert (rc.rounds, rc.double_at_8, rc.doubling, rc.password) == (12, False, "No ×2 at 8+", True)
            assert rc.to_json().keys() == {"room", "rounds", "double_at_8", "password", "waiting_s", "deck"}

            info = await b.room_info(ta.room.lower())
            assert (info.rounds, info.double_at_8, info.state, info.private) == (6, True, "waiting", False)
            tb = await b.join(ta.room, rounds=6, double_at_8=True)
            assert tb.seat == 1 and tb.room == ta.room and tb.token != ta.token
            await expect_peer(a, "joined")
            assert ta.room not in {r.room for r in await b.list_rooms()}  # a full room leaves the lobby

            payloads = [b"\x00", b"not msgpack at all \xff", encode({"move": "kiku_plain_1"}), bytes(range(256))]
            for p in payloads:
                await a.send(p)
            await expect_frames(b, payloads)
            await b.send(b"reply")
            await expect_frames(a, [b"reply"])
    names = [e["event"] for e in events(buf)]
    for name in ("relay_started", "room_created", "room_joined", "relay_stopped"):
        assert name in names


async def test_frames_are_forwarded_byte_for_byte() -> None:
    async with relay_for_test() as (relay, _):
        async with open_raw(relay.url) as a, open_raw(relay.url) as b:
            created = await raw_request(a, {"t": "create", "rounds": 6, "double_at_8": True, "private": False})
            joined = await raw_request(b, {"t": "join", "room": created["room"]})
            assert joined["t"] == "joined" and joined["peer_check"] == codes.token_hash(created["token"])
            msg = await a.get_message()
            assert isinstance(msg, bytes)
            peer = decode(msg)
            assert peer["t"] == "peer" and peer["event"] == "joined"
            assert peer["peer_check"] == codes.token_hash(joined["token"])
            envelope = encode({"t": "frame", "n": 1, "d": b"\x93\x01\x02\x03 opaque"})
            await a.send_message(envelope)
            with trio.fail_after(5):
                assert await b.get_message() == envelope


async def test_unknown_room_full_room_and_settings_mismatch() -> None:
    async with relay_for_test() as (relay, _):
        async with connect(relay.url) as a, connect(relay.url) as b, connect(relay.url) as c:
            t = await a.create_room(rounds=12, double_at_8=False)
            for bad in ("XXXXX", "34679", "not a code", "", "3467934679"):
                with pytest.raises(RelayError) as ei:
                    await c.join(bad)
                assert ei.value.code == "room_not_found"
                break  # one failure only: the per-connection attempt limit is tested elsewhere
            with pytest.raises(RelayError) as ei:
                await b.join(t.room, rounds=6)
            assert ei.value.code == "settings_mismatch"
            assert ei.value.extra["settings"]["rounds"] == 12
            with pytest.raises(RelayError) as ei:
                await b.join(t.room, double_at_8=True)
            assert ei.value.code == "settings_mismatch"
            await b.join(t.room, rounds=12, double_at_8=False)
            with pytest.raises(RelayError) as ei:
                await c.join(t.room)
            assert ei.value.code == "room_full"
            with pytest.raises(RelayError) as ei:
                await b.create_room()
            assert ei.value.code == "already_seated"


async def test_private_room_codes() -> None:
    assert codes.code_bits(codes.PRIVATE_CODE_LENGTH) >= 40
    async with relay_for_test() as (relay, _):
        async with connect(relay.url) as a, connect(relay.url) as b:
            t = await a.create_room(private=True)
            assert len(t.room) == codes.PRIVATE_CODE_LENGTH and set(t.room) <= set(codes.ALPHABET)
            assert t.display == f"{t.room[:3]}-{t.room[3:6]}-{t.room[6:]}"
            assert await b.list_rooms() == []
            info = await b.room_info(t.display.lower())
            assert info.private and info.state == "waiting"
            await b.join(" " + t.display.lower() + " ")
            await expect_peer(a, "joined")


async def test_passwords() -> None:
    async with relay_for_test(attempts_per_conn=10) as (relay, buf):
        async with connect(relay.url) as a, connect(relay.url) as b:
            t = await a.create_room(password=SECRET)
            with pytest.raises(RelayError) as ei:
                await b.join(t.room)
            assert ei.value.code == "wrong_password"
            with pytest.raises(RelayError) as ei:
                await b.join(t.room, password="Correct horse battery staple")
            assert ei.value.code == "wrong_password"
            start = time.perf_counter()
            await b.join(t.room, password=SECRET)
            elapsed = time.perf_counter() - start
            assert elapsed < 0.5, f"a join with a password took {elapsed * 1000:.0f} ms"
            stored = relay.rooms[t.room].password  # only a salted scrypt hash is kept
            assert isinstance(stored, codes.PasswordHash) and len(stored.digest) == 32
            assert SECRET not in repr(stored)
            assert codes.verify_password(SECRET, stored) and not codes.verify_password("x", stored)
    text = buf.getvalue()
    assert SECRET not in text and "Correct horse" not in text
    assert t.token not in text


def xff(ip: str) -> list[tuple[bytes, bytes]]:
    """The header a trusted proxy adds: the relay (``trust_proxy``) then counts ``ip`` as the address."""
    return [(b"X-Forwarded-For", b"203.0.113.9, " + ip.encode())]


async def test_wrong_passwords_lock_out_the_guessing_address_not_the_room() -> None:
    async with relay_for_test(attempts_per_conn=3, attempts_per_room=4, trust_proxy=True) as (relay, _):
        async with open_raw(relay.url, extra_headers=xff("198.51.100.1")) as host:
            created = await raw_request(host, {"t": "create", "password": SECRET})
            room = created["room"]
            async with open_raw(relay.url, extra_headers=xff("198.51.100.66")) as raw:
                for _ in range(2):
                    reply = await raw_request(raw, {"t": "join", "room": room, "password": "guess"})
                    assert reply["code"] == "wrong_password"
                await raw.send_message(encode(proved(raw, {"t": "join", "room": room, "password": "guess"})))
                seen, code, reason = await wait_closed(raw)
                assert [m["t"] for m in seen] == ["error", "bye"]
                assert (code, reason) == (4007, "too_many_attempts")  # 3 on one connection
            # one more wrong password from the same address (a new connection) makes 4 for this room:
            # now that address is refused even the right password, for a while
            async with open_raw(relay.url, extra_headers=xff("198.51.100.66")) as raw:
                reply = await raw_request(raw, {"t": "join", "room": room, "password": "guess"})
                assert reply["code"] == "wrong_password"
                reply = await raw_request(raw, {"t": "join", "room": room, "password": SECRET})
                assert reply["code"] == "too_many_attempts"
            # the real joiner, from elsewhere, is not locked out
            async with open_raw(relay.url, extra_headers=xff("192.0.2.7")) as friend:
                reply = await raw_request(friend, {"t": "join", "room": room, "password": SECRET})
                assert reply["t"] == "joined"
        assert relay.metrics.limit_hits_total["join_attempts"] == 2  # once for the connection, once for the room


# ------------------------------------------------------------------------ seats


async def test_reconnect_within_grace_gets_every_frame_once() -> None:
    async with relay_for_test(grace=5) as (relay, buf):
        async with connect(relay.url) as a:
            ta = await a.create_room()
            async with connect(relay.url) as b:
                tb = await b.join(ta.room)
                await expect_peer(a, "joined")
                await a.send(b"one")
                await expect_frames(b, [b"one"])
                await b.send(b"from b")
            # b's connection is gone: a is told, and keeps sending into the seat's buffer
            await expect_frames(a, [b"from b"])
            ev = await expect_peer(a, "away")
            assert ev.grace_s == 5
            for i in range(10):
                await a.send(b"f%d" % i)
            async with take_back(relay.url, tb) as b2:
                await expect_frames(b2, [b"f%d" % i for i in range(10)])
                await expect_peer(a, "back")
                await b2.send(b"b again")
                await expect_frames(a, [b"b again"])
                assert tb.received == 11
    assert "seat_resumed" in [e["event"] for e in events(buf)]


async def test_a_resume_sets_the_other_seats_count_back_at_most_max_rewind_frames() -> None:
    """A seat that says it got far fewer frames than it did (a cheater making the honest client resend its
    whole log, past the relay's burst, again and again: issue 10's rewound-count attack) sets the other
    seat's count back by MAX_REWIND frames at most; the frames before that are not sent again, and the
    resumed seat's client takes the gap (the match protocol asks for what it lacks) and goes on."""
    total = MAX_REWIND + 40
    async with relay_for_test(grace=5, burst=1000, frames_per_s=1000) as (relay, _):
        async with connect(relay.url) as a:
            ta = await a.create_room()
            async with connect(relay.url) as b:
                tb = await b.join(ta.room)
                await expect_peer(a, "joined")
                for i in range(total):
                    await a.send(b"f%d" % i)
                await expect_frames(b, [b"f%d" % i for i in range(total)])
            await expect_peer(a, "away")
            tb.received = 0  # it claims it got nothing
            async with take_back(relay.url, tb) as b2:
                await expect_peer(a, "back")  # a's client sends again from where the relay set its count
                await expect_frames(b2, [b"f%d" % i for i in range(total - MAX_REWIND, total)])
                await a.send(b"new")
                await expect_frames(b2, [b"new"])
                assert tb.received == total + 1


async def test_half_open_connection_is_replaced_by_the_token_holder() -> None:
    async with relay_for_test() as (relay, _):
        async with connect(relay.url) as a, connect(relay.url) as b:
            ta = await a.create_room()
            tb = await b.join(ta.room)
            await expect_peer(a, "joined")
            clone = SeatTicket.from_json(json.loads(json.dumps(tb.to_json())))
            async with connect(relay.url) as b2:
                info = await b2.resume(clone)
                assert info.peer == "present" and not info.restored
                with pytest.raises(RelayClosed) as ei:
                    await next_event(b)
                assert ei.value.code == "replaced"
                await a.send(b"x")
                await expect_frames(b2, [b"x"])


async def test_reconnect_after_grace_is_too_late() -> None:
    async with relay_for_test(grace=0.3) as (relay, buf):
        async with connect(relay.url) as a:
            ta = await a.create_room()
            async with connect(relay.url) as b:
                tb = await b.join(ta.room)
                await expect_peer(a, "joined")
            await expect_peer(a, "away")
            with pytest.raises(RoomClosed) as ei:
                await next_event(a, timeout=3)
            assert ei.value.code == "opponent_left"
            async with connect(relay.url) as b2:
                with pytest.raises(RelayError) as ei2:
                    await b2.resume(tb)
                assert ei2.value.code == "room_closed" and ei2.value.extra["reason"] == "opponent_left"
            # a's connection is back in the lobby and may host again
            await a.create_room()
    closed = [e for e in events(buf) if e["event"] == "room_closed"]
    assert closed and closed[0]["reason"] == "opponent_left"


async def test_seat_theft_is_refused() -> None:
    async with relay_for_test(attempts_per_conn=3, grace=5) as (relay, buf):
        async with connect(relay.url) as a, connect(relay.url) as b:
            ta = await a.create_room()
            tb = await b.join(ta.room)
            await expect_peer(a, "joined")
            async with open_raw(relay.url) as thief:
                for seat in (0, 1):
                    reply = await raw_request(
                        thief, {"t": "resume", "room": ta.room, "seat": seat, "token": codes.new_token(), "received": 0}
                    )
                    assert reply["code"] == "bad_token"
                # knowing the other seat's token hash does not help either
                await thief.send_message(
                    encode(
                        proved(
                            thief,
                            {
                                "t": "resume",
                                "room": ta.room,
                                "seat": 1,
                                "token": codes.token_hash(tb.token).hex(),
                                "received": 0,
                            },
                        )
                    )
                )
                seen, code, reason = await wait_closed(thief)
                assert seen[0]["code"] == "bad_token" and (code, reason) == (4007, "too_many_attempts")
            # the real holders are untouched
            await a.send(b"still mine")
            await expect_frames(b, [b"still mine"])
    assert sum(e["event"] == "seat_theft_refused" for e in events(buf)) == 3


async def test_a_full_buffer_keeps_the_newest_messages_and_the_room_open() -> None:
    """Frames for an absent seat wait in a bounded buffer. When it is full, an unflagged frame (a seat's newest
    message, its end) makes room by dropping the oldest flagged frames waiting (answers, resends); a frame that
    still does not fit is taken for the numbering (the sender's next frames are not dropped as past a gap) but
    not delivered. The room stays open: closing it let a losing sender end the match with no certificate by
    flooding (tests/adversary/test_adversary_attack_overflow_escape.py); refusing frames unseen let a cheater
    have the honest side's winning TIMEOUT dropped (…_refused_timeout.py)."""
    async with relay_for_test(seat_buffer_frames=4, grace=10) as (relay, _):
        async with connect(relay.url) as a:
            ta = await a.create_room()
            async with connect(relay.url) as b:
                tb = await b.join(ta.room)
                await expect_peer(a, "joined")
            await expect_peer(a, "away")
            sends = [(b"f%d" % i, True) for i in range(4)] + [(b"u1", False)]
            sends += [(b"g%d" % i, True) for i in range(3)] + [(b"u2", False)]
            for data, flagged in sends:
                await a.send(data, control=flagged)
            room = relay.core.rooms[ta.room]
            with trio.fail_after(5):
                while room.seats[0].in_count != len(sends):
                    await trio.sleep(0.01)
            waiting = [raw for _, raw, _ in room.seats[1].pending]
            assert [decode(raw)["d"] for raw in waiting] == [b"f2", b"f3", b"u1", b"u2"]
            assert relay.metrics.limit_hits_total["seat_buffer"] == 1 and relay.metrics.frames_dropped_total >= 3
            async with connect(relay.url) as b2:
                await b2.resume(tb)
                got: list[bytes] = []
                with trio.move_on_after(1):
                    while True:
                        ev = await next_event(b2)
                        if isinstance(ev, Frame):
                            got.append(ev.data)
                assert b"u1" in got and b"u2" in got, got


async def test_a_leave_mid_match_is_a_disconnect_and_two_dones_close_the_room() -> None:
    """The relay cannot know whether a match is over: a seat that leaves a room both seats took goes away as
    after a lost connection (``done`` is its word alone), and the grace period ends in opponent_left with a
    certificate; only when both seats said ``done`` does the room close at once (match_over)."""
    async with relay_for_test(grace=1) as (relay, _):
        async with connect(relay.url) as a, connect(relay.url) as b:
            ta = await a.create_room()
            await b.join(ta.room)
            await expect_peer(a, "joined")
            await b.leave(done=True)
            await expect_peer(a, "away")
            with pytest.raises(RoomClosed) as ei:
                await next_event(a)
            assert ei.value.code == "opponent_left" and ei.value.cert is not None
            t2 = await a.create_room()
            tb2 = await b.join(t2.room)
            await expect_peer(a, "joined")
            await b.leave()
            await expect_peer(a, "away")
            await b.resume(tb2)  # the leaver's token still holds its seat within the grace
            assert (await expect_peer(a, "back")).event == "back"
            await b.leave(done=True)
            await expect_peer(a, "away")
            await a.leave(done=True)  # both said the match is over: the room closes now
            gone = relay.core.tombstones[t2.room]
            assert t2.room not in relay.core.rooms and gone.reason == "match_over" and gone.cert is None


async def test_relay_restart_rebuilds_the_room_from_tickets() -> None:
    async with relay_for_test() as (relay1, _):
        async with connect(relay1.url) as a, connect(relay1.url) as b:
            ta = await a.create_room(rounds=12)
            tb = await b.join(ta.room)
            await expect_peer(a, "joined")
            await a.send(b"before")
            await expect_frames(b, [b"before"])
        assert ta.peer_check is not None and tb.peer_check is not None
    async with relay_for_test() as (relay2, _):
        async with take_back(relay2.url, ta) as a2:
            # a seat theft on the rebuilt room fails too: the other seat is bound to its token's hash
            async with connect(relay2.url) as thief:
                forged = SeatTicket(relay2.url, ta.room, ta.display, 1, codes.new_token(), 12, True)
                with pytest.raises(RelayError) as ei:
                    await thief.resume(forged)
                assert ei.value.code == "bad_token"
            await a2.send(b"while b is away")
            async with take_back(relay2.url, tb) as b2:
                info = await b2.room_info(ta.room)
                assert info.rounds == 12 and info.private
                await expect_frames(b2, [b"while b is away"])
                await b2.send(b"after")
                await expect_frames(a2, [b"after"])
                assert (ta.sent, ta.received, tb.sent, tb.received) == (2, 1, 1, 2)


async def test_relay_unreachable() -> None:
    with trio.socket.socket() as s:
        await s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RelayError) as ei:
        async with connect(f"ws://127.0.0.1:{port}", timeout=3):
            pass
    assert ei.value.code == "relay_unreachable"


# ------------------------------------------------------------------------ limits


async def test_limit_frame_size() -> None:
    async with relay_for_test(max_frame_bytes=1000) as (relay, buf):
        async with connect(relay.url) as a, connect(relay.url) as b:
            ta = await a.create_room()
            await b.join(ta.room)
            async with open_raw(relay.url) as raw:
                await raw.send_message(encode({"t": "frame", "n": 1, "d": b"x" * 1001}))
                seen, code, reason = await wait_closed(raw)
                assert (code, reason) == (1009, "oversized_frame")
                assert seen[-1] == {
                    "t": "bye",
                    "reason": "oversized_frame",
                    "message": "a frame was over the size limit",
                }
            async with open_raw(relay.url) as raw:
                await raw.send_message(b"\x00" * 5000)  # far over: cut by the WebSocket layer itself
                _, code, _ = await wait_closed(raw)
                assert code == 1009
            async with open_raw(relay.url) as raw:
                await raw.send_message(b"\xc1")  # not msgpack
                _, code, reason = await wait_closed(raw)
                assert (code, reason) == (4000, "protocol_error")
            async with open_raw(relay.url) as raw:
                await raw.send_message("text")
                _, code, reason = await wait_closed(raw)
                assert (code, reason) == (1003, "binary_only")
            # the room next door never noticed; a frame of exactly the limit passes
            await a.send(b"y" * 1000)
            await expect_frames(b, [b"y" * 1000])
        assert relay.metrics.limit_hits_total["frame_size"] == 2
    assert any(e["event"] == "limit_hit" and e["limit"] == "frame_size" for e in events(buf))


async def test_limit_frames_per_second() -> None:
    async with relay_for_test(frames_per_s=5, burst=5) as (relay, _):
        async with open_raw(relay.url) as raw:
            for _ in range(6):
                await raw.send_message(encode({"t": "list"}))
            seen, code, reason = await wait_closed(raw)
            assert [m["t"] for m in seen] == ["rooms"] * 5 + ["bye"]
            assert (code, reason) == (4001, "rate_limited")
        async with connect(relay.url) as c:  # a steady client within the rate is fine
            for _ in range(8):
                await c.list_rooms()
                await trio.sleep(0.21)
        assert relay.metrics.limit_hits_total["rate"] == 1


async def test_limit_idle_timeout_with_pings() -> None:
    async with relay_for_test(ping_interval=0.1, idle_timeout=0.4) as (relay, _):
        # a client that answers pings (the library does) stays
        async with connect(relay.url) as live:
            # a client that never answers: a bare TCP socket speaking the handshake, then silent
            stream = await trio.open_tcp_stream("127.0.0.1", relay.port)
            await stream.send_all(
                b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            )
            start = trio.current_time()
            data = b""
            with trio.fail_after(5):
                while chunk := await stream.receive_some(4096):
                    data += chunk
                    if (4002).to_bytes(2, "big") + b"idle_timeout" in data:  # the close frame: code, reason
                        break
            assert trio.current_time() - start >= 0.35
            assert b"101 Switching Protocols" in data and b"idle_timeout" in data
            await stream.aclose()
            assert await live.list_rooms() == []
        assert relay.metrics.limit_hits_total["idle"] == 1


async def test_limit_connections_per_ip_and_in_all() -> None:
    async with relay_for_test(max_connections_per_ip=2) as (relay, _):
        async with open_raw(relay.url) as one, open_raw(relay.url) as two:
            async with open_websocket_url(relay.url) as three:
                seen, code, reason = await wait_closed(three)
                assert seen == [
                    {"t": "bye", "reason": "too_many_connections", "message": "too many connections from this address"}
                ]
                assert (code, reason) == (4003, "too_many_connections")
            assert (await raw_request(one, {"t": "list"}))["t"] == "rooms"
            assert (await raw_request(two, {"t": "list"}))["t"] == "rooms"
        assert relay.metrics.limit_hits_total["connections_per_ip"] == 1
    async with relay_for_test(max_connections=1) as (relay, _):
        async with open_raw(relay.url), open_websocket_url(relay.url) as two:
            _, code, reason = await wait_closed(two)
            assert (code, reason) == (4004, "relay_full")


async def test_limit_rooms_in_all() -> None:
    async with relay_for_test(max_rooms=1) as (relay, buf):
        async with connect(relay.url) as a, connect(relay.url) as b:
            await a.create_room()
            with pytest.raises(RelayError) as ei:
                await b.create_room()
            assert ei.value.code == "too_many_rooms"
            await a.leave()
            await b.create_room()
        assert relay.metrics.limit_hits_total["rooms"] == 1
    assert any(e["event"] == "limit_hit" and e["limit"] == "rooms" for e in events(buf))


async def test_slow_consumer_is_cut_off_and_other_rooms_go_on() -> None:
    async with relay_for_test(seat_buffer_frames=8, frames_per_s=10_000, burst=10_000, grace=10) as (relay, _):
        async with connect(relay.url) as a, connect(relay.url) as c, connect(relay.url) as d:
            ta = await a.create_room()
            tc = await c.create_room()
            await d.join(tc.room)
            # b joins, then never reads again: the relay's outbox for it fills, and it is cut off
            async with open_raw(relay.url, message_queue_size=1) as b:
                await raw_request(b, {"t": "join", "room": ta.room})
                await expect_peer(a, "joined")
                big = b"z" * 60_000
                with trio.fail_after(20):
                    while relay.metrics.limit_hits_total["slow_consumer"] == 0:
                        await a.send(big)
                        await trio.sleep(0)
                await expect_peer(a, "away")
                # meanwhile, another room is as quick as ever
                start = trio.current_time()
                for i in range(20):
                    await c.send(b"%d" % i)
                    await expect_frames(d, [b"%d" % i])
                assert trio.current_time() - start < 2


# ---------------------------------------------------------------- metrics, shutdown


async def http_get(port: int, path: str) -> str:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    await stream.send_all(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    data = b""
    with trio.fail_after(5):
        while chunk := await stream.receive_some(65536):
            data += chunk
    await stream.aclose()
    return data.decode()


async def test_metrics_in_prometheus_text_format() -> None:
    async with relay_for_test(metrics_port=0, max_rooms=1) as (relay, _):
        assert relay.metrics_port
        async with connect(relay.url) as a, connect(relay.url) as b:
            ta = await a.create_room()
            await b.join(ta.room)
            await a.send(b"12345")
            await expect_frames(b, [b"12345"])
            async with connect(relay.url) as c:
                with pytest.raises(RelayError):
                    await c.create_room()
            text = await http_get(relay.metrics_port, "/metrics")
        head, body = text.split("\r\n\r\n", 1)
        assert head.startswith("HTTP/1.1 200") and "text/plain; version=0.0.4" in head
        lines = body.splitlines()
        samples = {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in lines if not line.startswith("#")}
        assert samples['koikoi_relay_rooms{state="playing"}'] == 1
        assert samples["koikoi_relay_connections"] == 2
        assert samples["koikoi_relay_connections_total"] == 3
        assert samples['koikoi_relay_frames_total{direction="in"}'] == 1
        assert samples['koikoi_relay_frames_total{direction="out"}'] == 1
        assert samples['koikoi_relay_bytes_total{direction="in"}'] > 0
        assert samples['koikoi_relay_limit_hits_total{limit="rooms"}'] == 1
        for limit in ("frame_size", "rate", "idle", "connections_per_ip", "connections", "seat_buffer"):
            assert samples[f'koikoi_relay_limit_hits_total{{limit="{limit}"}}'] == 0
        assert "# TYPE koikoi_relay_frames_total counter" in lines
        assert (await http_get(relay.metrics_port, "/nope")).startswith("HTTP/1.1 404")


async def test_shutdown_closes_every_connection_with_a_reason() -> None:
    buf = io.StringIO()
    relay = Relay(RelayConfig(port=0, shutdown_timeout=5), log=EventLog(buf))
    async with trio.open_nursery() as nursery:
        await nursery.start(relay.serve)
        async with connect(relay.url) as a, connect(relay.url) as b, open_raw(relay.url) as lobby:
            ta = await a.create_room()
            await b.join(ta.room)
            await expect_peer(a, "joined")
            start = trio.current_time()
            relay.shutdown()
            for c in (a, b):
                with pytest.raises(RelayClosed) as ei:
                    await next_event(c)
                assert ei.value.code == "shutdown"
            seen, code, reason = await wait_closed(lobby)
            assert seen == [{"t": "bye", "reason": "shutdown", "message": "the relay is shutting down"}]
            assert (code, reason) == (1001, "shutdown")
    assert trio.current_time() - start < 2.5  # every close handshake done: no waiting for the timeout
    assert not relay.conns
    assert events(buf)[-1]["event"] == "relay_stopped"


async def test_frames_sent_before_the_join_wait_for_the_joiner() -> None:
    async with relay_for_test() as (relay, _):
        async with connect(relay.url) as a, connect(relay.url) as b:
            ta = await a.create_room(private=True)
            for i in range(3):
                await a.send(b"early %d" % i)
            await b.join(ta.display)
            await expect_frames(b, [b"early %d" % i for i in range(3)])
            await expect_peer(a, "joined")
            await b.send(b"late")
            await expect_frames(a, [b"late"])


async def test_trust_proxy_counts_connections_by_forwarded_address() -> None:
    async with relay_for_test(max_connections_per_ip=1, trust_proxy=True) as (relay, buf):
        async with (
            open_raw(relay.url, extra_headers=xff("198.51.100.1")) as one,
            open_raw(relay.url, extra_headers=xff("198.51.100.2")) as two,
        ):
            assert (await raw_request(one, {"t": "list"}))["t"] == "rooms"
            assert (await raw_request(two, {"t": "list"}))["t"] == "rooms"
            async with open_websocket_url(relay.url, extra_headers=xff("198.51.100.1")) as three:
                _, code, reason = await wait_closed(three)
                assert (code, reason) == (4003, "too_many_connections")
    ips = {e["ip"] for e in events(buf) if e["event"] == "connected"}
    assert ips == {"198.51.100.1", "198.51.100.2"}


async def test_a_routed_url_reaches_the_relay_and_the_chosen_code_is_the_room() -> None:
    code = codes.new_code(private=False)
    async with relay_for_test(chosen_codes_after_s=0) as (relay, _):  # (a relay long running)
        url = routed_url(relay.url + "/play?x=1", code)
        assert url == f"{relay.url}/play?x=1&room={code}"
        assert routed_url(url, "QQQQQ").endswith("x=1&room=QQQQQ")
        async with connect(url) as a, connect(routed_url(relay.url, code)) as b:
            t = await a.create_room(room=code)
            assert t.room == code
            await b.join(code)
            await a.send(b"via the proxy's route")
            await expect_frames(b, [b"via the proxy's route"])


async def test_resume_from_a_stale_ticket_numbers_on_from_the_relay() -> None:
    """A client killed after sending, restarted from a ticket saved earlier: nothing it sends is dropped."""
    async with relay_for_test(grace=5) as (relay, _):
        async with connect(relay.url) as a:
            ta = await a.create_room()
            async with connect(relay.url) as b:
                tb = await b.join(ta.room)
                await expect_peer(a, "joined")
                saved = SeatTicket.from_json(tb.to_json())  # the seat file, saved before the frames went out
                await b.send(b"1")
                await b.send(b"2")
                await b.send(b"3")
                await expect_frames(a, [b"1", b"2", b"3"])
            stale = SeatTicket.from_json({**saved.to_json(), "sent": 1, "log": []})
            async with take_back(relay.url, stale) as b2:
                assert stale.sent == 3
                await b2.send(b"after the restart")
                await expect_frames(a, [b"after the restart"])


async def test_resume_gap_raises_unless_renumbering_is_asked_for() -> None:
    """A ticket that claims frames the relay never got, with no log to send them from (a crash
    after the seat file was saved): resume_gap, or, for a protocol that resends by itself,
    numbering on from the relay's count."""
    async with relay_for_test(grace=5) as (relay, _):
        async with connect(relay.url) as a:
            ta = await a.create_room()
            async with connect(relay.url) as b:
                tb = await b.join(ta.room)
                await expect_peer(a, "joined")
                await b.send(b"1")
                await expect_frames(a, [b"1"])
            lost = {**tb.to_json(), "sent": 4, "log": []}  # frames 2-4 never reached the relay
            async with connect(relay.url) as b2:
                with pytest.raises(RelayError) as ei:
                    await b2.resume(SeatTicket.from_json(lost))
                assert ei.value.code == "resume_gap"
            ticket = SeatTicket.from_json(lost)
            async with connect(relay.url) as b3:
                await b3.resume(ticket, renumber_on_gap=True)
                assert ticket.sent == 1 and not ticket.log
                await b3.send(b"again")
                await expect_frames(a, [b"again"])


async def test_a_refused_connect_cancelled_meanwhile_raises_cancelled_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # the caller's scope is cancelled while connect turns down a refused connection (the relay's
    # too_many_connections), and one of connect's own tasks meets that cancellation first: the caller
    # must see its cancellation alone, not a group of Cancelled and the refusal, which an
    # `except RelayError` misses and the cancelled scope then raises as an error of its own
    from koikoi.relay.client import RelayClient

    original = RelayClient._pump
    caller: list[trio.CancelScope] = []

    async def pump_then_cancelled(self: RelayClient) -> None:
        await original(self)
        if caller and self._startup_error is not None:
            caller[0].cancel()
            await trio.sleep_forever()

    cfg = RelayConfig(port=0, max_connections_per_ip=1, new_connections_burst=100)
    async with open_relay(cfg, log=EventLog(io.StringIO())) as relay, connect(relay.url):
        monkeypatch.setattr(RelayClient, "_pump", pump_then_cancelled)
        with trio.CancelScope() as scope:
            caller.append(scope)
            try:
                async with connect(relay.url, timeout=5):
                    raise AssertionError("the second connection from one address is refused")
            except RelayError as e:
                assert e.code == "too_many_connections"
        assert scope.cancelled_caught


async def test_a_seat_is_taken_back_only_with_its_key_and_a_players_own_key_is_never_saved() -> None:
    """A client given the player's key proves seats with it, and its tickets never save it (the player keeps
    its key elsewhere); a client given none makes a key for the seat and saves it with the token, so the
    seat can be taken back from the saved ticket. A ticket without the right key is refused."""
    player = Ed25519PrivateKey.generate()
    async with relay_for_test(grace=30) as (relay, _):
        async with connect(relay.url, identity=player) as a, connect(relay.url) as b:
            ta = await a.create_room()
            tb = await b.join(ta.room)
            await expect_peer(a, "joined")
            seats = relay.core.rooms[ta.room].seats
            assert seats[0].player_key == player.public_key().public_bytes_raw()
            assert seats[1].player_key == b.identity.public_key().public_bytes_raw() != seats[0].player_key
            # each side is told the key the other seat proved (to compare with its opponent's HELLO)
            assert (ta.peer_key, tb.peer_key) == (seats[1].player_key, seats[0].player_key)
            saved_a, saved_b = ta.to_json(), tb.to_json()
        assert "identity" not in saved_a and "identity" in saved_b
        async with connect(relay.url) as stranger:  # a's seat file alone, without a's key
            with pytest.raises(RelayError) as ei:
                await stranger.resume(SeatTicket.from_json(saved_a))
            assert ei.value.code == "wrong_key"
        async with connect(relay.url, identity=player) as a2, connect(relay.url) as b2:
            back = SeatTicket.from_json(saved_a)
            assert (await a2.resume(back)).peer in ("away", "present")
            assert back.peer_key == seats[1].player_key
            await b2.resume(SeatTicket.from_json(saved_b))  # its own key came back with the ticket
            await a2.send(b"again")
            await expect_frames(b2, [b"again"])


async def test_a_message_the_websocket_layer_cuts_is_oversized_frame_not_a_librarys_text() -> None:
    """Far over ``max_frame_bytes`` the WebSocket layer closes the connection itself (1009, with its own text):
    the client still reports the relay's code, ``oversized_frame`` (scripts read ``code``)."""
    async with relay_for_test(max_frame_bytes=300) as (relay, _):
        async with connect(relay.url) as a, connect(relay.url) as b:
            ta = await a.create_room()
            await b.join(ta.room)
            await expect_peer(a, "joined")
            await a.send(b"x" * 2000)
            with pytest.raises(RelayClosed) as ei:
                for _ in range(10):
                    await next_event(a)
            assert ei.value.code == "oversized_frame" and "size limit" in ei.value.message, ei.value
