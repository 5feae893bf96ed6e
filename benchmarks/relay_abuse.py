"""A relay strangers cannot starve: an honest match's time under each attack, against a real relay.

    python benchmarks/relay_abuse.py [--attacks all] [--frames 150] [--runs 7] [--warmup 3]

The relay runs as a real ``koikoi relay`` process; each attack runs in a
process of its own from another loopback address (127.0.0.2), at the lowest
CPU priority (it stands for another machine), and the honest pair plays from
127.0.0.1 and 127.0.0.3 in this one. The honest match: the host creates a
public room with a password, the joiner joins it with the right password,
then they take turns (``--frames`` frames each way, move-sized, each side
waiting for the other's: a match's rhythm) and leave. Each attack gets a
fresh relay (an address one attack locked out would blunt the next) and a
second fresh relay that nobody attacks, the control; the honest match is
played on each in turn, ``--runs`` times (``--warmup`` seconds after the
attacker says it started), and ``ratio`` is the median time on the attacked
relay divided by the median on the control: the machine is shared, and
whatever else slows it slows both alike (``ratio_before_attack``, the same
before the attack starts, shows the noise).

The attacks (issue 13):

- ``room_flood``: create a room and disconnect, in a loop (filled every room in 3.5 s before);
- ``squatter``: join every listed room and never send anything, holding as many seats as it can;
- ``password_guess``: wrong passwords for every listed room, reconnecting when refused;
- ``code_guess``: join random private-room codes, reconnecting when refused;
- ``handshake_flood``: TCP connections that never finish the WebSocket handshake, up to 1,500;
- ``scrypt_flood``: eight connections creating password rooms in a loop;
- ``connection_flood``: WebSocket connections from one address beyond its 32;
- ``joined_room_flood``: create a room, join it from a second connection, one frame, disconnect
  both, in a loop (a room somebody joined keeps the full grace: the waiting-room budget does not
  hold it);
- ``rebuild_flood``: ``resume`` made-up rooms with a ``peer_check`` (the relay rebuilds rooms it
  does not know, as after a restart), disconnecting each.

Prints one JSON object: for each attack the honest match's time under attack divided by its
time without (``ratio``, target <= 1.5), the attack's own counts (and how many seconds it ran),
and the attacked relay's RSS. A
password room cannot be squatted, so for ``squatter`` it also gives ``public_room_wait_s``: how
long an honest joiner who comes 0.5 s after the host created a public room without a password
waited for the seat the squatter took first (the relay's ``first_frame_timeout``, 30 s, bounds it);
and the honest joiner rarely leaves a room waiting long enough to be guessed at, so for
``password_guess`` ``late_password_join_s`` is how long the right password's join took when the
joiner came 2 s after the room was listed, the guesser's wrong passwords before it.

Also a library: the tests (tests/relay/test_relay_abuse.py) run these attacks in process.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import trio

from koikoi.relay import codes
from koikoi.relay.client import Frame, PeerNotice, RelayClient, RelayError, SeatTicket, connect
from koikoi.support import first_of, sole

ATTACKER = "127.0.0.2"
HONEST = "127.0.0.1"
HONEST_GUEST = "127.0.0.3"
PASSWORD = "a good password"
PAYLOAD = 120

Attack = Callable[[str, Counter[str]], Awaitable[None]]


# ------------------------------------------------------------------------------ the honest pair


async def _next_frame(c: RelayClient) -> bytes:
    while True:
        ev = await c.receive()
        if isinstance(ev, Frame):
            return ev.data


async def honest_match(url: str, frames: int = 150, *, timeout: float = 60.0) -> float:
    """Create (password), join (password), ``frames`` turns each way, leave: the seconds it took.
    The host plays from 127.0.0.1, the joiner from 127.0.0.3 (two machines)."""
    start = time.perf_counter()
    with trio.fail_after(timeout):
        async with connect(url, local_address=HONEST) as host, connect(url, local_address=HONEST_GUEST) as guest:
            ticket = await host.create_room(password=PASSWORD)
            await guest.join(ticket.room, password=PASSWORD)
            # each side its own bytes: a seat's frame that repeats the other's is no news to the relay's witness
            mine, theirs = secrets.token_bytes(PAYLOAD), secrets.token_bytes(PAYLOAD)
            for i in range(frames):
                await host.send(mine + i.to_bytes(4, "big"))
                assert await _next_frame(guest) == mine + i.to_bytes(4, "big")
                await guest.send(theirs + i.to_bytes(4, "big"))
                assert await _next_frame(host) == theirs + i.to_bytes(4, "big")
            await guest.leave(done=True)
    return time.perf_counter() - start


# ------------------------------------------------------------------------------------ attacks


def _code(e: BaseException) -> str:
    """What an attack counts for an error: the relay's code, else the exception's kind."""
    found = first_of(e, RelayError)
    return found.code if found is not None else type(sole(e)).__name__


async def room_flood(url: str, stats: Counter[str]) -> None:
    while True:
        try:
            async with connect(url, local_address=ATTACKER, timeout=5) as c:
                await c.create_room()
                stats["created"] += 1
        except Exception as e:  # counted; an attack that died would prove nothing
            stats[_code(e)] += 1
            await trio.sleep(0.01)


async def squatter(url: str, stats: Counter[str]) -> None:
    async def squat(room: str) -> None:
        try:
            async with connect(url, local_address=ATTACKER, timeout=5) as c:
                await c.join(room)
                stats["squatted"] += 1
                with contextlib.suppress(RelayError):
                    while True:
                        await c.receive()  # hold the seat, say nothing
        except Exception as e:  # counted; an attack that died would prove nothing
            stats[_code(e)] += 1

    async with trio.open_nursery() as nursery:
        while True:
            try:
                async with connect(url, local_address=ATTACKER, timeout=5) as lobby:
                    while True:
                        for r in await lobby.list_rooms():
                            nursery.start_soon(squat, r.room)
                        await trio.sleep(0.05)
            except Exception as e:  # counted; an attack that died would prove nothing
                stats[_code(e)] += 1
                await trio.sleep(0.05)


async def password_guess(url: str, stats: Counter[str]) -> None:
    while True:
        try:
            async with connect(url, local_address=ATTACKER, timeout=5) as c:
                while True:
                    rooms = [r for r in await c.list_rooms() if r.password]
                    for r in rooms:
                        try:
                            await c.join(r.room, password=secrets.token_hex(4))
                        except Exception as e:  # counted; an attack that died would prove nothing
                            stats[_code(e)] += 1
                    if not rooms:
                        await trio.sleep(0.02)
        except Exception as e:  # counted; an attack that died would prove nothing
            stats[_code(e)] += 1
            await trio.sleep(0.01)


async def code_guess(url: str, stats: Counter[str]) -> None:
    while True:
        try:
            async with connect(url, local_address=ATTACKER, timeout=5) as c:
                while True:
                    try:
                        await c.join(codes.new_code(private=True))
                    except RelayError as e:
                        stats[e.code] += 1
                        if e.code == "too_many_attempts":
                            break
        except Exception as e:  # counted; an attack that died would prove nothing
            stats[_code(e)] += 1
        await trio.sleep(0.01)


async def handshake_flood(url: str, stats: Counter[str], limit: int = 1500) -> None:
    port = int(url.rsplit(":", 1)[1])
    held: list[trio.SocketStream] = []

    async def hold() -> None:
        try:
            s = await trio.open_tcp_stream("127.0.0.1", port, local_address=ATTACKER)
        except OSError:
            stats["refused"] += 1
            return
        held.append(s)
        stats["opened"] += 1
        try:
            if await s.receive_some(1) == b"":
                stats["closed_by_relay"] += 1
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            stats["closed_by_relay"] += 1
        held.remove(s)
        await s.aclose()

    async with trio.open_nursery() as nursery:
        while True:
            if len(held) < limit:
                nursery.start_soon(hold)
                await trio.sleep(0.001)
            else:
                await trio.sleep(0.05)
            stats["held_max"] = max(stats["held_max"], len(held))


async def scrypt_flood(url: str, stats: Counter[str]) -> None:
    async def loop() -> None:
        while True:
            try:
                async with connect(url, local_address=ATTACKER, timeout=5) as c:
                    while True:
                        try:
                            await c.create_room(private=True, password=secrets.token_hex(8))
                            stats["hashed"] += 1
                            await c.leave()
                        except RelayError as e:
                            stats[e.code] += 1
                            if e.code != "too_many_password_checks":
                                raise
            except Exception as e:  # counted; an attack that died would prove nothing
                stats[_code(e)] += 1
                await trio.sleep(0.01)

    async with trio.open_nursery() as nursery:
        for _ in range(8):
            nursery.start_soon(loop)


async def connection_flood(url: str, stats: Counter[str], count: int = 40) -> None:
    async def one() -> None:
        while True:
            try:
                async with connect(url, local_address=ATTACKER, timeout=5) as c:
                    stats["held"] += 1
                    stats["held_max"] = max(stats["held_max"], stats["held"])
                    try:
                        with contextlib.suppress(RelayError):
                            while True:
                                await c.list_rooms()
                                await trio.sleep(1)
                    finally:
                        stats["held"] -= 1
            except Exception as e:  # counted; an attack that died would prove nothing
                stats[_code(e)] += 1
                await trio.sleep(0.5)

    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(one)


async def joined_room_flood(url: str, stats: Counter[str]) -> None:
    while True:
        try:
            async with (
                connect(url, local_address=ATTACKER, timeout=5) as host,
                connect(url, local_address=ATTACKER, timeout=5) as guest,
            ):
                ticket = await host.create_room(private=True)
                await guest.join(ticket.room)
                await guest.send(b"x")  # a joiner that speaks is not removed
                stats["created"] += 1
        except Exception as e:  # counted; an attack that died would prove nothing
            stats[_code(e)] += 1
            await trio.sleep(0.01)


async def rebuild_flood(url: str, stats: Counter[str]) -> None:
    while True:
        try:
            async with connect(url, local_address=ATTACKER, timeout=5) as c:
                code = codes.new_code(private=True)
                made_up = SeatTicket(
                    url,
                    code,
                    codes.format_code(code),
                    0,
                    codes.new_token(),
                    6,
                    True,
                    peer_check=secrets.token_bytes(32),
                )
                await c.resume(made_up)
                stats["rebuilt"] += 1
        except Exception as e:  # counted; an attack that died would prove nothing
            stats[_code(e)] += 1
            await trio.sleep(0.01)


async def public_room_wait(url: str, join_after: float = 0.5, timeout: float = 120.0) -> float:
    """An honest host creates a public room without a password and says hello; an honest joiner comes
    ``join_after`` seconds later and retries while the seat is taken: the seconds until it has the host's
    hello (under ``squatter``: about the relay's ``first_frame_timeout``)."""
    with trio.fail_after(timeout):
        async with connect(url, local_address=HONEST) as host, connect(url, local_address=HONEST_GUEST) as guest:
            ticket = await host.create_room()
            await host.send(b"hello")
            start = time.perf_counter()
            await trio.sleep(join_after)
            while True:
                try:
                    await guest.join(ticket.room)
                    break
                except RelayError as e:
                    if e.code != "room_full":
                        raise
                    await trio.sleep(0.2)
            assert await _next_frame(guest) == b"hello"
            waited = time.perf_counter() - start
            await guest.send(b"hello back")
            while True:  # the host hears it (after a "left" for a removed squatter, if any)
                ev = await host.receive()
                if isinstance(ev, Frame):
                    break
                assert isinstance(ev, PeerNotice)
            await guest.leave(done=True)
    return waited


async def password_room_late_join(url: str, join_after: float = 2.0, timeout: float = 60.0) -> float:
    """An honest host creates a public room with a password; the joiner comes ``join_after`` seconds later
    (under ``password_guess``, after the guesser's wrong passwords) and joins with the right one: the
    seconds its join took (it fails if the room was locked)."""
    with trio.fail_after(timeout):
        async with connect(url, local_address=HONEST) as host, connect(url, local_address=HONEST_GUEST) as guest:
            ticket = await host.create_room(password=PASSWORD)
            await trio.sleep(join_after)
            start = time.perf_counter()
            await guest.join(ticket.room, password=PASSWORD)
            took = time.perf_counter() - start
            await guest.leave(done=True)
    return took


ATTACKS: dict[str, Attack] = {
    "room_flood": room_flood,
    "squatter": squatter,
    "password_guess": password_guess,
    "code_guess": code_guess,
    "handshake_flood": handshake_flood,
    "scrypt_flood": scrypt_flood,
    "connection_flood": connection_flood,
    "joined_room_flood": joined_room_flood,
    "rebuild_flood": rebuild_flood,
}


# ----------------------------------------------------------------------------------- the driver


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _attacker_main(name: str, url: str, seconds: float) -> None:
    """One attack until SIGINT (or ``seconds``): prints ``started`` once it runs, then its counts as JSON. It
    runs at the lowest CPU priority: the attacker stands for another machine, and must not win by taking
    this one's cores."""
    os.nice(19)
    stats: Counter[str] = Counter()
    began = time.perf_counter()

    async def main() -> None:
        with trio.open_signal_receiver(signal.SIGINT) as signals, trio.move_on_after(seconds):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(ATTACKS[name], url, stats)
                print("started", flush=True)
                async for _ in signals:
                    nursery.cancel_scope.cancel()

    try:
        trio.run(main)
    except BaseException as e:  # an attack torn down mid-request still reports its counts
        leaves = e.exceptions if isinstance(e, BaseExceptionGroup) else (e,)
        for leaf in leaves:
            stats[f"ended_by_{type(leaf).__name__}"] += 1
    stats["seconds"] = round(time.perf_counter() - began)
    print(json.dumps(dict(stats)), flush=True)


@contextlib.contextmanager
def relay_process() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A fresh ``koikoi relay`` (default limits) for the block: the process and its URL."""
    env = {**os.environ, "KOIKOI_STATE_DIR": tempfile.mkdtemp(prefix="koikoi-relay-abuse-")}
    relay = subprocess.Popen(
        [sys.executable, "-m", "koikoi.client.cli", "relay", "--port", "0", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        assert relay.stdout is not None
        url = relay.stdout.readline().decode().strip()
        if not url.startswith("ws://"):
            raise SystemExit("relay_abuse: the relay did not start")
        yield relay, url
    finally:
        relay.send_signal(signal.SIGTERM)
        try:
            relay.wait(timeout=30)
        except subprocess.TimeoutExpired:
            relay.kill()
            relay.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attacks", default="all", help="comma-separated attack names, or all")
    ap.add_argument(
        "--frames", type=int, default=150, help="turns each way in the honest match (the relay allows a burst of 200)"
    )
    ap.add_argument("--runs", type=int, default=7, help="honest matches per measure (the median counts)")
    ap.add_argument("--warmup", type=float, default=3.0, help="seconds of attack (once started) before measuring")
    ap.add_argument("--attacker", nargs=3, metavar=("NAME", "URL", "SECONDS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.attacker:
        _attacker_main(args.attacker[0], args.attacker[1], float(args.attacker[2]))
        return
    names = list(ATTACKS) if args.attacks == "all" else args.attacks.split(",")
    for n in names:
        if n not in ATTACKS:
            raise SystemExit(f"relay_abuse: unknown attack {n!r}; attacks: {', '.join(ATTACKS)}")

    def measure(url: str) -> float:
        return statistics.median(trio.run(honest_match, url, args.frames) for _ in range(args.runs))

    def paired(target: str, control: str) -> tuple[float, float]:
        """Medians of honest matches on ``target`` and ``control``, one on each in turn: the machine is shared,
        and whatever else slows it slows both alike."""
        on_target, on_control = [], []
        for _ in range(args.runs):
            on_target.append(trio.run(honest_match, target, args.frames))
            on_control.append(trio.run(honest_match, control, args.frames))
        return statistics.median(on_target), statistics.median(on_control)

    out: dict[str, Any] = {"frames_each_way": args.frames, "runs": args.runs, "warmup_s": args.warmup}
    with relay_process() as (relay, url):
        out["honest_match_s"] = round(measure(url), 3)
        if "squatter" in names:
            out["public_room_wait_s"] = round(trio.run(public_room_wait, url), 2)
        out["relay_rss_mb_idle"] = rss_mb(relay.pid)
    results: dict[str, Any] = {}
    for name in names:
        # each attack against a fresh relay (an address one attack locked out would blunt the next), and a
        # second fresh relay nobody attacks, the control: the honest match alternates between them
        with relay_process() as (relay, url), relay_process() as (_, control):
            before, before_control = paired(url, control)
            attacker = subprocess.Popen(
                [sys.executable, __file__, "--attacker", name, url, "600"],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            extra: dict[str, Any] = {}
            try:
                assert attacker.stdout is not None
                if attacker.stdout.readline().strip() != b"started":
                    raise SystemExit(f"relay_abuse: the {name} attack did not start")
                time.sleep(args.warmup)
                under, under_control = paired(url, control)
                rss = rss_mb(relay.pid)
                if name == "squatter":
                    extra["public_room_wait_s"] = round(trio.run(public_room_wait, url), 2)
                if name == "password_guess":
                    extra["late_password_join_s"] = round(trio.run(password_room_late_join, url), 3)
            finally:
                attacker.send_signal(signal.SIGINT)
                try:
                    text, _ = attacker.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    attacker.kill()
                    text, _ = attacker.communicate()
            stats = json.loads(text.decode().strip().splitlines()[-1]) if text.strip() else {}
            results[name] = {
                "honest_match_s": round(under, 3),
                "control_s": round(under_control, 3),
                "ratio": round(under / under_control, 2),
                "ratio_before_attack": round(before / before_control, 2),
                "relay_rss_mb": rss,
                **extra,
                "attack": stats,
            }
    out["attacks"] = results
    out["worst_ratio"] = max((r["ratio"] for r in results.values()), default=None)
    out["relay_rss_mb_max"] = max((r["relay_rss_mb"] for r in results.values()), default=None)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
