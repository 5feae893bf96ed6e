"""Certification: the witness's signed word on how long a seat has been silent (spec/relay.md "The witness").

:class:`Certifier` answers ``certify`` and signs the certificate a ``room_closed`` (``opponent_left``)
carries; it says where no silence is certified (:meth:`Certifier.refusal`).
"""

from __future__ import annotations

from typing import Any

from nacl.signing import SigningKey

from ..protocol.witness import sign_certificate, silent_ms
from ..support import TokenBucket
from .config import RelayConfig
from .effects import Effects
from .room import Conn, Room, Seat
from .vocabulary import Refusal, Refused, refuse

__all__ = ["Certifier"]


class Certifier:
    """The witness's certificates, signed with the relay's ``key``."""

    def __init__(self, cfg: RelayConfig, key: SigningKey, outbox: Effects) -> None:
        self.cfg = cfg
        self.key = key
        self._out = outbox

    def refusal(self, room: Room, silent: int) -> Refused | None:
        """Why the witness certifies no silence of seat ``silent`` here, or None. A room rebuilt after a restart:
        the other seat's token was the first resumer's word (a cheater could hold both seats; each seat's key
        guards it too, spec/relay.md "Seats and keys": the refusal stays as a second guard). A seat away from an
        address whose new connections a limit is refusing: a cheater on the same address (a NAT) may be keeping
        its holder out (:meth:`locked_out`)."""
        if room.restored:
            return refuse(Refusal.REBUILT_ROOM)
        if self.locked_out(room.seats[silent]):
            return refuse(Refusal.SEAT_LOCKED_OUT)
        return None

    def locked_out(self, seat: Seat) -> bool:
        """Seat ``seat`` is away and its address had a connection refused by a per-address limit since it left,
        within the last ``lockout_quiet_s``: its holder may be kept out by someone on the same address (a NAT).
        Only refusals of new connections count (nothing the seat's own connection did), and only while they
        go on: a cheater that gets its own address refused must keep at it to stall, and stops being excused
        ``lockout_quiet_s`` after it stops."""
        a = seat.addr
        if seat.conn is not None or seat.away_since is None or a is None or a.refused_at is None:
            return False
        return a.refused_at >= seat.away_since and self._out.now - a.refused_at < self.cfg.lockout_quiet_s

    def certificate(self, room: Room, silent: int) -> bytes:
        """The witness's signed word: how long seat ``silent`` has been awaited and sent nothing new
        (``witness.silent_ms``: from the later of both seats' last new frames, moved on by the silent seat's
        requests to send again, within a bound), the last frames' hashes, and the other seat's (the
        claimer's) recent frames."""
        seat, other = room.seats[silent], room.seats[1 - silent]
        conn = seat.conn
        clocks = (room.seats[0].line.clock, room.seats[1].line.clock)
        return sign_certificate(
            self.key,
            room.code,
            silent,
            (clocks[0].last_hash, clocks[1].last_hash),
            silent_ms(seat.line.clock, other.line.clock, self._out.now, room.move_time_s),
            conn is not None and conn.closing is None,
            list(other.line.clock.recent),
            (room.seats[0].player_key or b"", room.seats[1].player_key or b""),
        )

    def closing(self, room: Room) -> dict[int, bytes]:
        """The certificates a room closing with ``opponent_left`` gives the seats still there (by seat)."""
        certs: dict[int, bytes] = {}
        for i, seat in enumerate(room.seats):
            if seat.conn is not None and self.refusal(room, 1 - i) is None:
                certs[i] = self.certificate(room, 1 - i)
        return certs

    def on_certify(self, conn: Conn, obj: dict[Any, Any]) -> None:
        room = conn.room
        if room is None:
            raise refuse(Refusal.NOT_SEATED, "certify")
        me, other = room.seats[conn.seat], room.seats[1 - conn.seat]
        if other.token_hash is None:
            raise refuse(Refusal.NO_OPPONENT)
        why = self.refusal(room, 1 - conn.seat)
        if why is not None:
            raise why
        now = self._out.now
        if me.certify_bucket is None:
            me.certify_bucket = TokenBucket.full(self.cfg.certify_per_s, self.cfg.certify_burst, now)
        if not me.certify_bucket.take(now):
            self._out.limit(conn, "certify", "too_many_requests", **room.log_id())
            raise refuse(Refusal.TOO_MANY_REQUESTS)
        cert = self.certificate(room, 1 - conn.seat)
        self._out.log("certified", **room.log_id(), seat=conn.seat, silent_seat=1 - conn.seat)
        self._out.send(conn, {"t": "certificate", "cert": cert})
