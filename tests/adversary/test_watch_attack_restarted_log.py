"""Attack (a relay restart, or a relay lying about it): a watcher whose connection dropped watches again with
``from`` = one past the last index it got. A relay that restarted rebuilt the room with a **new** log, indexed
from 0 at the restart (spec/relay.md "Watchers"). Before the fix the watcher skipped every frame of the new log
below its old ``from``: frames it never had, so its line stopped in a gap — ``unfinished`` for a match it was
sent whole.

- the new log is shorter than ``from`` (``watching.frames`` < ``from``): the spec's own sign of another log;
- the new log is longer: ``from`` lands inside it at another frame than the one the watcher had there.

Held after the fix: the watcher asks again from one frame before the first it lacks and checks that frame is
the one it had; if the log is another one (or ``frames`` is below ``from``) it watches again from 0 (the
spectator holds what it has, byte for byte), and it ends with the seats' verdict."""

from __future__ import annotations

from typing import cast

import pytest
import trio
from hostile_watch_relay import TUNING, HostileRelay, Script, hello_of, log_answer
from spectator_world import world
from trio.testing import MockClock

from koikoi.client.watching import Watcher
from koikoi.protocol.audit import audit
from koikoi.protocol.watch_events import WatchEvent


class _Sink:
    def __init__(self) -> None:
        self.events: list[WatchEvent] = []
        self.notes: list[str] = []

    def watching(self, w: object, url: str) -> None:
        pass

    def told(self, events: list[WatchEvent], board: object) -> None:
        self.events += events

    def note(self, text: str) -> None:
        self.notes.append(text)

    def finished(self, report: object, room: str) -> None:
        pass


def _run(relay: HostileRelay, room: str) -> Watcher:
    w = Watcher("ws://hostile", room, None, cast("object", _Sink()), TUNING, connector=relay.connect)  # type: ignore[arg-type]
    trio.run(w.run, clock=MockClock(autojump_threshold=0))
    return w


@pytest.mark.parametrize("taken", [3, 60], ids=["new_log_shorter_than_from", "new_log_longer_than_from"])
def test_a_watcher_back_on_a_restarted_relay_follows_the_new_log_from_its_start(taken: int) -> None:
    m = world("sealed")
    frames = m.relay
    k = 40  # the frames the watcher got before the relay restarted
    assert len(frames) > k + taken
    old = log_answer(frames[:k], k)
    new_log = frames[k - 2 :]  # (the seats resend what the other may lack: the new log begins a little before)
    new = log_answer(new_log, taken)
    hello = hello_of(frames)
    relay = HostileRelay([Script(old), Script(new, end="closed"), Script(new, end="closed")], hello.relay_key)
    w = _run(relay, hello.room)
    assert w.spectator is not None
    got, want = w.spectator.report(), audit(m.transcripts[0])
    assert (got.status, got.result) == (want.status, want.result), relay.asked
