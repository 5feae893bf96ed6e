"""The relay as the clock's witness: its key, its announcement, silence certificates, move time, not_a_relay.

Certificates are checked under trio's MockClock (time moves only when the test jumps it), so
``silent_ms`` is exact.
"""

from __future__ import annotations

import importlib.util
import io
import json
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from nacl.signing import SigningKey
from trio_websocket import WebSocketRequest, open_websocket_url, serve_websocket

from koikoi.protocol.framing import decode, encode
from koikoi.protocol.witness import (
    fingerprint,
    frame_hash,
    open_certificate,
    seat_claim,
    seat_proof_ok,
    sign_certificate,
    sign_seat_proof,
)
from koikoi.relay import codes
from koikoi.relay.client import Frame, PeerNotice, RelayClient, RelayError, RoomClosed, connect
from koikoi.relay.keys import RelayKeyError, default_key_path, load_or_create_key
from koikoi.relay.observe import EventLog
from koikoi.relay.server import Relay, RelayConfig, open_relay

VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors" / "relay" / "certificate.json"


@asynccontextmanager
async def relay_for_test(key: SigningKey | None = None, **kw: Any) -> AsyncIterator[tuple[Relay, io.StringIO]]:
    buf = io.StringIO()
    kw.setdefault("port", 0)
    async with open_relay(RelayConfig(**kw), log=EventLog(buf), key=key) as relay:
        yield relay, buf


async def next_event(c: RelayClient) -> Frame | PeerNotice:
    with trio.fail_after(5):
        return await c.receive()


async def frames(c: RelayClient, count: int) -> list[bytes]:
    got: list[bytes] = []
    while len(got) < count:
        ev = await next_event(c)
        if isinstance(ev, Frame):
            got.append(ev.data)
    return got


async def peer(c: RelayClient, event: str) -> None:
    while True:
        ev = await next_event(c)
        if isinstance(ev, PeerNotice) and ev.event == event:
            return


# ------------------------------------------------------------------------------ the key


def test_key_is_created_once_0600_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "state" / "relay.key"
    key, where, created = load_or_create_key(path)
    assert created and where == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again, _, created_again = load_or_create_key(path)
    assert not created_again and bytes(again) == bytes(key)
    assert path.read_text() == bytes(key).hex() + "\n"
    assert [p.name for p in path.parent.iterdir()] == ["relay.key"]  # no temporary file left


def test_a_key_created_meanwhile_by_another_relay_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two relays start at once: the one that looks second (saw no file, then finds one) takes the first's key."""
    path = tmp_path / "relay.key"
    first, _, _ = load_or_create_key(path)
    monkeypatch.setattr(Path, "exists", lambda self: False)  # the race: it looked before the other wrote
    second, _, created = load_or_create_key(path)
    assert not created and bytes(second) == bytes(first)
    assert path.read_text() == bytes(first).hex() + "\n"


def test_key_default_path_follows_koikoi_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOIKOI_STATE_DIR", str(tmp_path))
    assert default_key_path() == tmp_path / "relay.key"
    key, _, created = load_or_create_key()
    assert created and (tmp_path / "relay.key").exists()
    assert bytes(load_or_create_key()[0]) == bytes(key)


def test_a_bad_key_file_is_named_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "relay.key"
    path.write_bytes(b"<html>not a key</html>")
    with pytest.raises(RelayKeyError) as ei:
        load_or_create_key(path)
    assert ei.value.usage and str(path) in ei.value.message and "\n" not in ei.value.message
    assert path.read_bytes() == b"<html>not a key</html>"


# ------------------------------------------------------------------------ announcement


async def test_every_connection_is_told_the_relays_key() -> None:
    key = SigningKey(bytes(range(32)))
    async with relay_for_test(key) as (relay, buf):
        assert relay.public_key == bytes(key.verify_key) and relay.fingerprint == fingerprint(relay.public_key)
        async with connect(relay.url) as a, connect(relay.url) as b:
            assert a.relay_key == b.relay_key == bytes(key.verify_key)
            assert a.relay_fingerprint == fingerprint(bytes(key.verify_key))
    started = json.loads(buf.getvalue().splitlines()[0])
    assert started["event"] == "relay_started" and started["fingerprint"] == relay.fingerprint


