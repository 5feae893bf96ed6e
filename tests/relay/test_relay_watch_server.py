"""Watchers, the archive hook and the HTTP hook through a real relay on 127.0.0.1 (relay/server.py, client.py)."""

from __future__ import annotations

import io
import json
import threading
from typing import Any

import pytest
import trio

from koikoi.relay.client import Frame, RelayClient, RelayError, RoomClosed, Seen, connect
from koikoi.relay.observe import EventLog
from koikoi.relay.server import MAX_HTTP_BODY, Archive, Relay, RelayConfig, open_relay


def config(**kw: Any) -> RelayConfig:
    kw.setdefault("port", 0)
    kw.setdefault("chosen_codes_after_s", 0)
    return RelayConfig(**kw)


def events(buf: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buf.getvalue().splitlines()]


async def next_seen(w: RelayClient) -> Seen:
    with trio.fail_after(10):
        return await w.next_seen()


async def frame_to(c: RelayClient) -> bytes:
    with trio.fail_after(10):
        while True:
            ev = await c.receive()
            if isinstance(ev, Frame):
                return ev.data


async def exchange(host: RelayClient, guest: RelayClient, moves: list[tuple[int, bytes]]) -> None:
    """Each move sent by its seat and received by the other before the next (so the relay takes them in order)."""
    seats = (host, guest)
    for seat, d in moves:
        await seats[seat].send(d)
        assert await frame_to(seats[1 - seat]) == d


async def test_a_watcher_follows_two_players_then_a_late_one_and_a_reconnecting_one_catch_up() -> None:
    buf = io.StringIO()
    moves = [(0, b"hello 0"), (1, b"hello 1"), (0, b"play"), (1, b"draw"), (0, b"koi-koi"), (1, b"stop")]
    async with open_relay(config(), log=EventLog(buf)) as relay:
        async with connect(relay.url) as host, connect(relay.url) as guest:
            ticket = await host.create_room(deck="sealed")
            await guest.join(ticket.room)
            async with connect(relay.url) as first:
                watching = await first.watch(ticket.display)
                assert (watching.room, watching.deck, watching.seats) == (ticket.room, "sealed", ("present", "present"))
                assert (watching.frames, watching.watchers) == (0, 1)
                await exchange(host, guest, moves[:3])
                got = [await next_seen(first) for _ in range(3)]
                assert got == [Seen(i, seat, d) for i, (seat, d) in enumerate(moves[:3])]
                assert first.watch_from == 3
                with pytest.raises(RelayError) as e:  # read-only
                    await first.create_room()
                assert e.value.code == "watching"
                from_ = first.watch_from
            # its connection is gone; the match goes on
            await exchange(host, guest, moves[3:])
            async with connect(relay.url) as again, connect(relay.url) as late:
                back = await again.watch(ticket.room, from_=from_)
                assert back.frames == len(moves)
                assert [await next_seen(again) for _ in range(3)] == [
                    Seen(i, seat, d) for i, (seat, d) in list(enumerate(moves))[3:]
                ]
                await late.watch(ticket.room)
                assert [await next_seen(late) for _ in range(len(moves))] == [
                    Seen(i, seat, d) for i, (seat, d) in enumerate(moves)
                ]
                await host.leave(done=True)
                await guest.leave(done=True)
                for w in (again, late):
                    with pytest.raises(RoomClosed) as closed:
                        await next_seen(w)
                    assert closed.value.code == "match_over" and w.watching is None
                listing = await late.list_rooms()  # back in the lobby
                assert listing == [] and late.archive is False
    assert [e["event"] for e in events(buf)].count("watch_started") == 3
    assert relay.metrics.watches_total == 3 and relay.metrics.watch_frames_total == 3 + 3 + 6


async def test_a_shared_room_refuses_watchers_unless_its_creator_allows_them() -> None:
    async with open_relay(config(), log=EventLog(io.StringIO())) as relay:
        async with connect(relay.url) as host, connect(relay.url) as other, connect(relay.url) as watcher:
            shared = await host.create_room()
            with pytest.raises(RelayError) as e:
                await watcher.watch(shared.room)
            assert e.value.code == "watchers_off"
            allowed = await other.create_room(watchers=True)
            rooms = await watcher.list_rooms()
            assert {(r.room, r.watchers, r.watching) for r in rooms} == {
                (shared.room, False, 0),
                (allowed.room, True, 0),
            }
            assert (await watcher.watch(allowed.room)).seats == ("present", "waiting")
            info = await other.room_info(allowed.room)
            assert (info.watchers, info.watching, info.archive) == (True, 1, False)


def get(path: str, method: str = "GET") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: relay.example\r\n\r\n".encode()


