"""Attack: after a relay restart no room and no tombstone is left, and ``create`` takes a room code the creator
names (relay/core.py ``_on_create``, ``"room"``: meant for routing). A cheater creates the match's own room code
anew on one connection (seat 0) and joins it on another (seat 1): it holds both seats, with tokens the relay
just gave it. The honest client's resume is refused (``bad_token``: the link gives up), and the witness
certifies the honest seat silent. Unlike test_adversary_attack_restored_seat_theft.py no ``peer_check`` and no
rebuilt room is involved (``room.restored`` is False): a fix limited to restored rooms does not stop it.

1. At its turn the cheater (seat 1) signs its move(s) on its own line (not yet sent).
2. The relay restarts (a deploy, or ``koikoi host`` restarted with its embedded relay: its rooms are gone).
3. The cheater creates the room with the match's code: seat 0, the honest seat, is its connection A; it sends
   there a copy of the honest seat's last signed message (the witness's last frame of seat 0 is then the honest
   seat's last message). It joins on connection B (seat 1) and sends its move(s) there: witnessed, delivered to A.
4. The honest client resumes with its real token: ``bad_token`` (relay/client: not in RETRY, ``GaveUp``).
5. One move time later B asks for a certificate: seat 0 silent, connected. The cheater's session sends the
   TIMEOUT; its file audits valid, on time, the cheater the winner.

Harm: a false WIN on time for a modified client whenever the relay restarts mid-match (it only has to win the
race to the room code, which it can poll for); the honest seat is locked out of its own match.

The fix (relay/core.py ``_on_create``): a relay takes no code of the creator's choosing for
``chosen_codes_after_s`` (600 s) after it started: it cannot know whether the code was a match's before. And the
structural fix: both connections proved the cheater's key, so the certificate names it for seat 0, not the key
the honest HELLO binds (spec/protocol.md §7.3, step 3). The test runs each guard alone.
"""

from __future__ import annotations

import pytest
from relay_world import IPS, World, envelope

from koikoi.protocol.audit import audit
from koikoi.protocol.framing import decode, encode
from koikoi.relay.core import RelayConfig, RelayCore, Send
from koikoi.testing import fixed_key

HONEST, CHEAT = 0, 1
MOVE = 20


@pytest.mark.parametrize("guard", ["relay_refuses", "keys_only"])
def test_a_room_code_created_anew_after_a_restart_never_wins_on_time(guard: str) -> None:
    world = World(b"x10f-recreated-room-theft", MOVE)
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

    # 2. the relay restarts: no rooms, no tombstones (keys_only: it takes chosen codes at once)
    core = world.core = RelayCore(
        RelayConfig(chosen_codes_after_s=600 if guard == "relay_refuses" else 0), key=world.key
    )
    h.cid = c.cid = 0
    world.now += 1

    def ask(cid: int, obj: dict[str, object]) -> dict[str, object]:
        core.message(world.now, cid, encode(obj))
        answers = [decode(e.data, max_size=1 << 20) for e in core.out if isinstance(e, Send) and e.conn == cid]
        core.out.clear()
        assert answers, obj
        first: dict[str, object] = answers[0]
        return first

    mine = fixed_key(world.seed, CHEAT)  # the cheater can prove only its own key
    a = world.connect_raw(IPS[CHEAT])  # 3. seat 0 (the honest seat's) on connection A
    create = {"t": "create", "rounds": 6, "double_at_8": True, "move_time_s": MOVE, "room": world.room}
    created = ask(a, create | world.prove(a, mine))
    b = 0
    if created["t"] == "created":  # (a relay that refuses the code leaves the cheater nothing to claim)
        core.message(world.now, a, envelope(1, last.frame, False))
        b = world.connect_raw(IPS[CHEAT])  # seat 1 on connection B
        joined = ask(b, {"t": "join", "room": world.room, **world.prove(b, mine)})
        assert joined["t"] == "joined", joined
        for n, f in enumerate(own, 1):
            core.message(world.now, b, envelope(n, f, False))
        core.out.clear()

    world.now += 1  # 4. the honest client comes back with its real token
    world.connect(h)
    back = {
        "t": "resume",
        "room": world.room,
        "seat": HONEST,
        "token": h.token,
        "received": h.received,
        "peer_check": h.peer_check,
        "settings": {"rounds": 6, "double_at_8": True, "move_time_s": MOVE, "deck": "shared"},
    } | world.prove(h.cid, fixed_key(world.seed, HONEST))
    answer = ask(h.cid, back)

    world.now += MOVE + 1  # 5. one move time later
    core.tick(world.now)
    certified = 0
    if b:
        core.message(world.now, b, encode({"t": "certify"}))
    for e in list(core.out):
        if b and isinstance(e, Send) and e.conn == b:
            r = decode(e.data, max_size=1 << 20)
            if r.get("t") == "certificate":  # (a relay that refuses leaves the cheater nothing to claim)
                certified += 1
                world.note(c, cs.witnessed(r["cert"]))
    core.out.clear()
    world.flush(c)
    assert certified == (guard == "keys_only")  # each guard is tested alone
    rep = audit(bytes(c.file))
    assert not (rep.valid and rep.result["winner"] == CHEAT), (
        f"the cheater's file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending}; the honest"
        f" seat's resume was answered {answer}"
    )
