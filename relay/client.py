"""A small trio client for the relay (see ``spec/relay.md``).

    async with connect("ws://127.0.0.1:7878") as relay:
        rooms = await relay.list_rooms()
        ticket = await relay.create_room(rounds=6, double_at_8=True)     # or: await relay.join(code, password=...)
        await relay.send(frame_bytes)                                     # opaque bytes, numbered for you
        event = await relay.receive()                                     # Frame | PeerNotice; raises RoomClosed
        cert = await relay.certify()                                      # the witness's word on the other's silence

A watcher follows a room instead (read-only; spec/relay.md "Watchers")::

    async with connect(url) as relay:
        watching = await relay.watch(code)                                # or: password=..., from_=next index
        seen = await relay.next_seen()                                    # Seen(i, seat, d); raises RoomClosed

After a lost connection, take the seat back with the ticket (nothing is lost:
frames the relay missed are sent again, frames already received are dropped)::

    async with connect(url, identity=ticket.identity) as relay:
        info = await relay.resume(ticket)

(koikoi's own client keeps a seat's connection up, connecting again with backoff: ``koikoi.client.link.Link``.)

On connecting, the relay announces its witness key: ``relay.relay_key`` (32 bytes)
and ``relay.relay_fingerprint``. A URL that reaches something else (a web
server, a proxy without WebSocket support) fails with ``not_a_relay``.

Errors are :class:`RelayError` with a stable ``code`` (``relay_unreachable``,
``not_a_relay``, ``room_not_found``, ``wrong_password``, ``room_full``, ``settings_mismatch``,
``too_many_attempts``, ``bad_token``, ``room_closed``, ...); the room closing
under a seat is :class:`RoomClosed` (``opponent_left``, ``shutdown``, ...); the connection ending is
:class:`RelayClosed` (``connection_lost``, ``shutdown``, ``rate_limited``, ...).
"""

from __future__ import annotations

import contextlib
import ssl
import urllib.parse
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from trio_websocket import (
    ConnectionClosed,
    ConnectionRejected,
    HandshakeError,
    WebSocketConnection,
    connect_websocket_url,
    wrap_client_stream,
)
from wsproto.utilities import LocalProtocolError, RemoteProtocolError

from ..errors import RemoteError
from ..protocol.framing import MAX_FRAME_BYTES, FrameError, decode, encode
from ..protocol.witness import NONCE_BYTES, fingerprint, seat_claim
from ..support import first_of, sole
from .core import CLOSE_CODES

__all__ = [
    "Frame",
    "PeerNotice",
    "RelayClient",
    "RelayClosed",
    "RelayError",
    "ResumeInfo",
    "RoomClosed",
    "RoomInfo",
    "RoomListing",
    "SeatTicket",
    "Seen",
    "Watching",
    "connect",
    "routed_url",
]

LOG_LIMIT = 4096
"""Frames a seat keeps to send again after a reconnect."""

TRANSIENT = frozenset(
    {"relay_unreachable", "connection_lost", "shutdown", "idle_timeout", "slow_consumer", "timeout", "relay_full"}
)
"""Error codes that say only the connection failed: a client may connect again and take its seat back."""


class RelayError(RemoteError):
    """A request the relay refused, or a relay that could not be reached. ``code`` is stable."""

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.extra = extra


class RoomClosed(RelayError):
    """The room closed under this seat; ``code`` says why (``opponent_left`` ...). The connection stays open.

    ``cert`` is the relay's silence certificate for the other seat when it closed as ``opponent_left``
    (hand it to the match session), else None."""

    def __init__(self, code: str, message: str, *, cert: bytes | None = None, **extra: Any) -> None:
        super().__init__(code, message, **extra)
        self.cert = cert


class RelayClosed(RelayError):
    """The connection to the relay ended; ``code`` says why (``connection_lost``, ``shutdown`` ...)."""


@dataclass(frozen=True, slots=True)
class Frame:
    n: int
    data: bytes
    ctl: bool = False
    """Sent with the control flag (a request to send again, as the relay's witness counts it)."""


@dataclass(frozen=True, slots=True)
class Seen:
    """A frame of the room a watcher follows: index ``i`` in the room's log, taken from ``seat`` (0 or 1), the
    player frame ``d`` (as the seat sent it; nothing checked it)."""

    i: int
    seat: int
    d: bytes


@dataclass(frozen=True, slots=True)
class Watching:
    """The relay's answer to ``watch``: the room, its settings, its seats now (``present``, ``away`` or
    ``waiting``), how many distinct frames it took so far (``frames``: the next index), and its watchers now
    (this one included). The log from ``from_`` follows as :class:`Seen` events."""

    room: str
    display: str
    rounds: int | None
    double_at_8: bool | None
    move_time_s: int | None
    deck: str | None
    seats: tuple[str, str]
    frames: int
    watchers: int


