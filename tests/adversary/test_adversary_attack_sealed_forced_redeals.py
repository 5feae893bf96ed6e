"""Attack: a non-dealer that tries to force redeal after redeal by re-locking the table as four cards of one
month. K knows O's keys for the table (step 2), so it can lock a table position as a card of its choice; but
its LOCK carries the proof that every point is the step-2 point re-keyed (spec/sealed.md §5), which a
re-locked point cannot satisfy. The honest dealer refuses the first forged LOCK at once (``bad_lock``, K's,
proven by the LOCK alone), sends nothing that depends on it, and the audit agrees.

Here the cheater peeks at O's hand (the test knows both seats) so that the forged table passes every other
check; a real cheater cannot.
"""

from __future__ import annotations

import pytest
from in_memory import step_until
from nacl.bindings import crypto_core_ed25519_scalar_mul
from nacl.bindings import crypto_scalarmult_ed25519_noclamp as mul

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, parse
from koikoi.protocol.proofs import prove_rekey
from koikoi.protocol.sealed import (
    CARD_POINTS,
    DEALER_HAND,
    MAX_ATTEMPTS,
    OTHER_HAND,
    STEP3_TAG,
    TABLE,
    Lock,
    ShuffleLock,
)
from koikoi.protocol.sealed_line import LineKind, SealedSeat, Sent
from koikoi.protocol.session import MAX_EVIDENCE_BYTES
from koikoi.protocol.transcript import parse_transcript
from koikoi.testing import make_pair

SEED = b"x11 forced redeals"


def _force_redeals(k: SealedSeat, o: SealedSeat, times: int) -> list[int]:
    """K re-locks the table of its next ``times`` deal attempts as four cards of one month (and four of the
    true table): each looks like a redeal to both seats. Returns the count of forced attempts so far."""
    forced = [0]
    begin, on_lock = k._begin_deal, k._on_shuffle_lock
    table: dict[int, int] = {}

    def forge_table() -> bool:
        table.clear()
        if forced[0] >= times:
            return begin()
        sk, so = k._sec, o.secrets_now()
        deal = [sk.permutation[so.permutation[p]] for p in range(48)]
        hands = {deal[p] for p in (*DEALER_HAND, *OTHER_HAND)}  # cards the forged table must not show
        true_table = [k._cards[p] for p in TABLE]
        month = next(m for m in range(12) if not {4 * m + i for i in range(4)} & hands)
        wanted = [c for c in range(4 * month, 4 * month + 4) if c not in true_table]
        for p in TABLE:
            if wanted and k._cards[p] // 4 != month:
                table[p] = wanted.pop()
        k._cards.update(table)
        return begin()

    def forge_lock(msg: Sent) -> None:
        on_lock(msg)
        p = k._prepared
        if not table or p is None or p.kind is not LineKind.LOCK:
            return
        lock = Lock.from_body(p.body)
        s2 = ShuffleLock.from_body(msg.body)
        points = list(lock.points)
        for pos, card in table.items():  # Z = a_i·b_i·P_card: opens as that card with the keys both publish
            points[pos] = mul(lock.key_for(pos), mul(s2.key_for(pos), CARD_POINTS[card]))
        sk = k._sec  # the cheater's best: the proof's algorithm run on its forged points (it cannot verify)
        rekey = [crypto_core_ed25519_scalar_mul(sk.keys[i], sk.mask_inverse) for i in range(48)]
        proof = prove_rekey(k.line.context(), STEP3_TAG, s2.points, points, rekey, sk.round_secret)
        k._prepared = Sent(p.seat, p.kind, tuple(Lock(tuple(points), lock.keys, lock.claim, proof).body()))
        forced[0] += 1

    k._begin_deal = forge_table  # type: ignore[method-assign]
    k._on_shuffle_lock = forge_lock  # type: ignore[method-assign]
    return forced


@pytest.mark.parametrize("times", [1, MAX_ATTEMPTS])
def test_a_forced_redeal_is_refused_at_once_as_the_cheaters_bad_lock_and_the_audit_agrees(times: int) -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed=SEED, deck="sealed")
    step_until(pair, lambda: all(s.referee.sealed is not None for s in pair.sessions))
    sls = [s.referee.sealed for s in pair.sessions]
    seats = [x for x in sls if isinstance(x, SealedSeat)]
    assert len(seats) == 2
    honest = seats[0].dealer  # round 1's dealer: the cheater is K
    cheater = 1 - honest
    forced = _force_redeals(seats[cheater], seats[honest], times)
    pair.run()
    assert forced[0] == 1  # one forged LOCK sent, no second attempt
    frames = [parse(f) for f in parse_transcript(bytes(pair.files[honest])).frames]
    assert sum(m.type is MsgType.SHUFFLE for m in frames) == 1
    end = pair.sessions[honest].ended
    assert end is not None
    o = end.outcome
    assert (o.status, o.loser, o.code, o.evidence_verified) == ("forfeit", cheater, "bad_lock", True), o
    abort = frames[-1]
    assert abort.type is MsgType.ABORT and abort.seat == honest
    # the honest dealer answered the forged LOCK (refused: not in the line, its ABORT's evidence) with nothing
    # but its ABORT: no CLAIM, no move, no key
    assert [m.type for m in frames[-3:]] == [MsgType.SHUFFLE, MsgType.SHUFFLE_LOCK, MsgType.ABORT]
    cited = parse(abort.body[2])
    assert cited.type is MsgType.LOCK and cited.seat == cheater
    assert len(abort.body[2]) <= MAX_EVIDENCE_BYTES
    rep = audit(bytes(pair.files[honest]))
    assert rep.valid and rep.status == "forfeit" and rep.ending is not None, rep.errors
    assert (rep.ending["loser"], rep.ending["code"], rep.ending["evidence_verified"]) == (cheater, "bad_lock", True)
    # the cheater's own transcript holds its forged LOCK: the audit refuses it there, with the same rule
    own = audit(bytes(pair.files[cheater]))
    assert not own.valid and [e.code for e in own.errors] == ["bad_lock"], own.errors
