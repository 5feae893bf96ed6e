"""The deck mode (issue 11) between real ``koikoi host``/``join`` processes through a real relay process:
``--deck shared`` still plays the shared-seed deal, the room's deck is in the JSON events, the lobby and
``audit --json``, and both transcripts are the same bytes. The helpers (processes, the relay, the audit) are
``test_client_net_play``'s."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.net  # starts real koikoi processes and relays


def _helpers() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "koikoi_net_play_helpers", Path(__file__).with_name("test_client_net_play.py")
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


play = _helpers()


async def test_deck_shared_still_plays_the_shared_deal(tmp_path: Path) -> None:
    async with play.lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
        host, room = await play.host_room(
            lb, "alice", "--relay", url, "--deck", "shared", "--bot", "greedy", "--transcript", str(a)
        )
        assert host.events[0]["settings"]["deck"] == "shared"
        # the lobby shows the room's deck
        rc, rooms = await lb.run("x", "rooms", "--json", KOIKOI_RELAY=url)
        assert rc == 0, rooms.stderr
        [row] = json.loads(rooms.lines[0])
        assert row["room"] == room and row["deck"] == "shared"
        rc, join = await lb.run(
            "bob", "join", room, "--relay", url, "--deck", "shared", "--bot", "random", "--json", "--transcript", str(b)
        )
        assert rc == 0, join.stderr
        assert join.events[0]["event"] == "room" and join.events[0]["settings"]["deck"] == "shared"  # the lobby's
        assert await host.finish() == 0, host.stderr
        for p in (host, join):
            [start] = [e for e in p.events if e["event"] == "match_start"]
            assert start["settings"]["deck"] == "shared", start
        play.assert_complete(await lb.audit(a, b), 6, True, deck="shared")
        assert a.read_bytes() == b.read_bytes()


async def test_the_text_mode_names_the_deck_in_the_lobby_the_room_and_the_intro(tmp_path: Path) -> None:
    async with play.lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        host = await lb.start("alice", "host", "--relay", url, "--deck", "shared", "--bot", "greedy")
        created = await host.text("Created room ")
        assert created.endswith(", 120 s a move, shared deck."), created
        room = created.split()[2]
        rc, rooms = await lb.run("x", "rooms", KOIKOI_RELAY=url)
        assert rc == 0, rooms.stderr
        assert "DECK" in rooms.lines[2] and rooms.lines[3].split()[0] == room and " shared " in rooms.lines[3]
        rc, join = await lb.run("bob", "join", room, "--relay", url, "--bot", "random")
        assert rc == 0, join.stderr
        assert await host.finish() == 0, host.stderr
        assert any(line.startswith(f"Room {room} on {url}: ") and "shared deck" in line for line in join.lines)
        for p in (host, join):
            [begins] = [line for line in p.lines if line.startswith("The match begins: ")]
            assert begins.endswith(", shared deck."), begins
            assert any(line.startswith("Shared deck: both programs derive the whole deal") for line in p.lines)
