"""Protocol failures: :class:`ProtocolError`, a :class:`~koikoi.errors.RemoteError` (what a peer sent
breaks the protocol) with its :class:`~koikoi.protocol.codes.Code`.

Whether the peer is to blame is :data:`PROVABLE`'s question: a code there, in a message validly signed by
the offender and bound to this match, proves a fault; any other could be the network's doing.
"""

from __future__ import annotations

from ..errors import RemoteError
from .codes import CODES, PROVABLE, Code

__all__ = ["CODES", "PROVABLE", "Code", "ProtocolError"]


class ProtocolError(RemoteError):
    """A protocol failure. ``code`` is its :class:`Code`; ``seq`` the offending sequence number."""

    def __init__(self, code: Code, message: str, seq: int | None = None) -> None:
        self.code = code
        self.message = message
        self.seq = seq
        super().__init__(f"{code}: {message}")
