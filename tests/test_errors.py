"""One vocabulary: every exception koikoi defines derives from KoikoiError, and every protocol code has
one text in one registry."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import koikoi
from koikoi.errors import KoikoiError, LocalError, RemoteError
from koikoi.protocol import sealed, sealed_line
from koikoi.protocol.codes import CODES, PROVABLE, Code, Status


def _modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(koikoi.__path__, "koikoi.")]
    return [n for n in names if n != "koikoi.testing" and not n.endswith("__main__")]


def test_every_exception_the_package_defines_is_a_koikoi_error() -> None:
    defined: list[type[BaseException]] = []
    for name in _modules():
        mod = importlib.import_module(name)
        for _, obj in inspect.getmembers(mod, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == name:
                defined.append(obj)
    assert len(defined) > 20  # the walk found the package's exceptions
    assert [c.__qualname__ for c in defined if not issubclass(c, KoikoiError)] == []
    # and each says whose doing it is, but for the few that can be either
    either = {c.__qualname__ for c in defined if not issubclass(c, LocalError | RemoteError)}
    assert either <= {"KoikoiError", "NetError", "_Stop"}


def test_each_code_has_one_text_and_the_rule_sets_are_codes() -> None:
    assert set(CODES) == set(Code) and all(CODES[c] for c in Code)
    assert PROVABLE <= set(Code)
    assert sealed.RULES <= set(Code) and sealed_line.LINE_RULES <= set(Code)
    assert all(isinstance(r, Code) for r in sealed.RULES | sealed_line.LINE_RULES)
    assert {str(s) for s in Status} >= {"complete", "resigned", "forfeit", "on_time", "abandoned"}
