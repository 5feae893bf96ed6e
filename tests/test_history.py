"""koikoi history: a folder of real transcripts (one invalid, both seats of one match), the index, --stats, names."""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from koikoi.client import history as hist
from koikoi.client.cli import main
from koikoi.engine.actions import KOIKOI, from_code
from koikoi.engine.bots import make_bot
from koikoi.engine.deal import SeededDeal
from koikoi.engine.match import Match, Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, fingerprint, parse, public_bytes
from koikoi.protocol.session import Session
from koikoi.protocol.transcript import parse_transcript
from koikoi.testing import Pair, Witness, witness_key

ENTRY_KEYS = [
    "file",
    "when",
    "match_id",
    "status",
    "valid",
    "error",
    "practice",
    "room",
    "settings",
    "players",
    "seat",
    "opponent",
    "opponent_name",
    "result",
    "points",
    "ending",
    "rounds",
]


def _key(name: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"koikoi/test-history\x00" + name.encode()).digest())


def _fp(name: str) -> str:
    return fingerprint(public_bytes(_key(name)))


def _match(creator: str, joiner: str, n: int, bots: tuple[str, str], room: str = "HIST") -> tuple[bytes, bytes]:
    """Both seats' files of a whole match between two named keys (through a witness, as a relay would)."""
    seed = b"history-%d" % n
    w = Witness(witness_key(seed), room, 120)
    settings = Settings(6, n % 2 == 0)
    nonce = [hashlib.sha256(seed + bytes([s])).digest() for s in (0, 1)]
    a = Session.create(_key(creator), room, settings, nonce[0], relay_key=w.public_key)
    b = Session.join(_key(joiner), room, nonce[1], relay_key=w.public_key)
    rng = random.Random(n)
    pair = Pair((a, b), (make_bot(bots[0], random.Random(rng.random())), make_bot(bots[1], rng)), witness=w)
    pair.note(0, a.start())
    pair.note(1, b.start())
    assert not pair.run()
    return bytes(pair.files[0]), bytes(pair.files[1])


@dataclass
class Folder:
    path: Path
    files: dict[str, bytes]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Folder:
    """A data dir with a transcript folder as koikoi writes it, and this user's key ("me")."""
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "config").mkdir()
    pem = _key("me").private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (tmp_path / "config" / "identity.key").write_bytes(pem)
    folder = tmp_path / "data" / "transcripts"
    folder.mkdir(parents=True)
    files: dict[str, bytes] = {}
    host, _ = _match("me", "alice", 11, ("random", "random"))  # (one of its two koi-koi calls pays)
    files["20261101-100000-AAAAA-host.koikoi"] = host
    _, join = _match("alice", "me", 2, ("greedy", "random"))
    files["20261102-100000-BBBBB-join.koikoi"] = join
    host, _ = _match("me", "bob", 3, ("random", "random"))
    files["20261103-100000-CCCCC-host.koikoi"] = host
    both = _match("me", "me", 4, ("random", "greedy"))  # both seats of one match: two terminals, one key
    files["20261104-100000-DDDDD-host.koikoi"] = both[0]
    files["20261104-100001-DDDDD-join.koikoi"] = both[1]
    damaged = bytearray(_match("me", "carol", 5, ("random", "random"))[0])
    damaged[len(damaged) // 2] ^= 0x40
    files["20261105-100000-EEEEE-host.koikoi"] = bytes(damaged)
    files["20261106-100000-FFFFF-host.koikoi"] = b"this is no transcript"
    files["20261107-100000-practice.koikoi"] = _match("person", "computer", 6, ("random", "greedy"), "PRACTICE")[0]
    for name, data in files.items():
        (folder / name).write_bytes(data)
    (folder / "notes.txt").write_text("not a .koikoi file: not listed")
    return Folder(folder, files)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["history", *argv])
    except SystemExit as e:  # a usage error, as argparse reports it
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _entries(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, object]]:
    code, out, err = _run(capsys, "--json", *argv)
    assert code == 0 and err == ""
    return [json.loads(line) for line in out.splitlines()]


