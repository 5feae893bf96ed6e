"""Attack: the cheating host has the honest joiner removed for "silence" (``first_frame_timeout``), seats
an accomplice in the freed seat that replays the honest joiner's own signed frames, and then wins ON TIME
with a true certificate of the new seat-1 connection's silence.

Steps (a modified host client with a hostile network between the honest joiner and the relay; an honest
relay):
1. The honest player joins the cheater's room (seat 1). Its session starts and sends its HELLO (and what
   follows). The network passes the relay's frames to it but holds back its frames to the relay, and hands
   them to the cheater.
2. After ``first_frame_timeout`` (30 s) the relay has had no frame from seat 1: ``_remove_silent_joiner``
   frees the seat (token cleared, witness clock forgotten) and tells the honest joiner ``removed``. Its link
   then tries to take the seat back and gets ``bad_token`` once the seat is re-let: it gives up (a stall for it).
3. The cheater's accomplice joins the room (a new seat-1 token) and sends, as its own frames, the honest
   joiner's signed frames. The relay witnesses them as seat 1's (it cannot tell whose signature they carry);
   the host's session takes them: the match is bound to the honest player's HELLO and key.
4. The host plays on; its line waits for seat 1 (the honest player), whose next message the accomplice
   cannot sign. After the move time the host's unmodified session asks for a certificate: last[1] = the
   honest player's last message, the host's later messages are in ``recent`` (they were sent to "seat 1":
   the accomplice's connection), silent for > move time. The TIMEOUT fits: the host wins ``on_time`` over
   the honest player's key, and an audit of the host's file agrees.

Harm: a false win on time over an honest player who never saw the messages it "did not answer"; the
witness vouched for delivery to a connection that was not the player's.

The first fix (relay/core.py ``_no_certificate``, ``seat_let_again``): a room whose joiner seat was let again
certified no silence. That refusal is gone: it let a cheating host make any match untimed by having an accomplice
squat its room first (test_adversary_attack_let_again_untimed.py). The fix now is structural: the accomplice
proves its own key for seat 1, so the certificate names it, not the key the honest joiner's HELLO binds
(spec/protocol.md §7.3, step 3).
"""

from __future__ import annotations

from relay_world import IPS, World

from koikoi.protocol.audit import audit
from koikoi.protocol.framing import encode
from koikoi.protocol.session import MatchDecided
from koikoi.testing import fixed_key

MOVE = 20


def test_a_removed_joiner_s_frames_replayed_in_its_freed_seat_win_nothing() -> None:
    w = World(b"x10g-removed-joiner", MOVE)
    host, joiner = w.ends  # the cheater hosts (seat 0); the honest player joins (seat 1)
    held: list[tuple[bytes, bool]] = []
    send = w.send

    def network(end: object, d: bytes, ctl: bool) -> None:  # 1. the joiner's frames never reach the relay
        if end is joiner:
            held.append((d, ctl))
        else:
            send(host, d, ctl)

    w.send = network  # type: ignore[method-assign]
    w.open()
    core = w.core
    while w.now < 1000.0 + core.cfg.first_frame_timeout + 1:  # 2. the relay removes the "silent" joiner
        w.step()
        core.tick(w.now)
    assert any(r.get("reason") == "removed" for r in joiner.replies)
    assert held, "the honest joiner signed frames"
    joiner.cid = 0
    # 3. the accomplice takes the freed seat and replays the honest joiner's frames as its own
    cid = w.connect_raw("203.0.113.7")
    assert IPS[1] != "203.0.113.7"
    accomplice = fixed_key(w.seed + b"-accomplice", 1)  # it cannot prove the honest joiner's key
    core.message(w.now, cid, encode({"t": "join", "room": w.room} | w.prove(cid, accomplice)))
    w.pump()
    for n, (d, ctl) in enumerate(held, 1):
        env = {"t": "frame", "n": n, "d": d, "ctl": True} if ctl else {"t": "frame", "n": n, "d": d}
        core.message(w.now, cid, encode(env))
    w.pump()
    # 4. the host's session plays on; the line waits for the honest seat; time passes
    hs = host.session
    assert hs is not None
    ended: list[MatchDecided] = []
    for _ in range(int(10 * MOVE * 5)):
        w.now += 0.1
        core.tick(w.now)
        w.pump()
        w.tick(host)
        ended = [e for e in host.events if isinstance(e, MatchDecided)]
        if ended:
            break
    js = joiner.session
    assert js is not None and hs.referee.keys[1] == js.referee.keys[1]  # the match is bound to the honest key
    won = [e for e in ended if e.outcome.winner == 0]
    rep = audit(bytes(host.file)) if won else None
    assert not won, f"the host wins on time over the removed honest joiner: {won[0].outcome}, audit {rep}"
