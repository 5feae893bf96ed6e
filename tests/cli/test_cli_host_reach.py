"""The way from ``koikoi host`` to a friend on another machine: a host whose relay is loopback says so and
shows what works (``--lan``, this machine's addresses best first, a relay both can reach); ``--lan`` listens
on all interfaces only when asked; a shared room's join line carries the ``--deck shared`` it needs."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pexpect
import pytest

from koikoi.client.commands.host import join_command, listen_address, other_networks, reach_lines
from koikoi.client.embedded import best_first, is_loopback, network_addresses, public_url
from koikoi.client.output import NetError
from koikoi.relay.server import Relay

PY = sys.executable


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KOIKOI_", "LC_", "COLUMNS", "LINES"))}
    env.update(KOIKOI_CONFIG_DIR=str(tmp / "config"), KOIKOI_DATA_DIR=str(tmp / "data"), LANG="C.UTF-8",
               TERM="xterm-256color")  # fmt: skip
    return env


@pytest.mark.net
def test_a_host_on_its_loopback_relay_says_who_can_join_and_what_works(tmp_path: Path) -> None:
    argv = ["-m", "koikoi.client", "host", "--plain", "--listen", "127.0.0.1:0", "--deck", "shared"]
    host = pexpect.spawn(PY, argv, env=_env(tmp_path), encoding="utf-8", timeout=60, dimensions=(50, 250))
    try:
        host.expect(r"koikoi join (\w+) --relay ws://127\.0\.0\.1:(\d+) --deck shared\r\n")
        room, port = host.match.group(1), host.match.group(2)
        host.expect("Waiting for your opponent")
        said = (host.before or "").replace("\r\n", "\n")
        addresses = network_addresses()  # (this machine's, as the host found them)
        want = [
            f"Only a player on this machine can join with that line: ws://127.0.0.1:{port} is a loopback address. "
            "What works:",
            f"  on your network: koikoi host --lan (it listens on all interfaces, as --listen 0.0.0.0:{port}); your "
            "friend then joins with the new room's CODE, one of:",
            *[f"    koikoi join CODE --relay ws://{a}:{port} --deck shared" for a in addresses],
            *([] if addresses else ["    (this machine has no network address but loopback: is it on a network?)"]),
            "  across the internet, a relay you can both reach (README: Running a relay for real):",
            f"    an SSH tunnel: ssh -N -R {port}:127.0.0.1:{port} you@SERVER (its sshd: GatewayPorts yes), and your "
            f"friend joins with --relay ws://SERVER:{port}",
            "    or a small VPS: koikoi relay --host 0.0.0.0 on it, and koikoi host --relay ws://VPS:7878 here",
        ]
        assert said.strip("\n").splitlines() == want, said
        assert room not in said  # (the new room's code is not this one)
        host.sendintr()
        host.expect("interrupted before anyone joined")
        host.expect(pexpect.EOF)
    finally:
        host.close(force=True)


def test_what_works_from_a_relay_of_ones_own_on_loopback() -> None:
    lines = reach_lines(
        "ws://localhost:9000", "AE4CA", "pw", "sealed", runs_relay=False, addresses=["192.168.1.5", "10.0.0.2"]
    )
    assert lines[:4] == [
        "Only a player on this machine can join with that line: ws://localhost:9000 is a loopback address. What works:",
        "  on your network, if that relay listens on all interfaces (koikoi relay --host 0.0.0.0):",
        "    koikoi join AE4CA --relay ws://192.168.1.5:9000 --password pw",
        "    koikoi join AE4CA --relay ws://10.0.0.2:9000 --password pw",
    ]
    assert "ssh -N -R 9000:127.0.0.1:9000" in lines[5] and "VPS" in lines[6] and len(lines) == 7
    assert reach_lines("ws://relay.example:7878", "AE4CA", None, None, runs_relay=False, addresses=["10.0.0.2"]) == []
    assert reach_lines("ws://192.168.1.5:7878", "AE4CA", None, None, runs_relay=True, addresses=["10.0.0.2"]) == []


@pytest.mark.parametrize(
    ("url", "loopback"),
    [("ws://127.0.0.1:7878", True), ("ws://127.1.2.3", True), ("ws://[::1]:7878", True), ("ws://localhost", True),
     ("wss://LOCALHOST.:443", True), ("ws://a.localhost", True), ("ws://192.168.1.5:7878", False),
     ("ws://my-laptop:7878", False), ("wss://relay.example", False), ("ws://[fd00::2]:1", False)],
)  # fmt: skip
def test_is_loopback(url: str, loopback: bool) -> None:
    assert is_loopback(url) is loopback


def test_addresses_best_first() -> None:
    found = ["127.0.1.1", "81.2.69.160", "169.254.3.4", "10.0.0.2", "fd00::2", "100.72.1.1", "192.168.1.5", "10.0.0.2"]
    assert best_first(found, routed=["192.168.1.5"]) == ["192.168.1.5", "10.0.0.2", "100.72.1.1", "81.2.69.160"]
    assert best_first([], routed=[]) == []
    assert all(not is_loopback(a) for a in network_addresses())


def test_lan_listens_on_all_interfaces_only_when_asked() -> None:
    assert listen_address(None, False) == "127.0.0.1:7878"
    assert listen_address("127.0.0.1:9000", False) == "127.0.0.1:9000"
    assert listen_address(None, True) == "0.0.0.0:7878"
    assert listen_address("0.0.0.0:9000", True) == "0.0.0.0:9000"
    assert listen_address("[::]:9000", True) == "[::]:9000"
    with pytest.raises(NetError, match=re.escape("--lan listens on all interfaces, --listen 127.0.0.1:9000 on one")):
        listen_address("127.0.0.1:9000", True)
    with pytest.raises(NetError, match="--listen wants HOST:PORT"):
        listen_address("9000", True)


def test_lan_names_the_best_address_then_the_others() -> None:
    relay = SimpleNamespace(cfg=SimpleNamespace(host="0.0.0.0"), port=40000, url="ws://0.0.0.0:40000")
    found = ["192.168.1.5", "10.0.0.2"]
    url = public_url(cast(Relay, relay), found)
    assert url == "ws://192.168.1.5:40000"
    assert other_networks(url, "AE4CA", None, "shared", found) == [
        "  or, from another of this machine's networks:",
        "    koikoi join AE4CA --relay ws://10.0.0.2:40000 --deck shared",
    ]
    assert other_networks(url, "AE4CA", None, "sealed", found[:1]) == []
    relay.cfg.host = "127.0.0.1"
    assert public_url(cast(Relay, relay), found) == "ws://0.0.0.0:40000"  # (its own URL: not a wildcard)


def test_a_shared_rooms_join_line_says_deck_shared() -> None:
    assert join_command("AE4CA", "ws://h:1", None, "shared") == "koikoi join AE4CA --relay ws://h:1 --deck shared"
    assert join_command("AE4CA", "ws://h:1", "a b", "sealed") == "koikoi join AE4CA --relay ws://h:1 --password 'a b'"
