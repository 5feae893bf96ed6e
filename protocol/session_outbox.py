"""What a session sends and writes: the frames queued to send, the records queued for the transcript, and
this seat's own frames that the relay's witness may hold as its last (spec/protocol.md §5.2): its messages,
its end message and its ENDED, the acknowledgement of the opponent's end (§7.4)."""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from .messages import END_TYPES, Msg, MsgType, build, msg_hash
from .referee import Referee

__all__ = ["Outbox", "Record"]


@dataclass(frozen=True, slots=True)
class Record:
    """One frame for the transcript; ``sync``: fsync after writing it (a round or the match ended)."""

    frame: bytes
    sync: bool


class Outbox:
    """One seat's outgoing frames and records, and its end: ``own_end`` (its RESIGN, TIMEOUT, ABORT or the
    RESULT that ended the line, once signed) and ``ack`` (its ENDED of the opponent's end, signed once)."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.queue: list[bytes] = []
        """The frames to send, in order (the client takes them with :meth:`take_frames`)."""
        self._records: list[Record] = []
        self.own_end: bytes | None = None
        self.ack: bytes | None = None

    def take_frames(self) -> list[bytes]:
        out, self.queue = self.queue, []
        return out

    def take_records(self) -> list[Record]:
        out, self._records = self._records, []
        return out

    def sign(self, frame: bytes, *, end: bool = False) -> None:
        """A message this seat signed (and its line took): write it, fsynced, then send it."""
        if end:
            self.own_end = frame
        self._records.append(Record(frame, True))
        self.queue.append(frame)

    def took(self, key: Ed25519PrivateKey, msg: Msg, line: Referee, round_ended: bool) -> None:
        """``line`` took ``msg`` (not signed here): write it — fsynced when it is ours, ends a round
        (``round_ended``) or ends the line —, and keep it as our end, or acknowledge it as the opponent's."""
        own = msg.seat == self.seat
        if own and msg.type in END_TYPES:
            self.own_end = msg.frame
        elif msg.type in END_TYPES and line.finished and line.msgs[-1].frame == msg.frame:
            self.acknowledge(key, msg)
        self._records.append(Record(msg.frame, own or round_ended or line.finished))

    def resumed(self, key: Ed25519PrivateKey, line: Referee) -> None:
        """A transcript rebuilt ``line``: its last message is our end, or the opponent's end we acknowledge
        (signed again, the same bytes: Ed25519 is deterministic)."""
        last = line.msgs[-1] if line.msgs else None
        if last is not None and last.seat == self.seat and last.type in END_TYPES:
            self.own_end = last.frame
        elif last is not None and line.finished and last.type in END_TYPES:
            self.acknowledge(key, last)

    def acknowledge(self, key: Ed25519PrivateKey, end: Msg) -> None:
        """Sign and send our ENDED of the opponent's end message (spec/protocol.md §7.4): our last frame at
        the relay then lies on this line only, so no silence claim against us can fit a line the opponent
        forked past its own end (an end and a move signed for one sequence number, each shown to one side)."""
        if self.ack is None:
            self.ack = build(key, MsgType.ENDED, end.match, end.seq + 1, end.hash, self.seat, [end.hash])
            self.queue.append(self.ack)

    def last_frame(self, line: Referee) -> bytes | None:
        """Our last new frame, as the relay's witness records it: our ENDED after the opponent's end, else
        our last message in ``line`` (None: none yet)."""
        if self.ack is not None:
            return self.ack
        own = line.last_of(self.seat)
        return own.frame if own is not None else None

    def unacknowledged(self, line: Referee) -> list[bytes]:
        """Our frames the other side has not shown it has: our messages in ``line`` after its last, our end."""
        msgs = line.msgs
        last_peer = max((i for i, x in enumerate(msgs) if x.seat != self.seat), default=-1)
        out = [x.frame for x in msgs[last_peer + 1 :] if x.seat == self.seat]
        if self.own_end is not None and self.own_end not in out:
            out.append(self.own_end)
        return out

    def own_hashes(self, line: Referee) -> set[bytes]:
        """The hashes of every frame of ours this side holds: its messages in ``line``, its end, its ENDED."""
        own = {m.hash for m in line.msgs if m.seat == self.seat}
        own.update(msg_hash(f) for f in (self.own_end, self.ack) if f is not None)
        return own
