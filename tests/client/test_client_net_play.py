"""``koikoi host`` / ``join`` / ``rooms`` / ``resume`` for real: separate ``koikoi`` processes, a real relay
process on a loopback port the test picks, bots on both seats, ``koikoi audit`` on both transcripts."""

from __future__ import annotations

import json
import os
import resource
import shlex
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from koikoi.client.deckmode import sealed_supported

pytestmark = pytest.mark.net  # starts real koikoi processes and relays

PY = sys.executable
KOIKOI = [PY, "-m", "koikoi.client"]


class Proc:
    """A ``koikoi`` process: stdout read line by line (JSON events with --json), stderr to a file."""

    def __init__(self, name: str, proc: trio.Process, err: Path) -> None:
        self.name = name
        self.proc = proc
        self.err_path = err
        self.buf = b""
        self.events: list[dict[str, Any]] = []
        self.lines: list[str] = []
        self.witness = ""
        """(A relay) its witness key's fingerprint, from its banner."""

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
        with trio.fail_after(timeout):
            while await self.line() is not None:
                pass
            rc = await self.proc.wait()
        assert "Traceback" not in self.stderr, self.stderr
        return rc

    def names(self) -> list[str]:
        return [e["event"] for e in self.events]

    def error(self) -> dict[str, Any]:
        errs = [e for e in self.events if e["event"] == "error"]
        assert errs, f"{self.name}: no error event in {self.events}; stderr: {self.stderr}"
        return errs[-1]


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
            KOIKOI_RECONNECT_TIMEOUT="30",
            KOIKOI_LINGER="3",
        )
        env.update(extra)
        return env

    async def start(self, who: str, *args: str, **env: str) -> Proc:
        return await self._spawn(who, args, env, None)

    async def start_limited(self, who: str, fsize: int, *args: str, **env: str) -> Proc:
        """Like :meth:`start`, but no file it writes may grow past ``fsize`` bytes (RLIMIT_FSIZE: a write
        past it fails with EFBIG, as on a full disk)."""
        return await self._spawn(who, args, env, fsize)

    async def _spawn(self, who: str, args: tuple[str, ...], env: dict[str, str], fsize: int | None) -> Proc:
        self.count += 1
        err = self.tmp / f"{who}-{self.count}.err"

        def limit() -> None:
            # Ctrl-C must reach the process even when the tests run where SIGINT is ignored (a
            # background job of a shell without job control: its children inherit SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            if fsize is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

        with open(err, "wb") as f:
            proc = await trio.lowlevel.open_process(
                [*KOIKOI, *args],
                stdout=subprocess.PIPE,
                stderr=f,
                env=self.env(who, **env),
                stdin=subprocess.DEVNULL,
                preexec_fn=limit,
            )
        p = Proc(f"{who}#{self.count}", proc, err)
        self.procs.append(p)
        return p

    async def relay(self, *args: str, port: int = 0) -> tuple[Proc, str]:
        p = await self.start("relay", "relay", "--port", str(port), "--quiet", *args)
        url = await p.text("ws://", timeout=20)
        p.witness = (await p.text("witness key fingerprint:", timeout=20)).rsplit(" ", 1)[1]
        return p, url

    async def run(self, who: str, *args: str, **env: str) -> tuple[int, Proc]:
        p = await self.start(who, *args, **env)
        return await p.finish(), p

    async def audit(self, *files: Path) -> list[dict[str, Any]]:
        r = await trio.run_process([*KOIKOI, "audit", "--json", *map(str, files)], capture_stdout=True, check=False)
        return [json.loads(line) for line in r.stdout.decode().splitlines()]

    def kill_all(self) -> None:
        for p in self.procs:
            if p.proc.returncode is None:
                with trio.CancelScope(shield=True):
                    p.proc.kill()


@asynccontextmanager
async def lab(tmp: Path) -> AsyncIterator[Lab]:
    lb = Lab(tmp)
    try:
        yield lb
    finally:
        lb.kill_all()
        with trio.move_on_after(5):
            for p in lb.procs:
                await p.proc.wait()


async def host_room(lb: Lab, who: str, *args: str, **env: str) -> tuple[Proc, str]:
    h = await lb.start(who, "host", "--json", *args, **env)
    room = await h.event("room")
    return h, room["room"]


STALLED = {"KOIKOI_BOT_DELAY": "600"}
"""A bot that thinks for ten minutes before each move: a player stopped (killed, interrupted) while it
thinks has not signed a move, so its match cannot have ended, however fast the machine or slow the test."""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


DECK = "sealed" if sealed_supported() else "shared"
"""The deck ``koikoi host`` plays by default: sealed, once the session protocol can (shared until then)."""


def assert_complete(
    reports: list[dict[str, Any]],
    rounds: int,
    double: bool,
    move_time_s: int = 120,
    deck: str = DECK,
    watchers: bool | None = None,
) -> None:
    """Both reports complete with these settings (``watchers``: None, the deck's default: a sealed room allows
    watchers, a shared one does not)."""
    allowed = deck == "sealed" if watchers is None else watchers
    for rep in reports:
        assert rep["valid"] is True and rep["status"] == "complete", rep
        want = {"rounds": rounds, "double_at_8": double, "move_time_s": move_time_s, "deck": deck, "watchers": allowed}
        assert rep["settings"] == want, rep
    assert reports[0]["result"] == reports[1]["result"]
    assert reports[0]["players"] == reports[1]["players"]


# ------------------------------------------------------------------------------------------------ whole matches


