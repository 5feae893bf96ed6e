"""The documentation against the code: every command's synopsis in the guides names exactly the options its
parser takes, the README keeps the test command CI runs, and every relative link resolves, anchors included."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from koikoi.client.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = ROOT / "docs" / "players.md"
OPERATORS = ROOT / "docs" / "operators.md"
README_CMD = "python3 -m venv .venv && .venv/bin/pip install -q '.[test]' && .venv/bin/python -m pytest -q"
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser, _ = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("koikoi has no subcommands")


def _options(p: argparse.ArgumentParser) -> set[str]:
    return {s for a in p._actions for s in a.option_strings if s.startswith("--") and s != "--help"}


def _synopses(doc: Path, section: str) -> dict[str, str]:
    """Each ``koikoi CMD …`` synopsis (with its continuation lines) in the first code block of ``section``."""
    text = doc.read_text(encoding="utf-8").split(f"\n## {section}\n", 1)[1]
    block = FENCE.search(text)
    assert block is not None, f"{doc.name}: no code block under {section!r}"
    found: dict[str, str] = {}
    for chunk in re.split(r"^(?=koikoi )", block[1], flags=re.M):
        words = chunk.split()
        if len(words) > 1 and words[0] == "koikoi" and not words[1].startswith("-"):
            found[words[1]] = chunk
    return found


def test_every_command_has_a_synopsis_naming_exactly_its_options() -> None:
    synopses = _synopses(PLAYERS, "Every command")
    synopses["relay"] = _synopses(OPERATORS, "The command")["relay"]
    commands = _commands()
    assert set(synopses) == set(commands)
    for name, parser in commands.items():
        assert set(OPTION.findall(synopses[name])) == _options(parser), name


def test_every_relay_option_has_a_row_in_the_operators_table() -> None:
    rows = {m[1] for m in re.finditer(r"^\| `(--[a-z0-9-]+)[ `]", OPERATORS.read_text(encoding="utf-8"), re.M)}
    assert rows == _options(_commands()["relay"])


def test_the_readme_keeps_the_test_command_ci_runs() -> None:
    assert README_CMD in (ROOT / "README.md").read_text(encoding="utf-8")
    assert f'README_CMD="{README_CMD}"' in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _anchors(doc: Path) -> set[str]:
    """The heading anchors GitHub makes: lower case, punctuation dropped, spaces as dashes."""
    heads = re.findall(r"^#+ (.+)$", FENCE.sub("", doc.read_text(encoding="utf-8")), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "spec").glob("*.md"))]


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_relative_link_resolves(doc: Path) -> None:
    text = FENCE.sub("", doc.read_text(encoding="utf-8"))
    broken = []
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = (doc.parent / path).resolve() if path else doc
        if not target.exists() or (anchor and target.is_file() and anchor not in _anchors(target)):
            broken.append(link)
    assert broken == []
