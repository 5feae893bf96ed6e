"""``koikoi join CODE`` with a code that can never be valid: refused here (exit 2, one line naming what is
wrong), never sent to the relay, where it would count as a failed attempt; and the relay's
``too_many_attempts`` says roughly how long to wait."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from koikoi.client.cli import main
from koikoi.relay.codes import ALPHABET

pytestmark = pytest.mark.net  # a real relay process

LIMIT = 2


@pytest.fixture
def relay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(tmp_path / "config"))
    args = ["relay", "--port", "0", "--quiet", "--attempts-per-ip", str(LIMIT), "--key", str(tmp_path / "r.key")]
    proc = subprocess.Popen([sys.executable, "-m", "koikoi.client", *args], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("ws://127.0.0.1:"), url
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _join(code: list[str], url: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, str], str]:
    rc = main(["join", *code, "--relay", url, "--bot", "random", "--json"])
    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert err.count("\n") == 1, err
    return rc, events[-1], err


BAD = [
    (["ACDE"], "4"),  # too short
    (["ACDEFG"], "6"),  # between the two lengths
    (["K7M-4TQ-XWAA"], "10"),  # a private code with one too many
    (["ACDE0"], "0"),  # a look-alike outside the alphabet
    (["k7m", "4tq", "xw1"], "1"),
    (["AC", "DE", "É"], "É"),
]


def test_a_code_that_cannot_be_valid_is_refused_here_and_costs_no_attempt(
    relay: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for _ in range(LIMIT + 1):  # more than the relay allows: had one reached it, the next joins would be locked out
        for code, named in BAD:
            rc, error, err = _join(code, relay, capsys)
            assert rc == 2 and error["code"] == "usage", (code, error)
            assert "room code" in error["message"] and named in error["message"], (code, error)
            assert err == f"koikoi join: {error['message']}\n"
    rc, error, _ = _join(["k7m 4tq xwa"], relay, capsys)  # a well-formed code for no room: the relay says so
    assert rc == 1 and error["code"] == "room_not_found", error
    for _ in range(LIMIT + 2):
        rc, error, _ = _join([ALPHABET[:5]], relay, capsys)
        if error["code"] == "too_many_attempts":
            break
        assert error["code"] == "room_not_found", error
    assert rc == 1 and error["code"] == "too_many_attempts", error
    assert "about a minute" in error["message"], error
