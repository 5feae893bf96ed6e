"""`koikoi resume` never takes over a seat that another process on this machine is playing."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from koikoi.client import seats
from koikoi.client.output import NetError
from koikoi.client.seats import SeatRecord, find_seat_state
from koikoi.relay.client import SeatTicket

pytestmark = pytest.mark.net  # starts real koikoi processes and relays


def seat(tmp_path: Path, name: str, seat_no: int) -> SeatRecord:
    transcript = tmp_path / f"{name}.koikoi"
    transcript.write_bytes(b"x")
    ticket = SeatTicket("ws://127.0.0.1:1", "ROOM1", "ROOM1", seat_no, "token", 6, True, peer_check=b"p" * 32)
    return SeatRecord(transcript, ticket)  # (someone joined: a room nobody joined is never picked)


def crash(state: SeatRecord) -> None:
    """Forget this process's lock, as if the process that saved the seat had died."""
    os.close(seats._HELD_LOCKS.pop(state.path))


def test_resume_skips_a_seat_held_by_a_live_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    older = seat(tmp_path, "joiner", 1)
    older.save()
    crash(older)  # the joiner was killed: its seat is free to resume
    time.sleep(0.01)
    newer = seat(tmp_path, "host", 0)
    newer.save()
    crash(newer)
    os.utime(newer.transcript)  # the live host wrote last
    # "another process" holds the host's seat: a lock on its own open file description
    fd = os.open(newer.path.with_suffix(".lock"), os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        assert seats.seat_in_use(newer.path) and not seats.seat_in_use(older.path)
        assert find_seat_state(None).transcript == older.transcript
        with pytest.raises(NetError) as e:
            find_seat_state(newer.transcript)
        assert e.value.code == "seat_in_use"
        with pytest.raises(NetError) as e:
            newer.save()  # nor can this process start playing it
        assert e.value.code == "seat_in_use"
    finally:
        os.close(fd)
    # once that process is gone, the most recent unfinished match is the host's again
    assert find_seat_state(None).transcript == newer.transcript


def test_a_seat_file_keeps_the_plain_mode_and_knows_whether_anyone_joined(tmp_path: Path) -> None:
    host = SeatTicket("ws://127.0.0.1:1", "ABCDE", "ABCDE", 0, "t" * 22, 6, True)
    st = SeatRecord(tmp_path / "m.koikoi", host, plain=True)
    again = SeatRecord.from_json(st.to_json())
    assert again.plain and not again.joined  # resume plays in the plain mode again; nobody took seat 1 yet
    host.peer_check = b"x" * 32
    assert SeatRecord.from_json(st.to_json()).joined
    joiner = SeatTicket("ws://127.0.0.1:1", "ABCDE", "ABCDE", 1, "t" * 22, 6, True)
    assert SeatRecord(tmp_path / "m.koikoi", joiner).joined and not SeatRecord(tmp_path / "m.koikoi", joiner).plain
