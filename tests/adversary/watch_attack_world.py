"""A relay core with a fake clock for the watch attacks (tests/adversary/test_watch_attack_*.py): the messages
each connection was sent (a watcher's catch-up as the ``seen`` messages it stands for), what was closed, the
password work asked for, and the catch-ups (:class:`Replay`) handed to the driver."""

from __future__ import annotations

from typing import Any

from nacl.signing import SigningKey

from koikoi.protocol.framing import decode, encode
from koikoi.protocol.witness import sign_seat_proof
from koikoi.relay import codes
from koikoi.relay.core import Archive, Close, Log, RelayConfig, RelayCore, Replay, Send
from koikoi.relay.effects import HashPassword, VerifyPassword

A = "198.51.100.1"
B = "192.0.2.7"
C = "203.0.113.9"


class CoreWorld:
    def __init__(self, **cfg: Any) -> None:
        cfg.setdefault("chosen_codes_after_s", 0)
        self.core = RelayCore(RelayConfig(**cfg))
        self.now = 1000.0
        self.inbox: dict[int, list[dict[str, Any]]] = {}
        self.closed: dict[int, str] = {}
        self.logs: list[Log] = []
        self.work: list[HashPassword | VerifyPassword] = []
        self.archives: list[Archive] = []
        self.replays: list[Replay] = []
        self.player = SigningKey(bytes(range(1, 33)))
        self.nonces: dict[int, bytes] = {}
        self.sent: dict[int, int] = {}

    def run(self) -> None:
        for e in self.core.out:
            if isinstance(e, Send):
                self.inbox.setdefault(e.conn, []).append(decode(e.data))
            elif isinstance(e, Replay):
                self.replays.append(e)
                box = self.inbox.setdefault(e.conn, [])
                box.extend({"t": "seen", "i": e.first + k, "seat": s, "d": d} for k, (s, d) in enumerate(e.frames))
            elif isinstance(e, Close):
                self.closed[e.conn] = e.reason
            elif isinstance(e, Log):
                self.logs.append(e)
            elif isinstance(e, Archive):
                self.archives.append(e)
            else:
                self.work.append(e)
        self.core.out.clear()

    def later(self, seconds: float) -> None:
        self.now += seconds
        self.core.tick(self.now)
        self.run()

    def connect(self, ip: str = A) -> int:
        cid, refusal = self.core.connect(self.now, ip)
        self.run()
        assert refusal is None, refusal
        hello = self.inbox[cid].pop(0)
        self.nonces[cid] = hello["nonce"]
        return cid

    def send(self, cid: int, obj: dict[str, Any]) -> dict[str, Any] | None:
        """``obj`` from ``cid`` (a seat request proves the world's player key); the first message it gets back."""
        if obj.get("t") in ("create", "join", "resume") and "key" not in obj:
            k = self.player
            obj = {
                **obj,
                "key": bytes(k.verify_key),
                "proof": sign_seat_proof(k, self.core.public_key, self.nonces[cid]),
            }
        self.inbox.pop(cid, None)
        self.core.message(self.now, cid, encode(obj))
        self.run()
        box = self.inbox.get(cid, [])
        return box.pop(0) if box else None

    def frame(self, cid: int, d: bytes, *, ctl: bool = False) -> None:
        n = self.sent[cid] = self.sent.get(cid, 0) + 1
        self.core.message(self.now, cid, encode({"t": "frame", "n": n, "d": d, **({"ctl": True} if ctl else {})}))
        self.run()

    def seen(self, cid: int) -> list[tuple[int, int, bytes]]:
        box = self.inbox.get(cid, [])
        got = [(m["i"], m["seat"], m["d"]) for m in box if m["t"] == "seen"]
        self.inbox[cid] = [m for m in box if m["t"] != "seen"]
        return got

    def finish_work(self) -> dict[str, Any] | None:
        w = self.work.pop(0)
        result: Any = (
            codes.hash_password(w.password)
            if isinstance(w, HashPassword)
            else codes.verify_password(w.password, w.stored)
        )
        self.inbox.pop(w.conn, None)
        self.core.work_done(self.now, w.conn, result)
        self.run()
        box = self.inbox.get(w.conn, [])
        return box.pop(0) if box else None

    def room(self, **create: Any) -> tuple[str, int, int]:
        """A room both seats took (a host from A, a joiner from B): its code and the two connections."""
        host, guest = self.connect(A), self.connect(B)
        made = self.send(host, {"t": "create", **create})
        if made is None:
            made = self.finish_work()
        assert made is not None and made["t"] == "created", made
        extra = {"password": create["password"]} if "password" in create else {}
        joined = self.send(guest, {"t": "join", "room": made["room"], **extra})
        if joined is None:
            joined = self.finish_work()
        assert joined is not None and joined["t"] == "joined", joined
        self.inbox.pop(host, None)
        return made["room"], host, guest
