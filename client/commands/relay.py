"""``koikoi relay``: run a relay server (rooms, lobby, limits); see spec/relay.md."""

from __future__ import annotations

import argparse
import re
import signal
import socket
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import trio
from nacl.signing import SigningKey

from ...protocol.witness import fingerprint
from ...relay.keys import RelayKeyError, default_key_path, load_or_create_key
from ...relay.observe import EventLog
from ...relay.server import ArchiveHook, HttpRoutes, Relay, RelayConfig, tune_gc
from ...support import first_of
from .. import archive
from ..argtypes import seconds, whole_number

COMMAND = "relay"
HELP = "run a relay: pairs two players in a room and forwards their frames"
DESCRIPTION = (
    "Run a relay server. It pairs two players in a room and forwards their frames untouched (it can neither "
    "read a move's meaning nor forge one), and witnesses time: it signs silence certificates with its own "
    "Ed25519 key (created on first start in $KOIKOI_STATE_DIR or the user state dir, or --key FILE). Prints "
    "the URL it listens on (ws://HOST:PORT), then its key's fingerprint, logs one JSON line per event to "
    "stderr, serves Prometheus metrics on --metrics-port, and on SIGINT or SIGTERM closes every connection "
    "with a reason and exits 0. With --archive DIR it keeps a public archive: every finished match it carried "
    "that audits valid with a result (a private room's only if both players said --publish), written there as "
    "a transcript and served read-only on its own port (GET /matches, GET /matches/ID.koikoi), so that "
    "`koikoi ratings http://HOST:PORT/matches` recomputes its league table. For the Internet, put it behind a "
    "TLS reverse proxy (wss://)."
)

