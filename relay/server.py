"""The relay's trio driver: sockets, WebSocket handshakes, outboxes, pings, threads, timers.

Every rule (rooms, seats, tokens, grace, frame numbering, buffers, limits, the
witness) lives in :class:`koikoi.relay.core.RelayCore`, which does no I/O; this
module feeds it what happens, with the time, and carries out the effects it
returns (h11's pattern). Every connection runs three tasks in its own nursery:
a reader (hands each message to the core), a writer (drains the connection's
bounded outbox) and a watchdog (pings, idle timeout). Forwarding never awaits:
a frame goes into the peer's bounded outbox (a full one closes that peer as a
slow consumer), so a slow or hostile client can only ever hurt its own room.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator, Callable, Mapping
from functools import partial
from http import HTTPStatus
from typing import Any

import trio
from nacl.signing import SigningKey
from trio_websocket import ConnectionClosed, WebSocketConnection, WebSocketRequest, wrap_server_stream

from . import codes
from .core import (
    CLOSE_CODES,
    DEFAULT_MOVE_TIME_S,
    ENVELOPE_OVERHEAD,
    MAX_MOVE_TIME_S,
    ROOM_CLOSE_MESSAGES,
    Archive,
    Close,
    HashPassword,
    Log,
    RelayConfig,
    RelayCore,
    Replay,
    Room,
    Send,
    VerifyPassword,
    bye,
    client_address,
    doubling_label,
    fast_frame,
    seen,
)
from .observe import EventLog, Metrics, serve_metrics

__all__ = [
    "CLOSE_CODES",
    "DEFAULT_MOVE_TIME_S",
    "ENVELOPE_OVERHEAD",
    "MAX_MOVE_TIME_S",
    "ROOM_CLOSE_MESSAGES",
    "Archive",
    "ArchiveHook",
    "HttpRoutes",
    "Relay",
    "RelayConfig",
    "doubling_label",
    "open_relay",
    "tune_gc",
]

_CLOSE = None  # the outbox sentinel: flush done, close now

HttpRoutes = Callable[[str], tuple[int, str, bytes] | None]
"""The driver's hook for plain-HTTP paths other than ``/healthz`` and ``/``: given the request target (path and
query, as sent), ``(status, content type, body)`` or None (404). Run in a worker thread."""
ArchiveHook = Callable[[Archive], None]
"""What a relay that keeps an archive does with each room handed to it (run in a worker thread; what it raises is
logged, never fatal)."""
MAX_HTTP_BODY = 16 << 20
"""The largest body an ``http_routes`` answer may have (a larger one is answered 500)."""
HTTP_SEND_S = 60.0
"""How long a plain-HTTP answer may take to send."""
ARCHIVE_DRAIN_S = 30.0
"""How long a stopping relay waits for the archive hook's pending calls (then abandons them, logged)."""

MAX_REQUEST_HEAD = 16_384
"""The most bytes of an HTTP request head read before deciding what it asks for (more: the WebSocket layer's
own refusal)."""
ABOUT = (
    "koikoi relay: it carries Koi-Koi matches between two players over WebSocket (ws:// or wss://), not web "
    "pages.\nPlay through it: koikoi host --relay URL, then koikoi join CODE --relay URL.\n"
    "Health check: GET /healthz.\n"
)


class _Replayed(trio.abc.HalfCloseableStream):
    """A TCP stream whose first bytes were already read (the request head): they are received again first."""

    def __init__(self, stream: trio.SocketStream, head: bytes) -> None:
        self.stream = stream
        self._head = head

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._head:
            n = len(self._head) if max_bytes is None else max_bytes
            data, self._head = self._head[:n], self._head[n:]
            return data
        return await self.stream.receive_some(max_bytes)

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        await self.stream.send_eof()

    async def aclose(self) -> None:
        await self.stream.aclose()


