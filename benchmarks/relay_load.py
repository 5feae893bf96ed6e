"""Bounded loopback load on the relay: N rooms of two connections exchanging move-sized frames.

    python benchmarks/relay_load.py [--rooms 2000] [--rate 2000] [--seconds 10]

The relay runs as a real ``koikoi relay`` process and the load generator in
this one, so each has a core. Every connection is opened and seated first
(all held at once), then frames are sent at ``--rate`` frames/s in all,
spread over the rooms, alternating seats; each carries its send time, so the
receiver measures the one-way latency through the relay (client to relay to
client, on loopback: what the relay adds, plus both clients' own overhead).
The first ``--warmup`` seconds (default 2) of the same load are not measured
(both processes settle after the ramp-up); ``frames`` and ``lost`` count them.
Then, in the same run, two ceilings with the same number of ping-pong
connections: a bare trio-websocket echo server (``echo_ceiling_frames_per_s``)
and the relay (``relay_ceiling_frames_per_s``), each frame counted once.

Prints one JSON object: rooms, connections, frames, lost, p50_ms, p99_ms,
frames_per_s, rss_mb_per_1000_connections, echo_ceiling_frames_per_s (and a
few more figures).
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from typing import Any

import msgpack
import trio
from nacl.signing import SigningKey

from koikoi.protocol.framing import decode, encode
from koikoi.protocol.witness import sign_seat_proof

PAYLOAD = 120  # bytes: a signed move is about this size
ECHO_SERVER = """
import sys, trio
from trio_websocket import serve_websocket, ConnectionClosed
async def echo(request):
    ws = await request.accept()
    try:
        while True:
            await ws.send_message(await ws.get_message())
    except ConnectionClosed:
        pass
async def main():
    async with trio.open_nursery() as n:
        server = await n.start(serve_websocket, echo, "127.0.0.1", 0, None)
        print(f"ws://127.0.0.1:{server.port}", flush=True)
trio.run(main)
"""


def raise_nofile(want: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(cmd: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    # the relay's key goes to a throwaway state dir, not the user's
    env = {**os.environ, "KOIKOI_STATE_DIR": tempfile.mkdtemp(prefix="koikoi-relay-load-")}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=_child_limits, env=env)
    assert proc.stdout is not None
    url = proc.stdout.readline().decode().strip()
    if not url.startswith("ws://"):
        proc.kill()
        raise SystemExit(f"relay_load: the server did not start ({url!r})")
    return proc, url


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _child_limits() -> None:
    raise_nofile(1 << 20)


def stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


class RawWS:
    """A bare-bones WebSocket client (binary frames, zero mask, pongs), so the load generator stays cheap:
    the figures are the relay's, not a client library's."""

    def __init__(self, stream: trio.SocketStream, buf: bytearray) -> None:
        self.stream = stream
        self.buf = buf
        self.announced: dict[str, Any] | None = None
        """The relay's announcement (its key and this connection's nonce), once read."""

    @classmethod
    async def connect(cls, host: str, port: int) -> RawWS:
        stream = await trio.open_tcp_stream(host, port)
        key = base64.b64encode(os.urandom(16))
        await stream.send_all(
            b"GET / HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (host.encode(), port, key)
        )
        buf = bytearray()
        while b"\r\n\r\n" not in buf:
            chunk = await stream.receive_some(65536)
            if not chunk:
                raise ConnectionError("closed during the handshake")
            buf += chunk
        head, _, rest = bytes(buf).partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(head.split(b"\r\n", 1)[0].decode("latin-1"))
        return cls(stream, bytearray(rest))

    @staticmethod
    def frame(payload: bytes, opcode: int = 0x2) -> bytes:
        n = len(payload)
        if n < 126:
            head = bytes((0x80 | opcode, 0x80 | n))
        elif n < 65536:
            head = bytes((0x80 | opcode, 0x80 | 126)) + n.to_bytes(2, "big")
        else:
            head = bytes((0x80 | opcode, 0x80 | 127)) + n.to_bytes(8, "big")
        return head + b"\0\0\0\0" + payload  # a zero mask leaves the payload as is

    async def send(self, payload: bytes) -> None:
        await self.stream.send_all(self.frame(payload))

    async def recv(self) -> bytes:
        buf = self.buf
        while True:
            if len(buf) >= 2:
                op, n = buf[0] & 0x0F, buf[1] & 0x7F
                at = 2
                if n == 126:
                    n, at = int.from_bytes(buf[2:4], "big"), 4
                elif n == 127:
                    n, at = int.from_bytes(buf[2:10], "big"), 10
                if len(buf) >= at + n:
                    payload = bytes(buf[at : at + n])
                    del buf[: at + n]
                    if op == 0x2:
                        return payload
                    if op == 0x9:
                        await self.stream.send_all(self.frame(payload, 0xA))
                    elif op == 0x8:
                        raise ConnectionError("closed by the server")
                    continue
            chunk = await self.stream.receive_some(65536)
            if not chunk:
                raise ConnectionError("connection lost")
            buf += chunk

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self.stream)


def by_second(sent_at: list[int], latencies: list[float]) -> list[float]:
    """p99 latency of the frames sent in each second of the run (shows stalls vs steady queueing)."""
    if not sent_at:
        return []
    t0 = min(sent_at)
    buckets: dict[int, list[float]] = {}
    for t, lat in zip(sent_at, latencies, strict=True):
        buckets.setdefault((t - t0) // 1_000_000_000, []).append(lat)
    return [round(pct(buckets[k], 99), 1) for k in sorted(buckets)]


PLAYER = SigningKey.generate()
"""The load's player key: every seat proves it (spec/relay.md, the seat proof)."""


