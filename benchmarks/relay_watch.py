"""A relay with rooms each watched by spectators: N rooms of two players exchanging move-sized frames, W watchers
per room (issue 22's figure: 1,000 rooms, 4 watchers each).

    python benchmarks/relay_watch.py [--rooms 1000] [--watchers 4] [--rate 1000] [--seconds 10] [--late 100]

The relay runs in a process of its own (a ``Relay`` with the per-address limits lifted: one load generator
plays every player and every watcher from one address), the load generator in this one, with the bare
WebSocket client of ``relay_load.py``. Every room is opened and joined first (sealed rooms, which allow
watchers), then its watchers ``watch`` it; then the seats send frames at ``--rate`` frames/s in all, spread
over the rooms, alternating seats. Each frame carries its send time: the other seat measures its one-way
latency through the relay (``p50_ms``, ``p99_ms``) and every watcher measures its ``seen``
(``watch_p50_ms``, ``watch_p99_ms``). The first ``--warmup`` seconds (default 2) are not measured. Then
``--late`` new watchers (one per room, in as many rooms) watch from 0 at once: ``late_catch_up_s`` is how
long until each had the room's whole log.

Memory: the relay's RSS when idle, with the rooms seated, with the watchers watching, and after the traffic
(the rooms' logs hold every distinct frame); ``rss_mb_per_1000_watchers`` is the watchers' share.

Prints one JSON object: rooms, watchers, connections, frames, seen (``seen`` messages received; expected
``frames * watchers``), lost, frames_per_s, seen_per_s, p50/p99 for seats and watchers, the RSS figures, the
relay's CPU share.
"""

from __future__ import annotations

import argparse
import gc
import json
import struct
import sys
import time
from pathlib import Path
from typing import Any

import msgpack
import trio

sys.path.insert(0, str(Path(__file__).parent))

from relay_load import (  # (a sibling script: its bare client and helpers)
    FRAME_PREFIX,
    PAYLOAD,
    RawWS,
    cpu_s,
    free_port,
    pct,
    raise_nofile,
    relay_gauge,
    request,
    rss_mb,
    start,
    stop,
)

RELAY = """
import json, signal, sys, trio
from koikoi.relay.observe import EventLog
from koikoi.relay.server import Relay, RelayConfig, tune_gc
cfg = RelayConfig(**json.loads(sys.argv[1]))
async def main():
    relay = Relay(cfg, log=EventLog(enabled=False))
    async with trio.open_nursery() as nursery:
        await nursery.start(relay.serve)
        print(relay.url, flush=True)
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                relay.shutdown()
                break
tune_gc()
trio.run(main)
"""
SEEN_PREFIX = msgpack.packb({"t": "seen"})[1:]  # what every seen message starts with (after the map header)