async def _request_head(stream: trio.SocketStream) -> bytes:
    """The bytes up to the end of the HTTP request head (or all there were, at EOF or MAX_REQUEST_HEAD)."""
    head = b""
    while b"\r\n\r\n" not in head and len(head) < MAX_REQUEST_HEAD and not head.startswith(TLS_RECORD):
        chunk = await stream.receive_some(MAX_REQUEST_HEAD)
        if not chunk:
            break
        head += chunk
    return head


TLS_RECORD = b"\x16\x03"
"""How a TLS handshake begins (a ClientHello record): a ``wss://`` client talking to this relay without TLS."""
NOT_TLS = (
    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"this koikoi relay does not speak TLS: connect with ws://, or put TLS in front of it\n"
)
"""The answer to a TLS handshake: plain text, which a TLS client fails on at once (\"wrong version number\")
instead of waiting out its timeout."""


def plain_http(head: bytes) -> tuple[str, str] | None:
    """``(method, path)`` of a complete HTTP request that asks for no WebSocket; None: anything else (the
    WebSocket layer takes it, and refuses what is not a WebSocket handshake)."""
    end = head.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = head[:end].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "upgrade" and "websocket" in value.lower():
            return None
    return parts[0], parts[1]


def routed(method: str, path: str) -> bool:
    """Whether a plain HTTP request goes to the driver's ``http_routes`` hook (a GET or HEAD of a path other
    than ``/healthz`` and ``/``)."""
    return method in ("GET", "HEAD") and path.split("?", 1)[0] not in ("/healthz", "/")


def http_answer(method: str, path: str, answer: tuple[int, str, bytes] | None = None) -> bytes:
    """The answer to a plain HTTP request (a browser, a load balancer's health check): ``/healthz`` 200 with
    ``{"status":"ok"}``, ``/`` what this is, another path ``answer`` (the ``http_routes`` hook's) if given, else
    404 (405 for a method but GET or HEAD)."""
    target = path.split("?", 1)[0]
    ctype = "text/plain; charset=utf-8"
    data: bytes | None = None
    if method not in ("GET", "HEAD"):
        status, body = "405 Method Not Allowed", "only GET and HEAD here: this is a koikoi relay (see GET /)\n"
    elif target == "/healthz":
        status, body, ctype = "200 OK", '{"status":"ok"}\n', "application/json"
    elif target == "/":
        status, body = "200 OK", ABOUT
    elif answer is not None:
        code, ctype, data = answer
        status, body = f"{code} {_phrase(code)}".rstrip(), ""
    else:
        status, body = "404 Not Found", "not found: this is a koikoi relay; GET / says what it is, GET /healthz\n"
    if data is None:
        data = body.encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(data)}\r\n"
        "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
    ).encode()
    return head if method == "HEAD" else head + data


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _checked_answer(answer: object) -> tuple[int, str, bytes] | None:
    """An ``http_routes`` answer as the hook gave it, checked; raises ValueError naming what is wrong."""
    if answer is None:
        return None
    if not isinstance(answer, tuple) or len(answer) != 3:
        raise ValueError("http_routes must return (status, content type, body) or None")
    status, ctype, body = answer
    if type(status) is not int or not 200 <= status <= 599:
        raise ValueError(f"http_routes gave status {status!r}, not 200..599")
    if type(ctype) is not str or not ctype or any(c in ctype for c in "\r\n"):
        raise ValueError("http_routes gave a content type that is not one line of text")
    if not isinstance(body, bytes):
        raise ValueError("http_routes gave a body that is not bytes")
    if len(body) > MAX_HTTP_BODY:
        raise ValueError(f"http_routes gave a body of {len(body)} bytes, over {MAX_HTTP_BODY}")
    return status, ctype, body


INTERNAL_ERROR = (500, "text/plain; charset=utf-8", b"internal error: the relay's operator can read its log\n")


