"""Attack: one malformed DISCLOSE that "cuts" the honest seat's messages makes the honest session sign two
different messages for one sequence number (equivocation), and the cheater wins the match on it.

Attack. In a sealed match a DISCLOSE may take a sequence number already filled by the other seat's messages
(a stop that crossed them; spec/sealed-line.md §2, spec/protocol.md §14). Referee._accept_stop_cut first
REBUILDS the line without the cut messages (``self._rebuild(seq)``) and only then checks the DISCLOSE
itself (``self.accept_msg(msg)``). If that check raises, nothing restores the line: the honest referee has
silently forgotten its own messages that the opponent already holds. The cheater (seat 0) signs a DISCLOSE
whose body is of the wrong shape (``[[]]``: no secrets) for the sequence number of the honest seat's
latest message. The honest session sees ``bad_shape`` (provable) and ABORTs citing it — at that same
sequence number, since its rebuilt referee no longer holds its own message there. It has now signed two
different messages for one sequence number; the cheater's unmodified session receives that ABORT, finds
``equivocation`` and aborts citing the two honest frames, and wins.

Harm. Goal (1): the honest side LOSES. The cheater's transcript audits valid with the cheater winning by
a proven fault of the honest seat (equivocation); the honest seat's own file does not even audit valid.
It costs the cheater one signed frame, at any point of any sealed round.

Suggested fix. In Referee._accept_stop_cut, check the DISCLOSE against the rebuilt state on a copy
(``state_before(seq).accept_msg(msg)``) and only rebuild when it is accepted; or restore the previous
line on any ProtocolError (try/except around the accept, re-applying the cut frames). Also: in
Session._abort, never sign an ABORT for a sequence number at which this seat already signed something
(compare with its own records).
"""

from __future__ import annotations

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, build
from koikoi.testing import fixed_key, make_pair

SEED = b"x11 stop cut"
CHEATER, HONEST = 0, 1


def test_a_malformed_stop_cut_makes_the_honest_seat_equivocate_and_lose() -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed=SEED, deck="sealed")
    cheater = pair.sessions[CHEATER]
    for _ in range(10_000):
        msgs = cheater.referee.msgs
        if len(msgs) > 8 and msgs[-1].seat == HONEST and not pair.queues[HONEST] and not pair.queues[CHEATER]:
            break
        assert pair.step()
    msgs = cheater.referee.msgs
    s = len(msgs) - 1  # the honest seat's latest message, already in the cheater's hands
    sid = cheater.referee.sid
    assert sid is not None
    bad = build(fixed_key(SEED, CHEATER), MsgType.DISCLOSE, sid, s, msgs[s - 1].hash, CHEATER, [[]])
    pair.inject(CHEATER, bad)
    assert not pair.run()
    ended = pair.sessions[HONEST].ended
    rep = audit(bytes(pair.files[CHEATER]))
    # the honest seat must not lose: the only bad message of the match is the cheater's
    assert not (rep.valid and rep.result.get("winner") == CHEATER), (
        f"cheater wins a valid transcript: {rep.status}, {rep.ending}; honest side saw {ended}"
    )
