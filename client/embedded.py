"""The relay ``koikoi host`` runs itself when no other is configured (and ``koikoi resume`` again)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator

import trio
from nacl.signing import SigningKey

from ..relay.observe import EventLog
from ..relay.server import Relay, RelayConfig, open_relay
from ..relay.support import first_of
from .output import NetError

__all__ = ["DEFAULT_LISTEN", "embedded_relay", "linger", "parse_listen", "public_url"]

DEFAULT_LISTEN = "127.0.0.1:7878"


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
        while True:
            r = relay.rooms.get(room)
            if r is None or r.closed is not None or r.seats[1].conn is None:
                return
            await trio.sleep(0.05)


def public_url(relay: Relay) -> str:
    """The URL a friend uses: a wildcard listen address is replaced by this machine's name."""
    host = relay.cfg.host
    if host in ("0.0.0.0", "::", ""):
        return f"ws://{socket.gethostname()}:{relay.port}"
    return relay.url
