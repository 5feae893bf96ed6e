"""A malicious relay between real ``koikoi host``/``join`` processes and a real ``koikoi relay`` (issue 10).

For every fault, both sides: nobody wins unless the transcript proves it, the same outcome on both
sides, both transcripts audit to the same result; a fault the protocol can repair (drop, duplicate,
reorder, delay, garble, replay from an earlier match, junk) ends in a complete match with
byte-identical transcripts. The proxy is :mod:`adversary_relay`; the processes :mod:`adversary_lab`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from adversary_lab import (
    MOVE_TIME,
    Lab,
    assert_complete,
    assert_fair,
    every_copy,
    host_and_join,
    lab,
    outcome,
    play,
    start_host,
    start_join,
)
from adversary_relay import (
    Delay,
    Drop,
    Duplicate,
    Garble,
    Inject,
    Policy,
    Reorder,
    Replace,
    Tell,
    malicious_relay,
    msg_type,
)

from koikoi.protocol.framing import encode
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


async def test_a_frame_delayed_a_little_is_harmless(tmp_path: Path) -> None:
    policy = Policy()
    policy.on(1, 6, [Delay(1.0)])
    async with lab(tmp_path) as lb:
        await play(lb, policy)


async def test_a_dropped_frame_is_sent_again(tmp_path: Path) -> None:
    policy = Policy()
    policy.on(0, 7, [Drop()])
    async with lab(tmp_path) as lb:
        await play(lb, policy)


async def test_a_frame_dropped_every_time_until_late_is_still_repaired(tmp_path: Path) -> None:
    """The relay drops one message and its first two resends: the repair keeps asking."""
    policy = Policy()
    policy.when(every_copy(1, 6), [Drop()], times=3)
    async with lab(tmp_path) as lb:
        await play(lb, policy)


async def test_reordered_frames_are_put_back_in_order(tmp_path: Path) -> None:
    policy = Policy()
    policy.on(1, 7, [Reorder(1)])
    policy.on(0, 5, [Reorder(1)])
    async with lab(tmp_path) as lb:
        await play(lb, policy)


async def test_a_frame_with_a_flipped_signature_byte_is_dropped_and_repaired(tmp_path: Path) -> None:
    policy = Policy()
    policy.on(0, 6, [Garble((-1,))])
    async with lab(tmp_path) as lb:
        await play(lb, policy)


async def test_a_frame_garbled_in_its_header_or_body_is_dropped_and_repaired(tmp_path: Path) -> None:
    policy = Policy()
    policy.on(1, 5, [Garble((0,), 0xFF)])  # not msgpack any more
    policy.on(0, 8, [Garble((20, 21, 22), 0x55)])  # inside the envelope
    async with lab(tmp_path) as lb:
        await play(lb, policy)


async def test_junk_frames_are_dropped(tmp_path: Path) -> None:
    junk = [b"", b"\x00", b"\xc1", os.urandom(200), encode([2, 99, b"", 0]), encode({"t": "frame"}), b"\x91" * 40]
    policy = Policy()
    policy.on(0, 5, [Inject(before=junk)])
    policy.on(1, 8, [Inject(after=junk)])
    async with lab(tmp_path) as lb:
        await play(lb, policy)


async def record_a_match(lb: Lab) -> Policy:
    """A whole match between the same two players (the same keys) through a recording relay."""
    policy = Policy()
    await play(lb, policy, name="earlier")
    return policy


async def test_frames_replayed_from_an_earlier_match_are_dropped(tmp_path: Path) -> None:
    """The same two players played before; the relay replays that match's COMMIT before this one's,
    and that match's moves in the middle of this one: all dropped, the match completes."""
    async with lab(tmp_path) as lb:
        old = await record_a_match(lb)
        policy = Policy()
        old_commit = old.frames_of(0, MsgType.COMMIT)
        assert old_commit
        policy.when(lambda f: f.sender == 0 and msg_type(f.data) == MsgType.COMMIT, [Inject(before=old_commit)])
        policy.on(1, 7, [Inject(before=old.frames_of(1, MsgType.MOVE)[:5])])
        policy.on(0, 8, [Inject(after=old.frames_of(0)[-3:])])
        await play(lb, policy)


async def test_an_earlier_commit_in_place_of_this_ones_is_repaired(tmp_path: Path) -> None:
    async with lab(tmp_path) as lb:
        old = await record_a_match(lb)
        policy = Policy()
        policy.when(lambda f: msg_type(f.data) == MsgType.COMMIT, [Replace(old.frames_of(0, MsgType.COMMIT))])
        await play(lb, policy)


