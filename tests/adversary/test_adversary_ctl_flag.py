"""The relay's two witness rules the protocol's stall defences rest on, through a real relay (in-process):
the control flag reaches the receiver (so an honest session can answer every frame the witness counts as a
request), and a seat's echo of the other seat's frame, flagged as honest clients send it, is nothing at
all to the witness."""

from __future__ import annotations

import io

import trio
import trio.testing

from koikoi.protocol.witness import frame_hash, open_certificate
from koikoi.relay.client import Frame, PeerNotice, RelayClient, connect
from koikoi.relay.observe import EventLog
from koikoi.relay.server import RelayConfig, open_relay


async def _frame(c: RelayClient) -> Frame:
    with trio.fail_after(5):
        while True:
            ev = await c.receive()
            if isinstance(ev, Frame):
                return ev


async def _joined(c: RelayClient) -> None:
    with trio.fail_after(5):
        while True:
            ev = await c.receive()
            if isinstance(ev, PeerNotice) and ev.event == "joined":
                return


async def test_the_control_flag_reaches_the_receiver_and_an_echo_is_no_frame_of_the_echoer(
    mock_clock: trio.testing.MockClock,
) -> None:
    async with open_relay(RelayConfig(port=0), log=EventLog(io.StringIO())) as relay:
        async with connect(relay.url) as a, connect(relay.url) as b:
            t = await a.create_room(private=True)
            await b.join(t.room)
            await _joined(a)
            await b.send(b"not a resend, flagged", control=True)
            got = await _frame(a)
            assert (got.data, got.ctl) == (b"not a resend, flagged", True)
            await b.send(b"b1")
            got = await _frame(a)
            assert (got.data, got.ctl) == (b"b1", False)
            await a.send(b"a1")
            assert (await _frame(b)).data == b"a1"
            # seat 0 sends seat 1's frame back, flagged (as an honest whole-line answer to a RESEND from 0
            # does): not seat 0's frame
            await a.send(b"b1", control=True)
            assert (await _frame(b)).data == b"b1"
            mock_clock.jump(2)
            c = open_certificate(await b.certify())
            assert c.last_frame == (frame_hash(b"a1"), frame_hash(b"b1")) and c.silent_ms == 2000
            # unflagged, which only a modified client does, it is seat 0's last frame (a claim cites it as
            # junk): whoever sent a frame first, the relay cannot tell who signed it, and after a restart a
            # cheater sending the honest seat's message first must not make the honest re-send nothing
            await a.send(b"b1")
            assert (await _frame(b)).data == b"b1"
            c = open_certificate(await b.certify())
            assert c.last_frame == (frame_hash(b"b1"), frame_hash(b"b1")) and c.silent_ms == 0