async def test_bots_play_a_whole_match_through_a_real_relay(tmp_path: Path) -> None:
    async with lab(tmp_path) as lb:
        relay, url = await lb.relay()
        a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
        host, room = await host_room(lb, "alice", "--relay", url, "--bot", "greedy", "--transcript", str(a))
        rc, join = await lb.run(
            "bob", "join", room, "--relay", url, "--bot", "random", "--json", "--transcript", str(b)
        )
        assert rc == 0, join.stderr
        assert await host.finish() == 0, host.stderr
        for p, seat in ((host, 0), (join, 1)):
            names = p.names()
            assert names[:2] == ["room", "match_start"] and names[-1] == "match_end", names
            assert set(names[2:-1]) == {"round_end"} and 1 <= len(names) - 3 <= 6
            # the host's room event says the deck it asked for; the joiner's, the relay's lobby word
            assert p.events[0]["settings"] == {
                "rounds": 6,
                "double_at_8": True,
                "move_time_s": 120,
                "deck": p.events[0]["settings"]["deck"],
            }
            assert p.events[0]["settings"]["deck"] == DECK
            assert p.events[0]["room"] == room and p.events[0]["relay"] == url
            assert p.events[1]["seat"] == seat and p.events[1]["first_dealer"] in (0, 1)
            # the settings as both HELLOs bound them, and the relay that witnesses the clock
            assert p.events[1]["settings"] == {
                "rounds": 6,
                "double_at_8": True,
                "move_time_s": 120,
                "deck": DECK,
                "watchers": DECK == "sealed",  # the deck's default: a sealed room allows watchers
            }
            assert p.events[1]["witness"] == relay.witness != "" and p.events[1]["resumed"] is False
            for e in p.events[2:-1]:
                assert set(e) == {"event", "round", "winner", "payment", "points"}
        assert host.events[1]["first_dealer"] == join.events[1]["first_dealer"]
        assert host.events[2:] != [] and [e for e in host.events if e["event"] == "round_end"] == [
            e for e in join.events if e["event"] == "round_end"
        ]
        end_h, end_j = host.events[-1], join.events[-1]
        assert end_h["points"] == end_j["points"] and end_h["winner"] == end_j["winner"]
        assert sum(end_h["points"]) == 50
        assert end_h["transcript"] == str(a) and end_j["transcript"] == str(b)
        reports = await lb.audit(a, b)
        assert_complete(reports, 6, True)
        assert reports[0]["result"] == {"points": end_h["points"], "winner": end_h["winner"]}
        assert len(reports[0]["rounds"]) == len(names) - 3
        assert a.read_bytes() == b.read_bytes()  # the same messages, byte for byte
        # the opponents' fingerprints are what the other side's `koikoi id` shows
        assert host.events[1]["opponent"] == reports[0]["players"][1]
        assert join.events[1]["opponent"] == reports[0]["players"][0]
        # nothing left to resume
        for who in ("alice", "bob"):
            assert not list((tmp_path / who / "data" / "seats").glob("*.json"))


async def test_a_twelve_round_match_without_doubling_and_default_transcripts(tmp_path: Path) -> None:
    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        host, room = await host_room(lb, "alice", "--rounds", "12", "--no-double", "--bot", "random", "--private",
                                     KOIKOI_RELAY=url)  # fmt: skip
        assert len(room) == 11 and room[3] == room[7] == "-"  # a private code, shown in groups of three
        # the relay from KOIKOI_RELAY (host) and from the config file (join)
        cfg = tmp_path / "bob" / "config"
        cfg.mkdir(parents=True)
        (cfg / "config.toml").write_text(f'relay = "{url}"\n')
        # the code as a person may type it: lower case, in three words (spaces do not matter)
        rc, join = await lb.run("bob", "join", *room.lower().split("-"), "--rounds", "12", "--no-double", "--bot",
                                "greedy", "--json")  # fmt: skip
        assert join.events[0]["event"] == "room" and join.events[0]["room"] == room  # shown the same way
        assert rc == 0, join.stderr
        assert await host.finish() == 0
        ends = [p.events[-1] for p in (host, join)]
        assert [e["event"] for e in ends] == ["match_end", "match_end"]
        files = [Path(e["transcript"]) for e in ends]
        assert files[0].parent == tmp_path / "alice" / "data" / "transcripts"
        assert files[1].parent == tmp_path / "bob" / "data" / "transcripts"
        reports = await lb.audit(*files)
        assert_complete(reports, 12, False)
        # (a match may end early when a player's pool runs out)
        assert len(reports[0]["rounds"]) == len([e for e in join.events if e["event"] == "round_end"]) >= 1


async def test_host_runs_its_own_relay_and_prints_the_join_command(tmp_path: Path) -> None:
    async with lab(tmp_path) as lb:
        port = free_port()
        a = tmp_path / "a.koikoi"
        host = await lb.start("alice", "host", "--listen", f"127.0.0.1:{port}", "--bot", "greedy", "--password",
                              "open sesame", "--transcript", str(a))  # fmt: skip
        cmd = await host.text("koikoi join ")
        argv = shlex.split(cmd)
        assert argv[:2] == ["koikoi", "join"]
        assert argv[3:] == ["--relay", f"ws://127.0.0.1:{port}", "--password", "open sesame"]
        rc, join = await lb.run("bob", *argv[1:], "--bot", "random", "--json", "--transcript", str(tmp_path / "b.k"))
        assert rc == 0, join.stderr
        assert await host.finish() == 0, host.stderr
        # one end-of-match line: the narrator's, with the winner's score first
        ends = [line for line in host.lines if "match is over" in line.lower() or line.startswith("Match over")]
        assert len(ends) == 1 and "Both players signed the result." in host.lines, host.lines
        assert f"Transcript: {a}" in host.lines
        assert join.events[0]["relay"] == f"ws://127.0.0.1:{port}"
        assert_complete(await lb.audit(a, tmp_path / "b.k"), 6, True)