@dataclass(frozen=True, slots=True)
class PeerNotice:
    """The other seat ``joined``, went ``away`` (``grace_s`` to come back) or came ``back``."""

    event: str
    grace_s: float | None = None


@dataclass(frozen=True, slots=True)
class RoomListing:
    room: str
    rounds: int
    double_at_8: bool
    doubling: str
    password: bool
    waiting_s: int
    move_time_s: int = 120
    """Seconds per move (0: no clock). Not in :meth:`to_json` (``koikoi rooms --json`` rows are fixed)."""
    deck: str | None = None
    """``sealed`` or ``shared`` (the relay shows ``shared`` for a creator that named none); None from a relay
    that does not carry it."""
    watchers: bool | None = None
    """Whether the room allows watchers (None: a relay that does not say). Not in :meth:`to_json`."""
    watching: int | None = None
    """Connections watching it now (None: a relay that does not say). Not in :meth:`to_json`."""

    def to_json(self) -> dict[str, Any]:
        return {
            "room": self.room,
            "rounds": self.rounds,
            "double_at_8": self.double_at_8,
            "password": self.password,
            "waiting_s": self.waiting_s,
            "deck": self.deck,
        }


@dataclass(frozen=True, slots=True)
class RoomInfo:
    room: str
    display: str
    rounds: int | None
    double_at_8: bool | None
    doubling: str | None
    password: bool
    private: bool
    state: str
    waiting_s: int
    move_time_s: int | None = 120
    deck: str | None = None
    """``sealed`` or ``shared``; None from a relay that does not carry it."""
    watchers: bool | None = None
    """Whether the room allows watchers (None: a relay that does not say)."""
    watching: int | None = None
    """Connections watching it now."""
    archive: bool | None = None
    """Whether this relay keeps a public archive (spec/relay.md "The archive")."""


@dataclass(frozen=True, slots=True)
class ResumeInfo:
    peer: str
    """``present``, ``away`` or ``waiting`` (nobody joined yet)."""
    restored: bool
    """True when the relay had restarted and rebuilt the room from this ticket."""
    own_frames: tuple[bytes, ...] = ()
    """Copies of this seat's recent frames the relay kept (empty: none, or an older relay).
    ``Session.reconnected(own_frames=...)`` takes back its messages its transcript lost (spec/protocol.md §8)."""


@dataclass
class SeatTicket:
    """All a seat holder needs to take the seat back; keep it secret (it holds the token)."""

    relay: str
    room: str
    display: str
    seat: int
    token: str
    rounds: int | None
    double_at_8: bool | None
    peer_check: bytes | None = None
    sent: int = 0
    received: int = 0
    log: deque[tuple[int, bytes, bool]] = field(default_factory=lambda: deque(maxlen=LOG_LIMIT))
    """``(n, data, control)`` of the last frames sent, to send again after a reconnect."""
    move_time_s: int | None = None
    deck: str | None = None
    """The room's deck as the relay said it (for a relay that restarted to show it again)."""
    watchers: bool | None = None
    """Whether the room allows watchers, as the relay said it (for a relay that restarted to rebuild it so)."""
    identity: Ed25519PrivateKey | None = field(default=None, repr=False, compare=False)
    """The player key this seat is bound to at the relay (a resume proves it again)."""
    peer_key: bytes | None = field(default=None, compare=False)
    """The player key the relay says the *other* seat proved (spec/relay.md "Seats and keys"; None: not yet).
    A client compares it with the opponent's HELLO before anything is at stake: a seat proved with another key
    than its HELLO's could never be certified silent."""
    keeps_identity: bool = False
    """True when :attr:`identity` was made for this connection (no key was given to :func:`connect`): then
    :meth:`to_json` saves it with the token, or the seat could never be taken back. A player's own key (the
    one its match's HELLO binds) is never saved here: a program that reads the ticket back passes it to
    :func:`connect`."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (bytes as hex), for saving to disk; see :meth:`from_json`."""
        return {
            "relay": self.relay,
            "room": self.room,
            "display": self.display,
            "seat": self.seat,
            "token": self.token,
            "rounds": self.rounds,
            "double_at_8": self.double_at_8,
            "move_time_s": self.move_time_s,
            "deck": self.deck,
            "watchers": self.watchers,
            "peer_check": self.peer_check.hex() if self.peer_check else None,
            "sent": self.sent,
            "received": self.received,
            "log": [[n, d.hex(), True] if ctl else [n, d.hex()] for n, d, ctl in self.log],
        } | (
            {"identity": self.identity.private_bytes_raw().hex()}
            if self.keeps_identity and self.identity is not None
            else {}
        )

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> SeatTicket:
        t = cls(
            obj["relay"],
            obj["room"],
            obj.get("display", obj["room"]),
            int(obj["seat"]),
            obj["token"],
            obj.get("rounds"),
            obj.get("double_at_8"),
            bytes.fromhex(obj["peer_check"]) if obj.get("peer_check") else None,
            int(obj.get("sent", 0)),
            int(obj.get("received", 0)),
            move_time_s=obj.get("move_time_s"),
            deck=_deck(obj.get("deck")),
            watchers=_flag(obj.get("watchers")),
        )
        if isinstance(obj.get("identity"), str):
            t.identity = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(obj["identity"]))
            t.keeps_identity = True
        t.log.extend((int(e[0]), bytes.fromhex(e[1]), len(e) > 2 and e[2] is True) for e in obj.get("log", []))
        return t


