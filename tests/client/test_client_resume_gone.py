"""``koikoi resume`` (bare) when the match's relay is gone for good: the one line names the room and the
transcript it tried, how to continue another match, and how to give this one up (its seat file)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from koikoi.client.cli import main
from koikoi.client.seats import SeatRecord, find_seat_state
from koikoi.engine import Settings
from koikoi.protocol.transcript import MAGIC, parse_transcript, record
from koikoi.relay.client import SeatTicket
from koikoi.testing import fixed_key, run_match

SEED = b"resume gone"


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_gone_relay_names_the_room_the_transcript_and_the_ways_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("KOIKOI_CONNECT_TIMEOUT", "2")
    monkeypatch.setenv("KOIKOI_RECONNECT_TIMEOUT", "3")
    key = fixed_key(SEED, 1)  # the joiner's seat: this machine's key
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "identity.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    frames = parse_transcript(run_match(Settings(6), ("greedy", "random"), SEED).transcripts[1]).frames
    transcript = tmp_path / "data" / "transcripts" / "match-TQ4MX-join.koikoi"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(MAGIC + b"".join(record(f) for f in frames[: len(frames) // 2]))  # unfinished
    url = f"ws://127.0.0.1:{_dead_port()}"
    ticket = SeatTicket(url, "TQ4MX", "TQ4MX", 1, "token", 6, True, move_time_s=120)
    state = SeatRecord(transcript, ticket, bot="random", json=True)
    state.save()
    seat_file = state.path
    assert find_seat_state(None).transcript == transcript  # what a bare `koikoi resume` picks

    rc = main(["resume"])
    out, err = capsys.readouterr()
    assert rc == 1
    assert err.count("\n") == 1, err
    error = json.loads(out.strip().splitlines()[-1])
    assert error["event"] == "error" and error["code"] == "relay_unreachable"
    m = error["message"]
    assert err == f"koikoi resume: {m}\n"
    assert url in m and "TQ4MX" in m and str(transcript) in m, m
    assert "koikoi resume PATH" in m and str(seat_file) in m, m
    assert seat_file.exists()  # nothing given up by itself
