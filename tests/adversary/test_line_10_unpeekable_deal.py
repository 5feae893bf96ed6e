"""Issue 19: the deal nobody can peek into. Each cheat that used to show hidden cards before the disclosure —
the dealer's sums peek (its hand positions lock sums of step-1 points, so K's keys for them name K's hand),
its duplicate peek (one step-1 point locked at its hand and at a deck position), and K's re-lock of its own
hand as cards of its choice — is refused by the honest seat's judge when the step arrives, **before** the
honest seat sends anything that depends on it (asserted on the frames it actually sent), and the match ends
with the cheater's proven fault, agreed by every verdict.

Each cheater sends its best: the honest proofs' algorithms run on the points it really sends (it cannot make
them verify).
"""

from __future__ import annotations

from collections.abc import Callable

import line_cheats
import pytest
from line_judge import fail_text, problems_if_cheater_wins
from nacl.bindings import (
    crypto_core_ed25519_add,
    crypto_core_ed25519_scalar_mul,
    crypto_scalarmult_ed25519_noclamp,
)

from koikoi.engine import Settings
from koikoi.protocol.messages import MsgType, parse
from koikoi.protocol.proofs import prove_rekey, prove_shuffle
from koikoi.protocol.sealed import (
    CARD_POINTS,
    OTHER_HAND,
    STEP2_LOCK_TAG,
    STEP2_TAG,
    STEP3_TAG,
    ShuffleLock,
)
from koikoi.protocol.transcript import parse_transcript


def _o_step2(seen: line_cheats.Seen, y: list[bytes]) -> list[object]:
    """O's SHUFFLE_LOCK with points ``y`` (its masked points and keys honest), proofs re-made for them."""
    seat = seen.line
    sec, ctx = seat._sec, seat.line.context()
    s1 = seat._round.att.s1
    honest = ShuffleLock.from_body(seen.body)
    rekey = [crypto_core_ed25519_scalar_mul(sec.keys[i], sec.mask_inverse) for i in range(48)]
    shuffle = prove_shuffle(
        ctx, STEP2_TAG, s1.points, honest.masked, sec.mask_inverse, sec.permutation, sec.round_secret
    )
    lock = prove_rekey(ctx, STEP2_LOCK_TAG, honest.masked, y, rekey, sec.round_secret)
    return list(ShuffleLock(tuple(y), honest.keys, honest.masked, shuffle, lock).body())


def sums_peek(seen: line_cheats.Seen) -> list[object]:
    sec, s1 = seen.line._sec, seen.line._round.att.s1
    y = list(seen.body[0])
    for i in range(4):  # O's hand 0-3: the sums of the step-1 points of K's hand 8-15
        j, k = sec.permutation[OTHER_HAND[2 * i]], sec.permutation[OTHER_HAND[2 * i + 1]]
        y[i] = crypto_scalarmult_ed25519_noclamp(sec.key(i), crypto_core_ed25519_add(s1.points[j], s1.points[k]))
    return _o_step2(seen, y)


def duplicate_peek(seen: line_cheats.Seen) -> list[object]:
    sec, s1 = seen.line._sec, seen.line._round.att.s1
    y = list(seen.body[0])
    y[0] = crypto_scalarmult_ed25519_noclamp(sec.key(0), s1.points[sec.permutation[30]])  # the deck card at 30
    return _o_step2(seen, y)


def relock_own_hand(seen: line_cheats.Seen) -> list[object]:
    seat = seen.line
    sec, ctx, s2 = seat._sec, seat.line.context(), seat._round.att.s2
    body = list(seen.body)
    z = list(body[0])
    held = set(seat.known_cards().values())
    wanted = next(c for c in range(48) if c not in held)
    # Z_10 = a_10 · b_10 · P_wanted: opens as the card K wants with the keys both publish
    z[10] = crypto_scalarmult_ed25519_noclamp(
        crypto_core_ed25519_scalar_mul(sec.key(10), s2.key_for(10)), CARD_POINTS[wanted]
    )
    rekey = [crypto_core_ed25519_scalar_mul(sec.keys[i], sec.mask_inverse) for i in range(48)]
    body[0] = z
    body[3] = list(prove_rekey(ctx, STEP3_TAG, s2.points, z, rekey, sec.round_secret).responses)
    return body


CHEATS: dict[str, tuple[str, Callable[[line_cheats.Seen], list[object]], str, MsgType]] = {
    "the dealer's sums peek": ("shuffle_lock", sums_peek, "bad_shuffle", MsgType.LOCK),
    "the dealer's duplicate peek": ("shuffle_lock", duplicate_peek, "bad_shuffle", MsgType.LOCK),
    "K's re-lock of its own hand": ("lock", relock_own_hand, "bad_lock", MsgType.CLAIM),
}


@pytest.mark.parametrize("name", list(CHEATS))
@pytest.mark.parametrize("round_number", [1, 2])
def test_a_peek_is_refused_before_the_honest_seat_sends_a_key_and_forfeits_the_match(
    name: str, round_number: int
) -> None:
    kind, body, rule, answer = CHEATS[name]

    def install(mp: pytest.MonkeyPatch) -> line_cheats.Fired:
        return line_cheats.cheat(mp, line_cheats.Change(kind, body), when=lambda seen: seen.round == round_number)

    pair, fired, _ = line_cheats.play(install, Settings(12), b"issue 19 unpeekable " + name.encode())
    assert fired.cheater is not None and fired.seen is not None and fired.seen.round == round_number
    cheater, honest = fired.cheater, 1 - fired.cheater
    frames = [parse(f) for f in parse_transcript(bytes(pair.files[honest])).frames]
    sent = [m for m in frames if m.seat == honest]
    # the honest seat's last message is its ABORT, citing the cheater's step; the message before it is its
    # own earlier step of that attempt (K's SHUFFLE / O's SHUFFLE_LOCK): never the answer that holds its keys
    abort = sent[-1]
    assert abort.type is MsgType.ABORT and abort.body[0] == rule, (abort.type, abort.body[:2])
    cited = parse(abort.body[2])
    assert cited.seat == cheater and cited.type.label == kind
    assert sent[-2].type is (MsgType.SHUFFLE if kind == "shuffle_lock" else MsgType.SHUFFLE_LOCK)
    assert sent[-2].seq < cited.seq and all(m.type is not answer for m in sent if m.seq > cited.seq - 2)
    assert not any(m.type in (MsgType.DRAW, MsgType.MOVE) for m in sent if m.seq > sent[-2].seq)
    end = pair.sessions[honest].ended
    assert end is not None
    o = end.outcome
    assert (o.status, o.loser, o.code, o.evidence_verified) == ("forfeit", cheater, rule, True), o
    problems = problems_if_cheater_wins(pair, honest, name)
    assert not problems, fail_text(problems)
