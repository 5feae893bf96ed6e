"""koikoi ratings: each match once, the audit's verdict, the same table byte for byte, the bots' order recovered.

The ladder: 500 matches (1,000 transcripts: both seats' files of each) between four players with one key
each, whose strength is ordered by construction and cheap to play: the random bot, the greedy bot making
one decision in three or two in three (the random bot the others), and the greedy bot. Shared-deck
6-round matches through the in-memory harness, made once per test session.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from koikoi.client.ratings import (
    Audited,
    BadInput,
    Input,
    audit_input,
    audit_inputs,
    canonical_json,
    count_matches,
    rate,
    read_inputs,
    table_json,
)
from koikoi.engine.actions import Action
from koikoi.engine.bots.basic import GreedyBot, RandomBot
from koikoi.engine.match import SeatView, Settings
from koikoi.protocol.messages import ZERO_HASH, MsgType, fingerprint, msg_hash, parse, public_bytes
from koikoi.protocol.session import Session
from koikoi.protocol.transcript import MAGIC, encode_transcript, parse_transcript
from koikoi.testing import HarnessResult, Pair, make_pair, reforge

LADDER = ("random", "third", "two_thirds", "greedy")
"""Weakest first: the share of decisions the greedy bot makes is 0, 1/3, 2/3, 1."""
SHARE = {"random": 0.0, "third": 1 / 3, "two_thirds": 2 / 3, "greedy": 1.0}
SCHEDULE = {  # matches per pair: most between neighbours, some across
    ("random", "third"): 120,
    ("third", "two_thirds"): 140,
    ("two_thirds", "greedy"): 140,
    ("random", "two_thirds"): 40,
    ("third", "greedy"): 40,
    ("random", "greedy"): 20,
}


class Mixed:
    """The greedy bot for a share of the decisions, the random bot for the rest."""

    name = "mixed"

    def __init__(self, share: float, rng: random.Random) -> None:
        self.share = share
        self.rng = rng
        self.greedy = GreedyBot(random.Random(rng.getrandbits(64)))
        self.random = RandomBot(random.Random(rng.getrandbits(64)))

    def choose(self, view: SeatView) -> Action:
        return (self.greedy if self.rng.random() < self.share else self.random).choose(view)


def _h(*parts: bytes) -> bytes:
    return hashlib.sha256(b"koikoi/test-ladder\x00" + b"\x00".join(parts)).digest()


def player_key(name: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(_h(b"key", name.encode()))


def player_fp(name: str) -> str:
    return fingerprint(public_bytes(player_key(name)))


def play(a: str, b: str, i: int, *, bots: tuple[str, str] | None = None) -> HarnessResult:
    """Match ``i``: ``a`` creates (seat 0), ``b`` joins; each with its own key, nonces from ``i``. ``bots``
    overrides who plays (the keys stay ``a``'s and ``b``'s)."""
    who = bots or (a, b)
    settings = Settings(6, True)
    x = Session.create(player_key(a), "LADDER", settings, _h(b"nonce0", b"%d" % i), relay_key=ZERO_HASH)
    y = Session.join(player_key(b), "LADDER", _h(b"nonce1", b"%d" % i), relay_key=ZERO_HASH)
    rng = random.Random(int.from_bytes(_h(b"bots", b"%d" % i), "big"))
    pair = Pair((x, y), (Mixed(SHARE[who[0]], rng), Mixed(SHARE[who[1]], random.Random(rng.getrandbits(64)))))
    pair.note(0, x.start())
    pair.note(1, y.start())
    return pair.result(pair.run())


@pytest.fixture(scope="session")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ladder's 1,000 transcripts in one folder: ``NNNNN-A-B-S.koikoi`` (S the seat whose file it is)."""
    folder = tmp_path_factory.mktemp("ladder")
    i = 0
    for (a, b), n in SCHEDULE.items():
        for k in range(n):
            x, y = (a, b) if k % 2 == 0 else (b, a)
            r = play(x, y, i)
            for seat in (0, 1):
                (folder / f"{i:05d}-{x}-{y}-{seat}.koikoi").write_bytes(r.transcripts[seat])
            i += 1
    return folder


