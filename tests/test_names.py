"""No two classes with one name across the package (issue 20's "one vocabulary"): a reader who meets a
name knows which class it is."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("engine", "protocol", "relay", "client", "src/koikoi")


def test_no_two_classes_of_the_package_share_a_name() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*.py")):
            if path.name == "testing.py" and top == "src/koikoi":
                continue  # the test harness is not the product
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                    where[node.name].append(str(path.relative_to(ROOT)))
    assert len(where) > 100  # the walk found the package's classes
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
