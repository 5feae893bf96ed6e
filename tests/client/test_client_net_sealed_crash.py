"""kill -9 at each step of a sealed deal, then ``koikoi resume`` (issue 11): real ``koikoi host``/``join``
processes through a real relay process, both killed (SIGKILL, ``KOIKOI_TEST_CRASH=sent:N``) just after
handing one of their deal messages to the relay, then both resumed. Each resumed seat re-derives every key
it needs from its private key and its transcript (nothing secret is stored), the match ends complete,
audited on both sides with byte-identical transcripts — and at each kill no file anyone wrote (both
transcripts, both players' config, data and state dirs, the relay's, every process's stderr) holds a
secret of the round being dealt: no match secret, no round secret, no mask, no key the seat had not yet
published itself.

Which message is a seat's N-th does not depend on who deals first: the host signs three handshake messages,
the joiner two, then the round's K sends SHUFFLE and LOCK, its dealer O SHUFFLE_LOCK and CLAIM (with its
first play), so killing the host at N and the joiner at N - 1 kills K and O at the same step of the deal,
whichever seat each is. The helpers (processes, the relay, the audit) are ``test_client_net_play``'s."""

from __future__ import annotations

import importlib.util
import signal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import trio

pytestmark = pytest.mark.net  # starts real koikoi processes and relays


def _helpers() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "koikoi_net_play_helpers_crash", Path(__file__).with_name("test_client_net_play.py")
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


play = _helpers()


def _forbidden(tmp: Path, who: str, transcript: Path) -> tuple[str, list[bytes]]:
    """The last message ``who`` signed (its type) and every secret of ``who`` that no file may hold now: its
    match secret, the round secrets of this round and the next (every deal attempt), and of the current deal
    attempt its mask, the mask's inverse and each of its 48 keys — each unless it has sent it in a message
    itself."""
    from koikoi.client.identity import load_or_create
    from koikoi.client.transcript_file import read_for_resume
    from koikoi.protocol.messages import parse
    from koikoi.protocol.sealed import MAX_ATTEMPTS, round_secret
    from koikoi.protocol.sealed_line import SealedSeat, match_secret
    from koikoi.protocol.session import Session

    key, created = load_or_create(tmp / who / "config" / "identity.key")
    assert not created
    frames = read_for_resume(transcript).frames
    s = Session.from_transcript(key, frames)
    sl = s.referee.sealed
    assert s.match_id is not None and isinstance(sl, SealedSeat)
    own = [parse(f) for f in frames if parse(f).seat == s.seat]
    sent = b"".join(m.frame for m in own)
    ms = match_secret(key, s.match_id, s.seat)
    secrets = [ms] + [round_secret(ms, r, a) for r in (sl.round, sl.round + 1) for a in range(MAX_ATTEMPTS)]
    now = sl.secrets_now()
    secrets += [now.mask, now.mask_inverse, *now.keys]
    # what the seat has sent itself is public: a key of play, and a round secret it disclosed (a round that a
    # hand yaku or a redeal ended early can reach its DISCLOSE by the kill's message; a seat that discloses
    # first still holds that round as the current one)
    return own[-1].type.name, [s for s in secrets if s not in sent]


def _files(tmp: Path) -> list[Path]:
    """Every file written under ``tmp`` (the processes' stderr too) but the players' private keys."""
    return [p for p in tmp.rglob("*") if p.is_file() and p.name != "identity.key"]


async def _next_exit(procs: dict[str, Any]) -> str:
    """The first of ``procs`` (by player) to exit."""
    with trio.fail_after(90):
        while True:
            for who, p in procs.items():
                if p.proc.poll() is not None:
                    return who
            await trio.sleep(0.02)


@pytest.mark.parametrize(
    ("n", "after"),
    [
        (4, {"SHUFFLE", "SHUFFLE_LOCK"}),  # K after step 1, O after step 2
        (5, {"LOCK"}),  # K after step 3, O after its second message of the deal (step 4 and its first play)
        (6, None),  # mid-play: K after its draw key, O after its first play's keys (unless the deal differs)
    ],
    ids=["after_shuffle_and_shuffle_lock", "after_lock_and_claim", "after_the_first_keys_of_play"],
)
async def test_kill_9_at_each_step_of_the_deal_then_resume_keeps_every_key(
    tmp_path: Path, n: int, after: set[str] | None
) -> None:
    async with play.lab(tmp_path) as lb:
        _relay, url = await lb.relay("--grace", "120")
        paths = {"alice": tmp_path / "a.koikoi", "bob": tmp_path / "b.koikoi"}
        host, room = await play.host_room(
            lb,
            "alice",
            "--relay",
            url,
            "--bot",
            "greedy",
            "--transcript",
            str(paths["alice"]),
            KOIKOI_TEST_CRASH=f"sent:{n}",
        )
        join = await lb.start(
            "bob",
            "join",
            room,
            "--relay",
            url,
            "--bot",
            "random",
            "--json",
            "--transcript",
            str(paths["bob"]),
            KOIKOI_TEST_CRASH=f"sent:{n - 1}",
        )
        alive: dict[str, Any] = {"alice": host, "bob": join}
        resumed: dict[str, Any] = {}
        killed_after: set[str] = set()
        while alive:
            who = await _next_exit(alive)
            p = alive.pop(who)
            assert await p.proc.wait() == -signal.SIGKILL, (who, p.lines, p.stderr)
            last, secrets = _forbidden(tmp_path, who, paths[who])
            killed_after.add(last)
            for f in _files(tmp_path):
                blob = f.read_bytes()
                leaked = [s for s in secrets if s in blob or s.hex().encode() in blob]
                assert not leaked, f"{who} killed after its {last}: {len(leaked)} of its secrets in {f}"
            resumed[who] = await lb.start(who, "resume", str(paths[who]), "--json")
        if after is not None:  # (O's second message is another after a redeal or a hand yaku: not asserted)
            assert after <= killed_after, killed_after
        for p in resumed.values():
            assert await p.finish(timeout=120) == 0, p.stderr
            [start] = [e for e in p.events if e["event"] == "match_start"]
            assert start["resumed"] is True and start["settings"]["deck"] == "sealed"
        a, b = paths["alice"], paths["bob"]
        play.assert_complete(await lb.audit(a, b), 6, True, deck="sealed")
        assert a.read_bytes() == b.read_bytes()
