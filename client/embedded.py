"""The relay ``koikoi host`` runs itself when no other is configured (and ``koikoi resume`` again)."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import urllib.parse
from collections.abc import AsyncIterator, Iterable

import trio
from nacl.signing import SigningKey

from ..relay.observe import EventLog
from ..relay.server import Relay, RelayConfig, open_relay
from ..support import first_of
from .output import NetError

__all__ = [
    "DEFAULT_LISTEN",
    "LAN_HOST",
    "best_first",
    "embedded_relay",
    "is_loopback",
    "linger",
    "network_addresses",
    "parse_listen",
    "public_url",
]

DEFAULT_LISTEN = "127.0.0.1:7878"
LAN_HOST = "0.0.0.0"
"""Where ``koikoi host --lan`` listens: every IPv4 interface (the addresses :func:`network_addresses` finds)."""
_WILDCARDS = ("0.0.0.0", "::", "")


def is_loopback(url_or_host: str) -> bool:
    """Whether a relay URL (or a host) names this machine's loopback: ``127.x``, ``::1``, ``localhost``."""
    host = urllib.parse.urlsplit(url_or_host).hostname if "//" in url_or_host else url_or_host.strip("[]")
    if not host:
        return False
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def best_first(addresses: Iterable[str], routed: Iterable[str] = ()) -> list[str]:
    """IPv4 addresses a friend can reach this machine at, best first: the ones the default route leaves from
    (``routed``), then private (a home or office network, CGNAT), then any other; never loopback, link-local,
    unspecified or multicast; each once."""
    first = set(routed)
    seen: dict[str, int] = {}
    for i, text in enumerate([*routed, *addresses]):
        try:
            ip = ipaddress.IPv4Address(text)
        except ValueError:
            continue
        if ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast or str(ip) in seen:
            continue
        seen[str(ip)] = i
    cgnat = ipaddress.IPv4Network("100.64.0.0/10")

    def rank(a: str) -> tuple[int, int]:
        ip = ipaddress.IPv4Address(a)
        return (0 if a in first else 1 if ip.is_private or ip in cgnat else 2, seen[a])

    return sorted(seen, key=rank)


def network_addresses() -> list[str]:
    """This machine's IPv4 addresses on its networks, best first (:func:`best_first`): the one its default
    route leaves from (a UDP socket "connected" to a documentation address: nothing is sent), the host
    name's, and on Linux every interface's."""
    routed: list[str] = []
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))
        routed.append(str(s.getsockname()[0]))
    others: list[str] = []
    with contextlib.suppress(OSError, UnicodeError):
        others += [str(ai[4][0]) for ai in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    others += _interface_addresses()
    return best_first(others, routed)


def _interface_addresses() -> list[str]:
    """Each network interface's IPv4 address (Linux: the SIOCGIFADDR ioctl; elsewhere none)."""
    try:
        import fcntl
        import struct
    except ImportError:  # pragma: no cover - not on Windows
        return []
    found = []
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _index, name in socket.if_nameindex():
            with contextlib.suppress(OSError):
                req = struct.pack("256s", name.encode()[:15])
                found.append(socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x8915, req)[20:24]))  # SIOCGIFADDR
    return found


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6); ValueError naming what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise ValueError(f"--listen wants HOST:PORT, not {text!r}")
    host = host.strip("[]")
    try:
        p = int(port)
    except ValueError:
        raise ValueError(f"--listen: {port!r} is not a port number") from None
    if not 0 <= p <= 65535:
        raise ValueError(f"--listen: port {p} is not in 0..65535")
    return host, p


@contextlib.asynccontextmanager
async def embedded_relay(listen: str, grace: float | None, key: SigningKey) -> AsyncIterator[Relay]:
    """A relay in this program (``koikoi host`` without --relay), quiet, for the duration of the block.

    ``key`` signs its silence certificates: this program is then the match's time witness. The host
    keeps it in its seat file, so that ``koikoi resume`` runs the relay again with the same key (both
    HELLOs bound it: a certificate signed with another key would not count)."""
    host, port = parse_listen(listen)
    cfg = RelayConfig(host=host, port=port)
    if grace is not None:
        cfg.grace = grace
    started = False
    try:
        async with open_relay(cfg, log=EventLog(enabled=False), key=key) as relay:
            started = True
            yield relay
    except BaseException as exc:  # trio wraps the listen error in an exception group
        err = None if started else first_of(exc, OSError)
        if err is None:
            raise
        raise NetError(
            "relay_unreachable",
            f"cannot start a relay on {listen}: {err.strerror or err} (is another relay running there? "
            "use --listen HOST:PORT, or --relay URL to use that one)",
        ) from None


async def linger(relay: Relay, room: str, seconds: float) -> None:
    """Keep an embedded relay up until the opponent is done with the room (at most ``seconds``)."""
    with trio.move_on_after(seconds):
        while relay.joiner_connected(room):
            await trio.sleep(0.05)


def public_url(relay: Relay, addresses: list[str] | None = None) -> str:
    """The URL a friend uses: a wildcard listen address is replaced by this machine's best address on its
    networks (``addresses``, else :func:`network_addresses`; its host name when it has none)."""
    host = relay.cfg.host
    if host in _WILDCARDS:
        found = network_addresses() if addresses is None else addresses
        return f"ws://{found[0] if found else socket.gethostname()}:{relay.port}"
    return relay.url
