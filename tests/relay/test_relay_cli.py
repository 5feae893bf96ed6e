"""The real ``koikoi relay`` process: prints its URL, serves, and exits 0 on SIGTERM / SIGINT."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
import trio

from koikoi.relay.client import PeerEvent, RelayClosed, connect

pytestmark = pytest.mark.net  # starts real koikoi processes and relays


async def start_relay(*extra: str) -> tuple[trio.Process, str, trio.abc.ReceiveStream]:
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "koikoi.client.cli", "relay", "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    line = b""
    with trio.fail_after(20):
        while not line.endswith(b"\n"):
            chunk = await proc.stdout.receive_some(1)
            assert chunk, "koikoi relay exited before printing its URL"
            line += chunk
    url = line.decode().strip()
    assert url.startswith("ws://127.0.0.1:"), url
    return proc, url, proc.stderr


async def read_all(stream: trio.abc.ReceiveStream) -> bytes:
    data = b""
    while chunk := await stream.receive_some(65536):
        data += chunk
    return data


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_koikoi_relay_process_serves_and_stops_cleanly(signum: int) -> None:
    proc, url, stderr = await start_relay("--grace", "5", "--max-rooms", "10")
    try:
        async with connect(url) as a, connect(url) as b:
            ta = await a.create_room(rounds=12, double_at_8=False, password="pw")
            [listed] = await b.list_rooms()
            assert (listed.room, listed.doubling, listed.password) == (ta.room, "No ×2 at 8+", True)
            await b.join(ta.room, password="pw")
            with trio.fail_after(5):
                ev = await a.receive()
            assert isinstance(ev, PeerEvent) and ev.event == "joined"
            await a.send(b"hello")
            with trio.fail_after(5):
                frame = await b.receive()
            assert getattr(frame, "data", None) == b"hello"
            proc.send_signal(signum)
            for c in (a, b):
                with pytest.raises(RelayClosed) as ei, trio.fail_after(10):
                    while True:
                        await c.receive()
                assert ei.value.code == "shutdown"
        with trio.fail_after(15):
            log = await read_all(stderr)
            assert await proc.wait() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    records = [json.loads(line) for line in log.decode().splitlines()]
    names = [r["event"] for r in records]
    assert names[0] == "relay_started" and names[-1] == "relay_stopped"
    assert {"room_created", "room_joined", "signal"} <= set(names)
    assert b'"pw"' not in log  # no clear password
    assert b"hello" not in log


async def test_koikoi_relay_usage_and_listen_errors() -> None:
    bad = await trio.run_process(
        [sys.executable, "-m", "koikoi.client.cli", "relay", "--port", "70000"],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert bad.returncode == 2 and b"Traceback" not in bad.stderr
    bad = await trio.run_process(
        [sys.executable, "-m", "koikoi.client.cli", "relay", "--ping-interval", "10", "--idle-timeout", "5"],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.decode().strip() == "koikoi relay: --ping-interval must be shorter than --idle-timeout"
    proc, url, _ = await start_relay("--quiet")
    try:
        port = url.rsplit(":", 1)[1]
        busy = await trio.run_process(
            [sys.executable, "-m", "koikoi.client.cli", "relay", "--port", port, "--quiet"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        assert busy.returncode == 1
        assert busy.stderr.decode().startswith(f"koikoi relay: cannot listen on 127.0.0.1:{port}")
        assert b"Traceback" not in busy.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        with trio.fail_after(15):
            assert await proc.wait() == 0
