"""Admission per address: what the relay counts for each address (:class:`Addr`) and the limits it keeps
with them (:class:`Admission`): connections and handshakes, failed attempts, rooms, password work.

The unit is an address (an IPv4 address, or an IPv6 /64): a stranger's limit never stops another address.
"""

from __future__ import annotations

import ipaddress
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..support import TokenBucket
from .config import RelayConfig
from .effects import Effects, HashPassword, VerifyPassword
from .room import Conn, PasswordWork, Room
from .vocabulary import CloseReason, PasswordOp, Refusal, Refused, refuse

__all__ = ["Addr", "Admission", "address_key"]


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


def _rooms(n: int) -> str:
    """``1 room``, ``4 rooms``."""
    return f"{n} room" if n == 1 else f"{n} rooms"


def _recent(f: deque[float], now: float, window: float) -> int:
    while f and f[0] <= now - window:
        f.popleft()
    return len(f)


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
    watch_bucket: TokenBucket | None = None
    """``watch`` requests let in (each one a catch-up of a room's log)."""
    rooms: set[Room] = field(default_factory=set)
    """The open rooms this address created or rebuilt."""
    watching: int = 0
    """Connections from this address watching a room now."""

    def idle(self, now: float, window: float) -> bool:
        if self.conns or self.handshakes or self.scrypt_running or self.rooms:
            return False
        return not (self.failures and self.failures[-1] > now - window) and not any(
            f and f[-1] > now - window for f in self.room_failures.values()
        )


