"""Attack: an awaited cheater stalls by sending, now and then, a message it signed that is not the next one
of the line: a message of a made-up match id, or an end message behind the line (a RESIGN/ABORT at an old SEQ
whose cut holds the cheater's own later message). Each is a new frame to the witness (its silence starts
afresh). Both are now junk the claimer cites (§7.3 step 6, ``Referee._off_the_line``): the cheater's own
signatures in the line show they can never continue it. An ENDED of a made-up end is the known stall left
(spec §12: it cannot be told from an honest ENDED of an end the claimer hid).
"""

from __future__ import annotations

import pytest
from in_memory import run_while_sending, step_until

from koikoi.engine import Settings
from koikoi.protocol.messages import MsgType, build
from koikoi.protocol.session import MatchDecided
from koikoi.testing import fixed_key, make_pair

SEED = b"x10-signed-stall"
HONEST, CHEAT = 0, 1
MOVE = 10


@pytest.mark.parametrize("kind", ["other_match", "behind_line_end"])  # ("ended": a known stall, spec §12)
def test_an_awaited_cheater_sending_signed_frames_off_the_line_still_loses_on_time(kind: str) -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), SEED + kind.encode(), move_time_s=MOVE)
    c = pair.sessions[CHEAT]
    step_until(pair, lambda: c.referee.next_seq >= 12 and c.my_turn and not any(pair.queues), 20_000)
    pair.silent[CHEAT] = True
    r = c.referee
    sid = r.sid
    assert sid is not None
    key = fixed_key(SEED + kind.encode(), CHEAT)
    own = r.last_of(CHEAT)
    assert own is not None
    # a SEQ k whose message is the honest seat's, with a cheater message after it: an end there cuts its own
    k = next(i for i in range(5, own.seq) if r.msgs[i].seat == HONEST)

    def frame(i: int) -> bytes:
        tag = i.to_bytes(32, "big")
        if kind == "ended":
            return build(key, MsgType.ENDED, sid, r.next_seq, tag, CHEAT, [tag])
        if kind == "other_match":
            return build(key, MsgType.RESIGN, tag, r.next_seq, r.head_hash, CHEAT, [])
        return build(key, MsgType.ABORT, sid, k, r.msgs[k - 1].hash, CHEAT, ["desync", f"#{i}", b"", b""])

    sent: list[bytes] = []

    def send() -> None:
        sent.append(frame(len(sent)))
        pair.inject(CHEAT, sent[-1])

    run_while_sending(pair, HONEST, send, 2 * MOVE, 20 * MOVE)  # one signed frame every two move times is enough
    i = len(sent)
    e = pair.sessions[HONEST].ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"20 move times on, {i} signed frames later, the cheater is still not certified silent: {e}"
    )