def _deck(value: object) -> str | None:
    """A lobby row's deck: ``sealed`` or ``shared``; None when the relay does not say (an older relay)."""
    return value if value in ("sealed", "shared") else None


def _flag(value: object) -> bool | None:
    """A bool the relay said, or None (it did not say, or said something else)."""
    return value if type(value) is bool else None


def _count(value: object) -> int | None:
    return value if type(value) is int and value >= 0 else None


_REPLIES = frozenset({"created", "joined", "resumed", "rooms", "room", "left", "certificate", "error", "watching"})
_END = object()


class RelayClient:
    """One connection to a relay. Make it with :func:`connect`."""

    def __init__(self, ws: WebSocketConnection, url: str, identity: Ed25519PrivateKey | None = None) -> None:
        self.url = url
        self.ws = ws
        self.identity = identity if identity is not None else Ed25519PrivateKey.generate()
        self._made_identity = identity is None
        """The player key that proves a seat (``create``, ``join``, ``resume``); a fresh one when none was given."""
        self.nonce = b""
        """The nonce the relay announced on this connection (a seat proof signs it)."""
        self.ticket: SeatTicket | None = None
        self.closed_reason: RelayClosed | None = None
        self._replies_send, self._replies = trio.open_memory_channel[dict[str, Any] | object](16)
        self._events_send, self._events = trio.open_memory_channel[Frame | PeerNotice | Seen | RelayError | object](
            8192
        )
        self._request_lock = trio.Lock()
        self._send_lock = trio.Lock()
        self.relay_key = bytes(32)
        """The relay's Ed25519 public key, as it announced it (set before :func:`connect` returns)."""
        self.relay_fingerprint = ""
        """``witness.fingerprint(relay_key)``, computed here (the relay's own word for it is not trusted)."""
        self._announced = trio.Event()
        self._startup_error: RelayError | None = None
        self.watching: str | None = None
        """The room this connection watches (its code), or None."""
        self.watch_from = 0
        """One past the index of the last :class:`Seen` received: the ``from_`` to watch again with after a lost
        connection."""
        self.archive: bool | None = None
        """Whether the relay keeps a public archive, as its last ``rooms`` or ``room`` answer said (None: not asked
        yet, or a relay that does not say)."""

    # ------------------------------------------------------------ requests

    async def _request(self, obj: dict[str, Any], expect: str, timeout: float = 15.0) -> dict[str, Any]:
        async with self._request_lock:
            await self._raw_send(encode(obj))
            try:
                with trio.fail_after(timeout):
                    reply = await self._replies.receive()
            except trio.TooSlowError:
                raise RelayError("timeout", f"the relay did not answer {obj['t']!r} in {timeout:g} s") from None
            except trio.EndOfChannel:
                raise self._lost() from None
            if reply is _END or not isinstance(reply, dict):
                raise self._lost()
            if reply.get("t") == "error":
                extra = {k: v for k, v in reply.items() if k not in ("t", "code", "message", "re")}
                raise RelayError(str(reply.get("code")), str(reply.get("message")), **extra)
            if reply.get("t") != expect:
                raise RelayError("protocol_error", f"expected {expect!r} from the relay, got {reply.get('t')!r}")
            return reply

    def _prove(self, msg: dict[str, Any], identity: Ed25519PrivateKey | None = None) -> dict[str, Any]:
        """``msg`` with the player's key and its seat proof (spec/relay.md, "Seats and keys")."""
        key = identity if identity is not None else self.identity
        msg["key"] = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        msg["proof"] = key.sign(seat_claim(self.relay_key, self.nonce))
        return msg

    def _lost(self) -> RelayClosed:
        return self.closed_reason or RelayClosed("connection_lost", "the connection to the relay was lost")

    async def _raw_send(self, data: bytes) -> None:
        try:
            await self.ws.send_message(data)
        except ConnectionClosed:
            raise self._lost() from None

    async def list_rooms(self) -> list[RoomListing]:
        """Public rooms waiting for a second player, oldest first."""
        reply = await self._request({"t": "list"}, "rooms")
        self.archive = _flag(reply.get("archive"))
        return [
            RoomListing(
                r["room"],
                r["rounds"],
                r["double_at_8"],
                r["doubling"],
                r["password"],
                r["waiting_s"],
                r.get("move_time_s", 120),
                _deck(r.get("deck")),
                _flag(r.get("watchers")),
                _count(r.get("watching")),
            )
            for r in reply["rooms"]
        ]

    async def room_info(self, room: str) -> RoomInfo:
        """A room's settings by code (private rooms too: knowing the code is enough)."""
        r = await self._request({"t": "info", "room": room}, "room")
        self.archive = _flag(r.get("archive"))
        return RoomInfo(
            r["room"],
            r["display"],
            r["rounds"],
            r["double_at_8"],
            r["doubling"],
            r["password"],
            r["private"],
            r["state"],
            r["waiting_s"],
            r.get("move_time_s"),
            _deck(r.get("deck")),
            _flag(r.get("watchers")),
            _count(r.get("watching")),
            self.archive,
        )

    async def create_room(
        self,
        *,
        rounds: int = 6,
        double_at_8: bool = True,
        private: bool = False,
        password: str | None = None,
        move_time_s: int = 120,
        room: str | None = None,
        deck: str = "shared",
        watchers: bool | None = None,
    ) -> SeatTicket:
        """Create a room and take seat 0. ``move_time_s``: seconds per move, 0 for no clock. ``room``: a
        code drawn by the caller (``codes.new_code``), to route by it (:func:`routed_url`); ``room_taken``
        if the relay has it already. ``deck`` (``sealed`` or ``shared``) is for the lobby to show: the
        players' HELLOs bind it, not the relay. ``watchers``: whether the room allows watchers (None: the
        relay's default, true for a sealed deck and false for a shared one); the HELLOs bind it too."""
        msg: dict[str, Any] = {
            "t": "create",
            "rounds": rounds,
            "double_at_8": double_at_8,
            "private": private,
            "move_time_s": move_time_s,
            "deck": deck,
        }
        if room is not None:
            msg["room"] = room
        if password is not None:
            msg["password"] = password
        if watchers is not None:
            msg["watchers"] = watchers
        reply = await self._request(self._prove(msg), "created")
        self.archive = _flag(reply.get("archive"))
        assert self.ticket is not None
        return self.ticket

    async def join(
        self,
        room: str,
        *,
        password: str | None = None,
        rounds: int | None = None,
        double_at_8: bool | None = None,
        move_time_s: int | None = None,
        watchers: bool | None = None,
    ) -> SeatTicket:
        """Join a room (seat 1). ``rounds``/``double_at_8``/``move_time_s``/``watchers``, when given, must match
        the room's (else ``settings_mismatch``, whose ``extra["settings"]`` says what they are)."""
        msg: dict[str, Any] = {"t": "join", "room": room}
        if move_time_s is not None:
            msg["move_time_s"] = move_time_s
        if password is not None:
            msg["password"] = password
        if rounds is not None:
            msg["rounds"] = rounds
        if double_at_8 is not None:
            msg["double_at_8"] = double_at_8
        if watchers is not None:
            msg["watchers"] = watchers
        await self._request(self._prove(msg), "joined")
        assert self.ticket is not None
        return self.ticket

    async def resume(self, ticket: SeatTicket, *, renumber_on_gap: bool = False) -> ResumeInfo:
        """Take a seat back with its ticket; frames the relay missed are sent again.

        A ticket saved before a crash may lack frames the relay never got (``resume_gap``).
        With ``renumber_on_gap`` the seat then numbers on from the relay's count and forgets
        its resend log, leaving a protocol above to send again what the other side lacks;
        without it, the ``resume_gap`` error is raised.
        """
        msg: dict[str, Any] = {
            "t": "resume",
            "room": ticket.room,
            "seat": ticket.seat,
            "token": ticket.token,
            "received": ticket.received,
        }
        if ticket.peer_check is not None:
            msg["peer_check"] = ticket.peer_check
            msg["settings"] = {
                "rounds": ticket.rounds,
                "double_at_8": ticket.double_at_8,
                "move_time_s": ticket.move_time_s,
                "deck": ticket.deck,
                "watchers": ticket.watchers,
            }
        self.ticket = ticket
        if ticket.identity is None:
            ticket.identity = self.identity
        try:
            r = await self._request(self._prove(msg, ticket.identity), "resumed")
        except BaseException:
            self.ticket = None
            raise
        received = r.get("received")
        if type(received) is int:
            if received > ticket.sent:
                # this program restarted from a stale ticket: the relay has more of our frames than we
                # remember sending; number on from there (a protocol above resends what the peer lacks)
                ticket.sent = received
            else:
                try:
                    await self._resend(received)
                except RelayError as e:
                    if e.code != "resume_gap" or not renumber_on_gap:
                        raise
                    ticket.sent = received
                    ticket.log.clear()
        if type(r.get("peer_key")) is bytes:
            ticket.peer_key = r["peer_key"]
        kept = r.get("frames")
        own = tuple(f for f in kept if isinstance(f, bytes)) if isinstance(kept, list) else ()
        return ResumeInfo(r["peer"], r["restored"], own)

    async def certify(self) -> bytes:
        """The relay's signed silence certificate for the other seat (``koikoi.protocol.witness``).

        Raises :class:`RelayError`: ``not_seated``, ``no_opponent`` (nobody joined yet),
        ``too_many_requests`` (more than about one a second for this seat)."""
        reply = await self._request({"t": "certify"}, "certificate")
        cert = reply.get("cert")
        if type(cert) is not bytes:
            raise RelayError("protocol_error", "the relay's certificate reply carries no certificate")
        return cert

    async def leave(self, *, done: bool = False) -> None:
        """Give the seat up. In a room both seats took the relay cannot know whether the match is over (``done``
        is this side's word alone): the seat goes away as after a lost connection, the other seat is told
        ``peer away``, and the grace period ends in ``opponent_left`` with a certificate — unless the other seat
        leaves with ``done`` too, which closes the room (``match_over``). A room nobody joined closes at once."""
        await self._request({"t": "leave", "done": done}, "left")
        self.ticket = None
        self.watching = None

    # ------------------------------------------------------------ watching

    async def watch(self, room: str, password: str | None = None, from_: int = 0) -> Watching:
        """Watch ``room`` (read-only, no seat, no key): the relay's answer, then the room's log from index
        ``from_`` and every frame a seat sends afterwards, each a :class:`Seen` (:meth:`next_seen`). After a lost
        connection, watch again with ``from_=`` :attr:`watch_from`. :meth:`leave` stops watching; the room's
        close is :class:`RoomClosed` as for a seat.

        Raises :class:`RelayError`: ``room_not_found``, ``wrong_password`` (both count as failed attempts),
        ``watchers_off``, ``too_many_watchers``, ``too_many_watching``, ``already_seated``, ``watching``."""
        msg: dict[str, Any] = {"t": "watch", "room": room}
        if password is not None:
            msg["password"] = password
        if from_:
            msg["from"] = from_
        self.watch_from = from_
        r = await self._request(msg, "watching")
        st = r.get("settings")
        st = st if type(st) is dict else {}
        seats = r.get("seats")
        pair = tuple(str(x) for x in seats) if type(seats) is list and len(seats) == 2 else ("away", "away")
        return Watching(
            str(r.get("room")),
            str(r.get("display", r.get("room"))),
            st.get("rounds") if type(st.get("rounds")) is int else None,
            _flag(st.get("double_at_8")),
            st.get("move_time_s") if type(st.get("move_time_s")) is int else None,
            _deck(st.get("deck")),
            (pair[0], pair[1]),
            _count(r.get("frames")) or 0,
            _count(r.get("watchers")) or 0,
        )

    async def next_seen(self) -> Seen:
        """The next frame of the room this connection watches. Raises :class:`RoomClosed` (the room closed:
        the connection stays, back in the lobby) or :class:`RelayClosed`."""
        while True:
            item = await self._next_event()
            if isinstance(item, Seen):
                return item

    # -------------------------------------------------------------- frames

    async def send(self, data: bytes, *, control: bool = False) -> None:
        """Send one opaque frame to the other seat (kept, to send again after a reconnect).

        ``control=True`` marks a frame the relay's witness must ignore (an unsigned protocol control
        frame such as a resend request): it is forwarded like any other but is neither the seat's
        "last frame" in a certificate nor a sign of life that resets its silence."""
        ticket = self.ticket
        if ticket is None:
            raise RelayError("not_seated", "create, join or resume a room first")
        if len(data) > MAX_FRAME_BYTES:
            raise RelayError("oversized_frame", f"a frame is at most {MAX_FRAME_BYTES} bytes")
        async with self._send_lock:
            n = ticket.sent + 1
            ticket.log.append((n, data, control))
            ticket.sent = n
            await self._raw_send(_envelope(n, data, control))

    async def _resend(self, received: int) -> None:
        ticket = self.ticket
        if ticket is None:
            return
        async with self._send_lock:
            if received >= ticket.sent:
                return
            if not ticket.log or ticket.log[0][0] > received + 1:
                raise RelayError("resume_gap", "frames the other seat never got are no longer kept")
            for n, data, control in list(ticket.log):
                if n > received:
                    await self._raw_send(_envelope(n, data, control))

    async def receive(self) -> Frame | PeerNotice:
        """The next frame or peer event of this connection's seat. Raises :class:`RoomClosed` or
        :class:`RelayClosed` (and ``watching`` on a connection that watches: read it with :meth:`next_seen`)."""
        item = await self._next_event()
        if isinstance(item, Seen):
            raise RelayError("watching", "this connection watches a room: read its frames with next_seen()")
        return item

    async def _next_event(self) -> Frame | PeerNotice | Seen:
        try:
            item = await self._events.receive()
        except trio.EndOfChannel:
            raise self._lost() from None
        if item is _END:
            raise self._lost()
        if isinstance(item, RelayError):
            raise item
        assert isinstance(item, (Frame, PeerNotice, Seen))
        return item

    # ---------------------------------------------------------------- pump

    async def _pump(self) -> None:
        try:
            while True:
                try:
                    msg = await self.ws.get_message()
                except ConnectionClosed as e:
                    if self.closed_reason is None:
                        self.closed_reason = _closed(e)
                    return
                obj: Any = None
                if isinstance(msg, bytes):
                    try:
                        obj = decode(msg, max_size=4 * MAX_FRAME_BYTES)  # as the WebSocket (resumed holds copies)
                    except FrameError:
                        obj = None
                if not self._announced.is_set():
                    self._on_first(obj)
                    if self._startup_error is not None:
                        return
                    continue
                if type(obj) is not dict:
                    continue
                t = obj.get("t")
                if t == "frame":
                    ticket = self.ticket
                    n = obj.get("n")
                    if ticket is None or type(n) is not int or n <= ticket.received:
                        continue  # a duplicate after a resume
                    # (a gap: frames the relay will not send again, past how far back a resume may rewind;
                    # the match protocol above asks for what it lacks)
                    ticket.received = n
                    await self._events_send.send(Frame(n, obj["d"], obj.get("ctl") is True))
                elif t == "seen":
                    i, seat, d = obj.get("i"), obj.get("seat"), obj.get("d")
                    if self.watching is None or type(i) is not int or i < 0 or type(d) is not bytes:
                        continue  # (nothing a relay sends may crash us: a malformed one is dropped)
                    if type(seat) is not int or seat not in (0, 1):
                        continue
                    self.watch_from = i + 1
                    await self._events_send.send(Seen(i, seat, d))
                elif t in _REPLIES:
                    if t == "watching" and type(obj.get("room")) is str:
                        self.watching = obj["room"]  # (first, so that the frames right behind find it)
                    if t in ("created", "joined"):
                        # seat first, so that frames right behind the reply find it
                        st = obj["settings"]
                        self.ticket = SeatTicket(
                            self.url,
                            obj["room"],
                            obj["display"],
                            obj["seat"],
                            obj["token"],
                            st["rounds"],
                            st["double_at_8"],
                            peer_check=obj.get("peer_check"),
                            move_time_s=st.get("move_time_s"),
                            deck=_deck(st.get("deck")),
                            watchers=_flag(st.get("watchers")),
                            identity=self.identity,
                            keeps_identity=self._made_identity,
                            peer_key=obj["peer_key"] if type(obj.get("peer_key")) is bytes else None,
                        )
                    await self._replies_send.send(obj)
                elif t == "peer":
                    event = str(obj.get("event"))
                    if self.ticket is not None and type(obj.get("peer_check")) is bytes:
                        self.ticket.peer_check = obj["peer_check"]
                    if event == "joined" and self.ticket is not None:
                        # a new joiner numbers its frames from 1: whatever an earlier holder of the seat sent (one
                        # removed for silence) must not make its frames look like duplicates
                        self.ticket.received = 0
                    if self.ticket is not None and type(obj.get("peer_key")) is bytes:
                        self.ticket.peer_key = obj["peer_key"]
                    if type(obj.get("received")) is int:
                        if self.ticket is not None and obj["received"] > self.ticket.sent:
                            self.ticket.sent = obj["received"]  # a stale ticket after a restart, as in resume()
                        try:
                            await self._resend(obj["received"])
                        except RelayError as e:
                            await self._events_send.send(e)
                    grace = obj.get("grace_ms")
                    await self._events_send.send(PeerNotice(event, grace / 1000 if type(grace) is int else None))
                elif t == "room_closed":
                    self.ticket = None
                    self.watching = None
                    reason = str(obj.get("reason"))
                    cert = obj.get("cert")
                    await self._events_send.send(
                        RoomClosed(reason, str(obj.get("message", reason)), cert=cert if type(cert) is bytes else None)
                    )
                elif t == "bye":
                    reason = str(obj.get("reason"))
                    self.closed_reason = RelayClosed(reason, str(obj.get("message", reason)))
        finally:
            if not self._announced.is_set():
                if self._startup_error is None:
                    self._startup_error = self._lost()
                self._announced.set()
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                self._events_send.send_nowait(_END)
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, trio.WouldBlock):
                self._replies_send.send_nowait(_END)

    def _on_first(self, obj: Any) -> None:
        """The relay's first message: its announcement (or a ``bye`` saying why it will not serve us)."""
        t = obj.get("t") if type(obj) is dict else None
        key = obj.get("key") if t == "relay" else None
        nonce = obj.get("nonce") if t == "relay" else None
        if type(key) is bytes and len(key) == 32 and type(nonce) is bytes and len(nonce) == NONCE_BYTES:
            self.relay_key = key
            self.relay_fingerprint = fingerprint(key)
            self.nonce = nonce
        elif t == "relay" and type(key) is bytes and len(key) == 32:
            self._startup_error = RelayError(
                "not_a_relay", f"{self.url} is an older koikoi relay: it gives no nonce to prove a seat with"
            )
        elif t == "bye":
            reason = str(obj.get("reason"))
            self.closed_reason = RelayClosed(reason, str(obj.get("message", reason)))
            self._startup_error = self.closed_reason
        else:
            self._startup_error = RelayError(
                "not_a_relay", f"{self.url} is a WebSocket server but not a koikoi relay (it did not announce itself)"
            )
        self._announced.set()


