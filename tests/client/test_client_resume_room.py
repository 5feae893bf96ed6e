"""``koikoi resume --json`` prints the ``room`` event docs/players.md describes, witness included (the relay key's
fingerprint, as ``host`` and ``join`` print it); and a relay restarted with ``--no-restore`` answers a
resume with ``room_not_found`` (the code docs/players.md names for it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

pytestmark = pytest.mark.net  # real koikoi processes and a relay

KOIKOI = [sys.executable, "-m", "koikoi.client"]


class Proc:
    def __init__(self, proc: trio.Process) -> None:
        self.proc = proc
        self.buf = b""

    async def line(self) -> str | None:
        assert self.proc.stdout is not None
        while b"\n" not in self.buf:
            chunk = await self.proc.stdout.receive_some(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode()

    async def starting(self, prefix: str) -> str:
        with trio.fail_after(30):
            while (line := await self.line()) is not None:
                if line.startswith(prefix):
                    return line
        raise AssertionError(f"no line starting {prefix!r}")

    async def event(self, name: str) -> dict[str, Any]:
        while True:
            line = await self.starting("{")
            ev: dict[str, Any] = json.loads(line)
            if ev["event"] in (name, "error"):
                return ev


@asynccontextmanager
async def processes(tmp: Path) -> AsyncIterator[Any]:
    procs: list[Proc] = []

    async def start(who: str, *args: str, **extra: str) -> Proc:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KOIKOI_")}
        env.update({f"KOIKOI_{d.upper()}_DIR": str(tmp / who / d) for d in ("config", "data", "state")})
        env.update(PYTHONUNBUFFERED="1", KOIKOI_RECONNECT_TIMEOUT="20", KOIKOI_BOT_DELAY="0.03", **extra)
        p = Proc(
            await trio.lowlevel.open_process(
                [*KOIKOI, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env
            )
        )
        procs.append(p)
        return p

    try:
        yield start
    finally:
        for p in procs:
            if p.proc.returncode is None:
                p.proc.send_signal(signal.SIGKILL)
        with trio.move_on_after(5):
            for p in procs:
                await p.proc.wait()


async def _crashed_host(start: Any, url: str, tmp: Path) -> Path:
    """A host killed at its 12th message, mid-match (the joiner plays on, waiting for it); its transcript."""
    a = tmp / "a.koikoi"
    host = await start("alice", "host", "--relay", url, "--bot", "greedy", "--json", "--transcript", str(a),
                       KOIKOI_TEST_CRASH="sent:12")  # fmt: skip
    room = (await host.event("room"))["room"]
    await start("bob", "join", room, "--relay", url, "--bot", "random", "--json", "--transcript", str(tmp / "b.koikoi"))
    with trio.fail_after(60):
        assert await host.proc.wait() == -signal.SIGKILL
    return a


async def test_resume_prints_the_room_event_with_the_witness(tmp_path: Path) -> None:
    async with processes(tmp_path) as start:
        relay = await start("relay", "relay", "--port", "0", "--quiet", "--grace", "60")
        url = await relay.starting("ws://")
        witness = (await relay.starting("witness key fingerprint:")).rsplit(" ", 1)[1]
        a = await _crashed_host(start, url, tmp_path)
        resumed = await start("alice", "resume", str(a), "--json")
        room = await resumed.event("room")
        assert room["event"] == "room", room
        assert room["witness"] == witness and room["relay"] == url, room
        assert set(room) == {"event", "room", "relay", "settings", "witness"}, room


async def test_a_relay_restarted_without_restore_answers_room_not_found(tmp_path: Path) -> None:
    async with processes(tmp_path) as start:
        args = ["relay", "--quiet", "--grace", "60", "--key", str(tmp_path / "relay.key")]
        relay = await start("relay", *args, "--port", "0")
        url = await relay.starting("ws://")
        a = await _crashed_host(start, url, tmp_path)
        relay.proc.send_signal(signal.SIGTERM)
        with trio.fail_after(20):
            await relay.proc.wait()
        again = await start("relay", *args, "--no-restore", "--port", url.rsplit(":", 1)[1])
        assert await again.starting("ws://") == url
        resumed = await start("alice", "resume", str(a), "--json")
        error = await resumed.event("error")
        assert error["code"] == "room_not_found", error
        with trio.fail_after(30):
            assert await resumed.proc.wait() == 1