async def test_relays_without_a_key_get_one_each() -> None:
    async with relay_for_test() as (r1, _), relay_for_test() as (r2, _):
        async with connect(r1.url) as a, connect(r2.url) as b:
            assert len(a.relay_key) == 32 and a.relay_key != b.relay_key


# ---------------------------------------------------------------------- certificates


async def test_certificate_fields_under_a_fake_clock(mock_clock: trio.testing.MockClock) -> None:
    async with relay_for_test() as (relay, buf), connect(relay.url) as a:
        async with connect(relay.url) as b:
            ta = await a.create_room(private=True)
            mock_clock.jump(3)
            await b.join(ta.room)
            await peer(a, "joined")
            # nobody sent anything: the silence of seat 1 counts from when it took its seat
            mock_clock.jump(2)
            c = open_certificate(await a.certify())
            assert (c.room, c.silent_seat, c.last_frame, c.silent_ms, c.connected) == (
                ta.room,
                1,
                (b"", b""),
                2000,
                True,
            )
            assert c.relay_key == relay.public_key and c.witness == relay.fingerprint
            # seat 1's silence as seen by seat 0, and seat 0's as seen by seat 1: always the *other* seat;
            # seat 0 is awaited only since seat 1 took its seat
            c = open_certificate(await b.certify())
            assert (c.silent_seat, c.silent_ms) == (0, 2000)

            await a.send(b"a1")
            assert await frames(b, 1) == [b"a1"]
            await b.send(b"b1")
            assert await frames(a, 1) == [b"b1"]
            mock_clock.jump(7)
            c = open_certificate(await a.certify())
            assert c.last_frame == (frame_hash(b"a1"), frame_hash(b"b1")) and c.silent_ms == 7000
            # a repeat of a recent frame (a protocol-level resend) is no news
            await b.send(b"b1")
            assert await frames(a, 1) == [b"b1"]
            mock_clock.jump(1)
            c = open_certificate(await a.certify())
            assert c.last_frame == (frame_hash(b"a1"), frame_hash(b"b1")) and c.silent_ms == 8000
            # a control frame (a request to send again) is never the seat's last frame, but the seat is
            # waiting for a frame from then on: its silence counts from the request
            await b.send(b"resend request", control=True)
            assert await frames(a, 1) == [b"resend request"]
            mock_clock.jump(1)
            c = open_certificate(await a.certify())
            assert c.last_frame == (frame_hash(b"a1"), frame_hash(b"b1")) and c.silent_ms == 1000
            # a new frame resets the silence
            await b.send(b"b2")
            assert await frames(a, 1) == [b"b2"]
            mock_clock.jump(1)
            c = open_certificate(await a.certify())
            assert c.last_frame == (frame_hash(b"a1"), frame_hash(b"b2")) and c.silent_ms == 1000 and c.connected
            # the silent seat's connection drops: connected flips, the silence goes on
            await b.send(b"b3")
            assert await frames(a, 1) == [b"b3"]
        with trio.fail_after(5):
            await peer(a, "away")
        mock_clock.jump(4)
        c = open_certificate(await a.certify())
        assert (c.last_frame[1], c.silent_ms, c.connected) == (frame_hash(b"b3"), 4000, False)
        # seat 0 speaks after 4 s of seat 1's silence: seat 1 is awaited only from then on, so seat 0's own
        # thinking time does not count against it
        await a.send(b"a2")
        await trio.testing.wait_all_tasks_blocked()  # the relay has taken the frame (seat 1 is away)
        mock_clock.jump(3)
        c = open_certificate(await a.certify())
        assert (c.last_frame, c.silent_ms) == ((frame_hash(b"a2"), frame_hash(b"b3")), 3000)
    logged = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert sum(e["event"] == "certified" for e in logged) == 8


