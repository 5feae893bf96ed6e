"""Attack: the alias-key escape (``test_adversary_attack_alias_key_stall.py``) after the deal, through a seat
let again. The client stops on the relay's ``peer_key`` only *before* the first deal (client/match_loop.py
``_check_seat_key``: "later — a room rebuilt after a relay restart — say so once; the match goes on
untimed"). But a joiner can have its seat let again in the middle of a match at will, and take it back with
any key: the match then goes on untimed, and the cheater escapes every loss.

Steps (a modified client, an honest relay, an honest host):
1. The cheater joins the honest host's room proving its real key (the one its HELLO binds: the host's check
   passes) and plays the handshake, the deal and its first moves normally — except that it sends every
   frame with the ``ctl`` flag. The honest session takes flagged messages; the witness never counts them as
   news (``clock.last_at`` stays None).
2. After ``first_frame_timeout`` (30 s) the relay removes it as a joiner that "sent nothing" (relay/core.py
   ``_remove_silent_joiner``): its key is forgotten, the room is back in the lobby, the host is told
   ``peer left``. The match is under way (dealt).
3. It waits out the bar on its address for this room (``attempts_window``, 60 s; a second address needs no
   wait) and joins again, proving an *alias* key (any fresh key). The relay binds the seat to it; the host's
   client gets ``peer joined`` with ``peer_key`` = the alias, differing from the HELLO's — the match is dealt,
   so it only says so, and goes on. The cheater asks for what it lacks and plays on, unflagged, with its real
   key as before.
4. When losing, it stops at its turn. Every certificate names the alias as seat 1's key, not the key seat
   1's HELLO binds (§7.3 step 3): rejected. The honest side waits for ever; the room's ``opponent_left``
   closing certificate (if the cheater leaves) fails the same way.

Harm: a losing cheater never loses (issue 10: "a losing player must not escape for free"); it chooses the
moment. The seat-key check before the deal (0abb260) and the end of ``seat_let_again`` (33c8caa) together
leave this door: the only "later" case the client tolerates (a rebuilt room) is not the only way the bound
key can change after the deal.

Suggested fix: a joiner that sent any frame (``in_count`` > 0: the host may have taken its HELLO) is not
removed as silent, or when its seat is let again the relay requires the next joiner to prove the removed
joiner's key (keep ``player_key``); and/or the client stops (nobody winning) on a ``peer_key`` that differs
from the HELLO's at any time in a room that was not rebuilt.
"""

from __future__ import annotations

from relay_world import World

from koikoi.protocol.messages import public_bytes
from koikoi.protocol.session import CertificateRejected, MatchDecided
from koikoi.testing import fixed_key

HONEST, CHEAT = 0, 1
MOVE = 20


def test_a_cheater_that_had_itself_removed_and_joined_again_with_another_key_still_loses_on_time() -> None:
    w = World(b"x10i-let-again-alias", MOVE)
    h, c = w.ends
    hide = [True]
    send = w.send

    def sender(end: object, d: bytes, ctl: bool) -> None:
        send(end, d, ctl or (end is c and hide[0]))  # type: ignore[arg-type]

    w.send = sender  # type: ignore[method-assign]
    w.open()  # 1. it joins with its real key (the host's check before the deal passes)
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None
    t = w.now + w.core.cfg.first_frame_timeout + 1
    while w.now < t:  # it plays, every frame flagged, until the relay removes it (a step a second)
        w.step()
        w.now += 1
        w.core.tick(w.now)
        w.pump()
    seq = cs.referee.next_seq
    assert hs.match is not None and seq > 4, "the match was dealt"
    hide[0] = False
    if any(x.get("reason") == "removed" for x in c.replies):  # 2. (a relay that keeps it: it plays on, timed)
        w.now += w.core.cfg.attempts_window + 1  # 3. the bar on its address for this room runs out
        w.core.tick(w.now)
        w.core.disconnected(w.now, c.cid)
        w.connect(c)
        alias = fixed_key(w.seed + b"-alias", CHEAT)
        assert public_bytes(alias) != public_bytes(cs.key)
        r = w.request(c, {"t": "join", "room": w.room} | w.prove(c.cid, alias), "joined")
        if r is None or r.get("t") != "joined":  # (a relay that wants the removed joiner's key: it uses it)
            r = w.request(c, {"t": "join", "room": w.room}, "joined")
        assert r is not None
        c.token, c.peer_check, c.received, c.sent = r["token"], r["peer_check"], 0, 0
        c.log.clear()
        w.note(c, cs.reconnected())
        w.pump()
    for _ in range(20_000):  # the match goes on, then it stops at one of its turns (4.)
        if hs.is_finished or h.stopped is not None:
            break
        if cs.my_turn and cs.referee.next_seq >= seq + 8 and not w.core.out:
            break
        assert w.step()
    c.silent = True
    t_end = w.now + 10 * MOVE
    while w.now < t_end and not hs.is_finished and h.stopped is None:
        w.now += 0.5
        w.core.tick(w.now)
        w.pump()
        w.tick(h)
    e = hs.ended
    why = [ev.reason for ev in h.events if isinstance(ev, CertificateRejected)]
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"the cheater, silent for {10 * MOVE} s at its turn, never lost on time after it had itself removed"
        f" mid-match and joined again with another key: the honest session ended {e} (stopped: {h.stopped});"
        f" last of {len(why)} certificates rejected: {why[-1] if why else None!r}"
    )
