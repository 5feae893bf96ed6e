"""Attack: the cheater sends its real moves with the relay's ``ctl`` flag, then stalls.

The witness takes every ``ctl`` frame as a request to send again: never the seat's last frame (spec §7.2,
``witness_frame(h=None)``). But ``Session.receive(frame, ctl=True)`` still *applies* a flagged frame that is
not a RESEND (``events = ... self._receive(frame)``) before answering it. So the cheater's move enters the
honest line while the relay's last frame from the cheater stays an older message. When the cheater then goes
silent on its turn, every certificate names, as the cheater's last frame, a message that is not its last
message in the line (§7.3 step 6), and it is not junk either: ``witnessed`` rejects it ("stale or crossed")
every time, for ever.

Harm: a losing cheater stalls the match for ever (never certified silent, never losing): it only has to
flag its last move before it stops.

Suggested fix: a frame delivered with the control flag is a request and nothing else (spec §5.2 "Any frame
delivered with the control flag is a request"): ``receive(frame, ctl=True)`` answers it and never passes it
to ``_receive`` (at most keep it in ``_dropped``); the cheater must then send its move unflagged, where the
witness sees it. An honest client flags only RESENDs; a relay that flags a real move is dropping it (it can
drop anyway), and the RESEND repair fetches it again.
"""

from __future__ import annotations

from in_memory import step_until

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.session import CertificateRejected
from koikoi.protocol.transcript import record
from koikoi.testing import make_pair

SEED = b"x10-flagged-moves"
HONEST, CHEAT = 0, 1


def test_a_cheater_that_flags_its_last_move_ctl_still_loses_on_time() -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), SEED, move_time_s=30)
    c = pair.sessions[CHEAT]
    step_until(pair, lambda: c.referee.next_seq >= 10 and c.my_turn and not any(pair.queues), 20_000)
    pair.silent[CHEAT] = True  # from here the cheater sends only what it injects by hand
    bot = pair.bots[CHEAT]
    assert bot is not None
    while c.my_turn:  # its whole turn, every message flagged ctl
        pair.note(CHEAT, c.play(bot.choose(c.view())))
        for rec in c.records():
            pair.files[CHEAT].extend(record(rec.frame))
        for f in c.frames_to_send():
            pair.inject(CHEAT, f, ctl=True)
    pair.run()  # the honest side takes the moves, plays its own, then waits for the silent cheater
    h = pair.sessions[HONEST]
    rejected = [e.reason for e in pair.events[HONEST] if isinstance(e, CertificateRejected)]
    assert h.ended is not None and h.ended.outcome.status == "on_time" and h.ended.outcome.winner == HONEST, (
        f"the silent cheater is never certified: {len(rejected)} certificates rejected ({rejected[-1:]})"
    )
    rep = audit(bytes(pair.files[HONEST]))
    assert rep.valid and rep.status == "on_time" and rep.result["winner"] == HONEST
