"""The relay's room rules, sans-IO: rooms, seats, tokens, grace, frame numbering, buffers, limits, witness.

:class:`RelayCore` does no I/O and reads no clock. Every call takes the time
(``now``, seconds on a monotonic clock) and leaves what to do in
:attr:`RelayCore.out`, a list of effects the driver carries out in order
(h11's pattern): :class:`Send` a message to a connection, :class:`Close` a
connection with a reason, :class:`Log` an event, and run password work
(:class:`HashPassword`, :class:`VerifyPassword`: scrypt is slow, so the driver
runs it in a thread and hands the result back with :meth:`RelayCore.work_done`).
Timers (grace periods, waiting rooms, joiners that never speak) are
deadlines: the driver calls :meth:`RelayCore.tick` at
:meth:`RelayCore.next_deadline`.

The driver (``relay/server.py``) owns sockets, the WebSocket handshake, the
per-connection outboxes (a full one is a slow consumer: it tells the core with
:meth:`RelayCore.slow_consumer`), pings and threads. Everything the relay
*decides* is here, so it is tested in process and instantly with a fake clock.
"""

from __future__ import annotations

import heapq
import ipaddress
import secrets
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from nacl.signing import SigningKey

from ..protocol.framing import MAX_FRAME_BYTES, FrameError, decode, encode
from ..protocol.witness import (
    NONCE_BYTES,
    RECENT_HASHES,
    SeatClock,
    fingerprint,
    frame_hash,
    seat_proof_ok,
    sign_certificate,
    silent_ms,
    witness_frame,
)
from . import codes
from .observe import Metrics
from .support import TokenBucket

__all__ = [
    "CLOSE_CODES",
    "DEFAULT_MOVE_TIME_S",
    "ENVELOPE_OVERHEAD",
    "MAX_MOVE_TIME_S",
    "ROOM_CLOSE_MESSAGES",
    "Close",
    "Effect",
    "HashPassword",
    "Log",
    "RelayConfig",
    "RelayCore",
    "Send",
    "VerifyPassword",
    "address_key",
    "bye",
    "client_address",
    "doubling_label",
]

ENVELOPE_OVERHEAD = 64
"""Bytes a WebSocket message may carry beyond the player frame (the ``frame`` envelope)."""

DEFAULT_MOVE_TIME_S = 120
"""A room's move time when its creator does not say (0 means no clock)."""
MAX_MOVE_TIME_S = 86_400
MAX_REWIND = 64
"""How many frames back a seat's ``resume`` may set the other seat's count (frames lost in flight with a
dead connection, which the other seat then sends again): well inside the per-connection burst."""
DECKS = ("sealed", "shared")
"""A room's deck modes (spec/sealed.md); a creator that names none: ``shared``."""

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

CLOSE_MESSAGES = {
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
    "buffer_overflow": "too many frames waited for the absent opponent",  # (no longer sent: the frames are refused)
    "abandoned": "nobody came back to the room within the grace period",
    "shutdown": "the relay is shutting down",
    "removed": "you sent nothing within the handshake time: the seat was given back to the lobby",
}


def _unlist(seat: Seat, h: bytes, n: int) -> None:
    """Frame ``n`` of ``seat`` (hash ``h``) will never be delivered: unless a later copy of it was (``sent_at``
    names the frame that first brought it), its hash leaves the seat's ``recent``, so no certificate vouches that
    the other seat got it."""
    if seat.sent_at.get(h) == n:
        seat.clock.recent.pop(h, None)
        del seat.sent_at[h]


def _rooms(n: int) -> str:
    """``1 room``, ``4 rooms``."""
    return f"{n} room" if n == 1 else f"{n} rooms"


def doubling_label(double_at_8: bool | None) -> str | None:
    if double_at_8 is None:
        return None
    return "×2 at 8+" if double_at_8 else "No ×2 at 8+"


def bye(reason: str) -> bytes:
    """The ``bye`` message that precedes a close with ``reason``."""
    return encode({"t": "bye", "reason": reason, "message": CLOSE_MESSAGES.get(reason, reason)})


def address_key(ip: str) -> str:
    """The unit every per-address limit counts: the IPv4 address, or the IPv6 /64 (one home or host)."""
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(addr) >> 64 << 64, 64)))
    return str(addr)


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
    attempts_per_room: int = 5
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
    # per address (an IPv4 address, or an IPv6 /64): a stranger's limit never stops another address
    max_handshakes_per_ip: int = 8
    """TCP connections from one address still in the WebSocket handshake; more are closed at once."""
    new_connections_per_ip_per_s: float = 2.0
    """New connections from one address per second, sustained (a burst of ``new_connections_burst``)."""
    new_connections_burst: int = 30
    attempts_per_ip: int = 10
    """Failed joins / code guesses / bad tokens from one address per ``attempts_window``, across reconnects."""
    max_waiting_rooms_per_ip: int = 4
    """Rooms created from one address that wait for a joiner."""
    max_rooms_per_ip: int = 32
    """Open rooms created (or rebuilt with ``resume``) from one address, in any state: a room joined by the
    creator itself, or rebuilt from a made-up ticket, outlives its connections for the full grace."""
    waiting_grace: float = 10.0
    """A waiting room whose creator left before anyone joined closes after this, not the full grace."""
    first_frame_timeout: float = 30.0
    """A joiner that sends no frame within this is removed and the room goes back to the lobby."""
    scrypt_per_ip: int = 1
    """Password checks (scrypt) running at once for one address."""
    scrypt_per_ip_per_s: float = 2.0
    """Password checks per second for one address, sustained (a burst of 10)."""
    chosen_codes_after_s: float = 600.0
    """A ``create`` with a code of the creator's choosing is refused this long after the relay started: it
    cannot know whether the code was a match's before its start (a cheater could create that match's room anew
    and take both seats). Tests of a relay that has long been running set 0."""
    lockout_quiet_s: float = 30.0
    """A seat away from an address that a connection limit refused is not certified silent until that address
    has had no such refusal for this long (its holder may have been kept out); the grace period waits too."""

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
            "max_handshakes_per_ip",
            "attempts_per_ip",
            "max_waiting_rooms_per_ip",
            "max_rooms_per_ip",
            "scrypt_per_ip",
            "new_connections_burst",
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
            "waiting_grace",
            "first_frame_timeout",
            "scrypt_per_ip_per_s",
            "new_connections_per_ip_per_s",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be more than 0")
        if self.chosen_codes_after_s < 0:
            raise ValueError("chosen_codes_after_s must be at least 0")
        if self.ping_interval >= self.idle_timeout:
            raise ValueError("ping_interval must be shorter than idle_timeout")
        if not 0 <= self.port <= 65535 or (self.metrics_port is not None and not 0 <= self.metrics_port <= 65535):
            raise ValueError("ports must be in 0..65535")


# ------------------------------------------------------------------------------ effects


@dataclass(slots=True)
class Send:
    """Queue ``data`` for connection ``conn`` (``frame``: a forwarded player frame, for the metrics)."""

    conn: int
    data: bytes
    frame: bool = False


