"""Settings for every test.

The adversary tests share helper modules that live next to them, not test files (tests/adversary/*.py
without ``test_``): their folder is on ``sys.path``.

A shell without job control starts a background job (``pytest ... &`` in a script, a CI step's subshell) with
SIGINT ignored, and every process it starts inherits that: the ``koikoi`` programs the Ctrl-C tests drive in a
pseudo-terminal would then never hear the interrupt they are sent, and those tests would time out while the
same tests pass by hand. The tests run as in a terminal's foreground: SIGINT raises KeyboardInterrupt here,
and the programs they start (exec resets a handler to the default) stop on it.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "adversary"))


def pytest_configure(config: pytest.Config) -> None:
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