_D = RelayConfig()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default=_D.host, help=f"address to listen on (default {_D.host})")
    p.add_argument(
        "--port",
        type=whole_number(0, 65535),
        default=_D.port,
        help=f"port to listen on, 0 for any free port (default {_D.port})",
    )
    p.add_argument(
        "--max-rooms",
        type=whole_number(1),
        default=_D.max_rooms,
        metavar="N",
        help=f"rooms open at once, in all (default {_D.max_rooms})",
    )
    p.add_argument(
        "--metrics-port",
        type=whole_number(0, 65535),
        default=None,
        metavar="N",
        help="serve Prometheus metrics at http://METRICS_HOST:N/metrics (default: off)",
    )
    p.add_argument("--metrics-host", default=_D.metrics_host, help=f"address for metrics (default {_D.metrics_host})")
    p.add_argument(
        "--key",
        type=Path,
        metavar="FILE",
        help="the relay's Ed25519 key file, created there if missing (default: relay.key in $KOIKOI_STATE_DIR, "
        "else in the user state dir)",
    )
    g = p.add_argument_group("limits")
    g.add_argument(
        "--max-connections",
        type=whole_number(1),
        default=_D.max_connections,
        metavar="N",
        help=f"connections at once, in all (default {_D.max_connections})",
    )
    g.add_argument(
        "--max-connections-per-ip",
        type=whole_number(1),
        default=_D.max_connections_per_ip,
        metavar="N",
        help=f"connections at once from one address (default {_D.max_connections_per_ip})",
    )
    g.add_argument(
        "--max-frame-bytes",
        type=whole_number(16),
        default=_D.max_frame_bytes,
        metavar="N",
        help=f"largest player frame in bytes (default {_D.max_frame_bytes})",
    )
    g.add_argument(
        "--frames-per-s",
        type=seconds,
        default=_D.frames_per_s,
        metavar="R",
        help=f"messages per second per connection, sustained (default {_D.frames_per_s:g})",
    )
    g.add_argument(
        "--burst",
        type=whole_number(1),
        default=_D.burst,
        metavar="N",
        help=f"messages a connection may send at once above the rate (default {_D.burst})",
    )
    g.add_argument(
        "--idle-timeout",
        type=seconds,
        default=_D.idle_timeout,
        metavar="S",
        help=f"close a connection silent this long, pings unanswered (default {_D.idle_timeout:g})",
    )
    g.add_argument(
        "--ping-interval",
        type=seconds,
        default=_D.ping_interval,
        metavar="S",
        help=f"ping a connection silent this long (default {_D.ping_interval:g})",
    )
    g.add_argument(
        "--grace",
        type=seconds,
        default=_D.grace,
        metavar="S",
        help=f"how long a seat waits for its holder to come back (default {_D.grace:g})",
    )
    g.add_argument(
        "--seat-buffer-frames",
        type=whole_number(1),
        default=_D.seat_buffer_frames,
        metavar="N",
        help=f"frames kept for an absent seat before the room closes (default {_D.seat_buffer_frames})",
    )
    g.add_argument(
        "--seat-buffer-bytes",
        type=whole_number(1),
        default=_D.seat_buffer_bytes,
        metavar="N",
        help=f"bytes kept for an absent seat before the room closes (default {_D.seat_buffer_bytes})",
    )
    g.add_argument(
        "--attempts-per-conn",
        type=whole_number(1),
        default=_D.attempts_per_conn,
        metavar="N",
        help="failed joins (wrong password, unknown room, bad token) per connection per window before "
        f"it is closed (default {_D.attempts_per_conn})",
    )
    g.add_argument(
        "--attempts-per-room",
        type=whole_number(1),
        default=_D.attempts_per_room,
        metavar="N",
        help="wrong passwords for one room from one address per window before that address is refused "
        f"(default {_D.attempts_per_room})",
    )
    g.add_argument(
        "--attempts-window",
        type=seconds,
        default=_D.attempts_window,
        metavar="S",
        help=f"the window for failed attempts (default {_D.attempts_window:g})",
    )
    g.add_argument(
        "--max-list",
        type=whole_number(1),
        default=_D.max_list,
        metavar="N",
        help=f"rooms in one lobby list (default {_D.max_list})",
    )
    g.add_argument(
        "--max-watchers-per-room",
        type=whole_number(1),
        default=_D.max_watchers_per_room,
        metavar="N",
        help=f"connections watching one room at once (default {_D.max_watchers_per_room})",
    )
    g.add_argument(
        "--watch-log-frames",
        type=whole_number(1),
        default=_D.watch_log_frames,
        metavar="N",
        help="frames a room's log keeps for late watchers and the archive; then it stops growing "
        f"(default {_D.watch_log_frames})",
    )
    g.add_argument(
        "--watch-log-bytes",
        type=whole_number(1),
        default=_D.watch_log_bytes,
        metavar="N",
        help=f"bytes of frames a room's log keeps; then it stops growing (default {_D.watch_log_bytes})",
    )
    g.add_argument(
        "--watch-log-total-bytes",
        type=whole_number(1),
        default=_D.watch_log_total_bytes,
        metavar="N",
        help="bytes of frames all the rooms' logs keep together; then every log stops growing "
        f"(default {_D.watch_log_total_bytes})",
    )
    g.add_argument(
        "--handshake-timeout",
        type=seconds,
        default=_D.handshake_timeout,
        metavar="S",
        help=f"time allowed for the WebSocket handshake (default {_D.handshake_timeout:g})",
    )
    a = p.add_argument_group("per address (an IPv4 address or an IPv6 /64)")
    a.add_argument(
        "--max-handshakes-per-ip",
        type=whole_number(1),
        default=_D.max_handshakes_per_ip,
        metavar="N",
        help=f"connections from one address still in the WebSocket handshake (default {_D.max_handshakes_per_ip})",
    )
    a.add_argument(
        "--connect-rate-per-ip",
        type=seconds,
        default=_D.new_connections_per_ip_per_s,
        metavar="R",
        help="new connections per second from one address, sustained; more are closed before the handshake "
        f"(default {_D.new_connections_per_ip_per_s:g})",
    )
    a.add_argument(
        "--connect-burst-per-ip",
        type=whole_number(1),
        default=_D.new_connections_burst,
        metavar="N",
        help=f"new connections from one address at once above that rate (default {_D.new_connections_burst})",
    )
    a.add_argument(
        "--attempts-per-ip",
        type=whole_number(1),
        default=_D.attempts_per_ip,
        metavar="N",
        help="failed joins, code guesses and bad tokens from one address per window, across connections "
        f"(default {_D.attempts_per_ip})",
    )
    a.add_argument(
        "--max-waiting-rooms-per-ip",
        type=whole_number(1),
        default=_D.max_waiting_rooms_per_ip,
        metavar="N",
        help=f"rooms from one address waiting for an opponent (default {_D.max_waiting_rooms_per_ip})",
    )
    a.add_argument(
        "--max-rooms-per-ip",
        type=whole_number(1),
        default=_D.max_rooms_per_ip,
        metavar="N",
        help=f"open rooms created or rebuilt from one address, in any state (default {_D.max_rooms_per_ip})",
    )
    a.add_argument(
        "--waiting-grace",
        type=seconds,
        default=_D.waiting_grace,
        metavar="S",
        help=f"close a waiting room this long after its creator left (default {_D.waiting_grace:g})",
    )
    a.add_argument(
        "--first-frame-timeout",
        type=seconds,
        default=_D.first_frame_timeout,
        metavar="S",
        help="remove a joiner that sends nothing this long; the room goes back to the lobby "
        f"(default {_D.first_frame_timeout:g})",
    )
    a.add_argument(
        "--max-watching-per-ip",
        type=whole_number(1),
        default=_D.max_watching_per_ip,
        metavar="N",
        help=f"connections watching (any rooms) from one address at once (default {_D.max_watching_per_ip})",
    )
    a.add_argument(
        "--watch-rate-per-ip",
        type=seconds,
        default=_D.watches_per_ip_per_s,
        metavar="R",
        help="watch requests per second from one address, sustained (a burst of twice --max-watching-per-ip): each "
        f"sends the room's log again (default {_D.watches_per_ip_per_s:g})",
    )
    a.add_argument(
        "--scrypt-per-ip",
        type=whole_number(1),
        default=_D.scrypt_per_ip,
        metavar="N",
        help=f"password checks running at once for one address (default {_D.scrypt_per_ip})",
    )
    ar = p.add_argument_group("the public archive")
    ar.add_argument(
        "--archive",
        type=Path,
        metavar="DIR",
        help="keep a public archive in DIR (created if missing): each finished match that audits valid with a "
        "result, as DIR/<match id>.koikoi (a private room's only if both players said --publish), served at "
        "GET /matches and GET /matches/ID.koikoi",
    )
    ar.add_argument(
        "--archive-url",
        metavar="URL",
        help="the archive's public address, as players reach it (https://relay.example.org, a path prefix if "
        "your proxy adds one): the index's next-page links are built from it (default: http://HOST:PORT, "
        "where the relay listens)",
    )
    p.add_argument("--no-restore", action="store_true", help="do not rebuild rooms from seat tickets after a restart")
    p.add_argument(
        "--trust-proxy",
        action="store_true",
        help="take the client address from X-Forwarded-For / X-Real-IP (only behind your own proxy)",
    )
    p.add_argument("--quiet", action="store_true", help="no event logs on stderr")


