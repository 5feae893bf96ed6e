"""koikoi selfplay's JSON contract and determinism, with the strong bot too."""

from __future__ import annotations

import json

import pytest

from koikoi.client.cli import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["selfplay", *args]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_contract_and_determinism(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--games", "2", "--bots", "strong,random", "--seed", "s", "--json")
    a = _run(capsys, *args)
    assert set(a) == {"games", "wins", "draws", "rounds", "rounds_per_s", "mean_final_points"}
    assert a["games"] == 2
    b = _run(capsys, *args)
    a.pop("rounds_per_s")
    b.pop("rounds_per_s")
    assert a == b


def test_seats_alternate_and_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(capsys, "--games", "6", "--bots", "greedy,random", "--seed", "t", "--json")
    b = _run(capsys, "--games", "6", "--bots", "random,greedy", "--seed", "t", "--json")
    assert isinstance(a["wins"], list) and isinstance(b["wins"], list)
    assert sum(a["wins"]) + a["draws"] == 6  # type: ignore[operator]
    assert main(["selfplay", "--games", "1", "--bots", "greedy,strong", "--seed", "u"]) == 0
    out = capsys.readouterr().out
    assert "greedy against strong" in out and "draws:" in out