class WebSocketConn:
    """One WebSocket connection, as the driver sees it (the core knows it by ``id``)."""

    def __init__(self, cid: int, ws: WebSocketConnection, ip: str, cfg: RelayConfig, now: float) -> None:
        self.id = cid
        self.ws = ws
        self.ip = ip
        self.scope = trio.CancelScope()
        # control messages + at most a seat buffer's worth of frames
        # (a watcher's catch-up is one item: a Replay)
        self.out_send, self.out_recv = trio.open_memory_channel[tuple[bytes, bool] | Replay | None](
            cfg.seat_buffer_frames + 32
        )
        self.closing: tuple[int, str] | None = None
        self.last_seen = now
        self.work: HashPassword | VerifyPassword | None = None
        """Password work the core asked for; the reader does it before reading on."""


class Relay:
    """The relay server. Start it with ``await nursery.start(relay.serve)``; stop it with :meth:`shutdown`."""

    def __init__(
        self,
        config: RelayConfig | None = None,
        *,
        log: EventLog | None = None,
        key: SigningKey | None = None,
        on_archive: ArchiveHook | None = None,
        http_routes: HttpRoutes | None = None,
    ) -> None:
        """``on_archive``: what to do with each room handed to the archive (given exactly when
        ``config.archive``); ``http_routes``: answers plain-HTTP GET/HEAD paths other than ``/healthz`` and
        ``/`` (:data:`HttpRoutes`). Both run in worker threads."""
        self.core = RelayCore(config, key=key)
        self.cfg = self.core.cfg
        if (on_archive is not None) != self.cfg.archive:
            raise ValueError("a relay that keeps an archive (RelayConfig.archive) needs on_archive, and only it")
        self.on_archive = on_archive
        self.http_routes = http_routes
        self.key = self.core.key
        """The relay's Ed25519 key: it signs silence certificates (an in-memory one when none is given)."""
        self.public_key = self.core.public_key
        self.fingerprint = self.core.fingerprint
        self.log = log or EventLog()
        self.metrics: Metrics = self.core.metrics
        self.conns: dict[int, WebSocketConn] = {}
        self.port = 0
        self.metrics_port: int | None = None
        self.url = ""
        self._stop = trio.Event()
        self._stopping = False
        self._all_closed = trio.Event()
        self._timers_changed = trio.Event()
        self._timer_at = float("inf")
        self._scrypt = trio.CapacityLimiter(self.cfg.scrypt_threads)
        self._archiving = trio.CapacityLimiter(1)  # (one at a time, in the order the rooms closed)
        self._http_threads = trio.CapacityLimiter(4)
        self._jobs: trio.Nursery | None = None
        self._max_msg = self.cfg.max_frame_bytes + ENVELOPE_OVERHEAD

    @property
    def rooms(self) -> Mapping[str, Room]:
        """The open rooms, by code (read only: the core's)."""
        return self.core.rooms

    def joiner_connected(self, room: str) -> bool:
        """Whether ``room`` is open with its joiner's seat connected (the host's own relay waits for it to go)."""
        r = self.core.rooms.get(room)
        return r is not None and r.closed is None and r.seats[1].conn is not None

    # ------------------------------------------------------------------ running

    async def serve(self, *, task_status: trio.TaskStatus[Relay] = trio.TASK_STATUS_IGNORED) -> None:
        """Listen until :meth:`shutdown`; then close every connection with a reason and return."""
        cfg = self.cfg
        async with trio.open_nursery() as jobs:  # (the archive hook's calls: they outlive the connections)
            self._jobs = jobs
            await self._serve(cfg, task_status)
            jobs.cancel_scope.deadline = trio.current_time() + ARCHIVE_DRAIN_S
        if jobs.cancel_scope.cancelled_caught:
            self.log("archive_abandoned", after_s=ARCHIVE_DRAIN_S)
        self._jobs = None
        self.log("relay_stopped", connections_left=len(self.conns))

    async def _serve(self, cfg: RelayConfig, task_status: trio.TaskStatus[Relay]) -> None:
        async with trio.open_nursery() as conns:
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
                listen.start_soon(self._timer)
                self.log("relay_started", url=self.url, metrics_port=self.metrics_port, fingerprint=self.fingerprint)
                task_status.started(self)
                await self._stop.wait()
                listen.cancel_scope.cancel()
            # no new connections from here on: close the ones we have, with a reason
            self.core.shutdown(trio.current_time())
            self._apply()
            if self.conns:
                with trio.move_on_after(cfg.shutdown_timeout + 1):
                    await self._all_closed.wait()
            conns.cancel_scope.cancel()

    def shutdown(self) -> None:
        """Stop listening, tell every connection why, close them all (``serve`` then returns)."""
        self._stopping = True
        self._stop.set()

    async def _timer(self) -> None:
        """Run the core's timers (grace periods ...) when they are due."""
        while True:
            deadline = self.core.next_deadline()
            self._timer_at = deadline if deadline is not None else float("inf")
            self._timers_changed = trio.Event()
            with trio.move_on_at(self._timer_at):
                await self._timers_changed.wait()
                continue
            self.core.tick(trio.current_time())
            self._apply()

    # ------------------------------------------------------------------ effects

    def _apply(self) -> None:
        """Carry out what the core asked for, in order (it may add more while we go)."""
        core = self.core
        out = core.out
        i = 0
        while i < len(out):
            e = out[i]
            i += 1
            if isinstance(e, Send):
                conn = self.conns.get(e.conn)
                if conn is None or conn.closing is not None:
                    continue
                try:
                    conn.out_send.send_nowait((e.data, e.frame))
                except trio.WouldBlock:
                    core.slow_consumer(trio.current_time(), e.conn)
            elif isinstance(e, Log):
                self.log(e.event, **e.fields)
            elif isinstance(e, Close):
                conn = self.conns.get(e.conn)
                if conn is not None:
                    self._close(conn, e.reason, e.flush)
            elif isinstance(e, Replay):
                conn = self.conns.get(e.conn)
                if conn is None or conn.closing is not None:
                    continue
                try:
                    conn.out_send.send_nowait(e)
                except trio.WouldBlock:
                    core.slow_consumer(trio.current_time(), e.conn)
            elif isinstance(e, Archive):
                if self.on_archive is not None and self._jobs is not None:
                    self._jobs.start_soon(self._archive, self.on_archive, e)
            elif isinstance(e, (HashPassword, VerifyPassword)):
                conn = self.conns.get(e.conn)
                if conn is not None:
                    conn.work = e
        out.clear()
        due = core.next_deadline()
        if due is not None and due < self._timer_at:
            self._timers_changed.set()  # the timer task sleeps too long: wake it

    async def _archive(self, hook: ArchiveHook, archive: Archive) -> None:
        """Hand ``archive`` to the hook in a worker thread; what it raises is logged, never fatal."""
        try:
            await trio.to_thread.run_sync(hook, archive, limiter=self._archiving, abandon_on_cancel=True)
        except Exception as e:
            self.metrics.archive_failures_total += 1
            where = {} if archive.private else {"room": archive.room}
            self.log("archive_failed", **where, frames=len(archive.frames), error=_one_line(e))

    async def _http(self, method: str, path: str) -> bytes:
        """The answer to a plain HTTP request: the ``http_routes`` hook's (in a worker thread) for a path it
        takes; its failure (it raised, or gave no proper answer) is logged and answered 500."""
        hook = self.http_routes
        if hook is None or not routed(method, path):
            return http_answer(method, path)
        try:
            answer = _checked_answer(
                await trio.to_thread.run_sync(hook, path, limiter=self._http_threads, abandon_on_cancel=True)
            )
        except Exception as e:
            self.log("http_route_failed", path=path.split("?", 1)[0][:200], error=_one_line(e))
            answer = INTERNAL_ERROR
        return http_answer(method, path, answer)

    def _close(self, conn: WebSocketConn, reason: str, flush: bool) -> None:
        """Close ``conn``: tell it why (``bye``), then a WebSocket close with code and reason."""
        if conn.closing is not None:
            return
        conn.closing = (CLOSE_CODES[reason], reason)
        sent = False
        if flush:
            try:
                conn.out_send.send_nowait((bye(reason), False))
                conn.out_send.send_nowait(_CLOSE)
                sent = True
            except trio.WouldBlock:
                pass
        if sent:
            # give the writer a moment to flush, never longer
            conn.scope.deadline = min(conn.scope.deadline, trio.current_time() + self.cfg.shutdown_timeout)
        else:
            conn.scope.cancel()

    # -------------------------------------------------------------- connections

    def _client_ip(self, request: WebSocketRequest, remote: str) -> str:
        return client_address(list(request.headers), remote, self.cfg.trust_proxy)

    async def _on_tcp(self, stream: trio.SocketStream) -> None:
        """One TCP connection: the WebSocket handshake, then :meth:`_handle`. Never raises into the relay.

        Connections still in the handshake are counted per address (the TCP peer's; not behind a
        trusted proxy, whose address every connection shares): too many are closed at once. A plain HTTP
        request (a health check, a browser) is answered at once (:func:`http_answer`) and closed: it frees
        its place in the handshake count then, is no failed handshake, and logs nothing."""
        try:
            remote = str(stream.socket.getpeername()[0])
        except (OSError, IndexError):
            remote = "?"
        peer = None if self.cfg.trust_proxy or remote == "?" else remote
        if peer is not None and not self.core.tcp_opened(trio.current_time(), peer):
            self._apply()
            await trio.aclose_forcefully(stream)
            return
        try:
            async with trio.open_nursery() as nursery:
                request = None
                answered = False
                try:
                    answer: bytes | None = None
                    with trio.move_on_after(self.cfg.handshake_timeout):
                        head = await _request_head(stream)
                        asked = plain_http(head)
                        if asked is not None:
                            answer = await self._http(*asked)
                        elif head.startswith(TLS_RECORD):
                            answer = NOT_TLS
                        else:
                            request = await wrap_server_stream(
                                nursery, _Replayed(stream, head), message_queue_size=1, max_message_size=self._max_msg
                            )
                    if answer is not None:  # (its own time to send: a body may be large)
                        answered = True
                        with (
                            trio.move_on_after(HTTP_SEND_S),
                            contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError),
                        ):
                            await stream.send_all(answer)
                finally:
                    if peer is not None:
                        self.core.handshake_done(trio.current_time(), peer, request is not None or answered)
                        self._apply()
                if request is None:
                    nursery.cancel_scope.cancel()
                    await trio.aclose_forcefully(stream)
                    return
                try:
                    await self._handle(request, remote)
                finally:
                    nursery.cancel_scope.cancel()
        except Exception as e:  # one broken connection never takes the relay down
            self.log("connection_error", error=f"{e.__class__.__name__}: {e}"[:200])
            await trio.aclose_forcefully(stream)

    async def _handle(self, request: WebSocketRequest, remote: str) -> None:
        ip = self._client_ip(request, remote)
        try:
            ws = await request.accept()
        except ConnectionClosed:
            return
        now = trio.current_time()
        cid, refusal = self.core.connect(now, ip)
        if refusal is not None:
            self._apply()
            with trio.move_on_after(self.cfg.shutdown_timeout):
                with contextlib.suppress(ConnectionClosed):
                    await ws.send_message(bye(refusal))
                await ws.aclose(CLOSE_CODES[refusal], refusal)
            return
        conn = WebSocketConn(cid, ws, ip, self.cfg, now)
        self.conns[cid] = conn
        self._all_closed = trio.Event() if len(self.conns) == 1 else self._all_closed
        self._apply()
        try:
            with conn.scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._writer, conn)
                    nursery.start_soon(self._watchdog, conn)
                    await self._reader(conn)
                    nursery.cancel_scope.cancel()
        finally:
            code, reason = conn.closing or (1000, "bye")
            with trio.CancelScope(shield=True), trio.move_on_after(self.cfg.shutdown_timeout):
                await ws.aclose(code, reason)
            # only now is the connection gone (the close handshake needs its reader task alive)
            self.conns.pop(cid, None)
            self.core.disconnected(trio.current_time(), cid)
            self._apply()
            if not self.conns:
                self._all_closed.set()

    async def _writer(self, conn: WebSocketConn) -> None:
        m = self.metrics
        try:
            async for item in conn.out_recv:
                if item is _CLOSE:
                    break
                if isinstance(item, Replay):  # a watcher's catch-up: the room's log, encoded as it goes
                    for k, (seat, d) in enumerate(item.frames):
                        data = seen(item.first + k, seat, d)
                        await conn.ws.send_message(data)
                        m.bytes_out_total += len(data)
                    continue
                data, is_frame = item
                await conn.ws.send_message(data)
                m.bytes_out_total += len(data)
                if is_frame:
                    m.frames_out_total += 1
        except ConnectionClosed:
            pass
        conn.scope.cancel()

    async def _watchdog(self, conn: WebSocketConn) -> None:
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
                self.core.kick(trio.current_time(), conn.id, "idle_timeout", limit="idle")
                self._apply()
                return

    async def _reader(self, conn: WebSocketConn) -> None:
        ws = conn.ws
        core = self.core
        while conn.closing is None:
            try:
                msg = await ws.get_message()
            except ConnectionClosed as e:
                if e.reason is not None and e.reason.code == 1009:  # cut by the WebSocket layer itself
                    core.kick(trio.current_time(), conn.id, "oversized_frame", limit="frame_size")
                    self._apply()
                return
            now = trio.current_time()
            conn.last_seen = now
            n, size = fast_frame(msg) if isinstance(msg, bytes) else (0, 0)
            if n:  # the common case, a canonical frame envelope
                assert isinstance(msg, bytes)
                self._on_frame(conn, n, size, msg)
                continue
            core.message(now, conn.id, msg)
            self._apply()
            work = conn.work
            if work is not None:  # scrypt in a thread; this connection reads nothing more meanwhile
                conn.work = None
                result: Any = None
                try:
                    if isinstance(work, HashPassword):
                        result = await trio.to_thread.run_sync(codes.hash_password, work.password, limiter=self._scrypt)
                    else:
                        result = await trio.to_thread.run_sync(
                            codes.verify_password, work.password, work.stored, limiter=self._scrypt
                        )
                finally:  # also when cancelled: the core counts password work per address
                    core.work_done(trio.current_time(), conn.id, result)
                    self._apply()
        # a limit closed this connection: the writer flushes the notice, then cancels us
        await trio.sleep_forever()

    def _on_frame(self, conn: WebSocketConn, n: int, size: int, raw: bytes) -> None:
        """A canonical frame envelope from ``conn``: number ``n``, a payload of ``size`` bytes, ``raw``."""
        self.core.frame(trio.current_time(), conn.id, n, size, raw)
        self._apply()