def test_every_match_newest_first_with_opponent_result_and_validity(
    home: Folder, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = _entries(capsys)
    assert [e["file"] for e in entries] == sorted(home.files, reverse=True)
    assert all(list(e) == ENTRY_KEYS for e in entries)
    by = {str(e["file"]): e for e in entries}
    for name, data in home.files.items():
        rep = audit(data)
        e = by[name]
        assert (e["status"], e["valid"], e["match_id"]) == (rep.status, rep.valid, rep.match_id)
        assert e["points"] == rep.result["points"] and e["players"] == rep.players
        assert e["when"] == f"{name[:4]}-{name[4:6]}-{name[6:8]}T{name[9:11]}:{name[11:13]}:{name[13:15]}Z"
        if rep.valid:
            seat = e["seat"]
            assert isinstance(seat, int)
            w = rep.result["winner"]
            assert e["result"] == ("draw" if w is None else "win" if w == seat else "loss")
    assert by["20261101-100000-AAAAA-host.koikoi"]["seat"] == 0
    assert by["20261101-100000-AAAAA-host.koikoi"]["opponent"] == _fp("alice")
    assert by["20261102-100000-BBBBB-join.koikoi"]["seat"] == 1
    assert by["20261102-100000-BBBBB-join.koikoi"]["opponent"] == _fp("alice")
    assert by["20261103-100000-CCCCC-host.koikoi"]["opponent"] == _fp("bob")
    # both seats of one match, one key: each file is its own seat's (the role in its name)
    h, j = by["20261104-100000-DDDDD-host.koikoi"], by["20261104-100001-DDDDD-join.koikoi"]
    assert (h["seat"], j["seat"], h["match_id"]) == (0, 1, j["match_id"])
    assert h["result"] != j["result"] or h["result"] == "draw"
    bad = by["20261105-100000-EEEEE-host.koikoi"]
    assert (bad["status"], bad["valid"], bad["result"]) == ("invalid", False, None) and bad["error"]
    practice = by["20261107-100000-practice.koikoi"]
    assert (practice["practice"], practice["seat"], practice["opponent"]) == (True, 0, _fp("computer"))
    junk = by["20261106-100000-FFFFF-host.koikoi"]
    assert junk["status"] == "invalid" and junk["error"] == "not a koikoi transcript (the header is wrong)"

    code, out, _ = _run(capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == len(home.files)
    assert "vs practice" in lines[0] and "NOT VALID: not a koikoi transcript (the header is wrong)" in lines[1]
    assert lines[-1].startswith("2026-11-01 10:00  ") and f"vs {_fp('alice')}" in lines[-1]


def test_opponent_and_since_filter(home: Folder, capsys: pytest.CaptureFixture[str]) -> None:
    alice = _entries(capsys, "--opponent", _fp("alice").lower().replace("-", ""))
    assert [e["file"] for e in alice] == ["20261102-100000-BBBBB-join.koikoi", "20261101-100000-AAAAA-host.koikoi"]
    since = _entries(capsys, "--since", "2026-11-04")
    assert [str(e["file"])[:8] for e in since] == ["20261107", "20261106", "20261105", "20261104", "20261104"]
    code, _, err = _run(capsys, "--since", "yesterday")
    assert code == 2 and "'yesterday' is not a date" in err and "Traceback" not in err


def _calls(data: bytes, seat: int) -> int:
    """Koi-koi calls read straight off the signed moves (not through the engine's log)."""
    return sum(
        1
        for f in parse_transcript(data).frames
        if (m := parse(f)).type is MsgType.MOVE and m.seat == seat and from_code(m.body[0]) == KOIKOI
    )


def _paid(data: bytes, seat: int) -> int:
    """The calls of ``seat`` in rounds it went on to win: the moves replayed on a fresh engine."""
    ref = audit(data).referee
    assert ref is not None and ref.settings is not None and ref.first_dealer is not None
    source = ref.deal_source()
    assert isinstance(source, SeededDeal)
    m = Match(ref.settings, source, ref.first_dealer)
    pending = paid = 0
    for msg in ref.msgs:
        if msg.type is not MsgType.MOVE:
            continue
        before = len(m.history)
        action = from_code(msg.body[0])
        m.apply(action, msg.seat)
        if action == KOIKOI and msg.seat == seat:
            pending += 1
        if len(m.history) > before:
            paid += pending if m.history[-1].winner == seat else 0
            pending = 0
    return paid


def test_stats_by_opponent_points_yaku_and_koikoi(home: Folder, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--stats", "--json")
    assert code == 0
    st = json.loads(out)
    assert list(st) == [
        "matches",
        "counted",
        "wins",
        "losses",
        "draws",
        "by_opponent",
        "points_won",
        "points_lost",
        "rounds_won",
        "rounds_lost",
        "yaku",
        "koikoi",
    ]
    assert (st["matches"], st["counted"]) == (8, 6)  # the invalid and the junk file are not counted
    want = {"wins": 0, "losses": 0, "draws": 0}
    by: dict[str | None, dict[str, int]] = {}
    points = calls = paid = 0
    yaku: dict[str, int] = {}
    seats = {"AAAAA": 0, "BBBBB": 1, "CCCCC": 0, "DDDDD-host": 0, "DDDDD-join": 1, "practice": 0}
    for name, data in home.files.items():
        seat = next((s for k, s in seats.items() if k in name), None)
        if seat is None:
            continue
        rep = audit(data)
        opp = rep.players[1 - seat] if "practice" not in name else None
        w = rep.result["winner"]
        r = "draws" if w is None else "wins" if w == seat else "losses"
        want[r] += 1
        by.setdefault(opp, {"wins": 0, "losses": 0, "draws": 0})[r] += 1
        for rd in rep.rounds:
            if rd["winner"] == seat:
                points += rd["payment"]
                for y in rd["yaku"]:
                    yaku[y["id"]] = yaku.get(y["id"], 0) + 1
        calls += _calls(data, seat)
        paid += _paid(data, seat)
    assert {k: st[k] for k in want} == want
    assert {o["opponent"]: {k: o[k] for k in ("wins", "losses", "draws")} for o in st["by_opponent"]} == by
    assert [(o["opponent"], o["matches"]) for o in st["by_opponent"]] == sorted(
        [(_fp("alice"), 2), (_fp("me"), 2), (_fp("bob"), 1), (None, 1)], key=lambda x: (-x[1], x[0] is None, x[0] or "")
    )
    assert st["points_won"] == points and st["yaku"] == dict(sorted(yaku.items()))
    assert st["koikoi"] == {"calls": calls, "paid": paid} and calls > paid > 0

    code, out, _ = _run(capsys, "--stats", "--opponent", _fp("bob"))
    assert code == 0 and out.startswith("1 of 1 matches counted: ")


def test_the_index_audits_only_new_and_changed_files_and_is_rebuilt_when_damaged(home: Folder) -> None:
    first = hist.open_history()
    assert first.audited == len(home.files) and first.index is not None and first.index.exists()
    assert hist.open_history().audited == 0
    name = "20261101-100000-AAAAA-host.koikoi"
    p = home.path / name
    p.write_bytes(home.files[name][:-10])  # a torn tail: now unfinished
    second = hist.open_history()
    assert second.audited == 1
    row = next(r for r in second.rows if r["file"] == name)
    assert row["status"] != "complete"
    (home.path / "20261103-100000-CCCCC-host.koikoi").unlink()
    third = hist.open_history()
    assert (third.audited, third.removed, len(third.rows)) == (0, 1, len(home.files) - 1)
    # another version's index, a damaged index: rebuilt from the files
    con = sqlite3.connect(first.index)
    con.execute("UPDATE meta SET value = 'other' WHERE key = 'koikoi'")
    con.commit()
    con.close()
    assert hist.open_history().audited == len(home.files) - 1
    for extra in ("-wal", "-shm"):
        Path(str(first.index) + extra).unlink(missing_ok=True)
    first.index.write_bytes(b"not a database" * 100)
    again = hist.open_history()
    assert again.audited == len(home.files) - 1 and [r["file"] for r in again.rows] == [r["file"] for r in third.rows]


def test_a_folder_the_index_cannot_be_written_in_is_still_read(home: Folder, tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the index's folder should be")
    h = hist.open_history(home.path, blocked / "history.sqlite3")
    assert h.index is None and len(h.rows) == len(home.files)


def test_a_name_for_a_fingerprint_is_kept_in_the_config_and_shown(
    home: Folder, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "--name", _fp("alice").lower(), "Alice")
    assert code == 0 and out == f"{_fp('alice')} is now 'Alice' (in {os.environ['KOIKOI_CONFIG_DIR']}/config.toml)\n"
    cfg = (Path(os.environ["KOIKOI_CONFIG_DIR"]) / "config.toml").read_text()
    assert f'[names]\n{_fp("alice")} = "Alice"\n' in cfg
    names = {e["opponent_name"] for e in _entries(capsys, "--opponent", _fp("alice"))}
    assert names == {"Alice"}
    code, out, _ = _run(capsys)
    assert f"vs {_fp('alice')} (Alice)" in out
    code, _, err = _run(capsys, "--name", "7KQM", "x")
    assert code == 2 and err.startswith("koikoi history: '7KQM' is not a key fingerprint") and err.count("\n") == 1
    code, _, err = _run(capsys, "--name", _fp("alice"), "two\nlines")
    assert code == 2 and "a name is one line" in err
    code, out, _ = _run(capsys, "--name", _fp("alice"), "")
    assert code == 0 and "has no name now" in out
    assert {e["opponent_name"] for e in _entries(capsys, "--opponent", _fp("alice"))} == {None}


def test_an_index_that_cannot_be_written_still_shows_every_match(home: Folder, monkeypatch: pytest.MonkeyPatch) -> None:
    first = hist.open_history()
    assert first.index is not None
    (home.path / "20261108-100000-GGGGG-host.koikoi").write_bytes(home.files["20261101-100000-AAAAA-host.koikoi"])
    monkeypatch.setattr(hist, "_connect", lambda path: sqlite3.connect(f"file:{path}?mode=ro", uri=True))
    h = hist.open_history()  # the new file audited, its row not written: shown all the same
    assert h.index is None and h.audited == 1 and len(h.rows) == len(home.files) + 1
    assert hist.open_history().audited == 1
