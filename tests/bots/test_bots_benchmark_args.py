"""The bot benchmarks refuse bad arguments with one line naming what was wrong, before they play anything.

Most of these came from two attackers' findings: each was an input that ended in a traceback, in output
that is not JSON, or in records lost, glued together or silently dropped.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from koikoi.testing import load_script

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _script(name: str) -> ModuleType:
    return load_script(_BENCH / f"{name}.py", name)


def _refused(mod: ModuleType, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as e:
        mod.main(argv)
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    return err.strip().splitlines()[-1]


_GOOD: dict[str, Any] = {  # a record --merge takes
    "opponent": "random",
    "game": 0,
    "seat": 0,
    "result": 1.0,
    "points": 50,
    "rounds": 2,
    "wall_s": 1.0,
    "decision_s": [0.1],
    "decision_cpu_s": [0.1],
    "round_results": [{"winner": 0, "payment": 6}, {"winner": 0, "payment": 19}],
}


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--games", "0"], "argument --games: '0' is not a whole number of 1 or more"),
        (["--games", "ten"], "argument --games: 'ten' is not a whole number of 1 or more"),
        (["--first-game", "-1"], "argument --first-game: '-1' is not a whole number of 0 or more"),
        (["--workers", "0"], "argument --workers: '0' is not a whole number of 1 or more"),
        (["--workers", "65"], "argument --workers: '65' is more than 64"),
        (
            ["--opponents", "greedy,grandmaster"],
            "unknown bot 'grandmaster'; built-in bots: greedy, master, random, strong",
        ),
        (["--bot", "grandmaster"], "unknown bot 'grandmaster'"),
    ],
)
def test_bots_refuses(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert says in _refused(_script("bots"), argv, capsys)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--games", "-3"], "argument --games: '-3' is not a whole number of 1 or more"),
        (["--first-game", "x"], "argument --first-game: 'x' is not a whole number of 0 or more"),
        (["--rollouts", "0"], "argument --rollouts: '0' is not a whole number of 1 or more"),
        (["--opponent", "grandmaster"], "unknown bot 'grandmaster'"),
    ],
)
def test_ceiling_refuses(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert says in _refused(_script("bots_ceiling"), argv, capsys)


@pytest.mark.parametrize("name", ["bots", "bots_ceiling"])
def test_a_record_file_that_cannot_be_written_stops_before_the_first_match(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-folder" / "records.jsonl"
    argv = ["--games", "1", "--per-game", str(missing)]
    argv += ["--opponents", "random"] if name == "bots" else ["--opponent", "random"]
    line = _refused(_script(name), argv, capsys)
    assert line.endswith(f"--per-game {missing}: No such file or directory")


def test_merge_names_the_file_and_line_that_is_not_a_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _script("bots")
    missing = tmp_path / "absent.jsonl"
    assert _refused(mod, ["--merge", str(missing)], capsys).endswith(f"--merge {missing}: No such file or directory")
    good = _GOOD
    bads = [{**good, "result": 2}, {**good, "result": True}, {**good, "game": "0"}, {**good, "seat": 2}]
    bads += [{**good, "wall_s": -1.0}, {**good, "decision_s": [0.1, -0.2]}, {**good, "points": 51}]
    bads += [{**good, "seat": 1}]  # game 0's bot sits at seat 0
    bads += [
        {**good, "bot": "master"},
        {**good, "bot": "master", "seed": "s", "rounds_per_match": 7, "double_at_8": True},
    ]
    for bad in ("not json", json.dumps([1, 2]), *(json.dumps(b) for b in bads)):
        f = tmp_path / "records.jsonl"
        f.write_text(json.dumps(good) + "\n" + bad + "\n")
        assert _refused(mod, ["--merge", str(f)], capsys).endswith(
            f"--merge {f}: line 2 is not a bots.py --per-game record"
        )
    f.write_text(json.dumps(good) + "\n")
    assert mod.main(["--merge", str(f)]) == 0
    assert json.loads(capsys.readouterr().out)["vs_random"]["wins"] == 1


def _without(key: str) -> dict[str, Any]:
    return {k: v for k, v in _GOOD.items() if k != key}


@pytest.mark.parametrize(
    "bad",
    [
        _without("seat"),  # KeyError: 'seat' (round_figures reads it, _is_record does not check it)
        {**_GOOD, "round_results": None},  # TypeError: 'NoneType' object is not iterable
        {**_GOOD, "round_results": 5},  # TypeError: 'int' object is not iterable
        {**_GOOD, "round_results": [{"winner": 0, "payment": 6}, {}]},  # KeyError: 'winner'
        {**_GOOD, "round_results": [{"winner": 0, "payment": 6}, {"winner": 1, "payment": "x"}]},  # statistics.mean
        {**_GOOD, "round_results": [{"winner": 0, "payment": 6}]},  # one round where the record says two
        {**_GOOD, "points": 10**400},  # OverflowError: integer division result too large for a float
    ],
    ids=["no-seat", "rounds-null", "rounds-int", "round-empty", "payment-str", "rounds-short", "huge-points"],
)
def test_merge_refuses_a_record_whose_other_fields_it_reads_are_wrong(
    bad: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "records.jsonl"
    f.write_text(json.dumps(_GOOD) + "\n" + json.dumps(bad) + "\n")
    assert _refused(_script("bots"), ["--merge", str(f)], capsys).endswith(
        f"--merge {f}: line 2 is not a bots.py --per-game record"
    )


def test_merge_refuses_a_file_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "records.jsonl"
    f.write_bytes(json.dumps({**_GOOD, "opponent": "x"}).replace('"x"', '"\xe9"').encode("latin-1") + b"\n")
    line = _refused(_script("bots"), ["--merge", str(f)], capsys)  # today: UnicodeDecodeError traceback
    assert line.startswith("bots.py: error: --merge") and str(f) in line


def test_merge_refuses_a_deeply_nested_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "records.jsonl"
    f.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    assert _refused(_script("bots"), ["--merge", str(f)], capsys).endswith(  # today: RecursionError traceback
        f"--merge {f}: line 1 is not a bots.py --per-game record"
    )


def _refused_or_strict_json(f: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--merge f`` either refuses the file or prints JSON without ``NaN`` or ``Infinity``."""
    try:
        _script("bots").main(["--merge", str(f)])
    except SystemExit as e:
        assert e.code == 2
        return
    out = capsys.readouterr().out

    def strict(c: str) -> None:
        raise AssertionError(f"--merge printed {c}, which is not JSON: {out[:300]}")

    json.loads(out, parse_constant=strict)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_merge_never_prints_nan_or_infinity(value: float, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``NaN``/``Infinity`` are not JSON; a record holding them is refused or the output stays strict JSON."""
    f = tmp_path / "records.jsonl"
    f.write_text(json.dumps({**_GOOD, "wall_s": value}) + "\n")
    _refused_or_strict_json(f, capsys)


@pytest.mark.parametrize("name", ["bots", "bots_ceiling"])
def test_a_first_game_past_the_seed_range_is_refused_before_anything_is_played(name: str, tmp_path: Path) -> None:
    """``game_seed`` packs the index in 4 bytes: game 2**32 is an OverflowError traceback today.

    With ``--first-game 4294967295 --games 2`` bots_ceiling plays (and records) the first game and then dies.
    """
    rec = tmp_path / "records.jsonl"
    argv = ["--first-game", str(2**32 - 1), "--games", "2", "--per-game", str(rec)]
    argv += ["--bot", "random", "--opponents", "random", "--workers", "1"] if name == "bots" else []
    argv += ["--opponent", "random", "--rollouts", "20"] if name == "bots_ceiling" else []
    done = _cli(name, argv)
    assert "Traceback" not in done.stderr, done.stderr[-300:]
    assert done.returncode == 2 and done.stdout == ""
    assert "--first-game" in done.stderr.strip().splitlines()[-1]
    assert not rec.exists() or rec.read_text() == ""


@pytest.mark.parametrize("name", ["bots", "bots_ceiling"])
def test_a_seed_that_is_not_utf8_is_refused(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--seed $'\\xff'`` reaches argv as a lone surrogate: UnicodeEncodeError traceback at ``seed.encode()``."""
    argv = ["--seed", "\udcff", "--games", "1"]
    argv += ["--bot", "random", "--opponents", "random", "--workers", "1"] if name == "bots" else []
    argv += ["--opponent", "random", "--rollouts", "20"] if name == "bots_ceiling" else []
    assert "--seed" in _refused(_script(name), argv, capsys)


def _cli(name: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """The script run as a user runs it (bots.py's worker pool cannot pickle a ``load_script`` module)."""
    run = [sys.executable, str(_BENCH / f"{name}.py"), *argv]
    return subprocess.run(run, capture_output=True, text=True, timeout=120, check=False)


def _played(argv: list[str]) -> dict[str, Any]:
    done = _cli("bots", argv)
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def _run(mod: ModuleType, argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert mod.main(argv) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (["--bot", "random"], ["--bot", "greedy"]),
        (["--bot", "random", "--seed", "bench"], ["--bot", "random", "--seed", "other"]),
    ],
    ids=["two-bots", "two-seeds"],
)
def test_merge_does_not_silently_drop_the_records_of_another_run(
    first: list[str], second: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records hold no bot, seed or settings, so game 0 of one run silently replaces game 0 of another."""
    mod = _script("bots")
    common = ["--opponents", "random", "--games", "2", "--workers", "1"]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _played([*first, *common, "--per-game", str(a)])
    _played([*second, *common, "--per-game", str(b)])
    try:
        merged = _run(mod, ["--merge", str(a), str(b)], capsys)
    except SystemExit as e:  # refusing to mix two runs is fine
        assert e.code == 2
        return
    assert merged["games"]["random"] == 4, f"two runs' 4 records merged into {merged['games']['random']}"


def test_appending_to_a_record_file_without_a_final_newline_keeps_its_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--merge`` accepts a file whose last line has no newline; ``--per-game`` then glues its first record on."""
    mod = _script("bots")
    f = tmp_path / "records.jsonl"
    f.write_text(json.dumps({**_GOOD, "game": 1, "seat": 1}))  # no final newline: merge accepts it
    assert _run(mod, ["--merge", str(f)], capsys)["games"] == {"random": 1}
    _played(["--bot", "random", "--opponents", "random", "--games", "1", "--workers", "1", "--per-game", str(f)])
    assert _run(mod, ["--merge", str(f)], capsys)["games"] == {"random": 2}


def test_ceiling_says_when_it_ran_on_a_smaller_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--rollouts 20`` is in neither the printed figures nor the records: they read as the full budget's."""
    rec = tmp_path / "records.jsonl"
    argv = ["--opponent", "random", "--games", "1", "--rollouts", "20", "--per-game", str(rec)]
    out = _run(_script("bots_ceiling"), argv, capsys)
    assert out.get("rollouts") == 20
    assert json.loads(rec.read_text().splitlines()[0]).get("rollouts") == 20


def test_merge_reads_a_byte_order_mark_and_skips_blank_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "records.jsonl"
    second = {**_GOOD, "game": 1, "seat": 1, "result": 0.0, "points": 0}
    f.write_text("\ufeff" + json.dumps(_GOOD) + "\n\n" + json.dumps(second) + "\n  \n", encoding="utf-8")
    vs = _run(_script("bots"), ["--merge", str(f)], capsys)["vs_random"]
    assert (vs["wins"], vs["losses"]) == (1, 1)


def test_records_that_cannot_be_written_after_play_still_leave_the_figures() -> None:
    """A record file that accepts opening but not writing (a full disk): the figures are printed, the error
    is one line, the exit status 1."""
    full = Path("/dev/full")
    argv = ["--bot", "random", "--opponents", "random", "--games", "1", "--workers", "1", "--per-game", str(full)]
    done = _cli("bots", argv)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert json.loads(done.stdout)["vs_random"]["wins"] + json.loads(done.stdout)["vs_random"]["losses"] <= 1
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith("--per-game /dev/full: No space left on device; the figures are printed")
    )


# A second attacker's findings: null run keys, sums past a float, two records of one game that disagree,
# a pipe as the record file, a huge --workers.

_RUN: dict[str, Any] = {"bot": "random", "seed": "bench", "rounds_per_match": 6, "double_at_8": True}


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_merge_refuses_a_record_whose_run_keys_are_null(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``"bot": null`` (and the other run keys null) passes ``_is_record`` as an old record, but ``"bot" in r``
    adds ``(None, None, None, None)`` to the runs; with a named record beside it, sorting the runs for the
    error message is ``TypeError: '<' not supported between instances of 'NoneType' and 'str'``."""
    nulls = dict.fromkeys(_RUN)
    f = _write(tmp_path / "r.jsonl", [{**_GOOD, **nulls}, {**_GOOD, **_RUN, "game": 1, "seat": 1}])
    try:
        line = _refused(_script("bots"), ["--merge", str(f)], capsys)
    except TypeError as e:  # today
        pytest.fail(f"--merge ended in a traceback: TypeError: {e}")
    assert str(f) in line or "runs" in line


def test_merge_never_prints_infinity_when_wall_times_add_up_past_a_float(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each ``wall_s`` of 1e308 is finite and accepted; their sum is inf and ``"wall_s": Infinity`` is printed."""
    f = _write(tmp_path / "r.jsonl", [{**_GOOD, "wall_s": 1e308}, {**_GOOD, "game": 1, "seat": 1, "wall_s": 1e308}])
    _refused_or_strict_json(f, capsys)


@pytest.mark.parametrize(
    "other",
    [
        {**_GOOD, **_RUN, "seat": 1, "result": 0.0, "points": 10},  # game 0 from the other seat
        {**_GOOD, **_RUN, "result": 0.0, "points": 10},  # game 0 with another result
    ],
    ids=["other-seat", "other-result"],
)
def test_merge_does_not_silently_keep_one_of_two_records_of_a_game_that_disagree(
    other: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``A game recorded twice counts once`` keys on (opponent, game) only: two records of game 0 that are not
    the same match (another seat, another result: e.g. two versions of the same bot on the same seed appended
    to one file) merge into 1 game, the later one silently replacing the earlier."""
    first = {**_GOOD, **_RUN}
    f = _write(tmp_path / "r.jsonl", [first, other])
    mod = _script("bots")
    try:
        mod.main(["--merge", str(f)])
    except SystemExit as e:  # refusing two records of one game that disagree is what is asked
        assert e.code == 2
        assert capsys.readouterr().out == ""
        return
    games = json.loads(capsys.readouterr().out)["games"]["random"]
    pytest.fail(f"two disagreeing records of game 0 merged silently into {games} game")


def test_merge_of_an_old_file_and_a_named_record_of_another_bot_does_not_replace_an_old_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The committed master-vs-strong records name no run; a record of bot ``random`` vs strong, game 0, silently
    replaces master's game 0: ``--merge`` prints 600 wins, 398 losses (not 601, 397) and no word of it."""
    old = _BENCH / "results" / "master-vs-strong.jsonl"
    first = json.loads(old.read_text().splitlines()[0])
    assert first["game"] == 0 and first["result"] == 1.0
    named = _write(tmp_path / "random.jsonl", [{**_GOOD, **_RUN, "opponent": "strong", "result": 0.0, "points": 10}])
    mod = _script("bots")
    try:
        mod.main(["--merge", str(old), str(named)])
    except SystemExit as e:  # refusing to mix records of unknown and named runs is fine
        assert e.code == 2
        assert capsys.readouterr().out == ""
        return
    vs = json.loads(capsys.readouterr().out)["vs_strong"]
    assert (vs["wins"], vs["losses"], vs["draws"]) == (601, 397, 2), "another bot's record replaced master's game 0"


def _cli_bots(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    run = [sys.executable, str(_BENCH / "bots.py"), *argv]
    return subprocess.run(run, capture_output=True, text=True, timeout=120, check=False, **kw)


def test_a_record_file_that_is_a_pipe_does_not_lose_the_run() -> None:
    """``--per-game /dev/stderr`` (a pipe here; or ``--per-game >(gzip > f)``) passes ``check_writable`` and,
    after every match is played, ``append_records`` seeks it: ``io.UnsupportedOperation: File or stream is not
    seekable`` traceback, nothing printed, the records and the figures lost."""
    argv = ["--bot", "random", "--opponents", "random", "--games", "1", "--workers", "1", "--per-game", "/dev/stderr"]
    done = _cli_bots(argv)
    assert "Traceback" not in done.stderr, done.stderr[-300:]
    if done.returncode == 2:  # refused before anything is played
        assert done.stdout == ""
    else:
        assert done.returncode == 0
        json.loads(done.stdout)
        assert '"game": 0' in done.stderr


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (700 * 2**20, 700 * 2**20))


def test_a_huge_worker_count_is_refused_or_capped_not_a_memory_error() -> None:
    """``--workers 1000000000 --games 1`` builds ``4 * workers`` job tuples before playing (and with ``fork``
    ProcessPoolExecutor starts every worker up front): under a 700 MB limit, a ``MemoryError`` traceback."""
    argv = ["--bot", "random", "--opponents", "random", "--games", "1", "--workers", str(10**9)]
    done = _cli_bots(argv, preexec_fn=_limit_memory)
    assert "Traceback" not in done.stderr, done.stderr.strip().splitlines()[-1]
    assert done.returncode in (0, 2)
    if done.returncode == 2:
        assert done.stdout == "" and "--workers" in done.stderr.strip().splitlines()[-1]


def test_no_more_workers_start_than_there_are_matches() -> None:
    argv = ["--bot", "random", "--opponents", "random", "--games", "2", "--workers", "5"]
    done = _cli("bots", argv)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["workers"] == 2


@pytest.mark.parametrize(
    ("script", "argv"),
    [
        ("bots_ceiling.py", ["--opponent", "random", "--games", "1", "--rollouts", "8", "--model-opponent"]),
        ("bots.py", ["--bot", "random", "--opponents", "random", "--games", "1", "--workers", "1"]),
    ],
)
def test_records_to_a_named_pipe_reach_its_reader(tmp_path: Path, script: str, argv: list[str]) -> None:
    """``mkfifo f; cat f > out & bots.py … --per-game f`` (an attacker's finding): the check before play
    must not open the pipe, or its reader sees end-of-file and exits, and the open for the records after
    play then waits for a reader for ever."""
    fifo = tmp_path / "records.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    run = subprocess.Popen(
        [sys.executable, str(_BENCH / script), *argv, "--per-game", str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its worker processes too are stopped if it hangs
    )
    try:
        out, err = run.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        out, err = run.communicate()
        reader.kill()
        reader.communicate()
        pytest.fail(f"{script} hung opening the pipe for its records: its reader had seen end-of-file")
    got, _ = reader.communicate(timeout=120)
    assert run.returncode == 0, err
    records = [json.loads(line) for line in got.splitlines()]
    assert [r["game"] for r in records] == [0] and json.loads(out)["games"] == 1


@pytest.mark.parametrize("name", ["bots", "bots_ceiling"])
def test_a_named_pipe_that_cannot_be_written_is_refused_before_play(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The pipe is not opened before play, so its write permission is what is checked (os.access, faked
    here: these tests may run as root, whom every pipe lets write); a reader waits in case it is opened."""
    fifo = tmp_path / "records.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.DEVNULL)
    try:
        mod = _script(name)
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, m: False if str(p) == str(fifo) else real(p, m))
        argv = ["--games", "1", "--per-game", str(fifo)]
        argv += ["--opponent", "random"] if name == "bots_ceiling" else ["--opponents", "random"]
        assert _refused(mod, argv, capsys) == f"{name}.py: error: --per-game {fifo}: Permission denied"
    finally:
        reader.kill()
        reader.wait()