async def test_requests_to_send_again_move_the_silence_on_within_a_bound(mock_clock: trio.testing.MockClock) -> None:
    """Seat 1 awaits a frame seat 0 sent (the relay took it at once), but the frame does not reach it (a
    network or proxy behind the relay delays it): seat 1 asks again and again (``ctl`` frames) and seat 0
    answers each time with a repeat. Seat 1's silence counts from its latest request, but never from
    later than twice the move time after it was awaited: a cheater asking for ever loses after 3 move
    times. A request with no answer at all from seat 0 for half the move time: seat 1 is waiting for
    seat 0, and is not silent (0 ms) until seat 0 sends anything."""
    async with relay_for_test(certify_burst=100, certify_per_s=100) as (relay, _), connect(relay.url) as a:
        async with connect(relay.url) as b:
            ta = await a.create_room(private=True, move_time_s=10)
            await b.join(ta.room)
            await peer(a, "joined")
            await b.send(b"b0")
            assert await frames(a, 1) == [b"b0"]
            await a.send(b"a1")
            assert await frames(b, 1) == [b"a1"]
            for i in range(5):  # a request every 6 s, answered at once with a repeat
                mock_clock.jump(6)
                await b.send(b"resend %d" % i, control=True)
                assert await frames(a, 1) == [b"resend %d" % i]
                await a.send(b"a1")
                assert await frames(b, 1) == [b"a1"]
            mock_clock.jump(1)
            # 31 s after a1; the latest request 1 s ago, but the extension stops at 2 x 10 s: silent 11 s
            c = open_certificate(await a.certify())
            assert (c.silent_seat, c.last_frame, c.silent_ms) == (1, (frame_hash(b"a1"), frame_hash(b"b0")), 11_000)
            # seat 1 moves: seat 0 is awaited; it asks once and gets no answer at all
            await b.send(b"b1")
            assert await frames(a, 1) == [b"b1"]
            mock_clock.jump(1)
            await a.send(b"resend", control=True)
            assert await frames(b, 1) == [b"resend"]
            mock_clock.jump(4)
            c = open_certificate(await b.certify())
            assert (c.silent_seat, c.silent_ms) == (0, 4000)  # from its request, not yet half the move time
            mock_clock.jump(1)
            assert open_certificate(await b.certify()).silent_ms == 0  # 5 s unanswered: seat 0 is waiting
            mock_clock.jump(10)
            assert open_certificate(await b.certify()).silent_ms == 0
            # anything from seat 1 answers it: the silence counts from seat 0's request again
            await b.send(b"b1")
            assert await frames(a, 1) == [b"b1"]
            c = open_certificate(await b.certify())
            assert c.silent_ms == 15_000 and c.last_frame == (frame_hash(b"a1"), frame_hash(b"b1"))


async def test_certify_is_for_seated_players_with_an_opponent() -> None:
    async with relay_for_test() as (relay, _):
        async with connect(relay.url) as a:
            with pytest.raises(RelayError) as ei:
                await a.certify()
            assert ei.value.code == "not_seated"
            await a.create_room()
            with pytest.raises(RelayError) as ei:
                await a.certify()
            assert ei.value.code == "no_opponent"


async def test_certify_is_rate_limited_per_seat_across_reconnects(mock_clock: trio.testing.MockClock) -> None:
    async with relay_for_test(certify_per_s=1, certify_burst=2, grace=30) as (relay, buf):
        async with connect(relay.url) as b:
            async with connect(relay.url) as a:
                ta = await a.create_room()
                await b.join(ta.room)
                await a.certify()
                await a.certify()
                with pytest.raises(RelayError) as ei:
                    await a.certify()
                assert ei.value.code == "too_many_requests"
            # a new connection for the same seat does not get a new allowance
            async with connect(relay.url) as a2:
                await a2.resume(ta)
                with pytest.raises(RelayError) as ei:
                    await a2.certify()
                assert ei.value.code == "too_many_requests"
                mock_clock.jump(1)
                assert open_certificate(await a2.certify()).silent_seat == 1
                # the other seat has its own allowance
                await b.certify()
        assert relay.metrics.limit_hits_total["certify"] == 2
    assert "too_many_requests" in buf.getvalue()


