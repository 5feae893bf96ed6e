"""`koikoi host` whose own relay cannot listen: words and an error event, not an exception group."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.net  # starts real koikoi processes and relays


def test_host_on_a_busy_port_says_why(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = dict(os.environ, KOIKOI_CONFIG_DIR=str(tmp_path / "c"), KOIKOI_DATA_DIR=str(tmp_path / "d"))
        env.pop("KOIKOI_RELAY", None)
        p = subprocess.run(
            [sys.executable, "-m", "koikoi.client", "host", "--bot", "greedy", "--json",
             "--listen", f"127.0.0.1:{port}"],
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip
    assert p.returncode == 1
    event = json.loads(p.stdout.strip().splitlines()[-1])
    assert event["event"] == "error" and event["code"] == "relay_unreachable"
    assert f"127.0.0.1:{port}" in event["message"] and "in use" in event["message"]
    assert "Traceback" not in p.stderr and "ExceptionGroup" not in p.stderr
