"""Structured logs (one JSON line per event) and Prometheus metrics for the relay.

Logs never carry passwords, tokens, frame contents, or private room codes.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

import trio

__all__ = ["LIMITS", "EventLog", "Metrics", "serve_metrics"]

LIMITS = (
    "frame_size",
    "rate",
    "idle",
    "connections_per_ip",
    "connections",
    "rooms",
    "seat_buffer",
    "slow_consumer",
    "join_attempts",
    "handshake",
    "certify",
    "handshakes_per_ip",
    "address_attempts",
    "waiting_rooms",
    "scrypt",
    "first_frame",
    "connection_rate",
    "rooms_per_ip",
    "watchers_per_room",
    "watching_per_ip",
    "watch_log",
)
"""Every limit the relay enforces; each has a counter (``koikoi_relay_limit_hits_total{limit=...}``)."""


class EventLog:
    """Writes one JSON object per line: ``{"ts": ..., "event": ..., ...}``."""

    def __init__(self, stream: TextIO | None = None, enabled: bool = True) -> None:
        self._stream = stream
        self.enabled = enabled

    def __call__(self, event: str, **fields: Any) -> None:
        if not self.enabled:
            return
        stream = self._stream if self._stream is not None else sys.stderr
        rec: dict[str, Any] = {"ts": round(time.time(), 3), "event": event}
        rec.update(fields)
        try:
            stream.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
            stream.flush()
        except (OSError, ValueError):  # a closed or broken log stream never stops the relay
            pass


class Metrics:
    """Counters and gauges, rendered in the Prometheus text exposition format."""

    def __init__(self) -> None:
        self.connections_total = 0
        self.rooms_created_total = 0
        self.rooms_closed_total: dict[str, int] = {}
        self.frames_in_total = 0
        self.frames_out_total = 0
        self.frames_dropped_total = 0
        self.bytes_in_total = 0
        self.bytes_out_total = 0
        self.control_in_total = 0
        self.joins_total = 0
        self.resumes_total = 0
        self.watches_total = 0
        self.watch_frames_total = 0
        self.archives_total = 0
        self.archive_failures_total = 0
        self.join_failures_total: dict[str, int] = {}
        self.limit_hits_total: dict[str, int] = dict.fromkeys(LIMITS, 0)
        self.gauges: Callable[[], dict[str, int]] = dict

    def limit_hit(self, limit: str) -> None:
        self.limit_hits_total[limit] = self.limit_hits_total.get(limit, 0) + 1

    def join_failed(self, code: str) -> None:
        self.join_failures_total[code] = self.join_failures_total.get(code, 0) + 1

    def room_closed(self, reason: str) -> None:
        self.rooms_closed_total[reason] = self.rooms_closed_total.get(reason, 0) + 1

    def render(self) -> str:
        out: list[str] = []

        def metric(name: str, kind: str, help_: str, samples: list[tuple[str, int]]) -> None:
            out.append(f"# HELP {name} {help_}")
            out.append(f"# TYPE {name} {kind}")
            for labels, value in samples:
                out.append(f"{name}{labels} {value}")

        g = self.gauges()
        metric(
            "koikoi_relay_rooms",
            "gauge",
            "Rooms open now, by state.",
            [('{state="waiting"}', g.get("rooms_waiting", 0)), ('{state="playing"}', g.get("rooms_playing", 0))],
        )
        metric("koikoi_relay_connections", "gauge", "WebSocket connections open now.", [("", g.get("connections", 0))])
        metric(
            "koikoi_relay_seats_away",
            "gauge",
            "Seats whose holder is disconnected, within the grace period.",
            [("", g.get("seats_away", 0))],
        )
        metric(
            "koikoi_relay_watchers",
            "gauge",
            "Connections watching a room now.",
            [("", g.get("watchers", 0))],
        )
        metric(
            "koikoi_relay_connections_total",
            "counter",
            "WebSocket connections accepted.",
            [("", self.connections_total)],
        )
        metric(
            "koikoi_relay_rooms_created_total",
            "counter",
            "Rooms created (including restored ones).",
            [("", self.rooms_created_total)],
        )
        metric(
            "koikoi_relay_rooms_closed_total",
            "counter",
            "Rooms closed, by reason.",
            [(f'{{reason="{k}"}}', v) for k, v in sorted(self.rooms_closed_total.items())],
        )
        metric(
            "koikoi_relay_frames_total",
            "counter",
            "Player frames received (in) and written (out).",
            [('{direction="in"}', self.frames_in_total), ('{direction="out"}', self.frames_out_total)],
        )
        metric(
            "koikoi_relay_frames_dropped_total",
            "counter",
            "Player frames dropped as duplicates or out of order (the sender resends them).",
            [("", self.frames_dropped_total)],
        )
        metric(
            "koikoi_relay_bytes_total",
            "counter",
            "WebSocket message bytes received (in) and sent (out).",
            [('{direction="in"}', self.bytes_in_total), ('{direction="out"}', self.bytes_out_total)],
        )
        metric(
            "koikoi_relay_control_messages_total",
            "counter",
            "Relay control messages received.",
            [("", self.control_in_total)],
        )
        metric("koikoi_relay_joins_total", "counter", "Successful joins.", [("", self.joins_total)])
        metric("koikoi_relay_resumes_total", "counter", "Successful seat resumes.", [("", self.resumes_total)])
        metric("koikoi_relay_watches_total", "counter", "Successful watches.", [("", self.watches_total)])
        metric(
            "koikoi_relay_watch_frames_total",
            "counter",
            "Frames queued for watchers (seen messages: the log to late watchers, and live frames).",
            [("", self.watch_frames_total)],
        )
        metric(
            "koikoi_relay_archives_total", "counter", "Rooms handed to the archive hook.", [("", self.archives_total)]
        )
        metric(
            "koikoi_relay_archive_failures_total",
            "counter",
            "Archive hook calls that raised (logged: archive_failed).",
            [("", self.archive_failures_total)],
        )
        metric(
            "koikoi_relay_join_failures_total",
            "counter",
            "Failed join/resume/info attempts, by error code.",
            [(f'{{code="{k}"}}', v) for k, v in sorted(self.join_failures_total.items())],
        )
        metric(
            "koikoi_relay_limit_hits_total",
            "counter",
            "Times a limit was hit, by limit.",
            [(f'{{limit="{k}"}}', v) for k, v in sorted(self.limit_hits_total.items())],
        )
        return "\n".join(out) + "\n"


async def _metrics_handler(metrics: Metrics, stream: trio.SocketStream) -> None:
    try:
        with trio.move_on_after(5):
            data = b""
            while b"\r\n\r\n" not in data and b"\n\n" not in data and len(data) < 8192:
                chunk = await stream.receive_some(4096)
                if not chunk:
                    break
                data += chunk
            line = data.split(b"\r\n", 1)[0].split(b"\n", 1)[0].decode("latin-1")
            parts = line.split()
            if len(parts) >= 2 and parts[0] in ("GET", "HEAD") and parts[1].split("?")[0] in ("/", "/metrics"):
                body = metrics.render().encode()
                status = "200 OK"
                ctype = "text/plain; version=0.0.4; charset=utf-8"
            else:
                body = b"not found: try GET /metrics\n"
                status = "404 Not Found"
                ctype = "text/plain; charset=utf-8"
            head = (
                f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n"
            ).encode()
            await stream.send_all(head + (b"" if parts[:1] == ["HEAD"] else body))
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        pass
    finally:
        await trio.aclose_forcefully(stream)


async def serve_metrics(
    metrics: Metrics,
    host: str,
    port: int,
    *,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``GET /metrics`` over plain HTTP until cancelled; reports the bound port."""
    listeners = await trio.open_tcp_listeners(port, host=host)
    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, lambda s: _metrics_handler(metrics, s), listeners)
        task_status.started(listeners[0].socket.getsockname()[1])
        await trio.sleep_forever()
