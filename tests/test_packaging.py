"""The package's layout: one import package mapped onto the top-level folders, no symlinks, one version."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

import koikoi

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_subpackage_folder_is_listed_and_mapped() -> None:
    """A folder with an __init__.py under a mapped folder installs only if pyproject lists it."""
    setuptools = PYPROJECT["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    mapping: dict[str, str] = setuptools["package-dir"]
    found = set()
    for package, folder in mapping.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            found.add(".".join([package, *rel.parts]))
    assert found == listed


def test_no_symlinks_in_the_repository() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")  # an sdist or a copied tree: nothing to check
    out = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    links = [line.split("\t", 1)[1] for line in out.splitlines() if line.startswith("120000 ")]
    assert links == []


def test_the_version_lives_in_one_place() -> None:
    assert "version" not in PYPROJECT["project"]
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "koikoi.__version__"}
    assert importlib.metadata.version("koikoi") == koikoi.__version__
