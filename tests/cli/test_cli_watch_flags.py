"""``koikoi host --no-watchers / --watchers``, ``koikoi join --no-watchers`` and the lobby's watchers, for real:
``koikoi`` processes against a relay in process (port 0)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from koikoi.client.cli import main
from koikoi.protocol.audit import audit
from koikoi.relay.client import RelayError, connect
from koikoi.relay.codes import normalize_code
from koikoi.relay.effects import Archive
from koikoi.relay.server import RelayConfig, open_relay

pytestmark = pytest.mark.net  # starts real koikoi processes

KOIKOI = [sys.executable, "-m", "koikoi.client"]


def _env(tmp: Path, who: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOIKOI_")}
    env.update(
        PYTHONUNBUFFERED="1",
        KOIKOI_CONFIG_DIR=str(tmp / who / "config"),
        KOIKOI_DATA_DIR=str(tmp / who / "data"),
        KOIKOI_STATE_DIR=str(tmp / who / "state"),
        KOIKOI_RECONNECT_TIMEOUT="30",
        KOIKOI_LINGER="3",
    )
    return env


class Hosts:
    """``koikoi host --bot greedy --json`` processes waiting for an opponent; each one's room code."""

    def __init__(self, tmp: Path, url: str) -> None:
        self.tmp = tmp
        self.url = url
        self.procs: list[trio.Process] = []

    async def start(self, *args: str, transcript: Path | None = None) -> str:
        n = len(self.procs)
        extra = ["--transcript", str(transcript)] if transcript is not None else []
        err = self.tmp / f"host{n}.err"
        with open(err, "wb") as f:
            p = await trio.lowlevel.open_process(
                [*KOIKOI, "host", "--relay", self.url, "--bot", "greedy", "--json", *extra, *args],
                stdout=subprocess.PIPE,
                stderr=f,
                stdin=subprocess.DEVNULL,
                env=_env(self.tmp, f"host{n}"),
            )
        self.procs.append(p)
        assert p.stdout is not None
        buf = b""
        with trio.fail_after(60):
            while b"\n" not in buf:
                chunk = await p.stdout.receive_some(65536)
                assert chunk, err.read_text()
                buf += chunk
        room: dict[str, Any] = json.loads(buf.split(b"\n", 1)[0])
        assert room["event"] == "room", room
        code = normalize_code(room["room"])
        assert code is not None
        return code

    async def finish(self, i: int) -> int:
        p = self.procs[i]
        assert p.stdout is not None
        with trio.fail_after(240):
            while await p.stdout.receive_some(65536):
                pass
            return await p.wait()

    async def stop(self) -> None:
        for p in self.procs:
            if p.returncode is None:
                p.kill()
        with trio.CancelScope(shield=True), trio.move_on_after(10):
            for p in self.procs:
                await p.wait()


@asynccontextmanager
async def hosts(tmp: Path, **cfg: Any) -> AsyncIterator[Hosts]:
    config = RelayConfig(port=0, chosen_codes_after_s=0, **cfg)

    def keep(a: Archive) -> None:  # (a relay that keeps an archive needs the hook: this one keeps nothing)
        pass

    async with open_relay(config, on_archive=keep if config.archive else None) as relay:
        h = Hosts(tmp, relay.url)
        try:
            yield h
        finally:
            await h.stop()


async def _koikoi(tmp: Path, who: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    with trio.fail_after(240):
        return await trio.run_process(
            [*KOIKOI, *args], capture_stdout=True, capture_stderr=True, env=_env(tmp, who), check=False
        )


async def test_the_lobby_shows_which_rooms_allow_watchers(tmp_path: Path) -> None:
    async with hosts(tmp_path, archive=True) as h:
        sealed = await h.start()
        closed = await h.start("--no-watchers")
        shared = await h.start("--deck", "shared")
        open_shared = await h.start("--deck", "shared", "--watchers")
        async with connect(h.url) as watcher:
            await watcher.watch(sealed)
            listed = await _koikoi(tmp_path, "reader", "rooms", "--relay", h.url, "--json")
            text = await _koikoi(tmp_path, "reader", "rooms", "--relay", h.url)
    assert listed.returncode == 0, listed.stderr
    rows = {r["room"]: r for r in json.loads(listed.stdout)}
    assert list(rows[sealed]) == [
        "room",
        "rounds",
        "double_at_8",
        "password",
        "waiting_s",
        "deck",
        "watchers",
        "watching",
    ]
    assert {code: (rows[code]["deck"], rows[code]["watchers"], rows[code]["watching"]) for code in rows} == {
        sealed: ("sealed", True, 1),
        closed: ("sealed", False, 0),
        shared: ("shared", False, 0),
        open_shared: ("shared", True, 0),
    }
    out = text.stdout.decode()
    assert text.returncode == 0, text.stderr
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ") and line.split()[0] in rows}
    column = next(line for line in out.splitlines() if "WATCHERS" in line).index("WATCHERS")
    assert {code: line[column:].split()[0] for code, line in lines.items()} == {
        sealed: "yes",
        closed: "no",
        shared: "no",
        open_shared: "yes*",
    }
    assert "yes (1)" in lines[sealed]
    assert "  * a shared deck: its watchers' programs can compute every card, the players' hands too" in out
    assert "This relay keeps a public archive: every finished match of a public room is published" in out
    assert f"(koikoi ratings http{h.url.removeprefix('ws')}/matches)" in out


async def test_a_room_with_no_watchers_refuses_a_watcher_and_binds_it_in_the_handshake(tmp_path: Path) -> None:
    host_file, join_file = tmp_path / "host.koikoi", tmp_path / "join.koikoi"
    async with hosts(tmp_path) as h:
        room = await h.start("--no-watchers", transcript=host_file)
        async with connect(h.url) as watcher:
            with pytest.raises(RelayError) as refused:
                await watcher.watch(room)
        assert refused.value.code == "watchers_off"
        joined = await _koikoi(
            tmp_path, "bob", "join", room, "--relay", h.url, "--bot", "random", "--json", "--no-watchers",
            "--transcript", str(join_file),
        )  # fmt: skip
        assert joined.returncode == 0, joined.stderr
        assert await h.finish(0) == 0
    for f in (host_file, join_file):
        rep = audit(f.read_bytes())
        assert rep.status == "complete" and rep.settings is not None and rep.settings["watchers"] is False
        assert rep.publish == [False, False]


async def test_join_no_watchers_fails_on_a_room_that_allows_them_before_taking_the_seat(tmp_path: Path) -> None:
    async with hosts(tmp_path) as h:
        room = await h.start()  # sealed: watchers allowed by default
        joined = await _koikoi(tmp_path, "bob", "join", room, "--relay", h.url, "--bot", "random", "--json",
                               "--no-watchers")  # fmt: skip
        assert joined.returncode == 1
        events = [json.loads(line) for line in joined.stdout.decode().splitlines()]
        assert events[-1]["event"] == "error" and events[-1]["code"] == "settings_mismatch", events
        assert "watchers: you no, room yes" in events[-1]["message"]
        async with connect(h.url) as c:  # the room still waits for its opponent
            info = await c.room_info(room)
        assert (info.state, info.watchers) == ("waiting", True)


def test_watchers_and_no_watchers_are_one_choice(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["host", "--watchers", "--no-watchers"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--no-watchers" in err and "--watchers" in err