async def test_opponent_left_carries_a_certificate_and_resume_gives_it_again(
    mock_clock: trio.testing.MockClock,
) -> None:
    async with relay_for_test(grace=10) as (relay, _):
        async with connect(relay.url) as a:
            ta = await a.create_room()
            async with connect(relay.url) as b:
                await b.join(ta.room)
                await peer(a, "joined")
                await b.send(b"last words")
                assert await frames(a, 1) == [b"last words"]
                mock_clock.jump(2)
            await peer(a, "away")
            mock_clock.jump(10)
            with pytest.raises(RoomClosed) as ei:
                await next_event(a)
            assert ei.value.code == "opponent_left" and ei.value.cert is not None
            c = open_certificate(ei.value.cert)
            assert (c.room, c.silent_seat, c.last_frame, c.silent_ms, c.connected) == (
                ta.room,
                1,
                (b"", frame_hash(b"last words")),
                12000,
                False,
            )
            # the seat that missed the notice asks with its token and gets the same certificate
            async with connect(relay.url) as a2:
                with pytest.raises(RelayError) as ei2:
                    await a2.resume(ta)
                assert ei2.value.code == "room_closed" and ei2.value.extra["cert"] == ei.value.cert
            # anyone else learns why, not the certificate
            async with connect(relay.url) as thief:
                forged = type(ta).from_json({**ta.to_json(), "token": codes.new_token()})
                with pytest.raises(RelayError) as ei3:
                    await thief.resume(forged)
                assert ei3.value.code == "room_closed" and "cert" not in ei3.value.extra


async def test_other_closings_carry_no_certificate() -> None:
    async with relay_for_test() as (relay, _):
        async with connect(relay.url) as a, connect(relay.url) as b:
            ta = await a.create_room()
            await b.join(ta.room)
            await peer(a, "joined")
            await b.leave(done=True)
            await peer(a, "away")
            await a.leave(done=True)
            tw = await a.create_room()
            await a.leave()  # a room nobody joined
        for code, reason in ((ta.room, "match_over"), (tw.room, "opponent_quit")):
            gone = relay.core.tombstones[code]
            assert (gone.reason, gone.cert) == (reason, None)


