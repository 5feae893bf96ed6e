"""Reading a transcript for resume: a torn final record is tolerated (and dropped only when the writer
opens); damage anywhere else refuses and leaves the file exactly as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from koikoi.client.netsetup import replay_session
from koikoi.client.output import NetError
from koikoi.client.transcript_file import DamagedTranscript, TranscriptWriter, read_for_resume
from koikoi.client.tuning import Tuning
from koikoi.engine import Settings
from koikoi.protocol.messages import parse
from koikoi.protocol.transcript import MAGIC, parse_transcript, record
from koikoi.testing import fixed_key, run_match

SEED = b"resume file"


@pytest.fixture(scope="module")
def frames() -> list[bytes]:
    return parse_transcript(run_match(Settings(6), ("greedy", "random"), SEED).transcripts[0]).frames


def offsets(frames: list[bytes]) -> list[int]:
    out, pos = [], len(MAGIC)
    for f in frames:
        out.append(pos)
        pos += 4 + len(f)
    return out


def test_a_torn_final_record_at_any_cut_is_dropped_only_when_the_writer_opens(
    tmp_path: Path, frames: list[bytes]
) -> None:
    whole = MAGIC + b"".join(record(f) for f in frames[:-1])
    last = record(frames[-1])
    path = tmp_path / "t.koikoi"
    for cut in range(1, len(last)):  # inside the length field too
        data = whole + last[:cut]
        path.write_bytes(data)
        rf = read_for_resume(path)
        assert rf.torn and rf.frames == frames[:-1] and rf.sound_bytes == len(whole), cut
        assert path.read_bytes() == data  # not yet changed
    with rf.open_writer() as w:
        assert path.read_bytes() == whole
        w.append(frames[-1])
    assert read_for_resume(path).frames == frames and not read_for_resume(path).torn


def test_a_damaged_length_anywhere_is_refused_and_the_file_left_alone(tmp_path: Path, frames: list[bytes]) -> None:
    """Every record's length, made to run past the end of the file (swallowing the records after it:
    it looks like a torn record), longer, zero or impossible: resume refuses, with one line, and the
    file is not changed. (A mid-file record cut short reads as garbage: verification refuses it.)"""
    good = MAGIC + b"".join(record(f) for f in frames)
    path = tmp_path / "t.koikoi"
    key = fixed_key(SEED, 0)
    for i, at in enumerate(offsets(frames)[:-1]):  # every record but the last (whose tear is tolerated)
        for n in (len(good) - at - 4 + 1, len(frames[i]) + 700, len(frames[i]) - 1, 0, 1 << 20):
            data = good[:at] + n.to_bytes(4, "big") + good[at + 4 :]
            path.write_bytes(data)
            with pytest.raises(NetError) as e:
                replay_session(key, path, Tuning())
            assert e.value.code == "not_resumable" and "\n" not in e.value.message, (i, n)
            assert "left as it was" in e.value.message, e.value.message
            assert path.read_bytes() == data


def test_an_own_record_with_a_bad_signature_is_refused(tmp_path: Path, frames: list[bytes]) -> None:
    good = MAGIC + b"".join(record(f) for f in frames)
    path = tmp_path / "t.koikoi"
    for i, at in enumerate(offsets(frames)):
        if parse(frames[i]).seat != 0:
            continue
        end = at + 4 + len(frames[i]) - 1  # the last byte of its signature
        data = good[:end] + bytes([good[end] ^ 1]) + good[end + 1 :]
        path.write_bytes(data)
        with pytest.raises(NetError) as e:
            replay_session(fixed_key(SEED, 0), path, Tuning())
        assert e.value.code == "not_resumable" and path.read_bytes() == data, i


def test_a_bad_header_is_refused(tmp_path: Path, frames: list[bytes]) -> None:
    path = tmp_path / "t.koikoi"
    path.write_bytes(b"KOIKOI-TRANSCRIPT/7\n" + record(frames[0]))
    with pytest.raises(DamagedTranscript):
        read_for_resume(path)


def test_the_writer_syncs_only_what_it_wrote(
    tmp_path: Path, frames: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    synced: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    with TranscriptWriter(tmp_path / "w.koikoi") as w:
        assert len(synced) == 1  # the header
        w.append(frames[0])
        w.sync()
        w.sync()  # nothing new: no second fsync
        assert len(synced) == 2
        w.append(frames[1], sync=True)
        assert len(synced) == 3
    assert len(synced) == 3  # closing had nothing left to sync
