"""``koikoi audit``, ``koikoi replay``, ``koikoi id``, identity keys and transcript files."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from koikoi.client.cli import main
from koikoi.client.identity import IdentityError, load_or_create
from koikoi.client.transcript_file import TranscriptWriter, open_for_resume, read_transcript
from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, parse
from koikoi.protocol.session import Session
from koikoi.protocol.transcript import MAGIC, parse_transcript
from koikoi.testing import fixed_key, make_pair, run_match

VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors" / "protocol"
CONTRACT_KEYS = {
    "file",
    "valid",
    "status",
    "errors",
    "settings",
    "players",
    "publish",
    "first_dealer",
    "rounds",
    "result",
    "ending",
    "room",
    "relay",
    "match_id",
    "messages",
}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    r = run_match(Settings(6, False), seed=b"cli")
    out = {}
    for name, data in {
        "complete": r.transcripts[0],
        "aborted": (VECTORS / "match_forfeit.koikoi").read_bytes(),
        "invalid": (VECTORS / "negative" / "bad_signature.koikoi").read_bytes(),
        "unfinished": r.transcripts[0][:-300],
    }.items():
        p = tmp_path / f"{name}.koikoi"
        p.write_bytes(data)
        out[name] = p
    # cut exactly at a record boundary: an unfinished match, not a damaged file
    frames = read_transcript(out["complete"]).frames
    with TranscriptWriter(tmp_path / "stopped.koikoi") as w:
        for f in frames[:20]:
            w.append(f)
    out["stopped"] = tmp_path / "stopped.koikoi"
    return out


def _forfeit_aborter() -> int:
    """Who signed match_forfeit.koikoi's ABORT: the seat whose move came after the desync (the other seat)."""
    frames = parse_transcript((VECTORS / "match_forfeit.koikoi").read_bytes()).frames
    end = parse(frames[-1])
    assert end.type is MsgType.ABORT
    return end.seat


def _json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_audit_json_contract_and_exit_codes(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--json", str(files["complete"]), str(files["aborted"])]) == 0
    out = _json_lines(capsys.readouterr().out)
    assert len(out) == 2
    c, a = out
    assert CONTRACT_KEYS <= set(c)
    assert c["valid"] is True and c["status"] == "complete" and c["errors"] == [] and c["ending"] is None
    assert c["settings"] == {"rounds": 6, "double_at_8": False, "move_time_s": 120, "deck": "shared", "watchers": False}
    assert isinstance(c["players"], list) and len(c["players"]) == 2
    assert c["publish"] == [False, False]
    assert c["first_dealer"] in (0, 1)
    rounds = c["rounds"]
    assert isinstance(rounds, list) and rounds
    assert set(rounds[0]) >= {"round", "dealer", "winner", "yaku", "payment", "points"}
    assert isinstance(c["result"], dict) and set(c["result"]) == {"points", "winner"}
    assert a["valid"] is True and a["status"] == "forfeit"
    aborter = _forfeit_aborter()  # the vector's seats follow from its keys' session id: read, not assumed
    assert a["ending"] == {
        "by": aborter,
        "code": "desync",
        "message": a["ending"]["message"],  # type: ignore[index]
        "seq": 11,
        "loser": 1 - aborter,
        "witness": None,
        "evidence_verified": True,
    }
    assert a["result"] == {"points": [25, 25], "winner": aborter}

    for name, status, code in [
        ("invalid", "invalid", "bad_signature"),
        ("unfinished", "invalid", "truncated"),
        ("stopped", "unfinished", "unfinished"),
    ]:
        assert main(["audit", "--json", str(files["complete"]), str(files[name])]) == 1
        lines = _json_lines(capsys.readouterr().out)
        assert lines[0]["valid"] is True
        bad = lines[1]
        assert bad["valid"] is False and bad["status"] == status
        errors = bad["errors"]
        assert isinstance(errors, list) and errors[0]["code"] == code and set(errors[0]) == {"code", "message", "seq"}


def test_audit_usage_errors(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(files["complete"]), str(tmp_path / "nope.koikoi")]) == 2
    cap = capsys.readouterr()
    assert "VALID — a complete match" in cap.out  # the good file is still reported
    assert cap.err == f"koikoi audit: {tmp_path / 'nope.koikoi'}: no such file\n"
    assert main(["audit", "--json", str(tmp_path / "nope.koikoi"), str(files["complete"])]) == 2
    missing, good = _json_lines(capsys.readouterr().out)
    assert CONTRACT_KEYS <= set(missing) and missing["status"] == "invalid" and missing["valid"] is False
    assert missing["errors"] == [{"code": "unreadable", "message": "no such file", "seq": None}]
    assert good["status"] == "complete"
    assert main(["audit", str(tmp_path)]) == 2
    with pytest.raises(SystemExit) as e:
        main(["audit"])
    assert e.value.code == 2


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_audit_refuses_a_pipe_or_a_device_in_one_line_without_hanging(
    kind: str, files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if kind == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)  # nobody writes: opening it to read would block forever
        what = "a named pipe"
    else:
        path = Path("/dev/zero")  # endless: reading it whole would exhaust memory
        what = "a device"
    assert main(["audit", str(files["complete"]), str(path)]) == 2
    cap = capsys.readouterr()
    assert cap.err == f"koikoi audit: {path}: {what}, not a transcript file\n"
    assert "VALID — a complete match" in cap.out
    assert main(["replay", str(path)]) == 2
    assert capsys.readouterr().err == f"koikoi replay: {path}: {what}, not a transcript file\n"