async def test_rooms_lists_public_rooms_only(tmp_path: Path) -> None:
    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        _h1, r1 = await host_room(lb, "h1", "--relay", url, "--bot", "random", "--password", "pw")
        _h2, r2 = await host_room(lb, "h2", "--relay", url, "--bot", "random", "--private")
        _h3, r3 = await host_room(lb, "h3", "--relay", url, "--bot", "random", "--rounds", "12", "--no-double")
        # the room event shows the code as people see it: a private room's nine letters in groups of three
        assert len(r2) == 11 and r2[3] == r2[7] == "-" and len(r1) == len(r3) == 5
        rc, rooms = await lb.run("x", "rooms", "--json", KOIKOI_RELAY=url)
        assert rc == 0
        listed = json.loads(rooms.lines[0])
        keys = {"room", "rounds", "double_at_8", "password", "waiting_s", "deck", "watchers", "watching"}
        assert [set(r) for r in listed] == [keys] * 2
        assert all(r["watching"] == 0 and isinstance(r["watchers"], bool) for r in listed)
        by = {r["room"]: r for r in listed}
        assert set(by) == {r1, r3}
        assert (by[r1]["rounds"], by[r1]["double_at_8"], by[r1]["password"]) == (6, True, True)
        assert (by[r3]["rounds"], by[r3]["double_at_8"], by[r3]["password"]) == (12, False, False)
        assert all(isinstance(r["waiting_s"], int) for r in listed)
        rc, text = await lb.run("x", "rooms", "--relay", url)
        assert rc == 0 and any(r1 in line and "password" not in line and "yes" in line for line in text.lines)
        assert not any(r2 in line or r2.replace("-", "") in line for line in text.lines)


# ------------------------------------------------------------------------------------------------ errors


async def test_errors_before_play_are_reported_with_their_codes(tmp_path: Path) -> None:
    async with lab(tmp_path) as lb:  # processes run side by side; each is checked as it ends
        dead = f"ws://127.0.0.1:{free_port()}"
        bot = ["--bot", "random", "--json"]
        unreachable = [await lb.start("x", *args, "--relay", dead) for args in (["join", "ACDEF", *bot], ["host", *bot],
                                                                                ["rooms"])]  # fmt: skip
        _relay, url = await lb.relay()
        unknown = await lb.start("x", "join", "ACDEF", "--relay", url, *bot)
        h = await lb.start("h", "host", "--relay", url, *bot, "--password", "s3cret", "--rounds", "12")
        h2 = await lb.start("h2", "host", "--relay", url, *bot, KOIKOI_BOT_DELAY="0.2")
        room = (await h.event("room"))["room"]
        room2 = (await h2.event("room"))["room"]
        wrong = await lb.start("x", "join", room, "--relay", url, *bot, "--password", "nope")
        missing = await lb.start("x", "join", room, "--relay", url, *bot)
        mismatch = await lb.start("x", "join", room, "--relay", url, *bot, "--password", "s3cret", "--rounds", "6",
                                  "--no-double", "--move-time", "30")  # fmt: skip
        j = await lb.start("j2", "join", room2, "--relay", url, *bot, KOIKOI_BOT_DELAY="0.2")

        for p in unreachable:
            assert await p.finish() == 1
        assert "cannot reach the relay" in unreachable[2].stderr
        for p in unreachable[:2]:
            assert p.error()["code"] == "relay_unreachable" and dead in p.error()["message"]

        assert await unknown.finish() == 1
        assert unknown.error()["code"] == "room_not_found" and "ACDEF" in unknown.error()["message"]

        assert await wrong.finish() == 1 and wrong.error()["code"] == "wrong_password"
        assert wrong.names() == ["room", "error"]  # the room's settings were shown first
        assert {k: v for k, v in wrong.events[0]["settings"].items() if k != "deck"} == {
            "rounds": 12,
            "double_at_8": True,
            "move_time_s": 120,
        }
        assert await missing.finish() == 1
        assert missing.error()["code"] == "wrong_password" and "needs a password" in missing.error()["message"]
        assert await mismatch.finish() == 1 and mismatch.error()["code"] == "settings_mismatch"
        assert "rounds: you 6, room 12" in mismatch.error()["message"]
        assert "doubling at 8+: you off, room on" in mismatch.stderr
        assert "move time: you 30 s a move, room 120 s a move" in mismatch.stderr

        # a room with two players in it: a third is refused
        await j.event("match_start")
        rc, p = await lb.run("x", "join", room2, "--relay", url, *bot)
        assert rc == 1 and p.error()["code"] == "room_full"


def test_usage_errors_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
                             ) -> None:  # fmt: skip
    from koikoi.client.cli import main

    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(tmp_path / "config"))
    for argv in (["host", "--rounds", "7"], ["join"], ["join", "X", "--double", "--no-double"], ["rooms", "--x"]):
        with pytest.raises(SystemExit) as ei:
            main(argv)
        assert ei.value.code == 2
    capsys.readouterr()
    assert main(["host", "--bot", "nosuch", "--json"]) == 2
    err = json.loads(capsys.readouterr().out)
    assert err["event"] == "error" and err["code"] == "usage" and "nosuch" in err["message"]
    assert main(["join", "ABCDE", "--json"]) == 2  # a person does not play with --json
    assert main(["host", "--listen", "nowhere", "--bot", "random"]) == 2
    assert main(["host", "--bot", "random", "--password-file", str(tmp_path / "none.txt")]) == 2
    (tmp_path / "empty.txt").write_text("\n")
    assert main(["join", "ABCDE", "--bot", "random", "--password-file", str(tmp_path / "empty.txt")]) == 2
    for bad in ("0", "soon", "-5", "86401"):
        with pytest.raises(SystemExit) as ei:
            main(["host", "--bot", "random", "--move-time", bad])
        assert ei.value.code == 2
    existing = tmp_path / "exists.koikoi"
    existing.write_bytes(b"")
    assert main(["host", "--bot", "random", "--transcript", str(existing)]) == 2
    capsys.readouterr()
    assert main(["resume"]) == 1
    assert "no unfinished match" in capsys.readouterr().err
    assert main(["resume", str(tmp_path / "nope.koikoi")]) == 2


