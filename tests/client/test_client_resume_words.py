"""What ``koikoi resume PATH`` says about a file it cannot resume, in words a person reads: a damaged record
without the decoder's exception class, a file that is no transcript, a practice match's transcript."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from koikoi.client.commands.practice import ROOM
from koikoi.client.netsetup import replay_session
from koikoi.client.output import NetError
from koikoi.client.seats import find_seat_state
from koikoi.client.transcript_file import PRACTICE_ROOM
from koikoi.client.tuning import Tuning
from koikoi.engine import Settings
from koikoi.protocol.transcript import MAGIC, parse_transcript, record
from koikoi.testing import fixed_key, run_match

SEED = b"resume words"
CLASS_NAME = re.compile(r"\((?:[A-Z][a-z0-9]+){2,}\)")


@pytest.fixture(scope="module")
def frames() -> list[bytes]:
    return parse_transcript(run_match(Settings(6), ("greedy", "random"), SEED).transcripts[0]).frames


def test_a_damaged_record_is_named_without_an_exception_class(tmp_path: Path, frames: list[bytes]) -> None:
    """Every bit of the first bytes of a record in mid-match flipped: each refusal is one line naming the
    record, and none names a Python exception class; the msgpack decoder's own failure is among them."""
    n = len(frames) // 2
    assert n > 5  # past the handshake
    at = len(MAGIC) + sum(4 + len(f) for f in frames[:n]) + 4
    good = MAGIC + b"".join(record(f) for f in frames)
    path = tmp_path / "t.koikoi"
    key = fixed_key(SEED, 0)
    codes: set[str] = set()
    for pos in range(at, at + 12):
        for bit in range(8):
            data = bytearray(good)
            data[pos] ^= 1 << bit
            path.write_bytes(bytes(data))
            with pytest.raises(NetError) as e:
                replay_session(key, path, Tuning())
            m = e.value.message
            assert e.value.code == "not_resumable" and "\n" not in m and f"record {n}" in m, m
            assert not CLASS_NAME.search(m), m
            codes.update(c for c in ("malformed_frame", "non_canonical") if c in m)
    assert "malformed_frame" in codes, codes


def _refusal(path: Path) -> str:
    with pytest.raises(NetError) as e:
        find_seat_state(path)
    assert e.value.code == "not_resumable" and "\n" not in e.value.message
    return e.value.message


def test_a_file_that_is_no_transcript_is_told_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    readme = tmp_path / "README.md"
    readme.write_text("# koikoi\n\nKoi-Koi, the two-player hanafuda card game\n")
    m = _refusal(readme)
    assert "not a koikoi transcript" in m and "seat ticket" not in m, m


def test_a_practice_transcript_is_told_it_cannot_be_resumed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    assert ROOM == PRACTICE_ROOM  # the room practice's HELLOs name: what tells its transcripts apart
    t = run_match(Settings(6), ("greedy", "random"), SEED, room=ROOM).transcripts[0]
    path = tmp_path / "practice.koikoi"
    path.write_bytes(t[: len(t) // 2])  # even unfinished
    m = _refusal(path)
    assert "practice" in m and "cannot be resumed" in m and "seat ticket" not in m, m


def test_a_network_match_without_a_seat_file_still_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    path = tmp_path / "match.koikoi"
    path.write_bytes(run_match(Settings(6), ("greedy", "random"), SEED).transcripts[0])
    assert "no seat ticket for it on this machine" in _refusal(path)