def test_certificate_vectors_are_what_their_generator_makes() -> None:
    spec = importlib.util.spec_from_file_location("koikoi_relay_vector_gen", VECTORS.parent / "generate.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.make() == VECTORS.read_text()


def test_certificate_vectors() -> None:
    spec = json.loads(VECTORS.read_text())
    key = SigningKey(bytes.fromhex(spec["seed"]))
    assert bytes(key.verify_key).hex() == spec["public_key"]
    assert fingerprint(bytes(key.verify_key)) == spec["fingerprint"]
    assert len(spec["vectors"]) >= 2
    for v in spec["vectors"]:
        f = v["fields"]
        last = (bytes.fromhex(f["last_frame_0"]), bytes.fromhex(f["last_frame_1"]))
        recent = [bytes.fromhex(h) for h in f["recent"]]
        keys = (bytes.fromhex(f["seat_keys"][0]), bytes.fromhex(f["seat_keys"][1]))
        blob = sign_certificate(key, f["room"], f["silent_seat"], last, f["silent_ms"], f["connected"], recent, keys)
        assert blob.hex() == v["blob"], v["name"]
        assert decode(blob) == [bytes.fromhex(v["body"]), bytes(key.verify_key), bytes.fromhex(v["signature"])]
        signed = bytes.fromhex(spec["context"]) + bytes.fromhex(v["body"])
        assert key.verify_key.verify(signed, bytes.fromhex(v["signature"])) == signed
        c = open_certificate(bytes.fromhex(v["blob"]))
        assert (c.room, c.silent_seat, c.last_frame, c.silent_ms, c.connected, c.recent, c.seat_keys) == (
            f["room"],
            f["silent_seat"],
            last,
            f["silent_ms"],
            f["connected"],
            frozenset(recent),
            keys,
        )
    assert len(spec["seat_proofs"]) == 2
    for p in spec["seat_proofs"]:
        player = SigningKey(bytes.fromhex(p["player_seed"]))
        assert bytes(player.verify_key).hex() == p["player_key"]
        relay_key, nonce = bytes.fromhex(p["relay_key"]), bytes.fromhex(p["nonce"])
        claim = bytes.fromhex(spec["seat_context"]) + relay_key + nonce
        assert seat_claim(relay_key, nonce) == claim == bytes.fromhex(p["claim"])
        assert player.sign(claim).signature.hex() == p["proof"]
        assert seat_proof_ok(bytes(player.verify_key), bytes.fromhex(p["proof"]), relay_key, nonce)
        assert not seat_proof_ok(bytes(player.verify_key), bytes.fromhex(p["proof"]), relay_key, bytes(32))


async def test_the_relay_signs_exactly_the_vector_bytes(mock_clock: trio.testing.MockClock) -> None:
    """The relay's certificate is witness.sign_certificate over what it saw: with the vector key, a room
    and frames of our choosing, the blob is the one sign_certificate makes for those fields."""
    key = SigningKey(bytes(range(32)))
    async with relay_for_test(key) as (relay, _):
        async with connect(relay.url) as a, connect(relay.url) as b:
            keys = (a.identity.public_key().public_bytes_raw(), b.identity.public_key().public_bytes_raw())
            ta = await a.create_room()
            await b.join(ta.room)
            await a.send(b"x")
            assert await frames(b, 1) == [b"x"]
            for f in (b"y", b"z", b"y"):  # flagged or not, each frame of the claimer's is listed once, the last last
                await b.send(f, control=f == b"z")
            assert await frames(a, 3) == [b"y", b"z", b"y"]
            mock_clock.jump(3)
            blob = await b.certify()
    recent = [frame_hash(b"z"), frame_hash(b"y")]
    assert blob == sign_certificate(key, ta.room, 0, (frame_hash(b"x"), frame_hash(b"y")), 3000, True, recent, keys)


# ------------------------------------------------------------------------ move time


async def test_move_time_is_a_room_setting() -> None:
    async with relay_for_test() as (relay, _):
        async with connect(relay.url) as a, connect(relay.url) as b, connect(relay.url) as c:
            ta = await a.create_room(move_time_s=30)
            assert ta.move_time_s == 30
            [row] = await c.list_rooms()
            assert row.move_time_s == 30 and "move_time_s" not in row.to_json()  # the CLI's JSON rows are fixed
            assert (await c.room_info(ta.room)).move_time_s == 30
            with pytest.raises(RelayError) as ei:
                await b.join(ta.room, move_time_s=120)
            assert ei.value.code == "settings_mismatch" and ei.value.extra["settings"]["move_time_s"] == 30
            tb = await b.join(ta.room, move_time_s=30)
            assert tb.move_time_s == 30
            assert type(tb).from_json(tb.to_json()).move_time_s == 30
            t0 = await c.create_room(move_time_s=0)  # no clock
            assert (await a.room_info(t0.room)).move_time_s == 0


async def test_move_time_defaults_to_120_and_is_checked() -> None:
    async with relay_for_test() as (relay, _):
        async with open_websocket_url(relay.url) as raw:
            # a client that does not say gets 120
            with trio.fail_after(5):
                hello = await raw.get_message()
                assert isinstance(hello, bytes) and decode(hello)["t"] == "relay"
                player = SigningKey(bytes(range(3, 35)))
                proof = sign_seat_proof(player, decode(hello)["key"], decode(hello)["nonce"])
                await raw.send_message(encode({"t": "create", "key": bytes(player.verify_key), "proof": proof}))
                reply = await raw.get_message()
                assert isinstance(reply, bytes)
                created = decode(reply)
            assert created["t"] == "created" and created["settings"]["move_time_s"] == 120
        async with connect(relay.url) as a:
            for bad in (-1, 86_401, True, "60"):
                with pytest.raises(RelayError) as ei:
                    await a.create_room(move_time_s=bad)  # type: ignore[arg-type]
                assert ei.value.code == "bad_request"


async def test_a_rebuilt_room_keeps_the_move_time() -> None:
    async with relay_for_test() as (r1, _):
        async with connect(r1.url) as a, connect(r1.url) as b:
            ta = await a.create_room(move_time_s=45)
            await b.join(ta.room)
            await peer(a, "joined")
    async with relay_for_test() as (r2, _):
        async with connect(r2.url) as a2:
            await a2.resume(ta)
            assert (await a2.room_info(ta.room)).move_time_s == 45


# ---------------------------------------------------------------------- not a relay


async def test_a_web_server_is_not_a_relay() -> None:
    page = b"<!DOCTYPE html>\n<html><body><h1>Welcome to nginx!</h1></body></html>\n"

    async def http(stream: trio.SocketStream) -> None:
        with trio.move_on_after(5):
            await stream.receive_some(65536)
            await stream.send_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(page) + page
            )
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, http, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        url = f"ws://127.0.0.1:{port}"
        with pytest.raises(RelayError) as ei:
            async with connect(url, timeout=5):
                pass
        nursery.cancel_scope.cancel()
    e = ei.value
    assert e.code == "not_a_relay"
    assert e.message == (
        f"{url} is not a koikoi relay: it answered HTTP 200 instead of a WebSocket "
        "(a wrong port, or a proxy without WebSocket support?)"
    )