async def test_opponent_gone_past_the_grace_period(tmp_path: Path) -> None:
    """The joiner is killed: past the grace period (3 s) the relay closes the room and certifies the
    joiner's silence, which is longer than the move time (2 s): the host wins on time."""
    async with lab(tmp_path) as lb:
        relay, url = await lb.relay("--grace", "3")
        a = tmp_path / "a.koikoi"
        host, room = await host_room(lb, "alice", "--relay", url, "--bot", "greedy", "--transcript", str(a),
                                     "--move-time", "2", KOIKOI_BOT_DELAY="0.05")  # fmt: skip
        join = await lb.start("bob", "join", room, "--relay", url, "--bot", "random", "--json", KOIKOI_BOT_DELAY="0.05")
        await join.event("match_start")
        join.proc.send_signal(signal.SIGKILL)
        assert await host.finish(timeout=30) == 0  # a result: the host won
        end = host.events[-1]
        assert end["event"] == "match_end" and end["winner"] == 0 and end["status"] == "on_time", end
        assert end["ending"] == {"by": 0, "code": "opponent_left", "witness": relay.witness}, end
        [rep] = await lb.audit(a)
        assert rep["valid"] and rep["status"] == "on_time" and rep["result"]["winner"] == 0, rep
        assert rep["ending"]["by"] == 0 and rep["ending"]["loser"] == 1 and rep["ending"]["witness"] == relay.witness
        # too late: the room has closed, and the killed player is told so (and nothing is left to resume)
        rc, late = await lb.run("bob", "resume")
        assert rc == 1 and late.error()["code"] == "room_closed" and "opponent_left" in late.error()["message"]
        assert not list((tmp_path / "bob" / "data" / "seats").glob("*.json"))


async def test_gone_for_less_than_the_move_time_is_no_win(tmp_path: Path) -> None:
    """The grace period (1 s) is shorter than the move time (120 s): the relay's certificate does not
    prove a silence long enough, so the room closes and nobody wins (exit 1, the match unfinished)."""
    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay("--grace", "1")
        a = tmp_path / "a.koikoi"
        host, room = await host_room(lb, "alice", "--relay", url, "--bot", "greedy", "--transcript", str(a),
                                     KOIKOI_BOT_DELAY="0.05")  # fmt: skip
        join = await lb.start("bob", "join", room, "--relay", url, "--bot", "random", "--json", KOIKOI_BOT_DELAY="0.05")
        await join.event("match_start")
        join.proc.send_signal(signal.SIGKILL)
        assert await host.finish(timeout=30) == 1
        assert host.error()["code"] == "opponent_left" and "nobody wins" in host.error()["message"]
        assert "match_end" not in host.names()
        [rep] = await lb.audit(a)
        assert rep["status"] == "unfinished" and rep["result"]["winner"] is None, rep
        # the seat is kept (a relay could fake the closing): resume asks the relay, which says it is gone
        rc, late = await lb.run("alice", "resume", str(a))
        assert rc == 1 and late.error()["code"] == "room_closed", late.stderr
        assert not list((tmp_path / "alice" / "data" / "seats").glob("*.json"))


async def test_a_silent_opponent_loses_on_time(tmp_path: Path) -> None:
    """The joiner stops (SIGSTOP: still connected, silent): after the move time the host asks the relay
    for a certificate of its silence and wins on time; both transcripts audit on_time, same winner."""
    async with lab(tmp_path) as lb:
        relay, url = await lb.relay()
        a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
        fast = {"KOIKOI_TIMEOUT_WARNING": "1", "KOIKOI_BOT_DELAY": "0.05"}
        host, room = await host_room(lb, "alice", "--relay", url, "--bot", "greedy", "--transcript", str(a),
                                     "--move-time", "2", **fast)  # fmt: skip
        join = await lb.start("bob", "join", room, "--relay", url, "--bot", "random", "--json", "--transcript", str(b),
                              "--move-time", "2", KOIKOI_BOT_DELAY="0.05")  # fmt: skip
        start = await join.event("match_start")
        assert start["settings"]["move_time_s"] == 2 and start["witness"] == relay.witness
        join.proc.send_signal(signal.SIGSTOP)  # still connected, but it does not move
        try:
            assert await host.finish(timeout=30) == 0  # a result: the host won on time
        finally:
            join.proc.send_signal(signal.SIGCONT)
        end = host.events[-1]
        assert end["event"] == "match_end" and end["status"] == "on_time" and end["winner"] == 0, end
        assert end["ending"] == {"by": 0, "code": "timeout", "witness": relay.witness}, end
        assert "left for the" in host.stderr  # the warning before the limit
        assert await join.finish(timeout=30) == 0  # a result: the joiner lost on time
        assert join.events[-1]["event"] == "match_end" and join.events[-1]["winner"] == 0
        assert join.events[-1]["status"] == "on_time"
        reports = await lb.audit(a, b)
        for rep in reports:
            assert rep["valid"] and rep["status"] == "on_time" and rep["result"]["winner"] == 0, rep
            assert rep["ending"]["code"] == "timeout" and rep["ending"]["witness"] == relay.witness