def _closed(e: ConnectionClosed) -> RelayClosed:
    """The connection ended without the relay's ``bye``: its close reason when it is one of the relay's codes
    (spec/relay.md "Connection close reasons"), else a code by the WebSocket close code — never a library's
    text as a code (scripts read ``code``)."""
    reason = e.reason.reason if e.reason is not None and e.reason.reason else ""
    close_code = e.reason.code if e.reason is not None else None
    if reason in CLOSE_CODES and reason != "bye":
        return RelayClosed(reason, "the connection to the relay ended")
    if close_code == CLOSE_CODES["oversized_frame"]:
        detail = f" ({reason})" if reason else ""
        return RelayClosed("oversized_frame", f"a message was over the relay's size limit{detail}")
    # (no reason, "bye" — the relay's process ended — or a text the relay never sends)
    return RelayClosed("connection_lost", "the connection to the relay ended")


def routed_url(url: str, room: str) -> str:
    """``url`` with ``room=CODE`` in its query: a proxy in front of several relays routes on it
    (spec/relay.md, "More than one relay"); a single relay ignores it."""
    u = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(u.query, keep_blank_values=True)
    query = [(k, v) for k, v in query if k != "room"] + [("room", room)]
    return urllib.parse.urlunsplit((u.scheme, u.netloc, u.path or "/", urllib.parse.urlencode(query), u.fragment))