@dataclass(slots=True)
class Close:
    """Close connection ``conn`` with ``reason`` (a key of CLOSE_CODES): ``bye`` first when ``flush``."""

    conn: int
    reason: str
    flush: bool = True


@dataclass(slots=True)
class Log:
    event: str
    fields: dict[str, Any]


@dataclass(slots=True)
class HashPassword:
    """scrypt ``password`` (``codes.hash_password``), then ``core.work_done(now, conn, hash)``."""

    conn: int
    password: str


@dataclass(slots=True)
class VerifyPassword:
    """Check ``password`` against ``stored`` (``codes.verify_password``), then ``core.work_done(now, conn, ok)``."""

    conn: int
    password: str
    stored: codes.PasswordHash


Effect = Send | Close | Log | HashPassword | VerifyPassword


# ------------------------------------------------------------------------------- state


@dataclass(eq=False)
class Addr:
    """What the relay counts for one address (an IPv4 address or an IPv6 /64)."""

    key: str
    conns: int = 0
    handshakes: int = 0
    failures: deque[float] = field(default_factory=deque)
    """Times of failed attempts (any room), within ``attempts_window``."""
    room_failures: dict[str, deque[float]] = field(default_factory=dict)
    """Per room code, times of wrong passwords (or a removal as a silent joiner) from this address."""
    scrypt_running: int = 0
    refused_at: float | None = None
    """When a limit last refused or cut this address: a seat away from here since is not certified silent."""
    scrypt_bucket: TokenBucket | None = None
    new_bucket: TokenBucket | None = None
    rooms: set[Room] = field(default_factory=set)
    """The open rooms this address created or rebuilt."""

    def idle(self, now: float, window: float) -> bool:
        if self.conns or self.handshakes or self.scrypt_running or self.rooms:
            return False
        return not (self.failures and self.failures[-1] > now - window) and not any(
            f and f[-1] > now - window for f in self.room_failures.values()
        )


def _recent(f: deque[float], now: float, window: float) -> int:
    while f and f[0] <= now - window:
        f.popleft()
    return len(f)


@dataclass(eq=False)
class Conn:
    """One accepted connection, as the rules see it."""

    id: int
    ip: str
    addr: Addr
    bucket: TokenBucket
    room: Room | None = None
    seat: int = 0
    closing: str | None = None
    failures: deque[float] = field(default_factory=deque)
    work: tuple[str, dict[Any, Any]] | None = None
    """A request waiting for password work: its type and message."""
    nonce: bytes = b""
    """The nonce announced on this connection: a seat proof signs it (``witness.seat_claim``)."""


@dataclass(eq=False)
class Seat:
    token_hash: bytes | None = None
    conn: Conn | None = None
    away_since: float | None = None
    grace_gen: int = 0
    """Bumped whenever the seat's grace timer is set or cancelled: older timers are void."""
    in_count: int | None = 0
    """Highest frame number received in order from this seat (None: unknown, in a restored room)."""
    pending: deque[tuple[int, bytes, bytes | None]] = field(default_factory=deque)
    """Frames from the other seat waiting for this seat."""
    pending_bytes: int = 0
    clock: SeatClock = field(default_factory=SeatClock)
    """The witness: what a silence certificate says about this seat (``koikoi.protocol.witness``)."""
    highest: int = 0
    """The highest frame number the relay ever accepted from this seat (a rewind is bounded from it)."""
    floor: int = 0
    """This seat's count as the relay told it at its last resume: its client numbers on from there (it may
    have no frames below), so the other seat's resume never sets the count back below it."""
    attaches: int = 0
    """How often a connection took this seat in this room (created, joined, resumed, rebuilt)."""
    addr: Addr | None = None
    """The address the seat was last held from."""
    sent_at: dict[bytes, int] = field(default_factory=dict)
    """For each hash in ``clock.recent``, the number of the frame that first brought it: when the other seat's
    ``resume`` shows it never got that frame, the hash leaves ``clock.recent`` until it is sent again."""
    certify_bucket: TokenBucket | None = None
    buffer_full: bool = False
    """Frames for this (absent) seat were refused because its buffer was full (logged once until it drains)."""
    left_done: bool = False
    """This seat's last ``leave`` said ``done`` (the match is over): when the other seat says so too, the room
    closes at once instead of after the grace period."""
    player_key: bytes | None = None
    """The player key that proved this seat when it was taken (created or joined; in a rebuilt room, at the
    seat's first resume): every later resume must prove the same key, and certificates name it."""


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
    deck: str | None = "shared"
    """``sealed`` or ``shared`` as the creator named it (none named: ``shared``); None in a restored room.
    For the lobby only: the players' HELLOs bind it (spec/relay.md)."""
    restored: bool = False
    seats: tuple[Seat, Seat] = field(default_factory=lambda: (Seat(), Seat()))
    closed: str | None = None
    creator: str = ""
    """The creator's address key (rooms, and waiting rooms, are counted per address)."""
    join_gen: int = 0
    """Bumped at every join and removal: a first-frame timer for an earlier joiner is void."""
    owner: Addr | None = None
    """The creator's :class:`Addr` (it counts the room while it is open)."""

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


_FRAME_HEAD = b"\x83\xa1t\xa5frame\xa1n"  # {"t": "frame", "n": ... in canonical msgpack
_UINT = {0xCC: (1, 0x80), 0xCD: (2, 0x100), 0xCE: (4, 0x10000), 0xCF: (8, 0x100000000)}
_BIN = {0xC4: (1, 0), 0xC5: (2, 0x100), 0xC6: (4, 0x10000)}


def fast_frame(msg: bytes) -> tuple[int, int]:
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


# -------------------------------------------------------------------------------- core


