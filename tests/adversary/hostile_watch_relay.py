"""A scripted relay for a watcher (:class:`~koikoi.client.watching.Watcher`), in process: each connection is a
:class:`Script` — the ``watching`` answer it gives, the ``seen`` frames it sends for the ``from`` asked, and how
it ends (the connection lost, the room closed, or the stream simply ending). No socket, no clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from koikoi.client.tuning import Tuning
from koikoi.protocol.handshake import Hello
from koikoi.protocol.messages import parse
from koikoi.relay.client import RelayClosed, RoomClosed, Seen, Watching

TUNING = Tuning(reconnect_s=5.0, connect_s=1.0)


def hello_of(frames: Sequence[tuple[int, bytes]]) -> Hello:
    """The recorded match's first HELLO: the room and the relay key a watcher checks a HELLO against."""
    return Hello.of(parse(frames[0][1]))


@dataclass
class Script:
    """One connection: ``answer(from_)`` is the ``watching`` reply's ``frames`` and the ``seen`` frames sent."""

    answer: Callable[[int], tuple[int, list[Seen]]]
    end: str = "lost"
    """``lost`` (RelayClosed), ``closed`` (RoomClosed)."""
    display: str = "AE4CA"


@dataclass
class HostileRelay:
    scripts: list[Script]
    relay_key: bytes
    asked: list[int] = field(default_factory=list)
    """The ``from`` of every ``watch``."""

    @asynccontextmanager
    async def connect(self, url: str, *, timeout: float = 0.0) -> AsyncIterator[Any]:
        if not self.scripts:
            raise RelayClosed("relay_unreachable", "no more connections")
        yield _Client(self, self.scripts.pop(0))


class _Client:
    def __init__(self, relay: HostileRelay, script: Script) -> None:
        self.relay = relay
        self.script = script
        self.relay_key = relay.relay_key
        self._items: list[Seen] = []

    async def watch(self, room: str, password: str | None = None, from_: int = 0) -> Watching:
        self.relay.asked.append(from_)
        frames, self._items = self.script.answer(from_)
        s = self.script
        return Watching(room, s.display, 6, True, 120, "sealed", ("present", "present"), frames, 1)

    async def next_seen(self) -> Seen:
        if self._items:
            return self._items.pop(0)
        if self.script.end == "closed":
            raise RoomClosed("match_over", "both players left the room: the match is over")
        raise RelayClosed("connection_lost", "the connection to the relay was lost")


def log_answer(log: Sequence[tuple[int, bytes]], taken: int) -> Callable[[int], tuple[int, list[Seen]]]:
    """An honest relay's answer with ``log`` (``taken`` of it taken when the watcher comes, the rest live)."""

    def answer(first: int) -> tuple[int, list[Seen]]:
        replay = [Seen(i, s, d) for i, (s, d) in enumerate(log[:taken]) if i >= first]
        live = [Seen(i, s, d) for i, (s, d) in enumerate(log) if i >= taken]
        return taken, replay + live

    return answer
