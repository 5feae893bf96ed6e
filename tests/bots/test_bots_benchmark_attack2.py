"""A second attacker's findings on benchmarks/bots.py (``--merge``, ``--per-game``, ``--workers``).

Each test fails today: a traceback on bad input, ``Infinity`` in the printed JSON, or ``--merge`` silently
dropping one of two records of the same game that disagree (a different seat, a different result, or a
record of another run replacing one written before records named their run).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from koikoi.testing import load_script

_ROOT = Path(__file__).resolve().parents[2]
_BENCH = _ROOT / "benchmarks"

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
    "round_results": [{"winner": 0, "payment": 6}],
}
_RUN: dict[str, Any] = {"bot": "random", "seed": "bench", "rounds_per_match": 6, "double_at_8": True}


def _bots() -> ModuleType:
    return load_script(_BENCH / "bots.py", "bots")


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _refused(mod: ModuleType, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as e:
        mod.main(argv)
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_merge_refuses_a_record_whose_run_keys_are_null(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``"bot": null`` (and the other run keys null) passes ``_is_record`` as an old record, but ``"bot" in r``
    adds ``(None, None, None, None)`` to the runs; with a named record beside it, sorting the runs for the
    error message is ``TypeError: '<' not supported between instances of 'NoneType' and 'str'``."""
    nulls = dict.fromkeys(_RUN)
    f = _write(tmp_path / "r.jsonl", [{**_GOOD, **nulls}, {**_GOOD, **_RUN, "game": 1, "seat": 1}])
    try:
        line = _refused(_bots(), ["--merge", str(f)], capsys)
    except TypeError as e:  # today
        pytest.fail(f"--merge ended in a traceback: TypeError: {e}")
    assert str(f) in line or "runs" in line


def test_merge_never_prints_infinity_when_wall_times_add_up_past_a_float(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each ``wall_s`` of 1e308 is finite and accepted; their sum is inf and ``"wall_s": Infinity`` is printed."""
    f = _write(tmp_path / "r.jsonl", [{**_GOOD, "wall_s": 1e308}, {**_GOOD, "game": 1, "seat": 1, "wall_s": 1e308}])
    mod = _bots()
    try:
        mod.main(["--merge", str(f)])
    except SystemExit as e:
        assert e.code == 2
        return
    out = capsys.readouterr().out

    def strict(c: str) -> None:
        raise AssertionError(f"--merge printed {c}, which is not JSON: {out[:300]}")

    json.loads(out, parse_constant=strict)


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
    mod = _bots()
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
    old = _ROOT / "benchmarks" / "results" / "master-vs-strong.jsonl"
    first = json.loads(old.read_text().splitlines()[0])
    assert first["game"] == 0 and first["result"] == 1.0
    named = _write(tmp_path / "random.jsonl", [{**_GOOD, **_RUN, "opponent": "strong", "result": 0.0, "points": 10}])
    mod = _bots()
    try:
        mod.main(["--merge", str(old), str(named)])
    except SystemExit as e:  # refusing to mix records of unknown and named runs is fine
        assert e.code == 2
        assert capsys.readouterr().out == ""
        return
    vs = json.loads(capsys.readouterr().out)["vs_strong"]
    assert (vs["wins"], vs["losses"], vs["draws"]) == (601, 397, 2), "another bot's record replaced master's game 0"


def _cli(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    run = [sys.executable, str(_BENCH / "bots.py"), *argv]
    return subprocess.run(run, capture_output=True, text=True, timeout=120, check=False, **kw)


def test_a_record_file_that_is_a_pipe_does_not_lose_the_run() -> None:
    """``--per-game /dev/stderr`` (a pipe here; or ``--per-game >(gzip > f)``) passes ``check_writable`` and,
    after every match is played, ``append_records`` seeks it: ``io.UnsupportedOperation: File or stream is not
    seekable`` traceback, nothing printed, the records and the figures lost."""
    argv = ["--bot", "random", "--opponents", "random", "--games", "1", "--workers", "1", "--per-game", "/dev/stderr"]
    done = _cli(argv)
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
    done = _cli(argv, preexec_fn=_limit_memory)
    assert "Traceback" not in done.stderr, done.stderr.strip().splitlines()[-1]
    assert done.returncode in (0, 2)
    if done.returncode == 2:
        assert done.stdout == "" and "--workers" in done.stderr.strip().splitlines()[-1]
