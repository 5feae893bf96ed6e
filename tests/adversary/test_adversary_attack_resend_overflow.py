"""Attack (x10): a losing cheater closes the room for good, with no certificate, by making the honest side answer
its requests into the relay's buffer for an absent seat.

Four flagged ``RESEND(match id, 0)`` (the answer budget) each made the honest session send the whole line again;
the cheater disconnects right after them, and the relay keeps what the honest seat sends for the absent seat,
closing the room with ``buffer_overflow`` (no certificate, a tombstone that refuses ``resume``) past 256 frames.
The same answers, paced by the client under the relay's rate limit, held the honest player's own move back past
the move time (a real-process run lost the honest host the match on time). An answer holds at most
``MAX_ANSWER_MESSAGES`` messages of the line (§5.2).
"""

from __future__ import annotations

from typing import Any

import pytest
from nacl.signing import SigningKey

from koikoi.engine import Settings
from koikoi.protocol.framing import decode, encode
from koikoi.protocol.messages import resend_frame
from koikoi.protocol.session import MAX_ANSWERS
from koikoi.protocol.witness import sign_seat_proof
from koikoi.relay.core import Close, RelayConfig, RelayCore, Send
from koikoi.testing import make_pair

pytestmark = pytest.mark.net  # (in memory, but part of the adversary suite)

HONEST, CHEAT = 0, 1


class World:
    def __init__(self) -> None:
        self.core = RelayCore(RelayConfig())
        self.now = 1000.0
        self.inbox: dict[int, list[dict[str, Any]]] = {}

    def run(self) -> None:
        for e in self.core.out:
            if isinstance(e, Send):
                self.inbox.setdefault(e.conn, []).append(decode(e.data))
            elif isinstance(e, Close):
                self.inbox.setdefault(e.conn, []).append({"t": "closed", "reason": e.reason})
        self.core.out.clear()

    def connect(self, ip: str) -> int:
        cid, refusal = self.core.connect(self.now, ip)
        assert refusal is None
        self.run()
        return cid

    def send(self, cid: int, obj: dict[str, Any], key: SigningKey | None = None) -> None:
        if key is not None:  # a seat request: the player's key and its proof over this connection's nonce
            nonce = next(m["nonce"] for m in self.inbox[cid] if m.get("t") == "relay")
            obj = {**obj, "key": bytes(key.verify_key), "proof": sign_seat_proof(key, self.core.public_key, nonce)}
        self.core.message(self.now, cid, encode(obj))
        self.run()


def test_a_flood_of_resend_from_0_never_closes_the_room_without_a_certificate() -> None:
    pair = make_pair(Settings(12), ("greedy", "greedy"), b"x10-overflow", move_time_s=120)
    h = pair.sessions[HONEST]
    for _ in range(50_000):
        if h.referee.next_seq >= 80 and not any(pair.queues):
            break
        assert pair.step()
    sid = h.referee.sid
    assert sid is not None and not h.is_finished

    w = World()
    host, cheat = w.connect("198.51.100.1"), w.connect("192.0.2.7")
    w.send(host, {"t": "create"}, SigningKey(bytes([5] * 32)))
    room = next(m["room"] for m in w.inbox[host] if m.get("t") == "created")
    w.send(cheat, {"t": "join", "room": room}, SigningKey(bytes([6] * 32)))
    sent = {host: 0, cheat: 0}

    def frame(cid: int, d: bytes, ctl: bool = False) -> None:
        sent[cid] += 1
        obj: dict[str, Any] = {"t": "frame", "n": sent[cid], "d": d}
        if ctl:
            obj["ctl"] = True
        w.send(cid, obj)

    for f in h.unacknowledged()[:1] or [h.referee.msgs[0].frame]:  # both seats have spoken
        frame(host, f)
    frame(cheat, pair.sessions[CHEAT].referee.msgs[1].frame)
    for _ in range(MAX_ANSWERS):  # the cheater's requests, flagged as an honest client flags them
        frame(cheat, resend_frame(sid, 0), ctl=True)
        h.receive(resend_frame(sid, 0), ctl=True)
    w.core.disconnected(w.now, cheat)  # and it is gone (its grace period starts)
    w.run()
    out = h.frames_to_send()
    for f in out:  # the honest client sends its answers (paced, but all within seconds)
        frame(host, f)
        w.now += 1 / 30
        w.core.tick(w.now)
        w.run()
    closed = [m for m in w.inbox.get(host, []) if m.get("t") == "room_closed"]
    assert not (closed and "cert" not in closed[0]), (
        f"the honest side sent {len(out)} frames answering {MAX_ANSWERS} requests; the relay closed the room: "
        f"{closed[0]['reason']}, no certificate: the match can never end"
    )
