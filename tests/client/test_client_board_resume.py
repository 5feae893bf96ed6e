"""Leaving a networked match with Ctrl-C on the board, and coming back (real pseudo-terminals, pexpect).

A bot hosts (its own relay, no move clock); the person joins on the full-screen board, plays a card,
presses Ctrl-C: the board closes, the match is saved and the ``koikoi resume`` command is printed (exit 1).
``koikoi resume --plain`` then tells where the match stands and its last moves — not "The match begins"
again — and Ctrl-C leaves again; ``koikoi resume`` on the board shows the same, and ``q`` (asked first)
resigns: exit 0, and the transcript audits as seat 1's resignation."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

PY = sys.executable

_ESC = re.compile(r"\x1b(\[[0-9;?<>=$]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def _env(tmp: Path, who: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KOIKOI_", "LC_", "COLUMNS", "LINES", "NO_COLOR"))}
    env.update(KOIKOI_CONFIG_DIR=str(tmp / who / "config"), KOIKOI_DATA_DIR=str(tmp / who / "data"), LANG="C.UTF-8",
               TERM="xterm-256color", KOIKOI_LINGER="3")  # fmt: skip
    return env


def _spawn(tmp: Path, *args: str, rows: int = 40, cols: int = 120) -> pexpect.spawn:
    return pexpect.spawn(PY, ["-m", "koikoi.client", *args], env=_env(tmp, "bob"), encoding="utf-8", timeout=30,
                         dimensions=(rows, cols))  # fmt: skip


def _text(child: pexpect.spawn) -> str:
    return _ESC.sub("", child.before or "")


@pytest.mark.net
def test_ctrl_c_on_the_board_saves_and_resume_shows_where_the_match_stands(tmp_path: Path) -> None:
    b = tmp_path / "b.koikoi"
    host = subprocess.Popen(
        [PY, "-m", "koikoi.client", "host", "--listen", "127.0.0.1:0", "--bot", "greedy", "--json", "--move-time",
         "none"],
        env=_env(tmp_path, "alice"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    children: list[pexpect.spawn] = []
    try:
        assert host.stdout is not None
        room = json.loads(host.stdout.readline())
        # join on the board, play one card, Ctrl-C
        join = _spawn(tmp_path, "join", room["room"], "--relay", room["relay"], "--lang", "en", "--transcript", str(b))
        children.append(join)
        while join.expect(["Play a card: 1–8", "Press Enter for the next round"]) == 1:
            join.send("\r")  # a round a dealt hand (Teshi, Kuttsuki) decided
        join.send("1")
        if join.expect([r"takes which\?", r"You played "]) == 0:
            join.send("1")
            join.expect(r"You played ")
        join.send("\x03")  # once: the board exits (it did not when trio's thread was waiting for it, under load)
        join.expect(pexpect.EOF, timeout=10)
        join.close()
        said = _text(join)
        assert f"interrupted: the match so far is saved; continue it with `koikoi resume {b}`" in " ".join(
            said.replace("\r\n", " ").split()
        ), said[-1500:]
        assert join.exitstatus == 1 and "Traceback" not in said
        # the plain mode: where the match stands, the last moves, and no "The match begins"
        plain = _spawn(tmp_path, "resume", "--plain", rows=50, cols=100)
        children.append(plain)
        plain.expect(r"Back in the match \(seat 1")
        plain.expect("Before the interruption:")
        plain.expect("Card to play|Koi-koi or shōbu|Capture which|Press Enter")
        assert "The match begins" not in _text(plain)
        plain.sendintr()
        plain.expect(pexpect.EOF)
        plain.close()
        assert plain.exitstatus == 1 and "Traceback" not in _text(plain)
        assert "koikoi resume" in _text(plain)
        # the board: the same words among its events; q resigns, after asking
        board = _spawn(tmp_path, "resume")
        children.append(board)
        board.expect(r"Back in the match \(seat 1")
        board.expect("Play a card|k koi-koi|takes which|is thinking")
        assert "The match begins" not in _text(board)
        board.send("q")
        board.expect("Leave the match\\? It counts as a resignation", timeout=10)
        board.send("y")
        board.expect(pexpect.EOF, timeout=10)
        board.close()
        last = _text(board)
        assert "Match over: your opponent won: you resigned." in " ".join(last.split()), last[-1500:]
        assert board.exitstatus == 0
    finally:
        for c in children:
            c.close(force=True)
        try:
            host.wait(timeout=30)
        except subprocess.TimeoutExpired:
            host.kill()
            host.wait()
    audit = subprocess.run([PY, "-m", "koikoi.client", "audit", "--json", str(b)], capture_output=True, check=False)
    (report,) = [json.loads(line) for line in audit.stdout.decode().splitlines()]
    assert report["status"] == "resigned" and report["ending"]["by"] == 1, report
