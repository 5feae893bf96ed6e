"""The archive for real: a relay in process (port 0) with the hooks ``koikoi relay --archive DIR`` gives it, two
``koikoi`` bot processes playing sealed matches through it, its index served over HTTP, and ``koikoi ratings
http://127.0.0.1:PORT/matches`` rating it with the same table the seats' own transcripts give."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio
from nacl.signing import SigningKey

from koikoi.client.commands.relay import archive_hooks, http_url
from koikoi.protocol.audit import audit
from koikoi.relay.codes import normalize_code
from koikoi.relay.effects import Archive
from koikoi.relay.observe import EventLog
from koikoi.relay.server import Relay, RelayConfig, open_relay

pytestmark = pytest.mark.net  # starts real koikoi processes

KOIKOI = [sys.executable, "-m", "koikoi.client"]


def _env(tmp: Path, who: str) -> dict[str, str]:
    """A player of its own: its key, config and data under ``tmp/who``."""
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


@dataclass
class Played:
    host: Path
    join: Path
    room: str


async def _play(tmp: Path, url: str, n: int, host_args: list[str], join_args: list[str]) -> Played:
    """One match: alice hosts (the greedy bot), bob joins (the random bot); each keeps its transcript."""
    host_file, join_file = tmp / f"m{n}-host.koikoi", tmp / f"m{n}-join.koikoi"
    err = open(tmp / f"m{n}-host.err", "wb")  # (closed below)
    host = await trio.lowlevel.open_process(
        [*KOIKOI, "host", "--relay", url, "--bot", "greedy", "--json", "--transcript", str(host_file), *host_args],
        stdout=subprocess.PIPE,
        stderr=err,
        stdin=subprocess.DEVNULL,
        env=_env(tmp, "alice"),
    )
    try:
        assert host.stdout is not None
        buf = b""
        with trio.fail_after(60):
            while b"\n" not in buf:
                chunk = await host.stdout.receive_some(65536)
                assert chunk, (tmp / f"m{n}-host.err").read_text()
                buf += chunk
        room = json.loads(buf.split(b"\n", 1)[0])
        assert room["event"] == "room", room
        join = [*KOIKOI, "join", room["room"], "--relay", url, "--bot", "random", "--json"]
        with trio.fail_after(240):
            joined = await trio.run_process(
                [*join, "--transcript", str(join_file), *join_args],
                capture_stdout=True,
                capture_stderr=True,
                stdin=subprocess.DEVNULL,
                env=_env(tmp, "bob"),
                check=False,
            )
            assert joined.returncode == 0, joined.stderr.decode()
            while await host.stdout.receive_some(65536):
                pass
            assert await host.wait() == 0, (tmp / f"m{n}-host.err").read_text()
    finally:
        if host.returncode is None:
            host.kill()
            with trio.CancelScope(shield=True):
                await host.wait()
        err.close()
    code = normalize_code(room["room"])  # (the host shows it in groups: XXX-XXX-XXX)
    assert code is not None
    return Played(host_file, join_file, code)


async def _ratings(tmp: Path, *paths: str) -> tuple[int, str, str]:
    r = await trio.run_process(
        [*KOIKOI, "ratings", "--json", *paths],
        capture_stdout=True,
        capture_stderr=True,
        env=_env(tmp, "reader"),
        check=False,
    )
    return r.returncode, r.stdout.decode(), r.stderr.decode()


async def test_a_relay_archives_sealed_matches_and_ratings_reads_them_over_http(tmp_path: Path) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    logged = io.StringIO()
    log = EventLog(stream=logged)
    key = SigningKey(b"\x22" * 32)
    relays: list[Relay] = []
    on_archive, routes = archive_hooks(folder, key, log, lambda: http_url(relays[0].url))
    handed, handed_over = trio.open_memory_channel[Archive](16)

    def hook(a: Archive) -> None:  # (the command's hook, then the test is told: no waiting on the clock)
        try:
            on_archive(a)
        finally:
            trio.from_thread.run_sync(handed.send_nowait, a)

    # (a seat whose last frame is not acknowledged goes away without leave done: its room then closes after the
    # grace period, and is archived then; a short one here)
    config = RelayConfig(port=0, archive=True, chosen_codes_after_s=0, grace=3.0)
    async with open_relay(config, key=key, log=log, on_archive=hook, http_routes=routes) as relay:
        relays.append(relay)
        public = await _play(tmp_path, relay.url, 1, [], [])
        both = await _play(tmp_path, relay.url, 2, ["--private", "--publish"], ["--publish"])
        one = await _play(tmp_path, relay.url, 3, ["--private", "--publish"], [])
        rooms = []
        with trio.move_on_after(60):
            for _ in range(3):
                rooms.append(await handed_over.receive())
        assert len(rooms) == 3, logged.getvalue()  # (the relay's log, should it fail)
        assert [(a.room, a.private) for a in rooms] == [(public.room, False), (both.room, True), (one.room, True)]

        reports: dict[str, Any] = {}
        for p in (public, both, one):
            a, b = audit(p.host.read_bytes()), audit(p.join.read_bytes())
            assert a.valid and a.status == "complete" and a.settings is not None and a.settings["deck"] == "sealed"
            assert (b.status, b.result, b.match_id) == (a.status, a.result, a.match_id)
            reports[p.room] = a
        assert reports[both.room].publish == [True, True] and reports[one.room].publish == [True, False]
        # the two matches that may be public, named by match id; not the private room only one player agreed to
        kept = {reports[public.room].match_id, reports[both.room].match_id}
        assert sorted(f.name for f in folder.iterdir()) == sorted(f"{m}.koikoi" for m in kept)
        for p in (public, both):
            served = audit((folder / f"{reports[p.room].match_id}.koikoi").read_bytes())
            assert (served.valid, served.status, served.result, served.players, served.rounds) == (
                True,
                "complete",
                reports[p.room].result,
                reports[p.room].players,
                reports[p.room].rounds,
            )
        events = [json.loads(line) for line in logged.getvalue().splitlines()]
        archived = [e for e in events if e["event"].startswith("archive_")]
        assert [(e["event"], e.get("room"), e.get("reason")) for e in archived] == [
            ("archive_written", public.room, None),
            ("archive_written", None, None),  # (a private room's code is never logged)
            ("archive_skipped", None, "a private room, not both players publish"),
        ]
        assert all(one.room not in line and both.room not in line for line in logged.getvalue().splitlines())

        code, fetched, err = await _ratings(tmp_path, f"http://127.0.0.1:{relay.port}/matches")
        assert (code, err) == (0, "")
        table = json.loads(fetched)
        assert (table["files"], table["rated"], len(table["players"])) == (2, 2, 2)
        # the same table, byte for byte, as the seats' own files of those two matches give
        own = await _ratings(tmp_path, str(public.host), str(both.host))
        assert own == (0, fetched, "")
        every_seat = await _ratings(tmp_path, *map(str, (public.host, public.join, both.host, both.join)))
        assert json.loads(every_seat[1])["players"] == table["players"]
