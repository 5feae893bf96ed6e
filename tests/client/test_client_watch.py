"""``koikoi watch`` in process: a real relay (port 0) forwarding a recorded match between two bots, seat by seat
in the order the match was played, to watchers that follow it with :class:`~koikoi.client.watching.Watcher` —
from the start, late, and after a dropped connection — and end with the audit's verdict of a seat's file; a
room that forbids watchers; and the hiding test's walk over everything a sealed match's watcher holds."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from spectator_world import Oracle, World, _finish, held_bytes, hidden_points, record

from koikoi.client.output import NetError, Output
from koikoi.client.tuning import Tuning
from koikoi.client.watching import JsonSink, PlainSink, Watcher, board_lines
from koikoi.engine.match import Settings
from koikoi.protocol.audit import AuditReport, audit
from koikoi.protocol.messages import private_bytes
from koikoi.protocol.public_board import PublicBoard
from koikoi.protocol.sealed_line import match_secret
from koikoi.protocol.watch_events import WatchEvent
from koikoi.relay.client import Frame, RelayClient, Watching, connect
from koikoi.relay.server import RelayConfig, open_relay
from koikoi.testing import fixed_key, make_pair, witness_key

ROOM = "AE4CA"
TUNING = Tuning(reconnect_s=20.0, connect_s=5.0)


class Recorded:
    """A match between two bots played in memory, its frames in the order the seats sent them."""

    def __init__(self, deck: str, seed: bytes) -> None:
        self.deck = deck
        self.seed = seed
        self.frames: list[tuple[int, bytes]] = []
        settings = Settings(rounds=6)
        pair = make_pair(settings, ("greedy", "random"), seed, room=ROOM, deck=deck, tamper=record(self.frames))
        self.world: World = _finish(f"watch/{deck}", deck, settings, seed, pair, self.frames)
        self.transcript = self.world.transcripts[0]
        self.report = audit(self.transcript)
        assert self.report.valid, self.report.errors
        self.match_id = self.world.match_id

    def secrets(self) -> set[bytes]:
        """What no watcher may hold: both private keys and both match secrets."""
        keys = [fixed_key(self.seed, s) for s in (0, 1)]
        return {private_bytes(k) for k in keys} | {match_secret(k, self.match_id, s) for s, k in enumerate(keys)}


_MATCHES: dict[str, Recorded] = {}


def recorded(deck: str) -> Recorded:
    if deck not in _MATCHES:
        _MATCHES[deck] = Recorded(deck, f"watch/{deck}".encode())
    return _MATCHES[deck]


class Sink:
    """A sink that keeps everything it is told."""

    def __init__(self) -> None:
        self.watched: list[Watching] = []
        self.events: list[WatchEvent] = []
        self.boards: list[PublicBoard] = []
        self.notes: list[str] = []
        self.reports: list[AuditReport] = []

    def watching(self, w: Watching, url: str) -> None:
        self.watched.append(w)

    def told(self, events: list[WatchEvent], board: PublicBoard) -> None:
        self.events += events
        self.boards.append(board)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def finished(self, report: AuditReport, room: str) -> None:
        self.reports.append(report)


@asynccontextmanager
async def relay_for(m: Recorded, **cfg: Any) -> AsyncIterator[str]:
    config = RelayConfig(port=0, chosen_codes_after_s=0, **cfg)
    async with open_relay(config, key=witness_key(m.seed)) as relay:
        yield relay.url


class Seats:
    """The two seats of the room, sending the recorded frames one by one, each read by the other seat before
    the next is sent (so the relay takes them in the order the match was played)."""

    def __init__(self, host: RelayClient, guest: RelayClient) -> None:
        self.clients = (host, guest)
        self.sent = 0

    async def send(self, m: Recorded, upto: int) -> None:
        for seat, frame in m.frames[self.sent : upto]:
            await self.clients[seat].send(frame)
            with trio.fail_after(10):
                while True:
                    got = await self.clients[1 - seat].receive()
                    if isinstance(got, Frame):
                        assert got.data == frame
                        break
        self.sent = max(self.sent, upto)


@asynccontextmanager
async def seats(url: str, m: Recorded, *, watchers: bool | None = None) -> AsyncIterator[Seats]:
    async with connect(url) as host, connect(url) as guest:
        await host.create_room(room=ROOM, deck=m.deck, watchers=watchers)
        await guest.join(ROOM)
        yield Seats(host, guest)


def assert_audit_verdict(got: AuditReport, m: Recorded) -> None:
    want = m.report
    assert got.valid and got.status == want.status
    assert got.result == want.result and got.rounds == want.rounds and got.ending == want.ending
    assert got.match_id == want.match_id == m.match_id.hex() and got.players == want.players


def assert_holds_no_secret(w: Watcher, m: Recorded) -> None:
    """The hiding test's walk (tests/protocol/test_sealed_match.py) over everything the watcher holds: no seat's
    private key or match secret (the spectator's own tests check, card by card, that no hidden card's point is
    held at any moment: tests/adversary/test_spectator_adversary.py)."""
    assert not held_bytes(w) & m.secrets()


async def _watch(url: str, sink: Sink, connector: Callable[..., Any] = connect) -> tuple[Watcher, AuditReport]:
    w = Watcher(url, ROOM, None, sink, TUNING, connector=connector)
    with trio.fail_after(60):
        report = await w.run()
    return w, report


async def watching(
    n: trio.Nursery, url: str, sink: Sink, connector: Callable[..., Any] = connect
) -> list[tuple[Watcher, AuditReport]]:
    """A watcher started in ``n``, once the relay let it in; its watcher and verdict land in the list at its end."""
    result: list[tuple[Watcher, AuditReport]] = []

    async def watch() -> None:
        result.append(await _watch(url, sink, connector))

    n.start_soon(watch)
    with trio.fail_after(10):
        while not sink.watched:
            await trio.sleep(0.01)
    return result


@pytest.mark.parametrize("deck", ["sealed", "shared"])
async def test_a_watcher_from_the_start_ends_with_the_audits_verdict(deck: str) -> None:
    m = recorded(deck)
    async with relay_for(m) as url, seats(url, m, watchers=True) as room:
        sink = Sink()
        async with trio.open_nursery() as n:
            result = await watching(n, url, sink)
            await room.send(m, len(m.frames))
        w, report = result[0]
    assert_audit_verdict(report, m)
    assert sink.reports == [report] and w.reconnects == 0
    assert sink.watched[0].deck == deck and sink.watched[0].watchers == 1
    assert sink.boards[-1].ending is not None
    if deck == "sealed":
        assert_holds_no_secret(w, m)


async def test_a_sealed_watcher_through_the_relay_never_holds_a_hidden_card() -> None:
    """The hiding test's method on the watcher of a real relay, every eighth frame: once it has every frame the
    relay took so far, nothing it holds is the plaintext point of a card in a hand or the deck (the oracle
    knows every card: both seats' secrets), and its board names none."""
    from koikoi.engine.cards import card_from_id

    m = recorded("sealed")
    oracle = Oracle(m.world)
    async with relay_for(m) as url, seats(url, m) as room:
        sink = Sink()
        w = Watcher(url, ROOM, None, sink, TUNING)
        checked = 0
        async with trio.open_nursery() as n:
            n.start_soon(w.run)
            for upto in range(8, len(m.frames) + 1, 8):
                await room.send(m, upto)
                have = len({f for _, f in m.frames[:upto]})
                with trio.fail_after(10):
                    while w.next_i < have:
                        await trio.sleep(0.005)
                assert w.spectator is not None
                hidden = oracle.hidden(w.spectator.referee)
                assert not hidden_points(hidden) & held_bytes(w), upto
                if sink.boards:
                    b = sink.boards[-1]
                    shown = {card_from_id(c) for c in (*b.table, *b.captures[0], *b.captures[1])}
                    assert not any(hidden >> c & 1 for c in shown), upto
                checked += hidden != 0
            await room.send(m, len(m.frames))
    assert checked > 10 and sink.reports and sink.reports[0].status == m.report.status


async def test_a_late_watcher_catches_up_from_the_relays_log() -> None:
    m = recorded("sealed")
    async with relay_for(m) as url, seats(url, m) as room:
        half = len(m.frames) // 2
        await room.send(m, half)
        sink = Sink()
        async with trio.open_nursery() as n:
            result = await watching(n, url, sink)
            # the relay's log so far, what the watcher is sent first: the distinct frames the seats sent
            assert sink.watched[0].frames == len({f for _, f in m.frames[:half]})
            await room.send(m, len(m.frames))
        w, report = result[0]
    assert_audit_verdict(report, m)
    assert_holds_no_secret(w, m)


async def test_a_watcher_whose_connection_drops_takes_it_up_from_the_first_frame_it_lacks() -> None:
    m = recorded("sealed")
    cut_at = len(m.frames) // 3
    dropped: list[int] = []

    @asynccontextmanager
    async def flaky(url: str, **kw: Any) -> AsyncIterator[RelayClient]:
        async with connect(url, **kw) as client:
            if dropped:
                yield client
                return
            async with trio.open_nursery() as n:

                async def cut() -> None:
                    while client.watch_from < cut_at:
                        await trio.sleep(0.005)
                    dropped.append(client.watch_from)
                    await client.ws.aclose()

                n.start_soon(cut)
                yield client
                n.cancel_scope.cancel()

    async with relay_for(m) as url, seats(url, m) as room:
        sink = Sink()
        async with trio.open_nursery() as n:
            result = await watching(n, url, sink, flaky)
            await room.send(m, len(m.frames))
        w, report = result[0]
    assert dropped and w.reconnects >= 1
    assert any("back on the relay" in note for note in sink.notes)
    assert_audit_verdict(report, m)


async def test_a_room_that_forbids_watchers_refuses_them_in_one_line() -> None:
    m = recorded("sealed")
    async with relay_for(m) as url, seats(url, m, watchers=False):
        sink = Sink()
        with pytest.raises(NetError) as e:
            await _watch(url, sink)
    assert e.value.code == "watchers_off" and "watch room" in e.value.message
    assert not sink.watched and not sink.reports


async def test_an_unknown_room_is_named() -> None:
    m = recorded("sealed")
    async with relay_for(m) as url:
        with pytest.raises(NetError) as e:
            await _watch(url, Sink())
    assert e.value.code == "room_not_found" and ROOM in e.value.message


def test_the_plain_and_json_sinks_say_every_event_and_the_verdict() -> None:
    from koikoi.protocol.spectator import Spectator

    m = recorded("sealed")
    spec = Spectator(room=ROOM, relay_key=bytes(witness_key(m.seed).verify_key))
    plain, js = io.StringIO(), io.StringIO()
    ps, jsink = PlainSink(Output("koikoi watch", False, out=plain)), JsonSink(Output("koikoi watch", True, out=js))
    for seat, frame in m.frames:
        evs = spec.feed(seat, frame)
        if evs:
            ps.told(evs, spec.board())
            jsink.told(evs, spec.board())
    rep = spec.report()
    ps.finished(rep, ROOM)
    jsink.finished(rep, ROOM)
    text = plain.getvalue()
    assert "The match starts" in text and "Round 1" in text and f"room {ROOM}" in text
    import json

    lines = [json.loads(x) for x in js.getvalue().splitlines()]
    assert lines[0]["event"] == "started" and lines[-1]["event"] == "verdict"
    assert lines[-1]["status"] == m.report.status and lines[-1]["result"] == m.report.result
    assert lines[-1]["file"] is None
    # the board says no more than both players see: hand and deck as counts
    board = "\n".join(board_lines(spec.board()))
    assert "Seat 0: " in board and " in hand" in board and "Table: " in board