def tune_gc() -> None:
    """Process-wide GC settings for a dedicated relay process (``koikoi relay`` calls it).

    Thousands of connections mean hundreds of thousands of long-lived objects; with CPython's
    default thresholds the cyclic collector rescans them so often that it costs about 40% of the
    relay's CPU and tens of milliseconds of latency. Freezing what exists at start and collecting
    the young generation less often cuts both (measured by benchmarks/relay_load.py)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def _one_line(e: BaseException) -> str:
    return f"{e.__class__.__name__}: {e}".splitlines()[0][:200]


@contextlib.asynccontextmanager
async def open_relay(
    config: RelayConfig | None = None,
    *,
    log: EventLog | None = None,
    key: SigningKey | None = None,
    on_archive: ArchiveHook | None = None,
    http_routes: HttpRoutes | None = None,
) -> AsyncIterator[Relay]:
    """Run a relay for the duration of the block (``relay.url`` is where it listens; ``key`` signs its
    certificates, an in-memory one when not given; ``on_archive``, ``http_routes``: as :class:`Relay`)."""
    relay = Relay(config, log=log, key=key, on_archive=on_archive, http_routes=http_routes)
    async with trio.open_nursery() as nursery:
        await nursery.start(relay.serve)
        try:
            yield relay
        finally:
            relay.shutdown()
