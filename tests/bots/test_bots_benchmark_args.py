"""The bot benchmarks refuse bad arguments with one line naming what was wrong, before they play anything."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

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


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--games", "0"], "argument --games: '0' is not a whole number of 1 or more"),
        (["--games", "ten"], "argument --games: 'ten' is not a whole number of 1 or more"),
        (["--first-game", "-1"], "argument --first-game: '-1' is not a whole number of 0 or more"),
        (["--workers", "0"], "argument --workers: '0' is not a whole number of 1 or more"),
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
    good = {
        "opponent": "random",
        "game": 0,
        "seat": 0,
        "result": 1.0,
        "points": 50,
        "rounds": 2,
        "wall_s": 1.0,
        "decision_s": [0.1],
        "decision_cpu_s": [0.1],
    }
    bads = [{**good, "result": 2}, {**good, "result": True}, {**good, "game": "0"}, {**good, "seat": 2}]
    bads += [{**good, "wall_s": -1.0}, {**good, "decision_s": [0.1, -0.2]}, {**good, "points": 51}]
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
