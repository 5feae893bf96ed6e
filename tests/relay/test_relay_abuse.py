"""Issue 13's attacks against the real relay (in process), from another loopback address (127.0.0.2):
while each runs, an honest pair (127.0.0.1) still creates a room, joins it with the right password
and plays a match through it. The attacks are benchmarks/relay_abuse.py's."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import trio

from koikoi.relay.client import PeerNotice, RelayClient, RelayError, connect
from koikoi.relay.observe import EventLog
from koikoi.relay.server import Relay, RelayConfig, open_relay
from koikoi.testing import load_script


def _load() -> ModuleType:
    return load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "relay_abuse.py", "relay_abuse")


abuse = _load()
ATTACKER = "127.0.0.2"


@asynccontextmanager
async def attacked(name: str, warmup: float = 0.5, **kw: Any) -> AsyncIterator[tuple[Relay, Counter[str]]]:
    """A relay under attack ``name`` for the block (after ``warmup`` seconds of it)."""
    kw.setdefault("port", 0)
    stats: Counter[str] = Counter()
    async with open_relay(RelayConfig(**kw), log=EventLog(io.StringIO())) as relay:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(abuse.ATTACKS[name], relay.url, stats)
            await trio.sleep(warmup)
            yield relay, stats
            nursery.cancel_scope.cancel()


async def honest(relay: Relay, frames: int = 40) -> None:
    seconds = await abuse.honest_match(relay.url, frames, timeout=30)
    assert seconds < 30


def attacker_state(relay: Relay) -> Any:
    return relay.core.addrs.get(ATTACKER)


async def test_room_flood_holds_a_few_rooms_and_the_honest_host_creates() -> None:
    async with attacked("room_flood", warmup=1.0, waiting_grace=0.5) as (relay, stats):
        for _ in range(20):
            waiting = [r for r in relay.rooms.values() if r.creator == ATTACKER]
            assert len(waiting) <= relay.cfg.max_waiting_rooms_per_ip
            await trio.sleep(0.05)
        await honest(relay)
        assert stats["too_many_waiting_rooms"] > 0
        assert relay.metrics.limit_hits_total["rooms"] == 0  # the relay never filled up
        assert relay.metrics.rooms_closed_total.get("abandoned", 0) > 0  # left rooms close after waiting_grace


async def test_password_guessing_locks_out_the_guesser_not_the_room() -> None:
    async with attacked("password_guess") as (relay, stats):
        async with connect(relay.url) as host, connect(relay.url) as guest:
            ticket = await host.create_room(password=abuse.PASSWORD)
            with trio.fail_after(10):
                while stats["wrong_password"] + stats["too_many_attempts"] < relay.cfg.attempts_per_room + 2:
                    await trio.sleep(0.05)
            await guest.join(ticket.room, password=abuse.PASSWORD)
            await host.send(b"hello")
            assert await abuse._next_frame(guest) == b"hello"
        assert stats["wrong_password"] <= relay.cfg.attempts_per_room + relay.cfg.attempts_per_ip
        await honest(relay)


async def test_code_guessing_is_limited_per_address_across_reconnects() -> None:
    async with attacked("code_guess", warmup=1.5) as (relay, stats):
        await honest(relay)
        # within the window, at most attempts_per_ip guesses were answered at all
        assert stats["room_not_found"] <= relay.cfg.attempts_per_ip
        assert stats["too_many_attempts"] > 0
        assert relay.metrics.limit_hits_total["address_attempts"] > 0


async def test_a_handshake_flood_holds_a_few_sockets_and_the_honest_pair_plays() -> None:
    async def flood(url: str, stats: Counter[str]) -> None:
        await abuse.handshake_flood(url, stats, limit=300)

    stats: Counter[str] = Counter()
    async with open_relay(RelayConfig(port=0), log=EventLog(io.StringIO())) as relay:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(flood, relay.url, stats)
            most = 0
            with trio.move_on_after(1.0):
                while True:
                    a = attacker_state(relay)
                    most = max(most, a.handshakes if a is not None else 0)
                    await trio.sleep(0.01)
            await honest(relay)
            nursery.cancel_scope.cancel()
        assert 0 < most <= relay.cfg.max_handshakes_per_ip
        assert stats["closed_by_relay"] > 0
        assert (
            relay.metrics.limit_hits_total["handshakes_per_ip"] + relay.metrics.limit_hits_total["connection_rate"] > 0
        )


async def test_a_scrypt_flood_leaves_others_password_joins_to_them() -> None:
    async with attacked("scrypt_flood", warmup=1.0) as (relay, stats):
        await honest(relay)
        assert stats["too_many_password_checks"] > 0
        assert relay.metrics.limit_hits_total["scrypt"] > 0


async def test_the_33rd_connection_is_told_too_many_connections() -> None:
    # the new-connection rate is not what this test is about: a burst allows all 40 at once
    async with attacked("connection_flood", warmup=2.0, new_connections_burst=100) as (relay, stats):
        a = attacker_state(relay)
        assert a is not None and a.conns == relay.cfg.max_connections_per_ip
        assert stats["too_many_connections"] > 0  # told, not "connection lost"
        assert stats["connection_lost"] == 0
        # and one more, now that the address holds its 32: told too, not cut before the handshake
        with pytest.raises(RelayError) as refused:
            async with connect(relay.url, local_address=ATTACKER, timeout=5):
                pass
        assert refused.value.code == "too_many_connections"
        await honest(relay)


async def _join_when_free(c: RelayClient, room: str) -> None:
    while True:
        try:
            await c.join(room)
            return
        except RelayError as e:
            assert e.code == "room_full"
            await trio.sleep(0.05)


async def test_a_squatter_is_removed_and_the_host_told() -> None:
    async with attacked("squatter", warmup=0.1, first_frame_timeout=0.5) as (relay, stats):
        async with connect(relay.url) as host, connect(relay.url) as guest:
            ticket = await host.create_room()  # public, no password: the squatter sees it and sits down
            await host.send(b"host hello")
            with trio.fail_after(5):
                while stats["squatted"] == 0:
                    await trio.sleep(0.01)
            told = []
            with trio.fail_after(5):
                while "left" not in told:
                    ev = await host.receive()
                    if isinstance(ev, PeerNotice):
                        told.append(ev.event)
            await _join_when_free(guest, ticket.room)
            assert await abuse._next_frame(guest) == b"host hello"  # sent again, from the first frame
            await guest.send(b"guest hello")
            assert await abuse._next_frame(host) == b"guest hello"
        assert relay.metrics.limit_hits_total["first_frame"] >= 1
        await honest(relay)


async def test_a_joiner_that_speaks_in_time_is_not_removed() -> None:
    async with open_relay(RelayConfig(port=0, first_frame_timeout=0.3), log=EventLog(io.StringIO())) as relay:
        async with connect(relay.url) as host, connect(relay.url) as guest:
            ticket = await host.create_room()
            await guest.join(ticket.room)
            await guest.send(b"hi")
            assert await abuse._next_frame(host) == b"hi"
            await trio.sleep(0.6)
            await host.send(b"still here")
            assert await abuse._next_frame(guest) == b"still here"
        assert relay.metrics.limit_hits_total["first_frame"] == 0


async def _holds_at_most(relay: Relay, most: int, seconds: float) -> int:
    """Watch the attacker's rooms for ``seconds``: at most ``most`` at any time; the highest count seen."""
    seen = 0
    with trio.move_on_after(seconds):
        while True:
            held = sum(1 for r in relay.rooms.values() if r.creator == ATTACKER)
            assert held <= most
            seen = max(seen, held)
            await trio.sleep(0.02)
    return seen


