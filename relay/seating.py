"""A seat after it was taken (:class:`Seating`): ``resume`` (its holder back, perhaps on a rebuilt room),
``leave``, the grace period running out, and a joiner that never speaks removed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import codes
from .admission import Admission
from .certify import Certifier
from .config import RelayConfig
from .effects import Effects, Timer, Timers
from .lobby import proven_key
from .restore import Restorer
from .room import Conn, Room
from .rooms import Rooms
from .vocabulary import (
    ROOM_CLOSE_MESSAGES,
    CloseReason,
    PeerEvent,
    Refusal,
    Refused,
    RoomEnd,
    TimerKind,
    refuse,
)

__all__ = ["Seating"]


@dataclass(eq=False)
class Seating:
    """Seats coming back, leaving, and running out of time."""

    cfg: RelayConfig
    out: Effects
    timers: Timers
    rooms: Rooms
    admission: Admission
    certifier: Certifier
    restorer: Restorer
    relay_key: bytes

    # ------------------------------------------------------------------ resume

    def on_resume(self, conn: Conn, obj: dict[Any, Any]) -> None:
        if conn.room is not None:
            raise refuse(Refusal.ALREADY_SEATED)
        s = obj.get("seat")
        token = obj.get("token")
        received = obj.get("received", 0)
        text = obj.get("room")
        if (
            s not in (0, 1)
            or type(s) is not int
            or type(token) is not str
            or not 0 < len(token) <= 128
            or type(received) is not int
            or received < 0
        ):
            raise refuse(Refusal.BAD_REQUEST, "resume")
        key = proven_key(obj, "resume", self.relay_key, conn.nonce)
        code = codes.normalize_code(text) if isinstance(text, str) else None
        room = self.rooms.rooms.get(code) if code is not None else None
        th = codes.token_hash(token)
        held = room.seats[s].token_hash if room is not None else None
        admission, out = self.admission, self.out
        if held is None or not codes.tokens_equal(held, th):
            # (the holder of the seat's token is never refused for others' failures from its address: a cheater
            # behind the same NAT could otherwise keep it out until the grace ran out)
            admission.check_attempts(conn, "resume")
        restored = False
        if room is None:
            gone = self.rooms.tombstone(code) if code is not None else None
            if gone is not None:
                out.metrics.join_failed(Refusal.ROOM_CLOSED)
                extra: dict[str, Any] = {"reason": gone.reason}
                if gone.cert is not None and gone.cert_for is not None and codes.tokens_equal(gone.cert_for, th):
                    extra["cert"] = gone.cert  # the closing certificate, for the seat that was told (or missed it)
                raise Refused(Refusal.ROOM_CLOSED, ROOM_CLOSE_MESSAGES[gone.reason], **extra)
            # the relay restarted: rebuild the room from what the seat holder knows (never listed)
            room = self.restorer.rebuild(conn, obj, code, s, th)
            restored = True
        seat = room.seats[s]
        if seat.token_hash is None or not codes.tokens_equal(seat.token_hash, th):
            out.log("seat_theft_refused", **room.log_id(), seat=s, conn=conn.id, ip=conn.ip)
            raise admission.fail(conn, "resume", refuse(Refusal.BAD_TOKEN))
        if seat.player_key is None:  # a rebuilt room: the seat's first resume binds its key
            seat.player_key = key
        elif seat.player_key != key:
            out.log("seat_theft_refused", **room.log_id(), seat=s, conn=conn.id, ip=conn.ip, why="wrong_key")
            raise admission.fail(conn, "resume", refuse(Refusal.WRONG_KEY))
        old = seat.conn
        if old is not None:  # a half-open old connection: its holder is here now
            old.room = None
            seat.release()
            out.kick(old, CloseReason.REPLACED)
        self.rooms.attach(room, s, conn, received)
        seat.line.resumed()
        out.metrics.resumes_total += 1
        out.log("seat_resumed", **room.log_id(), seat=s, conn=conn.id, restored=restored)
        other = room.seats[1 - s]
        out.send(
            conn,
            {
                "t": "resumed",
                "room": room.code,
                "display": codes.format_code(room.code),
                "seat": s,
                "received": seat.in_count,
                "peer": other.presence,
                "restored": room.restored,
                "settings": self.rooms.settings(room),
                # this seat's recent frames: what a lost file tail lost
                "frames": list(seat.line.clock.copies.values()),
                "peer_key": other.player_key,
            },
        )
        self.rooms.flush(room, s)
        if other.conn is not None:
            out.send(other.conn, {"t": "peer", "event": PeerEvent.BACK, "received": other.in_count, "peer_key": key})

    # ------------------------------------------------------------------ leave

    def on_leave(self, conn: Conn, obj: dict[Any, Any]) -> None:
        room = conn.room
        if room is None:
            raise refuse(Refusal.NOT_SEATED)
        done = obj.get("done") is True
        reason = RoomEnd.MATCH_OVER if done else RoomEnd.OPPONENT_QUIT
        seat, other = room.seats[conn.seat], room.seats[1 - conn.seat]
        self.out.log("seat_left", **room.log_id(), seat=conn.seat, done=done)
        seat.left_done = done
        if room.waiting or other.token_hash is None or (done and other.conn is None and other.left_done):
            # nobody is playing against this seat (or both said the match is over): the room closes now
            conn.room = None
            seat.release()
            self.rooms.close(room, reason)
        else:
            # the relay cannot know whether the match is over (a leaver's "done" is its word alone): a seat
            # that leaves a room both seats took goes away as after a lost connection, and the grace period
            # ends in opponent_left with the witness's certificate (a losing cheater cannot leave for free)
            self.rooms.detach(conn)
        self.out.send(conn, {"t": "left", "room": room.code})

    # ------------------------------------------------------------------ timers

    def on_timer(self, t: Timer) -> None:
        room = t.room
        if room.closed is not None:
            return
        seat = room.seats[t.seat]
        if t.kind is TimerKind.GRACE:
            if t.gen != seat.grace_gen or seat.conn is not None or seat.away_since is None:
                return
            other_here = room.seats[1 - t.seat].conn is not None
            a = seat.addr
            if other_here and self.certifier.locked_out(seat) and a is not None and a.refused_at is not None:
                # its holder may be kept out: the grace waits until its address has been quiet a while
                self.timers.schedule(a.refused_at + self.cfg.lockout_quiet_s, TimerKind.GRACE, room, t.seat, t.gen)
                return
            if other_here:
                self.rooms.close(room, RoomEnd.OPPONENT_LEFT)
            else:  # nobody here: a seat that said the match is over (its last leave was done) finished it
                done = any(x.left_done for x in room.seats)
                self.rooms.close(room, RoomEnd.FINISHED if done else RoomEnd.ABANDONED)
        elif t.gen == room.join_gen and seat.token_hash is not None and not seat.line.highest:
            # (no frame ever, flagged or not: ``highest``, which no rewind moves back, unlike the count that the
            # other seat's resume sets back: …_rewound_joiner_removed.py. A joiner that sent frames keeps its
            # seat and its key, else a cheater could flag its frames, be removed, and join again with another
            # key or none witnessed: tests/adversary/test_adversary_attack_seat_key_stop_win.py,
            # …_let_again_alias.py)
            self._remove_silent_joiner(room)

    def _remove_silent_joiner(self, room: Room) -> None:
        """The joiner sent nothing within ``first_frame_timeout``: free its seat, put the room back in the
        lobby, tell the host, and bar the joiner's address from this room for ``attempts_window``."""
        seat, host = room.seats[1], room.seats[0]
        conn = seat.conn
        room.join_gen += 1
        seat.free()
        # frames to and from the removed joiner go: the host sends them again to the next one; what the witness
        # knew of the host's frames was about the removed joiner's connection (it may have got junk the next
        # joiner never will): the host's timing starts again with the next joiner
        host.buffer.clear()
        host.line.restart_witness()
        out = self.out
        if conn is not None:
            out.limit(conn, "first_frame", "no_first_frame", **room.log_id())
            self.admission.bar(conn, room)
            conn.room = None
            out.send(
                conn,
                {
                    "t": "room_closed",
                    "room": room.code,
                    "reason": RoomEnd.REMOVED,
                    "message": ROOM_CLOSE_MESSAGES[RoomEnd.REMOVED],
                },
            )
        else:
            out.metrics.limit_hit("first_frame")
            out.log("limit_hit", limit="first_frame", reason="no_first_frame", **room.log_id())
        out.log("joiner_removed", **room.log_id())
        if host.conn is not None:
            out.send(host.conn, {"t": "peer", "event": PeerEvent.LEFT, "reason": "no_first_frame"})
