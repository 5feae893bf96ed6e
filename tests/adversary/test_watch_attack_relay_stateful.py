"""The generic adversary on the relay's side of watching (relay/watchers.py, relay/watchlog.py), in the core with
a fake clock: a hypothesis state machine where two seats send frames (new ones, repeats, the other's sent back,
flagged ones, big ones), watchers from a few addresses watch from any index, leave, drop, are kicked as slow,
send frames, ``create``, ``join``, ``certify`` and ``watch`` while watching, guess codes, and the room closes.

After every step: every log keeps its invariants (``RoomLog.check``) and its bytes are counted once in the
relay-wide budget; the ``watchers`` gauge, each room's watchers and each address's count agree; no seat ever
gets a ``seen`` and no watcher a ``frame``; every ``seen`` a watcher got names, for its index, the one frame the
room took at that index, and from its catch-up on a watcher's indexes only go up; a watcher that came from 0
from index ``f`` while the log kept everything has every index from ``f`` on (from past the log's end: from
its end on), with no gap; a watcher's request that would change a
room is refused (``watching``)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from watch_attack_world import CoreWorld

from koikoi.protocol.witness import frame_hash

WATCHER_IPS = ("203.0.113.1", "203.0.113.2")


class WatchMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.w = CoreWorld(watch_log_frames=12, watch_log_bytes=4000, max_watchers_per_room=3, max_watching_per_ip=2)
        self.code, self.host, self.guest = self.w.room(deck="sealed")
        self.frames: dict[int, tuple[int, bytes]] = {}  # index → the frame the room took there
        self.hashes: set[bytes] = set()
        self.watchers: dict[int, list[int]] = {}  # connection → the indexes it got
        self.start: dict[int, int] = {}  # connection → the first index it should get
        self.closed_room = False

    # -- seats ---------------------------------------------------------------------------------------

    @rule(seat=st.integers(0, 1), body=st.binary(min_size=1, max_size=700), ctl=st.booleans(), repeat=st.booleans())
    def seat_sends(self, seat: int, body: bytes, ctl: bool, repeat: bool) -> None:
        if self.closed_room:
            return
        cid = self.host if seat == 0 else self.guest
        if repeat and self.frames:
            body = self.frames[max(self.frames)][1]  # a repeat (or the other seat's frame sent back)
        before = self.w.core.rooms[self.code].watch.log
        assert before is not None
        count = before.count
        self.w.frame(cid, body, ctl=ctl)
        log = self.w.core.rooms[self.code].watch.log
        assert log is not None
        h = frame_hash(body)
        if log.count > count:
            assert log.count == count + 1
            self.frames[count] = (seat, body)
            self.hashes.add(h)
        self._collect()

    # -- watchers ------------------------------------------------------------------------------------

    @rule(ip=st.sampled_from(WATCHER_IPS), first=st.sampled_from([0, 0, 1, 2, 5, 20]), guess=st.booleans())
    def watch(self, ip: str, first: int, guess: bool) -> None:
        cid = self.w.connect(ip)
        room = "3467A" if guess else self.code  # (a guessed code: a failed attempt)
        reply = self.w.send(cid, {"t": "watch", "room": room, **({"from": first} if first else {})})
        assert reply is not None
        if reply["t"] == "watching":
            assert not guess and not self.closed_room
            self.watchers[cid] = []
            self.start[cid] = min(first, reply["frames"])  # (from past the log's end: the live frames)
            self.w.inbox.setdefault(cid, []).insert(0, reply)
        else:
            assert reply["t"] == "error", reply
            assert reply["code"] in {"room_not_found", "too_many_watchers", "too_many_watching", "too_many_attempts",
                                     "too_many_requests"}, reply  # fmt: skip
        self._collect()

    @rule(data=st.data(), what=st.sampled_from(["leave", "drop", "slow", "frame", "create", "join", "certify",
                                                "watch"]))  # fmt: skip
    def watcher_acts(self, data: st.DataObject, what: str) -> None:
        if not self.watchers:
            return
        cid = data.draw(st.sampled_from(sorted(self.watchers)))
        core = self.w.core
        if what == "leave":
            assert self.w.send(cid, {"t": "leave"}) == {"t": "left", "room": self.code}
            self._forget(cid)
        elif what == "drop":
            core.disconnected(self.w.now, cid)
            self.w.run()
            self._forget(cid)
        elif what == "slow":
            core.slow_consumer(self.w.now, cid)
            self.w.run()
            core.disconnected(self.w.now, cid)
            self.w.run()
            self._forget(cid)
        elif what == "frame":
            self.w.core.message(self.w.now, cid, _frame(b"a watcher's move"))
            self.w.run()
            self._refused(cid, "frame")
        else:
            obj: dict[str, Any] = {"t": what}
            if what in ("join", "watch"):
                obj["room"] = self.code
            reply = self.w.send(cid, obj)
            assert reply is not None and reply["t"] == "error" and reply["code"] == "watching", reply
        self._collect()

    @rule(seconds=st.sampled_from([0.5, 3.0]))
    def time_passes(self, seconds: float) -> None:
        self.w.now += seconds

    @rule()
    def seats_leave(self) -> None:
        if self.closed_room:
            return
        for cid in (self.host, self.guest):
            self.w.send(cid, {"t": "leave", "done": True})
        self.closed_room = self.code not in self.w.core.rooms or self.w.core.rooms[self.code].closed is not None
        self._collect()
        if self.closed_room:
            for cid in list(self.watchers):
                assert self.w.core.conns[cid].watching is None
                self._forget(cid)

    # -- what the connections got ----------------------------------------------------------------------

    def _refused(self, cid: int, re: str) -> None:
        box = self.w.inbox.get(cid, [])
        errors = [m for m in box if m["t"] == "error" and m.get("re") == re]
        assert errors and errors[-1]["code"] == "watching", box
        self.w.inbox[cid] = [m for m in box if m not in errors]

    def _forget(self, cid: int) -> None:
        self.watchers.pop(cid, None)
        self.start.pop(cid, None)

    def _collect(self) -> None:
        for cid, box in list(self.w.inbox.items()):
            for m in box:
                if cid in (self.host, self.guest):
                    assert m["t"] != "seen", m
                    continue
                assert m["t"] != "frame", m
                if m["t"] == "seen" and cid in self.watchers:
                    i = m["i"]
                    assert self.frames.get(i) == (m["seat"], m["d"]), (i, m)
                    got = self.watchers[cid]
                    assert not got or i > got[-1], (got[-3:], i)
                    got.append(i)
            if cid not in (self.host, self.guest):
                self.w.inbox[cid] = []

    @invariant()
    def consistent(self) -> None:
        core = self.w.core
        total = 0
        for room in core.rooms.values():
            log = room.watch.log
            if log is not None:
                log.check()
                if room.closed is None:
                    total += log.size
            for cid, conn in room.watch.conns.items():
                assert conn.watching is room and cid in core.conns
        assert core.watchers.log_bytes == total
        watching = [c for c in core.conns.values() if c.watching is not None]
        assert core.gauges()["watchers"] == len(watching) == sum(len(r.watch.conns) for r in core.rooms.values())
        assert sum(a.watching for a in core.addrs.values()) == len(watching)
        mine = core.rooms.get(self.code)
        log = mine.watch.log if mine is not None else None
        if log is not None and not log.full:
            for cid, got in self.watchers.items():
                assert got == list(range(self.start[cid], log.count)), (got, self.start[cid], log.count)


def _frame(d: bytes) -> bytes:
    from koikoi.protocol.framing import encode

    return encode({"t": "frame", "n": 1, "d": d})


WatchMachine.TestCase.settings = settings(
    max_examples=60, stateful_step_count=30, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
TestWatchRelay = WatchMachine.TestCase
