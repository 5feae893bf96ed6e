"""A room's password at a terminal (a real pseudo-terminal, pexpect): asked only after the room's settings are
shown and checked, asked again when wrong, three tries in all; the host's room stays open meanwhile."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect
import pytest

pytestmark = pytest.mark.net  # real koikoi processes and the host's own relay

PY = sys.executable
SECRET = "open sesame 42"
HOST = ["--listen", "127.0.0.1:0", "--bot", "greedy", "--json"]
"""The host: a bot, its own relay on 127.0.0.1 (a port of its choosing), JSON events."""


def _env(tmp: Path, who: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KOIKOI_", "LC_", "COLUMNS", "LINES"))}
    env.update(KOIKOI_CONFIG_DIR=str(tmp / who / "config"), KOIKOI_DATA_DIR=str(tmp / who / "data"), LANG="C.UTF-8",
               TERM="xterm-256color", KOIKOI_LINGER="3", KOIKOI_RECONNECT_TIMEOUT="20")  # fmt: skip
    return env


@contextmanager
def hosting(tmp: Path) -> Iterator[tuple[subprocess.Popen[bytes], dict[str, str]]]:
    """A host (a bot, its own relay on 127.0.0.1, the password from a file) and its room event."""
    (tmp / "pw.txt").write_text(SECRET + "\n")
    argv = [PY, "-m", "koikoi.client", "host", *HOST, "--password-file", str(tmp / "pw.txt")]
    with open(tmp / "host.err", "wb") as err:
        host = subprocess.Popen(argv, env=_env(tmp, "alice"), stdout=subprocess.PIPE, stderr=err)
    try:
        assert host.stdout is not None
        room = json.loads(host.stdout.readline())
        assert room["event"] == "room"
        yield host, room
    finally:
        if host.poll() is None:
            host.kill()
        host.wait(timeout=30)


def _joiner(tmp: Path, room: dict[str, str], *extra: str) -> pexpect.spawn:
    argv = ["-m", "koikoi.client", "join", room["room"], "--relay", room["relay"], "--bot", "random", *extra]
    return pexpect.spawn(PY, argv, env=_env(tmp, "bob"), encoding="utf-8", timeout=60, dimensions=(24, 200))


def test_a_wrong_password_is_asked_again_and_the_right_one_plays(tmp_path: Path) -> None:
    with hosting(tmp_path) as (host, room):
        code = room["room"]
        joiner = _joiner(tmp_path, room)
        try:
            joiner.expect(f"Room {code} on {room['relay']}: 6 rounds, ×2 at 8\\+, 120 s a move, sealed deck "
                          r"\(needs a password\)\.")  # fmt: skip
            joiner.expect(f"Room {code} needs a password: ")
            assert "Wrong" not in (joiner.before or "")
            joiner.sendline("not it")
            joiner.expect(f"Wrong password \\(try 2 of 3\\)\\. Room {code} needs a password: ")
            joiner.sendline(SECRET)
            joiner.expect("Joined: waiting for the host's signed settings")
            joiner.expect(pexpect.EOF, timeout=120)
        finally:
            joiner.close(force=True)
        assert joiner.exitstatus == 0, joiner.before
        assert host.wait(timeout=60) == 0


def test_three_wrong_passwords_give_up_and_leave_the_room_open(tmp_path: Path) -> None:
    with hosting(tmp_path) as (host, room):
        code = room["room"]
        joiner = _joiner(tmp_path, room)
        try:
            joiner.expect(f"Room {code} needs a password: ")
            joiner.sendline("one")
            joiner.expect(r"Wrong password \(try 2 of 3\)\. ")
            joiner.sendline("two")
            joiner.expect(r"Wrong password \(try 3 of 3\)\. ")
            joiner.sendline("three")
            joiner.expect(f"koikoi join: wrong password for room {code}\r\n")
            joiner.expect(pexpect.EOF)
        finally:
            joiner.close(force=True)
        assert joiner.exitstatus == 1
        assert host.poll() is None  # the host still waits in its room: the right password still gets in
        joiner = _joiner(tmp_path, room, "--password", SECRET)
        try:
            joiner.expect("Joined: waiting for the host's signed settings")
            joiner.expect(pexpect.EOF, timeout=120)
        finally:
            joiner.close(force=True)
        assert joiner.exitstatus == 0 and host.wait(timeout=60) == 0


def test_the_settings_are_checked_before_the_password_is_asked(tmp_path: Path) -> None:
    with hosting(tmp_path) as (host, room):
        joiner = _joiner(tmp_path, room, "--rounds", "12")
        joiner.logfile_read = log = io.StringIO()
        try:
            joiner.expect("koikoi join: the room's settings differ from what you expect: rounds: you 12, room 6\r\n")
            joiner.expect(pexpect.EOF)
        finally:
            joiner.close(force=True)
        assert joiner.exitstatus == 1
        assert "Room " in log.getvalue() and "needs a password:" not in log.getvalue()
        assert host.poll() is None


def test_on_the_board_a_wrong_password_is_asked_again(tmp_path: Path) -> None:
    with hosting(tmp_path) as (_host, room):
        argv = ["-m", "koikoi.client", "join", room["room"], "--relay", room["relay"], "--lang", "en"]
        joiner = pexpect.spawn(PY, argv, env=_env(tmp_path, "bob"), encoding="utf-8", timeout=60, dimensions=(24, 80))
        try:
            joiner.expect(f"Room {room['room']} needs a")
            joiner.send("not it\r")
            joiner.expect(r"Wrong password \(try 2 of 3\)\.")
            joiner.send(SECRET + "\r")
            # the match is under way on the board (or its first round, a dealt hand decided, waits for Enter)
            joiner.expect("Play a card: 1–8|Press Enter for the next round|Opponent: 8 in hand")
        finally:
            joiner.close(force=True)
