"""`koikoi score`: the command-line contract, and a few of the CLI's general promises."""

from __future__ import annotations

import json
import re
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
    code, out, err = run(capsys, "score", "susuki_moon", "kiku_sake_cup", "susuki_moon")
    assert (code, out, err) == (2, "", "koikoi score: card susuki_moon is given twice\n")
    code, out, err = run(capsys, "score", "SUSUKI_MOON", "kiku_sake_cup", "susuki_moon")  # the same card in two cases
    assert (code, out, err) == (2, "", "koikoi score: card susuki_moon is given twice\n")


def test_ids_in_any_case(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "score", "SAKURA_CURTAIN", "Susuki_Moon", "kiku_sake_CUP", "--calls", "2", "--json")
    assert code == 0 and err == ""
    assert json.loads(out)["score"] == 60


def test_unknown_ids_name_the_right_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "score", "sakura", "susuki_moon")
    assert code == 2 and out == ""
    assert err == (
        "koikoi score: unknown card id 'sakura'; nearest valid ids: "
        "sakura_curtain, sakura_ribbon, sakura_plain_1, sakura_plain_2\n"
    )
    code, _, err = run(capsys, "score", "MATSU_CRANE_", "susuki_moon")
    assert code == 2 and err.endswith("nearest valid ids: matsu_crane\n")
    code, _, err = run(capsys, "score", "MATSU_CRAN")
    assert code == 2 and "nearest valid ids: matsu_crane" in err
    code, _, err = run(capsys, "score", "moon")
    assert code == 2 and err.endswith("nearest valid ids: susuki_moon\n")
    code, _, err = run(capsys, "score", "qqqqq")
    assert code == 2 and err.endswith("none close; koikoi cards lists the 48 ids\n")


@pytest.mark.parametrize(
    ("option", "bad", "good"),
    [("--loser-points", ["0", "50", "51", "-3"], ["1", "49"]), ("--calls", ["16", "99", "-1"], ["0", "15"])],
)
def test_impossible_values_are_refused(
    capsys: pytest.CaptureFixture[str], option: str, bad: list[str], good: list[str]
) -> None:
    for value in bad:
        code, out, err = run(capsys, "score", "susuki_moon", "kiku_sake_cup", option, value)
        assert code == 2 and out == "", value
        assert f"argument {option}: must be" in err and f"not {int(value)}" in err, err
    for value in good:
        code, out, _ = run(capsys, "score", "susuki_moon", "kiku_sake_cup", option, value, "--json")
        assert code == 0, value
    _, out, _ = run(capsys, "score", "susuki_moon", "kiku_sake_cup", "--calls", "15", "--json")
    assert json.loads(out)["multiplier"] == 16
    _, out, _ = run(capsys, "score", "susuki_moon", "kiku_sake_cup", "--loser-points", "1", "--json")
    assert json.loads(out)["payment"] == 1


def test_breakdown_shows_the_extra_cards(capsys: pytest.CaptureFixture[str]) -> None:
    tane = ["hagi_boar", "momiji_deer", "botan_butterfly", "ume_warbler", "fuji_cuckoo"]
    code, out, _ = run(capsys, "score", *tane)
    assert code == 0
    lines = out.splitlines()
    assert re.fullmatch(r"  Inoshikachō \(boar, deer, butterflies\)  5 \+ 2 more tane = +7", lines[1]), lines
    assert re.fullmatch(r"  Tane \(five animals\) +1", lines[2]), lines  # exactly five tane: nothing extra
    _, out, _ = run(capsys, "score", *tane, "--lang", "ja")
    assert re.fullmatch(r"  猪鹿蝶  5 \+ タネ2枚 = +7", out.splitlines()[1])
    ribbons = ["matsu_ribbon", "ume_ribbon", "sakura_ribbon", "fuji_ribbon", "ayame_ribbon", "hagi_ribbon"]
    _, out, _ = run(capsys, "score", *ribbons)
    assert re.search(r"^  Akatan \(red poem ribbons\)  5 \+ 3 more ribbons = +8$", out, re.M), out
    assert re.search(r"^  Tan \(five ribbons\)  1 \+ 1 more ribbon = +2$", out, re.M), out
    _, out, _ = run(capsys, "score", "susuki_moon", "kiku_sake_cup")
    assert re.search(r"^  Tsukimi de ippai \(moon viewing\) +5$", out, re.M), out  # a fixed yaku: no extras


def test_options_of_the_other_rules_are_noted(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "score", "susuki_moon", "kiku_sake_cup", "--loser-called", "--json")
    assert code == 0 and json.loads(out)["score"] == 5
    assert "--loser-called counts only under --rules nintendo" in err
    code, out, err = run(capsys, "score", "susuki_moon", "kiku_sake_cup", "--rules", "nintendo", "--calls", "2",
                         "--json")  # fmt: skip
    assert code == 0 and json.loads(out)["multiplier"] == 1
    assert "Nintendo's rules do not use it" in err


def test_options_the_count_does_not_use_are_noted(capsys: pytest.CaptureFixture[str]) -> None:
    hand = ["sakura_curtain", "sakura_ribbon", "sakura_plain_1", "sakura_plain_2",
            "matsu_crane", "matsu_plain_1", "ume_warbler", "ume_plain_1"]  # fmt: skip
    code, out, err = run(capsys, "score", *hand, "--hand", "--rules", "nintendo", "--loser-points", "4", "--json")
    assert code == 0 and json.loads(out)["payment"] == 4  # this game's hand yaku, capped
    assert err == (
        "koikoi score: note: --hand counts this game's hand yaku (Teshi, Kuttsuki: 6, capped); "
        "--rules nintendo does not apply\n"
    )
    code, out, err = run(capsys, "score", *hand, "--hand", "--calls", "2", "--no-double", "--json")
    assert code == 0 and json.loads(out)["score"] == 6
    assert "--calls does not apply to a hand yaku" in err and "--no-double does not apply to a hand yaku" in err
    lights = ["matsu_crane", "sakura_curtain", "susuki_moon", "kiri_phoenix"]
    code, out, err = run(capsys, "score", *lights, "--rules", "nintendo", "--no-double", "--json")
    assert code == 0 and json.loads(out)["doubled"] is True  # Nintendo doubles at 7+ regardless
    assert err == (
        "koikoi score: note: --no-double is this game's room setting; Nintendo's rules always double at 7 or more\n"
    )
    code, out, err = run(capsys, "score", *lights, "--rules", "nintendo", "--loser-points", "3", "--json")
    assert code == 0 and json.loads(out)["payment"] == 16
    assert "--loser-points is this game's cap; Nintendo's rules have no cap" in err
    code, _, err = run(capsys, "score", *lights, "--no-double", "--loser-points", "3", "--calls", "1", "--json")
    assert code == 0 and err == ""  # all of them count under this game's rules


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


@pytest.mark.parametrize("number", ["1", "12", "-1", "3.5"])
def test_a_number_is_not_a_card_id_and_gets_no_card_ids_back(capsys: pytest.CaptureFixture[str], number: str) -> None:
    """A count or a month typed where a card goes: one line saying so, not ids that merely contain a digit."""
    code, out, err = run(capsys, "score", "sakura_curtain", number)
    assert code == 2 and out == ""
    assert err == (
        f"koikoi score: {number!r} is a number, not a card id: name the captured cards by id (matsu_crane, "
        "sakura_curtain, ...; koikoi cards lists the 48)\n"
    )
    assert "plain_1" not in err
