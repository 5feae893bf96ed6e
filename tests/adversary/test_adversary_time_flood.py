"""A RESEND flood through a malicious relay (issue 10, adversary hole 3): real processes; the proxy pushes 40
RESEND requests a second for the whole line (``RESEND(b"", 0)``) to the host. A session answers a request
with an empty match id with the HELLOs only, at most 4 per tick, so the flood costs little."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from adversary_lab import assert_complete, host_and_join, lab, outcome
from adversary_relay import Policy, malicious_relay

pytestmark = pytest.mark.net  # real koikoi processes: a relay, a host, a joiner


async def test_a_resend_flood_does_not_cost_the_flooded_player_the_match(tmp_path: Path) -> None:
    """From the fifth frame on, the relay (or the joiner, within the relay's 50 frames/s) sends the host
    40 RESEND requests a second, each for the whole line (sequence 0, any match). The host answers a
    bounded number; the match must still complete, nobody losing on time."""
    from koikoi.protocol.messages import resend_frame

    policy = Policy()
    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        async with malicious_relay(url, policy) as evil, trio.open_nursery() as flood:
            host, join, _room, a, b = await host_and_join(lb, evil.url)

            async def resend_flood() -> None:
                while len(policy.recorded) < 5:
                    await trio.sleep(0.05)
                room = policy.recorded[0].room
                while True:
                    evil.push(room, 0, resend_frame(b"", 0))
                    await trio.sleep(1 / 40)

            flood.start_soon(resend_flood)
            h = await outcome(lb, host, a, timeout=90)
            j = await outcome(lb, join, b, timeout=30)
            flood.cancel_scope.cancel()
    assert_complete(h, j)
