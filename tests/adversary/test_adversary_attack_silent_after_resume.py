"""Attack: the honest side restarts (``koikoi resume``) while the cheater is to move; the cheater never
answers again (silent, or gone: the relay's ``room_closed(opponent_left)`` certificate included).

A session rebuilt by ``Session.from_transcript`` is "resyncing" until the opponent answers its RESEND, and
``Session.witnessed`` refuses every certificate while it resyncs ("still waiting for the opponent's answer
after resuming"). The silent cheater never answers, so the honest side keeps asking for certificates (the
session emits CertificateNeeded) and rejecting them, for ever.

Harm: a losing cheater stalls for ever (never certified silent, never losing) whenever the honest player
restarted its client during the cheater's turn — it only has to stop sending (or close its client: the
relay's opponent_left certificate is refused the same way).

Suggested fix: let ``witnessed`` check the certificate during the resync too. It is safe: a claim fits only
when the witness's last frames are both seats' last messages *in the resumed (maybe truncated) line*; any
message lost from the file's tail was witnessed after them (the relay saw it), so a truncated file can
never fit a certificate (and with a relay that lost its state, last hashes are empty and nothing fits).
"""

from __future__ import annotations

from in_memory import step_until

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.session import CertificateRejected, Session
from koikoi.protocol.transcript import parse_transcript
from koikoi.testing import fixed_key, make_pair

SEED = b"x10-silent-after-resume"
HONEST, CHEAT = 0, 1
MOVE = 10


def test_a_cheater_silent_after_the_honest_side_resumed_still_loses_on_time() -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), SEED, move_time_s=MOVE)
    c = pair.sessions[CHEAT]
    step_until(pair, lambda: c.referee.next_seq >= 12 and c.my_turn and not any(pair.queues), 20_000)
    pair.silent[CHEAT] = True  # the cheater, to move, never sends anything again
    resumed = Session.from_transcript(fixed_key(SEED, HONEST), parse_transcript(bytes(pair.files[HONEST])).frames)
    pair.sessions = (resumed, c)
    pair.note(HONEST, resumed.reconnected())
    pair.flush(HONEST)
    pair.run(patience=20 * MOVE)
    rejected = [e.reason for e in pair.events[HONEST] if isinstance(e, CertificateRejected)]
    e = resumed.ended
    assert e is not None and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"{len(rejected)} certificates rejected ({rejected[-1:]}); ended: {e}"
    )
    rep = audit(bytes(pair.files[HONEST]))
    assert rep.valid and rep.status == "on_time" and rep.result["winner"] == HONEST