def _envelope(n: int, data: bytes, control: bool) -> bytes:
    if control:
        return encode({"t": "frame", "n": n, "d": data, "ctl": True})
    return encode({"t": "frame", "n": n, "d": data})


def _unreachable(url: str, e: BaseException) -> RelayError:
    """One line for a failed connection attempt: never an HTML page, never an exception's repr."""
    if isinstance(e, ConnectionRejected):
        return RelayError(
            "not_a_relay",
            f"{url} is not a koikoi relay: it answered HTTP {e.status_code} instead of a WebSocket "
            "(a wrong port, or a proxy without WebSocket support?)",
        )
    if isinstance(e, RemoteProtocolError):
        return RelayError("not_a_relay", f"{url} is not a koikoi relay: it does not speak WebSocket over HTTP")
    if isinstance(e, trio.TooSlowError):
        return RelayError("relay_unreachable", f"cannot reach the relay at {url}: no answer")
    if isinstance(e, OSError):
        why = e.strerror or (str(e).splitlines()[0][:200] if str(e) else "the connection failed")
        return RelayError("relay_unreachable", f"cannot reach the relay at {url}: {why}")
    text = str(e).splitlines()[0][:200] if str(e) else e.__class__.__name__
    return RelayError("relay_unreachable", f"cannot reach the relay at {url}: {text}")