async def test_a_lobby_lie_does_not_change_the_settings_played(tmp_path: Path) -> None:
    """The same lie to a joiner that accepts the room's settings: it plays the real ones, and its
    match_start event says so (the settings bound in both HELLOs, not the lobby's word)."""

    def lie(row: dict[str, Any]) -> dict[str, Any]:
        return {**row, "rounds": 12, "double_at_8": False, "doubling": "No ×2 at 8+", "move_time_s": 120}

    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        policy = Policy(lobby=lie)
        async with malicious_relay(url, policy) as evil:
            host, join, _room, a, b = await host_and_join(lb, url, join_url=evil.url)
            h = await outcome(lb, host, a)
            j = await outcome(lb, join, b)
        assert_complete(h, j)
        assert join.events[0]["settings"]["rounds"] == 12  # the lie was told
        [start] = [e for e in join.events if e["event"] == "match_start"]
        played = {"rounds": 6, "double_at_8": True, "move_time_s": int(MOVE_TIME)}
        assert {k: v for k, v in start["settings"].items() if k not in ("deck", "watchers")} == played, start
        assert h.audit["settings"] == j.audit["settings"]
        assert all(start["settings"][k] == v for k, v in h.audit["settings"].items()), (start, h.audit)


FAKE_CLOSED = {"t": "room_closed", "room": "{room}", "reason": "opponent_left", "message": "your opponent left"}


@pytest.mark.parametrize("reason", ["opponent_left", "match_over"])
async def test_a_fake_room_closed_to_one_side_does_not_lose_it_the_match(tmp_path: Path, reason: str) -> None:
    """The relay (or a man in the middle on ws://) tells only the host that the room closed, with no
    certificate. An unauthenticated notice must not make the host give up its seat: if it left, the
    relay would then witness its real absence and the joiner would win on time. The host takes its
    seat back instead (the relay gives it: the room is there) and the match completes."""
    policy = Policy()
    policy.on(1, 6, [Tell({**FAKE_CLOSED, "reason": reason})])
    async with lab(tmp_path) as lb:
        await play(lb, policy, relay_args=("--grace", "10"))  # longer than the move time (8 s)
    assert any(m.get("t") == "resumed" for seat, m in policy.told if seat == 0)  # it took its seat back


async def test_a_fake_room_closed_to_both_sides_does_not_end_the_match(tmp_path: Path) -> None:
    """The relay tells both players their opponent left, with no certificate: nobody may claim, and
    neither gives up its seat; both take their seats back and the match completes (it used to stop
    both, unfinished, to be resumed by hand)."""
    policy = Policy()
    policy.on(1, 6, [Tell(FAKE_CLOSED, to="both")])
    async with lab(tmp_path) as lb:
        await play(lb, policy, relay_args=("--grace", "10"))
    assert {seat for seat, m in policy.told if m.get("t") == "resumed"} == {0, 1}


# ------------------------------------------------------------------------------------------------ lobby faults


@pytest.mark.parametrize("openly", [False, True])
async def test_a_join_seated_in_another_room_is_caught(tmp_path: Path, openly: bool) -> None:
    """The joiner asks for room X; the relay seats it in room Y (another host's) and says it is in X
    (or, ``openly``, says Y: the joiner must bind the code it typed, not the relay's word).
    Both players of room Y end with room_mismatch and no loser."""
    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        policy = Policy(redirect_openly=openly)
        async with malicious_relay(url, policy) as evil:
            _x_host, x = await start_host(lb, url, tmp_path / "x.koikoi")
            a, b = tmp_path / "host.koikoi", tmp_path / "join.koikoi"
            y_host, y = await start_host(lb, url, a)
            policy.redirect[x] = y
            join = await start_join(lb, x, evil.url, b)
            h = await outcome(lb, y_host, a)
            j = await outcome(lb, join, b)
    assert_fair(h, j)
    for side in (h, j):
        assert side.rc == 1 and side.end["code"] == "room_mismatch", side.summary
        assert side.audit["valid"] is True and side.audit["status"] == "abandoned", side.summary


async def test_a_lobby_that_lies_about_the_settings_is_caught(tmp_path: Path) -> None:
    """The lobby says 12 rounds without doubling; the room is 6 with. A joiner that expects what the
    lobby said (and whose expectation the relay hides from the real relay) ends with settings_mismatch on
    both sides, nobody losing; a joiner that accepts the room's settings plays the real ones."""

    def lie(row: dict[str, Any]) -> dict[str, Any]:
        return {**row, "rounds": 12, "double_at_8": False, "doubling": "No ×2 at 8+"}

    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        policy = Policy(lobby=lie, strip_join_expectations=True)
        async with malicious_relay(url, policy) as evil:
            host, join, _room, a, b = await host_and_join(
                lb, url, join_url=evil.url, join_args=("--rounds", "12", "--no-double")
            )
            h = await outcome(lb, host, a)
            j = await outcome(lb, join, b)
        assert join.events[0]["settings"]["rounds"] == 12  # the lie was told
        assert_fair(h, j)
        for side in (h, j):
            assert side.rc == 1 and side.end["code"] == "settings_mismatch", side.summary
            assert side.audit["valid"] is True and side.audit["status"] == "abandoned", side.summary
