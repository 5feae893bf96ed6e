"""``koikoi watch`` for real: a relay process, ``koikoi host`` and ``koikoi join`` with bots on a sealed deck, and
``koikoi watch --json`` / ``--plain`` processes that follow the match and end with the verdict ``koikoi audit``
gives of the host's transcript."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import trio
from adversary_lab import lab, start_host, start_join

pytestmark = pytest.mark.net  # starts real koikoi processes and a relay


async def test_watch_json_and_plain_follow_a_sealed_match_and_end_with_the_audits_verdict(tmp_path: Path) -> None:
    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        a, b = tmp_path / "host.koikoi", tmp_path / "join.koikoi"
        host, room = await start_host(lb, url, a, "--deck", "sealed")
        js = await lb.start("eve", "watch", room, "--relay", url, "--json")
        plain = await lb.start("mallory", "watch", room, "--relay", url, "--plain")
        watching = await js.event("watching")
        assert watching["room"] == room and watching["settings"]["deck"] == "sealed"
        join = await start_join(lb, room, url, b, "--deck", "sealed")
        assert await join.finish(120) == 0, join.stderr
        assert await host.finish(60) == 0, host.stderr
        assert await js.finish(60) == 0, js.stderr
        assert await plain.finish(60) == 0, plain.stderr
        [rep] = await lb.audit(a)
    verdict = js.events[-1]
    assert verdict["event"] == "verdict" and verdict["file"] is None
    for key in ("valid", "status", "result", "rounds", "ending", "match_id", "players", "settings"):
        assert verdict[key] == rep[key], key
    kinds = [e["event"] for e in js.events]
    assert kinds[0] == "watching" and "started" in kinds and "played" in kinds and "round_counted" in kinds
    # every card a watcher is told is one the rules turned face up: never a hand (the events name cards only
    # when they are played, drawn or captured). No event has a field named for a hand; a round that ends on a
    # hand yaku says so in its values ("end": "hand_yaku"), which is not a hand.
    for e in js.events:
        assert not any(re.fullmatch(r"(\w+_)?hands?", key) for key in _keys(e)), e
    text = "\n".join(plain.lines)
    assert f"Watching room {room}" in text and "The match starts" in text
    assert "seat" in text.lower() and "won" in text


async def test_watch_refuses_a_room_without_watchers_and_an_unknown_room_in_one_line(tmp_path: Path) -> None:
    async with lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        host, room = await start_host(lb, url, tmp_path / "host.koikoi", "--deck", "shared")
        p = await lb.start("eve", "watch", room, "--relay", url)
        assert await p.finish(30) == 1
        assert p.stderr.count("\n") == 1 and "watch" in p.stderr and room in p.stderr, p.stderr
        q = await lb.start("eve", "watch", "BBBBB", "--relay", url)
        assert await q.finish(30) == 2 and "not a room code" in q.stderr
        r = await lb.start("eve", "watch", "34679", "--relay", url)
        assert await r.finish(30) == 1 and "no room 34679" in r.stderr, r.stderr
        host.proc.kill()
        with trio.move_on_after(5):
            await host.proc.wait()


def _keys(obj: object) -> list[str]:
    """Every key of every object inside a JSON value."""
    if isinstance(obj, dict):
        return [k for k, v in obj.items() for k in (k, *_keys(v))]
    if isinstance(obj, list):
        return [k for v in obj for k in _keys(v)]
    return []
