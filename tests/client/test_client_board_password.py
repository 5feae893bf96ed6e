"""A person joins a room with a password on the full-screen board, in a real 80×24 pseudo-terminal (pexpect),
giving no --password: the board asks for it in a field that never shows it, and the match starts.

The host (a bot, its own relay, the password from a file so that ps never sees it) waits; the person types
the password and Enter, plays on the board, then leaves with ``q`` (asked first): a resignation, exit 0."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

PY = sys.executable
SECRET = "open sesame 42"

_ESC = re.compile(r"\x1b(\[[0-9;?<>=$]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def _env(tmp: Path, who: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KOIKOI_", "LC_", "COLUMNS", "LINES", "NO_COLOR"))}
    env.update(KOIKOI_CONFIG_DIR=str(tmp / who / "config"), KOIKOI_DATA_DIR=str(tmp / who / "data"), LANG="C.UTF-8",
               TERM="xterm-256color", KOIKOI_LINGER="3", KOIKOI_RECONNECT_TIMEOUT="20")  # fmt: skip
    return env


@pytest.mark.net
def test_joining_on_the_board_asks_for_the_password_without_echo(tmp_path: Path) -> None:
    secret = tmp_path / "pw.txt"
    secret.write_text(SECRET + "\n")
    host = subprocess.Popen(
        [PY, "-m", "koikoi.client", "host", "--listen", "127.0.0.1:0", "--bot", "greedy", "--json",
         "--password-file", str(secret)],
        env=_env(tmp_path, "alice"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    joiner: pexpect.spawn | None = None
    try:
        assert host.stdout is not None
        room = json.loads(host.stdout.readline())
        assert room["event"] == "room" and SECRET not in room["join"]
        argv = ["-m", "koikoi.client", "join", room["room"], "--relay", room["relay"], "--lang", "en"]
        joiner = pexpect.spawn(PY, argv, env=_env(tmp_path, "bob"), encoding="utf-8", timeout=30, dimensions=(24, 80))
        joiner.expect(f"Room {room['room']} needs a password")
        joiner.send(SECRET)
        with contextlib.suppress(pexpect.TIMEOUT):  # the field redraws as the keys arrive
            joiner.expect("never drawn", timeout=2)
        seen = joiner.before or ""
        assert "•" * len(SECRET) in _ESC.sub("", seen), "the password field does not hide what is typed"
        joiner.send("\r")
        # the match is under way on the board (or its first round, a dealt hand decided, waits for Enter)
        joiner.expect("Play a card: 1–8|is thinking|Press Enter for the next round")
        seen += joiner.before or ""
        joiner.send("q")
        joiner.expect("Leave the match\\? It counts as a resignation", timeout=10)
        seen += joiner.before or ""
        joiner.send("y")  # once: the board exits (it did not when trio's thread was waiting for it, under load)
        joiner.expect(pexpect.EOF, timeout=10)
        seen += joiner.before or ""
    finally:
        if joiner is not None:
            joiner.close(force=True)
        try:
            host.wait(timeout=30)
        except subprocess.TimeoutExpired:
            host.kill()
            host.wait()
    text = _ESC.sub("", seen)
    assert SECRET not in text and "sesame" not in text  # typed, never shown
    assert "needs a password (--password" not in text  # not refused for want of one
    assert "Match over: your opponent won: you resigned." in " ".join(text.split()), text[-2000:]
    assert "Traceback" not in text
    assert joiner.exitstatus == 0