async def test_a_relay_that_corrupts_a_frame_cannot_end_the_match(tmp_path: Path) -> None:
    """The relay flips one byte of a frame in transit: the receiver drops it, asks for it again (RESEND),
    and the match completes, with the same transcript on both sides; nobody is blamed."""
    from koikoi.relay.server import RelayConfig, WebSocketConn, open_relay

    async with lab(tmp_path) as lb, open_relay(RelayConfig(port=0)) as relay:
        real = relay._on_frame
        count = [0]

        def tampering(conn: WebSocketConn, n: int, size: int, raw: bytes) -> None:
            count[0] += 1
            if count[0] == 12:
                raw = raw[:-1] + bytes([raw[-1] ^ 1])  # the last byte of the player frame: its signature
            real(conn, n, size, raw)

        relay._on_frame = tampering  # type: ignore[method-assign]
        a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
        host, room = await host_room(lb, "alice", "--relay", relay.url, "--bot", "greedy", "--transcript", str(a))
        join = await lb.start("bob", "join", room, "--relay", relay.url, "--bot", "random", "--json",
                              "--transcript", str(b))  # fmt: skip
        assert await join.finish(timeout=90) == 0, join.stderr
        assert await host.finish() == 0, host.stderr
        assert count[0] > 12  # the frame was garbled, and play went on
        assert_complete(await lb.audit(a, b), 6, True)
        assert a.read_bytes() == b.read_bytes()


# ------------------------------------------------------------------------------------------------ faults


async def test_a_killed_client_resumes_and_finishes_the_match(tmp_path: Path) -> None:
    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay("--grace", "30")
        a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
        slow = {"KOIKOI_BOT_DELAY": "0.03"}
        host, room = await host_room(lb, "alice", "--relay", url, "--bot", "greedy", "--transcript", str(a),
                                     **STALLED)  # fmt: skip
        join = await lb.start("bob", "join", room, "--relay", url, "--bot", "random", "--json", "--transcript", str(b),
                              **slow)  # fmt: skip
        await host.event("match_start")
        await trio.sleep(0.4)  # mid-round: the host has not moved (it cannot have signed a result)
        host.proc.send_signal(signal.SIGKILL)
        await host.proc.wait()
        seats = list((tmp_path / "alice" / "data" / "seats").glob("*.json"))
        assert len(seats) == 1 and seats[0].stat().st_mode & 0o077 == 0  # the token is the owner's only
        [rep] = await lb.audit(a)
        assert rep["status"] == "unfinished"
        # `koikoi resume` with no PATH: the most recent unfinished match (and --json as before)
        resumed = await lb.start("alice", "resume", **slow)
        assert await resumed.finish() == 0, resumed.stderr
        assert await join.finish() == 0, join.stderr
        assert resumed.names()[:2] == ["room", "match_start"] and resumed.names()[-1] == "match_end"
        assert resumed.events[-1]["points"] == join.events[-1]["points"]
        assert resumed.events[-1]["transcript"] == str(a)
        reports = await lb.audit(a, b)
        assert_complete(reports, 6, True)
        # every round is in the files once, and the two chains are the same
        rounds = [e for e in join.events if e["event"] == "round_end"]
        assert len(reports[0]["rounds"]) == len(reports[1]["rounds"]) == len(rounds)
        assert [e["round"] for e in rounds] == list(range(1, len(rounds) + 1))
        assert reports[0]["messages"] == reports[1]["messages"]
        assert not list((tmp_path / "alice" / "data" / "seats").glob("*.json"))


async def test_the_relay_restarts_mid_match_and_both_clients_resume(tmp_path: Path) -> None:
    async with lab(tmp_path) as lb:
        relay, url = await lb.relay()
        port = int(url.rsplit(":", 1)[1])
        a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
        slow = {"KOIKOI_BOT_DELAY": "0.03"}
        host, room = await host_room(lb, "alice", "--relay", url, "--bot", "greedy", "--transcript", str(a), **slow)
        join = await lb.start("bob", "join", room, "--relay", url, "--bot", "random", "--json", "--transcript", str(b),
                              **slow)  # fmt: skip
        await host.event("match_start")
        await trio.sleep(0.4)  # mid-round (a match cannot end this soon)
        relay.proc.send_signal(signal.SIGKILL)
        await relay.proc.wait()
        await trio.sleep(0.5)  # both clients notice, and try again with backoff
        _relay2, url2 = await lb.relay(port=port)
        assert url2 == url
        assert await host.finish() == 0, host.stderr
        assert await join.finish() == 0, join.stderr
        assert "Lost the connection to the relay" in host.stderr and "rebuilt" in host.stderr + join.stderr
        reports = await lb.audit(a, b)
        assert_complete(reports, 6, True)
        assert host.events[-1]["points"] == join.events[-1]["points"]


# SIGINT: the host stops cleanly, and its relay closes the joiner's connection with a plain "bye" (it was taken
# for a refusal, and the joiner stopped: the new-user trial of 2026-11-30); SIGKILL: the connection just drops
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["killed", "interrupted"])
async def test_a_killed_host_with_its_own_relay_resumes_it_and_the_joiner_comes_back(
    tmp_path: Path, sig: signal.Signals
) -> None:
    async with lab(tmp_path) as lb:
        port = free_port()
        a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
        slow = {"KOIKOI_BOT_DELAY": "0.03"}
        host, room = await host_room(lb, "alice", "--listen", f"127.0.0.1:{port}", "--bot", "greedy", "--transcript",
                                     str(a), **STALLED)  # fmt: skip
        join = await lb.start("bob", "join", room, "--relay", f"ws://127.0.0.1:{port}", "--bot", "random", "--json",
                              "--transcript", str(b), **slow)  # fmt: skip
        await join.event("match_start")
        await trio.sleep(0.4)  # mid-round: the host has not moved (it cannot have signed a result)
        host.proc.send_signal(sig)  # the relay goes down with it
        await host.proc.wait()
        resumed = await lb.start("alice", "resume", str(a), **slow)  # starts the relay again on the same port
        assert await resumed.finish() == 0, resumed.stderr
        assert await join.finish() == 0, join.stderr
        assert "Lost the connection to the relay" in join.stderr
        assert_complete(await lb.audit(a, b), 6, True)
        assert resumed.events[-1]["points"] == join.events[-1]["points"]


