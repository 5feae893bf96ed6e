"""A malicious relay for tests: a WebSocket proxy between real ``koikoi`` clients and a real relay.

    policy = Policy()
    policy.on(sender=0, index=7, actions=[Drop()])                 # the creator's 7th frame never arrives
    async with malicious_relay(relay_url, policy) as evil:        # listens on 127.0.0.1, a free port
        ... koikoi host --relay {evil.url} ..., koikoi join ROOM --relay {evil.url} ...

It speaks the relay protocol (spec/relay.md) on both sides: every message is one
canonical msgpack map (:mod:`koikoi.protocol.framing`). It forwards everything
untouched, except what the :class:`Policy` tells it to change. It stops with
the ``async with`` block (its tasks are cancelled and its sockets closed).

**Two levels of fault.** The relay protocol numbers each seat's frames (``n``,
spec/relay.md "Ordering and exactly-once delivery"): a receiver drops any
frame whose ``n`` is not its last ``n`` + 1. That numbering is the *relay's*
business, so a relay that wants a fault to reach the match protocol keeps it
consistent — and so does this proxy:

- The proxy *terminates* the numbering on every hop. Toward a client it numbers
  the frames it actually delivers itself (1, 2, 3, … per seat, across the
  seat's reconnects); toward the relay it numbers what it actually forwards.
  So every fault below is a fault **inside ``d``** — in the sequence of player
  frames the match protocol sees — never a gap in ``n`` that the relay client
  library would silently repair or choke on. A drop removes a ``d``; a
  duplicate delivers the same ``d`` twice under two numbers; a reorder delivers
  ``d`` values out of order under increasing numbers; and so on.
- Reconnects stay consistent: the proxy keeps, per seat (room, seat), a log of
  what it delivered each way. When a client resumes it resends what that client
  lacks and tells the relay it has everything the proxy received; ``received``
  counts in ``resumed`` and ``peer`` events are translated into the client's
  numbering (the proxy, not the client, resends to the relay what it lacks).
- ``n``-level faults (a frame with a wrong ``n``) are out of scope here: they
  can only make a receiver's relay library drop the frame, which is what
  :class:`Drop` does inside ``d`` anyway.

**Where a frame fault applies.** ``hop="down"`` (the default) applies it
between the real relay and the *receiving* client: the relay has already
recorded the frame (its time and hash, for its silence certificates), and the
proxy then misbehaves in delivery — a lying relay. ``hop="up"`` applies it
between the *sending* client and the relay: to the real relay it looks like
the sender's own network (a delayed frame is then real silence).

**Frame faults** (per direction and per frame; see :class:`Policy`):
:class:`Drop`, :class:`Duplicate`, :class:`Reorder` (hold a frame until *k*
more have passed), :class:`Delay`, :class:`Garble` (flip bytes in ``d``),
:class:`Inject` (other ``d`` values before or after, e.g. frames recorded from
an earlier match: :attr:`Policy.recorded`), :class:`Replace`, :class:`Tell`
(a control message to a client: a fake ``room_closed``, a fake ``peer away``).

**Lobby faults**: :attr:`Policy.redirect` seats a ``join`` (and ``info``,
``resume``) for room X in room Y and tells the client it is in X;
:attr:`Policy.lobby` rewrites ``rooms`` rows and ``room`` replies (other
settings); :attr:`Policy.strip_join_expectations` removes the joiner's
expected settings from ``join`` so the real relay cannot refuse a mismatch.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import trio
from trio_websocket import (
    ConnectionClosed,
    WebSocketConnection,
    WebSocketRequest,
    connect_websocket_url,
    serve_websocket,
)

from koikoi.protocol.framing import MAX_FRAME_BYTES, FrameError, decode, encode
from koikoi.protocol.messages import parse_resend

__all__ = [
    "Delay",
    "Drop",
    "Duplicate",
    "FrameInfo",
    "Garble",
    "Inject",
    "MaliciousRelay",
    "Policy",
    "Reorder",
    "Replace",
    "Rule",
    "Tell",
    "malicious_relay",
    "msg_type",
]

Hop = Literal["down", "up"]


# ------------------------------------------------------------------------------------------------ faults


class Action:
    """What the proxy does to one player frame instead of forwarding it (see the subclasses)."""


@dataclass(frozen=True)
class Drop(Action):
    """The frame is never delivered."""


@dataclass(frozen=True)
class Duplicate(Action):
    """The frame is delivered ``copies`` times (each under its own ``n``)."""

    copies: int = 2


@dataclass(frozen=True)
class Delay(Action):
    """The frame is delivered ``seconds`` late (frames behind it are not held: they overtake it)."""

    seconds: float


@dataclass(frozen=True)
class Reorder(Action):
    """The frame is held until ``after`` more frames on the same hop have been delivered, then delivered."""

    after: int = 1


@dataclass(frozen=True)
class Garble(Action):
    """Bytes of ``d`` are flipped (``xor``) at ``offsets`` (negative: from the end; -1 is in the signature)."""

    offsets: tuple[int, ...] = (-1,)
    xor: int = 0x01


@dataclass(frozen=True)
class Inject(Action):
    """Other ``d`` values are delivered ``before`` and ``after`` the frame (which is delivered too)."""

    before: Sequence[bytes] = ()
    after: Sequence[bytes] = ()


@dataclass(frozen=True)
class Replace(Action):
    """The frame is replaced by ``frames`` (none: a drop)."""

    frames: Sequence[bytes] = ()


@dataclass(frozen=True)
class Tell(Action):
    """A control message right after the frame, to the client the frame goes to (``to="receiver"``),
    the one it came from (``"sender"``) or ``"both"``, e.g. ``{"t": "room_closed", ...}`` or
    ``{"t": "peer", "event": "away", "grace_ms": ...}``. ``room`` keys equal to ``"{room}"`` are filled
    in with each client's room code."""

    message: dict[str, Any]
    to: Literal["receiver", "sender", "both"] = "receiver"


