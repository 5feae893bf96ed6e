"""The relay as the clock's witness, attacked through a real ``koikoi relay`` process (issue 10)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from adversary_lab import lab

from koikoi.protocol.witness import frame_hash, open_certificate
from koikoi.relay.client import connect

pytestmark = pytest.mark.net  # a real relay process


async def test_silence_is_counted_from_when_the_seat_was_awaited(tmp_path: Path) -> None:
    """Seat 0 sends a message; seat 1 takes 2 s, then answers and at once asks for a certificate of seat
    0's silence. Seat 0 has owed an answer for a moment only; a certificate that counts its silence
    from its own last frame (2 s, the opponent's thinking time) lets a player that thinks for nearly
    the whole move time win on time a moment into the other's turn (both last-frame hashes fit)."""
    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        async with connect(url) as c0, connect(url) as c1:
            t0 = await c0.create_room()
            await c1.join(t0.room)
            await c0.send(b"seat 0's message")
            await trio.sleep(2.0)
            await c1.send(b"seat 1's answer, 2 s later")
            cert = open_certificate(await c1.certify())
    assert cert.silent_seat == 0
    assert cert.last_frame == (frame_hash(b"seat 0's message"), frame_hash(b"seat 1's answer, 2 s later"))
    assert cert.silent_ms < 1000, f"seat 0 owed an answer for a moment, yet the relay certifies {cert.silent_ms} ms"