async def test_relay_restart_then_the_joiner_killed_and_resumed(tmp_path: Path) -> None:
    """Two faults in one match: the relay restarts (both take their seats back in a rebuilt room), then
    the joiner is killed and resumed (its relay counters are stale: the relay and the host renumber)."""
    async with lab(tmp_path) as lb:
        relay, url = await lb.relay("--grace", "30")
        port = int(url.rsplit(":", 1)[1])
        a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
        slow = {"KOIKOI_BOT_DELAY": "0.02"}
        host, room = await host_room(lb, "alice", "--relay", url, "--bot", "greedy", "--transcript", str(a), **slow)
        join = await lb.start("bob", "join", room, "--relay", url, "--bot", "random", "--json", "--transcript", str(b),
                              **slow)  # fmt: skip
        await join.event("match_start")
        await trio.sleep(0.3)
        relay.proc.send_signal(signal.SIGKILL)
        await relay.proc.wait()
        await lb.relay("--grace", "30", port=port)
        ended = await join.event("round_end", timeout=60)
        if 0 in ended["points"] or ended["round"] == 6:  # (rare) that round ended the match: nothing to resume
            assert await join.finish() == 0, join.stderr
        else:
            join.proc.send_signal(signal.SIGKILL)
            await join.proc.wait()
            resumed = await lb.start("bob", "resume", str(b), **slow)
            assert await resumed.finish() == 0, resumed.stderr
        assert await host.finish() == 0, host.stderr
        assert_complete(await lb.audit(a, b), 6, True)


