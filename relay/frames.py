"""A player frame's way through the relay (:class:`Frames`): taken in order from its seat, witnessed, and sent
on to the other seat or kept for it while it is away; and :func:`fast_frame`, the envelope read without a
decoder."""

from __future__ import annotations

from ..protocol.witness import frame_hash
from .config import RelayConfig
from .effects import Effects
from .room import Conn, Room, Seat
from .vocabulary import CloseReason, Refusal, say
from .watchers import Watchers

__all__ = ["Frames", "fast_frame"]

_FRAME_HEAD = b"\x83\xa1t\xa5frame\xa1n"  # {"t": "frame", "n": ... in canonical msgpack
_UINT = {0xCC: (1, 0x80), 0xCD: (2, 0x100), 0xCE: (4, 0x10000), 0xCF: (8, 0x100000000)}
_BIN = {0xC4: (1, 0), 0xC5: (2, 0x100), 0xC6: (4, 0x10000)}


def fast_frame(msg: bytes) -> tuple[int, int]:
    """``(n, len(d))`` if ``msg`` is exactly the canonical encoding of {"t": "frame", "n": n >= 1, "d": <bin>},
    else ``(0, 0)``.

    Anything else (another message, another key order, a non-canonical form) takes the full decoder."""
    if not msg.startswith(_FRAME_HEAD):
        return 0, 0
    i = len(_FRAME_HEAD)
    if i >= len(msg):
        return 0, 0
    b = msg[i]
    if b < 0x80:
        n = b
        i += 1
    elif b in _UINT:
        width, least = _UINT[b]
        n = int.from_bytes(msg[i + 1 : i + 1 + width], "big")
        if n < least:
            return 0, 0
        i += 1 + width
    else:
        return 0, 0
    if msg[i : i + 2] != b"\xa1d" or i + 2 >= len(msg) or msg[i + 2] not in _BIN:
        return 0, 0
    width, least = _BIN[msg[i + 2]]
    size = int.from_bytes(msg[i + 3 : i + 3 + width], "big")
    if size < least or i + 3 + width + size != len(msg):
        return 0, 0
    return n, size


class Frames:
    """The frame path: numbering (:class:`~koikoi.relay.numbering.Numbering`), the witness, delivery or the
    absent seat's buffer (:class:`~koikoi.relay.numbering.Buffer`)."""

    def __init__(self, cfg: RelayConfig, outbox: Effects, watchers: Watchers) -> None:
        self.cfg = cfg
        self._out = outbox
        self._watchers = watchers

    def on_frame(self, conn: Conn, n: int, size: int, raw: bytes, d: bytes | None, witnessed: bool) -> None:
        """A frame from ``conn``'s seat: number ``n``, the payload ``d`` (None: the last ``size`` bytes of
        the envelope ``raw``).

        A ``witnessed`` frame (not a ``ctl`` one) that is new from this seat becomes the seat's
        last frame for silence certificates; a repeat of one of its recent frames changes nothing."""
        out = self._out
        if size > self.cfg.max_frame_bytes:
            out.limit(conn, "frame_size", "oversized_frame", size=size)
            out.kick(conn, CloseReason.OVERSIZED_FRAME)
            return
        room = conn.room
        if room is None:
            if conn.watching is not None:
                out.error(conn, "frame", Refusal.WATCHING, say(Refusal.WATCHING, "frame"))
            else:
                out.error(conn, "frame", Refusal.NOT_SEATED, say(Refusal.NOT_SEATED, "frame"))
            return
        m = out.metrics
        m.frames_in_total += 1
        me = room.seats[conn.seat]
        line = me.line
        if not line.take(n):
            m.frames_dropped_total += 1  # a duplicate (n <= in_count) or ahead of a resend: the sender resends
            return
        payload = d if d is not None else raw[len(raw) - size :]
        h = frame_hash(payload)
        if room.watch.log is not None:  # (taken: the room's log and its watchers get it, delivered or not)
            self._watchers.taken(room, conn.seat, payload, h)
        other = room.seats[1 - conn.seat]
        oc = other.conn
        direct = oc is not None and oc.closing is None and not other.buffer
        kept = direct or other.buffer.make_room(len(raw), witnessed, line)
        if not kept and witnessed:
            # an unflagged frame with no flagged one to make room for it: a buffer full of this seat's newest
            # messages, which only a flood of junk makes. Taken for the numbering, never delivered, and not the
            # seat's last frame (the other seat could never cite it): the last one it will get stays that
            self._not_delivered(conn, room, other)
            return
        line.witness(h, n, other.line.clock, out.now, ctl=not witnessed, frame=payload)
        if direct:
            assert oc is not None
            out.forward(oc, raw)
            return
        if not kept:
            # the absent seat's buffer is full: the frame is taken (the sender's numbering goes on, so its next
            # frames are not dropped as ahead of a gap) and witnessed (it was sent: an answer is an answer), but
            # never delivered: it leaves the sender's recent, and the other seat asks for what it lacks once
            # back. The room stays open: closing it let a sender end a match it was losing with no certificate
            line.unlist(h, n)
            self._not_delivered(conn, room, other)
            return
        other.buffer.push(n, raw, None if witnessed else h)

    def _not_delivered(self, conn: Conn, room: Room, other: Seat) -> None:
        """A frame from ``conn`` that the absent ``other``'s full buffer will never deliver: counted, and the
        limit logged once until the buffer drains."""
        self._out.metrics.frames_dropped_total += 1
        if not other.buffer.full:
            other.buffer.full = True
            self._out.limit(conn, "seat_buffer", "buffer_full", **room.log_id())
