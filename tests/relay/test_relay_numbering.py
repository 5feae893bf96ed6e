"""The relay core's parts on their own: a seat's numbering and buffer keep their invariants, a seat's lifecycle
moves only along its transitions, and the relay's words go on the wire as the strings they are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl.signing import SigningKey

from koikoi.protocol.framing import decode, encode
from koikoi.protocol.witness import frame_hash, sign_seat_proof
from koikoi.relay.core import Close, RelayConfig, RelayCore, Send
from koikoi.relay.numbering import MAX_REWIND, Buffer, Numbering
from koikoi.relay.room import Seat, SeatState
from koikoi.relay.vocabulary import (
    CLOSE_CODES,
    CLOSE_MESSAGES,
    REFUSAL_TEXTS,
    ROOM_CLOSE_MESSAGES,
    CloseReason,
    Refusal,
    RoomDeck,
    RoomEnd,
    say,
)

SPEC = Path(__file__).resolve().parents[2] / "spec" / "relay.md"


def _taken(line: Numbering, upto: int, *, ctl: bool = False) -> None:
    other = Numbering()
    for n in range(1, upto + 1):
        frame = b"f%d" % n
        assert line.take(n)
        line.witness(frame_hash(frame), n, other.clock, float(n), ctl=ctl, frame=frame)


def test_a_rewind_is_bounded_from_the_highest_count_and_never_below_the_floor() -> None:
    line = Numbering()
    _taken(line, 100)
    line.rewind(0)
    assert line.in_count == 100 - MAX_REWIND and line.highest == 100
    line.rewind(0)  # again and again: no walking back in steps
    assert line.in_count == 100 - MAX_REWIND
    line.rewind(90)
    assert line.in_count == 90
    line.resumed()  # told 90 at its resume: its floor
    assert line.floor == 90
    line.rewind(40)
    assert line.in_count == 90
    line.check()


def test_only_the_next_frame_is_taken() -> None:
    line = Numbering()
    assert not line.take(2) and not line.take(0) and line.in_count == 0
    assert line.take(1) and line.in_count == line.highest == 1
    assert not line.take(1) and not line.take(3) and line.in_count == 1
    rebuilt = Numbering()
    rebuilt.unknown()  # a rebuilt room: any number starts the count
    assert rebuilt.take(500) and rebuilt.in_count == rebuilt.highest == 500
    line.check()
    rebuilt.check()


def test_a_frame_never_delivered_leaves_recent_unless_a_later_copy_was() -> None:
    line = Numbering()
    _taken(line, 3)
    h2 = frame_hash(b"f2")
    assert h2 in line.clock.recent and line.sent_at[h2] == 2
    line.unlist(h2, 7)  # not the frame that brought it: it stays
    assert h2 in line.clock.recent
    line.unlist(h2, 2)
    assert h2 not in line.clock.recent and h2 not in line.sent_at
    line.check()
    # the other seat resumes having got frame 1 only; frame 3 still waits for it: frame 2 was dropped
    line.missed(1, {2}, {3})
    assert frame_hash(b"f3") in line.clock.recent and frame_hash(b"f1") in line.clock.recent
    line.missed(1, set(), set())  # nothing waits: frame 3 it never got leaves too
    assert list(line.clock.recent) == [frame_hash(b"f1")]
    line.check()


def test_sent_at_stays_bounded_and_covers_recent() -> None:
    line = Numbering()
    _taken(line, 500)
    line.check()
    assert len(line.sent_at) <= 64


def test_a_freed_seat_forgets_and_a_restarted_witness_keeps_the_count() -> None:
    line = Numbering()
    _taken(line, 5)
    line.restart_witness()
    assert line.in_count == 5 and not line.clock.recent and not line.sent_at and line.clock.copies
    with pytest.raises(AssertionError):
        line.forget()  # a seat that sent frames is never freed
    fresh = Numbering()
    fresh.forget()
    assert fresh.in_count == 0 and fresh.floor == 0


def test_a_full_buffer_evicts_its_oldest_flagged_frames_for_a_newest_message() -> None:
    sender = Numbering()
    buf = Buffer(max_frames=3, max_bytes=1 << 20)
    other = Numbering()
    for n, flagged in ((1, True), (2, False), (3, True)):
        raw = b"raw%d" % n
        assert sender.take(n)
        sender.witness(frame_hash(raw), n, other.clock, 0.0, ctl=flagged, frame=raw)
        assert buf.make_room(len(raw), not flagged, sender)
        buf.push(n, raw, frame_hash(raw) if flagged else None)
    assert not buf.make_room(4, False, sender)  # a flagged frame does not fit a full buffer
    assert buf.make_room(4, True, sender)  # an unflagged one evicts the oldest flagged one
    assert [w.n for w in buf] == [2, 3]
    assert frame_hash(b"raw1") not in sender.clock.recent  # never delivered: unlisted
    assert frame_hash(b"raw3") in sender.clock.recent
    buf.push(4, b"raw4", None)
    assert buf.make_room(4, True, sender) and [w.n for w in buf] == [2, 4]
    with pytest.raises(AssertionError):
        buf.push(3, b"old", None)  # numbers only go up
    buf.check()


def test_a_buffer_keeps_only_what_follows_on_from_received() -> None:
    buf = Buffer(10, 1 << 20)
    for n in (3, 4, 5):
        buf.push(n, b"x" * n, None)
    assert buf.drop_through(3) == ({3}, {4, 5}) and buf.size == 9
    assert buf.drop_through(1) == ({4, 5}, set()) and buf.size == 0  # a gap: all of it goes


def _state(seat: Seat) -> SeatState:
    return seat.state


def test_a_seat_moves_only_along_its_lifecycle() -> None:
    seat = Seat.new(4, 1024)
    assert seat.state is SeatState.EMPTY
    core = RelayCore(RelayConfig())
    conn_id, _ = core.connect(1.0, "192.0.2.1")
    conn = core.conns[conn_id]
    with pytest.raises(AssertionError):
        seat.attach(conn)  # nobody took it
    seat.take(b"t" * 32, b"k" * 32, 1.0)
    assert _state(seat) is SeatState.AWAY
    seat.attach(conn)
    assert _state(seat) is SeatState.PRESENT and seat.conn is conn and seat.attaches == 1
    gen = seat.go_away(5.0)
    assert _state(seat) is SeatState.AWAY and seat.away_since == 5.0 and gen == seat.grace_gen
    with pytest.raises(AssertionError):
        seat.go_away(6.0)  # it is away already
    seat.free()
    assert _state(seat) is SeatState.EMPTY and seat.token_hash is None and seat.player_key is None
    seat.check()


def test_the_relays_words_go_on_the_wire_as_their_strings() -> None:
    assert encode({"reason": RoomEnd.FINISHED, "deck": RoomDeck.SHARED}) == encode(
        {"reason": "finished", "deck": "shared"}
    )
    assert set(CLOSE_CODES) == set(CloseReason) and set(CLOSE_MESSAGES) < set(CloseReason)
    assert set(ROOM_CLOSE_MESSAGES) == set(RoomEnd) and set(REFUSAL_TEXTS) == set(Refusal)
    spec = SPEC.read_text()
    for word in [*Refusal, *RoomEnd, *CloseReason]:
        assert re.search(rf"`{word}`", spec), word
    for code, texts in REFUSAL_TEXTS.items():
        for case in texts:
            assert say(
                code,
                case,
                t="x",
                re="join",
                length=9,
                max_rooms=1,
                rooms="1 room",
                room="Q",
                key="k",
                have=1,
                want=2,
                most=16,
            )
    assert say(Refusal.ROOM_NOT_FOUND, room="QQ") == "no room 'QQ' on this relay"


# ------------------------------------------------------------------ the whole core, at random

PLAYER = SigningKey(bytes(range(1, 33)))
OPS = st.lists(
    st.tuples(
        st.sampled_from(["frames", "dup", "ahead", "drop", "resume", "wait"]),
        st.integers(0, 1),
        st.integers(0, 1 << 12),
    ),
    max_size=80,
)


class _Pair:
    """A room with two seats on a core (small buffers), driven at will; each seat numbers on from where the
    relay tells it to (``resumed``, ``peer back``)."""

    def __init__(self) -> None:
        self.core = RelayCore(RelayConfig(chosen_codes_after_s=0, seat_buffer_frames=6, first_frame_timeout=1e6))
        self.now = 1.0
        self.cid = [0, 0]
        self.sent = [0, 0]
        self.token = ["", ""]
        self.nonce: dict[int, bytes] = {}
        self.inbox: dict[int, list[dict[str, object]]] = {}
        self.cid[0] = self._connect(0)
        created = self._ask(0, {"t": "create"})
        self.room, self.token[0] = str(created["room"]), str(created["token"])
        self.cid[1] = self._connect(1)
        self.token[1] = str(self._ask(1, {"t": "join", "room": self.room})["token"])

    def _run(self) -> None:
        for e in list(self.core.out):
            if isinstance(e, Send):
                self.inbox.setdefault(e.conn, []).append(decode(e.data))
            elif isinstance(e, Close):
                self.core.disconnected(self.now, e.conn)
        self.core.out.clear()
        for s in (0, 1):
            for msg in self.inbox.get(self.cid[s], []):
                received = msg.get("received")
                if msg.get("t") in ("peer", "resumed") and isinstance(received, int):
                    self.sent[s] = received

    def _connect(self, s: int) -> int:
        cid, refusal = self.core.connect(self.now, "192.0.2.1" if s == 0 else "198.51.100.2")
        assert refusal is None
        self._run()
        nonce = self.inbox.pop(cid)[0]["nonce"]
        assert isinstance(nonce, bytes)
        self.nonce[cid] = nonce
        return cid

    def _ask(self, s: int, obj: dict[str, object]) -> dict[str, object]:
        cid = self.cid[s]
        proof = sign_seat_proof(PLAYER, self.core.public_key, self.nonce[cid])
        self.inbox.pop(cid, None)
        self.core.message(self.now, cid, encode({**obj, "key": bytes(PLAYER.verify_key), "proof": proof}))
        self._run()
        return self.inbox[cid][0]

    def step(self, op: str, s: int, k: int) -> None:
        self.now += 0.5
        cid = self.cid[s]
        if op == "frames":  # a burst of frames, each flagged or not by a bit of k
            for i in range(k % 100 + 1):
                n = self.sent[s] + 1
                env: dict[str, object] = {"t": "frame", "n": n, "d": b"%d:%d:%d" % (s, n, k % 5)}
                if (k >> (i % 9)) & 1:
                    env["ctl"] = True
                self.core.message(self.now, cid, encode(env))
                self.sent[s] = n
        elif op in ("dup", "ahead"):
            n = max(1, self.sent[s]) if op == "dup" else self.sent[s] + 2
            self.core.message(self.now, cid, encode({"t": "frame", "n": n, "d": b"again"}))
        elif op == "drop":
            self.core.disconnected(self.now, cid)
        elif op == "resume":  # (with no drop before: the old connection is replaced)
            self.cid[s] = self._connect(s)
            got = k % (self.sent[1 - s] + 2)
            self._ask(s, {"t": "resume", "room": self.room, "seat": s, "token": self.token[s], "received": got})
        else:
            self.now += k % 150
            self.core.tick(self.now)
        self._run()
        self.inbox.clear()

    def check(self) -> None:
        for room in self.core.rooms.values():
            for seat in room.seats:
                seat.check()
                seat.line.check()
                seat.buffer.check()


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_every_part_keeps_its_invariants_whatever_the_seats_do(ops: list[tuple[str, int, int]]) -> None:
    pair = _Pair()
    pair.check()
    for op, s, k in ops:
        pair.step(op, s, k)
        pair.check()