@dataclass(frozen=True)
class FrameInfo:
    """One player frame as the proxy sees it on a hop."""

    sender: int  # the seat that sent it
    index: int  # 1, 2, 3, ...: the sender's frame number on this hop (the relay's ``n`` going down)
    data: bytes  # ``d``
    hop: Hop
    room: str
    ctl: bool = False  # sent with the control flag (the proxy passes it on with the frame itself)


@dataclass
class Rule:
    """Apply ``actions`` to the frames ``match`` accepts on ``hop``, at most ``times`` times (None: always)."""

    match: Callable[[FrameInfo], bool]
    actions: list[Action]
    hop: Hop = "down"
    times: int | None = 1
    fired: int = 0


def msg_type(d: bytes) -> int | None:
    """The match protocol's message type of a player frame (``[version, type, ...]``), if it has one."""
    try:
        obj = decode(d)
    except FrameError:
        return None
    if isinstance(obj, list) and len(obj) > 1 and type(obj[1]) is int:
        return obj[1]
    return None


@dataclass
class Policy:
    """The script of faults. Build it before the match; the proxy consults it as frames pass."""

    rules: list[Rule] = field(default_factory=list)
    redirect: dict[str, str] = field(default_factory=dict)
    """``join``/``info``/``resume`` for room X (normalised code) go to room Y; replies name X again
    (unless ``redirect_openly``: then they name Y, the room the client was really seated in)."""
    redirect_openly: bool = False
    lobby: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """Rewrites each ``rooms`` row and each ``room`` reply (the lobby's word on a room's settings)."""
    strip_join_expectations: bool = False
    """Remove ``rounds``/``double_at_8`` (and ``move_time_s``) from ``join``: the relay cannot refuse."""
    recorded: list[FrameInfo] = field(default_factory=list)
    """Every player frame the relay sent down, in order, as received from it (before any fault)."""
    told: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    """Every control message the relay sent to a seat: ``(seat, message)`` (after lobby rewriting)."""

    def on(self, sender: int, index: int, actions: Sequence[Action], *, hop: Hop = "down") -> Rule:
        """Faults for the ``index``-th frame (1-based) ``sender`` sent, on ``hop``."""
        return self.when(lambda f: f.sender == sender and f.index == index, actions, hop=hop)

    def when(
        self, match: Callable[[FrameInfo], bool], actions: Sequence[Action], *, hop: Hop = "down", times: int | None = 1
    ) -> Rule:
        """Faults for the frames ``match`` accepts (the first ``times`` of them)."""
        rule = Rule(match, list(actions), hop, times)
        self.rules.append(rule)
        return rule

    def actions_for(self, info: FrameInfo) -> list[Action]:
        out: list[Action] = []
        for rule in self.rules:
            if rule.hop != info.hop or (rule.times is not None and rule.fired >= rule.times):
                continue
            if rule.match(info):
                rule.fired += 1
                out.extend(rule.actions)
        return out

    def frames_of(self, sender: int, type_: int | None = None) -> list[bytes]:
        """Recorded frames ``sender`` sent (of one message type, if given), in order."""
        return [f.data for f in self.recorded if f.sender == sender and (type_ is None or msg_type(f.data) == type_)]


