"""relay_world's World (the real relay core, a fake clock, two modelled clients) with a one-way delay between
the relay and one seat's client: its frames and ``peer`` events take ``lag`` seconds each way (its control
requests and their replies do not). Like relay/client.py and client/match_loop.py, a ``peer back`` with a
``received`` above what the seat sent sets its count forward, and ``back`` makes the session resend
(``Session.reconnected``). For the attack tests; not a test file."""

from __future__ import annotations

from collections import deque
from typing import Any

from relay_world import End, World, envelope

from koikoi.protocol.framing import decode
from koikoi.relay.core import Close, Send


class LagWorld(World):
    def __init__(self, seed: bytes, move_time_s: int, lag: float, seat: int) -> None:
        super().__init__(seed, move_time_s)
        self.lag = lag
        self.laggy = seat
        self.down: deque[tuple[float, int, bytes]] = deque()
        """(due, connection, message): relay → the laggy seat, in order."""
        self.up: deque[tuple[float, int, bytes]] = deque()
        """(due, connection, envelope): the laggy seat → relay, in order."""

    def _end(self, conn: int) -> End | None:
        return next((x for x in self.ends if x.cid and x.cid == conn), None)

    def pump(self) -> bool:
        did = False
        while True:
            while self.core.out:
                out, self.core.out[:] = list(self.core.out), []
                for e in out:
                    if isinstance(e, Close):
                        for x in self.ends:
                            if x.cid == e.conn:
                                x.cid = 0
                                x.kicked += 1
                        self.core.disconnected(self.now, e.conn)
                        continue
                    if not isinstance(e, Send):
                        continue
                    end = self._end(e.conn)
                    if end is None or e.conn in self.lost:
                        continue
                    obj = decode(e.data, max_size=1 << 20)
                    if end.seat == self.laggy and obj.get("t") in ("frame", "peer"):
                        self.down.append((self.now + self.lag, e.conn, e.data))
                        continue
                    did |= self._deliver(end, obj)
            moved = False
            if self.down and self.down[0][0] <= self.now:
                _, conn, data = self.down.popleft()
                end = self._end(conn)
                if end is not None:
                    did |= self._deliver(end, decode(data, max_size=1 << 20))
                moved = True
            elif self.up and self.up[0][0] <= self.now:
                _, conn, env = self.up.popleft()
                self.core.message(self.now, conn, env)
                moved = True
            if not moved and not self.core.out:
                return did

    def _deliver(self, end: End, obj: dict[str, Any]) -> bool:
        if obj.get("t") != "frame":
            end.replies.append(obj)
            if obj.get("t") == "peer" and type(obj.get("received")) is int and not end.silent:
                if obj["received"] > end.sent:
                    end.sent = obj["received"]  # RelayClient._pump: "a stale ticket after a restart"
                self.resend(end, obj["received"])
                if obj.get("event") == "back" and end.session is not None:
                    self.note(end, end.session.reconnected())  # MatchLoop._peer
            return False
        if obj["n"] <= end.received:
            return False
        end.received = obj["n"]
        if end.held is not None:
            end.held.append((obj["d"], obj.get("ctl") is True))
        elif end.session is not None:
            self.note(end, end.session.receive(obj["d"], ctl=obj.get("ctl") is True))
            return True
        return False

    def send(self, end: End, d: bytes, ctl: bool) -> None:
        if end.seat != self.laggy:
            super().send(end, d, ctl)
            return
        end.sent += 1
        end.log.append((end.sent, d, ctl))
        if end.cid:
            self.up.append((self.now + self.lag, end.cid, envelope(end.sent, d, ctl)))

    def resend(self, end: End, received: int) -> None:
        if end.seat != self.laggy:
            super().resend(end, received)
            return
        for n, d, ctl in list(end.log):
            if n > received and end.cid:
                self.up.append((self.now + self.lag, end.cid, envelope(n, d, ctl)))
        self.pump()