class CuttingProxy:
    """A TCP proxy in front of the relay that can cut every connection through it (a network drop)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.streams: list[trio.SocketStream] = []
        self.port = 0

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started()
        await trio.serve_listeners(self._handle, listeners)

    async def _handle(self, client: trio.SocketStream) -> None:
        upstream = await trio.open_tcp_stream("127.0.0.1", self.target_port)
        self.streams += [client, upstream]

        async def pump(a: trio.SocketStream, b: trio.SocketStream) -> None:
            try:
                while data := await a.receive_some(65536):
                    await b.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            with trio.CancelScope(shield=True):
                await a.aclose()
                await b.aclose()

        async with trio.open_nursery() as n:
            n.start_soon(pump, client, upstream)
            n.start_soon(pump, upstream, client)

    async def cut(self) -> None:
        streams, self.streams = self.streams, []
        for st in streams:
            await st.aclose()


async def test_a_dropped_connection_reconnects_and_the_match_goes_on(tmp_path: Path) -> None:
    async with lab(tmp_path) as lb, trio.open_nursery() as nursery:
        _relay, url = await lb.relay()
        proxy = CuttingProxy(int(url.rsplit(":", 1)[1]))
        await nursery.start(proxy.serve)
        via = f"ws://127.0.0.1:{proxy.port}"
        a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
        slow = {"KOIKOI_BOT_DELAY": "0.02"}
        host, room = await host_room(lb, "alice", "--relay", url, "--bot", "greedy", "--transcript", str(a), **slow)
        join = await lb.start("bob", "join", room, "--relay", via, "--bot", "random", "--json", "--transcript", str(b),
                              **slow)  # fmt: skip
        await join.event("match_start")
        await trio.sleep(0.3)
        await proxy.cut()  # the joiner's connection drops; it connects again through the proxy
        assert await join.finish() == 0, join.stderr
        assert await host.finish() == 0, host.stderr
        nursery.cancel_scope.cancel()
        assert "Lost the connection to the relay" in join.stderr and "Connected to the relay again" in join.stderr
        assert "Your opponent's connection dropped" in host.stderr and "Your opponent is back" in host.stderr
        reports = await lb.audit(a, b)
        assert_complete(reports, 6, True)
        assert a.read_bytes() == b.read_bytes()


def test_resume_of_a_match_that_had_ended_reports_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """A crash after the end (only the seat file left): resume says how the match ended, offline."""
    from cryptography.hazmat.primitives import serialization

    from koikoi.client.cli import main
    from koikoi.client.seats import SeatRecord
    from koikoi.engine import Settings
    from koikoi.relay.client import SeatTicket
    from koikoi.testing import fixed_key, run_match

    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "config").mkdir(mode=0o700)
    key = fixed_key(b"ended", 0)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())  # fmt: skip
    (tmp_path / "config" / "identity.key").write_bytes(pem)
    os.chmod(tmp_path / "config" / "identity.key", 0o600)
    r = run_match(Settings(6, True), seed=b"ended")
    path = tmp_path / "m.koikoi"
    path.write_bytes(r.transcripts[0])
    ticket = SeatTicket("ws://127.0.0.1:9", "ACDEF", "ACDEF", 0, "token", 6, True, b"p" * 32)  # (someone joined)
    state = SeatRecord(path, ticket, bot="random", json=True)
    state.save()
    assert main(["resume"]) == 0
    [end] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert end["event"] == "match_end" and end["points"] == list(r.sessions[0].match.points)  # type: ignore[union-attr]
    assert not state.path.exists()


# ------------------------------------------------------------------------------------------------ durability


def whole_records(data: bytes) -> list[tuple[int, int]]:
    """``(offset, length)`` of every whole record of a transcript file."""
    from koikoi.protocol.transcript import MAGIC

    out, pos = [], len(MAGIC)
    while pos + 4 <= len(data):
        n = int.from_bytes(data[pos : pos + 4], "big")
        if pos + 4 + n > len(data):
            break
        out.append((pos, n))
        pos += 4 + n
    return out


def flip(data: bytes, i: int) -> bytes:
    return data[:i] + bytes([data[i] ^ 1]) + data[i + 1 :]


def frames_of(path: Path) -> list[bytes]:
    from koikoi.protocol.transcript import parse_transcript

    return parse_transcript(path.read_bytes()).frames


async def start_pair(
    lb: Lab, tmp: Path, url: str, host_bot: str = "greedy", **host_env: str
) -> tuple[Proc, Proc, Path, Path]:
    """A host (greedy) and a joiner (random), both bots with a small delay, transcripts a and b."""
    a, b = tmp / "a.koikoi", tmp / "b.koikoi"
    slow = {"KOIKOI_BOT_DELAY": "0.03"}
    host, room = await host_room(lb, "alice", "--relay", url, "--bot", host_bot, "--transcript", str(a),
                                 **{**slow, **host_env})  # fmt: skip
    join = await lb.start("bob", "join", room, "--relay", url, "--bot", "random", "--json", "--transcript", str(b),
                          **slow)  # fmt: skip
    return host, join, a, b


async def assert_same_complete_match(lb: Lab, resumed: Proc, join: Proc, a: Path, b: Path, deck: str = DECK) -> None:
    assert await resumed.finish() == 0, resumed.stderr
    assert await join.finish() == 0, join.stderr
    assert_complete(await lb.audit(a, b), 6, True, deck=deck)
    assert frames_of(a) == frames_of(b)  # one chain, every message once: nobody signed two at one number
    assert resumed.events[-1]["points"] == join.events[-1]["points"]


@pytest.mark.parametrize("point", ["torn", "written", "synced", "sent"])
async def test_killed_at_any_point_of_a_moves_write_send_cycle_then_resumed(tmp_path: Path, point: str) -> None:
    """kill -9 while the host's 10th message is half written, written, on disk, or sent; then resume.
    After "written" the record was not forced to disk yet: the test drops it, as a machine crash would.
    (Ten messages in, three of them the handshake's, no match can have ended: a pool of 25 points does
    not run out in the few captures of seven moves.)"""
    from koikoi.protocol.messages import parse

    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay("--grace", "60")
        host, join, a, b = await start_pair(lb, tmp_path, url, KOIKOI_TEST_CRASH=f"{point}:10")
        while await host.line() is not None:
            pass
        assert await host.proc.wait() == -signal.SIGKILL, (host.lines, host.stderr)
        data = a.read_bytes()
        recs = whole_records(data)
        end = recs[-1][0] + 4 + recs[-1][1]
        assert (end < len(data)) == (point == "torn"), (point, end, len(data))  # only "torn" leaves half a record
        last = data[recs[-1][0] + 4 : end]
        await trio.sleep(1)  # what was sent has reached the joiner by now
        if point in ("written", "synced"):  # on disk (or in the page cache), never sent
            assert parse(last).seat == 0 and last not in frames_of(b)
        elif point == "torn":  # half a record: never sent
            assert not any(f.startswith(data[end + 4 :]) for f in frames_of(b))
        if point == "written":
            a.write_bytes(data[: recs[-1][0]])  # its unsynced last record is lost with the machine
        [rep] = await lb.audit(a)
        assert rep["status"] in ("unfinished", "invalid")  # (torn: "truncated")
        resumed = await lb.start("alice", "resume", str(a), "--json", KOIKOI_BOT_DELAY="0.03")
        await assert_same_complete_match(lb, resumed, join, a, b)


async def test_a_damaged_transcript_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    from koikoi.protocol.messages import parse

    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay("--grace", "60")
        # killed at its 12th message (the handshake's three, then nine moves: no match ends so soon, see
        # test_killed_at_any_point_of_a_moves_write_send_cycle_then_resumed)
        host, join, a, b = await start_pair(lb, tmp_path, url, KOIKOI_TEST_CRASH="sent:12")
        while await host.line() is not None:
            pass
        assert await host.proc.wait() == -signal.SIGKILL, (host.lines, host.stderr)
        good = a.read_bytes()
        recs = whole_records(good)
        assert len(recs) >= 12
        at, _n = recs[len(recs) // 2]
        theirs = next((o, n) for o, n in recs[len(recs) // 2 :] if parse(good[o + 4 : o + 4 + n]).seat == 1)
        mine = next((o, n) for o, n in recs[len(recs) // 2 :] if parse(good[o + 4 : o + 4 + n]).seat == 0)
        damaged = {
            # a length field that runs one byte past the end: it swallows the records after it
            "a length": good[:at] + (len(good) - at - 4 + 1).to_bytes(4, "big") + good[at + 4 :],
            "an impossible length": good[:at] + bytes([0xFF, 0, 0, 0]) + good[at + 4 :],
            "the opponent's signature": flip(good, sum(theirs) + 3),  # its frame's last byte
            "an own signature": flip(good, sum(mine) + 3),
            "the last record's signature": flip(good, len(good) - 1),  # whole, so not a torn record: damage
            "the header": b"KOIKOI-TRANSCRIPT/9\n" + good[20:],
        }
        for what, data in damaged.items():
            a.write_bytes(data)
            rc, p = await lb.run("alice", "resume", str(a), "--json")
            assert rc == 1, (what, p.lines, p.stderr)
            err = p.error()
            assert err["code"] == "not_resumable" and "left as it was" in err["message"], (what, err)
            assert len(p.stderr.strip().splitlines()) == 1, (what, p.stderr)  # one line
            assert a.read_bytes() == data, what  # untouched
        # the seat was kept: with the file restored, the match goes on to its end
        a.write_bytes(good)
        resumed = await lb.start("alice", "resume", str(a), "--json", KOIKOI_BOT_DELAY="0.03")
        await assert_same_complete_match(lb, resumed, join, a, b)


def handshake_bytes(rounds: int, double_at_8: bool) -> int:
    """The size of a transcript file that holds the handshake (two HELLOs, COMMIT, VALUE, REVEAL) of a
    match in a public room, and nothing after it. The records' sizes depend only on the settings and
    the room code's length (keys, nonces, hashes and signatures have fixed sizes)."""
    from koikoi.engine.match import Settings
    from koikoi.relay.codes import PUBLIC_CODE_LENGTH
    from koikoi.testing import make_pair

    pair = make_pair(Settings(rounds=rounds, double_at_8=double_at_8), (None, None),
                     room="X" * PUBLIC_CODE_LENGTH)  # fmt: skip
    assert pair.run(clock=False)  # no bots: it stalls after the handshake, before the first move
    assert pair.sessions[0].referee.next_seq == 5, pair.sessions[0].referee.next_seq
    return len(pair.files[0])


