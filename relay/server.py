"""The relay: pairs two players in a room and forwards their frames, untouched.

One :class:`Relay` serves WebSocket connections (binary messages, each one
canonical msgpack frame, see ``spec/relay.md``). Every connection runs three
tasks in its own nursery: a reader (limits, control messages, forwarding), a
writer (drains the connection's bounded outbox) and a watchdog (pings, idle
timeout). Forwarding never awaits: a frame goes into the peer's bounded
outbox, or into the absent seat's bounded buffer, so a slow or hostile client
can only ever hurt its own room.

The relay reads nothing of a player frame but its sequence number: ``d`` is
opaque bytes and the envelope is forwarded byte for byte.
"""

from __future__ import annotations

import contextlib
import gc
import ipaddress
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import trio
from nacl.signing import SigningKey
from trio_websocket import ConnectionClosed, WebSocketConnection, WebSocketRequest, wrap_server_stream

from ..protocol.framing import MAX_FRAME_BYTES, FrameError, decode, encode
from ..protocol.witness import fingerprint, frame_hash, sign_certificate
from . import codes
from .observe import EventLog, Metrics, serve_metrics
from .support import TokenBucket

__all__ = [
    "CLOSE_CODES",
    "DEFAULT_MOVE_TIME_S",
    "ENVELOPE_OVERHEAD",
    "MAX_MOVE_TIME_S",
    "Relay",
    "RelayConfig",
    "doubling_label",
    "open_relay",
    "tune_gc",
]

DEFAULT_MOVE_TIME_S = 120
"""A room's move time when its creator does not say (0 means no clock)."""
MAX_MOVE_TIME_S = 86_400
SEEN_HASHES = 4096
"""Per seat, how many frame hashes the witness remembers to tell a repeat from a new frame."""

ENVELOPE_OVERHEAD = 64
"""Bytes a WebSocket message may carry beyond the player frame (the ``frame`` envelope)."""

CLOSE_CODES: dict[str, int] = {
    "bye": 1000,
    "shutdown": 1001,
    "binary_only": 1003,
    "oversized_frame": 1009,
    "protocol_error": 4000,
    "rate_limited": 4001,
    "idle_timeout": 4002,
    "too_many_connections": 4003,
    "relay_full": 4004,
    "slow_consumer": 4005,
    "replaced": 4006,
    "too_many_attempts": 4007,
}
"""WebSocket close code for each close reason (the reason text is the key)."""

_CLOSE_MESSAGES = {
    "shutdown": "the relay is shutting down",
    "binary_only": "the relay takes binary WebSocket messages only",
    "oversized_frame": "a frame was over the size limit",
    "rate_limited": "too many frames per second",
    "idle_timeout": "no answer to pings",
    "too_many_connections": "too many connections from this address",
    "relay_full": "the relay has too many connections",
    "slow_consumer": "the connection did not read its frames fast enough",
    "replaced": "the seat was taken back by its holder on another connection",
    "too_many_attempts": "too many failed attempts (wrong password, unknown room or bad token)",
}

ROOM_CLOSE_MESSAGES = {
    "opponent_left": "the opponent did not come back within the grace period",
    "opponent_quit": "the opponent left the room",
    "match_over": "the opponent left the room: the match is over",
    "buffer_overflow": "too many frames waited for the absent opponent",
    "abandoned": "nobody came back to the room within the grace period",
    "shutdown": "the relay is shutting down",
}


def doubling_label(double_at_8: bool | None) -> str | None:
    if double_at_8 is None:
        return None
    return "×2 at 8+" if double_at_8 else "No ×2 at 8+"


