"""Driving sessions with trio, as the client does: memory channels for the relay, the session's
wait/next_deadline for timers (trio's autojump clock makes two minutes pass at once), and a witness
that plays the relay's clock and signs certificates when a session asks."""

from __future__ import annotations

import random

import trio
import trio.testing

from koikoi.engine import Settings
from koikoi.engine.bots import Bot, make_bot
from koikoi.protocol.audit import audit
from koikoi.protocol.session import CertificateNeeded, Event, MatchDecided, Session, TimeoutWarning
from koikoi.protocol.transcript import MAGIC, record
from koikoi.protocol.witness import fingerprint
from koikoi.testing import Witness, fixed_key, seat_keys, witness_key


async def drive(
    s: Session,
    send: trio.MemorySendChannel[bytes],
    recv: trio.MemoryReceiveChannel[bytes],
    bot: Bot | None,
    file: bytearray,
    seen: list[Event],
    witness: Witness,
) -> None:
    """One client's loop: write, send, show; wait for a frame or the session's next deadline; hand
    the relay's certificate to the session when it asks."""

    async def flush(events: list[Event]) -> None:
        for rec in s.records():
            file.extend(record(rec.frame))
        for frame in s.frames_to_send():
            witness.saw(s.seat, frame, trio.current_time())
            await send.send(frame)
        seen.extend(events)
        for ev in events:
            if isinstance(ev, CertificateNeeded):
                await flush(s.witnessed(witness.certify(ev.silent_seat, trio.current_time())))

    await flush(s.start())
    epoch, started = -1, 0.0
    while not s.is_finished:
        w = s.wait()
        if w is not None and w.epoch != epoch:
            epoch, started = w.epoch, trio.current_time()
        if s.my_turn and bot is not None:
            await flush(s.play(bot.choose(s.view())))
            continue
        deadline = s.next_deadline()
        with trio.move_on_after(float("inf") if deadline is None else started + deadline - trio.current_time()):
            frame = await recv.receive()
            await flush(s.receive(frame))
            continue
        await flush(s.time_passed(epoch, trio.current_time() - started))
    await flush([])


async def _match(bots: tuple[str | None, str | None], seed: bytes) -> tuple[list[Event], list[Event], bytes, bytes]:
    witness = Witness(witness_key(seed), "TRIO", seated_at=trio.current_time(), seat_keys=seat_keys(seed))
    a = Session.create(fixed_key(seed, 0), "TRIO", Settings(6), bytes(32), relay_key=witness.public_key)
    b = Session.join(fixed_key(seed, 1), "TRIO", bytes([1]) * 32, relay_key=witness.public_key)
    a_to_b_send, a_to_b_recv = trio.open_memory_channel[bytes](100)
    b_to_a_send, b_to_a_recv = trio.open_memory_channel[bytes](100)
    rng = random.Random(seed)
    bot_objs = [make_bot(n, random.Random(rng.random())) if n else None for n in bots]
    ev_a: list[Event] = []
    ev_b: list[Event] = []
    fa, fb = bytearray(MAGIC), bytearray(MAGIC)
    async with trio.open_nursery() as n:
        n.start_soon(drive, a, a_to_b_send, b_to_a_recv, bot_objs[0], fa, ev_a, witness)
        n.start_soon(drive, b, b_to_a_send, a_to_b_recv, bot_objs[1], fb, ev_b, witness)
    return ev_a, ev_b, bytes(fa), bytes(fb)


async def test_a_whole_match_driven_by_trio() -> None:
    _ev_a, _ev_b, fa, fb = await _match(("greedy", "random"), b"trio")
    assert fa == fb
    assert audit(fa).status == "complete"


async def test_a_silent_opponent_is_warned_then_loses_on_time(autojump_clock: trio.testing.MockClock) -> None:
    t0 = trio.current_time()
    with trio.move_on_after(10_000):
        ev_a, _ev_b, fa, fb = await _match(("random", None), b"slow")  # seat 1's player never moves
    elapsed = trio.current_time() - t0
    warnings = [e for e in ev_a if isinstance(e, TimeoutWarning)]
    assert warnings and warnings[0].seconds_left == 30.0
    end = next(e for e in ev_a if isinstance(e, MatchDecided))
    assert (end.outcome.status, end.outcome.code, end.outcome.winner) == ("on_time", "timeout", 0)
    assert end.outcome.witness == fingerprint(witness_key(b"slow").verify_key.encode())
    assert 120 <= elapsed < 130
    assert audit(fa).status == audit(fb).status == "on_time"