# ------------------------------------------------------------------------------------------------ the proxy


@dataclass
class SeatLine:
    """A seat's numbering on both hops, kept across its reconnects."""

    room: str  # the room as the relay knows it
    seat: int
    client_seen: int = 0  # the client's highest n the proxy took (client → proxy)
    up_n: int = 0  # what the proxy numbered toward the relay
    up_log: list[bytes] = field(default_factory=list)  # index i: the frame sent as n = i + 1
    relay_seen: int = 0  # the relay's highest n for this seat (relay → proxy)
    down_n: int = 0  # what the proxy numbered toward the client
    down_log: list[bytes] = field(default_factory=list)
    up_held: list[tuple[bytes, int]] = field(default_factory=list)  # (d, frames still to pass)
    down_held: list[tuple[bytes, int]] = field(default_factory=list)
    conn: Conn | None = None


class Conn:
    """One client connection and its own connection to the real relay."""

    def __init__(self, proxy: MaliciousRelay, client: WebSocketConnection, upstream: WebSocketConnection) -> None:
        self.proxy = proxy
        self.client = client
        self.upstream = upstream
        self.line: SeatLine | None = None
        self.shown_room: str | None = None  # the room code the client believes it is in
        # one writer per direction: messages leave in the order they were queued
        self.client_out, self._client_q = trio.open_memory_channel[bytes](math.inf)
        self.relay_out, self._relay_q = trio.open_memory_channel[bytes](math.inf)
        self.client_flushed = trio.Event()
        self.relay_flushed = trio.Event()

    def to_client(self, obj: dict[str, Any] | bytes) -> None:
        with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
            self.client_out.send_nowait(obj if isinstance(obj, bytes) else encode(obj))

    def to_relay(self, obj: dict[str, Any] | bytes) -> None:
        with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
            self.relay_out.send_nowait(obj if isinstance(obj, bytes) else encode(obj))

    async def write(self, which: Literal["client", "relay"]) -> None:
        """Send what is queued for one side, in order, until the queue is closed and empty (or that side
        is gone). It never ends the connection itself: the reader of the other side does."""
        ws, q = (self.client, self._client_q) if which == "client" else (self.upstream, self._relay_q)
        try:
            async for data in q:
                await ws.send_message(data)
        except ConnectionClosed:
            pass
        finally:
            (self.client_flushed if which == "client" else self.relay_flushed).set()

    async def drain_then_end(self, which: Literal["client", "relay"], scope: trio.CancelScope) -> None:
        """One side has gone: send the other everything already queued for it (a client's last frames,
        sent just before it closed, must still reach the relay, as they would without the proxy), then
        end the connection. Bounded: a side that takes nothing for 5 s is dropped."""
        out, flushed = (
            (self.client_out, self.client_flushed) if which == "client" else (self.relay_out, self.relay_flushed)
        )
        out.close()
        with trio.move_on_after(5):
            await flushed.wait()
        scope.cancel()


