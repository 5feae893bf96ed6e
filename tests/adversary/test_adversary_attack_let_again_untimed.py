"""Attack: the cheater first takes the joiner seat of the honest host's room from a second address and says
nothing, so the relay removes that "silent joiner" after ``first_frame_timeout`` (30 s) and lets the seat
again; then it joins for real. relay/core.py ``_no_certificate`` refuses every certificate in a room whose
joiner seat was let again (``seat_let_again``, ``room.join_gen > 1``), for the whole match and for the
room's closing too: the cheater has made the match untimed, and stalls at will whenever it is losing.

Steps (a modified client with a second address, or any stranger; an honest relay; an honest host):
1. The honest host creates its room (here a code it drew; a private code shared with the friend works the
   same: the cheater is the friend).
2. From another address the cheater joins it (proving any key) and sends no frame. After 30 s the relay
   removes it (``peer left``, the room back in the lobby) — nothing the honest host can tell from a network
   hiccup or a stranger squatting its public room (docs/benchmarks.md: "an honest joiner waited 30.2 s for the seat,
   then played").
3. The cheater joins again from its own address, proving its own key (the one its HELLO binds), and plays.
4. When losing, it stops at its turn (``silent``), or leaves for good (``gone``). The honest session asks
   for certificates: every ``certify`` is refused ``seat_let_again``; the room's ``opponent_left`` closing
   carries none either. The honest side waits for ever, or stops with the match unfinished.

A second test does it with no second address and no squatter: the cheater sends its first 30 s of play with
the ``ctl`` flag (the witness counts no news, so the relay removes it mid-match as a joiner that "sent nothing")
and joins again a minute later with the same key; the match goes on where it was, untimed.

Harm: a losing cheater never loses; and a stranger who squats a public room for 30 s leaves the honest pair
that plays there next with a match nobody can win on time. The refusal guarded against the removed joiner's
frames being replayed in the freed seat (``test_adversary_attack_removed_joiner_replay.py``), which the seat
keys now defeat on their own (its ``keys_only`` variant).

Suggested fix: first make the other seat's client forget its frame count when the seat is let again
(``test_adversary_attack_stale_count_loss.py``: the refusal is what stops a stranger's squat from costing an
honest host a loss on time today); then drop the ``seat_let_again`` refusal: the removed joiner's key is
forgotten, the next joiner proves its own, and a certificate names it, so a replayed honest frame in another
key's seat never fits the honest HELLO (§7.3 step 3).
"""

from __future__ import annotations

import random

import pytest
from relay_world import ROOM, World, envelope

from koikoi.engine import Settings
from koikoi.engine.bots import make_bot
from koikoi.protocol.framing import encode
from koikoi.protocol.session import MatchDecided, Session
from koikoi.testing import fixed_key

HONEST, CHEAT = 0, 1
MOVE = 20