async def test_a_websocket_server_that_does_not_announce_itself_is_not_a_relay() -> None:
    async def echo(request: WebSocketRequest) -> None:
        ws = await request.accept()
        await ws.send_message(encode({"t": "hello", "from": "someone else"}))
        await trio.sleep(5)

    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve_websocket, echo, "127.0.0.1", 0, None)
        url = f"ws://127.0.0.1:{server.port}"
        with pytest.raises(RelayError) as ei:
            async with connect(url, timeout=5):
                pass
        nursery.cancel_scope.cancel()
    assert ei.value.code == "not_a_relay" and "did not announce itself" in ei.value.message


async def test_a_refused_connection_says_why() -> None:
    async with relay_for_test(max_connections_per_ip=1) as (relay, _):
        async with connect(relay.url):
            with pytest.raises(RelayError) as ei:
                async with connect(relay.url):
                    pass
            assert ei.value.code == "too_many_connections"


async def test_unknown_keys_in_the_announcement_are_fine_and_a_short_key_is_refused() -> None:
    sent: list[bytes] = []

    async def fake(request: WebSocketRequest) -> None:
        ws = await request.accept()
        msg = sent.pop(0)
        await ws.send_message(msg)
        await trio.sleep(5)

    key = bytes(SigningKey(bytes(32)).verify_key)
    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve_websocket, fake, "127.0.0.1", 0, None)
        url = f"ws://127.0.0.1:{server.port}"
        nonce = bytes(range(32))
        sent.append(encode({"t": "relay", "key": key, "fingerprint": "LIES-LIES-LIES-LIES", "v": 2, "nonce": nonce}))
        async with connect(url, timeout=5) as c:
            assert c.relay_key == key and c.relay_fingerprint == fingerprint(key)  # computed, not believed
            assert c.nonce == nonce
        for bad in (
            {"t": "relay", "key": key[:31], "fingerprint": "", "nonce": nonce},
            {"t": "relay", "key": key, "fingerprint": ""},  # an older relay: no nonce to prove a seat with
            {"t": "relay", "key": key, "fingerprint": "", "nonce": nonce[:31]},
        ):
            sent.append(encode(bad))
            with pytest.raises(RelayError) as ei:
                async with connect(url, timeout=5):
                    pass
            assert ei.value.code == "not_a_relay"
        nursery.cancel_scope.cancel()


async def test_resume_gives_the_seat_copies_of_its_recent_frames() -> None:
    """A seat that resumes gets copies of its recent frames back, flagged or not, oldest first (a transcript
    that lost its tail takes its messages back: spec/protocol.md §8); a rebuilt room has none."""
    async with relay_for_test() as (relay, _):
        async with connect(relay.url) as a, connect(relay.url) as b:
            ta = await a.create_room()
            await b.join(ta.room)
            await peer(a, "joined")
            await a.send(b"x")
            await a.send(b"resend", control=True)
            assert await frames(b, 2) == [b"x", b"resend"]
        async with connect(relay.url) as a2:
            info = await a2.resume(ta)
            assert info.own_frames == (b"x", b"resend") and not info.restored
    async with relay_for_test() as (r2, _), connect(r2.url) as a3:
        info = await a3.resume(ta)
        assert info.restored and info.own_frames == ()


async def test_resume_gives_back_copies_up_to_their_whole_budget() -> None:
    """The copies fill up to COPY_BYTES; the resumed reply that carries them (and its other fields) is read."""
    from koikoi.protocol.witness import COPY_BYTES

    big = [bytes([i]) * (COPY_BYTES // 2 - 16) for i in range(2)]
    async with relay_for_test() as (relay, _):
        async with connect(relay.url) as a, connect(relay.url) as b:
            ta = await a.create_room()
            await b.join(ta.room)
            await peer(a, "joined")
            for f in big:
                await a.send(f)
            assert await frames(b, 2) == big
        async with connect(relay.url, timeout=5) as a2:
            info = await a2.resume(ta)
            assert info.own_frames == tuple(big) and sum(map(len, big)) > COPY_BYTES - 64
