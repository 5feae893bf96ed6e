"""A relay URL that is not ws:// or wss:// is a usage error (exit 2), not an unreachable relay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.net  # starts real koikoi processes and relays


@pytest.mark.parametrize("url", ["notaurl", "http://127.0.0.1:7878", "ws://"])
def test_a_bad_relay_url_is_a_usage_error(tmp_path: Path, url: str) -> None:
    env = dict(os.environ, KOIKOI_CONFIG_DIR=str(tmp_path / "c"), KOIKOI_DATA_DIR=str(tmp_path / "d"))
    p = subprocess.run(
        [sys.executable, "-m", "koikoi.client", "rooms", "--relay", url, "--json"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert p.returncode == 2, (p.stdout, p.stderr)
    event = json.loads(p.stdout.strip().splitlines()[-1])
    assert event["code"] == "usage" and url in event["message"]
    assert "Traceback" not in p.stderr
