"""``koikoi rooms``: the relay's witness fingerprint and each room's move time and deck (text), the fixed JSON
rows (``deck`` added by issue 11, every older key kept)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from nacl.signing import SigningKey

from koikoi.protocol.witness import fingerprint
from koikoi.relay.client import connect
from koikoi.relay.server import RelayConfig, open_relay

pytestmark = pytest.mark.net  # runs the koikoi command


async def rooms(url: str, tmp: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOIKOI_")}
    env["KOIKOI_CONFIG_DIR"] = str(tmp / "config")
    return await trio.run_process(
        [sys.executable, "-m", "koikoi.client.cli", "rooms", "--relay", url, *extra],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env=env,
    )


async def test_rooms_shows_the_witness_and_the_move_time(tmp_path: Path) -> None:
    key = SigningKey(bytes(range(32)))
    async with open_relay(RelayConfig(port=0), key=key) as relay, connect(relay.url) as a, connect(relay.url) as b:
        await a.create_room(rounds=12, move_time_s=45, deck="sealed")
        await b.create_room(move_time_s=0)  # a creator that names no deck: shared
        r = await rooms(relay.url, tmp_path)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.decode().splitlines()
        assert lines[0] == f"Relay {relay.url}, witness key fingerprint {fingerprint(bytes(key.verify_key))}"
        assert "MOVE TIME" in lines[2] and "DECK" in lines[2]
        assert "45 s" in lines[3] and "none" in lines[4]
        assert " sealed " in lines[3] and " shared " in lines[4]
        r = await rooms(relay.url, tmp_path, "--json")
        assert r.returncode == 0, r.stderr
        rows = json.loads(r.stdout)
        assert isinstance(rows, list) and len(rows) == 2
        keys = {"room", "rounds", "double_at_8", "password", "waiting_s", "deck", "watchers", "watching"}
        assert [set(row) for row in rows] == [keys] * 2
        assert [row["deck"] for row in rows] == ["sealed", "shared"]


async def test_rooms_against_a_web_server_is_one_line(tmp_path: Path) -> None:
    async with open_relay(RelayConfig(port=0, metrics_port=0)) as relay:
        url = f"ws://127.0.0.1:{relay.metrics_port}"  # the metrics port: a web server, not a relay
        r = await rooms(url, tmp_path)
    assert r.returncode == 1 and r.stdout == b""
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "<" not in err and "not a koikoi relay" in err and "HTTP 200" in err, err
