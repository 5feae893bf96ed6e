"""A relay core (relay/core.py, as ``koikoi relay`` runs it) with a fake clock and two clients that number,
log and resend frames as relay/client.py does, each with its protocol session (for the attack tests; not a
test file)."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from koikoi.engine import Settings
from koikoi.engine.bots import Bot, make_bot
from koikoi.protocol.framing import decode, encode
from koikoi.protocol.messages import public_bytes, resend_frame
from koikoi.protocol.session import CertificateNeeded, Event, Session
from koikoi.protocol.transcript import MAGIC, record
from koikoi.protocol.witness import seat_claim
from koikoi.relay.core import Close, RelayConfig, RelayCore, Send
from koikoi.testing import fixed_key, witness_key

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ROOM = "K7M3Q"  # a code the creator draws itself: the same match every run
IPS = ("198.51.100.10", "192.0.2.20")


def envelope(n: int, d: bytes, ctl: bool) -> bytes:
    return encode({"t": "frame", "n": n, "d": d, "ctl": True} if ctl else {"t": "frame", "n": n, "d": d})


@dataclass
class End:
    """One seat's client (its ``SeatTicket``: numbers, resend log) and its session."""

    seat: int
    session: Session | None = None
    bot: Bot | None = None
    cid: int = 0
    """The live connection (0: none)."""
    token: str = ""
    peer_check: bytes = b""
    sent: int = 0
    received: int = 0
    log: list[tuple[int, bytes, bool]] = field(default_factory=list)
    file: bytearray = field(default_factory=lambda: bytearray(MAGIC))
    events: list[Event] = field(default_factory=list)
    silent: bool = False
    """A modified client: its session's frames are not sent (the test sends by hand), nor its log again."""
    replies: deque[dict[str, Any]] = field(default_factory=deque)
    held: list[tuple[bytes, bool]] | None = None
    """While a resume is in progress: frames that arrived, for the session once the resend is out."""
    started: float = 0.0
    epoch: int = -1
    kicked: int = 0
    peer_key: bytes | None = None
    """The key the relay says the other seat proved (``joined``, ``peer`` events, ``resumed``)."""
    stopped: str | None = None
    """Why the client stopped (client/match_loop.py ``_check_seat_key``: ``relay_seat_mismatch``)."""