class Admission:
    """The per-address limits: who may connect, try again, create rooms, and run password work."""

    def __init__(self, cfg: RelayConfig, outbox: Effects) -> None:
        self.cfg = cfg
        self._out = outbox
        self.addrs: dict[str, Addr] = {}
        self._scrypt_running: dict[int, Addr] = {}

    def addr(self, ip: str) -> Addr:
        key = address_key(ip)
        a = self.addrs.get(key)
        if a is None:
            if len(self.addrs) > 2 * self.cfg.max_connections + 1000:  # forget idle addresses
                now, window = self._out.now, self.cfg.attempts_window
                for k in [k for k, v in self.addrs.items() if v.idle(now, window)]:
                    del self.addrs[k]
            a = self.addrs[key] = Addr(key)
        return a

    # ------------------------------------------------------------------ connections

    def tcp_opened(self, ip: str) -> bool:
        """A TCP connection from ``ip`` may start its WebSocket handshake (else it is closed at once)."""
        a = self.addr(ip)
        if a.handshakes >= self.cfg.max_handshakes_per_ip or a.handshakes + a.conns > self.cfg.max_connections_per_ip:
            self.limit_ip(ip, "handshakes_per_ip", "too_many_handshakes")
            return False
        if not self._new_connection_allowed(a):
            self.limit_ip(ip, "connection_rate", "too_many_new_connections")
            return False
        a.handshakes += 1
        return True

    def _new_connection_allowed(self, a: Addr) -> bool:
        if a.new_bucket is None:
            a.new_bucket = TokenBucket.full(
                self.cfg.new_connections_per_ip_per_s, self.cfg.new_connections_burst, self._out.now
            )
        return a.new_bucket.take(self._out.now)

    def handshake_done(self, ip: str, ok: bool) -> None:
        a = self.addr(ip)
        a.handshakes = max(0, a.handshakes - 1)
        if not ok:  # (its own slowness: it kept nobody else out, so it does not count as a refusal of the address)
            self.limit_ip(ip, "handshake", "handshake_timeout", locks_out=False)

    def refusal(self, ip: str, addr: Addr, connections: int) -> CloseReason | None:
        """Why a connection from ``ip`` that completed its handshake is refused (``connections``: how many the
        relay holds), or None."""
        if connections >= self.cfg.max_connections:
            self.limit_ip(ip, "connections", "relay_full")
            return CloseReason.RELAY_FULL
        if addr.conns >= self.cfg.max_connections_per_ip:
            self.limit_ip(ip, "connections_per_ip", "too_many_connections")
            return CloseReason.TOO_MANY_CONNECTIONS
        if self.cfg.trust_proxy and not self._new_connection_allowed(addr):
            # behind a proxy the rate is counted here (before the handshake every connection is the proxy's)
            self.limit_ip(ip, "connection_rate", "too_many_new_connections")
            return CloseReason.TOO_MANY_CONNECTIONS
        return None

    def limit_ip(self, ip: str, limit: str, reason: str, *, locks_out: bool = True) -> None:
        """A connection from ``ip`` refused before it could say anything (a per-address connection limit):
        ``locks_out``, a seat holder coming back from that address may have been kept out."""
        a = self.addrs.get(address_key(ip))
        if a is not None and locks_out:
            a.refused_at = self._out.now
        self._out.metrics.limit_hit(limit)
        self._out.log("limit_hit", limit=limit, reason=reason, ip=ip)

    # ------------------------------------------------------------------ failed attempts

    def fail(self, conn: Conn, re: str, r: Refused) -> Refused:
        """A failed attempt (unknown room, wrong password, bad token), refused with ``r``: counted per
        connection and per address (across reconnects); either limit closes the connection
        (``too_many_attempts``)."""
        out, now = self._out, self._out.now
        out.metrics.join_failed(r.code)
        out.log("attempt_failed", conn=conn.id, ip=conn.ip, op=re, code=r.code)
        conn.failures.append(now)
        conn.addr.failures.append(now)
        window = self.cfg.attempts_window
        if _recent(conn.failures, now, window) >= self.cfg.attempts_per_conn:
            out.refused(conn, re, r)
            out.limit(conn, "join_attempts", "too_many_attempts", scope="connection")
            out.kick(conn, CloseReason.TOO_MANY_ATTEMPTS)
        elif _recent(conn.addr.failures, now, window) >= self.cfg.attempts_per_ip:
            out.refused(conn, re, r)
            out.limit(conn, "address_attempts", "too_many_attempts", scope="address")
            out.kick(conn, CloseReason.TOO_MANY_ATTEMPTS)
        return r

    def check_attempts(self, conn: Conn, re: str) -> None:
        """An address over its failed-attempt budget may not try again (from any connection) for a while."""
        out = self._out
        if _recent(conn.addr.failures, out.now, self.cfg.attempts_window) >= self.cfg.attempts_per_ip:
            out.limit(conn, "address_attempts", "too_many_attempts", scope="address", op=re)
            r = refuse(Refusal.TOO_MANY_ATTEMPTS)
            out.refused(conn, re, r)
            out.kick(conn, CloseReason.TOO_MANY_ATTEMPTS)
            raise r

    def check_room_attempts(self, conn: Conn, room: Room) -> None:
        """Wrong passwords lock out the guessing address (for this room), never the room itself."""
        f = conn.addr.room_failures.get(room.code)
        if f is not None and _recent(f, self._out.now, self.cfg.attempts_window) >= self.cfg.attempts_per_room:
            self._out.limit(conn, "join_attempts", "too_many_attempts", scope="room", **room.log_id())
            raise refuse(Refusal.TOO_MANY_ATTEMPTS, "room")

    def wrong_password(self, conn: Conn, room: Room | None, re: str = "join") -> Refused:
        """A wrong password for ``room`` (None: it closed meanwhile) from ``conn`` (a ``join`` or a ``watch``):
        counted, and refused."""
        if room is not None:
            conn.addr.room_failures.setdefault(room.code, deque()).append(self._out.now)
        return self.fail(conn, re, refuse(Refusal.WRONG_PASSWORD))

    def bar(self, conn: Conn, room: Room) -> None:
        """``conn``'s address may not join ``room`` again within ``attempts_window`` (a joiner removed for
        silence)."""
        f = conn.addr.room_failures.setdefault(room.code, deque())
        f.extend([self._out.now] * self.cfg.attempts_per_room)

    # ------------------------------------------------------------------ rooms per address

    def check_address_rooms(self, conn: Conn, re: str) -> None:
        """Rooms are budgeted per address: all its open rooms, and those waiting for an opponent."""
        mine = conn.addr.rooms
        if len(mine) >= self.cfg.max_rooms_per_ip:
            self._out.limit(conn, "rooms_per_ip", "too_many_open_rooms", op=re)
            raise refuse(Refusal.TOO_MANY_OPEN_ROOMS, rooms=_rooms(self.cfg.max_rooms_per_ip))
        if re == "create" and sum(1 for r in mine if r.waiting) >= self.cfg.max_waiting_rooms_per_ip:
            self._out.limit(conn, "waiting_rooms", "too_many_waiting_rooms")
            raise refuse(Refusal.TOO_MANY_WAITING_ROOMS, rooms=_rooms(self.cfg.max_waiting_rooms_per_ip))

    # ------------------------------------------------------------------ watchers per address

    def check_watching(self, conn: Conn) -> None:
        """Watchers are budgeted per address: ``max_watching_per_ip`` connections watching at once."""
        most = self.cfg.max_watching_per_ip
        if conn.addr.watching >= most:
            self._out.limit(conn, "watching_per_ip", "too_many_watching")
            raise refuse(Refusal.TOO_MANY_WATCHING, most=most)

    def take_watch(self, conn: Conn) -> None:
        """A ``watch`` about to be let in (each sends the room's log again): ``watches_per_ip_per_s`` for an
        address, a burst of twice ``max_watching_per_ip`` (``too_many_requests``; the connection stays)."""
        a, cfg = conn.addr, self.cfg
        if a.watch_bucket is None:
            a.watch_bucket = TokenBucket.full(cfg.watches_per_ip_per_s, 2 * cfg.max_watching_per_ip, self._out.now)
        if not a.watch_bucket.take(self._out.now):
            self._out.limit(conn, "watches_per_ip", "too_many_requests")
            raise refuse(Refusal.TOO_MANY_REQUESTS, "watch")

    # ------------------------------------------------------------------ password work

    def start_password_work(
        self, conn: Conn, op: PasswordOp, request: dict[Any, Any], effect: HashPassword | VerifyPassword
    ) -> None:
        """Password work is budgeted per address: one at a time, a few per second. Within budget, ``conn`` waits
        for ``effect`` (the driver's :meth:`~koikoi.relay.core.RelayCore.work_done` goes on with ``request``)."""
        a, now = conn.addr, self._out.now
        if a.scrypt_bucket is None:
            a.scrypt_bucket = TokenBucket.full(self.cfg.scrypt_per_ip_per_s, 10, now)
        if a.scrypt_running >= self.cfg.scrypt_per_ip or not a.scrypt_bucket.take(now):
            self._out.limit(conn, "scrypt", "too_many_password_checks", op=op)
            raise refuse(Refusal.TOO_MANY_PASSWORD_CHECKS)
        conn.work = PasswordWork(op, request)
        a.scrypt_running += 1
        self._scrypt_running[conn.id] = a
        self._out.password_work(effect)

    def password_work_done(self, cid: int) -> None:
        a = self._scrypt_running.pop(cid, None)
        if a is not None:
            a.scrypt_running -= 1
