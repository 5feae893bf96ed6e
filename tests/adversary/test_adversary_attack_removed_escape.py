"""Attack: a joiner that does not like the deal has itself removed as a "silent joiner" and never comes back:
the match stays unfinished for ever, the honest host unable to claim anything.

The relay frees the joiner seat when the joiner sent no *witnessed* frame within ``first_frame_timeout``
(30 s, relay/core.py ``tick`` → ``_remove_silent_joiner``: ``clock.last_at is None``). A flagged (``ctl``)
frame is never witnessed as news, but the honest session takes flagged messages all the same (spec/protocol.md
§5.2). With ``seat_let_again`` gone (33c8caa) a joiner that came back was timed again
(``test_adversary_attack_let_again_untimed.py``, its flagged variant); one that does not come back is not
covered.

Steps (a modified client, an honest relay, an honest host):
1. The cheater joins (its own key: the host's seat-key check passes) and plays the handshake and its first
   moves normally, every frame flagged. After the REVEAL it knows the seed: with the shared deck every deal of
   the match (docs/players.md: a modified client can compute every card), with the sealed deck its own hand.
2. Not liking it, it keeps flagging (or just stops) and goes away. 30 s after it joined the relay removes it:
   its key and clock are forgotten, the room is back in the lobby, the host is told ``peer left``.
3. The honest host waits for the cheater's next message. Every ``certify`` is refused ``no_opponent``
   (nobody holds seat 1); no ``room_closed`` ever comes (the host is there, the room waits in the lobby). Even
   a certificate taken before the removal would not fit: the cheater's frames were all flagged, so the witness
   names no last frame of a seat that has messages in the line (§7.3 step 6).

Harm: a losing (or merely unlucky) cheater escapes for free at the start of any match, after seeing the deal:
issue 10, "a losing player must not escape for free". The honest host is left with an unfinished match and a
room in the lobby; a person who gives up with ``q`` resigns it.

Not removing it is not enough (checked: with ``first_frame_timeout`` out of reach the room closes
``opponent_left`` after the grace with a certificate naming no last frame of seat 1, which step 6 rejects: a
seat whose every frame was flagged is never certified silent). Suggested fix: the witness takes a seat's first
frame as its last frame even when flagged (``witness_frame``: when ``last_hash`` is empty), so ``last_at`` is
set (no removal) and a certificate names the cheater's flagged HELLO, a message of its own in the line (or junk
to cite); and do not remove a joiner that sent any frame (``in_count`` > 0): the host may have taken its HELLO.
"""

from __future__ import annotations

from typing import Any

from relay_world import End, World

from koikoi.protocol.framing import encode
from koikoi.protocol.session import MatchDecided

HONEST, CHEAT = 0, 1
MOVE = 20


class NoteRefusals(World):
    """``World`` whose certificate requests may be refused for any reason (noted, then asked again later)."""

    refused: list[str]

    def request(self, end: End, obj: dict[str, Any], expect: str) -> dict[str, Any] | None:
        if obj.get("t") != "certify":
            return super().request(end, obj, expect)
        self.core.message(self.now, end.cid, encode(obj))
        self.pump()
        while end.replies:
            r = end.replies.popleft()
            if r.get("t") == "certificate":
                return r
            if r.get("t") == "error" and r.get("re") == "certify":
                self.refused.append(str(r.get("code")))
                return None
        return None


def test_a_joiner_that_has_itself_removed_after_the_deal_still_loses_on_time() -> None:
    w = NoteRefusals(b"x10i-removed-escape", MOVE)
    w.refused = []
    h, c = w.ends
    send = w.send

    def sender(end: End, d: bytes, ctl: bool) -> None:
        send(end, d, ctl or end is c)  # 1. every frame of the cheater flagged

    w.send = sender  # type: ignore[method-assign]
    w.open()
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None
    joined = w.now
    for _ in range(20_000):  # it plays a few moves, flagged, then stops at one of its turns
        if cs.my_turn and cs.referee.next_seq >= 8 and not w.core.out:
            break
        assert w.step()
    assert cs.match is not None and w.now < joined + w.core.cfg.first_frame_timeout, "dealt, within 30 s"
    c.silent = True  # 2. it stops and goes away
    w.core.disconnected(w.now, c.cid)
    c.cid = 0
    w.pump()
    notices: list[dict[str, Any]] = []
    t_end = w.now + w.core.cfg.grace + 10 * MOVE
    while w.now < t_end and not hs.is_finished:  # 3. the honest host waits and asks for certificates
        w.now += 0.5
        w.core.tick(w.now)
        w.pump()
        notices += [x for x in h.replies if x.get("t") in ("peer", "room_closed")]
        closed = [x for x in h.replies if x.get("t") == "room_closed"]
        h.replies.clear()
        if closed:
            if isinstance(closed[0].get("cert"), bytes):
                w.note(h, hs.witnessed(closed[0]["cert"]))
            break
        w.tick(h)
    e = hs.ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"the cheater saw the deal, had itself removed as a silent joiner and never lost: the honest session ended"
        f" {e}; the relay said {[(x.get('event') or x.get('reason'), x.get('reason')) for x in notices]},"
        f" certify refused {sorted(set(w.refused))} ({len(w.refused)} times)"
    )