class World:
    def __init__(self, seed: bytes, move_time_s: int) -> None:
        self.seed = seed
        self.move = move_time_s
        self.key = witness_key(seed)
        self.core = RelayCore(RelayConfig(chosen_codes_after_s=0), key=self.key)  # a relay long running
        self.now = 1000.0
        self.ends = (End(0), End(1))
        self.lost: set[int] = set()
        """Connections whose incoming frames are lost (the connection is dying)."""
        self.room = ROOM
        self.nonces: dict[int, bytes] = {}
        """The nonce the relay announced on each connection (a seat request proves a key over it)."""

    def prove(self, cid: int, key: Ed25519PrivateKey) -> dict[str, bytes]:
        """The ``key`` and ``proof`` fields of a seat request on connection ``cid`` by the holder of ``key``."""
        return {"key": public_bytes(key), "proof": key.sign(seat_claim(self.core.public_key, self.nonces[cid]))}

    def connect_raw(self, ip: str) -> int:
        """A connection from ``ip`` nobody's :class:`End` holds (a modified client's own): its id."""
        cid, refusal = self.core.connect(self.now, ip)
        assert refusal is None, refusal
        self.take_announcement(cid)
        return cid

    def take_announcement(self, cid: int) -> None:
        """Take the announcement off the wire (the relay's first message on ``cid``), keeping its nonce."""
        for e in list(self.core.out):
            if isinstance(e, Send) and e.conn == cid:
                obj = decode(e.data)
                if obj.get("t") == "relay":
                    self.nonces[cid] = obj["nonce"]
                    self.core.out.remove(e)

    # -- the wire ----------------------------------------------------------------------------------

    def pump(self) -> bool:
        did = False
        while self.core.out:
            out, self.core.out[:] = list(self.core.out), []
            for e in out:
                if isinstance(e, Close):
                    for x in self.ends:
                        if x.cid == e.conn:
                            x.cid = 0
                            x.kicked += 1
                    self.core.disconnected(self.now, e.conn)
                    continue
                if not isinstance(e, Send):
                    continue
                end = next((x for x in self.ends if x.cid and x.cid == e.conn), None)
                if end is None or e.conn in self.lost:
                    continue
                obj = decode(e.data, max_size=1 << 20)
                if obj.get("t") != "frame":
                    end.replies.append(obj)
                    if type(obj.get("peer_key")) is bytes:
                        end.peer_key = obj["peer_key"]
                    if obj.get("t") == "peer" and obj.get("event") == "joined":
                        end.received = 0  # as RelayClient._pump: a new joiner numbers from 1
                    if obj.get("t") == "peer" and type(obj.get("received")) is int and not end.silent:
                        if obj["received"] > end.sent:
                            end.sent = obj["received"]
                        self.resend(end, obj["received"])
                    continue
                if obj["n"] <= end.received:
                    continue  # as RelayClient._pump: a duplicate after a resume (a gap is taken)
                end.received = obj["n"]
                if end.held is not None:
                    end.held.append((obj["d"], obj.get("ctl") is True))
                elif end.session is not None:
                    self.note(end, end.session.receive(obj["d"], ctl=obj.get("ctl") is True))
                    did = True
        return did

    def send(self, end: End, d: bytes, ctl: bool) -> None:
        """``RelayClient.send``: logged, then sent (when connected)."""
        end.sent += 1
        end.log.append((end.sent, d, ctl))
        if end.cid:
            self.core.message(self.now, end.cid, envelope(end.sent, d, ctl))

    def resend(self, end: End, received: int) -> None:
        """``RelayClient._resend``: every logged frame after ``received``, at once."""
        for n, d, ctl in list(end.log):
            if n > received and end.cid:
                self.core.message(self.now, end.cid, envelope(n, d, ctl))
        self.pump()

    def flush(self, end: End) -> None:
        s = end.session
        assert s is not None
        hello = s.referee.hellos[1 - end.seat]
        if (
            not end.silent
            and end.peer_key is not None
            and hello is not None
            and hello.public_key != end.peer_key
            and s.match is None
        ):
            # as client/match_loop.py _check_seat_key: the opponent's seat proved another key than its HELLO's,
            # so its silence could never be certified: the client stops before anything is at stake
            end.stopped, end.silent = "relay_seat_mismatch", True
        for rec in s.records():
            end.file += record(rec.frame)
        for f in s.frames_to_send():
            if not end.silent:
                self.send(end, f, s.is_control(f))

    def request(self, end: End, obj: dict[str, Any], expect: str) -> dict[str, Any] | None:
        if obj.get("t") in ("create", "join", "resume") and "key" not in obj:
            obj = {**obj, **self.prove(end.cid, fixed_key(self.seed, end.seat))}  # the seat's own key: its HELLO's
        self.core.message(self.now, end.cid, encode(obj))
        self.pump()
        while end.replies:
            r = end.replies.popleft()
            if r.get("t") in (expect, "error"):
                if r.get("code") in ("rebuilt_room", "seat_locked_out"):
                    return None  # where the witness certifies no silence (relay/core.py _no_certificate)
                assert r["t"] == expect, r
                return r
        return None

    def note(self, end: End, events: list[Event]) -> None:
        s = end.session
        assert s is not None
        end.events.extend(events)
        self.flush(end)
        for ev in events:
            if isinstance(ev, CertificateNeeded) and not end.silent and end.cid:
                r = self.request(end, {"t": "certify"}, "certificate")
                if r is not None:
                    self.note(end, s.witnessed(r["cert"]))

    def grow_log(self, cheat: int, seconds: float = 40) -> None:
        """Play on to a turn of seat ``cheat`` past SEQ 20; from there the seat sends only what the test sends.
        For ``seconds`` it asks the other seat, twice a second, for 16 old messages at a time (RESENDs from 0,
        16, …), so that the other seat's resend log grows."""
        c, h = self.ends[cheat], self.ends[1 - cheat]
        cs = c.session
        assert cs is not None
        for _ in range(20_000):
            if cs.my_turn and cs.referee.next_seq >= 20 and not self.core.out:
                break
            assert self.step()
        c.silent = True
        sid = cs.referee.sid
        assert sid is not None
        t_end, ask, k = self.now + seconds, self.now, 0
        while self.now < t_end:
            if self.now >= ask:
                self.send(c, resend_frame(sid, k), True)
                k = (k + 16) % max(16, cs.referee.next_seq - 16)
                ask = self.now + 0.5
            self.pump()
            self.tick(h)
            self.now += 0.25
            self.core.tick(self.now)

    def fork_a_turn(self, cheat: int, *, ready: Callable[[], bool] = lambda: True) -> tuple[int, list[bytes]]:
        """Play on (once ``ready()``) to a turn of seat ``cheat`` that takes two or more messages; from there the
        seat sends only what the test sends: it signs its whole turn on its own line (its file holds it), which
        then waits for the other seat. ``(i, fork)``: the turn's first SEQ and its messages' frames."""
        c = self.ends[cheat]
        cs = c.session
        assert cs is not None and c.bot is not None
        first = None
        for _ in range(20_000):
            if cs.my_turn and not self.core.out and ready():
                m = cs.referee.match
                assert m is not None
                a = c.bot.choose(cs.view())
                trial = m.copy()
                trial.apply(a, cheat)
                if not trial.is_over and trial.to_move == cheat:
                    first = a
                    break
                self.note(c, cs.play(a))
                continue
            assert self.step()
        assert first is not None, "no turn of two or more messages"
        c.silent = True
        i = cs.referee.next_seq
        fork: list[bytes] = []
        cs.play(first)
        fork += cs.frames_to_send()
        while cs.my_turn:
            cs.play(c.bot.choose(cs.view()))
            fork += cs.frames_to_send()
        self.flush(c)
        exp = cs.referee.expected()
        assert len(fork) >= 2 and exp is not None and exp[0] == 1 - cheat
        return i, fork

    # -- seats -------------------------------------------------------------------------------------

    def connect(self, end: End) -> None:
        cid, refusal = self.core.connect(self.now, IPS[end.seat])
        assert refusal is None
        end.cid = cid
        self.take_announcement(cid)

    def resume(self, end: End, received: int | None = None) -> dict[str, Any]:
        """Take the seat back on a new connection (``received``: what it says it got; None: the truth). An
        honest client then resends what the relay lacks, and only then its session sees what arrived."""
        self.connect(end)
        msg = {
            "t": "resume",
            "room": self.room,
            "seat": end.seat,
            "token": end.token,
            "received": end.received if received is None else received,
            "peer_check": end.peer_check,
            "settings": {"rounds": 6, "double_at_8": True, "move_time_s": self.move, "deck": "shared"},
        }
        end.held = []
        r = self.request(end, msg, "resumed")
        assert r is not None
        if not end.silent:
            if r["received"] > end.sent:
                end.sent = r["received"]
            self.resend(end, r["received"])
        held, end.held = end.held, None
        s = end.session
        assert s is not None
        if not end.silent:
            self.note(end, s.reconnected(own_frames=r["frames"]))
        for d, ctl in held:
            self.note(end, s.receive(d, ctl=ctl))
        self.pump()
        return r

    def resume_from(self, end: End, ip: str, received: int) -> dict[str, Any]:
        """``end`` resumes its seat on a new connection from ``ip``, through the relay's per-address limits (the
        TCP and WebSocket handshakes first), saying it got ``received`` frames: the ``resumed`` reply."""
        self.pump()
        assert self.core.tcp_opened(self.now, ip), "a per-address limit refused the connection"
        self.core.handshake_done(self.now, ip, True)
        cid, refusal = self.core.connect(self.now, ip)
        assert refusal is None, refusal
        self.take_announcement(cid)
        end.cid = cid
        msg = {"t": "resume", "room": self.room, "seat": end.seat, "token": end.token, "received": received}
        r = self.request(end, msg, "resumed")
        assert r is not None
        return r

    def wait_as_client(self, end: End, until: float, *, resume_first: bool = False) -> list[dict[str, Any]]:
        """``end``'s honest client (client/match_loop.py) waiting until ``until`` or its match's end, every half
        second: its clock (certificates asked for, claims made), and a room that closes: its certificate, if any,
        goes to the session; without one the client takes its seat back, and a refusal (a room really gone) stops
        it, the match unfinished (``_gave_up``). ``resume_first``: it takes its seat back first. What the relay
        said of rooms and refusals, in order."""
        s = end.session
        assert s is not None
        said: list[dict[str, Any]] = []
        retake = resume_first
        while self.now < until and not s.is_finished:
            if retake:
                retake = False
                self.connect(end)
                msg = {"t": "resume", "room": self.room, "seat": end.seat, "token": end.token, "received": end.received}
                self.core.message(self.now, end.cid, encode(msg | self.prove(end.cid, s.key)))
                self.pump()
                r = next(x for x in end.replies if x.get("t") in ("resumed", "error"))
                end.replies.clear()
                if r["t"] == "error":
                    said.append(r)
                    if isinstance(r.get("cert"), bytes):
                        self.note(end, s.witnessed(r["cert"]))
                    break
                self.note(end, s.reconnected(own_frames=r["frames"]))
            self.now += 0.5
            self.core.tick(self.now)
            self.pump()
            said += [x for x in end.replies if x.get("t") == "error" and x.get("re") == "certify"]
            closed = [x for x in end.replies if x.get("t") == "room_closed"]
            end.replies.clear()
            if closed:
                said += closed
                if isinstance(closed[0].get("cert"), bytes):
                    self.note(end, s.witnessed(closed[0]["cert"]))
                retake = True  # (when the certificate did not end the match: the seat is taken back to check)
                continue
            self.tick(end)
        return said

    def open(self) -> None:
        h, c = self.ends
        self.connect(h)
        create = {"t": "create", "rounds": 6, "double_at_8": True, "move_time_s": self.move, "room": ROOM}
        r = self.request(h, create, "created")
        assert r is not None
        self.room, h.token = r["room"], r["token"]
        self.connect(c)
        r = self.request(c, {"t": "join", "room": self.room}, "joined")
        assert r is not None
        c.token, c.peer_check = r["token"], r["peer_check"]
        h.peer_check = next(x for x in h.replies if x.get("event") == "joined")["peer_check"]
        pk = bytes(self.key.verify_key)
        h.session = Session.create(
            fixed_key(self.seed, 0), self.room, Settings(6), bytes(32), move_time_s=self.move, relay_key=pk
        )
        c.session = Session.join(fixed_key(self.seed, 1), self.room, bytes([1]) * 32, relay_key=pk)
        rng = random.Random(7)
        for e in self.ends:
            e.bot = make_bot("greedy", random.Random(rng.getrandbits(64)))
            assert e.session is not None
            self.note(e, e.session.start())

    def step(self) -> bool:
        """Deliver what is in transit, or let a bot move (a fifth of a second each)."""
        self.now += 0.2
        if self.pump():
            return True
        for e in self.ends:
            s = e.session
            assert s is not None and e.bot is not None
            if s.my_turn and not e.silent:
                self.note(e, s.play(e.bot.choose(s.view())))
                self.pump()
                return True
        return False

    def tick(self, end: End) -> None:
        """The client's clock: ``time_passed`` at each deadline of the current wait."""
        s = end.session
        assert s is not None
        w = s.wait()
        if w is None:
            return
        if w.epoch != end.epoch:
            end.epoch, end.started = w.epoch, self.now
        d = s.next_deadline()
        if d is not None and self.now - end.started >= d:
            self.note(end, s.time_passed(w.epoch, self.now - end.started))
