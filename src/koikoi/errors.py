"""The one base of every exception koikoi defines, split like h11's by whose doing the failure is.

- :class:`LocalError`: this side's doing. A caller used an API against its rules (played out of turn,
  used a closed session) or a user gave bad input (a card name, a config file, a bot's spec). The fix
  is here.
- :class:`RemoteError`: the other side's doing. A frame, a message, a transcript, a relay's or a bot's
  answer that breaks the protocol. Who is to blame is a further question the protocol answers (a frame
  nobody can be blamed for is dropped, a proven fault loses the match); this class says only that the
  input came from outside.

Every exception class of the package derives from one of the two (``except KoikoiError`` catches them
all). This module belongs to no layer and imports nothing of koikoi.
"""

from __future__ import annotations

__all__ = ["KoikoiError", "LocalError", "RemoteError"]


class KoikoiError(Exception):
    """Base of every exception koikoi defines."""


class LocalError(KoikoiError):
    """This side's doing: an API used against its rules, or a user's bad input."""


class RemoteError(KoikoiError):
    """The other side's doing: what a peer, a relay, a bot or a file sent breaks the protocol."""