async def test_a_full_disk_stops_with_disk_full_and_keeps_the_seat(tmp_path: Path) -> None:
    """The host's transcript may not grow past the handshake and part of one more record (RLIMIT_FSIZE,
    as a full disk): the first record after the handshake cannot be written. Every complete match has
    at least two more (both RESULTs), so the host can never reach a result, whatever the cards."""
    limit = handshake_bytes(6, True) + 64  # less than any record: each holds a 64-byte signature
    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay("--grace", "60")
        a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
        slow = {"KOIKOI_BOT_DELAY": "0.03"}
        # the shared deck: its first record after the handshake is a move, after match_start is shown (a sealed
        # deal's first step may be this seat's own, written with the reveal before the start is shown)
        host = await lb.start_limited("alice", limit, "host", "--json", "--relay", url, "--bot", "greedy",
                                      "--deck", "shared", "--transcript", str(a), **slow)  # fmt: skip
        room = (await host.event("room"))["room"]
        join = await lb.start("bob", "join", room, "--relay", url, "--bot", "random", "--json", "--transcript", str(b),
                              "--deck", "shared", **slow)  # fmt: skip
        assert await host.finish() == 1, (host.lines, host.stderr)
        assert "match_start" in host.names()  # stopped mid-match, at its first move
        err = host.error()
        assert err["code"] == "disk_full" and str(a) in err["message"] and "koikoi resume" in err["message"], err
        assert err["transcript"] == str(a)
        assert a.stat().st_size == limit  # the handshake, then a torn record: as much as the disk took
        assert len(frames_of(a)) == 5
        assert list((tmp_path / "alice" / "data" / "seats").glob("*.json"))  # kept for resume
        resumed = await lb.start("alice", "resume", "--json", **slow)  # room on the disk again
        await assert_same_complete_match(lb, resumed, join, a, b, deck="shared")


async def test_a_transcript_that_lost_its_tail_gets_it_back_from_the_opponent(tmp_path: Path) -> None:
    """The host's file loses its last eight records (a restored backup, a damaged disk), messages it had
    signed and sent among them: resume asks the opponent for them (RESEND) before deciding anything,
    instead of deciding again, so it never signs a second message at a sequence number."""
    from koikoi.protocol.messages import parse

    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay("--grace", "60")
        # a random bot: deciding again would most likely sign other moves (equivocation, seen by the joiner)
        host, join, a, b = await start_pair(lb, tmp_path, url, "random", KOIKOI_TEST_CRASH="sent:12")
        while await host.line() is not None:
            pass
        assert await host.proc.wait() == -signal.SIGKILL, (host.lines, host.stderr)
        await trio.sleep(0.5)
        data = a.read_bytes()
        recs = whole_records(data)
        lost = [data[o + 4 : o + 4 + n] for o, n in recs[-8:]]
        assert {parse(f).seat for f in lost} == {0, 1}  # own messages among them, sent: the joiner has them
        assert all(f in frames_of(b) for f in lost if parse(f).seat == 0)
        a.write_bytes(data[: recs[-8][0]])
        resumed = await lb.start("alice", "resume", str(a), "--json", KOIKOI_BOT_DELAY="0.03")
        await assert_same_complete_match(lb, resumed, join, a, b)
        assert frames_of(a)[: len(recs)] == [data[o + 4 : o + 4 + n] for o, n in recs]  # the same messages back


async def test_ctrl_c_before_anyone_joined_saves_no_match_and_resume_passes_it_by(tmp_path: Path) -> None:
    # (the new-user trial: such rooms were "saved", and `koikoi resume` kept picking them once their relay was gone)
    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay("--grace", "60")
        older, room = await host_room(lb, "alice", "--relay", url, "--bot", "greedy", **STALLED)
        await lb.start("bob", "join", room, "--relay", url, "--bot", "random", "--json", **STALLED)
        await older.event("match_start")
        older.proc.send_signal(signal.SIGINT)  # a real match, interrupted: this one is resumable
        assert await older.finish() == 1, older.stderr
        waiting, _ = await host_room(lb, "alice", "--relay", url, "--bot", "greedy")
        waiting.proc.send_signal(signal.SIGINT)  # nobody joined yet
        assert await waiting.finish() == 1, waiting.stderr
        err = waiting.error()
        assert err["code"] == "interrupted" and "before anyone joined" in err["message"], err
        assert "koikoi resume" not in err["message"]
        # `koikoi resume` with no PATH takes the newest match that had begun, not the newer empty room
        resumed = await lb.start("alice", "resume", "--json", KOIKOI_BOT_DELAY="0.03")
        assert (await resumed.event("match_start"))["resumed"] is True
        resumed.proc.send_signal(signal.SIGINT)
        assert await resumed.finish() == 1


async def test_ctrl_c_saves_and_names_the_resume_command(tmp_path: Path) -> None:
    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay("--grace", "60")
        host, join, a, b = await start_pair(lb, tmp_path, url, **STALLED)
        await host.event("match_start")
        await trio.sleep(0.4)  # mid-round: the host has not moved (it cannot have signed a result)
        host.proc.send_signal(signal.SIGINT)
        assert await host.finish() == 1, host.stderr
        err = host.error()
        assert err["code"] == "interrupted" and f"`koikoi resume {a}`" in err["message"], err
        assert list((tmp_path / "alice" / "data" / "seats").glob("*.json"))  # kept for resume
        argv = shlex.split(err["message"].split("`")[1])
        resumed = await lb.start("alice", *argv[1:], KOIKOI_BOT_DELAY="0.03")
        await assert_same_complete_match(lb, resumed, join, a, b)
