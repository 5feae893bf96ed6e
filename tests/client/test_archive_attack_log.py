"""Attacks on what goes in a relay's archive (client/archive.py ``keep``): a seat's modified client sends its
room frames that are not its own messages, to keep a finished public match out of the archive (spec/relay.md
"The archive": only filling the log may do that) or to get a line in that should stay out."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from koikoi.client.archive import Written, keep
from koikoi.engine.match import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, parse
from koikoi.protocol.session import Session
from koikoi.testing import make_pair, witness_key

Frames = list[tuple[int, bytes]]
ROOM = "ATTK7"


def _throwaway(name: bytes) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"koikoi/test-archive-attack\x00" + name).digest())


def _forged_joiner_hello(hello0: bytes, relay_key: bytes, *, publish: bool) -> bytes:
    """A seat-1 HELLO answering ``hello0``, signed by a key nobody at the table holds."""
    s = Session.join(
        _throwaway(b"joiner"), ROOM, hashlib.sha256(b"forged").digest(), relay_key=relay_key, publish=publish
    )
    s.start()
    s.receive(hello0)
    (hello,) = s.frames_to_send()
    assert parse(hello).type is MsgType.HELLO and parse(hello).seat == 1
    return hello


def _relayed(seed: bytes, *, private_publish: tuple[bool, bool] = (False, False), forge: bool) -> tuple[Frames, bytes]:
    """A bot match; with ``forge`` seat 0's client sends, right after its HELLO, a seat-1 HELLO of a throwaway
    key (consenting to publish). The room's log as a relay takes it, and seat 1's transcript (the honest
    joiner's: the match it played)."""
    relay_key = bytes(witness_key(seed).verify_key)
    frames: Frames = []

    def tamper(seat: int, index: int, frame: bytes) -> list[bytes]:
        out = [frame]
        if forge and seat == 0 and index == 0:
            out.append(_forged_joiner_hello(frame, relay_key, publish=True))
        frames.extend((seat, f) for f in out)
        return out

    pair = make_pair(Settings(6), ("greedy", "random"), seed, room=ROOM, publish=private_publish, tamper=tamper)
    assert not pair.run()  # (the honest joiner plays the match through: the forged HELLO is not its line)
    return frames, bytes(pair.files[1])


def test_a_forged_joiner_hello_from_the_creator_does_not_keep_the_match_out(tmp_path: Path) -> None:
    seed = b"attack-forged-hello"
    frames, joiner = _relayed(seed, forge=True)
    honest = audit(joiner)
    assert honest.valid and honest.status == "complete"
    kept = keep(tmp_path, ROOM, False, frames, bytes(witness_key(seed).verify_key))
    assert (kept.written, kept.why) == (Written.WRITTEN, None)  # (was: None, "status unfinished")
    (f,) = tmp_path.iterdir()
    assert f.name == f"{honest.match_id}.koikoi"
    got = audit(f.read_bytes())
    assert (got.status, got.result, got.players) == (honest.status, honest.result, honest.players)


def test_a_forged_consent_gets_no_private_match_in(tmp_path: Path) -> None:
    # the creator consents, the joiner does not; the creator sends a consenting seat-1 HELLO of its own making
    seed = b"attack-forged-consent"
    frames, _ = _relayed(seed, private_publish=(True, False), forge=True)
    kept = keep(tmp_path, ROOM, True, frames, bytes(witness_key(seed).verify_key))
    assert (kept.written, kept.why) == (None, "a private room, not both players publish")
    assert kept.report.status == "complete" and kept.report.publish == [True, False]
    assert list(tmp_path.iterdir()) == []


def test_junk_and_another_matchs_frames_in_the_log_keep_nothing_out(tmp_path: Path) -> None:
    seed = b"attack-mixed"
    frames, joiner = _relayed(seed, forge=False)
    other, _ = _relayed(seed + b"-other", forge=False)  # (another relay's key: its HELLOs are another line's)
    same_relay, _ = _relayed(seed, forge=False)  # (the same match again: every frame a repeat)
    mixed: Frames = [(0, b"\x00"), frames[0], (1, b"junk" * 100), frames[1]]
    for n, fr in enumerate(frames[2:]):
        mixed.append(fr)
        if n < len(other):
            mixed.append((1 - other[n][0], other[n][1]))  # (sent by the other seat's connection, too)
    mixed += same_relay
    kept = keep(tmp_path, ROOM, False, mixed, bytes(witness_key(seed).verify_key))
    assert (kept.written, kept.why) == (Written.WRITTEN, None)
    (f,) = tmp_path.iterdir()
    assert audit(f.read_bytes()).result == audit(joiner).result
