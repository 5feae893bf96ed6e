"""Small generic helpers of the whole package: exception groups, a token bucket, atomic files.

They belong to no layer (engine ← protocol ← relay ← client): the relay and the client both use them,
and they import nothing of koikoi. Nothing here does I/O but :func:`atomic_write`, and nothing reads a
clock: the token bucket is given the time.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

__all__ = ["TokenBucket", "atomic_write", "first_of", "sole"]

E = TypeVar("E", bound=BaseException)


def first_of(exc: BaseException, kind: type[E] | tuple[type[E], ...]) -> E | None:
    """``exc`` itself if it is a ``kind``, else the first ``kind`` inside its (nested) groups."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            found = first_of(sub, kind)
            if found is not None:
                return found
    return None


def sole(exc: BaseException) -> BaseException:
    """The one exception inside groups of one (trio wraps errors); ``exc`` itself otherwise."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


@dataclass
class TokenBucket:
    """At most ``burst`` events at once and ``rate`` per second sustained. The caller gives the time."""

    rate: float
    burst: float
    tokens: float
    at: float

    @classmethod
    def full(cls, rate: float, burst: float, now: float) -> TokenBucket:
        return cls(rate, burst, burst, now)

    def _refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now

    def take(self, now: float) -> bool:
        """Spend one token if there is one; False (nothing spent) when the limit is reached."""
        self._refill(now)
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True

    def wait_for_one(self, now: float) -> float:
        """Seconds to wait before one token is there (0 when there is one already); spends nothing."""
        self._refill(now)
        return 0.0 if self.tokens >= 1.0 else (1.0 - self.tokens) / self.rate


def atomic_write(path: Path, data: bytes, *, replace: bool = True, prefix: str = ".tmp-") -> bool:
    """Write ``data`` to ``path`` whole or not at all: a temporary file in the same folder (mode 0600),
    fsync, then a rename over ``path`` (``replace=True``) or a hard link that never replaces an
    existing file (``replace=False``: returns False, writing nothing, when ``path`` exists).

    The folder is created (0700) if missing. Raises ``OSError`` on failure, leaving ``path`` as it was
    and no temporary file behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=path.parent)  # created 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if replace:
            os.replace(tmp, path)
            return True
        try:
            os.link(tmp, path)  # atomic, never replaces: a concurrent writer's file stays
        except FileExistsError:
            return False
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
