"""The sealed line's shape of a MOVE (koikoi.protocol.line_vocabulary.move_keys): only a play carries keys,
for the shape check the referee runs and for the line's judge alike."""

from __future__ import annotations

import pytest

from koikoi.engine.actions import ActionKind, from_code
from koikoi.engine.match import Settings
from koikoi.protocol.sealed import SealedFormatError
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