class Watched:
    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.pairs: list[tuple[RawWS, RawWS]] = []
        self.codes: list[str] = []
        self.watchers: list[RawWS] = []
        self.seq: list[list[int]] = []
        self.latencies: list[float] = []
        self.watch_latencies: list[float] = []
        self.measure_from_ns = 1 << 62
        self.received = 0
        self.seen = 0
        self.sent = 0

    async def open_room(self, nursery: trio.Nursery, limiter: trio.CapacityLimiter) -> None:
        async with limiter:
            a = await RawWS.connect(self.host, self.port)
            b = await RawWS.connect(self.host, self.port)
            created = await request(a, {"t": "create", "deck": "sealed"})
            await request(b, {"t": "join", "room": created["room"]})
            self.pairs.append((a, b))
            self.codes.append(created["room"])
            self.seq.append([0, 0])
            nursery.start_soon(self.receive, a)
            nursery.start_soon(self.receive, b)

    async def watch(self, nursery: trio.Nursery, limiter: trio.CapacityLimiter, code: str) -> None:
        async with limiter:
            w = await RawWS.connect(self.host, self.port)
            reply = await request(w, {"t": "watch", "room": code})
            assert reply["t"] == "watching", reply
            self.watchers.append(w)
            nursery.start_soon(self.receive_seen, w)

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
        except (ConnectionError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    async def receive_seen(self, ws: RawWS) -> None:
        lat = self.watch_latencies
        try:
            while True:
                msg = await ws.recv()
                if msg[1:].startswith(SEEN_PREFIX):
                    now = time.perf_counter_ns()
                    (sent_ns,) = struct.unpack_from("!q", msg, len(msg) - PAYLOAD)
                    self.seen += 1
                    if sent_ns >= self.measure_from_ns:
                        lat.append((now - sent_ns) / 1e6)
        except (ConnectionError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    async def send_at_rate(self, rate: float, seconds: float) -> None:
        total = int(rate * seconds)
        pad = b"\x00" * (PAYLOAD - 16)
        packb = msgpack.packb
        t0 = trio.current_time()
        i = 0
        while i < total:
            due = t0 + i / rate
            now = trio.current_time()
            if due > now:
                await trio.sleep(due - now)
            now = trio.current_time()
            while i < total and t0 + i / rate <= now:
                room = i % len(self.pairs)
                side = (i // len(self.pairs)) % 2
                ws = self.pairs[room][side]
                self.seq[room][side] += 1
                # the send time, then a counter: every frame is distinct (the room's log keeps distinct frames)
                data = struct.pack("!qq", time.perf_counter_ns(), self.sent) + pad
                await ws.send(packb({"t": "frame", "n": self.seq[room][side], "d": data}))
                self.sent += 1
                i += 1


async def late_catch_up(host: str, port: int, codes: list[str]) -> tuple[float, int]:
    """Watchers of ``codes`` (one each) from index 0, at once: seconds until each had its room's whole log."""
    got = 0

    async def one(code: str) -> None:
        nonlocal got
        w = await RawWS.connect(host, port)
        reply = await request(w, {"t": "watch", "room": code})
        want = reply["frames"]
        n = 0
        while n < want:
            if (await w.recv())[1:].startswith(SEEN_PREFIX):
                n += 1
        got += n
        await w.aclose()

    t = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for code in codes:
            nursery.start_soon(one, code)
    return time.perf_counter() - t, got


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rooms, per = args.rooms, args.watchers
    conns = rooms * (2 + per) + args.late + 500
    metrics_port = free_port()
    cfg = {
        "port": 0,
        "metrics_port": metrics_port,
        "max_rooms": rooms + 100,
        "max_connections": conns,
        "max_connections_per_ip": conns,
        "max_handshakes_per_ip": conns,
        "new_connections_burst": 2 * conns,
        # one load generator plays every player and watcher from one address: lift the per-address budgets
        "max_waiting_rooms_per_ip": rooms + 100,
        "max_rooms_per_ip": rooms + 100,
        "max_watching_per_ip": rooms * per + args.late + 100,
        "first_frame_timeout": 3600.0,
        "frames_per_s": 100000.0,
        "burst": 100000,
        "handshake_timeout": 60.0,
        "chosen_codes_after_s": 0.0,
    }
    relay, url = start([sys.executable, "-c", RELAY, json.dumps(cfg)])
    out: dict[str, Any] = {}
    try:
        await trio.sleep(0.5)
        rss0 = rss_mb(relay.pid)
        host, port = url[len("ws://") :].rsplit(":", 1)
        load = Watched(host, int(port))
        async with trio.open_nursery() as nursery:
            limiter = trio.CapacityLimiter(64)
            t = time.perf_counter()
            async with trio.open_nursery() as opening:
                for _ in range(rooms):
                    opening.start_soon(load.open_room, nursery, limiter)
            await trio.sleep(0.5)
            rss_rooms = rss_mb(relay.pid)
            async with trio.open_nursery() as opening:
                for code in load.codes:
                    for _ in range(per):
                        opening.start_soon(load.watch, nursery, limiter, code)
            setup_s = time.perf_counter() - t
            gc.collect()
            gc.freeze()
            gc.set_threshold(50_000, 20, 100)
            await trio.sleep(0.5)
            rss_watchers = rss_mb(relay.pid)
            gauge = await relay_gauge(metrics_port, "koikoi_relay_watchers")
            if args.warmup > 0:
                await load.send_at_rate(args.rate, args.warmup)
            load.measure_from_ns = time.perf_counter_ns()
            cpu0, t0, gen0 = cpu_s(relay.pid), time.perf_counter(), time.process_time()
            sent_before, seen_before = load.sent, load.seen
            await load.send_at_rate(args.rate, args.seconds)
            send_s = time.perf_counter() - t0
            with trio.move_on_after(10):
                while load.received < load.sent or load.seen < load.sent * per:
                    await trio.sleep(0.05)
            drained_s = time.perf_counter() - t0
            relay_cpu = (cpu_s(relay.pid) - cpu0) / drained_s
            gen_cpu = (time.process_time() - gen0) / drained_s
            rss_traffic = rss_mb(relay.pid)
            late_s, late_frames = await late_catch_up(host, int(port), load.codes[: args.late]) if args.late else (0, 0)
            held = len(load.pairs)
            nursery.cancel_scope.cancel()
        for a, b in load.pairs:
            await a.aclose()
            await b.aclose()
        for w in load.watchers:
            await w.aclose()
        out.update(
            {
                "rooms": held,
                "watchers": len(load.watchers),
                "connections": 2 * held + len(load.watchers),
                "frames": load.sent,
                "seen": load.seen,
                "lost": load.sent - load.received,
                "seen_lost": load.sent * per - load.seen,
                "frames_per_s": round((load.sent - sent_before) / send_s, 1),
                "seen_per_s": round((load.seen - seen_before) / drained_s, 1),
                "p50_ms": round(pct(load.latencies, 50), 3),
                "p99_ms": round(pct(load.latencies, 99), 3),
                "watch_p50_ms": round(pct(load.watch_latencies, 50), 3),
                "watch_p99_ms": round(pct(load.watch_latencies, 99), 3),
                "watch_max_ms": round(max(load.watch_latencies, default=0.0), 3),
                "relay_rss_mb_idle": round(rss0, 1),
                "relay_rss_mb_rooms": round(rss_rooms, 1),
                "relay_rss_mb_watchers": round(rss_watchers, 1),
                "relay_rss_mb_after_traffic": round(rss_traffic, 1),
                "rss_mb_per_1000_watchers": round((rss_watchers - rss_rooms) / (len(load.watchers) / 1000), 2)
                if load.watchers
                else None,
                "relay_watchers_gauge": int(gauge),
                "relay_cpu_share": round(relay_cpu, 3),
                "load_generator_cpu_share": round(gen_cpu, 3),
                "drained_s": round(drained_s, 2),
                "late_watchers": min(args.late, held),
                "late_catch_up_s": round(late_s, 2),
                "late_frames": late_frames,
                "setup_s": round(setup_s, 2),
                "measured_s": args.seconds,
                "rate": args.rate,
            }
        )
    finally:
        out["relay_exit"] = stop(relay)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rooms", type=int, default=1000, help="rooms held at once (2 players each)")
    p.add_argument("--watchers", type=int, default=4, help="watchers per room")
    p.add_argument("--rate", type=float, default=1000.0, help="player frames per second, in all")
    p.add_argument("--seconds", type=float, default=10.0, help="how long to send (measured)")
    p.add_argument("--warmup", type=float, default=2.0, help="seconds of the same load before measuring")
    p.add_argument("--late", type=int, default=100, help="late watchers that catch up from the log at the end")
    args = p.parse_args()
    if args.rooms < 1 or args.watchers < 0 or args.rate <= 0 or args.seconds <= 0 or args.late < 0:
        p.error("--rooms, --rate and --seconds must be positive; --watchers and --late at least 0")
    raise_nofile(args.rooms * (2 + args.watchers) + args.late + 1024)
    print(json.dumps(trio.run(run, args)))


if __name__ == "__main__":
    main()
