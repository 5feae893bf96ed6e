"""The connection to the relay, kept up.

A :class:`Link` opens the seat (create, join or take it back with the ticket), forwards what
arrives into the match's inbox (a trio memory channel) as typed events, and when the connection
drops it reconnects with exponential backoff and takes the seat back (``resume`` with the seat
token), for as long as ``KOIKOI_RECONNECT_TIMEOUT`` allows. It paces what it sends to stay under
the relay's rate limit.

When the relay says the room closed (``room_closed``), the link posts :class:`RoomGone`, closes the
connection and waits: the match loop decides. A notice the match protocol cannot check (any
``room_closed`` without a certificate that ends the match) may be a lie, told to one side only, by
the relay or by anyone on the way (``ws://`` is not authenticated); the loop then calls
:meth:`Link.retake`, and the link connects again and takes the seat back with its token, exactly
as after a lost connection. A room that is really gone refuses that (:class:`GaveUp`, error
``room_closed``); a room that is still there gives the seat back and the match goes on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..relay.client import (
    TRANSIENT,
    Frame,
    PeerNotice,
    RelayClient,
    RelayClosed,
    RelayError,
    ResumeInfo,
    RoomClosed,
    SeatTicket,
    connect,
)
from ..support import TokenBucket
from .output import debug
from .tuning import Tuning

__all__ = [
    "KEEP_TRYING",
    "RETRY",
    "SEND_BURST",
    "SEND_RATE",
    "Acquire",
    "Connected",
    "ConnectionLost",
    "FrameArrived",
    "GaveUp",
    "Link",
    "LinkEvent",
    "PeerChanged",
    "RelayNotice",
    "RoomGone",
    "resume_seat",
]

SEND_RATE = 30.0
"""Frames per second a seat sends at most, sustained (the relay's default limit is 50 messages/s)."""
SEND_BURST = 120
"""Frames a seat may send at once (the relay's default burst is 200)."""
RETRY = TRANSIENT | {"rate_limited", "protocol_error", "too_many_connections", "too_many_attempts"}
"""Relay error codes after which the link connects again (until its reconnect deadline: the per-address limits
may be someone else's doing on a shared address, and the seat is still ours)."""
KEEP_TRYING = frozenset({"too_many_connections", "too_many_attempts", "relay_full"})
"""Refusals by a relay that is alive (per address, or full): the link keeps trying past its deadline. Someone on
the same address (a NAT), or strangers filling the relay, may be holding its connections; while it is refused,
the relay certifies no silence of the seat (``seat_locked_out``), but only until 30 s after the last refusal:
giving up would let the opponent win on time (tests/adversary/test_adversary_attack_lockout_give_up.py,
…_full_relay_give_up.py)."""


# ---------------------------------------------------------------------------- what the link posts


@dataclass(frozen=True, slots=True)
class Connected:
    """The seat is open on a live connection (``info`` is None the first time, else the resume's)."""

    info: ResumeInfo | None


@dataclass(frozen=True, slots=True)
class FrameArrived:
    """A player frame from the other seat (opaque bytes for the session); ``ctl``: the relay delivered it with
    the control flag (its witness counts it as a request to send again)."""

    data: bytes
    ctl: bool = False


@dataclass(frozen=True, slots=True)
class PeerChanged:
    """The other seat joined, went away or came back."""

    event: PeerNotice


@dataclass(frozen=True, slots=True)
class ConnectionLost:
    """The connection dropped; the link is reconnecting."""

    error: RelayError


@dataclass(frozen=True, slots=True)
class RelayNotice:
    """The relay answered an error on a live connection (the link goes on)."""

    error: RelayError


@dataclass(frozen=True, slots=True)
class RoomGone:
    """The relay says it closed the room under this seat (the relay's word alone: it may be false). The
    link has closed the connection and waits for :meth:`Link.retake` or :meth:`Link.stop`."""

    closed: RoomClosed


@dataclass(frozen=True, slots=True)
class GaveUp:
    """The link stopped for good: the relay refused the seat back, or could not be reached in time."""

    error: RelayError


LinkEvent = Connected | FrameArrived | PeerChanged | ConnectionLost | RelayNotice | RoomGone | GaveUp


async def resume_seat(client: RelayClient, ticket: SeatTicket) -> ResumeInfo:
    """Take the seat back, also after this program crashed.

    After a crash the ticket's counters may be behind (frames were sent after the seat file was
    saved) and its resend log is empty: the relay's ``received`` sets the frame number to go on
    from, and whatever the other side never got is sent again by the protocol
    (``Session.unacknowledged``), so nothing is lost."""
    return await client.resume(ticket, renumber_on_gap=True)


Acquire = Callable[[RelayClient], Awaitable[SeatTicket]]


class Link:
    """The connection to the relay, kept up: reconnects with backoff and takes the seat back.

    Posts :data:`LinkEvent` values to the inbox."""

    def __init__(
        self,
        url: str,
        tuning: Tuning,
        inbox: trio.MemorySendChannel[LinkEvent],
        identity: Ed25519PrivateKey | None = None,
    ) -> None:
        self.url = url
        self.identity = identity
        """The player key the seat is bound to at the relay: the one the match's HELLO binds."""
        self.tuning = tuning
        self.inbox = inbox
        self.client: RelayClient | None = None
        self.ticket: SeatTicket | None = None
        self.reconnects = 0
        self.stopped = trio.Event()
        self._stopping = False
        self._scope: trio.CancelScope | None = None
        self._bucket = TokenBucket.full(SEND_RATE, SEND_BURST, trio.current_time())
        self._retake = trio.Event()
        self.relay_key = bytes(32)
        """The relay's key as it announced it on the first connection (the one this seat's HELLO binds)."""
        self.relay_fingerprint = ""

    def stop(self) -> None:
        """Stop serving and close the connection cleanly (the WebSocket closing handshake)."""
        self._stopping = True
        if self._scope is not None:
            self._scope.cancel()

    def retake(self) -> None:
        """After :class:`RoomGone`: connect again and take the seat back with its token (a room that is
        really gone refuses: :class:`GaveUp` with the relay's error, e.g. ``room_closed``)."""
        self._retake.set()

    async def run(
        self, acquire: Acquire, *, task_status: trio.TaskStatus[SeatTicket] = trio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            async with connect(self.url, timeout=self.tuning.connect_s, identity=self.identity) as client:
                self.relay_key, self.relay_fingerprint = client.relay_key, client.relay_fingerprint
                self.ticket = await acquire(client)
                task_status.started(self.ticket)
                how = await self._serve(client, None)
            if how == "room_closed" and await self._told_to_retake():
                how = "lost"
            if how == "lost":
                await self._keep_up()
        finally:
            self.stopped.set()

    async def _told_to_retake(self) -> bool:
        """(The connection is closed.) Wait for :meth:`retake` (True) or :meth:`stop` (False)."""
        with trio.CancelScope() as self._scope:
            if not self._stopping:
                await self._retake.wait()
        self._scope = None
        self._retake = trio.Event()
        return not self._stopping

    async def _serve(self, client: RelayClient, info: ResumeInfo | None) -> str:
        """Forward what arrives until the connection is lost, the room closes, or :meth:`stop`."""
        if self._stopping:
            return "stopped"
        self.client = client
        try:
            with trio.CancelScope() as self._scope:
                await self.inbox.send(Connected(info))
                while True:
                    try:
                        ev = await client.receive()
                    except RoomClosed as e:
                        self.client = None
                        await self.inbox.send(RoomGone(e))
                        return "room_closed"
                    except RelayClosed as e:
                        self.client = None
                        if e.code not in RETRY:  # "replaced": another program took this seat back
                            await self.inbox.send(GaveUp(e))
                            return "closed"
                        await self.inbox.send(ConnectionLost(e))
                        return "lost"
                    except RelayError as e:
                        if e.code == "resume_gap":
                            # the relay wants frames this program no longer has (it was restarted): connect
                            # again, so that the relay says where to number from; the protocol resends them
                            with trio.move_on_after(2):
                                await client.ws.aclose()
                        await self.inbox.send(RelayNotice(e))
                        continue
                    if isinstance(ev, Frame):
                        await self.inbox.send(FrameArrived(ev.data, ev.ctl))
                    else:
                        await self.inbox.send(PeerChanged(ev))
            return "stopped"
        finally:
            self.client = None
            self._scope = None

    async def _keep_up(self) -> None:
        assert self.ticket is not None
        delay = 0.1
        deadline = trio.current_time() + self.tuning.reconnect_s
        last: RelayError = RelayError("connection_lost", "the connection to the relay was lost")
        patience = 2.0  # a dying relay may take a connection and never answer: short tries first
        while not self._stopping:
            with trio.CancelScope() as self._scope:
                debug("reconnecting, delay", delay)
                try:
                    async with connect(
                        self.url, timeout=min(patience, self.tuning.connect_s), identity=self.identity
                    ) as client:
                        info = await resume_seat(client, self.ticket)
                        self.reconnects += 1
                        if client.relay_key != self.relay_key:
                            await self.inbox.send(
                                RelayNotice(
                                    RelayError(
                                        "relay_key_changed",
                                        f"the relay's witness key changed (was {self.relay_fingerprint}, now "
                                        f"{client.relay_fingerprint}): its certificates cannot count in this match",
                                    )
                                )
                            )
                        delay = 0.1
                        self._scope = None
                        how = await self._serve(client, info)
                    if how == "room_closed" and await self._told_to_retake():
                        how = "lost"
                    if how != "lost":
                        return
                    deadline = trio.current_time() + self.tuning.reconnect_s
                    continue
                except RelayError as e:
                    debug("reconnect failed:", e.code, e.message)
                    patience *= 2
                    if e.code not in RETRY:
                        await self.inbox.send(GaveUp(e))
                        return
                    last = e
                    if e.code in KEEP_TRYING:
                        deadline = max(deadline, trio.current_time() + delay + 1)
                if trio.current_time() + delay > deadline:
                    await self.inbox.send(GaveUp(last))
                    return
                await trio.sleep(delay)
                delay = min(delay * 2, 3.0)

    async def send(self, frame: bytes, *, control: bool = False) -> None:
        """Send now if connected; otherwise (or if it fails) the frame is sent again after the reconnect.
        ``control``: an unsigned protocol control frame (RESEND), which the relay's witness ignores."""
        await self._pace()
        client = self.client
        if client is None:
            return
        try:
            await client.send(frame, control=control)
        except RelayError:
            pass

    async def certify(self) -> bytes:
        """The relay's silence certificate for the other seat (RelayError when not connected or refused)."""
        client = self.client
        if client is None:
            raise RelayError("connection_lost", "not connected to the relay")
        return await client.certify()

    async def _pace(self) -> None:
        """Stay under the relay's rate limit (a fast bot could otherwise send faster than it allows)."""
        await trio.sleep(self._bucket.wait_for_one(trio.current_time()))
        self._bucket.take(trio.current_time())
