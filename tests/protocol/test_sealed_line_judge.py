"""The sealed line's judge on a MOVE: only a play carries keys (koikoi.protocol.line_vocabulary.move_keys),
for the shape check the referee runs and for the judge alike; a play its keys do not open stops the round."""

from __future__ import annotations

import pytest

from koikoi.engine.actions import PLAY, ActionKind, from_code
from koikoi.engine.match import Settings
from koikoi.protocol.codes import Code
from koikoi.protocol.sealed import SealedFormatError, round_secret
from koikoi.protocol.sealed_line import LineKind, SealedObserver, Sent, audit_line, check_shape
from koikoi.testing import run_pair

SETTINGS = Settings(rounds=6)
SECRETS = (bytes([1]) * 32, bytes([2]) * 32)


def _is_decision(m: Sent) -> bool:
    return m.kind is LineKind.MOVE and from_code(m.body[0]).kind is not ActionKind.PLAY


def test_a_decision_that_carries_keys_is_its_signers_bad_shape_for_the_shape_check_the_judge_and_the_audit() -> None:
    _, line = run_pair(SETTINGS, 0, SECRETS, until=lambda line: any(_is_decision(m) for m in line))
    *before, decision = line
    assert _is_decision(decision) and decision.body[2] in ([], ())
    keyed = Sent(decision.seat, decision.kind, (decision.body[0], decision.body[1], [8, bytes(32), bytes(32)]))
    check_shape(decision, 0)  # the honest decision has the shape
    with pytest.raises(SealedFormatError, match=r"^move: only a play carries keys$"):
        check_shape(keyed, 0)
    judge = SealedObserver(SETTINGS, 0)
    for m in before:
        judge.accept(m)
    with pytest.raises(SealedFormatError, match=r"^move: only a play carries keys$"):
        judge.accept(keyed)
    judge.accept(decision)  # refused, nothing changed: the honest decision is still the one due
    audit = audit_line(SETTINGS, 0, [*before, keyed])
    assert audit.error == (keyed.seat, "bad_shape", "move: only a play carries keys")


def test_a_play_its_keys_do_not_open_taken_by_the_movers_own_judge_makes_the_receivers_stop_due() -> None:
    """The trusted seat's own judge takes the play it really sent (no refusal of its own message), and the
    line then awaits the other seat's stop; the verification names the mover's wrong_card."""
    _, line = run_pair(SETTINGS, 0, SECRETS, until=lambda line: any(m.kind is LineKind.DRAW for m in line))
    i = next(i for i, m in enumerate(line) if m.kind is LineKind.MOVE and from_code(m.body[0]).kind is ActionKind.PLAY)
    play = line[i]
    mover, receiver = play.seat, 1 - play.seat
    other = PLAY[(from_code(play.body[0]).card + 1) % 48]
    judge = SealedObserver(SETTINGS, 0, trusted=mover)
    for m in line[:i]:
        judge.accept(m)
    judge.accept(Sent(mover, LineKind.MOVE, (other.code, *play.body[1:])))
    assert judge.stop_due == receiver and judge.expected() == (receiver, LineKind.DISCLOSE)
    for s in (receiver, mover):
        secrets = [round_secret(SECRETS[s], judge.round, n) for n in range(judge.current.begun)]
        judge.accept(Sent(s, LineKind.DISCLOSE, (secrets,)))
    v = judge.verdict
    assert v is not None and v.fault is not None and v.stopped_by == receiver
    assert (v.fault.rule, v.fault.seat, v.fault.step) == (Code.WRONG_CARD, mover, "turn")