@pytest.fixture(scope="session")
def ladder_audited(ladder: Path) -> list[Audited]:
    out = []
    for a in audit_inputs(read_inputs([str(ladder)])):
        assert not isinstance(a, BadInput)
        out.append(a)
    return out


def _table(files: list[Audited]) -> str:
    counted = count_matches(files)
    return canonical_json(table_json(counted, rate(counted.matches)))


def test_the_ladder_is_recovered_from_1000_transcripts(ladder_audited: list[Audited]) -> None:
    assert len(ladder_audited) == 1000
    table = json.loads(_table(ladder_audited))
    assert table["files"] == 1000 and table["rated"] == sum(SCHEDULE.values()) == 500  # each match once
    assert table["left_out"] == {"counts": {}, "matches": []}
    by_fp = {player_fp(n): n for n in LADDER}
    order = [by_fp[p["player"]] for p in table["players"]]
    assert order == list(reversed(LADDER))  # strongest first
    assert [p["rank"] for p in table["players"]] == [1, 2, 3, 4]
    ratings = [p["rating"] for p in table["players"]]
    assert ratings == sorted(ratings, reverse=True) and len(set(ratings)) == 4
    for p in table["players"]:
        assert p["wins"] + p["losses"] + p["draws"] == p["matches"]
        assert round(p["mu"] - 3 * p["sigma"], 6) == p["rating"]
    assert sum(p["matches"] for p in table["players"]) == 1000


def test_the_same_files_give_the_same_table_byte_for_byte_in_any_order(ladder_audited: list[Audited]) -> None:
    first = _table(ladder_audited)
    rng = random.Random(22)
    for _ in range(3):
        shuffled = rng.sample(ladder_audited, len(ladder_audited))
        assert _table(shuffled) == first
    # only one seat's file of each match: the same matches, so the same players and ratings
    one_seat = [a for a in ladder_audited if a.label.endswith("-0.koikoi")]
    assert json.loads(_table(one_seat))["players"] == json.loads(first)["players"]


