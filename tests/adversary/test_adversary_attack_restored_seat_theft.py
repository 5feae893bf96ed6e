"""Attack: in a room the relay rebuilds after a restart, the first seat to resume names the other seat's token
hash (``peer_check``, relay/core.py ``_on_resume``) and the relay takes its word. A cheater that resumes first
names the hash of a token IT made up, takes the honest seat with that token on a second connection, and has the
honest seat "speak" and then fall silent there; the honest client, coming back with its real token, is refused
(``bad_token``: the link gives up). The witness then certifies the honest seat silent and connected: a proven
TIMEOUT.

1. At its turn the cheater signs its move(s) on its own line (not yet sent).
2. The relay restarts (a deploy, or ``koikoi host`` restarted with its embedded relay). The cheater resumes
   first, its ``peer_check`` being ``sha256(fake token)``: the rebuilt room's other seat is now the fake token's.
3. On a second connection the cheater resumes the honest seat with the fake token and sends, as that seat, a
   copy of the honest seat's last signed message (it got it earlier): the witness's last frame of the honest seat
   is the honest seat's last message, as the referee wants (``_silent_last_ok``).
4. The cheater sends its move(s) on its own seat: witnessed (in ``recent``), forwarded to its fake connection.
5. The honest client resumes with its real token: ``bad_token`` (relay/client: not in RETRY, ``GaveUp``).
6. One move time later the cheater asks for a certificate: the honest seat silent, connected. Its session sends
   the TIMEOUT; its file audits valid, on time, the cheater the winner.

Harm: a false WIN on time for a modified client whenever the relay restarts mid-match (and it wins the race to
resume, which it can poll for); the honest seat is also locked out of its own seat.

The fix (relay/core.py): a room rebuilt after a restart certifies no silence (``certify`` refused with
``rebuilt_room``, no certificate with its ``room_closed``): the relay cannot tell who holds a seat there. A match
that goes on after a restart is no longer timed (a stall if a seat falls silent). The structural fix: each seat
proves to the relay the key its HELLO binds (a signature over the connection's nonce), the relay binds the seat to
it, and the certificate names both seats' keys; the thief proved its own key, not the honest one, so no certificate
about that seat fits the honest HELLO (spec/protocol.md §7.3, step 3). The test runs both guards alone: the
relay's refusal, and the key check with the refusal switched off.
"""

from __future__ import annotations

import pytest
from relay_world import End, World, envelope

from koikoi.protocol.audit import audit
from koikoi.protocol.framing import decode, encode
from koikoi.relay import codes
from koikoi.relay.certify import Certifier
from koikoi.relay.core import RelayConfig, RelayCore, Send
from koikoi.testing import fixed_key

HONEST, CHEAT = 0, 1
MOVE = 20


@pytest.mark.parametrize("guard", ["relay_refuses", "keys_only"])
def test_a_seat_vouched_for_by_the_other_in_a_rebuilt_room_never_loses_on_time(
    guard: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if guard == "keys_only":  # the relay certifies here after all: the seat keys alone must defeat the attack
        monkeypatch.setattr(Certifier, "refusal", lambda self, room, silent: None)
    world = World(b"x10f-restored-seat-theft", MOVE)
    world.open()
    h, c = world.ends
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None and c.bot is not None
    for _ in range(20_000):  # play on to a turn of the cheater, the honest seat having sent some messages
        if cs.my_turn and not world.core.out and h.received >= 8:
            break
        assert world.step()
    c.silent = True
    own: list[bytes] = []
    while cs.my_turn:  # 1. its turn, on its own line
        cs.play(c.bot.choose(cs.view()))
        own += cs.frames_to_send()
    world.flush(c)
    exp = cs.referee.expected()
    assert own and exp is not None and exp[0] == HONEST
    last = cs.referee.last_of(HONEST)
    assert last is not None
    honest_last = last.frame  # the cheater's copy of the honest seat's last message

    world.core = RelayCore(RelayConfig(), key=world.key)  # 2. the relay restarts (same key, rooms rebuilt)
    h.cid = c.cid = 0
    world.now += 1
    fake = "not-the-honest-token"
    c.peer_check = codes.token_hash(fake)
    world.resume(c)
    c.sent = 0

    thief = End(HONEST, session=hs, token=fake)  # 3. the honest seat, taken with the made-up token
    world.connect(thief)
    msg = {"t": "resume", "room": world.room, "seat": HONEST, "token": fake, "received": 0, "peer_check": b""}
    msg |= world.prove(thief.cid, fixed_key(world.seed, CHEAT))  # the thief can prove only its own key
    world.core.message(world.now, thief.cid, encode(msg))
    took = [decode(e.data, max_size=1 << 20) for e in world.core.out if isinstance(e, Send) and e.conn == thief.cid]
    assert took and took[0]["t"] == "resumed", took
    world.core.message(world.now, thief.cid, envelope(took[0]["received"] + 1, honest_last, False))
    world.core.out.clear()
    for f in own:  # 4. its move(s), witnessed and "delivered" (to its own connection)
        world.send(c, f, False)
    world.core.out.clear()

    world.now += 1  # 5. the honest client comes back with its real token
    world.connect(h)
    back = {
        "t": "resume",
        "room": world.room,
        "seat": HONEST,
        "token": h.token,
        "received": h.received,
        "peer_check": h.peer_check,
    } | world.prove(h.cid, fixed_key(world.seed, HONEST))
    world.core.message(world.now, h.cid, encode(back))
    world.pump()
    refused = [r for r in h.replies if r.get("t") == "error"]

    world.now += MOVE + 1  # 6. one move time later
    world.core.message(world.now, c.cid, encode({"t": "certify"}))
    world.pump()
    certified = 0
    for r in c.replies:  # (a relay that refuses to certify here leaves the cheater with nothing to claim)
        if r.get("t") == "certificate":
            certified += 1
            world.note(c, cs.witnessed(r["cert"]))
    assert certified == (guard == "keys_only")  # each guard is tested alone
    world.flush(c)
    rep = audit(bytes(c.file))
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the cheater's file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending}; the honest"
        f" seat's resume was answered {refused[-1] if refused else None}"
    )