def test_audit_text_verdicts(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", *(str(p) for p in files.values())]) == 1
    cap = capsys.readouterr()
    assert "VALID — a complete match (6 rounds, no ×2 at 8+, 120 s a move, shared deck)" in cap.out
    w = _forfeit_aborter()
    assert (
        f"VALID — seat {1 - w} forfeits: seat {w} proved its fault (desync) at sequence 11; seat {w} wins (points"
        " when it ended: 25–25)" in cap.out
    )
    assert "INVALID" in cap.out and "bad_signature at sequence" in cap.out
    assert "UNFINISHED" in cap.out
    assert cap.err == ""  # no progress bar when stderr is not a terminal


def test_audit_of_garbage_and_empty_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for data in (b"", b"hello", MAGIC + b"\x00\x00"):
        p = tmp_path / "g.koikoi"
        p.write_bytes(data)
        assert main(["audit", "--json", str(p)]) == 1
        (line,) = _json_lines(capsys.readouterr().out)
        assert line["valid"] is False and line["errors"]


@pytest.mark.net
def test_the_real_console_command(files: dict[str, Path]) -> None:
    exe = Path(sys.executable).parent / "koikoi"
    r = subprocess.run(
        [str(exe), "audit", "--json", str(files["complete"])], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0 and json.loads(r.stdout)["status"] == "complete"
    r = subprocess.run([str(exe), "audit", str(files["invalid"])], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "INVALID" in r.stdout


def test_replay_in_english_and_japanese(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(files["complete"])]) == 0
    out = capsys.readouterr().out
    assert "— Round 1 of 6:" in out and "plays" in out and "draws" in out
    assert "  Base" in out and "Payment:" in out  # the count at each round end
    assert "The match is over" in out and "VALID" in out
    assert main(["replay", "--lang", "ja", str(files["complete"])]) == 0
    out = capsys.readouterr().out
    assert "第1局" in out and "を出" in out and "対局終了" in out
    assert main(["replay", str(files["invalid"])]) == 1
    assert "bad_signature" in capsys.readouterr().out
    assert main(["replay", str(files["complete"]) + ".missing"]) == 2


def test_replay_of_a_sealed_match_shows_the_deals_its_disclosures_revealed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = (VECTORS / "match_sealed.koikoi").read_bytes()
    p = tmp_path / "sealed.koikoi"
    p.write_bytes(data)
    assert main(["replay", str(p)]) == 0
    out = capsys.readouterr().out
    rounds = audit(data).rounds
    assert out.count("  Seat 0's hand: ") == len(rounds) and "The match is over" in out and "VALID" in out
    # a sealed match cut in round 2, before its disclosure: round 1 is told, round 2's cards never shown are not
    frames = parse_transcript(data).frames
    round1_end = [i for i, f in enumerate(frames) if parse(f).type is MsgType.DISCLOSE][1]
    cut = tmp_path / "cut.koikoi"
    with TranscriptWriter(cut) as w:
        for f in frames[: round1_end + 5]:
            w.append(f)
    assert main(["replay", str(cut)]) == 1  # unfinished
    out = capsys.readouterr().out
    assert out.count("  Seat 0's hand: ") == 1 and "UNFINISHED" in out and "Traceback" not in out
    assert "— Round 2 of 6" in out and "a sealed deal never disclosed" in out  # its plays are public: told


def test_id_creates_an_owner_only_key_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(tmp_path / "cfg"))
    assert main(["id", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["created"] is True
    key = Path(first["key_file"])
    assert key.parent == tmp_path / "cfg"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert main(["id"]) == 0
    out = capsys.readouterr()
    assert out.out.strip() == first["fingerprint"] and len(first["fingerprint"]) == 19
    os.chmod(key, 0o644)
    load_or_create(key)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    key.write_text("not a key")
    assert main(["id"]) == 1
    assert "damaged" in capsys.readouterr().err
    with pytest.raises(IdentityError):
        load_or_create(key)


def test_transcript_writer_and_resume_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "t" / "match.koikoi"
    pair = make_pair(Settings(6), ("random", "random"), seed=b"file")
    for _ in range(60):
        pair.step()
    with TranscriptWriter(path) as writer:  # what the client writes for seat 1, record by record
        for i, f in enumerate(read_transcript_bytes(bytes(pair.files[1]))):
            writer.append(f, sync=i % 5 == 0)
    with pytest.raises(FileExistsError):
        TranscriptWriter(path)  # never overwrites a transcript
    data = path.read_bytes()
    assert data == bytes(pair.files[1])
    path.write_bytes(data + b"\x00\x00\x01\x00partial")  # a crash in the middle of a record
    frames, writer = open_for_resume(path)
    assert path.read_bytes() == data
    s = Session.from_transcript(fixed_key(b"file", 1), frames)
    pair.sessions = (pair.sessions[0], s)
    pair.queues[1].clear()
    pair.files[1][:] = b""
    pair.reconnect()
    assert not pair.run()
    with writer:
        for f in read_transcript_bytes(MAGIC + bytes(pair.files[1])):
            writer.append(f, sync=True)
    rep = audit(path.read_bytes())
    assert rep.valid and rep.status == "complete"
    assert path.read_bytes() == bytes(pair.files[0])


def read_transcript_bytes(data: bytes) -> list[bytes]:
    from koikoi.protocol.transcript import parse_transcript

    return parse_transcript(data).frames


@pytest.mark.net
def test_audit_on_a_terminal_with_many_files_shows_progress_then_verdicts(files: dict[str, Path]) -> None:
    import pexpect

    exe = Path(sys.executable).parent / "koikoi"
    args = ["audit"] + [str(files["complete"])] * 12
    child = pexpect.spawn(str(exe), args, encoding="utf-8", timeout=60, dimensions=(40, 120))
    out = child.read()
    child.close()
    assert child.exitstatus == 0
    assert out.count("VALID — a complete match") == 12
    assert "Traceback" not in out


def test_audit_exit_codes_and_verdicts_for_every_ending(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = json.loads((VECTORS / "endings" / "index.json").read_text())["vectors"]
    paths = [str(VECTORS / v["file"]) for v in index]
    assert main(["audit", "--json", *paths]) == 0  # every ending is a valid transcript
    reports = _json_lines(capsys.readouterr().out)
    assert [r["status"] for r in reports] == [v["status"] for v in index]
    assert main(["audit", *paths]) == 0
    out = capsys.readouterr().out
    assert "VALID — on time: seat 1 was silent past the move time (timeout) at sequence" in out
    assert "VALID — abandoned (room_mismatch): room: creator KQ7M3XWAT, joiner OTHERROOM; no winner." in out
    assert "VALID — seat 0 resigned at sequence" in out and "(unwitnessed_timeout); seat 1 wins" in out


def test_the_winners_points_come_first(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    rep = audit(files["complete"].read_bytes())
    w = rep.result["winner"]
    assert w is not None
    pts = rep.result["points"]
    assert pts[w] > pts[1 - w]
    assert main(["audit", str(files["complete"])]) == 0
    assert f"seat {w} won {pts[w]}–{pts[1 - w]}, after" in capsys.readouterr().out