def _config(args: argparse.Namespace) -> RelayConfig:
    return RelayConfig(
        host=args.host,
        port=args.port,
        max_rooms=args.max_rooms,
        max_connections=args.max_connections,
        max_connections_per_ip=args.max_connections_per_ip,
        max_frame_bytes=args.max_frame_bytes,
        frames_per_s=args.frames_per_s,
        burst=args.burst,
        idle_timeout=args.idle_timeout,
        ping_interval=args.ping_interval,
        grace=args.grace,
        seat_buffer_frames=args.seat_buffer_frames,
        seat_buffer_bytes=args.seat_buffer_bytes,
        attempts_per_conn=args.attempts_per_conn,
        attempts_per_room=args.attempts_per_room,
        attempts_window=args.attempts_window,
        max_list=args.max_list,
        handshake_timeout=args.handshake_timeout,
        max_handshakes_per_ip=args.max_handshakes_per_ip,
        new_connections_per_ip_per_s=args.connect_rate_per_ip,
        new_connections_burst=args.connect_burst_per_ip,
        attempts_per_ip=args.attempts_per_ip,
        max_waiting_rooms_per_ip=args.max_waiting_rooms_per_ip,
        max_rooms_per_ip=args.max_rooms_per_ip,
        waiting_grace=args.waiting_grace,
        first_frame_timeout=args.first_frame_timeout,
        scrypt_per_ip=args.scrypt_per_ip,
        max_watchers_per_room=args.max_watchers_per_room,
        max_watching_per_ip=args.max_watching_per_ip,
        watches_per_ip_per_s=args.watch_rate_per_ip,
        watch_log_frames=args.watch_log_frames,
        watch_log_bytes=args.watch_log_bytes,
        watch_log_total_bytes=args.watch_log_total_bytes,
        archive=args.archive is not None,
        restore=not args.no_restore,
        trust_proxy=args.trust_proxy,
        metrics_host=args.metrics_host,
        metrics_port=args.metrics_port,
    )


