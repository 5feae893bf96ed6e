"""The repair of a session after a crash (spec/protocol.md §8): the line its transcript holds, verified
(:func:`resumed_line`), and, until the opponent has answered, nothing decided (:class:`Resync`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..errors import RemoteError
from .codes import Code
from .errors import ProtocolError
from .messages import Msg, public_bytes
from .referee import Referee
from .session_events import Deck

__all__ = ["Resync", "TranscriptDamaged", "resumed_line"]


class TranscriptDamaged(RemoteError, ValueError):
    """:meth:`Session.from_transcript` refuses a damaged transcript; ``str(e)`` is one line."""

    def __init__(self, message: str, record: int | None = None, code: Code | None = None) -> None:
        self.message = message
        self.record = record
        self.code = code
        super().__init__(message)


def _load(ref: Referee, frames: list[bytes], *, verify_signature: bool) -> Referee:
    """``ref`` after every frame of a transcript; the first that does not check is :class:`TranscriptDamaged`."""
    for i, f in enumerate(frames):
        try:
            ref.accept(f, verify_signature=verify_signature)
        except ProtocolError as e:
            at = f" (sequence {e.seq})" if e.seq is not None else ""
            raise TranscriptDamaged(f"record {i}{at} is damaged: {e.code}: {e.message}", i, e.code) from None
    return ref


def resumed_line(key: Ed25519PrivateKey, frames: list[bytes], seat: int | None) -> tuple[Referee, int]:
    """The line of a transcript's ``frames``, every record verified (signatures, this player's own too; the
    chain; the sequence), as the seat ``key`` plays in it (``seat``: which, when one key signed both HELLOs),
    and that seat. :class:`TranscriptDamaged` or ``ValueError`` (not this key's), each one line."""
    if not frames:
        raise TranscriptDamaged("the transcript holds no message")
    ref = _load(Referee(), frames, verify_signature=True)
    pk = public_bytes(key)
    seats = [i for i, x in enumerate(ref.hellos) if x is not None and x.public_key == pk]
    if seat is not None and seat not in seats:
        raise ValueError(f"this transcript holds no HELLO of seat {seat} signed with this key: it is not yours")
    if not seats:
        raise ValueError("this transcript holds no HELLO signed with this key: it is not yours")
    if seat is None and len(seats) > 1:
        raise ValueError("this key signed both seats' HELLOs: say which seat to resume")
    me = seat if seat is not None else seats[0]
    if ref.deck == Deck.SEALED:  # again as this seat: its own sealed messages must be what its key makes
        ref = _load(Referee((me, key)), frames, verify_signature=False)
    else:
        ref.viewer = (me, key)  # (a shared line holds no secret of the seat: no need to load it again)
    return ref, me


class Resync:
    """After :meth:`Session.from_transcript`: ``active`` until the opponent has answered (nothing is decided
    till then), and, while the relay's last frame of ours is missing from the line (the file lost its tail),
    its hash: nothing at all is signed until the line holds it (spec/protocol.md §8)."""

    def __init__(self) -> None:
        self.active = False
        self._lost_own: bytes | None = None

    def lost_messages(self, ours: Iterable[Msg | None], next_seq: int, held: set[bytes], seen: set[bytes]) -> list[Msg]:
        """Of the relay's copies of our recent frames (``ours``: each as our message of this match, None when
        it is not one: not ours, not this match's, not signed — the relay cannot make us wait with frames it
        made up), those the line lacks (``held``: the hashes of ours it holds; ``seen``: the frames it took;
        at ``next_seq`` on), in sequence order; the newest is then awaited (:meth:`tail_lost`)."""
        lost = sorted((m for m in ours  # (one the line cut is not lost: it is seen)
                       if m is not None and m.hash not in held and m.frame not in seen and m.seq >= next_seq),
                      key=lambda m: m.seq)  # fmt: skip
        if lost:
            self._lost_own = lost[-1].hash
        return lost

    def tail_lost(self, own_hashes: Callable[[], set[bytes]]) -> bool:
        """True while the relay's last frame of ours is still missing (``own_hashes``: of ours, held now)."""
        if self._lost_own is not None and self._lost_own in own_hashes():
            self._lost_own = None
        return self._lost_own is not None
