"""Attack: the cite_eviction fix (e8591f8, protocol/session.py ``_keep_to_cite``) keeps the first flagged frames
dropped apart to cite only when they go through ``_receive``; a flagged RESEND with an empty match id (or any
match id while the receiver has none yet) takes the other branch of ``Session.receive`` (``rs[0]`` is empty):
``_keep_to_cite`` with ``_in_ctl`` unset, into the ordinary store of the last ``MAX_BUFFERED`` (64) frames. So a
cheater whose FIRST frame is ``RESEND(b"", 0)`` (flagged or not: the witness makes it its last frame either
way) and who then sends every frame flagged keeps that RESEND as its last frame at the witness for the whole
match; 70 more flagged ``RESEND(b"", k)`` push it out of the honest side's store, and no certificate of the
cheater's silence can ever be used (§7.3 step 6: a RESEND of no match id is junk, which must be cited).

Forms (a modified client — either seat: ``host``, ``joiner``; an honest relay, an honest opponent):
- ``first``: the cheater's first frame is ``RESEND(b"", 0)`` with the control flag: the witness names it its
  last frame (a seat's first frame, flagged, is its last: ``witness_frame``); the honest session keeps it in the
  ordinary store (``Session.receive``: the ``rs is not None`` branch). (A joiner that sent a frame keeps its
  seat.) It plays the match normally but sends every frame flagged (HELLO, moves ...): the honest side applies
  them (§5.2); none becomes its last frame at the witness. When losing, at its turn, it sends 70 distinct
  flagged ``RESEND(b"", k)`` (k = 1 … 70): each goes to the ordinary store, and the first RESEND falls out.
- ``mid_match`` (``test_adversary_attack_cite_eviction.py`` again, with requests instead of junk): it plays
  normally; when losing, at its turn, it sends one small junk frame unflagged (its last frame at the witness,
  kept in the ordinary store), then 70 flagged ``RESEND(match id, k)`` for k past the line — requests as an
  honest client sends them, each distinct — and the junk falls out of the store.
Then it stops (``silent``: connected; ``gone``: leaves). Every certificate of its silence names the RESEND (or
the junk) as its last frame; the honest side cannot cite it: rejected, for ever (the room's ``opponent_left``
certificate fails the same way). Control (checked by hand): with 30 RESENDs instead of 70 the honest side wins.

Harm: a losing cheater escapes every loss on time at will (issue 10). The frames are a few bytes (not the named
30 KiB limit).

Suggested fix: in ``Session.receive`` keep every flagged frame through the first-flagged store (set
``_in_ctl`` around the RESEND branch too, or pass ``ctl`` to ``_keep_to_cite``), and keep the opponent's very
first frame whatever its flag and kind (it is the only frame that can be its last at the witness while all
later ones are flagged); or keep only frames delivered unflagged in the ordinary store.
"""

from __future__ import annotations

import pytest
from relay_world import End, World

from koikoi.protocol.messages import resend_frame
from koikoi.protocol.session import CertificateRejected, MatchDecided

MOVE = 20


@pytest.mark.parametrize("form", ["first", "mid_match"])
@pytest.mark.parametrize("cheat", [0, 1], ids=["host", "joiner"])
@pytest.mark.parametrize("how", ["silent", "gone"])
def test_a_cheater_that_pushes_its_last_frame_out_with_resends_still_loses_on_time(
    form: str, cheat: int, how: str
) -> None:
    w = World(b"x10j-resend-cite-eviction-%s-%d-%s" % (form.encode(), cheat, how.encode()), MOVE)
    c, h = w.ends[cheat], w.ends[1 - cheat]
    send = w.send
    first = [form == "first"]

    def sender(end: End, d: bytes, ctl: bool) -> None:
        if end is c and first[0]:
            first[0] = False
            send(c, resend_frame(b"", 0), True)  # 1. its first frame, before its HELLO
        send(end, d, ctl or (end is c and form == "first"))  # (every later frame of the cheater flagged)

    w.send = sender  # type: ignore[method-assign]
    w.open()
    hs, cs = h.session, c.session
    assert hs is not None and cs is not None
    for _ in range(20_000):  # it plays, then stops at one of its turns in play
        if cs.my_turn and cs.referee.next_seq >= 12 and not w.core.out:
            break
        assert w.step()
    assert w.core.rooms[w.room].seats[cheat].token_hash is not None
    c.silent = True
    sid = cs.referee.sid
    assert sid is not None
    if form == "mid_match":
        send(c, b"\x01junk", False)  # its last frame, to the witness
    for k in range(1, 71):  # flagged requests push the first RESEND (or the junk) out of the store to cite
        w.now += 0.05
        send(c, resend_frame(b"", k) if form == "first" else resend_frame(sid, 1000 + k), True)
        w.pump()
    if how == "gone":
        w.core.disconnected(w.now, c.cid)
        c.cid = 0
    t_end = w.now + w.core.cfg.grace + 10 * MOVE
    while w.now < t_end and not hs.is_finished:  # the honest side asks for certificates
        w.now += 0.5
        w.core.tick(w.now)
        w.pump()
        closed = [r for r in h.replies if r.get("t") == "room_closed"]
        if closed:
            if isinstance(closed[0].get("cert"), bytes):
                w.note(h, hs.witnessed(closed[0]["cert"]))
            break
        w.tick(h)
    e = hs.ended
    why = [ev.reason for ev in h.events if isinstance(ev, CertificateRejected)]
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == 1 - cheat, (
        f"the cheater pushed its last frame at the witness ({form}) out of the honest side's store to cite with"
        f" flagged RESENDs; silent ({how}) for {10 * MOVE} s, it never lost: the honest session ended {e}; last of"
        f" {len(why)} certificates rejected: {why[-1] if why else None!r}"
    )