async def _main(relay: Relay) -> int:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            await nursery.start(relay.serve)
            print(relay.url, flush=True)
            print(f"witness key fingerprint: {relay.fingerprint}", flush=True)
            async for signum in signals:
                relay.log("signal", signal=signal.Signals(signum).name)
                relay.shutdown()
                break
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        config = _config(args)
        config.check()
    except ValueError as e:  # name the options as typed: --ping-interval, not ping_interval
        text = re.sub(r"\b([a-z]+(?:_[a-z0-9]+)+)\b", lambda m: "--" + m.group(1).replace("_", "-"), str(e))
        print(f"koikoi relay: {text}", file=sys.stderr)
        return 2
    wrong = _archive_url_problem(args)
    if wrong is not None:
        print(f"koikoi relay: {wrong}", file=sys.stderr)
        return 2
    bad = _unresolvable(config)
    if bad is not None:  # before the key is created: a typo in --host leaves nothing behind
        print(f"koikoi relay: cannot listen on {bad}", file=sys.stderr)
        return 1
    folder = args.archive.expanduser() if args.archive is not None else None
    if folder is not None:
        why = archive.ready(folder)
        if why is not None:
            print(f"koikoi relay: --archive {folder}: {why}", file=sys.stderr)
            return 1
    try:
        key, key_path, created = load_or_create_key(args.key if args.key is not None else default_key_path())
    except RelayKeyError as e:
        print(f"koikoi relay: {e.message}", file=sys.stderr)
        return 2 if e.usage else 1
    log = EventLog(enabled=not args.quiet)
    on_archive: ArchiveHook | None = None
    routes: HttpRoutes | None = None
    if folder is not None:
        # the index's links: the public address given, else where the relay listens (known once it does)
        on_archive, routes = archive_hooks(folder, key, log, lambda: args.archive_url or http_url(relay.url))
    relay = Relay(config, log=log, key=key, on_archive=on_archive, http_routes=routes)
    log("relay_key", path=str(key_path), created=created, fingerprint=relay.fingerprint)
    if folder is not None:
        log("archive", dir=str(folder.resolve()), matches=archive.count(folder))
    tune_gc()
    try:
        return trio.run(_main, relay)
    except (OSError, BaseExceptionGroup) as e:
        err = first_of(e, OSError)
        if err is None:
            raise
        # the relay's own port is bound first: once it is, the failure is the metrics port's
        where = (
            f"{args.metrics_host}:{args.metrics_port} (--metrics-port)"
            if relay.port and args.metrics_port is not None
            else f"{args.host}:{args.port}"
        )
        print(f"koikoi relay: cannot listen on {where}: {err.strerror or err}", file=sys.stderr)
        return 1


def archive_hooks(
    folder: Path, key: SigningKey, log: EventLog, base_url: Callable[[], str]
) -> tuple[ArchiveHook, HttpRoutes]:
    """The relay's ``on_archive`` and ``http_routes`` hooks for an archive in ``folder`` (``--archive``): each
    room handed over followed with the Spectator and written if it may be (:func:`koikoi.client.archive.keep`),
    the folder served at ``/matches``; ``base_url()`` the archive's public address (``--archive-url``)."""
    public_key = bytes(key.verify_key)
    return archive.archiver(folder, public_key, log), archive.routes(folder, fingerprint(public_key), base_url=base_url)


def http_url(ws_url: str) -> str:
    """``ws://HOST:PORT`` → ``http://HOST:PORT`` (``wss`` → ``https``)."""
    return "http" + ws_url.removeprefix("ws")


def _archive_url_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with ``--archive-url`` (one line), None when nothing is."""
    url = args.archive_url
    if url is None:
        return None
    if args.archive is None:
        return "--archive-url is the address of the archive --archive DIR keeps: give --archive too"
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        return f"--archive-url: not an http(s) address without a query: {url!r} (like https://relay.example.org)"
    return None


def _unresolvable(config: RelayConfig) -> str | None:
    """``HOST:PORT (--option): why`` for the first listening address that is no address at all, else None."""
    wanted = [(config.host, config.port, "--host")]
    if config.metrics_port is not None:
        wanted.append((config.metrics_host, config.metrics_port, "--metrics-host"))
    for host, port, option in wanted:
        try:
            socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except (OSError, UnicodeError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else "not a host name or address"
            return f"{host}:{port} ({option}): {why}"
    return None