@dataclass
class RelayConfig:
    """Everything the relay can be told; every limit has an option in ``koikoi relay``."""

    host: str = "127.0.0.1"
    port: int = 7878
    max_rooms: int = 1000
    max_connections: int = 10000
    max_connections_per_ip: int = 32
    max_frame_bytes: int = MAX_FRAME_BYTES
    frames_per_s: float = 50.0
    burst: int = 200
    idle_timeout: float = 60.0
    ping_interval: float = 20.0
    grace: float = 120.0
    seat_buffer_frames: int = 256
    seat_buffer_bytes: int = 1 << 20
    attempts_per_conn: int = 5
    attempts_per_room: int = 20
    attempts_window: float = 60.0
    handshake_timeout: float = 10.0
    shutdown_timeout: float = 3.0
    max_list: int = 500
    tombstone_s: float = 600.0
    restore: bool = True
    trust_proxy: bool = False
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = None
    scrypt_threads: int = 2
    certify_per_s: float = 1.0
    certify_burst: int = 2

    def check(self) -> None:
        """Raise ValueError naming the first option out of range."""
        for name in (
            "max_rooms",
            "max_connections",
            "max_connections_per_ip",
            "burst",
            "seat_buffer_frames",
            "seat_buffer_bytes",
            "attempts_per_conn",
            "attempts_per_room",
            "max_list",
            "scrypt_threads",
            "certify_burst",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.max_frame_bytes < 16:
            raise ValueError("max_frame_bytes must be at least 16")
        for name in (
            "frames_per_s",
            "idle_timeout",
            "ping_interval",
            "grace",
            "attempts_window",
            "handshake_timeout",
            "shutdown_timeout",
            "certify_per_s",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be more than 0")
        if self.ping_interval >= self.idle_timeout:
            raise ValueError("ping_interval must be shorter than idle_timeout")
        if not 0 <= self.port <= 65535 or (self.metrics_port is not None and not 0 <= self.metrics_port <= 65535):
            raise ValueError("ports must be in 0..65535")


_CLOSE = None  # the outbox sentinel: flush done, close now


class Conn:
    """One WebSocket connection."""

    def __init__(self, cid: int, ws: WebSocketConnection, ip: str, cfg: RelayConfig, now: float) -> None:
        self.id = cid
        self.ws = ws
        self.ip = ip
        self.scope = trio.CancelScope()
        # control messages + at most a seat buffer's worth of frames
        self.out_send, self.out_recv = trio.open_memory_channel[tuple[bytes, bool] | None](cfg.seat_buffer_frames + 32)
        self.closing: tuple[int, str] | None = None
        self.room: Room | None = None
        self.seat = 0
        self.last_seen = now
        self.bucket = TokenBucket.full(cfg.frames_per_s, cfg.burst, now)
        self.failures: deque[float] = deque()


@dataclass(eq=False)
class Seat:
    token_hash: bytes | None = None
    conn: Conn | None = None
    away_since: float | None = None
    grace_scope: trio.CancelScope | None = None
    in_count: int | None = 0
    """Highest frame number received in order from this seat (None: unknown, in a restored room)."""
    pending: deque[tuple[int, bytes]] = field(default_factory=deque)
    """Frames from the other seat waiting for this seat."""
    pending_bytes: int = 0
    # the witness: what a silence certificate says about this seat
    seated_at: float = 0.0
    """When this seat was taken (created, joined, or rebuilt after a restart)."""
    last_at: float | None = None
    """When the relay last received a new witnessed frame from this seat."""
    last_hash: bytes = b""
    """``frame_hash`` of that frame (empty: none yet)."""
    seen: dict[bytes, None] = field(default_factory=dict)
    """Hashes of this seat's recent frames (insertion-ordered, at most SEEN_HASHES): a repeat is not news."""
    certify_bucket: TokenBucket | None = None


@dataclass(eq=False)
class Room:
    rid: int
    code: str
    private: bool
    rounds: int | None
    double_at_8: bool | None
    password: codes.PasswordHash | None
    created: float
    move_time_s: int | None = DEFAULT_MOVE_TIME_S
    restored: bool = False
    seats: tuple[Seat, Seat] = field(default_factory=lambda: (Seat(), Seat()))
    closed: str | None = None
    failures: deque[float] = field(default_factory=deque)

    @property
    def waiting(self) -> bool:
        return self.seats[1].token_hash is None

    def log_id(self) -> dict[str, Any]:
        return {"room_id": self.rid} if self.private else {"room_id": self.rid, "room": self.code}


@dataclass(frozen=True, slots=True)
class Tombstone:
    """What the relay remembers of a closed room: why, when, and the closing certificate for the seat
    that was still there (``opponent_left``), given again to that seat's token holder on ``resume``."""

    reason: str
    at: float
    cert_for: bytes | None = None
    cert: bytes | None = None


class _Refused(Exception):
    def __init__(self, code: str, message: str, **extra: Any) -> None:
        self.code = code
        self.message = message
        self.extra = extra


class Relay:
    """The relay server. Start it with ``await nursery.start(relay.serve)``; stop it with :meth:`shutdown`."""

    def __init__(
        self, config: RelayConfig | None = None, *, log: EventLog | None = None, key: SigningKey | None = None
    ) -> None:
        self.cfg = config or RelayConfig()
        self.cfg.check()
        self.key = key if key is not None else SigningKey.generate()
        """The relay's Ed25519 key: it signs silence certificates (an in-memory one when none is given)."""
        self.public_key = bytes(self.key.verify_key)
        self.fingerprint = fingerprint(self.public_key)
        self._announcement = encode({"t": "relay", "key": self.public_key, "fingerprint": self.fingerprint})
        self.log = log or EventLog()
        self.metrics = Metrics()
        self.metrics.gauges = self._gauges
        self.rooms: dict[str, Room] = {}
        self.tombstones: dict[str, Tombstone] = {}
        self.conns: set[Conn] = set()
        self.per_ip: dict[str, int] = {}
        self.port = 0
        self.metrics_port: int | None = None
        self.url = ""
        self._next_conn = 0
        self._next_room = 0
        self._nursery: trio.Nursery | None = None
        self._stop = trio.Event()
        self._stopping = False
        self._all_closed = trio.Event()
        self._scrypt = trio.CapacityLimiter(self.cfg.scrypt_threads)
        self._max_msg = self.cfg.max_frame_bytes + ENVELOPE_OVERHEAD
        self._handlers: dict[str, Callable[[Conn, dict[Any, Any]], Awaitable[None]]] = {
            "create": self._on_create,
            "list": self._on_list,
            "info": self._on_info,
            "join": self._on_join,
            "resume": self._on_resume,
            "leave": self._on_leave,
            "certify": self._on_certify,
        }

    # ------------------------------------------------------------------ running

    async def serve(self, *, task_status: trio.TaskStatus[Relay] = trio.TASK_STATUS_IGNORED) -> None:
        """Listen until :meth:`shutdown`; then close every connection with a reason and return."""
        cfg = self.cfg
        async with trio.open_nursery() as conns:
            self._nursery = conns
            async with trio.open_nursery() as listen:
                listeners = await trio.open_tcp_listeners(cfg.port, host=cfg.host)
                await listen.start(partial(trio.serve_listeners, self._on_tcp, listeners, handler_nursery=conns))
                self.port = listeners[0].socket.getsockname()[1]
                host = cfg.host if ":" not in cfg.host else f"[{cfg.host}]"
                self.url = f"ws://{host}:{self.port}"
                if cfg.metrics_port is not None:
                    self.metrics_port = await listen.start(
                        serve_metrics, self.metrics, cfg.metrics_host, cfg.metrics_port
                    )
                self.log("relay_started", url=self.url, metrics_port=self.metrics_port, fingerprint=self.fingerprint)
                task_status.started(self)
                await self._stop.wait()
                listen.cancel_scope.cancel()
            # no new connections from here on: close the ones we have, with a reason
            for conn in list(self.conns):
                self._kick(conn, "shutdown")
            if self.conns:
                with trio.move_on_after(cfg.shutdown_timeout + 1):
                    await self._all_closed.wait()
            conns.cancel_scope.cancel()
        self.log("relay_stopped", connections_left=len(self.conns))

    def shutdown(self) -> None:
        """Stop listening, tell every connection why, close them all (``serve`` then returns)."""
        self._stopping = True
        self._stop.set()

    # -------------------------------------------------------------- connections

    def _client_ip(self, request: WebSocketRequest) -> str:
        if self.cfg.trust_proxy:
            for name, value in request.headers:
                if name.lower() == b"x-forwarded-for":
                    last = value.decode("latin-1").split(",")[-1].strip()
                    with contextlib.suppress(ValueError):
                        return str(ipaddress.ip_address(last))
            for name, value in request.headers:
                if name.lower() == b"x-real-ip":
                    with contextlib.suppress(ValueError):
                        return str(ipaddress.ip_address(value.decode("latin-1").strip()))
        remote = request.remote
        return str(getattr(remote, "address", remote))

    async def _on_tcp(self, stream: trio.SocketStream) -> None:
        """One TCP connection: the WebSocket handshake, then :meth:`_handle`. Never raises into the relay."""
        try:
            async with trio.open_nursery() as nursery:
                request = None
                with trio.move_on_after(self.cfg.handshake_timeout):
                    request = await wrap_server_stream(
                        nursery, stream, message_queue_size=1, max_message_size=self._max_msg
                    )
                if request is None:
                    nursery.cancel_scope.cancel()
                    await trio.aclose_forcefully(stream)
                    return
                try:
                    await self._handle(request)
                finally:
                    nursery.cancel_scope.cancel()
        except Exception as e:  # one broken connection never takes the relay down
            self.log("connection_error", error=f"{e.__class__.__name__}: {e}"[:200])
            await trio.aclose_forcefully(stream)

    async def _handle(self, request: WebSocketRequest) -> None:
        ip = self._client_ip(request)
        try:
            ws = await request.accept()
        except ConnectionClosed:
            return
        now = trio.current_time()
        self._next_conn += 1
        conn = Conn(self._next_conn, ws, ip, self.cfg, now)
        refusal = None
        if self._stopping:
            refusal = "shutdown"
        elif len(self.conns) >= self.cfg.max_connections:
            refusal = "relay_full"
            self._limit(conn, "connections", "relay_full")
        elif self.per_ip.get(ip, 0) >= self.cfg.max_connections_per_ip:
            refusal = "too_many_connections"
            self._limit(conn, "connections_per_ip", "too_many_connections")
        if refusal is not None:
            with trio.move_on_after(self.cfg.shutdown_timeout):
                with contextlib.suppress(ConnectionClosed):
                    await ws.send_message(_bye(refusal))
                await ws.aclose(CLOSE_CODES[refusal], refusal)
            return
        self.conns.add(conn)
        self._all_closed = trio.Event() if len(self.conns) == 1 else self._all_closed
        self.per_ip[ip] = self.per_ip.get(ip, 0) + 1
        self.metrics.connections_total += 1
        self.log("connected", conn=conn.id, ip=ip)
        self._push(conn, self._announcement)  # first of all: who this relay is (its witness key)
        try:
            with conn.scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._writer, conn)
                    nursery.start_soon(self._watchdog, conn)
                    await self._reader(conn)
                    nursery.cancel_scope.cancel()
        finally:
            self._detach(conn)
            code, reason = conn.closing or (1000, "bye")
            with trio.CancelScope(shield=True), trio.move_on_after(self.cfg.shutdown_timeout):
                await ws.aclose(code, reason)
            # only now is the connection gone (the close handshake needs its reader task alive)
            self.conns.discard(conn)
            left = self.per_ip.get(ip, 1) - 1
            if left:
                self.per_ip[ip] = left
            else:
                self.per_ip.pop(ip, None)
            self.log("disconnected", conn=conn.id, reason=reason if conn.closing else "client_closed")
            if not self.conns:
                self._all_closed.set()

    async def _writer(self, conn: Conn) -> None:
        m = self.metrics
        try:
            async for item in conn.out_recv:
                if item is _CLOSE:
                    break
                data, is_frame = item
                await conn.ws.send_message(data)
                m.bytes_out_total += len(data)
                if is_frame:
                    m.frames_out_total += 1
        except ConnectionClosed:
            pass
        conn.scope.cancel()

    async def _watchdog(self, conn: Conn) -> None:
        cfg = self.cfg
        while True:
            due = conn.last_seen + cfg.ping_interval
            if trio.current_time() < due:
                await trio.sleep_until(due)
                continue
            with trio.move_on_after(cfg.idle_timeout - cfg.ping_interval):
                try:
                    await conn.ws.ping()
                except ConnectionClosed:
                    return
                conn.last_seen = trio.current_time()
                continue
            if trio.current_time() - conn.last_seen >= cfg.idle_timeout:
                self._limit(conn, "idle", "idle_timeout")
                self._kick(conn, "idle_timeout")
                return

    def _push(self, conn: Conn, data: bytes, is_frame: bool = False) -> bool:
        """Queue a message for ``conn``; a full outbox means a slow consumer: close it."""
        if conn.closing is not None:
            return False
        try:
            conn.out_send.send_nowait((data, is_frame))
        except trio.WouldBlock:
            self._limit(conn, "slow_consumer", "slow_consumer")
            self._kick(conn, "slow_consumer", flush=False)
            return False
        return True

    def _send(self, conn: Conn, obj: dict[str, Any]) -> None:
        self._push(conn, encode(obj))

    def _error(self, conn: Conn, re: str, code: str, message: str, **extra: Any) -> None:
        self._send(conn, {"t": "error", "re": re, "code": code, "message": message, **extra})

    def _kick(self, conn: Conn, reason: str, *, flush: bool = True) -> None:
        """Close ``conn``: tell it why (``bye``), then a WebSocket close with code and reason."""
        if conn.closing is not None:
            return
        code = CLOSE_CODES[reason]
        conn.closing = (code, reason)
        sent = False
        if flush:
            try:
                conn.out_send.send_nowait((_bye(reason), False))
                conn.out_send.send_nowait(_CLOSE)
                sent = True
            except trio.WouldBlock:
                pass
        if sent:
            # give the writer a moment to flush, never longer
            conn.scope.deadline = min(conn.scope.deadline, trio.current_time() + self.cfg.shutdown_timeout)
        else:
            conn.scope.cancel()
        self._detach(conn)

    def _limit(self, conn: Conn, limit: str, reason: str, **extra: Any) -> None:
        self.metrics.limit_hit(limit)
        self.log("limit_hit", limit=limit, reason=reason, conn=conn.id, ip=conn.ip, **extra)

    async def _reader(self, conn: Conn) -> None:
        ws = conn.ws
        m = self.metrics
        max_msg = self._max_msg
        while conn.closing is None:
            try:
                msg = await ws.get_message()
            except ConnectionClosed as e:
                if e.reason is not None and e.reason.code == 1009:  # cut by the WebSocket layer itself
                    self._limit(conn, "frame_size", "oversized_frame")
                return
            now = trio.current_time()
            conn.last_seen = now
            m.bytes_in_total += len(msg)
            if not isinstance(msg, bytes):
                self._kick(conn, "binary_only")
                break
            if len(msg) > max_msg:
                self._limit(conn, "frame_size", "oversized_frame", size=len(msg))
                self._kick(conn, "oversized_frame")
                break
            if not conn.bucket.take(now):
                self._limit(conn, "rate", "rate_limited")
                self._kick(conn, "rate_limited")
                break
            n, size = _fast_frame(msg)
            if n:  # the common case, a canonical frame envelope: no need to decode it all
                self._on_frame(conn, n, size, msg)
                continue
            try:
                obj = decode(msg, max_size=max_msg)
            except FrameError as e:
                self._protocol_error(conn, f"not a canonical msgpack frame ({e.code})")
                break
            t = obj.get("t") if type(obj) is dict else None
            if type(t) is not str:
                self._protocol_error(conn, "a message must be a map with a string 't'")
                break
            if t == "frame":
                fn, d, ctl = obj.get("n"), obj.get("d"), obj.get("ctl", False)
                if (
                    len(obj) != (3 if "ctl" not in obj else 4)
                    or type(fn) is not int
                    or fn < 1
                    or type(d) is not bytes
                    or type(ctl) is not bool
                ):
                    self._protocol_error(conn, "a frame is {t: 'frame', n: int >= 1, d: bytes[, ctl: bool]}")
                    break
                self._accept_frame(conn, fn, len(d), msg, d, not ctl)
                continue
            m.control_in_total += 1
            handler = self._handlers.get(t)
            if handler is None:
                self._error(conn, t, "bad_request", f"unknown message type {t!r}")
                continue
            try:
                await handler(conn, obj)
            except _Refused as r:
                self._error(conn, t, r.code, r.message, **r.extra)
        # a limit closed this connection: the writer flushes the notice, then cancels us
        await trio.sleep_forever()

    def _protocol_error(self, conn: Conn, message: str) -> None:
        self.log("protocol_error", conn=conn.id, ip=conn.ip, detail=message)
        self._kick(conn, "protocol_error")

    def _fail(self, conn: Conn, re: str, code: str, message: str, **extra: Any) -> _Refused:
        """A failed attempt (unknown room, wrong password, bad token): counted, rate-limited per connection."""
        now = trio.current_time()
        self.metrics.join_failed(code)
        self.log("attempt_failed", conn=conn.id, ip=conn.ip, op=re, code=code)
        f = conn.failures
        f.append(now)
        while f and f[0] <= now - self.cfg.attempts_window:
            f.popleft()
        if len(f) >= self.cfg.attempts_per_conn:
            self._error(conn, re, code, message, **extra)
            self._limit(conn, "join_attempts", "too_many_attempts", scope="connection")
            self._kick(conn, "too_many_attempts")
        return _Refused(code, message, **extra)

    # -------------------------------------------------------------------- rooms

    def _gauges(self) -> dict[str, int]:
        waiting = sum(1 for r in self.rooms.values() if r.waiting)
        away = sum(1 for r in self.rooms.values() for s in r.seats if s.token_hash is not None and s.conn is None)
        return {
            "rooms_waiting": waiting,
            "rooms_playing": len(self.rooms) - waiting,
            "connections": len(self.conns),
            "seats_away": away,
        }

    def _new_room(
        self,
        private: bool,
        rounds: int | None,
        double_at_8: bool | None,
        password: codes.PasswordHash | None,
        code: str | None = None,
    ) -> Room:
        if code is None:
            while True:
                code = codes.new_code(private)
                if code not in self.rooms and code not in self.tombstones:
                    break
        self._next_room += 1
        room = Room(self._next_room, code, private, rounds, double_at_8, password, trio.current_time())
        self.rooms[code] = room
        self.metrics.rooms_created_total += 1
        return room

    def _settings(self, room: Room) -> dict[str, Any]:
        return {
            "rounds": room.rounds,
            "double_at_8": room.double_at_8,
            "doubling": doubling_label(room.double_at_8),
            "move_time_s": room.move_time_s,
        }

    def _check_room_count(self, conn: Conn, re: str) -> None:
        if len(self.rooms) >= self.cfg.max_rooms:
            self._limit(conn, "rooms", "too_many_rooms")
            raise _Refused("too_many_rooms", f"the relay holds its maximum of {self.cfg.max_rooms} rooms; try later")

    def _attach(self, room: Room, s: int, conn: Conn, received: int) -> None:
        """Seat ``conn`` at seat ``s``; deliver what waited for it beyond ``received``."""
        seat, other = room.seats[s], room.seats[1 - s]
        if seat.grace_scope is not None:
            seat.grace_scope.cancel()
            seat.grace_scope = None
        seat.conn = conn
        seat.away_since = None
        conn.room = room
        conn.seat = s
        p = seat.pending
        while p and p[0][0] <= received:
            seat.pending_bytes -= len(p.popleft()[1])
        if p and p[0][0] != received + 1:  # frames were lost with a dead connection: the sender resends
            p.clear()
            seat.pending_bytes = 0
        if not p:
            other.in_count = received

    def _flush_pending(self, room: Room, s: int) -> None:
        seat = room.seats[s]
        conn = seat.conn
        assert conn is not None
        while seat.pending:
            n, raw = seat.pending.popleft()
            seat.pending_bytes -= len(raw)
            if not self._push(conn, raw, True):
                seat.pending.appendleft((n, raw))
                seat.pending_bytes += len(raw)
                break

    def _detach(self, conn: Conn) -> None:
        room = conn.room
        if room is None:
            return
        conn.room = None
        seat = room.seats[conn.seat]
        if seat.conn is not conn or room.closed is not None:
            return
        seat.conn = None
        if self._stopping:
            return
        seat.away_since = trio.current_time()
        self.log("seat_away", **room.log_id(), seat=conn.seat, grace_s=self.cfg.grace)
        scope = trio.CancelScope()
        seat.grace_scope = scope
        assert self._nursery is not None
        self._nursery.start_soon(self._grace, room, conn.seat, scope)
        other = room.seats[1 - conn.seat].conn
        if other is not None:
            self._send(other, {"t": "peer", "event": "away", "grace_ms": int(self.cfg.grace * 1000)})

    async def _grace(self, room: Room, s: int, scope: trio.CancelScope) -> None:
        with scope:
            await trio.sleep(self.cfg.grace)
            if room.closed is None and room.seats[s].conn is None:
                self._close_room(room, "abandoned" if room.seats[1 - s].conn is None else "opponent_left")

    def _close_room(self, room: Room, reason: str) -> None:
        if room.closed is not None:
            return
        room.closed = reason
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]
        now = trio.current_time()
        certs: dict[int, bytes] = {}
        if reason == "opponent_left":  # the seat still there gets the witness's word on the other's silence
            for i, seat in enumerate(room.seats):
                if seat.conn is not None:
                    certs[i] = self._certificate(room, 1 - i, now)
        kept = next(iter(certs.items()), None)
        self.tombstones[room.code] = Tombstone(
            reason, now, room.seats[kept[0]].token_hash if kept else None, kept[1] if kept else None
        )
        if len(self.tombstones) > 4 * self.cfg.max_rooms + 1000:
            horizon = now - self.cfg.tombstone_s
            for code in [c for c, t in self.tombstones.items() if t.at < horizon]:
                del self.tombstones[code]
            while len(self.tombstones) > 4 * self.cfg.max_rooms + 1000:
                del self.tombstones[next(iter(self.tombstones))]
        self.metrics.room_closed(reason)
        self.log("room_closed", **room.log_id(), reason=reason)
        for i, seat in enumerate(room.seats):
            if seat.grace_scope is not None:
                seat.grace_scope.cancel()
                seat.grace_scope = None
            seat.pending.clear()
            conn = seat.conn
            seat.conn = None
            if conn is not None and conn.room is room:
                conn.room = None
                notice: dict[str, Any] = {
                    "t": "room_closed",
                    "room": room.code,
                    "reason": reason,
                    "message": ROOM_CLOSE_MESSAGES.get(reason, reason),
                }
                if i in certs:
                    notice["cert"] = certs[i]
                self._send(conn, notice)

    def _tombstone(self, code: str) -> Tombstone | None:
        t = self.tombstones.get(code)
        if t is None:
            return None
        if t.at < trio.current_time() - self.cfg.tombstone_s:
            del self.tombstones[code]
            return None
        return t

    def _certificate(self, room: Room, silent: int, now: float) -> bytes:
        """The witness's signed word: how long seat ``silent`` has sent nothing new, the last frames' hashes."""
        seat = room.seats[silent]
        since = seat.last_at if seat.last_at is not None else seat.seated_at
        conn = seat.conn
        return sign_certificate(
            self.key,
            room.code,
            silent,
            (room.seats[0].last_hash, room.seats[1].last_hash),
            int((now - since) * 1000),
            conn is not None and conn.closing is None,
        )

    # ------------------------------------------------------------------ frames

    def _on_frame(self, conn: Conn, n: int, size: int, raw: bytes) -> None:
        """A canonical frame envelope from ``conn``'s seat: number ``n``, a payload of ``size`` bytes
        (the envelope's last bytes), the envelope ``raw``."""
        self._accept_frame(conn, n, size, raw, None, True)

    def _accept_frame(self, conn: Conn, n: int, size: int, raw: bytes, d: bytes | None, witnessed: bool) -> None:
        """A frame from ``conn``'s seat: number ``n``, the payload ``d`` (None: the last ``size`` bytes
        of the envelope ``raw``).

        A ``witnessed`` frame (not a ``ctl`` one) that is new from this seat becomes the seat's
        last frame for silence certificates; a repeat of one of its recent frames changes nothing."""
        if size > self.cfg.max_frame_bytes:
            self._limit(conn, "frame_size", "oversized_frame", size=size)
            self._kick(conn, "oversized_frame")
            return
        room = conn.room
        if room is None:
            self._error(conn, "frame", "not_seated", "frames need a seat: create, join or resume a room first")
            return
        m = self.metrics
        m.frames_in_total += 1
        me = room.seats[conn.seat]
        if me.in_count is not None and n != me.in_count + 1:
            m.frames_dropped_total += 1  # a duplicate (n <= in_count) or ahead of a resend: the sender resends
            return
        me.in_count = n
        if witnessed:
            h = frame_hash(d if d is not None else raw[len(raw) - size :])
            seen = me.seen
            if h not in seen:
                seen[h] = None
                if len(seen) > SEEN_HASHES:
                    del seen[next(iter(seen))]
                me.last_hash = h
                me.last_at = trio.current_time()
        other = room.seats[1 - conn.seat]
        oc = other.conn
        if oc is not None and oc.closing is None and not other.pending and self._push(oc, raw, True):
            return
        other.pending.append((n, raw))
        other.pending_bytes += len(raw)
        if len(other.pending) > self.cfg.seat_buffer_frames or other.pending_bytes > self.cfg.seat_buffer_bytes:
            self._limit(conn, "seat_buffer", "buffer_overflow", **room.log_id())
            self._close_room(room, "buffer_overflow")

    # ---------------------------------------------------------- control messages

    async def _on_create(self, conn: Conn, obj: dict[Any, Any]) -> None:
        if conn.room is not None:
            raise _Refused("already_seated", "this connection already holds a seat; leave first")
        rounds = obj.get("rounds", 6)
        double = obj.get("double_at_8", True)
        private = obj.get("private", False)
        password = obj.get("password")
        move_time = obj.get("move_time_s", DEFAULT_MOVE_TIME_S)
        if rounds not in (6, 12) or type(rounds) is not int:
            raise _Refused("bad_request", "rounds must be 6 or 12")
        if type(move_time) is not int or not 0 <= move_time <= MAX_MOVE_TIME_S:
            raise _Refused("bad_request", f"move_time_s must be a whole number of seconds, 0 to {MAX_MOVE_TIME_S}")
        if type(double) is not bool or type(private) is not bool:
            raise _Refused("bad_request", "double_at_8 and private must be true or false")
        if password is not None and (
            type(password) is not str or not password or len(password.encode()) > codes.MAX_PASSWORD_BYTES
        ):
            raise _Refused("bad_request", f"a password is 1 to {codes.MAX_PASSWORD_BYTES} bytes of text")
        self._check_room_count(conn, "create")
        pw = None
        if password is not None:
            pw = await trio.to_thread.run_sync(codes.hash_password, password, limiter=self._scrypt)
            self._check_room_count(conn, "create")
        if conn.closing is not None or conn.room is not None:
            return
        room = self._new_room(private, rounds, double, pw)
        room.move_time_s = move_time
        token = codes.new_token()
        room.seats[0].token_hash = codes.token_hash(token)
        room.seats[0].seated_at = room.created
        self._attach(room, 0, conn, 0)
        self.log(
            "room_created",
            **room.log_id(),
            conn=conn.id,
            private=private,
            rounds=rounds,
            double_at_8=double,
            move_time_s=move_time,
            password=pw is not None,
        )
        self._send(
            conn,
            {
                "t": "created",
                "room": room.code,
                "display": codes.format_code(room.code),
                "seat": 0,
                "token": token,
                "private": private,
                "password": pw is not None,
                "settings": self._settings(room),
            },
        )

    async def _on_list(self, conn: Conn, obj: dict[Any, Any]) -> None:
        now = trio.current_time()
        public = [
            r
            for r in self.rooms.values()
            if not r.private and r.waiting and r.closed is None and r.seats[0].conn is not None
        ]
        public.sort(key=lambda r: r.created)
        self._send(
            conn,
            {
                "t": "rooms",
                "total": len(public),
                "rooms": [
                    {
                        "room": r.code,
                        "rounds": r.rounds,
                        "double_at_8": r.double_at_8,
                        "doubling": doubling_label(r.double_at_8),
                        "move_time_s": r.move_time_s,
                        "password": r.password is not None,
                        "waiting_s": int(now - r.created),
                    }
                    for r in public[: self.cfg.max_list]
                ],
            },
        )

    def _find(self, conn: Conn, re: str, text: Any) -> Room:
        code = codes.normalize_code(text) if isinstance(text, str) else None
        room = self.rooms.get(code) if code is not None else None
        if room is None or room.closed is not None:
            raise self._fail(conn, re, "room_not_found", f"no room {text!r} on this relay")
        return room

    async def _on_info(self, conn: Conn, obj: dict[Any, Any]) -> None:
        room = self._find(conn, "info", obj.get("room"))
        self._send(
            conn,
            {
                "t": "room",
                "room": room.code,
                "display": codes.format_code(room.code),
                **self._settings(room),
                "password": room.password is not None,
                "private": room.private,
                "state": "waiting" if room.waiting else "playing",
                "waiting_s": int(trio.current_time() - room.created),
            },
        )

    async def _on_join(self, conn: Conn, obj: dict[Any, Any]) -> None:
        if conn.room is not None:
            raise _Refused("already_seated", "this connection already holds a seat; leave first")
        room = self._find(conn, "join", obj.get("room"))
        if not room.waiting:
            self.metrics.join_failed("room_full")
            raise _Refused("room_full", "both seats of this room are taken")
        for key in ("rounds", "double_at_8", "move_time_s"):
            want = obj.get(key)
            if want is not None and want != getattr(room, key):
                self.metrics.join_failed("settings_mismatch")
                raise _Refused(
                    "settings_mismatch",
                    f"the room's {key} is {getattr(room, key)!r}, not {want!r}",
                    settings=self._settings(room),
                )
        if room.password is not None:
            password = obj.get("password")
            if type(password) is not str or not password:
                self.metrics.join_failed("wrong_password")
                raise _Refused("wrong_password", "this room needs a password")
            now = trio.current_time()
            f = room.failures
            while f and f[0] <= now - self.cfg.attempts_window:
                f.popleft()
            if len(f) >= self.cfg.attempts_per_room:
                self._limit(conn, "join_attempts", "too_many_attempts", scope="room", **room.log_id())
                raise _Refused("too_many_attempts", "too many wrong passwords for this room lately; try again later")
            if len(password.encode()) > codes.MAX_PASSWORD_BYTES:
                ok = False
            else:
                ok = await trio.to_thread.run_sync(codes.verify_password, password, room.password, limiter=self._scrypt)
            if not ok:
                room.failures.append(trio.current_time())
                raise self._fail(conn, "join", "wrong_password", "wrong password for this room")
            if conn.closing is not None:
                return
            if room.closed is not None:
                raise _Refused("room_not_found", "the room closed meanwhile")
            if not room.waiting:
                raise _Refused("room_full", "both seats of this room are taken")
        token = codes.new_token()
        room.seats[1].token_hash = th = codes.token_hash(token)
        room.seats[1].seated_at = trio.current_time()
        self._attach(room, 1, conn, 0)
        self.metrics.joins_total += 1
        self.log("room_joined", **room.log_id(), conn=conn.id)
        first = room.seats[0]
        assert first.token_hash is not None
        self._send(
            conn,
            {
                "t": "joined",
                "room": room.code,
                "display": codes.format_code(room.code),
                "seat": 1,
                "token": token,
                "settings": self._settings(room),
                "peer_check": first.token_hash,
                "peer": "present" if first.conn is not None else "away",
            },
        )
        self._flush_pending(room, 1)
        if first.conn is not None:
            self._send(
                first.conn, {"t": "peer", "event": "joined", "peer_check": th, "received": room.seats[0].in_count}
            )

    async def _on_resume(self, conn: Conn, obj: dict[Any, Any]) -> None:
        if conn.room is not None:
            raise _Refused("already_seated", "this connection already holds a seat; leave first")
        s = obj.get("seat")
        token = obj.get("token")
        received = obj.get("received", 0)
        text = obj.get("room")
        if (
            s not in (0, 1)
            or type(s) is not int
            or type(token) is not str
            or not 0 < len(token) <= 128
            or type(received) is not int
            or received < 0
        ):
            raise _Refused("bad_request", "resume needs room, seat (0 or 1), token and received (>= 0)")
        code = codes.normalize_code(text) if isinstance(text, str) else None
        room = self.rooms.get(code) if code is not None else None
        th = codes.token_hash(token)
        restored = False
        if room is None:
            gone = self._tombstone(code) if code is not None else None
            if gone is not None:
                self.metrics.join_failed("room_closed")
                extra: dict[str, Any] = {"reason": gone.reason}
                if gone.cert is not None and gone.cert_for is not None and codes.tokens_equal(gone.cert_for, th):
                    extra["cert"] = gone.cert  # the closing certificate, for the seat that was told (or missed it)
                raise _Refused("room_closed", ROOM_CLOSE_MESSAGES.get(gone.reason, gone.reason), **extra)
            peer_check = obj.get("peer_check")
            if not self.cfg.restore or code is None or type(peer_check) is not bytes or len(peer_check) != 32:
                raise self._fail(conn, "resume", "room_not_found", f"no room {text!r} on this relay")
            # the relay restarted: rebuild the room from what the seat holder knows (never listed)
            self._check_room_count(conn, "resume")
            settings = obj.get("settings")
            rounds = double = move_time = None
            if type(settings) is dict:
                r, d, mt = settings.get("rounds"), settings.get("double_at_8"), settings.get("move_time_s")
                rounds = r if r in (6, 12) and type(r) is int else None
                double = d if type(d) is bool else None
                move_time = mt if type(mt) is int and 0 <= mt <= MAX_MOVE_TIME_S else None
            room = self._new_room(True, rounds, double, None, code=code)
            room.move_time_s = move_time
            room.restored = restored = True
            room.seats[s].token_hash = th
            room.seats[1 - s].token_hash = peer_check
            for seat in room.seats:
                seat.in_count = None
                seat.seated_at = room.created
            self.log("room_restored", **room.log_id(), seat=s)
            # the other seat gets the usual grace period to come back
            other = room.seats[1 - s]
            other.away_since = trio.current_time()
            other.grace_scope = scope = trio.CancelScope()
            assert self._nursery is not None
            self._nursery.start_soon(self._grace, room, 1 - s, scope)
        seat = room.seats[s]
        if seat.token_hash is None or not codes.tokens_equal(seat.token_hash, th):
            self.log("seat_theft_refused", **room.log_id(), seat=s, conn=conn.id, ip=conn.ip)
            raise self._fail(conn, "resume", "bad_token", "that token does not hold this seat")
        old = seat.conn
        if old is not None:  # a half-open old connection: its holder is here now
            old.room = None
            seat.conn = None
            self._kick(old, "replaced")
        self._attach(room, s, conn, received)
        self.metrics.resumes_total += 1
        self.log("seat_resumed", **room.log_id(), seat=s, conn=conn.id, restored=restored)
        other = room.seats[1 - s]
        peer = "waiting" if other.token_hash is None else ("present" if other.conn is not None else "away")
        self._send(
            conn,
            {
                "t": "resumed",
                "room": room.code,
                "display": codes.format_code(room.code),
                "seat": s,
                "received": seat.in_count,
                "peer": peer,
                "restored": room.restored,
                "settings": self._settings(room),
            },
        )
        self._flush_pending(room, s)
        if other.conn is not None:
            self._send(other.conn, {"t": "peer", "event": "back", "received": other.in_count})

    async def _on_certify(self, conn: Conn, obj: dict[Any, Any]) -> None:
        room = conn.room
        if room is None:
            raise _Refused("not_seated", "certificates are for seated players: create, join or resume a room first")
        me, other = room.seats[conn.seat], room.seats[1 - conn.seat]
        if other.token_hash is None:
            raise _Refused("no_opponent", "nobody has taken the other seat yet")
        now = trio.current_time()
        if me.certify_bucket is None:
            me.certify_bucket = TokenBucket.full(self.cfg.certify_per_s, self.cfg.certify_burst, now)
        if not me.certify_bucket.take(now):
            self._limit(conn, "certify", "too_many_requests", **room.log_id())
            raise _Refused("too_many_requests", "too many certificate requests for this seat; ask again in a second")
        cert = self._certificate(room, 1 - conn.seat, now)
        self.log("certified", **room.log_id(), seat=conn.seat, silent_seat=1 - conn.seat)
        self._send(conn, {"t": "certificate", "cert": cert})

    async def _on_leave(self, conn: Conn, obj: dict[Any, Any]) -> None:
        room = conn.room
        if room is None:
            raise _Refused("not_seated", "this connection holds no seat")
        reason = "match_over" if obj.get("done") is True else "opponent_quit"
        self.log("seat_left", **room.log_id(), seat=conn.seat, done=reason == "match_over")
        conn.room = None
        room.seats[conn.seat].conn = None
        self._close_room(room, reason)
        self._send(conn, {"t": "left", "room": room.code})