class RelayCore:
    """The relay's rules. Feed it events with the time; carry out :attr:`out` after each call."""

    def __init__(self, config: RelayConfig | None = None, *, key: SigningKey | None = None) -> None:
        self.cfg = config or RelayConfig()
        self.cfg.check()
        self.key = key if key is not None else SigningKey.generate()
        self.public_key = bytes(self.key.verify_key)
        self.fingerprint = fingerprint(self.public_key)
        self.metrics = Metrics()
        self.metrics.gauges = self.gauges
        self.out: list[Effect] = []
        self.rooms: dict[str, Room] = {}
        self.tombstones: dict[str, Tombstone] = {}
        self.conns: dict[int, Conn] = {}
        self.addrs: dict[str, Addr] = {}
        self.stopping = False
        self.now = 0.0
        self.started: float | None = None
        """When the first connection came (this process's start, as far as rooms can tell)."""
        self._next_conn = 0
        self._next_room = 0
        self._timers: list[tuple[float, int, str, Room, int, int]] = []
        self._scrypt_running: dict[int, Addr] = {}
        self._timer_seq = 0
        self._max_msg = self.cfg.max_frame_bytes + ENVELOPE_OVERHEAD
        self._handlers = {
            "create": self._on_create,
            "list": self._on_list,
            "info": self._on_info,
            "join": self._on_join,
            "resume": self._on_resume,
            "leave": self._on_leave,
            "certify": self._on_certify,
        }

    # ------------------------------------------------------------------ the driver's calls

    def _addr(self, ip: str) -> Addr:
        key = address_key(ip)
        a = self.addrs.get(key)
        if a is None:
            if len(self.addrs) > 2 * self.cfg.max_connections + 1000:  # forget idle addresses
                for k in [k for k, v in self.addrs.items() if v.idle(self.now, self.cfg.attempts_window)]:
                    del self.addrs[k]
            a = self.addrs[key] = Addr(key)
        return a

    def tcp_opened(self, now: float, ip: str) -> bool:
        """A TCP connection from ``ip`` starts its WebSocket handshake. False: close it at once (too many
        from that address in the handshake, or in all). Call :meth:`handshake_done` when it ends."""
        self.now = now
        a = self._addr(ip)
        if a.handshakes >= self.cfg.max_handshakes_per_ip or a.handshakes + a.conns > self.cfg.max_connections_per_ip:
            self._limit_ip(ip, "handshakes_per_ip", "too_many_handshakes")
            return False
        if not self._new_connection_allowed(a):
            self._limit_ip(ip, "connection_rate", "too_many_new_connections")
            return False
        a.handshakes += 1
        return True

    def _new_connection_allowed(self, a: Addr) -> bool:
        if a.new_bucket is None:
            a.new_bucket = TokenBucket.full(
                self.cfg.new_connections_per_ip_per_s, self.cfg.new_connections_burst, self.now
            )
        return a.new_bucket.take(self.now)

    def handshake_done(self, now: float, ip: str, ok: bool) -> None:
        """The handshake of a connection :meth:`tcp_opened` let in ended (``ok``: completed in time)."""
        self.now = now
        a = self._addr(ip)
        a.handshakes = max(0, a.handshakes - 1)
        if not ok:  # (its own slowness: it kept nobody else out, so it does not count as a refusal of the address)
            self._limit_ip(ip, "handshake", "handshake_timeout", locks_out=False)

    def connect(self, now: float, ip: str) -> tuple[int, str | None]:
        """A WebSocket handshake completed from ``ip``: ``(conn id, None)``, with the announcement queued,
        or ``(0, refusal)`` — the driver sends ``bye(refusal)`` and closes with ``CLOSE_CODES[refusal]``."""
        self.now = now
        if self.started is None:
            self.started = now
        addr = self._addr(ip)
        refusal = None
        if self.stopping:
            refusal = "shutdown"
        elif len(self.conns) >= self.cfg.max_connections:
            refusal = "relay_full"
            self._limit_ip(ip, "connections", "relay_full")
        elif addr.conns >= self.cfg.max_connections_per_ip:
            refusal = "too_many_connections"
            self._limit_ip(ip, "connections_per_ip", "too_many_connections")
        elif self.cfg.trust_proxy and not self._new_connection_allowed(addr):
            # behind a proxy the rate is counted here (before the handshake every connection is the proxy's)
            refusal = "too_many_connections"
            self._limit_ip(ip, "connection_rate", "too_many_new_connections")
        if refusal is not None:
            return 0, refusal
        self._next_conn += 1
        conn = Conn(self._next_conn, ip, addr, TokenBucket.full(self.cfg.frames_per_s, self.cfg.burst, now))
        self.conns[conn.id] = conn
        addr.conns += 1
        self.metrics.connections_total += 1
        self._log("connected", conn=conn.id, ip=ip)
        conn.nonce = secrets.token_bytes(NONCE_BYTES)
        # first of all: who this relay is (its witness key), and the nonce a seat proof signs on this connection
        self.out.append(Send(conn.id, self.announcement(conn)))
        return conn.id, None

    def announcement(self, conn: Conn) -> bytes:
        """The first message on ``conn``: the relay's key, its fingerprint, and the connection's nonce."""
        return encode({"t": "relay", "key": self.public_key, "fingerprint": self.fingerprint, "nonce": conn.nonce})

    def disconnected(self, now: float, cid: int) -> None:
        """Connection ``cid`` is gone (closed by either side, or lost)."""
        self.now = now
        conn = self.conns.pop(cid, None)
        if conn is None:
            return
        self._detach(conn)
        conn.addr.conns -= 1
        self._log("disconnected", conn=cid, reason=conn.closing or "client_closed")

    def message(self, now: float, cid: int, msg: bytes | str) -> None:
        """A WebSocket message from connection ``cid``."""
        self.now = now
        conn = self.conns.get(cid)
        if conn is None or conn.closing is not None:
            return
        m = self.metrics
        m.bytes_in_total += len(msg)
        if not isinstance(msg, bytes):
            self._kick(conn, "binary_only")
            return
        if not self._admit(conn, len(msg), now):
            return
        n, size = fast_frame(msg)
        if n:  # the common case, a canonical frame envelope: no need to decode it all
            self._on_frame(conn, n, size, msg, None, True)
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
            self._on_frame(conn, fn, len(d), msg, d, not ctl)
            return
        m.control_in_total += 1
        handler = self._handlers.get(t)
        if handler is None:
            self._error(conn, t, "bad_request", f"unknown message type {t!r}")
            return
        try:
            handler(conn, obj)
        except _Refused as r:
            self._error(conn, t, r.code, r.message, **r.extra)

    def frame(self, now: float, cid: int, n: int, size: int, raw: bytes) -> None:
        """A message the driver already found to be a canonical frame envelope (``fast_frame(raw) == (n, size)``)."""
        self.now = now
        conn = self.conns.get(cid)
        if conn is None or conn.closing is not None:
            return
        self.metrics.bytes_in_total += len(raw)
        if self._admit(conn, len(raw), now):
            self._on_frame(conn, n, size, raw, None, True)

    def _admit(self, conn: Conn, size: int, now: float) -> bool:
        """The size and rate limits every message passes; a message over either closes its connection."""
        if size > self._max_msg:
            self._limit(conn, "frame_size", "oversized_frame", size=size)
            self._kick(conn, "oversized_frame")
            return False
        if not conn.bucket.take(now):
            self._limit(conn, "rate", "rate_limited")
            self._kick(conn, "rate_limited")
            return False
        return True

    def work_done(self, now: float, cid: int, result: codes.PasswordHash | bool | None) -> None:
        """The password work a :class:`HashPassword` / :class:`VerifyPassword` asked for is done
        (``None``: abandoned, the connection is going away). Always call it once per such effect."""
        self.now = now
        a = self._scrypt_running.pop(cid, None)
        if a is not None:
            a.scrypt_running -= 1
        conn = self.conns.get(cid)
        if conn is None or conn.work is None:
            return
        t, obj = conn.work
        conn.work = None
        if conn.closing is not None or result is None:
            return
        try:
            if t == "create":
                assert isinstance(result, codes.PasswordHash)
                self._create(conn, obj, result)
            else:
                assert isinstance(result, bool)
                self._join_checked(conn, obj, result)
        except _Refused as r:
            self._error(conn, t, r.code, r.message, **r.extra)

    def busy(self, cid: int) -> bool:
        """True while connection ``cid`` waits for password work (read nothing more from it until then)."""
        conn = self.conns.get(cid)
        return conn is not None and conn.work is not None

    def slow_consumer(self, now: float, cid: int) -> None:
        """The driver could not queue a message for ``cid``: its outbox is full."""
        self.now = now
        conn = self.conns.get(cid)
        if conn is None or conn.closing is not None:
            return
        self._limit(conn, "slow_consumer", "slow_consumer")
        self._kick(conn, "slow_consumer", flush=False)

    def kick(self, now: float, cid: int, reason: str, limit: str | None = None) -> None:
        """Close ``cid`` for ``reason`` (the driver's own findings: ``idle_timeout``, ``shutdown``, a message
        the WebSocket layer cut, ``oversized_frame``), counting ``limit`` if given."""
        self.now = now
        conn = self.conns.get(cid)
        if conn is None:
            return
        if limit is not None:
            self._limit(conn, limit, reason)
        self._kick(conn, reason)

    def shutdown(self, now: float) -> None:
        """Stop: every connection is told ``shutdown``; seats no longer go away (no grace timers)."""
        self.now = now
        self.stopping = True
        for conn in list(self.conns.values()):
            self._kick(conn, "shutdown")

    def next_deadline(self) -> float | None:
        """When :meth:`tick` next has something to do (None: nothing scheduled)."""
        return self._timers[0][0] if self._timers else None

    def tick(self, now: float) -> None:
        """Run every timer due at ``now``."""
        self.now = now
        timers = self._timers
        while timers and timers[0][0] <= now:
            _, _, kind, room, s, gen = heapq.heappop(timers)
            if room.closed is not None:
                continue
            seat = room.seats[s]
            if kind == "grace" and gen == seat.grace_gen and seat.conn is None and seat.away_since is not None:
                other_here = room.seats[1 - s].conn is not None
                a = seat.addr
                if other_here and self._locked_out(seat) and a is not None and a.refused_at is not None:
                    # its holder may be kept out: the grace waits until its address has been quiet a while
                    self._schedule(a.refused_at + self.cfg.lockout_quiet_s, "grace", room, s, gen)
                    continue
                self._close_room(room, "abandoned" if not other_here else "opponent_left")
            elif kind == "first_frame" and gen == room.join_gen and seat.token_hash is not None and not seat.highest:
                # (no frame ever, flagged or not: ``highest``, which no rewind moves back, unlike the count that the
                # other seat's resume sets back: …_rewound_joiner_removed.py. A joiner that sent frames keeps its
                # seat and its key, else a cheater could flag its frames, be removed, and join again with another
                # key or none witnessed: tests/adversary/test_adversary_attack_seat_key_stop_win.py,
                # …_let_again_alias.py)
                self._remove_silent_joiner(room)

    # ----------------------------------------------------------------------------- helpers

    def gauges(self) -> dict[str, int]:
        waiting = sum(1 for r in self.rooms.values() if r.waiting)
        away = sum(1 for r in self.rooms.values() for s in r.seats if s.token_hash is not None and s.conn is None)
        return {
            "rooms_waiting": waiting,
            "rooms_playing": len(self.rooms) - waiting,
            "connections": len(self.conns),
            "seats_away": away,
        }

    def _log(self, event: str, **fields: Any) -> None:
        self.out.append(Log(event, fields))

    def _schedule(self, when: float, kind: str, room: Room, s: int, gen: int) -> None:
        self._timer_seq += 1
        heapq.heappush(self._timers, (when, self._timer_seq, kind, room, s, gen))

    def _send(self, conn: Conn, obj: dict[str, Any]) -> None:
        if conn.closing is None:
            self.out.append(Send(conn.id, encode(obj)))

    def _error(self, conn: Conn, re: str, code: str, message: str, **extra: Any) -> None:
        self._send(conn, {"t": "error", "re": re, "code": code, "message": message, **extra})

    def _kick(self, conn: Conn, reason: str, *, flush: bool = True) -> None:
        """Close ``conn``: tell it why (``bye``), then a WebSocket close with code and reason."""
        if conn.closing is not None:
            return
        conn.closing = reason
        self.out.append(Close(conn.id, reason, flush))
        self._detach(conn)

    def _limit(self, conn: Conn, limit: str, reason: str, **extra: Any) -> None:
        # (a connection let in and then refused or cut for what it did itself: that kept no seat holder out,
        # so the address is not "refused" for seat_locked_out: else a cheater could get its own seat there)
        self.metrics.limit_hit(limit)
        self._log("limit_hit", limit=limit, reason=reason, conn=conn.id, ip=conn.ip, **extra)

    def _limit_ip(self, ip: str, limit: str, reason: str, *, locks_out: bool = True, **extra: Any) -> None:
        """A connection from ``ip`` refused before it could say anything (a per-address connection limit):
        ``locks_out``, a seat holder coming back from that address may have been kept out."""
        a = self.addrs.get(address_key(ip))
        if a is not None and locks_out:
            a.refused_at = self.now
        self.metrics.limit_hit(limit)
        self._log("limit_hit", limit=limit, reason=reason, ip=ip, **extra)

    def _protocol_error(self, conn: Conn, message: str) -> None:
        self._log("protocol_error", conn=conn.id, ip=conn.ip, detail=message)
        self._kick(conn, "protocol_error")

    def _fail(self, conn: Conn, re: str, code: str, message: str, **extra: Any) -> _Refused:
        """A failed attempt (unknown room, wrong password, bad token): counted per connection and per
        address (across reconnects); either limit closes the connection (``too_many_attempts``)."""
        now = self.now
        self.metrics.join_failed(code)
        self._log("attempt_failed", conn=conn.id, ip=conn.ip, op=re, code=code)
        conn.failures.append(now)
        conn.addr.failures.append(now)
        window = self.cfg.attempts_window
        if _recent(conn.failures, now, window) >= self.cfg.attempts_per_conn:
            self._error(conn, re, code, message, **extra)
            self._limit(conn, "join_attempts", "too_many_attempts", scope="connection")
            self._kick(conn, "too_many_attempts")
        elif _recent(conn.addr.failures, now, window) >= self.cfg.attempts_per_ip:
            self._error(conn, re, code, message, **extra)
            self._limit(conn, "address_attempts", "too_many_attempts", scope="address")
            self._kick(conn, "too_many_attempts")
        return _Refused(code, message, **extra)

    def _check_attempts(self, conn: Conn, re: str) -> None:
        """An address over its failed-attempt budget may not try again (from any connection) for a while."""
        if _recent(conn.addr.failures, self.now, self.cfg.attempts_window) >= self.cfg.attempts_per_ip:
            self._limit(conn, "address_attempts", "too_many_attempts", scope="address", op=re)
            self._error(conn, re, "too_many_attempts", "too many failed attempts from this address; try later")
            self._kick(conn, "too_many_attempts")
            raise _Refused("too_many_attempts", "too many failed attempts from this address; try later")

    def _scrypt_allowed(self, conn: Conn, re: str) -> None:
        """Password work is budgeted per address: one at a time, a few per second."""
        a = conn.addr
        if a.scrypt_bucket is None:
            a.scrypt_bucket = TokenBucket.full(self.cfg.scrypt_per_ip_per_s, 10, self.now)
        if a.scrypt_running >= self.cfg.scrypt_per_ip or not a.scrypt_bucket.take(self.now):
            self._limit(conn, "scrypt", "too_many_password_checks", op=re)
            raise _Refused(
                "too_many_password_checks", "too many password checks from this address at once; try again shortly"
            )

    def _start_scrypt(self, conn: Conn, effect: HashPassword | VerifyPassword) -> None:
        conn.addr.scrypt_running += 1
        self._scrypt_running[conn.id] = conn.addr
        self.out.append(effect)

    # -------------------------------------------------------------------------------- rooms

    def _new_room(
        self,
        private: bool,
        rounds: int | None,
        double_at_8: bool | None,
        password: codes.PasswordHash | None,
        owner: Addr,
        code: str | None = None,
    ) -> Room:
        if code is None:
            while True:
                code = codes.new_code(private)
                if code not in self.rooms and code not in self.tombstones:
                    break
        self._next_room += 1
        room = Room(self._next_room, code, private, rounds, double_at_8, password, self.now)
        room.creator = owner.key
        owner.rooms.add(room)
        room.owner = owner
        self.rooms[code] = room
        self.metrics.rooms_created_total += 1
        return room

    def _settings(self, room: Room) -> dict[str, Any]:
        return {
            "rounds": room.rounds,
            "double_at_8": room.double_at_8,
            "doubling": doubling_label(room.double_at_8),
            "move_time_s": room.move_time_s,
            "deck": room.deck,
        }

    def _check_room_count(self, conn: Conn) -> None:
        if len(self.rooms) >= self.cfg.max_rooms:
            self._limit(conn, "rooms", "too_many_rooms")
            raise _Refused("too_many_rooms", f"the relay holds its maximum of {self.cfg.max_rooms} rooms; try later")

    def _attach(self, room: Room, s: int, conn: Conn, received: int) -> None:
        """Seat ``conn`` at seat ``s``; drop what waited for it up to ``received``."""
        seat, other = room.seats[s], room.seats[1 - s]
        seat.attaches += 1
        seat.left_done = False
        seat.addr = conn.addr
        # (in a room rebuilt after a restart, a seat's first resume is the only word on how far the other
        # seat's numbering had gone: the relay's count for it, made up or from frames sent meanwhile, gives way)
        if other.in_count is not None and not (room.restored and seat.attaches == 1):
            # it cannot have got frames the relay never had: a count set forward would make the relay drop
            # the other seat's frames on their way as duplicates, unwitnessed
            received = min(received, other.in_count)
        seat.grace_gen += 1  # a grace timer running for this seat is void
        seat.conn = conn
        seat.away_since = None
        conn.room = room
        conn.seat = s
        p = seat.pending
        dropped: set[int] = set()
        while p and p[0][0] <= received:  # (only a sender that numbered on from the wrong place: not delivered)
            n, raw, _ = p.popleft()
            seat.pending_bytes -= len(raw)
            dropped.add(n)
        if p and p[0][0] != received + 1:  # frames were lost with a dead connection: the sender resends
            dropped.update(n for n, _, _ in p)
            p.clear()
            seat.pending_bytes = 0
        kept = {n for n, _, _ in p}
        if not p:
            # the sender sends again from here; never more than MAX_REWIND frames back: a seat that says it
            # got far fewer frames than it did would make the other resend its whole log, past the relay's
            # burst, again and again (a client skips a gap; the match protocol asks for what it lacks)
            # (bounded from the highest count it ever reached, so that resuming again and again cannot walk it
            # back in steps)
            other.in_count = max(received, other.highest - MAX_REWIND, other.floor)
        # the sender's frames the witness lists that this seat says it never got leave the list until sent
        # again, also those the rewind bound keeps from being sent again (a certificate's recent must not
        # vouch for a message the claimant never got: spec/protocol.md §7.3)
        for h, n in list(other.sent_at.items()):
            if n in dropped or (n > received and n not in kept):
                other.clock.recent.pop(h, None)
                del other.sent_at[h]

    def _flush_pending(self, room: Room, s: int) -> None:
        seat = room.seats[s]
        conn = seat.conn
        assert conn is not None
        for _, raw, _ in seat.pending:
            self.out.append(Send(conn.id, raw, True))
        seat.pending.clear()
        seat.pending_bytes = 0
        seat.buffer_full = False

    def _detach(self, conn: Conn) -> None:
        room = conn.room
        if room is None:
            return
        conn.room = None
        seat = room.seats[conn.seat]
        if seat.conn is not conn or room.closed is not None:
            return
        seat.conn = None
        if self.stopping:
            return
        seat.away_since = self.now
        seat.grace_gen += 1
        # a creator who left before anyone joined gets a short grace: nobody waits on that room
        grace = self.cfg.waiting_grace if room.waiting and conn.seat == 0 else self.cfg.grace
        self._schedule(self.now + grace, "grace", room, conn.seat, seat.grace_gen)
        self._log("seat_away", **room.log_id(), seat=conn.seat, grace_s=grace)
        other = room.seats[1 - conn.seat].conn
        if other is not None:
            self._send(other, {"t": "peer", "event": "away", "grace_ms": int(self.cfg.grace * 1000)})

    def _close_room(self, room: Room, reason: str) -> None:
        if room.closed is not None:
            return
        room.closed = reason
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]
        if room.owner is not None:
            room.owner.rooms.discard(room)
        now = self.now
        certs: dict[int, bytes] = {}
        if reason == "opponent_left":  # the seat still there gets the witness's word
            for i, seat in enumerate(room.seats):
                if seat.conn is not None and self._no_certificate(room, 1 - i) is None:
                    certs[i] = self._certificate(room, 1 - i)
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
        self._log("room_closed", **room.log_id(), reason=reason)
        for i, seat in enumerate(room.seats):
            seat.grace_gen += 1
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
        if t.at < self.now - self.cfg.tombstone_s:
            del self.tombstones[code]
            return None
        return t

    def _no_certificate(self, room: Room, silent: int) -> tuple[str, str] | None:
        """Why the witness certifies no silence of seat ``silent`` here (``(code, message)``), or None. A room
        rebuilt after a restart: the other seat's token was the first resumer's word (a cheater could hold both
        seats; each seat's key guards it too, spec/relay.md "Seats and keys": the refusal stays as a second
        guard). A seat away from an address whose new connections a limit is refusing: a cheater on the same
        address (a NAT) may be keeping its holder out (:meth:`_locked_out`)."""
        if room.restored:
            return "rebuilt_room", "this room was rebuilt after a relay restart: no silence is certified here"
        if self._locked_out(room.seats[silent]):
            return "seat_locked_out", "the other seat's address is being refused connections: no silence certified"
        return None

    def _locked_out(self, seat: Seat) -> bool:
        """Seat ``seat`` is away and its address had a connection refused by a per-address limit since it left,
        within the last ``lockout_quiet_s``: its holder may be kept out by someone on the same address (a NAT).
        Only refusals of new connections count (nothing the seat's own connection did), and only while they
        go on: a cheater that gets its own address refused must keep at it to stall, and stops being excused
        ``lockout_quiet_s`` after it stops."""
        a = seat.addr
        if seat.conn is not None or seat.away_since is None or a is None or a.refused_at is None:
            return False
        return a.refused_at >= seat.away_since and self.now - a.refused_at < self.cfg.lockout_quiet_s

    def _certificate(self, room: Room, silent: int) -> bytes:
        """The witness's signed word: how long seat ``silent`` has been awaited and sent nothing new
        (``witness.silent_ms``: from the later of both seats' last new frames, moved on by the silent seat's
        requests to send again, within a bound), the last frames' hashes, and the other seat's (the
        claimer's) recent frames."""
        seat, other = room.seats[silent], room.seats[1 - silent]
        conn = seat.conn
        return sign_certificate(
            self.key,
            room.code,
            silent,
            (room.seats[0].clock.last_hash, room.seats[1].clock.last_hash),
            silent_ms(seat.clock, other.clock, self.now, room.move_time_s),
            conn is not None and conn.closing is None,
            list(other.clock.recent),
            (room.seats[0].player_key or b"", room.seats[1].player_key or b""),
        )

    # ------------------------------------------------------------------------------- frames

    def _on_frame(self, conn: Conn, n: int, size: int, raw: bytes, d: bytes | None, witnessed: bool) -> None:
        """A frame from ``conn``'s seat: number ``n``, the payload ``d`` (None: the last ``size`` bytes of
        the envelope ``raw``).

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
        other = room.seats[1 - conn.seat]
        oc = other.conn
        direct = oc is not None and oc.closing is None and not other.pending
        kept = direct or self._buffer_room(me, other, len(raw), witnessed)
        me.in_count = n
        me.highest = max(me.highest, n)
        if not kept and witnessed:
            # an unflagged frame with no flagged one to make room for it: a buffer full of this seat's newest
            # messages, which only a flood of junk makes. Taken for the numbering, never delivered, and not the
            # seat's last frame (the other seat could never cite it): the last one it will get stays that
            self._not_delivered(conn, room, other)
            return
        payload = d if d is not None else raw[len(raw) - size :]
        h = frame_hash(payload)
        witness_frame(me.clock, other.clock, h, self.now, ctl=not witnessed, frame=payload)
        me.sent_at.setdefault(h, n)
        if len(me.sent_at) > 2 * RECENT_HASHES:
            me.sent_at = {x: at for x, at in me.sent_at.items() if x in me.clock.recent}
        if direct:
            assert oc is not None
            self.out.append(Send(oc.id, raw, True))
            return
        if not kept:
            # the absent seat's buffer is full: the frame is taken (the sender's numbering goes on, so its next
            # frames are not dropped as ahead of a gap) and witnessed (it was sent: an answer is an answer), but
            # never delivered: it leaves the sender's recent, and the other seat asks for what it lacks once
            # back. The room stays open: closing it let a sender end a match it was losing with no certificate
            _unlist(me, h, n)
            self._not_delivered(conn, room, other)
            return
        other.pending.append((n, raw, None if witnessed else h))
        other.pending_bytes += len(raw)

    def _buffer_room(self, me: Seat, other: Seat, size: int, witnessed: bool) -> bool:
        """Whether a frame of ``size`` bytes from ``me`` fits the absent ``other``'s buffer. When it is full, a
        flagged (``ctl``) frame does not fit; an unflagged one — a seat's newest message, its end, its ENDED — makes
        room by dropping the oldest flagged frames waiting (answers to requests, resends: never delivered, they
        leave ``me``'s ``recent``, and the other seat asks for what it lacks). Else a cheater that asks the honest
        side for old messages, then leaves, could fill its own buffer with the answers so that the honest side's
        next move or winning TIMEOUT is refused (tests/adversary/test_adversary_attack_refused_timeout.py)."""
        cap_n, cap_b, p = self.cfg.seat_buffer_frames, self.cfg.seat_buffer_bytes, other.pending

        def fits() -> bool:
            return len(p) < cap_n and other.pending_bytes + size <= cap_b

        if fits():
            return True
        if not witnessed:
            return False
        flagged = [e for e in p if e[2] is not None]
        while not fits() and flagged:
            old = flagged.pop(0)
            p.remove(old)
            other.pending_bytes -= len(old[1])
            assert old[2] is not None
            _unlist(me, old[2], old[0])
        return fits()

    def _not_delivered(self, conn: Conn, room: Room, other: Seat) -> None:
        """A frame from ``conn`` that the absent ``other``'s full buffer will never deliver: counted, and the
        limit logged once until the buffer drains."""
        self.metrics.frames_dropped_total += 1
        if not other.buffer_full:
            other.buffer_full = True
            self._limit(conn, "seat_buffer", "buffer_full", **room.log_id())

    # ---------------------------------------------------------------------- control messages

    def _on_create(self, conn: Conn, obj: dict[Any, Any]) -> None:
        if conn.room is not None:
            raise _Refused("already_seated", "this connection already holds a seat; leave first")
        rounds = obj.get("rounds", 6)
        double = obj.get("double_at_8", True)
        private = obj.get("private", False)
        password = obj.get("password")
        move_time = obj.get("move_time_s", DEFAULT_MOVE_TIME_S)
        deck = obj.get("deck", "shared")
        if rounds not in (6, 12) or type(rounds) is not int:
            raise _Refused("bad_request", "rounds must be 6 or 12")
        if type(deck) is not str or deck not in DECKS:
            raise _Refused("bad_request", "deck must be sealed or shared")
        if type(move_time) is not int or not 0 <= move_time <= MAX_MOVE_TIME_S:
            raise _Refused("bad_request", f"move_time_s must be a whole number of seconds, 0 to {MAX_MOVE_TIME_S}")
        if type(double) is not bool or type(private) is not bool:
            raise _Refused("bad_request", "double_at_8 and private must be true or false")
        if password is not None and (
            type(password) is not str or not password or len(password.encode()) > codes.MAX_PASSWORD_BYTES
        ):
            raise _Refused("bad_request", f"a password is 1 to {codes.MAX_PASSWORD_BYTES} bytes of text")
        self._proven_key(conn, obj, "create")
        if "room" in obj:  # a code the creator drew itself (to route by it, spec/relay.md "More than one relay")
            want = codes.normalize_code(obj["room"]) if isinstance(obj["room"], str) else None
            length = codes.PRIVATE_CODE_LENGTH if private else codes.PUBLIC_CODE_LENGTH
            if want is None or len(want) != length:
                raise _Refused("bad_request", f"room must be a {length}-character room code")
            if want in self.rooms or self._tombstone(want) is not None:
                raise _Refused("room_taken", "a room with that code exists or closed lately; draw another")
            if self.cfg.chosen_codes_after_s and (
                self.started is None or self.now - self.started < self.cfg.chosen_codes_after_s
            ):
                # a relay that started lately cannot know whether the code is a match's from before its start
                # (a cheater could create it anew and take both seats of that match)
                raise _Refused("room_taken", "this relay started lately: it takes no chosen codes yet; draw none")
        self._check_room_count(conn)
        self._check_address_rooms(conn, "create")
        if password is not None:
            self._scrypt_allowed(conn, "create")
            conn.work = ("create", obj)
            self._start_scrypt(conn, HashPassword(conn.id, password))
            return
        self._create(conn, obj, None)

    def _proven_key(self, conn: Conn, obj: dict[Any, Any], re: str) -> bytes:
        """The player key ``obj`` proves (``key``, and ``proof``: its signature of ``witness.seat_claim`` over
        this relay's key and the connection's nonce), or a refusal: a seat is always bound to a proven key."""
        key, proof = obj.get("key"), obj.get("proof")
        if type(key) is not bytes or len(key) != 32 or type(proof) is not bytes or len(proof) != 64:
            raise _Refused("bad_request", f"{re} needs the player's key (32 bytes) and proof (64 bytes)")
        if not seat_proof_ok(key, proof, self.public_key, conn.nonce):
            raise _Refused("bad_proof", "the proof is not that key's signature of this relay's key and nonce")
        return key

    def _check_address_rooms(self, conn: Conn, re: str) -> None:
        """Rooms are budgeted per address: all its open rooms, and those waiting for an opponent."""
        mine = conn.addr.rooms
        if len(mine) >= self.cfg.max_rooms_per_ip:
            self._limit(conn, "rooms_per_ip", "too_many_open_rooms", op=re)
            raise _Refused(
                "too_many_open_rooms",
                f"this address already holds {_rooms(self.cfg.max_rooms_per_ip)} open; finish or leave one first",
            )
        if re == "create" and sum(1 for r in mine if r.waiting) >= self.cfg.max_waiting_rooms_per_ip:
            self._limit(conn, "waiting_rooms", "too_many_waiting_rooms")
            raise _Refused(
                "too_many_waiting_rooms",
                f"this address already has {_rooms(self.cfg.max_waiting_rooms_per_ip)} waiting for an opponent",
            )

    def _create(self, conn: Conn, obj: dict[Any, Any], pw: codes.PasswordHash | None) -> None:
        if conn.room is not None:
            return
        self._check_room_count(conn)
        private = obj.get("private", False)
        self._check_address_rooms(conn, "create")
        want = codes.normalize_code(obj["room"]) if isinstance(obj.get("room"), str) else None
        if want is not None and (want in self.rooms or self._tombstone(want) is not None):
            raise _Refused("room_taken", "a room with that code exists or closed lately; draw another")
        room = self._new_room(private, obj.get("rounds", 6), obj.get("double_at_8", True), pw, conn.addr, code=want)
        room.move_time_s = obj.get("move_time_s", DEFAULT_MOVE_TIME_S)
        room.deck = obj.get("deck", "shared")
        token = codes.new_token()
        room.seats[0].token_hash = codes.token_hash(token)
        room.seats[0].player_key = self._proven_key(conn, obj, "create")
        room.seats[0].clock.seated_at = room.created
        self._attach(room, 0, conn, 0)
        self._log(
            "room_created",
            **room.log_id(),
            conn=conn.id,
            private=private,
            rounds=room.rounds,
            double_at_8=room.double_at_8,
            move_time_s=room.move_time_s,
            deck=room.deck,
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

    def _on_list(self, conn: Conn, obj: dict[Any, Any]) -> None:
        now = self.now
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
                        "deck": r.deck,
                        "password": r.password is not None,
                        "waiting_s": int(now - r.created),
                    }
                    for r in public[: self.cfg.max_list]
                ],
            },
        )

    def _find(self, conn: Conn, re: str, text: Any) -> Room:
        self._check_attempts(conn, re)
        code = codes.normalize_code(text) if isinstance(text, str) else None
        room = self.rooms.get(code) if code is not None else None
        if room is None or room.closed is not None:
            raise self._fail(conn, re, "room_not_found", f"no room {text!r} on this relay")
        return room

    def _on_info(self, conn: Conn, obj: dict[Any, Any]) -> None:
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
                "waiting_s": int(self.now - room.created),
            },
        )

    def _on_join(self, conn: Conn, obj: dict[Any, Any]) -> None:
        if conn.room is not None:
            raise _Refused("already_seated", "this connection already holds a seat; leave first")
        player_key = self._proven_key(conn, obj, "join")
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
        self._check_room_attempts(conn, room)  # also bars a joiner removed for silence from this room
        if room.password is None:
            self._seat_joiner(conn, room, player_key)
            return
        password = obj.get("password")
        if type(password) is not str or not password:
            self.metrics.join_failed("wrong_password")
            raise _Refused("wrong_password", "this room needs a password")
        self._check_room_attempts(conn, room)
        if len(password.encode()) > codes.MAX_PASSWORD_BYTES:
            self._join_checked(conn, obj, False)
            return
        self._scrypt_allowed(conn, "join")
        conn.work = ("join", obj)
        self._start_scrypt(conn, VerifyPassword(conn.id, password, room.password))

    def _check_room_attempts(self, conn: Conn, room: Room) -> None:
        """Wrong passwords lock out the guessing address (for this room), never the room itself."""
        f = conn.addr.room_failures.get(room.code)
        if f is not None and _recent(f, self.now, self.cfg.attempts_window) >= self.cfg.attempts_per_room:
            self._limit(conn, "join_attempts", "too_many_attempts", scope="room", **room.log_id())
            raise _Refused(
                "too_many_attempts", "too many wrong passwords for this room from this address lately; try later"
            )

    def _join_checked(self, conn: Conn, obj: dict[Any, Any], ok: bool) -> None:
        code = codes.normalize_code(obj["room"])
        room = self.rooms.get(code) if code is not None else None
        if not ok:
            if room is not None:
                conn.addr.room_failures.setdefault(room.code, deque()).append(self.now)
            raise self._fail(conn, "join", "wrong_password", "wrong password for this room")
        if room is None or room.closed is not None:
            raise _Refused("room_not_found", "the room closed meanwhile")
        if not room.waiting:
            raise _Refused("room_full", "both seats of this room are taken")
        if conn.room is None:
            self._seat_joiner(conn, room, self._proven_key(conn, obj, "join"))

    def _seat_joiner(self, conn: Conn, room: Room, key: bytes) -> None:
        token = codes.new_token()
        room.seats[1].token_hash = th = codes.token_hash(token)
        room.seats[1].player_key = key
        room.seats[1].clock.seated_at = self.now
        room.join_gen += 1
        self._schedule(self.now + self.cfg.first_frame_timeout, "first_frame", room, 1, room.join_gen)
        first = room.seats[0]
        if first.conn is None and first.away_since is not None:
            # the creator left a waiting room (short grace) and someone joined: now somebody waits on it,
            # so the creator gets the full grace from when it left
            first.grace_gen += 1
            self._schedule(first.away_since + self.cfg.grace, "grace", room, 0, first.grace_gen)
        self._attach(room, 1, conn, 0)
        self.metrics.joins_total += 1
        self._log("room_joined", **room.log_id(), conn=conn.id)
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
                "peer_key": first.player_key,
            },
        )
        self._flush_pending(room, 1)
        if first.conn is not None:
            self._send(
                first.conn,
                {
                    "t": "peer",
                    "event": "joined",
                    "peer_check": th,
                    "received": room.seats[0].in_count,
                    "peer_key": key,
                },
            )

    def _on_resume(self, conn: Conn, obj: dict[Any, Any]) -> None:
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
        key = self._proven_key(conn, obj, "resume")
        code = codes.normalize_code(text) if isinstance(text, str) else None
        room = self.rooms.get(code) if code is not None else None
        th = codes.token_hash(token)
        held = room.seats[s].token_hash if room is not None else None
        if held is None or not codes.tokens_equal(held, th):
            # (the holder of the seat's token is never refused for others' failures from its address: a cheater
            # behind the same NAT could otherwise keep it out until the grace ran out)
            self._check_attempts(conn, "resume")
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
            self._check_room_count(conn)
            self._check_address_rooms(conn, "resume")
            settings = obj.get("settings")
            rounds = double = move_time = deck = None
            if type(settings) is dict:
                r, d, mt = settings.get("rounds"), settings.get("double_at_8"), settings.get("move_time_s")
                rounds = r if r in (6, 12) and type(r) is int else None
                double = d if type(d) is bool else None
                move_time = mt if type(mt) is int and 0 <= mt <= MAX_MOVE_TIME_S else None
                dk = settings.get("deck")
                deck = dk if type(dk) is str and dk in DECKS else None
            room = self._new_room(True, rounds, double, None, conn.addr, code=code)
            room.move_time_s = move_time
            room.deck = deck
            room.restored = restored = True
            room.seats[s].token_hash = th
            room.seats[1 - s].token_hash = peer_check
            for seat in room.seats:
                seat.in_count = None
                seat.clock.seated_at = room.created
            self._log("room_restored", **room.log_id(), seat=s)
            # the other seat gets the usual grace period to come back
            other = room.seats[1 - s]
            other.away_since = self.now
            other.grace_gen += 1
            self._schedule(self.now + self.cfg.grace, "grace", room, 1 - s, other.grace_gen)
        seat = room.seats[s]
        if seat.token_hash is None or not codes.tokens_equal(seat.token_hash, th):
            self._log("seat_theft_refused", **room.log_id(), seat=s, conn=conn.id, ip=conn.ip)
            raise self._fail(conn, "resume", "bad_token", "that token does not hold this seat")
        if seat.player_key is None:  # a rebuilt room: the seat's first resume binds its key
            seat.player_key = key
        elif seat.player_key != key:
            self._log("seat_theft_refused", **room.log_id(), seat=s, conn=conn.id, ip=conn.ip, why="wrong_key")
            raise self._fail(conn, "resume", "wrong_key", "this seat belongs to another player's key")
        old = seat.conn
        if old is not None:  # a half-open old connection: its holder is here now
            old.room = None
            seat.conn = None
            self._kick(old, "replaced")
        self._attach(room, s, conn, received)
        seat.floor = seat.in_count or 0
        self.metrics.resumes_total += 1
        self._log("seat_resumed", **room.log_id(), seat=s, conn=conn.id, restored=restored)
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
                "frames": list(seat.clock.copies.values()),  # this seat's recent frames: what a lost file tail lost
                "peer_key": other.player_key,
            },
        )
        self._flush_pending(room, s)
        if other.conn is not None:
            self._send(other.conn, {"t": "peer", "event": "back", "received": other.in_count, "peer_key": key})

    def _remove_silent_joiner(self, room: Room) -> None:
        """The joiner sent nothing within ``first_frame_timeout``: free its seat, put the room back in the
        lobby, tell the host, and bar the joiner's address from this room for ``attempts_window``."""
        seat = room.seats[1]
        conn = seat.conn
        room.join_gen += 1
        seat.token_hash = None
        seat.conn = None
        seat.away_since = None
        seat.grace_gen += 1
        seat.pending.clear()
        seat.pending_bytes = 0
        seat.clock.forget()
        seat.certify_bucket = None
        seat.player_key = None
        seat.in_count = 0
        host = room.seats[0]
        host.pending.clear()  # frames to the removed joiner: the host sends them again to the next one
        # what the witness knew of the host's frames was about the removed joiner's connection (it may have got
        # junk the next joiner never will): the host's timing starts again with the next joiner
        hc = host.clock
        hc.last_hash, hc.last_at, hc.ask_at, hc.open_ask_at = b"", None, None, None
        hc.seen.clear()
        hc.recent.clear()
        host.sent_at.clear()
        host.pending_bytes = 0
        if conn is not None:
            self._limit(conn, "first_frame", "no_first_frame", **room.log_id())
            f = conn.addr.room_failures.setdefault(room.code, deque())
            f.extend([self.now] * self.cfg.attempts_per_room)
            conn.room = None
            self._send(
                conn,
                {
                    "t": "room_closed",
                    "room": room.code,
                    "reason": "removed",
                    "message": ROOM_CLOSE_MESSAGES["removed"],
                },
            )
        else:
            self.metrics.limit_hit("first_frame")
            self._log("limit_hit", limit="first_frame", reason="no_first_frame", **room.log_id())
        self._log("joiner_removed", **room.log_id())
        if host.conn is not None:
            self._send(host.conn, {"t": "peer", "event": "left", "reason": "no_first_frame"})

    def _on_certify(self, conn: Conn, obj: dict[Any, Any]) -> None:
        room = conn.room
        if room is None:
            raise _Refused("not_seated", "certificates are for seated players: create, join or resume a room first")
        me, other = room.seats[conn.seat], room.seats[1 - conn.seat]
        if other.token_hash is None:
            raise _Refused("no_opponent", "nobody has taken the other seat yet")
        why = self._no_certificate(room, 1 - conn.seat)
        if why is not None:
            raise _Refused(why[0], why[1])
        if me.certify_bucket is None:
            me.certify_bucket = TokenBucket.full(self.cfg.certify_per_s, self.cfg.certify_burst, self.now)
        if not me.certify_bucket.take(self.now):
            self._limit(conn, "certify", "too_many_requests", **room.log_id())
            raise _Refused("too_many_requests", "too many certificate requests for this seat; ask again in a second")
        cert = self._certificate(room, 1 - conn.seat)
        self._log("certified", **room.log_id(), seat=conn.seat, silent_seat=1 - conn.seat)
        self._send(conn, {"t": "certificate", "cert": cert})

    def _on_leave(self, conn: Conn, obj: dict[Any, Any]) -> None:
        room = conn.room
        if room is None:
            raise _Refused("not_seated", "this connection holds no seat")
        done = obj.get("done") is True
        reason = "match_over" if done else "opponent_quit"
        seat, other = room.seats[conn.seat], room.seats[1 - conn.seat]
        self._log("seat_left", **room.log_id(), seat=conn.seat, done=done)
        seat.left_done = done
        if room.waiting or other.token_hash is None or (done and other.conn is None and other.left_done):
            # nobody is playing against this seat (or both said the match is over): the room closes now
            conn.room = None
            seat.conn = None
            self._close_room(room, reason)
        else:
            # the relay cannot know whether the match is over (a leaver's "done" is its word alone): a seat
            # that leaves a room both seats took goes away as after a lost connection, and the grace period
            # ends in opponent_left with the witness's certificate (a losing cheater cannot leave for free)
            self._detach(conn)
        self._send(conn, {"t": "left", "room": room.code})