def _not_tls(url: str, why: str) -> RelayError:
    """A ``wss://`` URL whose server does not do TLS (a relay without it, most likely), in one line."""
    plain = "ws://" + url[len("wss://") :]
    return RelayError(
        "relay_unreachable",
        f"{url} does not speak TLS ({why}): a relay without TLS is {plain}; wss:// needs TLS in front of it "
        "(see the README)",
        tls=True,
    )


async def _open_tls(nursery: trio.Nursery, url: str, tls: list[bool]) -> WebSocketConnection:
    """A ``wss://`` connection, its TLS handshake done first: a server that does not speak TLS is named as
    such (trio-websocket would wait out the timeout). ``tls`` gets True once the TCP connection is up."""
    u = urllib.parse.urlsplit(url)
    if not u.hostname:
        raise ValueError("URL host must not be None")
    port = u.port or 443
    stream = await trio.open_ssl_over_tcp_stream(
        u.hostname, port, ssl_context=ssl.create_default_context(), https_compatible=True
    )
    tls.append(True)
    try:
        await stream.do_handshake()
    except trio.BrokenResourceError as e:
        await trio.aclose_forcefully(stream)
        cause = e.__cause__
        if isinstance(cause, ssl.SSLCertVerificationError):
            raise RelayError(
                "relay_unreachable",
                f"cannot reach the relay at {url}: its TLS certificate is not valid ({cause.verify_message})",
                tls=True,
            ) from None
        reason = getattr(cause, "reason", None) or (cause.__class__.__name__ if cause is not None else "closed")
        raise _not_tls(url, f"TLS failed: {str(reason).lower().replace('_', ' ')}") from None
    host = u.hostname if ":" not in u.hostname else f"[{u.hostname}]"
    resource = (u.path or "/") + (f"?{u.query}" if u.query else "")
    return await wrap_client_stream(
        nursery,
        stream,
        host if port == 443 else f"{host}:{port}",
        resource,
        message_queue_size=64,
        max_message_size=4 * MAX_FRAME_BYTES,
    )