async def test_rooms_joined_by_their_creator_are_budgeted_per_address() -> None:
    """A room somebody joined keeps the full grace: one address joining its own rooms, then leaving,
    must not fill the relay (max_rooms 40 here) — it holds max_rooms_per_ip (8), the honest host creates."""
    cfg: dict[str, Any] = {"max_rooms": 40, "max_rooms_per_ip": 8, "new_connections_burst": 200}
    async with attacked("joined_room_flood", warmup=0.5, **cfg) as (relay, stats):
        assert await _holds_at_most(relay, 8, 2.0) == 8
        await honest(relay)
        assert stats["too_many_open_rooms"] > 0
        assert relay.metrics.limit_hits_total["rooms_per_ip"] > 0 and relay.metrics.limit_hits_total["rooms"] == 0


async def test_rooms_rebuilt_from_made_up_tickets_are_budgeted_per_address() -> None:
    cfg: dict[str, Any] = {"max_rooms": 40, "max_rooms_per_ip": 8, "new_connections_burst": 200}
    async with attacked("rebuild_flood", warmup=0.5, **cfg) as (relay, stats):
        assert await _holds_at_most(relay, 8, 2.0) == 8
        await honest(relay)
        assert stats["too_many_open_rooms"] > 0
        assert relay.metrics.limit_hits_total["rooms_per_ip"] > 0 and relay.metrics.limit_hits_total["rooms"] == 0