async def http(port: int, request: bytes) -> tuple[str, dict[str, str], bytes]:
    with trio.fail_after(20):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(request)
            data = b""
            while chunk := await stream.receive_some(1 << 20):
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    return status, {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines)}, body


async def test_the_http_routes_hook_answers_the_paths_it_takes() -> None:
    asked: list[str] = []
    index = json.dumps({"format": 1, "matches": []}).encode()

    def routes(path: str) -> tuple[int, str, bytes] | None:
        asked.append(path)
        if path.startswith("/matches?") or path == "/matches":
            return 200, "application/json", index
        if path == "/boom":
            raise OSError("the disk is gone")
        if path == "/odd":
            return 200, "text/plain\r\nSet-Cookie: x", b""  # (a broken hook)
        if path == "/big":
            return 200, "application/octet-stream", bytes(MAX_HTTP_BODY + 1)
        if path == "/file.koikoi":
            return 200, "application/octet-stream", bytes(range(256)) * 4096  # 1 MiB
        return None

    buf = io.StringIO()
    async with open_relay(config(handshake_timeout=60), log=EventLog(buf), http_routes=routes) as relay:
        status, headers, body = await http(relay.port, get("/matches?after=AB12"))
        assert status == "HTTP/1.1 200 OK" and headers["content-type"] == "application/json" and body == index
        assert headers["content-length"] == str(len(index)) and headers["cache-control"] == "no-store"
        status, headers, body = await http(relay.port, get("/matches", "HEAD"))
        assert status == "HTTP/1.1 200 OK" and body == b"" and headers["content-length"] == str(len(index))
        status, _, body = await http(relay.port, get("/file.koikoi"))
        assert status == "HTTP/1.1 200 OK" and body == bytes(range(256)) * 4096
        assert (await http(relay.port, get("/elsewhere")))[0] == "HTTP/1.1 404 Not Found"
        for broken in ("/boom", "/odd", "/big"):
            status, headers, _ = await http(relay.port, get(broken))
            assert status == "HTTP/1.1 500 Internal Server Error" and "set-cookie" not in headers, broken
        # the relay's own paths and methods are its own: the hook is not asked
        status, _, body = await http(relay.port, get("/healthz"))
        assert status == "HTTP/1.1 200 OK" and json.loads(body) == {"status": "ok"}
        assert (await http(relay.port, get("/matches", "POST")))[0] == "HTTP/1.1 405 Method Not Allowed"
        async with connect(relay.url) as player:  # and the relay plays on
            assert (await player.create_room()).seat == 0
    assert asked == ["/matches?after=AB12", "/matches", "/file.koikoi", "/elsewhere", "/boom", "/odd", "/big"]
    failed = [e for e in events(buf) if e["event"] == "http_route_failed"]
    assert [e["path"] for e in failed] == ["/boom", "/odd", "/big"]
    assert "OSError: the disk is gone" in failed[0]["error"]


async def test_on_archive_gets_each_finished_room_in_a_worker_thread_and_its_failure_is_not_fatal() -> None:
    got: list[tuple[Archive, bool]] = []
    main = threading.get_ident()

    def on_archive(archive: Archive) -> None:
        got.append((archive, threading.get_ident() != main))
        if len(got) == 1:
            raise RuntimeError("no room on the disk")

    buf = io.StringIO()
    moves = [(0, b"h"), (1, b"g"), (0, b"end")]
    async with open_relay(config(archive=True), log=EventLog(buf), on_archive=on_archive) as relay:
        for private in (False, True):
            async with connect(relay.url) as host, connect(relay.url) as guest:
                ticket = await host.create_room(private=private)  # (a shared room: no watchers, archived all the same)
                await guest.join(ticket.room)
                await exchange(host, guest, moves)
                await host.leave(done=True)
                await guest.leave(done=True)
        assert (await _lobby(relay)) is True
    # (a stopping relay waits for the hook's pending calls)
    frames = tuple((seat, d) for seat, d in moves)
    assert [(a.private, a.frames, in_thread) for a, in_thread in got] == [(False, frames, True), (True, frames, True)]
    failed = [e for e in events(buf) if e["event"] == "archive_failed"]
    assert len(failed) == 1 and failed[0]["room"] == got[0][0].room and "no room on the disk" in failed[0]["error"]
    assert relay.metrics.archives_total == 2 and relay.metrics.archive_failures_total == 1
    assert "koikoi_relay_archive_failures_total 1" in relay.metrics.render()


async def _lobby(relay: Relay) -> bool | None:
    async with connect(relay.url) as c:
        await c.list_rooms()
        return c.archive


def test_an_archive_hook_goes_with_the_archive_setting() -> None:
    with pytest.raises(ValueError, match="on_archive"):
        Relay(config(archive=True))
    with pytest.raises(ValueError, match="on_archive"):
        Relay(config(), on_archive=lambda archive: None)