async def _open_from(nursery: trio.Nursery, url: str, local_address: str) -> WebSocketConnection:
    """A ``ws://`` connection whose TCP socket is bound to ``local_address`` (a multi-homed host; tests
    that play several addresses on loopback)."""
    u = urllib.parse.urlsplit(url)
    if u.scheme != "ws" or not u.hostname:
        raise ValueError("local_address needs a ws:// URL")
    stream = await trio.open_tcp_stream(u.hostname, u.port or 80, local_address=local_address)
    resource = (u.path or "/") + (f"?{u.query}" if u.query else "")
    return await wrap_client_stream(
        nursery, stream, u.netloc, resource, message_queue_size=64, max_message_size=4 * MAX_FRAME_BYTES
    )


def without_close_noise(eg: BaseExceptionGroup) -> BaseExceptionGroup | None:
    """``eg`` without the LocalProtocolErrors in it, however deeply nested (None: nothing else): trio-websocket
    may fail to answer a ping while the connection closes (``Pong … cannot be sent in state LOCAL_CLOSING``),
    harmless at that point. (``split`` by type descends into nested groups; a ``subgroup`` predicate is asked of
    each group first, and a group is never a LocalProtocolError.)"""
    _noise, rest = eg.split(LocalProtocolError)
    return rest


