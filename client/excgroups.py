"""Finding the error that matters inside trio's exception groups."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["first_of"]

E = TypeVar("E", bound=BaseException)


def first_of(exc: BaseException, kind: type[E]) -> E | None:
    """``exc`` itself if it is a ``kind``, else the first ``kind`` inside its (nested) groups."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            found = first_of(sub, kind)
            if found is not None:
                return found
    return None
