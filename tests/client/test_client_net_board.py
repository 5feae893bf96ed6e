"""A person hosts a networked match on the full-screen board, in a real 80×24 pseudo-terminal (pexpect).

``koikoi host`` (no --bot, no --plain, TERM=xterm) runs its own relay and shows the board at once: the
command the friend runs is on it. A bot joins through that relay (``koikoi join --bot greedy``, 2 s a
move); the person plays a card by its number, then, while the bot thinks, ``q`` and confirms: the match
ends as their resignation, the board gives the terminal back, the result and the transcript's path are
printed after it (exit 0: a result), and both transcripts audit ``resigned`` by seat 0."""

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

PY = sys.executable

_ESC = re.compile(r"\x1b(\[[0-9;?<>=$]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _env(tmp: Path, who: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KOIKOI_", "LC_", "COLUMNS", "LINES", "NO_COLOR"))}
    env.update(KOIKOI_CONFIG_DIR=str(tmp / who / "config"), KOIKOI_DATA_DIR=str(tmp / who / "data"), LANG="C.UTF-8",
               TERM="xterm-256color", KOIKOI_LINGER="3")  # fmt: skip
    return env


def _text(raw: str | None) -> str:
    return _ESC.sub("", raw or "")


@pytest.mark.net
def test_a_person_hosts_on_the_board_plays_by_keys_then_resigns_with_q(tmp_path: Path) -> None:
    port = _free_port()
    a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
    argv = ["-m", "koikoi.client", "host", "--listen", f"127.0.0.1:{port}", "--transcript", str(a), "--lang", "en"]
    host = pexpect.spawn(PY, argv, env=_env(tmp_path, "alice"), encoding="utf-8", timeout=30, dimensions=(24, 80))
    joiner: subprocess.Popen[bytes] | None = None
    try:
        # the board is up before anyone joins, and shows the command the friend runs
        host.expect(r"koikoi join (\S+) --relay (ws://[0-9.:]+)")
        room, url = host.match.group(1), host.match.group(2)
        assert url == f"ws://127.0.0.1:{port}"
        assert "\x1b[?1049h" in (host.before or "")  # the alternate screen: the board, not the text mode
        joiner = subprocess.Popen(
            [PY, "-m", "koikoi.client", "join", room, "--relay", url, "--bot", "greedy", "--json",
             "--transcript", str(b)],
            env={**_env(tmp_path, "bob"), "KOIKOI_BOT_DELAY": "2"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        # the board's question, with the move clock running (a round a dealt hand decides asks for Enter)
        seen = ""
        while host.expect(["Play a card: 1–8", "Press Enter for the next round"]) == 1:
            seen += host.before or ""
            host.send("\r")
        screen = _text(seen + (host.before or ""))
        assert "Your opponent has joined." in screen and "Traceback" not in screen
        host.send("1")  # the first card of the hand, by its number
        # the shuffle decides what follows: the card may match two field cards (the board's own words,
        # client/tui/words.py "q_pick", not the plain mode's "Capture which?"), so may the drawn card
        # ("q_choose"), or a yaku be made ("q_decide"): take the first, play on
        asked = [r"Opponent is thinking", r"The drawn .{0,80}?takes which\?", r"takes which\?", r"k koi-koi"]
        while (i := host.expect(asked)) != 0:
            host.send("k" if i == 3 else "1")
        # the bot takes 2 s: q now is no answer to a question
        host.send("q")
        host.expect("Leave the match\\? It counts as a resignation", timeout=10)
        host.send("y")  # once: the board exits (it did not when trio's thread was waiting for it, under load)
        host.expect(pexpect.EOF, timeout=10)
    finally:
        host.close(force=True)
        if joiner is not None and joiner.poll() is None:
            try:
                joiner.wait(timeout=30)
            except subprocess.TimeoutExpired:
                joiner.kill()
                joiner.wait()
    after = _text(host.before)
    # the board gave the terminal back (left the alternate screen) before the last lines were printed
    tail = (host.before or "").rsplit("\x1b[?1049l", 1)
    assert len(tail) == 2, "the board never closed"
    last = _text(tail[1])
    assert "Match over: your opponent won: you resigned." in " ".join(last.split()), last
    assert f"Transcript: {a}" in last, last
    assert "Traceback" not in after
    assert host.exitstatus == 0, after
    assert joiner is not None and joiner.stdout is not None
    events = [json.loads(line) for line in joiner.stdout.read().decode().splitlines()]
    assert joiner.returncode == 0
    assert events[-1]["event"] == "match_end" and events[-1]["status"] == "resigned" and events[-1]["winner"] == 1
    audit = subprocess.run([PY, "-m", "koikoi.client", "audit", "--json", str(a), str(b)], capture_output=True,
                           check=False)  # fmt: skip
    reports = [json.loads(line) for line in audit.stdout.decode().splitlines()]
    assert [r["status"] for r in reports] == ["resigned", "resigned"], reports
    assert all(r["ending"]["by"] == 0 and r["result"]["winner"] == 1 for r in reports), reports
    # the card played by its number is in the record, signed by seat 0
    replay = subprocess.run([PY, "-m", "koikoi.client", "replay", str(a)], capture_output=True, check=False)
    assert replay.returncode == 0 and "Seat 0 plays " in replay.stdout.decode(), replay.stdout.decode()
