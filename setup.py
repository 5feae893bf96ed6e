"""Build hook: compile the rules engine's hot modules with mypyc when possible.

The engine is plain, fully typed Python; mypyc (part of mypy) compiles the same
source to a C extension about twice as fast, which the engine's speed target
needs. Set KOIKOI_PURE_PYTHON=1 to skip it (developers using an editable
install should: a compiled module would shadow edits to its source). If the
compiler is missing or fails, the pure-Python engine is installed instead.

The engine lives in the top-level folder engine/ and installs as
koikoi.engine (pyproject.toml maps the folders). mypy names a module by the
folders around its file, so the build copies koikoi/__init__.py and engine/
into build/mypyc-src/koikoi/ and compiles those copies: the extensions are then
named koikoi.engine.cards and so on, exactly as the package installs them.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
COMPILED = [
    "cards",
    "actions",
    "yaku",
    "deal",
    "events",
    "match",
    "selfplay",
    "bots/basic",
    "bots/value",
    "bots/playout",
]
STAGE = Path("build") / "mypyc-src"


def stage_engine() -> list[str]:
    """Copy the package root and the engine where mypy sees them as koikoi.engine."""
    root = HERE / STAGE
    if root.exists():
        shutil.rmtree(root)
    (root / "koikoi").mkdir(parents=True)
    shutil.copy2(HERE / "src" / "koikoi" / "__init__.py", root / "koikoi" / "__init__.py")
    # the engine's exceptions derive from the package's one base (imported, never compiled)
    shutil.copy2(HERE / "src" / "koikoi" / "errors.py", root / "koikoi" / "errors.py")
    shutil.copytree(HERE / "engine", root / "koikoi" / "engine", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return [str(STAGE / "koikoi" / "engine" / f"{name}.py") for name in COMPILED]


def ext_modules() -> list[object]:
    if os.environ.get("KOIKOI_PURE_PYTHON") == "1":
        return []
    if any(a in sys.argv for a in ("editable_wheel", "develop")):
        return []
    try:
        from mypyc.build import mypycify

        os.chdir(HERE)  # the staged paths are relative, so the module names are too
        return list(mypycify(stage_engine(), opt_level="3"))
    except (Exception, SystemExit) as e:  # a missing compiler must not stop an install
        print(f"koikoi: mypyc unavailable ({e}); installing the pure-Python engine", file=sys.stderr)
        return []


setup(ext_modules=ext_modules())