@pytest.mark.parametrize("how", ["silent", "gone"])
def test_a_cheater_that_had_the_joiner_seat_let_again_still_loses_on_time(how: str) -> None:
    w = World(b"x10h-let-again-" + how.encode(), MOVE)
    h, c = w.ends
    w.connect(h)  # 1. the honest host's room
    create = {"t": "create", "rounds": 6, "double_at_8": True, "move_time_s": MOVE, "room": ROOM}
    r = w.request(h, create, "created")
    assert r is not None
    w.room, h.token = r["room"], r["token"]
    squat = w.connect_raw("203.0.113.9")  # 2. a seat taken from another address, and nothing said there
    w.core.message(w.now, squat, encode({"t": "join", "room": w.room} | w.prove(squat, fixed_key(b"squat", 1))))
    w.pump()
    t = w.now + w.core.cfg.first_frame_timeout + 1
    while w.now < t:
        w.now += 0.5
        w.core.tick(w.now)
        w.pump()
    assert any(x.get("event") == "left" for x in h.replies), "the relay removed the silent joiner"
    w.connect(c)  # 3. the cheater joins for real, with its own key
    r = w.request(c, {"t": "join", "room": w.room}, "joined")
    assert r is not None
    c.token, c.peer_check = r["token"], r["peer_check"]
    pk = bytes(w.key.verify_key)
    h.session = hs = Session.create(
        fixed_key(w.seed, 0), w.room, Settings(6), bytes(32), move_time_s=MOVE, relay_key=pk
    )
    c.session = cs = Session.join(fixed_key(w.seed, 1), w.room, bytes([1]) * 32, relay_key=pk)
    rng = random.Random(7)
    for end in w.ends:
        end.bot = make_bot("greedy", random.Random(rng.getrandbits(64)))
        assert end.session is not None
        w.note(end, end.session.start())
    for _ in range(20_000):  # 4. it plays, then stops at one of its turns in play
        if cs.my_turn and cs.referee.next_seq >= 12 and not w.core.out:
            break
        assert w.step()
    c.silent = True
    if how == "gone":
        w.core.disconnected(w.now, c.cid)
        c.cid = 0
    said = w.wait_as_client(h, w.now + w.core.cfg.grace + 10 * MOVE)  # 5. the honest client waits
    refused = [str(x.get("code") or x.get("reason")) for x in said]
    e = hs.ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"the cheater, silent for {10 * MOVE} s at its turn ({how}), never lost on time after the joiner seat was"
        f" let again: the honest session ended {e}; the relay: {sorted(set(refused))}"
    )


def test_a_cheater_that_hid_its_first_frames_from_the_witness_and_joined_again_still_loses_on_time() -> None:
    """The same with no second address and no squatter: the cheater joins and plays, but sends every frame with
    the ``ctl`` flag (the honest session takes flagged moves; the witness never counts them as news), so after 30
    s the relay removes it as a joiner that "sent nothing"; it waits out the bar on its address for this room
    (``attempts_window``, 60 s), joins again with the same key (numbering its frames on past the host's count: a
    modified client can), sends its messages again, and plays on, now unflagged. The match goes on exactly where
    it was — and no certificate is ever given in that room."""
    w = World(b"x10h-let-again-flagged", MOVE)
    h, c = w.ends
    hide = [True]
    send = w.send

    def sender(end: object, d: bytes, ctl: bool) -> None:
        send(end, d, ctl or (end is c and hide[0]))  # type: ignore[arg-type]

    w.send = sender  # type: ignore[method-assign]
    w.open()
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None
    t = w.now + w.core.cfg.first_frame_timeout + 1
    while w.now < t:  # it plays, every frame flagged, until the relay removes it (a step a second)
        w.step()
        w.now += 1
        w.core.tick(w.now)
        w.pump()
    removed = any(x.get("reason") == "removed" for x in c.replies)  # (the relay keeps a joiner that sent frames)
    seq = cs.referee.next_seq
    assert seq > 4, "the match was under way"
    hide[0] = False
    if removed:
        w.now += w.core.cfg.attempts_window + 1
        w.core.tick(w.now)
        w.core.disconnected(w.now, c.cid)
        w.connect(c)  # it joins again, with the same key and the same session
        r = w.request(c, {"t": "join", "room": w.room}, "joined")
        assert r is not None
        c.token, c.peer_check, c.received = r["token"], r["peer_check"], 0
        for n in range(1, c.sent + 1):  # the relay numbers the new seat from 1, the host's client drops up to its
            w.core.message(w.now, c.cid, envelope(n, b"filler", True))  # count of the old one: fill the gap
        c.log.clear()
        w.note(c, cs.reconnected())
        w.pump()
    for _ in range(20_000):  # the match goes on, then it stops at one of its turns
        if cs.my_turn and cs.referee.next_seq >= seq + 8 and not w.core.out:
            break
        assert w.step()
    c.silent = True
    w.wait_as_client(h, w.now + 10 * MOVE)
    room = w.core.rooms[w.room]
    e = hs.ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"the cheater, silent for {10 * MOVE} s at its turn, never lost on time after it had itself removed and"
        f" joined again: the honest session ended {e}; certify: {w.core.certifier.refusal(room, CHEAT)}"
    )
