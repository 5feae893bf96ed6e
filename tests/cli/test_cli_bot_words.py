"""``selfplay`` counts "1 win", and an external bot's hello name is the opponent's name in ``practice``."""

from __future__ import annotations

import io
import json
import random
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from koikoi.client.botspec import bot_from_spec, close_bot
from koikoi.client.cli import main
from koikoi.client.external_bot import ExternalBot

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SPEC = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'examples' / 'bots' / 'example_bot.py'))}"


def test_selfplay_says_1_win(capsys: pytest.CaptureFixture[str]) -> None:
    for seed in map(str, range(50)):  # the first seed whose one match is not a draw (most are not)
        args = ["selfplay", "--games", "1", "--bots", "greedy,random", "--seed", seed]
        assert main([*args, "--json"]) == 0
        wins = json.loads(capsys.readouterr().out)["wins"]
        if sum(wins) == 1:
            break
    else:
        raise AssertionError("fifty drawn matches")
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("1 match of 6 rounds")
    assert lines[1].startswith(f"  greedy: {wins[0]} {'win' if wins[0] == 1 else 'wins'}, mean final points ")
    assert lines[2].startswith(f"  random: {wins[1]} {'win' if wins[1] == 1 else 'wins'}, mean final points ")
    assert "1 win," in "\n".join(lines) and "1 wins" not in "\n".join(lines)


def test_practice_names_an_external_bot_by_its_hello(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # (the person leaves at the first prompt)
    assert main(["practice", "--plain", "--bot", EXAMPLE_SPEC, "--seed", "s"]) == 1
    out = capsys.readouterr().out.replace("\n    ", " ")
    assert " example turns " in out, out  # examples/bots/example_bot.py says hello as "example"
    assert "Computer" not in out.split("At any prompt")[1], out
    assert "Points: You 25, example 25" in out


def test_a_hello_name_is_shown_without_control_characters(tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(
        textwrap.dedent(
            """\
            import json, sys
            sys.stdin.readline()
            print(json.dumps({"type": "hello", "protocol": 1, "name": "  Evil\\x1b[2J  bot\\n"}), flush=True)
            sys.stdin.readline()
            """
        )
    )
    made = bot_from_spec(f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(bot))}", random.Random(0))
    try:
        assert isinstance(made, ExternalBot) and made.hello_name == "Evil [2J bot"
    finally:
        close_bot(made)
    silent = tmp_path / "quiet.py"
    silent.write_text(bot.read_text().replace('"name": "  Evil\\x1b[2J  bot\\n"', '"name": " "'))
    made = bot_from_spec(f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(silent))}", random.Random(0))
    try:
        assert isinstance(made, ExternalBot) and made.hello_name is None  # (practice says "Computer" then)
    finally:
        close_bot(made)