_FRAME_HEAD = b"\x83\xa1t\xa5frame\xa1n"  # {"t": "frame", "n": ... in canonical msgpack
_UINT = {0xCC: (1, 0x80), 0xCD: (2, 0x100), 0xCE: (4, 0x10000), 0xCF: (8, 0x100000000)}
_BIN = {0xC4: (1, 0), 0xC5: (2, 0x100), 0xC6: (4, 0x10000)}


def _fast_frame(msg: bytes) -> tuple[int, int]:
    """``(n, len(d))`` if ``msg`` is exactly the canonical encoding of {"t": "frame", "n": n >= 1, "d": <bin>},
    else ``(0, 0)``.

    Anything else (another message, another key order, a non-canonical form) takes the full decoder."""
    if not msg.startswith(_FRAME_HEAD):
        return 0, 0
    i = len(_FRAME_HEAD)
    if i >= len(msg):
        return 0, 0
    b = msg[i]
    if b < 0x80:
        n = b
        i += 1
    elif b in _UINT:
        width, least = _UINT[b]
        n = int.from_bytes(msg[i + 1 : i + 1 + width], "big")
        if n < least:
            return 0, 0
        i += 1 + width
    else:
        return 0, 0
    if msg[i : i + 2] != b"\xa1d" or i + 2 >= len(msg) or msg[i + 2] not in _BIN:
        return 0, 0
    width, least = _BIN[msg[i + 2]]
    size = int.from_bytes(msg[i + 3 : i + 3 + width], "big")
    if size < least or i + 3 + width + size != len(msg):
        return 0, 0
    return n, size


def _bye(reason: str) -> bytes:
    return encode({"t": "bye", "reason": reason, "message": _CLOSE_MESSAGES.get(reason, reason)})


def tune_gc() -> None:
    """Process-wide GC settings for a dedicated relay process (``koikoi relay`` calls it).

    Thousands of connections mean hundreds of thousands of long-lived objects; with CPython's
    default thresholds the cyclic collector rescans them so often that it costs about 40% of the
    relay's CPU and tens of milliseconds of latency. Freezing what exists at start and collecting
    the young generation less often cuts both (measured by benchmarks/relay_load.py)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


@contextlib.asynccontextmanager
async def open_relay(
    config: RelayConfig | None = None, *, log: EventLog | None = None, key: SigningKey | None = None
) -> AsyncIterator[Relay]:
    """Run a relay for the duration of the block (``relay.url`` is where it listens; ``key`` signs its
    certificates, an in-memory one when not given)."""
    relay = Relay(config, log=log, key=key)
    async with trio.open_nursery() as nursery:
        await nursery.start(relay.serve)
        try:
            yield relay
        finally:
            relay.shutdown()
