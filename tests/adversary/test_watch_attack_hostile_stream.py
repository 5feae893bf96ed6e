"""Attack: a hostile relay's stream to ``koikoi watch`` — its ``watching`` answer and its ``seen`` frames.

- a ``watching`` answer whose room and display carry terminal escapes (ESC, CSI, a bell, a carriage return):
  before the fix the narration printed the relay's ``display`` as it came (a relay could rewrite the screen);
  held after it: the watcher names the room it asked for, in its own groups of three;
- indexes that go back, repeat and jump, frames under the wrong seat, another match's frames, junk, a flood of
  RESENDs and oversized frames: the watcher never raises and ends with the honest seats' verdict or
  ``unfinished`` (held).
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable

import trio
from hostile_watch_relay import TUNING, HostileRelay, Script, hello_of
from spectator_world import world
from trio.testing import MockClock

from koikoi.client.output import Output
from koikoi.client.watching import PlainSink, Watcher
from koikoi.protocol.audit import audit
from koikoi.protocol.codes import Status
from koikoi.protocol.messages import resend_frame
from koikoi.relay.client import Seen

ESCAPES = "\x1b]0;owned\x07\x1b[2J\x1b[31mK7M\rXWA"


def _all(items: list[Seen]) -> Callable[[int], tuple[int, list[Seen]]]:
    """A relay that sends ``items`` whatever ``from`` was asked."""
    return lambda first: (0, list(items))


def _plain(relay: HostileRelay, room: str) -> tuple[Watcher, str]:
    buf = io.StringIO()
    sink = PlainSink(Output("koikoi watch", False, out=buf, err=buf))
    w = Watcher("ws://hostile", room, None, sink, TUNING, connector=relay.connect)
    trio.run(w.run, clock=MockClock(autojump_threshold=0))
    return w, buf.getvalue()


def test_a_relays_display_with_terminal_escapes_is_never_printed() -> None:
    m = world("sealed")
    hello = hello_of(m.relay)
    items = [Seen(i, s, d) for i, (s, d) in enumerate(m.relay)]
    relay = HostileRelay([Script(_all(items), end="closed", display=ESCAPES)], hello.relay_key)
    w, text = _plain(relay, hello.room)
    assert w.spectator is not None and w.spectator.report().status is m.status
    assert not any(ord(ch) < 32 and ch != "\n" for ch in text), repr(text[:300])
    assert f"Watching room {hello.room[:3]}-" in text or f"Watching room {hello.room}" in text


def _hostile(rng: random.Random) -> list[Seen]:
    m, other = world("sealed"), world("shared")
    out: list[Seen] = []
    for i, (seat, d) in enumerate(m.relay):
        r = rng.random()
        if r < 0.1:
            out.append(Seen(rng.choice([0, i, 10**18, 2**63]), 1 - seat, d))  # wrong seat, index back or far
        elif r < 0.2:
            j, (s2, d2) = rng.randrange(len(other.relay)), other.relay[rng.randrange(len(other.relay))]
            out.append(Seen(i + j, s2, d2))  # another match's frame
        elif r < 0.3:
            out.append(Seen(i, seat, rng.randbytes(rng.choice([0, 1, 64, 300_000]))))  # junk, oversized
        elif r < 0.35:
            out.extend(Seen(i, seat, resend_frame(m.match_id, k)) for k in range(50))  # a RESEND flood
        elif r < 0.45:
            b = bytearray(d)
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            out.append(Seen(i, seat, bytes(b)))  # a mutated frame
        out.append(Seen(i, seat, d))
    rng.shuffle(out[len(out) // 2 :])  # (and the second half reordered)
    return out


def test_a_hostile_stream_never_crashes_a_watcher_nor_makes_it_contradict_the_seats() -> None:
    m = world("sealed")
    honest = audit(m.transcripts[0])
    hello = hello_of(m.relay)
    for seed in range(4):
        items = _hostile(random.Random(seed))
        relay = HostileRelay([Script(_all(items), end="closed")], hello.relay_key)
        w, _ = _plain(relay, hello.room)
        assert w.spectator is not None
        got = w.spectator.report()
        assert got.status is Status.UNFINISHED or (got.status, got.result) == (honest.status, honest.result), seed