class MaliciousRelay:
    """The running proxy: ``url`` to give the clients; ``policy`` may be changed while it runs."""

    def __init__(self, relay_url: str, policy: Policy, nursery: trio.Nursery) -> None:
        self.relay_url = relay_url
        self.policy = policy
        self.nursery = nursery
        self.lines: dict[tuple[str, int], SeatLine] = {}
        self.url = ""
        self.connections = 0

    def push(self, room: str, seat: int, d: bytes, hop: Hop = "down") -> bool:
        """Deliver ``d`` now on ``seat``'s ``hop`` (down: to that seat's client, as if from its opponent;
        up: to the relay, as if that seat's client sent it), numbered like any other. False if no such seat."""
        line = self.lines.get((room, seat))
        if line is None:
            return False
        self._deliver(line, hop, d)
        return True

    def rooms(self) -> list[str]:
        """The rooms (as the relay knows them) the proxy has seen seats of."""
        return sorted({room for room, _ in self.lines})

    # -- numbering: every delivery goes through this ----------------------------------------------

    def _deliver(self, line: SeatLine, hop: Hop, d: bytes, ctl: bool | None = None) -> None:
        """``ctl``: the control flag to send it with (None: as an honest client flags a frame it makes up
        itself — a RESEND — which is what the proxy's injected frames are)."""
        flag = parse_resend(d) is not None if ctl is None else ctl
        env: dict[str, Any] = {"t": "frame", "n": 0, "d": d, **({"ctl": True} if flag else {})}
        if hop == "down":
            line.down_n += 1
            line.down_log.append(d)
            if line.conn is not None:
                line.conn.to_client({**env, "n": line.down_n})
        else:
            line.up_n += 1
            line.up_log.append(d)
            if line.conn is not None:
                line.conn.to_relay({**env, "n": line.up_n})
        held = line.down_held if hop == "down" else line.up_held
        if held:
            due = [x for x, left in held if left <= 1]
            held[:] = [(x, left - 1) for x, left in held if left > 1]
            for x in due:
                self._deliver(line, hop, x)

    async def _later(self, seconds: float, line: SeatLine, hop: Hop, d: bytes) -> None:
        await trio.sleep(seconds)
        self._deliver(line, hop, d)

    # -- faults ----------------------------------------------------------------------------------

    def _apply(self, line: SeatLine, info: FrameInfo) -> None:
        actions = self.policy.actions_for(info)
        if not actions:
            self._deliver(line, info.hop, info.data, info.ctl)
            return
        frames = [info.data]
        tells: list[Tell] = []
        held: list[tuple[bytes, int]] = []
        delays: list[tuple[float, bytes]] = []
        for a in actions:
            if isinstance(a, Drop):
                frames = []
            elif isinstance(a, Duplicate):
                frames = [f for f in frames for _ in range(a.copies)]
            elif isinstance(a, Garble):
                frames = [_garble(f, a) for f in frames]
            elif isinstance(a, Inject):
                frames = [*a.before, *frames, *a.after]
            elif isinstance(a, Replace):
                frames = list(a.frames)
            elif isinstance(a, Reorder):
                held += [(f, a.after) for f in frames]
                frames = []
            elif isinstance(a, Delay):
                delays += [(a.seconds, f) for f in frames]
                frames = []
            elif isinstance(a, Tell):
                tells.append(a)
        for f in frames:
            self._deliver(line, info.hop, f, info.ctl if f is info.data else None)
        (line.down_held if info.hop == "down" else line.up_held).extend(held)
        for seconds, f in delays:
            self.nursery.start_soon(self._later, seconds, line, info.hop, f)
        for tell in tells:
            receiver = line if info.hop == "down" else self.lines.get((line.room, 1 - line.seat))
            sender = self.lines.get((line.room, info.sender))
            targets = {"receiver": [receiver], "sender": [sender], "both": [receiver, sender]}[tell.to]
            for target in targets:
                conn = target.conn if target is not None else None
                if conn is not None:
                    room = conn.shown_room or line.room
                    conn.to_client({k: (room if v == "{room}" else v) for k, v in tell.message.items()})

    # -- the two directions of one connection ------------------------------------------------------

    async def _handle(self, request: WebSocketRequest) -> None:
        client = await request.accept()
        self.connections += 1
        async with trio.open_nursery() as nursery:
            try:
                upstream = await connect_websocket_url(
                    nursery, self.relay_url, message_queue_size=64, max_message_size=4 * MAX_FRAME_BYTES
                )
            except Exception:
                await client.aclose()
                return
            conn = Conn(self, client, upstream)
            try:
                async with trio.open_nursery() as pumps:
                    pumps.start_soon(self._pump_up, conn, pumps.cancel_scope)
                    pumps.start_soon(self._pump_down, conn, pumps.cancel_scope)
                    pumps.start_soon(conn.write, "client")
                    pumps.start_soon(conn.write, "relay")
            finally:
                if conn.line is not None and conn.line.conn is conn:
                    conn.line.conn = None
                with trio.CancelScope(shield=True), trio.move_on_after(1):
                    await upstream.aclose()
                    await client.aclose()
                nursery.cancel_scope.cancel()

    async def _pump_up(self, conn: Conn, scope: trio.CancelScope) -> None:
        """Client → relay."""
        try:
            while True:
                raw = await conn.client.get_message()
                obj = _decode(raw)
                if obj is None:
                    conn.to_relay(raw if isinstance(raw, bytes) else raw.encode())  # the relay judges it
                    continue
                self._from_client(conn, obj)
        except ConnectionClosed:
            pass
        await conn.drain_then_end("relay", scope)

    async def _pump_down(self, conn: Conn, scope: trio.CancelScope) -> None:
        """Relay → client."""
        try:
            while True:
                raw = await conn.upstream.get_message()
                obj = _decode(raw)
                if obj is None:
                    conn.to_client(raw if isinstance(raw, bytes) else raw.encode())
                    continue
                self._from_relay(conn, obj)
        except ConnectionClosed:
            pass
        await conn.drain_then_end("client", scope)

    def _room_in(self, code: Any) -> Any:
        if isinstance(code, str):
            norm = code.upper().replace("-", "").replace(" ", "")
            return self.policy.redirect.get(norm, code)
        return code

    def _from_client(self, conn: Conn, obj: dict[str, Any]) -> None:
        t = obj.get("t")
        line = conn.line
        if t == "frame" and line is not None:
            n, d = obj.get("n"), obj.get("d")
            if type(n) is not int or not isinstance(d, bytes):
                conn.to_relay(obj)
                return
            if n <= line.client_seen:
                return  # the client resends what the proxy already took
            line.client_seen = n
            self._apply(line, FrameInfo(line.seat, n, d, "up", line.room, obj.get("ctl") is True))
            return
        if t in ("join", "info", "resume") and "room" in obj:
            shown = obj["room"]
            obj = {**obj, "room": self._room_in(shown)}
            conn.shown_room = shown if obj["room"] != shown and not self.policy.redirect_openly else None
            if t == "join" and self.policy.strip_join_expectations:
                obj = {k: v for k, v in obj.items() if k not in ("rounds", "double_at_8", "move_time_s")}
        if t == "resume":
            line = self.lines.get((str(obj.get("room")), int(obj.get("seat", -1))))
            if line is not None:
                received = obj.get("received")
                have = received if type(received) is int else 0
                line.conn = conn
                conn.line = line
                for i, d in enumerate(line.down_log[have:], start=have + 1):
                    conn.to_client({"t": "frame", "n": i, "d": d})
                obj = {**obj, "received": line.relay_seen}
        conn.to_relay(obj)

    def _from_relay(self, conn: Conn, obj: dict[str, Any]) -> None:
        t = obj.get("t")
        policy = self.policy
        if t == "frame":
            line = conn.line
            n, d = obj.get("n"), obj.get("d")
            if line is None or type(n) is not int or not isinstance(d, bytes):
                conn.to_client(obj)
                return
            if n <= line.relay_seen:
                return  # the relay resends after a resume what the proxy already has
            line.relay_seen = n
            info = FrameInfo(1 - line.seat, n, d, "down", line.room, obj.get("ctl") is True)
            policy.recorded.append(info)
            self._apply(line, info)
            return
        if t in ("created", "joined") and isinstance(obj.get("room"), str) and type(obj.get("seat")) is int:
            line = SeatLine(obj["room"], obj["seat"])
            self.lines[(line.room, line.seat)] = line
            line.conn = conn
            conn.line = line
        if t == "resumed" and conn.line is None and isinstance(obj.get("room"), str):
            key = (obj["room"], int(obj.get("seat", -1)))
            line = self.lines.setdefault(key, SeatLine(*key))
            line.conn = conn
            conn.line = line
        if t in ("resumed", "peer") and type(obj.get("received")) is int and conn.line is not None:
            line = conn.line
            for i, d in enumerate(line.up_log[obj["received"] :], start=obj["received"] + 1):
                conn.to_relay({"t": "frame", "n": i, "d": d})
            obj = {**obj, "received": line.client_seen}
        if t in ("room_closed", "left") and conn.line is not None:
            conn.line.conn = None  # the connection is seatless again
            conn.line = None
        if conn.shown_room is not None and t in ("room", "joined", "resumed", "room_closed", "left", "error"):
            if "room" in obj:
                obj = {**obj, "room": conn.shown_room, **({"display": conn.shown_room} if "display" in obj else {})}
        if policy.lobby is not None and t == "rooms" and isinstance(obj.get("rooms"), list):
            obj = {**obj, "rooms": [policy.lobby(dict(r)) for r in obj["rooms"]]}
        elif policy.lobby is not None and t == "room":
            obj = policy.lobby(dict(obj))
        if t != "relay" and conn.line is not None:
            policy.told.append((conn.line.seat, obj))
        conn.to_client(obj)

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            server = await nursery.start(
                lambda task_status: serve_websocket(
                    self._handle,
                    "127.0.0.1",
                    0,
                    ssl_context=None,
                    handler_nursery=nursery,
                    max_message_size=4 * MAX_FRAME_BYTES,
                    task_status=task_status,
                )
            )
            self.url = f"ws://127.0.0.1:{server.port}"
            task_status.started()


def _decode(raw: bytes | str) -> dict[str, Any] | None:
    if not isinstance(raw, bytes):
        return None
    try:
        obj = decode(raw, max_size=4 * MAX_FRAME_BYTES)
    except FrameError:
        return None
    return obj if isinstance(obj, dict) else None


def _garble(d: bytes, g: Garble) -> bytes:
    b = bytearray(d)
    for off in g.offsets:
        if -len(b) <= off < len(b):
            b[off] ^= g.xor
    return bytes(b)


@contextlib.asynccontextmanager
async def malicious_relay(relay_url: str, policy: Policy | None = None) -> AsyncIterator[MaliciousRelay]:
    """Run the proxy in front of ``relay_url`` for the block; stops (every socket closed) when it ends."""
    async with trio.open_nursery() as nursery:
        proxy = MaliciousRelay(relay_url, policy or Policy(), nursery)
        await nursery.start(proxy.serve)
        try:
            yield proxy
        finally:
            nursery.cancel_scope.cancel()
