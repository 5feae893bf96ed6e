"""The relay's room rules, sans-IO: rooms, seats, tokens, grace, frame numbering, buffers, limits, witness.

:class:`RelayCore` does no I/O and reads no clock. Every call takes the time
(``now``, seconds on a monotonic clock) and leaves what to do in
:attr:`RelayCore.out`, a list of effects the driver carries out in order
(h11's pattern): :class:`Send` a message to a connection, :class:`Replay` a room's
log to a watcher, :class:`Close` a connection with a reason, :class:`Log` an event,
hand a closed room to the archive (:class:`Archive`), and run password work
(:class:`HashPassword`, :class:`VerifyPassword`: scrypt is slow, so the driver
runs it in a thread and hands the result back with :meth:`RelayCore.work_done`).
Timers (grace periods, waiting rooms, joiners that never speak) are
deadlines: the driver calls :meth:`RelayCore.tick` at
:meth:`RelayCore.next_deadline`.

The driver (``relay/server.py``) owns sockets, the WebSocket handshake, the
per-connection outboxes (a full one is a slow consumer: it tells the core with
:meth:`RelayCore.slow_consumer`), pings and threads. Everything the relay
*decides* is in this package, so it is tested in process and instantly with a fake clock.

:class:`RelayCore` is a facade: it keeps the connections and hands each event to the part that owns it —
:class:`~koikoi.relay.admission.Admission` (per-address limits, password work),
:class:`~koikoi.relay.rooms.Rooms` (the rooms, seating), :class:`~koikoi.relay.lobby.Lobby` (create, list,
info, join), :class:`~koikoi.relay.seating.Seating` (resume, leave, timers),
:class:`~koikoi.relay.restore.Restorer` (rooms rebuilt after a restart),
:class:`~koikoi.relay.frames.Frames` (numbering and buffers),
:class:`~koikoi.relay.watchers.Watchers` (watchers, the rooms' logs, the archive) and
:class:`~koikoi.relay.certify.Certifier` (the witness's certificates). They act through one
:class:`~koikoi.relay.effects.Effects` and one :class:`~koikoi.relay.effects.Timers`.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Callable
from typing import Any

from nacl.signing import SigningKey

from ..protocol.framing import FrameError, decode, encode
from ..protocol.witness import NONCE_BYTES, fingerprint
from ..support import TokenBucket
from . import codes
from .admission import Addr, Admission, address_key
from .certify import Certifier
from .config import ENVELOPE_OVERHEAD, RelayConfig
from .effects import Archive, Close, Effect, Effects, HashPassword, Log, Replay, Send, Timers, VerifyPassword, seen
from .frames import Frames, fast_frame
from .lobby import Lobby
from .numbering import MAX_REWIND
from .observe import Metrics
from .restore import Restorer
from .room import Conn, Room, Tombstone
from .rooms import Rooms, doubling_label
from .seating import Seating
from .vocabulary import (
    CLOSE_CODES,
    CLOSE_MESSAGES,
    DEFAULT_MOVE_TIME_S,
    MAX_MOVE_TIME_S,
    ROOM_CLOSE_MESSAGES,
    CloseReason,
    PasswordOp,
    Refusal,
    Refused,
    say,
)
from .watchers import Watchers

__all__ = [
    "CLOSE_CODES",
    "DEFAULT_MOVE_TIME_S",
    "ENVELOPE_OVERHEAD",
    "MAX_MOVE_TIME_S",
    "MAX_REWIND",
    "ROOM_CLOSE_MESSAGES",
    "Archive",
    "Close",
    "Effect",
    "HashPassword",
    "Log",
    "RelayConfig",
    "RelayCore",
    "Replay",
    "Room",
    "Send",
    "VerifyPassword",
    "address_key",
    "bye",
    "client_address",
    "doubling_label",
    "fast_frame",
    "seen",
]


WATCHERS_REFUSED = frozenset({"create", "join", "resume", "certify", "watch"})
"""What a watcher may not ask (read-only: it may ``leave``, ``list`` and ``info``); its frames are refused too."""


def bye(reason: str) -> bytes:
    """The ``bye`` message that precedes a close with ``reason``."""
    return encode({"t": "bye", "reason": reason, "message": CLOSE_MESSAGES.get(reason, reason)})


def client_address(headers: list[tuple[bytes, bytes]], remote: str, trust_proxy: bool) -> str:
    """The address a connection's limits count: ``remote`` (the TCP peer), or behind a trusted proxy the
    last ``X-Forwarded-For`` entry (the one the proxy added), else ``X-Real-IP``; a header that is not an
    address is ignored."""
    if trust_proxy:
        for want, last in ((b"x-forwarded-for", True), (b"x-real-ip", False)):
            for name, value in headers:
                if name.lower() == want:
                    text = value.decode("latin-1")
                    try:
                        return str(ipaddress.ip_address((text.split(",")[-1] if last else text).strip()))
                    except ValueError:
                        pass
    return remote


class RelayCore:
    """The relay's rules. Feed it events with the time; carry out :attr:`out` after each call."""

    def __init__(self, config: RelayConfig | None = None, *, key: SigningKey | None = None) -> None:
        cfg = self.cfg = config or RelayConfig()
        cfg.check()
        self.key = key if key is not None else SigningKey.generate()
        self.public_key = bytes(self.key.verify_key)
        self.fingerprint = fingerprint(self.public_key)
        self.metrics = Metrics()
        self.metrics.gauges = self.gauges
        self._outbox = box = Effects(self.metrics)
        self.out: list[Effect] = box.out
        """The effects to carry out, in order (the driver clears it: never rebind it)."""
        self._timers = timers = Timers()
        self.admission = Admission(cfg, box)
        self.certifier = Certifier(cfg, self.key, box)
        self.rooms_table = Rooms(cfg, box, timers, self.admission, self.certifier)
        box.on_close = self._detach
        self.lobby = Lobby(cfg, box, timers, self.rooms_table, self.admission, self.public_key)
        restorer = Restorer(cfg, box, timers, self.rooms_table, self.admission)
        self.seating = Seating(
            cfg, box, timers, self.rooms_table, self.admission, self.certifier, restorer, self.public_key
        )
        self.watchers = Watchers(cfg, box, self.rooms_table, self.admission)
        self.rooms_table.on_closed = self.watchers.room_closed
        self.frames = Frames(cfg, box, self.watchers)
        self.conns: dict[int, Conn] = {}
        self._next_conn = 0
        self._max_msg = cfg.max_frame_bytes + ENVELOPE_OVERHEAD
        self._handlers: dict[str, Callable[[Conn, dict[Any, Any]], None]] = {
            "create": self.lobby.on_create,
            "list": self.lobby.on_list,
            "info": self.lobby.on_info,
            "join": self.lobby.on_join,
            "resume": self.seating.on_resume,
            "leave": self._on_leave,
            "certify": self.certifier.on_certify,
            "watch": self.watchers.on_watch,
        }

    # ------------------------------------------------------------------ the parts' state, read by drivers and tests

    @property
    def now(self) -> float:
        return self._outbox.now

    @property
    def rooms(self) -> dict[str, Room]:
        """The open rooms, by code."""
        return self.rooms_table.rooms

    @property
    def tombstones(self) -> dict[str, Tombstone]:
        return self.rooms_table.tombstones

    @property
    def addrs(self) -> dict[str, Addr]:
        return self.admission.addrs

    @property
    def stopping(self) -> bool:
        return self.rooms_table.stopping

    @property
    def started(self) -> float | None:
        """When the first connection came (this process's start, as far as rooms can tell)."""
        return self.rooms_table.started

    def gauges(self) -> dict[str, int]:
        waiting, away = self.rooms_table.counts()
        return {
            "rooms_waiting": waiting,
            "rooms_playing": len(self.rooms) - waiting,
            "connections": len(self.conns),
            "seats_away": away,
            "watchers": self.watchers.count,
        }

    def _detach(self, conn: Conn) -> None:
        """``conn`` is gone or closing: its seat goes away, or it stops watching."""
        self.rooms_table.detach(conn)
        self.watchers.detach(conn)

    def _on_leave(self, conn: Conn, obj: dict[Any, Any]) -> None:
        if conn.watching is not None:
            self.watchers.on_leave(conn, obj)
        else:
            self.seating.on_leave(conn, obj)

    # ------------------------------------------------------------------ the driver's calls

    def _at(self, now: float) -> None:
        self._outbox.now = now

    def tcp_opened(self, now: float, ip: str) -> bool:
        """A TCP connection from ``ip`` starts its WebSocket handshake. False: close it at once (too many
        from that address in the handshake, or in all). Call :meth:`handshake_done` when it ends."""
        self._at(now)
        return self.admission.tcp_opened(ip)

    def handshake_done(self, now: float, ip: str, ok: bool) -> None:
        """The handshake of a connection :meth:`tcp_opened` let in ended (``ok``: completed in time)."""
        self._at(now)
        self.admission.handshake_done(ip, ok)

    def connect(self, now: float, ip: str) -> tuple[int, str | None]:
        """A WebSocket handshake completed from ``ip``: ``(conn id, None)``, with the announcement queued,
        or ``(0, refusal)`` — the driver sends ``bye(refusal)`` and closes with ``CLOSE_CODES[refusal]``."""
        self._at(now)
        rooms = self.rooms_table
        if rooms.started is None:
            rooms.started = now
        addr = self.admission.addr(ip)
        refusal = CloseReason.SHUTDOWN if rooms.stopping else self.admission.refusal(ip, addr, len(self.conns))
        if refusal is not None:
            return 0, refusal
        self._next_conn += 1
        conn = Conn(self._next_conn, ip, addr, TokenBucket.full(self.cfg.frames_per_s, self.cfg.burst, now))
        self.conns[conn.id] = conn
        addr.conns += 1
        self.metrics.connections_total += 1
        self._outbox.log("connected", conn=conn.id, ip=ip)
        conn.nonce = secrets.token_bytes(NONCE_BYTES)
        # first of all: who this relay is (its witness key), and the nonce a seat proof signs on this connection
        self.out.append(Send(conn.id, self.announcement(conn)))
        return conn.id, None

    def announcement(self, conn: Conn) -> bytes:
        """The first message on ``conn``: the relay's key, its fingerprint, and the connection's nonce."""
        return encode({"t": "relay", "key": self.public_key, "fingerprint": self.fingerprint, "nonce": conn.nonce})

    def disconnected(self, now: float, cid: int) -> None:
        """Connection ``cid`` is gone (closed by either side, or lost)."""
        self._at(now)
        conn = self.conns.pop(cid, None)
        if conn is None:
            return
        self._detach(conn)
        conn.addr.conns -= 1
        self._outbox.log("disconnected", conn=cid, reason=conn.closing or "client_closed")

    def message(self, now: float, cid: int, msg: bytes | str) -> None:
        """A WebSocket message from connection ``cid``."""
        self._outbox.now = now
        conn = self.conns.get(cid)
        if conn is None or conn.closing is not None:
            return
        m = self.metrics
        m.bytes_in_total += len(msg)
        if not isinstance(msg, bytes):
            self._outbox.kick(conn, CloseReason.BINARY_ONLY)
            return
        if not self._admit(conn, len(msg), now):
            return
        n, size = fast_frame(msg)
        if n:  # the common case, a canonical frame envelope: no need to decode it all
            self.frames.on_frame(conn, n, size, msg, None, True)
            return
        try:
            obj = decode(msg, max_size=self._max_msg)
        except FrameError as e:
            self._protocol_error(conn, f"not a canonical msgpack frame ({e.code})")
            return
        t = obj.get("t") if type(obj) is dict else None
        if type(t) is not str:
            self._protocol_error(conn, "a message must be a map with a string 't'")
            return
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
                return
            self.frames.on_frame(conn, fn, len(d), msg, d, not ctl)
            return
        m.control_in_total += 1
        handler = self._handlers.get(t)
        if handler is None:
            self._outbox.error(conn, t, Refusal.BAD_REQUEST, say(Refusal.BAD_REQUEST, "type", t=t))
            return
        if conn.watching is not None and t in WATCHERS_REFUSED:
            self._outbox.error(conn, t, Refusal.WATCHING, say(Refusal.WATCHING, re=t))
            return
        try:
            handler(conn, obj)
        except Refused as r:
            self._outbox.refused(conn, t, r)

    def frame(self, now: float, cid: int, n: int, size: int, raw: bytes) -> None:
        """A message the driver already found to be a canonical frame envelope (``fast_frame(raw) == (n, size)``)."""
        self._outbox.now = now  # (the hot path: no call)
        conn = self.conns.get(cid)
        if conn is None or conn.closing is not None:
            return
        self.metrics.bytes_in_total += len(raw)
        if self._admit(conn, len(raw), now):
            self.frames.on_frame(conn, n, size, raw, None, True)

    def _admit(self, conn: Conn, size: int, now: float) -> bool:
        """The size and rate limits every message passes; a message over either closes its connection."""
        box = self._outbox
        if size > self._max_msg:
            box.limit(conn, "frame_size", "oversized_frame", size=size)
            box.kick(conn, CloseReason.OVERSIZED_FRAME)
            return False
        if not conn.bucket.take(now):
            box.limit(conn, "rate", "rate_limited")
            box.kick(conn, CloseReason.RATE_LIMITED)
            return False
        return True

    def _protocol_error(self, conn: Conn, message: str) -> None:
        self._outbox.log("protocol_error", conn=conn.id, ip=conn.ip, detail=message)
        self._outbox.kick(conn, CloseReason.PROTOCOL_ERROR)

    def work_done(self, now: float, cid: int, result: codes.PasswordHash | bool | None) -> None:
        """The password work a :class:`HashPassword` / :class:`VerifyPassword` asked for is done
        (``None``: abandoned, the connection is going away). Always call it once per such effect."""
        self._at(now)
        self.admission.password_work_done(cid)
        conn = self.conns.get(cid)
        if conn is None or conn.work is None:
            return
        work, conn.work = conn.work, None
        if conn.closing is not None or result is None:
            return
        try:
            if work.op is PasswordOp.CREATE:
                assert isinstance(result, codes.PasswordHash)
                self.lobby.create(conn, work.request, result)
            elif work.op is PasswordOp.JOIN:
                assert isinstance(result, bool)
                self.lobby.join_checked(conn, work.request, result)
            else:
                assert isinstance(result, bool)
                self.watchers.watch_checked(conn, work.request, result)
        except Refused as r:
            self._outbox.refused(conn, work.op, r)

    def busy(self, cid: int) -> bool:
        """True while connection ``cid`` waits for password work (read nothing more from it until then)."""
        conn = self.conns.get(cid)
        return conn is not None and conn.work is not None

    def slow_consumer(self, now: float, cid: int) -> None:
        """The driver could not queue a message for ``cid``: its outbox is full."""
        self._at(now)
        conn = self.conns.get(cid)
        if conn is None or conn.closing is not None:
            return
        self._outbox.limit(conn, "slow_consumer", "slow_consumer")
        self._outbox.kick(conn, CloseReason.SLOW_CONSUMER, flush=False)

    def kick(self, now: float, cid: int, reason: str, limit: str | None = None) -> None:
        """Close ``cid`` for ``reason`` (the driver's own findings: ``idle_timeout``, ``shutdown``, a message
        the WebSocket layer cut, ``oversized_frame``), counting ``limit`` if given."""
        self._at(now)
        conn = self.conns.get(cid)
        if conn is None:
            return
        if limit is not None:
            self._outbox.limit(conn, limit, reason)
        self._outbox.kick(conn, CloseReason(reason))

    def shutdown(self, now: float) -> None:
        """Stop: every connection is told ``shutdown``; seats no longer go away (no grace timers)."""
        self._at(now)
        self.rooms_table.stopping = True
        self.watchers.archive_open(self.rooms.values())
        for conn in list(self.conns.values()):
            self._outbox.kick(conn, CloseReason.SHUTDOWN)

    def next_deadline(self) -> float | None:
        """When :meth:`tick` next has something to do (None: nothing scheduled)."""
        return self._timers.next_deadline()

    def tick(self, now: float) -> None:
        """Run every timer due at ``now``."""
        self._at(now)
        for timer in self._timers.due(now):
            self.seating.on_timer(timer)
