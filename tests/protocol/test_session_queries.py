"""What the client reads of a session's line (``Session.settings``, ``offered_settings``, ``first_dealer``,
``seed``, ``opponent_public_key``, ``next_seq``): the line's own values, as each HELLO and the reveal arrive."""

from __future__ import annotations

from koikoi.engine.deal import SeededDeal
from koikoi.engine.match import Settings, choose_first_dealer
from koikoi.protocol.session import Session
from koikoi.testing import make_pair, seat_keys


def _queries(s: Session) -> tuple[object, ...]:
    return s.next_seq, s.offered_settings, s.settings, s.opponent_public_key, s.first_dealer, s.seed


def test_the_queries_follow_the_line_from_nothing_to_the_first_deal() -> None:
    pair = make_pair(Settings(12, False), ("greedy", "greedy"), b"queries")
    creator, joiner = pair.sessions
    creator_key, joiner_key = seat_keys(b"queries")
    assert _queries(joiner) == (0, None, None, None, None, None)
    # the creator's own HELLO is in its line: offered, not yet bound (the joiner's is not there)
    assert _queries(creator) == (1, Settings(12, False), None, None, None, None)
    pair.flush(0)
    pair.receive_one(1)  # the creator's HELLO reaches the joiner, which answers with its own: bound
    assert _queries(joiner) == (2, Settings(12, False), Settings(12, False), creator_key, None, None)
    while creator.match is None:
        assert pair.step()
    assert _queries(creator)[1:4] == (Settings(12, False), Settings(12, False), joiner_key)
    assert creator.seed is not None and creator.next_seq >= 4
    assert creator.first_dealer == choose_first_dealer(SeededDeal(creator.seed))[0]
