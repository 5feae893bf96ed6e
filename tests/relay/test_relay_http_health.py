"""The relay answers plain HTTP on its WebSocket port: ``GET /healthz`` is 200 with a tiny JSON body, ``GET /``
says what this is, at once; a health check logs nothing (no ``limit_hit handshake_timeout`` later) and never
keeps a player of the same address out."""

from __future__ import annotations

import io
import json
from typing import Any

import trio

from koikoi.relay.client import connect
from koikoi.relay.observe import EventLog
from koikoi.relay.server import RelayConfig, open_relay


async def http(port: int, request: bytes) -> tuple[str, dict[str, str], bytes]:
    """One request on a fresh TCP connection, read to the relay's close: status line, headers, body."""
    with trio.fail_after(20):  # (far less than the 60 s handshake timeout of these relays)
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(request)
            data = b""
            while chunk := await stream.receive_some(65536):
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return status, headers, body


def get(path: str, method: str = "GET") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: relay.example\r\nUser-Agent: health-checker\r\n\r\n".encode()


def events(buf: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buf.getvalue().splitlines()]


async def test_healthz_and_the_root_answer_at_once_and_log_nothing() -> None:
    buf = io.StringIO()
    async with open_relay(RelayConfig(port=0, handshake_timeout=60), log=EventLog(buf)) as relay:
        status, headers, body = await http(relay.port, get("/healthz"))
        assert status == "HTTP/1.1 200 OK"
        assert headers["content-type"] == "application/json" and json.loads(body) == {"status": "ok"}
        assert int(headers["content-length"]) == len(body)
        status, headers, body = await http(relay.port, get("/"))
        assert status == "HTTP/1.1 200 OK" and headers["content-type"].startswith("text/plain")
        text = body.decode()
        assert text.startswith("koikoi relay:") and "koikoi join" in text and "/healthz" in text
        status, headers, body = await http(relay.port, get("/healthz", "HEAD"))
        assert status == "HTTP/1.1 200 OK" and body == b"" and headers["content-length"] == "16"
        status, _, body = await http(relay.port, get("/favicon.ico"))
        assert status == "HTTP/1.1 404 Not Found" and b"koikoi relay" in body
        status, _, _ = await http(relay.port, get("/healthz", "POST"))
        assert status == "HTTP/1.1 405 Method Not Allowed"
        for _ in range(20):
            assert (await http(relay.port, get("/healthz?probe=1")))[0] == "HTTP/1.1 200 OK"
    # (a request still counted as a handshake in flight would be logged as one cut short when the relay stops)
    assert [e["event"] for e in events(buf)] == ["relay_started", "relay_stopped"], buf.getvalue()
    assert sum(relay.metrics.limit_hits_total.values()) == 0


async def test_health_checks_never_keep_a_player_of_the_same_address_out() -> None:
    # one after another, more checks than the handshakes an address may have in flight, then a player from there
    cfg = RelayConfig(port=0, handshake_timeout=60, max_handshakes_per_ip=2, chosen_codes_after_s=0)
    async with open_relay(cfg, log=EventLog(io.StringIO())) as relay:
        statuses = [(await http(relay.port, get("/healthz")))[0] for _ in range(10)]
        assert statuses == ["HTTP/1.1 200 OK"] * 10
        with trio.fail_after(20):
            async with connect(relay.url, timeout=10) as player:
                ticket = await player.create_room()
        assert ticket.seat == 0 and ticket.room in relay.rooms
        assert relay.metrics.limit_hits_total.get("handshake", 0) == 0