async def request(ws: RawWS, obj: dict[str, Any]) -> dict[str, Any]:
    while ws.announced is None:  # the relay's announcement comes first on every connection
        first = decode(await ws.recv())
        if first.get("t") == "relay":
            ws.announced = first
    if obj["t"] in ("create", "join", "resume"):
        proof = sign_seat_proof(PLAYER, ws.announced["key"], ws.announced["nonce"])
        obj = {**obj, "key": bytes(PLAYER.verify_key), "proof": proof}
    await ws.send(encode(obj))
    while True:
        reply = decode(await ws.recv())
        if reply["t"] not in ("peer", "relay"):
            assert reply["t"] != "error", reply
            return reply  # type: ignore[no-any-return]


FRAME_PREFIX = msgpack.packb({"t": "frame"})[1:]  # what every forwarded frame envelope starts with (after the header)


class Load:
    def __init__(self, host: str, port: int, rooms: int) -> None:
        self.host = host
        self.port = port
        self.rooms = rooms
        self.pairs: list[tuple[RawWS, RawWS]] = []
        self.seq: list[list[int]] = []
        self.latencies: list[float] = []
        self.sent_at: list[int] = []
        self.measure_from_ns = 0
        self.received = 0
        self.sent = 0

    async def open_room(self, nursery: trio.Nursery, limiter: trio.CapacityLimiter) -> None:
        async with limiter:
            a = await RawWS.connect(self.host, self.port)
            b = await RawWS.connect(self.host, self.port)
            created = await request(a, {"t": "create", "rounds": 6, "double_at_8": True, "private": False})
            await request(b, {"t": "join", "room": created["room"]})
            self.pairs.append((a, b))
            self.seq.append([0, 0])
            nursery.start_soon(self.receive, a)
            nursery.start_soon(self.receive, b)

    async def receive(self, ws: RawWS) -> None:
        lat = self.latencies
        try:
            while True:
                msg = await ws.recv()
                if msg[1:].startswith(FRAME_PREFIX):
                    now = time.perf_counter_ns()
                    (sent_ns,) = struct.unpack_from("!q", msg, len(msg) - PAYLOAD)
                    self.received += 1
                    if sent_ns >= self.measure_from_ns:
                        lat.append((now - sent_ns) / 1e6)
                        self.sent_at.append(sent_ns)
        except (ConnectionError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    async def send_at_rate(self, rate: float, seconds: float) -> None:
        total = int(rate * seconds)
        pad = os.urandom(PAYLOAD - 8)
        packb = msgpack.packb
        t0 = trio.current_time()
        i = 0
        while i < total:
            due = t0 + i / rate
            now = trio.current_time()
            if due > now:
                await trio.sleep(due - now)
            # send everything that is due now (keeps the offered rate when the loop is late)
            now = trio.current_time()
            while i < total and t0 + i / rate <= now:
                room = i % len(self.pairs)
                side = (i // len(self.pairs)) % 2
                ws = self.pairs[room][side]
                self.seq[room][side] += 1
                data = struct.pack("!q", time.perf_counter_ns()) + pad
                await ws.send(packb({"t": "frame", "n": self.seq[room][side], "d": data}))
                self.sent += 1
                i += 1


async def ping_pong_ceiling(host: str, port: int, pairs: int, seconds: float, relay: bool) -> float:
    """Frames/s through the server with ``pairs`` ping-pong loops going as fast as they can."""
    count = 0
    opened: list[RawWS] = []

    async def loop() -> None:
        nonlocal count
        a = await RawWS.connect(host, port)
        opened.append(a)
        if relay:
            b = await RawWS.connect(host, port)
            opened.append(b)
            created = await request(a, {"t": "create"})
            await request(b, {"t": "join", "room": created["room"]})
            n = [0, 0]
            ends = (a, b)
        else:
            ends = (a, a)
        data = os.urandom(PAYLOAD)
        await ready.wait()
        side = 0
        while True:
            src, dst = ends[side], ends[1 - side]
            if relay:
                n[side] += 1
                await src.send(encode({"t": "frame", "n": n[side], "d": data}))
                while not (await dst.recv())[1:].startswith(FRAME_PREFIX):
                    pass
            else:
                await src.send(data)
                await dst.recv()
            count += 1
            side = 1 - side

    ready = trio.Event()
    async with trio.open_nursery() as nursery:
        for _ in range(pairs):
            nursery.start_soon(loop)
        await trio.sleep(1.0)
        ready.set()
        start_count, start = count, trio.current_time()
        await trio.sleep(seconds)
        result = (count - start_count) / (trio.current_time() - start)
        nursery.cancel_scope.cancel()
    for ws in opened:
        await ws.aclose()
    return result


async def relay_gauge(port: int, name: str) -> float:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    await stream.send_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while chunk := await stream.receive_some(65536):
        data += chunk
    await stream.aclose()
    for line in data.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise ValueError(f"no {name} in the relay's metrics")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rooms = args.rooms
    conns = 2 * rooms
    profile = ["-m", "cProfile", "-o", args.profile] if args.profile else []
    metrics_port = free_port()
    relay, url = start(
        [
            sys.executable,
            *profile,
            "-m",
            "koikoi.client.cli",
            "relay",
            "--port",
            "0",
            "--quiet",
            "--metrics-port",
            str(metrics_port),
            "--max-rooms",
            str(rooms + 100),
            "--max-connections",
            str(conns + 500),
            "--max-connections-per-ip",
            str(conns + 500),
            "--max-handshakes-per-ip",
            str(conns + 500),
            "--connect-burst-per-ip",
            str(4 * conns + 1000),
            # one load generator plays every player from one address: lift the per-address budgets
            "--max-waiting-rooms-per-ip",
            str(rooms + 100),
            "--max-rooms-per-ip",
            str(rooms + 100),
            "--first-frame-timeout",
            "3600",
            "--frames-per-s",
            "100000",
            "--burst",
            "100000",
            "--handshake-timeout",
            "60",
        ]
    )
    out: dict[str, Any] = {}
    try:
        await trio.sleep(0.5)
        rss0 = rss_mb(relay.pid)
        host, port = url[len("ws://") :].rsplit(":", 1)
        load = Load(host, int(port), rooms)
        async with trio.open_nursery() as nursery:
            limiter = trio.CapacityLimiter(64)
            t = time.perf_counter()
            async with trio.open_nursery() as opening:
                for _ in range(rooms):
                    opening.start_soon(load.open_room, nursery, limiter)
            setup_s = time.perf_counter() - t
            gc.collect()  # the load generator holds thousands of connections too: same GC tuning as the relay
            gc.freeze()
            gc.set_threshold(50_000, 20, 100)
            await trio.sleep(0.5)
            rss1 = rss_mb(relay.pid)
            if args.warmup > 0:  # the same load, not measured: both processes settle (GC after the ramp-up)
                load.measure_from_ns = 1 << 62
                await load.send_at_rate(args.rate, args.warmup)
            out0 = await relay_gauge(metrics_port, 'koikoi_relay_frames_total{direction="out"}')
            load.measure_from_ns = time.perf_counter_ns()
            cpu0, t0, gen0 = cpu_s(relay.pid), time.perf_counter(), time.process_time()
            sent_before = load.sent
            await load.send_at_rate(args.rate, args.seconds)
            send_s = time.perf_counter() - t0
            with trio.move_on_after(5):
                while load.received < load.sent:
                    await trio.sleep(0.05)
            relay_cpu_s = cpu_s(relay.pid) - cpu0
            relay_cpu = relay_cpu_s / (time.perf_counter() - t0)
            relay_in = await relay_gauge(metrics_port, 'koikoi_relay_frames_total{direction="in"}')
            relay_out = await relay_gauge(metrics_port, 'koikoi_relay_frames_total{direction="out"}')
            gen_cpu = (time.process_time() - gen0) / (time.perf_counter() - t0)
            held = len(load.pairs)
            nursery.cancel_scope.cancel()
        for a, b in load.pairs:
            await a.aclose()
            await b.aclose()
        with trio.move_on_after(60):  # let the relay see every connection go before the next measure
            while await relay_gauge(metrics_port, "koikoi_relay_connections") > 0:
                await trio.sleep(0.2)
        out.update(
            {
                "rooms": held,
                "connections": 2 * held,
                "frames": load.sent,
                "lost": load.sent - load.received,
                "p50_ms": round(pct(load.latencies, 50), 3),
                "p99_ms": round(pct(load.latencies, 99), 3),
                "p90_ms": round(pct(load.latencies, 90), 3),
                "p999_ms": round(pct(load.latencies, 99.9), 3),
                "max_ms": round(max(load.latencies, default=0.0), 3),
                "p99_ms_by_second": by_second(load.sent_at, load.latencies),
                "frames_per_s": round((load.sent - sent_before) / send_s, 1),
                "warmup_frames": sent_before,
                "rss_mb_per_1000_connections": round((rss1 - rss0) / (2 * held / 1000), 2) if held else None,
                "relay_rss_mb": round(rss1, 1),
                "relay_cpu_share": round(relay_cpu, 3),
                "load_generator_cpu_share": round(gen_cpu, 3),
                "relay_frames_in": int(relay_in),
                "relay_frames_out": int(relay_out),
                "relay_cpu_ms_per_frame": round(relay_cpu_s * 1000 / max(1.0, relay_out - out0), 3),
                "setup_s": round(setup_s, 2),
            }
        )
        ceiling = await ping_pong_ceiling(host, int(port), args.pairs, args.ceiling_seconds, relay=True)
        out["relay_ceiling_frames_per_s"] = round(ceiling, 1)
    finally:
        out["relay_exit"] = stop(relay)
    echo, echo_url = start([sys.executable, "-c", ECHO_SERVER])
    echo_host, echo_port = echo_url[len("ws://") :].rsplit(":", 1)
    try:
        ceiling = await ping_pong_ceiling(echo_host, int(echo_port), args.pairs, args.ceiling_seconds, relay=False)
        out["echo_ceiling_frames_per_s"] = round(ceiling, 1)
    finally:
        echo.kill()
        echo.wait()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rooms", type=int, default=2000, help="rooms held at once (2 connections each)")
    p.add_argument("--rate", type=float, default=2000.0, help="frames per second, in all")
    p.add_argument("--seconds", type=float, default=10.0, help="how long to send")
    p.add_argument(
        "--warmup",
        type=float,
        default=2.0,
        help="seconds of the same load before measuring (frames counted, latency not)",
    )
    p.add_argument("--pairs", type=int, default=32, help="ping-pong loops for the ceilings")
    p.add_argument("--ceiling-seconds", type=float, default=3.0, help="how long each ceiling is measured")
    p.add_argument("--profile", metavar="PATH", help="run the relay under cProfile, writing its stats to PATH")
    args = p.parse_args()
    if args.rooms < 1 or args.rate <= 0 or args.seconds <= 0 or args.pairs < 1:
        p.error("--rooms, --rate, --seconds and --pairs must be positive")
    raise_nofile(2 * args.rooms + 1024)
    result = trio.run(run, args)
    result = {
        k: result[k]
        for k in (
            "rooms",
            "connections",
            "frames",
            "lost",
            "p50_ms",
            "p99_ms",
            "frames_per_s",
            "rss_mb_per_1000_connections",
            "echo_ceiling_frames_per_s",
        )
    } | result
    print(json.dumps(result))


if __name__ == "__main__":
    main()
