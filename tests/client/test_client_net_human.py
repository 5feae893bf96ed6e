"""A person hosts a networked match in a real pseudo-terminal (pexpect), against a bot that joins.

The host runs its own relay (no --relay); a scripted player reads the screen and answers every prompt:
it plays a card that matches two field cards when it has one (a capture choice), calls koi-koi the
first time it may in the match, then shōbu. The match is played to its end and both transcripts audit."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

pytestmark = pytest.mark.net  # starts real koikoi processes and relays

PY = sys.executable


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _env(tmp: Path, who: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOIKOI_")}
    env.update(KOIKOI_CONFIG_DIR=str(tmp / who / "config"), KOIKOI_DATA_DIR=str(tmp / who / "data"), NO_COLOR="1",
               LANG="C.UTF-8", COLUMNS="100", KOIKOI_LINGER="3")  # fmt: skip
    return env


_HAND = re.compile(r"^\s*(\*?)(\d)\s\s")


def _pick(screen: str) -> str:
    """A hand card that matches two field cards (marked "(you choose)"), else one that captures, else 1."""
    lines = screen.replace("\r", "").split("\n")
    start = max((i for i, line in enumerate(lines) if line.startswith("Your hand:")), default=0)
    current: str | None = None
    capturing: list[str] = []
    for line in lines[start:]:
        m = _HAND.match(line)
        if m:
            current = m.group(2)
            if m.group(1):
                capturing.append(current)
        if "(you choose)" in line and current is not None:
            return current
    return capturing[0] if capturing else "1"


def test_a_person_hosts_and_plays_a_whole_match_in_a_terminal(tmp_path: Path) -> None:
    # the deal comes from both players' commit-reveal, so it cannot be fixed: while the matches so far have
    # not shown the person both a capture choice and a koi-koi prompt, another whole match is played (a
    # match with one koi-koi call and shōbu after it lasts long enough that one or two matches show both: 2
    # of 10 measured showed no capture choice, so six in a row without one come about once in 15,000 runs)
    seen: list[tuple[int, int, int]] = []
    for attempt in range(6):
        seen.append(_play_one(tmp_path / str(attempt)))
        if sum(c[1] for c in seen) >= 1 and sum(c[2] for c in seen) >= 1:
            break
    else:
        raise AssertionError(f"no capture choice or no koi-koi in {len(seen)} matches: {seen}")


def _play_one(tmp_path: Path) -> tuple[int, int, int]:
    """One whole match; returns (plays, capture choices, koi-koi calls) of the person."""
    tmp_path.mkdir()
    port = _free_port()
    a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
    argv = ["-m", "koikoi.client", "host", "--listen", f"127.0.0.1:{port}", "--transcript", str(a), "--lang", "en",
            "--rounds", "12", "--plain"]  # fmt: skip
    host = pexpect.spawn(PY, argv, env=_env(tmp_path, "alice"), encoding="utf-8", timeout=30, dimensions=(60, 100))
    joiner: subprocess.Popen[bytes] | None = None
    try:
        host.expect(r"koikoi join (\S+) --relay (\S+)")
        room, url = host.match.group(1), host.match.group(2).strip()
        assert url == f"ws://127.0.0.1:{port}"
        joiner = subprocess.Popen(
            [PY, "-m", "koikoi.client", "join", room, "--relay", url, "--bot", "random", "--json",
             "--transcript", str(b)],
            env=_env(tmp_path, "bob"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        host.expect("The match begins: you are seat 0")
        host.expect(r"compare them aloud")
        choices = koikois = plays = 0
        while True:
            i = host.expect([r"Card to play \(", r"Capture which", r"Koi-koi or shōbu\?", r"Press Enter",
                             r"The match is over: ([^\r\n]+)\r?\n"])  # fmt: skip
            if i == 0:
                plays += 1
                host.sendline(_pick(host.before))
            elif i == 1:
                choices += 1
                host.sendline("2")
            elif i == 2:
                if not koikois:  # koi-koi once a match: later rounds stay small and the match long
                    koikois += 1
                    host.sendline("k")
                else:
                    host.sendline("s")
            elif i == 3:
                host.sendline("")
            else:
                break
        host.expect("Both players signed the result.")  # one end-of-match line: the narrator's
        assert "Match over" not in host.before
        host.expect(r"Transcript: ([^\r\n]+)")
        assert host.match.group(1).strip() == str(a)
        host.expect(pexpect.EOF)
        host.close()
        assert host.exitstatus == 0
        out, err = joiner.communicate(timeout=30)
        assert joiner.returncode == 0, err
        events = [json.loads(line) for line in out.decode().splitlines()]
        assert events[-1]["event"] == "match_end"
        assert plays >= 1
        audit = subprocess.run([PY, "-m", "koikoi.client", "audit", "--json", str(a), str(b)], capture_output=True,
                               check=False)  # fmt: skip
        reports = [json.loads(line) for line in audit.stdout.decode().splitlines()]
        assert [r["status"] for r in reports] == ["complete", "complete"], reports
        assert reports[0]["result"]["points"] == events[-1]["points"]
        return plays, choices, koikois
    finally:
        if host.isalive():
            host.terminate(force=True)
        if joiner is not None and joiner.poll() is None:
            joiner.kill()
            joiner.wait()


def test_a_room_with_a_password_asks_for_it_without_echo(tmp_path: Path) -> None:
    """The host gives the password in a file (not on the command line, where ps sees it); the joiner, at
    a terminal, gives none: it is asked for, and what it types is not echoed."""
    port = _free_port()
    secret = tmp_path / "pw.txt"
    secret.write_text("open sesame\n")
    host = subprocess.Popen(
        [PY, "-m", "koikoi.client", "host", "--listen", f"127.0.0.1:{port}", "--bot", "greedy", "--json",
         "--password-file", str(secret)],
        env=_env(tmp_path, "alice"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    joiner = None
    try:
        assert host.stdout is not None
        room = json.loads(host.stdout.readline())
        assert room["event"] == "room" and "--password" not in room["join"] and "open sesame" not in room["join"]
        argv = ["-m", "koikoi.client", "join", room["room"], "--relay", f"ws://127.0.0.1:{port}", "--bot", "random"]
        joiner = pexpect.spawn(PY, argv, env=_env(tmp_path, "bob"), encoding="utf-8", timeout=30, dimensions=(40, 100))
        joiner.expect(f"Room {room['room']} needs a password: ")
        joiner.sendline("open sesame")
        joiner.expect("The match begins")
        assert "open sesame" not in joiner.before  # not echoed
        joiner.expect(pexpect.EOF, timeout=120)
        joiner.close()
        assert joiner.exitstatus == 0
        assert host.wait(timeout=30) == 0
    finally:
        for p in (host,):
            if p.poll() is None:
                p.kill()
                p.wait()
        if joiner is not None and joiner.isalive():
            joiner.terminate(force=True)
