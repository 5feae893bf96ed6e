"""A malicious relay between real ``koikoi host``/``join`` processes and a real ``koikoi relay`` (issue 10).

For every fault, both sides: nobody wins unless the transcript proves it, the same outcome on both
sides, both transcripts audit to the same result; a fault the protocol can repair (drop, duplicate,
reorder, delay, garble, replay from an earlier match, junk) ends in a complete match with
byte-identical transcripts. The proxy is :mod:`adversary_relay`; the processes :mod:`adversary_lab`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from adversary_lab import lab, play
from adversary_relay import Duplicate, Policy, Tell

from koikoi.protocol.messages import MsgType

pytestmark = pytest.mark.net  # real koikoi processes: a relay, a host, a joiner


# ------------------------------------------------------------------------------------------------ a clean relay


async def test_the_proxy_alone_changes_nothing(tmp_path: Path) -> None:
    """With no fault the match completes and the proxy saw every frame of both seats."""
    policy = Policy()
    async with lab(tmp_path) as lb:
        await play(lb, policy)
    senders = {f.sender for f in policy.recorded}
    assert senders == {0, 1}
    assert [f.index for f in policy.recorded if f.sender == 0] == list(
        range(1, 1 + len([f for f in policy.recorded if f.sender == 0]))
    )
    assert policy.frames_of(0, MsgType.HELLO) and policy.frames_of(1, MsgType.HELLO)


# ------------------------------------------------------------------------------------------------ repairable faults


async def test_a_duplicated_frame_is_ignored(tmp_path: Path) -> None:
    policy = Policy()
    policy.on(0, 6, [Duplicate(3)])
    policy.on(1, 5, [Duplicate()])
    async with lab(tmp_path) as lb:
        await play(lb, policy)


async def test_a_fake_peer_away_does_not_stop_the_match(tmp_path: Path) -> None:
    policy = Policy()
    policy.on(1, 6, [Tell({"t": "peer", "event": "away", "grace_ms": 1000})])
    policy.on(0, 6, [Tell({"t": "peer", "event": "away", "grace_ms": 1000})])
    async with lab(tmp_path) as lb:
        await play(lb, policy)
