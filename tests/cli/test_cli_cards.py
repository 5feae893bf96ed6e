"""`koikoi cards`: the 48 ids with month, kind and both names, checked against spec/rules.md's table."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from koikoi.client.cli import main

RULES = Path(__file__).resolve().parents[2] / "spec" / "rules.md"
ROW = re.compile(r"^\| (\d+) \| `(\w+)` \| (\d+) \| (\w+) \(\d+\) \| (\w*) \| ([^|]+) \| ([^|]+) \|$")


def _spec_cards() -> list[dict[str, object]]:
    """The card table of spec/rules.md §1, in the shape of ``koikoi cards --json``."""
    rows = [ROW.match(line) for line in RULES.read_text(encoding="utf-8").splitlines()]
    cards = [
        {"id": m[2], "month": int(m[3]), "kind": m[4], "ribbon": m[5] or None, "name_en": m[6], "name_ja": m[7]}
        for m in rows
        if m is not None
    ]
    assert [int(m[1]) for m in rows if m is not None] == list(range(48))
    return cards


def test_json_lists_the_48_cards_as_the_rules_do(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cards", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert json.loads(out) == _spec_cards()


def test_text_groups_the_cards_by_month(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cards"]) == 0
    out, _ = capsys.readouterr()
    spec = _spec_cards()
    blocks = out.strip("\n").split("\n\n")
    assert len(blocks) == 12
    assert blocks[0].splitlines()[0] == " 1 Pine 松" and blocks[11].splitlines()[0] == "12 Paulownia 桐"
    for month, block in enumerate(blocks, 1):
        rows = block.splitlines()[1:]
        assert len(rows) == 4
        for row, card in zip(rows, spec[4 * (month - 1) : 4 * month], strict=True):
            assert card["month"] == month
            words = row.split()
            assert words[0] == card["id"] and words[1] == card["kind"] and row.endswith(f"  {card['name_ja']}")
            assert f"  {card['name_en']}  " in row
    assert "ribbon (red poem)" in blocks[0] and "ribbon (blue)" in blocks[5] and "ribbon (red)" in blocks[3]
