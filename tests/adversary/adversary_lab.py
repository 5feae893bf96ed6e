"""Real ``koikoi`` processes (a relay, a host, a joiner) played through the malicious relay, and the
fairness checks every adversary test makes on what they report and what they leave on disk."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio
from adversary_relay import FrameInfo, Policy, malicious_relay

PY = sys.executable
KOIKOI = [PY, "-m", "koikoi.client"]

FAST = {
    # small limits: a test never waits long for a protocol timer
    "KOIKOI_HANDSHAKE_TIMEOUT": "8",
    "KOIKOI_MOVE_TIMEOUT": "8",
    "KOIKOI_RESULT_TIMEOUT": "8",
    "KOIKOI_TIMEOUT_WARNING": "2",
    "KOIKOI_RECONNECT_TIMEOUT": "10",
    "KOIKOI_CONNECT_TIMEOUT": "5",
    "KOIKOI_LINGER": "2",
    "KOIKOI_BOT_DELAY": "0",
}

WINS = ("complete", "resigned", "forfeit", "on_time")
"""Audit statuses that carry a winner (issue 10)."""


class Proc:
    """A ``koikoi`` process: stdout read line by line (JSON events with --json), stderr to a file."""

    def __init__(self, name: str, proc: trio.Process, err: Path) -> None:
        self.name = name
        self.proc = proc
        self.err_path = err
        self.buf = b""
        self.events: list[dict[str, Any]] = []
        self.lines: list[str] = []
        self.rc: int | None = None

    @property
    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    async def line(self) -> str | None:
        assert self.proc.stdout is not None
        while b"\n" not in self.buf:
            chunk = await self.proc.stdout.receive_some(65536)
            if not chunk:
                if self.buf:
                    rest, self.buf = self.buf, b""
                    return rest.decode()
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        text = line.decode()
        self.lines.append(text)
        if text.startswith("{"):
            self.events.append(json.loads(text))
        return text

    async def event(self, name: str, timeout: float = 30) -> dict[str, Any]:
        """The next JSON event called ``name`` (earlier events are kept in ``events``)."""
        with trio.fail_after(timeout):
            while True:
                line = await self.line()
                assert line is not None, f"{self.name} ended before {name!r}: {self.lines} {self.stderr}"
                if line.startswith("{") and json.loads(line)["event"] == name:
                    return self.events[-1]

    async def text(self, start: str, timeout: float = 30) -> str:
        with trio.fail_after(timeout):
            while True:
                line = await self.line()
                assert line is not None, f"{self.name} ended before {start!r}: {self.lines} {self.stderr}"
                if line.strip().startswith(start):
                    return line.strip()

    async def finish(self, timeout: float = 60) -> int:
        with trio.move_on_after(timeout):
            while await self.line() is not None:
                pass
            self.rc = await self.proc.wait()
        if self.rc is None:
            raise AssertionError(f"{self.name} did not end within {timeout:g} s: {self.lines}\n{self.stderr}")
        assert "Traceback" not in self.stderr, self.stderr
        return self.rc

    def last(self) -> dict[str, Any]:
        assert self.events, f"{self.name}: no JSON event; stderr: {self.stderr}"
        return self.events[-1]


class Lab:
    """Starts processes in a temporary dir (each player its own key and data dir); kills leftovers."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[Proc] = []
        self.count = 0

    def env(self, who: str, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KOIKOI_")}
        env.update(
            PYTHONUNBUFFERED="1",
            KOIKOI_CONFIG_DIR=str(self.tmp / who / "config"),
            KOIKOI_DATA_DIR=str(self.tmp / who / "data"),
            KOIKOI_STATE_DIR=str(self.tmp / who / "state"),
            **FAST,
        )
        if os.environ.get("KOIKOI_DEBUG_NET"):
            env["KOIKOI_DEBUG_NET"] = "1"
        env.update(extra)
        return env

    async def start(self, who: str, *args: str, **env: str) -> Proc:
        self.count += 1
        err = self.tmp / f"{who}-{self.count}.err"
        with open(err, "wb") as f:
            proc = await trio.lowlevel.open_process(
                [*KOIKOI, *args], stdout=subprocess.PIPE, stderr=f, env=self.env(who, **env), stdin=subprocess.DEVNULL
            )
        p = Proc(f"{who}#{self.count}", proc, err)
        self.procs.append(p)
        return p

    async def relay(self, *args: str) -> tuple[Proc, str]:
        p = await self.start("relay", "relay", "--port", "0", "--quiet", *args)
        url = await p.text("ws://", timeout=20)
        return p, url

    async def audit(self, *files: Path) -> list[dict[str, Any]]:
        r = await trio.run_process([*KOIKOI, "audit", "--json", *map(str, files)], capture_stdout=True, check=False)
        return [json.loads(line) for line in r.stdout.decode().splitlines()]

    def kill_all(self) -> None:
        for p in self.procs:
            if p.proc.returncode is None:
                p.proc.kill()


@asynccontextmanager
async def lab(tmp: Path) -> AsyncIterator[Lab]:
    lb = Lab(tmp)
    try:
        yield lb
    finally:
        lb.kill_all()
        with trio.CancelScope(shield=True), trio.move_on_after(5):
            for p in lb.procs:
                await p.proc.wait()


@dataclass
class Side:
    """How one player's match ended: its process, its last JSON event, its transcript and its audit."""

    proc: Proc
    rc: int
    end: dict[str, Any]
    transcript: Path
    audit: dict[str, Any]

    @property
    def winner(self) -> int | None:
        w = self.end.get("winner")
        return w if type(w) is int else None

    @property
    def summary(self) -> str:
        return (
            f"{self.proc.name}: rc {self.rc}, {self.end}, audit {self.audit.get('status')} {self.audit.get('result')}"
        )


MOVE_TIME = "8"
"""The room's move time (seconds) the adversary matches are played with, when ``koikoi host`` has
``--move-time`` (protocol version 2); small, so that a test never waits long for a clock."""


@functools.cache
def has_move_time() -> bool:
    r = subprocess.run([*KOIKOI, "host", "--help"], capture_output=True, text=True, check=False)
    return "--move-time" in r.stdout


async def start_host(lb: Lab, url: str, transcript: Path, *args: str, **env: str) -> tuple[Proc, str]:
    """``koikoi host`` with a greedy bot (6 rounds and :data:`MOVE_TIME` unless ``args`` say otherwise);
    its room code."""
    clock = ("--move-time", MOVE_TIME) if has_move_time() and "--move-time" not in args else ()
    host = await lb.start("host", "host", "--json", "--relay", url, "--bot", "greedy", "--transcript", str(transcript),
                          *clock, *args, **env)  # fmt: skip
    return host, (await host.event("room"))["room"]


async def start_join(lb: Lab, room: str, url: str, transcript: Path, *args: str, **env: str) -> Proc:
    """``koikoi join ROOM`` with a greedy bot."""
    return await lb.start("join", "join", room, "--json", "--relay", url, "--bot", "greedy", "--transcript",
                          str(transcript), *args, **env)  # fmt: skip


async def host_and_join(
    lb: Lab,
    url: str,
    *,
    host_args: tuple[str, ...] = (),
    join_args: tuple[str, ...] = (),
    join_url: str | None = None,
    env: dict[str, str] | None = None,
    name: str = "",
) -> tuple[Proc, Proc, str, Path, Path]:
    """``koikoi host`` and ``koikoi join`` (greedy bots) through ``url``; transcripts ``{name}host.koikoi`` and
    ``{name}join.koikoi`` (the same players, keys and data dirs whatever the name)."""
    a, b = lb.tmp / f"{name}host.koikoi", lb.tmp / f"{name}join.koikoi"
    host, room = await start_host(lb, url, a, *host_args, **(env or {}))
    join = await start_join(lb, room, join_url or url, b, *join_args, **(env or {}))
    return host, join, room, a, b


async def outcome(lb: Lab, proc: Proc, transcript: Path, timeout: float = 60) -> Side:
    rc = await proc.finish(timeout)
    audit: dict[str, Any] = {}
    if transcript.exists():
        [audit] = await lb.audit(transcript)
    return Side(proc, rc, proc.last(), transcript, audit)


def assert_no_false_win(side: Side) -> None:
    """Nobody is told they won (or lost) unless the transcript proves it."""
    if side.winner is None:
        assert side.audit.get("result", {}).get("winner") is None, side.summary
        return
    assert side.audit.get("valid") is True, side.summary
    assert side.audit.get("status") in WINS, side.summary
    assert side.audit["result"]["winner"] == side.winner, side.summary


def assert_fair(host: Side, join: Side) -> None:
    """No false win on either side, the same outcome on both, both transcripts audit to the same result."""
    assert_no_false_win(host)
    assert_no_false_win(join)
    assert host.winner == join.winner, (host.summary, join.summary)
    assert host.end.get("event") == join.end.get("event"), (host.summary, join.summary)
    assert host.end.get("points") == join.end.get("points"), (host.summary, join.summary)
    for key in ("valid", "status", "result"):
        assert host.audit.get(key) == join.audit.get(key), (key, host.summary, join.summary)


def assert_complete(host: Side, join: Side) -> None:
    """Fair, and the match was played to its end: both signed the result, the transcripts are identical."""
    assert_fair(host, join)
    for side in (host, join):
        assert side.rc == 0 and side.end["event"] == "match_end", side.summary
        assert side.audit["valid"] is True and side.audit["status"] == "complete", side.summary
    assert host.transcript.read_bytes() == join.transcript.read_bytes()


async def play(
    lb: Lab,
    policy: Policy,
    *,
    host_args: tuple[str, ...] = (),
    join_args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    name: str = "",
    relay_args: tuple[str, ...] = (),
) -> None:
    """One greedy-vs-greedy match through the malicious relay; it must complete and be fair, and every
    fault of the policy must have happened."""
    _relay, url = await lb.relay(*relay_args)
    async with malicious_relay(url, policy) as evil:
        host, join, _room, a, b = await host_and_join(lb, evil.url, host_args=host_args, join_args=join_args,
                                                      env=env, name=name)  # fmt: skip
        h = await outcome(lb, host, a)
        j = await outcome(lb, join, b)
    assert all(rule.fired for rule in policy.rules), [r for r in policy.rules if not r.fired]
    assert_complete(h, j)


def every_copy(sender: int, index: int) -> Callable[[FrameInfo], bool]:
    """The ``index``-th frame of ``sender`` and every later copy of the same bytes (a resend)."""
    target: list[bytes] = []

    def match(f: FrameInfo) -> bool:
        if f.sender != sender:
            return False
        if not target and f.index == index:
            target.append(f.data)
        return bool(target) and f.data == target[0]

    return match
