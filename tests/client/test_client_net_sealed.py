"""The deck mode (issue 11) between real ``koikoi host``/``join`` processes through a real relay process:
whole sealed matches (the default) audited on both sides with byte-identical transcripts; kill -9 mid-round
and ``koikoi resume`` finishing the same match with no round secret on disk before its disclosure; a joiner
expecting ``--deck shared`` in a sealed room, and a joiner without ``--deck`` (sealed expected) in a shared
room, refused ``settings_mismatch`` before the handshake, the host's room staying open for the next joiner;
``--deck shared`` still playing the shared-seed deal. The deck is in the JSON events, the lobby and
``audit --json``. The helpers (processes, the relay, the audit) are
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
        rc, join = await lb.run("bob", "join", room, "--relay", url, "--deck", "shared", "--bot", "random")
        assert rc == 0, join.stderr
        assert await host.finish() == 0, host.stderr
        assert any(line.startswith(f"Room {room} on {url}: ") and "shared deck" in line for line in join.lines)
        for p in (host, join):
            [begins] = [line for line in p.lines if line.startswith("The match begins: ")]
            assert begins.endswith(", shared deck."), begins
            assert any(line.startswith("Shared deck: both programs derive the whole deal") for line in p.lines)


# ------------------------------------------------------------------------------------- sealed (the default)


def _secrets_of(tmp: Path, who: str, transcript: Path) -> tuple[bytes, list[tuple[int, bytes]]]:
    """``who``'s sealed match secret in the match of ``transcript``, and every round secret it could derive
    ``(round, secret)`` (rounds 0–13, deal attempts 0–3), from its key file and the session id."""
    from koikoi.client.identity import load_or_create
    from koikoi.client.transcript_file import read_for_resume
    from koikoi.protocol.sealed import round_secret
    from koikoi.protocol.sealed_line import match_secret
    from koikoi.protocol.session import Session

    key, created = load_or_create(tmp / who / "config" / "identity.key")
    assert not created
    s = Session.from_transcript(key, read_for_resume(transcript).frames)
    assert s.match_id is not None
    ms = match_secret(key, s.match_id, s.seat)
    return ms, [(r, round_secret(ms, r, a)) for r in range(14) for a in range(4)]


def _holds(blob: bytes, secret: bytes) -> bool:
    return secret in blob or secret.hex().encode() in blob


async def test_a_sealed_match_between_real_processes_is_audited_on_both_sides(tmp_path: Path) -> None:
    async with play.lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
        host, room = await play.host_room(lb, "alice", "--relay", url, "--bot", "greedy", "--transcript", str(a))
        assert host.events[0]["settings"]["deck"] == "sealed"  # the default
        rc, rooms = await lb.run("x", "rooms", "--json", KOIKOI_RELAY=url)
        assert rc == 0, rooms.stderr
        [row] = json.loads(rooms.lines[0])
        assert row["room"] == room and row["deck"] == "sealed"
        rc, join = await lb.run(
            "bob", "join", room, "--relay", url, "--deck", "sealed", "--bot", "random", "--json", "--transcript", str(b)
        )
        assert rc == 0, join.stderr
        assert await host.finish() == 0, host.stderr
        for p in (host, join):
            [start] = [e for e in p.events if e["event"] == "match_start"]
            assert start["settings"]["deck"] == "sealed", start
            assert p.events[-1]["event"] == "match_end" and p.events[-1]["status"] == "complete"
        reports = await lb.audit(a, b)
        play.assert_complete(reports, 6, True, deck="sealed")
        assert a.read_bytes() == b.read_bytes()
        # every round's secrets were disclosed, and neither match secret was ever written
        blob = a.read_bytes()
        rounds = len(reports[0]["rounds"])
        for who, path in (("alice", a), ("bob", b)):
            ms, secrets = _secrets_of(tmp_path, who, path)
            assert not _holds(blob, ms)
            assert {r for r, sec in secrets if _holds(blob, sec)} == set(range(1, rounds + 1))


async def test_kill_9_mid_round_then_resume_finishes_the_sealed_match(tmp_path: Path) -> None:
    async with play.lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
        host, room = await play.host_room(lb, "alice", "--relay", url, "--bot", "greedy", "--transcript", str(a))
        # bob thinks before each move: a round lasts long enough to be killed in
        join = await lb.start("bob", "join", room, "--relay", url, "--bot", "greedy", "--json", "--transcript", str(b),
                              KOIKOI_BOT_DELAY="0.3")  # fmt: skip
        await join.event("round_end", timeout=120)
        join.proc.kill()  # kill -9, in round 2
        await join.proc.wait()
        # nothing secret of the round being played is on disk where the opponent could read it: not in either
        # transcript, nor in bob's seat file; the match secret nowhere
        ms, secrets = _secrets_of(tmp_path, "bob", b)
        on_disk = [a.read_bytes(), b.read_bytes()]
        on_disk += [p.read_bytes() for p in (tmp_path / "bob" / "data" / "seats").glob("*.json")]
        assert len(on_disk) == 3
        now = [sec for r, sec in secrets if r >= 2]
        for blob in on_disk:
            assert not _holds(blob, ms)
            assert not any(_holds(blob, sec) for sec in now)
        rc, resumed = await lb.run("bob", "resume", str(b), "--json")
        assert rc == 0, resumed.stderr
        assert await host.finish(timeout=180) == 0, host.stderr
        [start] = [e for e in resumed.events if e["event"] == "match_start"]
        assert start["resumed"] is True and start["settings"]["deck"] == "sealed"
        reports = await lb.audit(a, b)
        play.assert_complete(reports, 6, True, deck="sealed")
        assert a.read_bytes() == b.read_bytes()
        # the check above could see a secret: every round's is in the finished transcript
        rounds = len(reports[0]["rounds"])
        assert {r for r, sec in secrets if _holds(a.read_bytes(), sec)} == set(range(1, rounds + 1))


@pytest.mark.parametrize(
    ("host_deck", "join_deck", "said"),
    [
        (["--deck", "sealed"], ["--deck", "shared"], ["deck: you shared, room sealed"]),
        # a host that opens a shared room cannot have a joiner's cards without the joiner saying --deck shared
        (["--deck", "shared"], [], ["deck: you sealed, room shared", "--deck shared plays it anyway"]),
    ],
    ids=["expecting_shared_in_a_sealed_room", "expecting_sealed_by_default_in_a_shared_room"],
)
async def test_a_joiner_expecting_another_deck_is_refused_before_the_handshake(
    tmp_path: Path, host_deck: list[str], join_deck: list[str], said: list[str]
) -> None:
    async with play.lab(tmp_path) as lb:
        _relay, url = await lb.relay()
        host, room = await play.host_room(lb, "alice", "--relay", url, *host_deck, "--bot", "greedy")
        rc, join = await lb.run("bob", "join", room, "--relay", url, *join_deck, "--bot", "random", "--json")
        assert rc == 1
        err = join.error()
        assert err["code"] == "settings_mismatch" and err.get("winner") is None, err
        assert join.names() == ["room", "error"]  # refused before it took the seat: no handshake
        assert all(s in err["message"] for s in said), err["message"]
        # the host's room is still open: a joiner who expects its deck plays the match in it
        other = host.events[0]["settings"]["deck"]
        rc, carol = await lb.run("carol", "join", room, "--relay", url, "--deck", other, "--bot", "random", "--json")
        assert rc == 0, carol.stderr
        assert await host.finish() == 0, host.stderr
        assert host.names()[:2] == ["room", "match_start"] and host.names()[-1] == "match_end", host.names()
