"""The deck mode of a networked match (issue 11, spec/sealed.md): ``sealed`` or ``shared``.

``koikoi host``/``join`` play sealed by default: neither program ever holds the cards its player may not
see. The session protocol carries the mode (spec/sealed-line.md §6: ``Session.create(..., deck=...)``,
``Session.join(..., deck=None)``, the ``deck`` of ``RoomSettings``/``MatchStarted`` and of the HELLO).
A match protocol before version 3 could play only ``shared``: the default then fell back to it and an
explicit ``--deck sealed`` was refused in one line (:func:`resolve`). ``practice`` and ``selfplay`` stay
shared (no opponent's program to hide cards from)."""

from __future__ import annotations

from typing import Any, Final

from ..protocol.messages import PROTOCOL_VERSION
from ..protocol.session import Session
from .output import DECKS, NetError

__all__ = ["DECKS", "deck_of", "resolve", "sealed_supported", "session_kwargs"]


SEALED_FROM_VERSION: Final = 3
"""The match protocol's version that carries the sealed line (spec/protocol.md §14)."""


def sealed_supported() -> bool:
    """Whether this koikoi's match protocol can play a sealed deck (its version carries the sealed line)."""
    return PROTOCOL_VERSION >= SEALED_FROM_VERSION


def resolve(given: str | None, *, default: str | None = "sealed") -> str | None:
    """The deck to ask for: ``given`` (``--deck``), else ``default``. ``sealed`` where the session cannot play
    it yet: explicitly asked, a one-line NetError ``usage``; by default, ``shared`` (the only mode there is)."""
    if given is None:
        if default == "sealed" and not sealed_supported():
            return "shared"
        return default
    if given not in DECKS:
        raise NetError("usage", f"--deck must be one of {', '.join(DECKS)}, not {given!r}")
    if given == "sealed" and not sealed_supported():
        raise NetError(
            "usage", "--deck sealed: this koikoi's match protocol cannot play a sealed deck yet; use --deck shared"
        )
    return given


def session_kwargs(deck: str | None) -> dict[str, Any]:
    """``{"deck": deck}`` for ``Session.create``/``Session.join`` once the session takes it, else ``{}``
    (only ``shared`` is played then, and the session does not name it)."""
    return {"deck": deck} if sealed_supported() else {}


def deck_of(session: Session | None) -> str:
    """The deck ``session`` plays (:attr:`Session.deck`: the creator's HELLO's once it is in; ``shared``
    without a session)."""
    return session.deck if session is not None else "shared"
