"""Attack: junk to push the cheater's own messages out of the witness's memory, then an echo.

(The witness's echo rule this attack worked around is gone since; the defence that remains is the control
flag: an honest answer sends the cheater's messages flagged, so they are never the honest seat's frame.)

The witness ignores a frame "the other seat sent first" (``witness_frame``: ``h in other.seen and h not in
me.seen``), so that the honest side's answer to a RESEND from an early SEQ (the whole line, the cheater's own
messages included) never counts as the honest side's frame. But ``seen`` keeps only the last
``SEEN_HASHES`` (4096) hashes per seat. The awaited cheater sends 4097 small junk frames (at the real relay's
50 frames/s, under 90 s: the spec accepts "junk followed by silence" as certifiable), which evicts every
message it ever sent from its ``seen``; then one flagged ``RESEND(match id, 5)``. The honest side answers
with the line from 5: each of the cheater's messages in it is now, to the witness, a *new frame of the
honest seat*, and becomes its last frame (the honest side's own last message, appended at the end of the
answer, is a repeat and changes nothing). Then the cheater goes silent.

Harm: every certificate the honest side gets names, as its own last frame, one of the cheater's messages
(§7.3 step 5 fails: "stale or crossed"), for ever: the honest seat only ever sends RESENDs (flagged) and
repeats of its own frames. The losing cheater stalls for ever.

Suggested fix (one of): the witness remembers the hashes of the *other* seat's frames it forwarded for the
whole room (or at least every frame a seat sent while the other had not sent one since... simplest: an
unbounded-per-room set of the first 32 bytes is 32 B/frame, bounded by the room's frame budget), or a repeat
of a seat's frame that equals its *own* most recent new message restores it as last; or the session answers
a RESEND with the asker's own messages only when it resumed (lost tail) — i.e. never re-sends the asker's
frames otherwise.
"""

from __future__ import annotations

from in_memory import step_until

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import resend_frame
from koikoi.protocol.session import CertificateRejected
from koikoi.protocol.witness import SEEN_HASHES
from koikoi.testing import make_pair

SEED = b"x10-echo-eviction"
HONEST, CHEAT = 0, 1


def test_junk_then_an_echo_request_then_silence_still_loses_on_time() -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), SEED, move_time_s=30)
    c = pair.sessions[CHEAT]
    step_until(pair, lambda: c.referee.next_seq >= 10 and c.my_turn and not any(pair.queues), 20_000)
    pair.silent[CHEAT] = True
    sid = c.referee.sid
    assert sid is not None
    for i in range(SEEN_HASHES + 1):  # junk, unflagged: new frames to the witness
        pair.inject(CHEAT, b"\xc1junk" + i.to_bytes(4, "big"))
        pair.step()
    pair.inject(CHEAT, resend_frame(sid, 5), ctl=True)  # "send me the line from 5"
    while pair.step():
        pass
    pair.run()  # the cheater stays silent
    h = pair.sessions[HONEST]
    rejected = [e.reason for e in pair.events[HONEST] if isinstance(e, CertificateRejected)]
    assert h.ended is not None and h.ended.outcome.status == "on_time" and h.ended.outcome.winner == HONEST, (
        f"the silent cheater is never certified: {len(rejected)} certificates rejected ({rejected[-1:]})"
    )
    rep = audit(bytes(pair.files[HONEST]))
    assert rep.valid and rep.status == "on_time" and rep.result["winner"] == HONEST
