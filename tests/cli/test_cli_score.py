"""`koikoi score`: the command-line contract, and a few of the CLI's general promises."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from koikoi.client.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:  # argparse usage errors
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_contract_for_the_worked_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "score", "sakura_curtain", "susuki_moon", "kiku_sake_cup", "--calls", "2", "--json")
    assert code == 0
    assert json.loads(out) == {
        "yaku": [{"id": "hanami", "points": 5}, {"id": "tsukimi", "points": 5}],
        "base": 10,
        "doubled": True,
        "multiplier": 3,
        "score": 60,
        "payment": 25,
    }


def test_breakdown_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "score", "sakura_curtain", "susuki_moon", "kiku_sake_cup", "--calls", "1")
    assert code == 0
    assert "Hanami de ippai" in out and "× 2  base of 8 or more is doubled" in out
    assert "× 2  1 koi-koi call this round" in out and "Payment: 25" in out


def test_options(capsys: pytest.CaptureFixture[str]) -> None:
    lights = ["matsu_crane", "sakura_curtain", "susuki_moon", "yanagi_rainman", "kiri_phoenix"]
    _, out, _ = run(capsys, "score", *lights, "--no-double", "--json")
    assert json.loads(out)["score"] == 10 and json.loads(out)["doubled"] is False
    _, out, _ = run(capsys, "score", *lights, "--loser-points", "7", "--json")
    assert json.loads(out)["payment"] == 7
    _, out, _ = run(capsys, "score", *lights, "--rules", "nintendo", "--loser-called", "--loser-points", "3", "--json")
    assert json.loads(out) == {
        "yaku": [{"id": "goko", "points": 10}],
        "base": 10,
        "doubled": True,
        "multiplier": 2,
        "score": 40,
        "payment": 40,
    }
    plains = ["matsu_plain_1", "matsu_plain_2", "ume_plain_1", "ume_plain_2", "sakura_plain_1",
              "sakura_plain_2", "fuji_plain_1", "fuji_plain_2", "ayame_plain_1", "kiku_sake_cup"]  # fmt: skip
    _, out, _ = run(capsys, "score", *plains, "--json")
    assert json.loads(out)["yaku"] == []
    _, out, _ = run(capsys, "score", *plains, "--rules", "nintendo", "--json")
    assert json.loads(out)["yaku"] == [{"id": "kasu", "points": 1}]


def test_hand_yaku(capsys: pytest.CaptureFixture[str]) -> None:
    hand = ["sakura_curtain", "sakura_ribbon", "sakura_plain_1", "sakura_plain_2",
            "matsu_crane", "matsu_plain_1", "ume_warbler", "ume_plain_1"]  # fmt: skip
    code, out, _ = run(capsys, "score", *hand, "--hand", "--json")
    assert code == 0
    assert json.loads(out) == {"yaku": [{"id": "teshi", "points": 6}], "base": 6, "doubled": False,
                               "multiplier": 1, "score": 6, "payment": 6}  # fmt: skip
    code, _, err = run(capsys, "score", *hand[:5], "--hand")
    assert code == 2 and "eight" in err


def test_unknown_card_exits_2_naming_it_and_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "score", "sakura_curtan", "susuki_moon")
    assert code == 2 and out == ""
    assert "sakura_curtan" in err and "sakura_curtain" in err
    assert "Traceback" not in err


def test_repeated_card_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "score", "susuki_moon", "kiku_sake_cup", "susuki_moon")
    assert code == 2 and "susuki_moon" in err and "twice" in err and "nearest valid ids: susuki_moon" in err


def test_options_of_the_other_rules_are_noted(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "score", "susuki_moon", "kiku_sake_cup", "--loser-called", "--json")
    assert code == 0 and json.loads(out)["score"] == 5
    assert "--loser-called counts only under --rules nintendo" in err
    code, out, err = run(capsys, "score", "susuki_moon", "kiku_sake_cup", "--rules", "nintendo", "--calls", "2",
                         "--json")  # fmt: skip
    assert code == 0 and json.loads(out)["multiplier"] == 1
    assert "Nintendo's rules do not use it" in err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "score", "susuki_moon", "--calls", "-1")[0] == 2
    assert run(capsys, "score", "susuki_moon", "--rules", "hanafuda")[0] == 2
    assert run(capsys, "score")[0] == 2


@pytest.mark.net
def test_the_installed_command_runs() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "koikoi.client", "score", "kiku_sake_cup", "susuki_moon", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["payment"] == 5