@contextlib.asynccontextmanager
async def connect(
    url: str,
    *,
    timeout: float = 10.0,
    local_address: str | None = None,
    identity: Ed25519PrivateKey | None = None,
) -> AsyncIterator[RelayClient]:
    """Open a connection to the relay at ``url`` (``ws://`` or ``wss://``) and read its announcement.

    ``relay_unreachable`` if it can't, ``not_a_relay`` if something else answers there, or the
    relay's refusal (``too_many_connections``, ``relay_full``, ``shutdown``). ``local_address``
    binds the connection's source address (``ws://`` only). ``identity``: the player key a seat taken on
    this connection is bound to (the one the match's HELLO binds; a fresh one when None)."""
    opened = False
    try:
        async with trio.open_nursery() as nursery:
            tls: list[bool] = []  # (set once the TCP connection of a wss:// URL is up: its TLS handshake is next)
            try:
                with trio.fail_after(timeout):
                    if local_address is not None:
                        ws = await _open_from(nursery, url, local_address)
                    elif url.lower().startswith("wss://"):
                        ws = await _open_tls(nursery, url, tls)
                    else:
                        ws = await connect_websocket_url(
                            nursery, url, message_queue_size=64, max_message_size=4 * MAX_FRAME_BYTES
                        )
            except trio.TooSlowError:
                if tls == [True]:
                    raise _not_tls(url, f"no TLS answer within {timeout:g} s") from None
                raise _unreachable(url, trio.TooSlowError()) from None
            except (OSError, HandshakeError, RemoteProtocolError, ValueError) as e:
                raise _unreachable(url, e) from None
            opened = True
            client = RelayClient(ws, url, identity)
            nursery.start_soon(client._pump)
            try:
                with trio.fail_after(timeout):
                    await client._announced.wait()
            except trio.TooSlowError:
                client._startup_error = RelayError(
                    "not_a_relay", f"{url} did not announce itself as a koikoi relay within {timeout:g} s"
                )
            startup_error = client._startup_error
            if startup_error is None:
                try:
                    yield client
                finally:
                    with trio.CancelScope(shield=True), trio.move_on_after(2):
                        await ws.aclose()
                    nursery.cancel_scope.cancel()
            else:
                # leave the nursery first, then raise: a caller cancelled meanwhile sees Cancelled alone,
                # not a group of Cancelled and the refusal that its `except RelayError` would miss
                with trio.CancelScope(shield=True), trio.move_on_after(2):
                    await ws.aclose()
                nursery.cancel_scope.cancel()
        if startup_error is not None:
            raise startup_error
    except BaseExceptionGroup as eg:
        rest = without_close_noise(eg)
        if rest is not None:
            cancelled = first_of(rest, trio.Cancelled)
            if cancelled is not None:
                # the caller's scope is being cancelled: what else failed on the way out goes with it
                raise cancelled from None
            # a web server's answer to the handshake surfaces from trio-websocket's reader task
            if not opened:
                refused = first_of(rest, (ConnectionRejected, RemoteProtocolError))
                if refused is not None:
                    raise _unreachable(url, refused) from None
            raise sole(rest) from None
