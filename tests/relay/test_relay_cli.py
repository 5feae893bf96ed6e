"""The real ``koikoi relay`` process: prints its URL, serves, and exits 0 on SIGTERM / SIGINT."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from koikoi.relay.client import PeerNotice, RelayClosed, connect

pytestmark = pytest.mark.net  # starts real koikoi processes and relays


def relay_env(state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOIKOI_")}
    return {**env, "PYTHONUNBUFFERED": "1", "KOIKOI_STATE_DIR": str(state)}


async def read_line(stream: trio.abc.ReceiveStream) -> str:
    line = b""
    with trio.fail_after(20):
        while not line.endswith(b"\n"):
            chunk = await stream.receive_some(1)
            assert chunk, "koikoi relay exited before printing its banner"
            line += chunk
    return line.decode().strip()


async def start_relay(state: Path, *extra: str) -> tuple[trio.Process, str, str, trio.abc.ReceiveStream]:
    """Start ``koikoi relay``; its URL and key fingerprint (the banner's two lines on stdout)."""
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "koikoi.client.cli", "relay", "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=relay_env(state),
    )
    assert proc.stdout is not None and proc.stderr is not None
    url = await read_line(proc.stdout)
    assert url.startswith("ws://127.0.0.1:"), url
    line = await read_line(proc.stdout)
    assert line.startswith("witness key fingerprint: "), line
    return proc, url, line.rsplit(" ", 1)[1], proc.stderr


async def stop(proc: trio.Process) -> None:
    proc.send_signal(signal.SIGTERM)
    with trio.fail_after(15):
        assert await proc.wait() == 0


async def read_all(stream: trio.abc.ReceiveStream) -> bytes:
    data = b""
    while chunk := await stream.receive_some(65536):
        data += chunk
    return data


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_koikoi_relay_process_serves_and_stops_cleanly(signum: int, tmp_path: Path) -> None:
    proc, url, fp, stderr = await start_relay(tmp_path, "--grace", "5", "--max-rooms", "10")
    try:
        async with connect(url) as a, connect(url) as b:
            assert a.relay_fingerprint == fp
            ta = await a.create_room(rounds=12, double_at_8=False, password="pw")
            [listed] = await b.list_rooms()
            assert (listed.room, listed.doubling, listed.password) == (ta.room, "No ×2 at 8+", True)
            await b.join(ta.room, password="pw")
            with trio.fail_after(5):
                ev = await a.receive()
            assert isinstance(ev, PeerNotice) and ev.event == "joined"
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
    assert names[:2] == ["relay_key", "relay_started"] and names[-1] == "relay_stopped"
    assert records[0]["fingerprint"] == records[1]["fingerprint"] == fp
    assert records[0]["path"] == str(tmp_path / "relay.key")
    assert {"room_created", "room_joined", "signal"} <= set(names)
    assert b'"pw"' not in log  # no clear password
    assert b"hello" not in log


async def test_the_key_is_kept_across_restarts_and_can_be_given(tmp_path: Path) -> None:
    proc, url, first, _ = await start_relay(tmp_path / "state", "--quiet")
    await stop(proc)
    key = tmp_path / "state" / "relay.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    proc, url, again, _ = await start_relay(tmp_path / "state", "--quiet")
    try:
        assert again == first
        async with connect(url) as c:
            assert c.relay_fingerprint == first
    finally:
        await stop(proc)
    # --key FILE: created there when missing, then kept; the state dir's key is not used
    other = tmp_path / "elsewhere" / "witness.key"
    proc, _, made, _ = await start_relay(tmp_path / "state", "--quiet", "--key", str(other))
    await stop(proc)
    assert made != first and other.exists()
    proc, _, kept, _ = await start_relay(tmp_path / "state", "--quiet", "--key", str(other))
    await stop(proc)
    assert kept == made
    # the state dir's key as --key: the same witness
    proc, _, same, _ = await start_relay(tmp_path / "other-state", "--quiet", "--key", str(key))
    await stop(proc)
    assert same == first and not (tmp_path / "other-state").exists()


async def test_a_bad_key_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.key"
    bad.write_text("not a key\n")
    r = await trio.run_process(
        [sys.executable, "-m", "koikoi.client.cli", "relay", "--port", "0", "--key", str(bad)],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env=relay_env(tmp_path),
    )
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode() == (
        f"koikoi relay: {bad} is not a relay key (expected 64 hex digits, an Ed25519 seed; got 10 bytes)\n"
    )
    assert bad.read_text() == "not a key\n"


async def test_koikoi_relay_usage_and_listen_errors(tmp_path: Path) -> None:
    bad = await trio.run_process(
        [sys.executable, "-m", "koikoi.client.cli", "relay", "--port", "70000"],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env=relay_env(tmp_path),
    )
    assert bad.returncode == 2 and b"Traceback" not in bad.stderr
    bad = await trio.run_process(
        [sys.executable, "-m", "koikoi.client.cli", "relay", "--ping-interval", "10", "--idle-timeout", "5"],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env=relay_env(tmp_path),
    )
    assert bad.returncode == 2
    assert bad.stderr.decode().strip() == "koikoi relay: --ping-interval must be shorter than --idle-timeout"
    proc, url, _, _ = await start_relay(tmp_path, "--quiet")
    try:
        port = url.rsplit(":", 1)[1]
        busy = await trio.run_process(
            [sys.executable, "-m", "koikoi.client.cli", "relay", "--port", port, "--quiet"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=relay_env(tmp_path),
        )
        assert busy.returncode == 1
        assert busy.stderr.decode().startswith(f"koikoi relay: cannot listen on 127.0.0.1:{port}")
        assert b"Traceback" not in busy.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        with trio.fail_after(15):
            assert await proc.wait() == 0