def _koikoi(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``koikoi ARGS`` with the config and data dirs under ``home`` (never the real home's: no names there)."""
    env = {**os.environ, "KOIKOI_CONFIG_DIR": str(home / "config"), "KOIKOI_DATA_DIR": str(home / "data")}
    return subprocess.run(
        [sys.executable, "-m", "koikoi.client", *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=env
    )


def test_the_command_prints_the_same_bytes_from_other_paths_in_another_order(ladder: Path, tmp_path: Path) -> None:
    files = sorted(ladder.glob("*.koikoi"))[:40]  # 20 matches, both seats
    other = tmp_path / "elsewhere"
    other.mkdir()
    copies = []
    for n, f in enumerate(reversed(files)):
        c = other / f"copy-{n}.koikoi"
        shutil.copy(f, c)
        copies.append(str(c))
    a = _koikoi(tmp_path, "ratings", "--json", *map(str, files))
    b = _koikoi(tmp_path, "ratings", "--json", *copies, cwd=tmp_path)
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert a.stdout == b.stdout and a.stdout.endswith("}\n") and a.stdout.count("\n") == 1
    assert json.loads(a.stdout)["rated"] == 20
    text = _koikoi(tmp_path, "ratings", str(other))
    assert text.returncode == 0 and "20 matches rated from 40 files; left out: none." in text.stdout


def _fork_pair() -> tuple[bytes, bytes]:
    """Two valid files of one match (the same keys and nonces, so the same match id) whose lines fork and whose
    winners differ: the same players' keys played it twice, differently (the first other choice of bots whose
    match the other seat wins), and each run's seat kept its own file."""
    one = play("third", "greedy", 90_000).transcripts[0]
    first = audit_input(Input("one", one)).winner
    for bots in (("greedy", "random"), ("random", "greedy"), ("greedy", "greedy"), ("random", "random")):
        two = play("third", "greedy", 90_000, bots=bots).transcripts[1]
        if audit_input(Input("two", two)).winner not in (None, first):
            return one, two
    raise AssertionError("no other choice of bots changed the winner")


def test_a_pair_that_disagrees_is_reported_and_left_out(ladder_audited: list[Audited], tmp_path: Path) -> None:
    a, b = _fork_pair()
    (tmp_path / "fork-a.koikoi").write_bytes(a)
    (tmp_path / "fork-b.koikoi").write_bytes(b)
    forked = []
    for x in audit_inputs(read_inputs([str(tmp_path / "fork-a.koikoi"), str(tmp_path / "fork-b.koikoi")])):
        assert isinstance(x, Audited)
        forked.append(x)
    assert [f.status for f in forked] == ["complete", "complete"] and {f.winner for f in forked} == {0, 1}
    assert forked[0].match_id == forked[1].match_id and forked[0].line != forked[1].line
    counted = count_matches([*ladder_audited[:100], *forked])
    assert len(counted.matches) == 50
    (left,) = counted.left_out
    assert left.reason == "disagree" and left.match_id == forked[0].match_id and "fork at sequence" in left.detail
    table = table_json(counted, rate(counted.matches))
    assert table["left_out"]["counts"] == {"disagree": 1}
    assert table["left_out"]["matches"][0]["files"] == sorted(f.sha256 for f in forked)
    # each file alone is a match counted once: only together do they disagree
    assert len(count_matches([forked[0]]).matches) == 1

    run = _koikoi(tmp_path / "home", "ratings", str(tmp_path))
    assert run.returncode == 0
    assert "0 matches rated from 2 files; left out: 1 disagree." in run.stdout
    assert f"match {forked[0].match_id}: the files' verdicts differ (seat 0 won and seat 1 won): " in run.stdout


def test_a_losers_second_file_that_resigns_earlier_does_not_erase_the_loss(ladder_audited: list[Audited]) -> None:
    """The loser signs a RESIGN where the winner's message stood and keeps the line up to there: a valid file
    of the same match whose line forks, with the same winner. The match still counts once, as it was."""
    honest = next(a for a in ladder_audited if a.status == "complete" and a.winner is not None)
    loser = 1 - (honest.winner or 0)
    names = Path(honest.label).name.removesuffix(".koikoi").split("-")[1:3]
    frames = parse_transcript(Path(honest.label).read_bytes()).frames
    k = next(i for i in range(len(frames) // 2, len(frames)) if parse(frames[i]).seat != loser)
    key = player_key(names[loser])
    resign = reforge(frames[k - 1], key, type=MsgType.RESIGN, seq=k, prev=msg_hash(frames[k - 1]), seat=loser)
    second = audit_input(Input("second", encode_transcript([*frames[:k], resign])))
    assert (second.status, second.winner, second.match_id) == ("resigned", honest.winner, honest.match_id)
    assert second.line[:k] == honest.line[:k] and second.line[k] != honest.line[k]
    counted = count_matches([honest, second])
    assert counted.left_out == [] and [(m.match_id, m.winner, len(m.files)) for m in counted.matches] == [
        (honest.match_id, honest.winner, 2)
    ]


def _flip(data: bytes, at: int) -> bytes:
    b = bytearray(data)
    b[at] ^= 0x01
    return bytes(b)


def test_a_forged_file_is_invalid_and_its_match_still_counts_once_from_the_honest_file(
    ladder_audited: list[Audited],
) -> None:
    honest = ladder_audited[0]
    data = Path(honest.label).read_bytes()
    forged_bytes = _flip(data, len(data) // 2)
    forged = audit_input(Input("forged.koikoi", forged_bytes))
    assert forged.status == "invalid" and forged.error is not None
    counted = count_matches([honest, forged])
    assert [m.match_id for m in counted.matches] == [honest.match_id]
    assert [(x.reason, x.files[0].label) for x in counted.left_out] == [("invalid", "forged.koikoi")]
    assert count_matches([forged]).matches == []


def test_unfinished_and_abandoned_matches_are_listed_and_not_rated(tmp_path: Path) -> None:
    r = play("random", "greedy", 91_000)
    frames = parse_transcript(r.transcripts[0]).frames
    (tmp_path / "unfinished.koikoi").write_bytes(encode_transcript(frames[: len(frames) // 2]))
    mismatch = make_pair(Settings(6), seed=b"ratings-mismatch", join_rounds=12)
    mismatch.run()
    (tmp_path / "abandoned.koikoi").write_bytes(bytes(mismatch.files[1]))
    (tmp_path / "empty.koikoi").write_bytes(MAGIC)
    files = [a for a in audit_inputs(read_inputs([str(tmp_path)])) if isinstance(a, Audited)]
    assert sorted(f.status for f in files) == ["abandoned", "unfinished", "unfinished"]
    counted = count_matches(files)
    assert counted.matches == [] and rate(counted.matches) == []
    assert sorted(x.reason for x in counted.left_out) == ["abandoned", "unfinished", "unfinished"]


def test_a_win_on_time_and_a_resignation_count_as_wins() -> None:
    timed = make_pair(Settings(6), seed=b"ratings-on-time")
    for _ in range(100):
        if timed.sessions[1].referee.next_seq >= 3:
            break
        timed.step()
    timed.silent[0] = True  # the creator never reveals: it loses on time, witnessed
    timed.run()
    resigned = make_pair(Settings(6), seed=b"ratings-resign")
    for _ in range(40):
        resigned.step()
    resigned.sessions[1].resign()
    resigned.flush(1)
    resigned.run()
    files = [audit_input(Input("t", bytes(timed.files[1]))), audit_input(Input("r", bytes(resigned.files[0])))]
    assert [(f.status, f.winner) for f in files] == [("on_time", 1), ("resigned", 0)]
    counted = count_matches(files)
    players = {p.fingerprint: p for p in rate(counted.matches)}
    assert len(players) == 4
    for f in files:
        assert f.winner is not None
        w, lo = players[f.players[f.winner] or ""], players[f.players[1 - f.winner] or ""]
        assert (w.wins, w.losses, lo.wins, lo.losses) == (1, 0, 0, 1) and w.rating > lo.rating


def test_bad_input_gets_one_line_and_the_rest_still_counts(ladder: Path, tmp_path: Path) -> None:
    good = sorted(ladder.glob("*.koikoi"))[:2]  # one match, both seats
    junk = tmp_path / "notes.txt"
    junk.write_text("not a transcript\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "readme.md").write_text("ignored: a folder gives its .koikoi files")
    with socket.socket() as s:  # a port nothing listens on: an archive that cannot be reached
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run = _koikoi(
        tmp_path,
        "ratings",
        "--json",
        str(tmp_path / "missing.koikoi"),
        str(junk),
        *map(str, good),
        str(folder),
        f"http://127.0.0.1:{port}/matches",
    )
    assert run.returncode == 2
    lines = run.stderr.splitlines()
    assert lines == [
        f"koikoi ratings: {tmp_path / 'missing.koikoi'}: no such file",
        f"koikoi ratings: {junk}: invalid, not rated: not a koikoi transcript (the header is wrong)",
        f"koikoi ratings: http://127.0.0.1:{port}/matches: cannot reach 127.0.0.1:{port}: Connection refused",
    ]
    table = json.loads(run.stdout)
    assert table["rated"] == 1 and table["files"] == 3 and table["left_out"]["counts"] == {"invalid": 1}


def test_files_whose_bytes_differ_by_a_superseded_move_are_one_match() -> None:
    """Seat 1 resigns while seat 0's move is in transit: seat 0's file also holds the move the resignation
    superseded, so the two files differ, yet their lines (the chain the audit accepted) are the same."""
    pair = make_pair(Settings(6), seed=b"ratings-crossing")
    a, b = pair.sessions
    for _ in range(10_000):
        if a.match is not None and len(a.match.history) >= 1 and a.my_turn and not any(pair.queues):
            break
        assert pair.step()
    bot = pair.bots[0]
    assert bot is not None
    a.play(bot.choose(a.view()))
    pair.flush(0)
    b.resign()
    pair.flush(1)
    pair.run()
    files = [audit_input(Input(f"seat{s}", bytes(pair.files[s]))) for s in (0, 1)]
    assert files[0].sha256 != files[1].sha256 and files[0].line == files[1].line
    assert [(f.status, f.winner) for f in files] == [("resigned", 0), ("resigned", 0)]
    counted = count_matches(files)
    assert [len(m.files) for m in counted.matches] == [2] and counted.left_out == []


def test_one_key_on_both_seats_is_not_rated() -> None:
    r = play("third", "third", 92_000)
    (f,) = count_matches([audit_input(Input("self", r.transcripts[0]))]).left_out
    assert (f.reason, f.detail) == ("same_key", "one key played both seats")
