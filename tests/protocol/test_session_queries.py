"""What the client reads of a session's line (``Session.settings``, ``offered_settings``, ``first_dealer``,
``seed``, ``opponent_public_key``, ``next_seq``): the line's own values, as each HELLO and the reveal arrive."""

from __future__ import annotations

from koikoi.engine.deal import SeededDeal
from koikoi.engine.match import Settings
from koikoi.engine.selfplay import choose_first_dealer
from koikoi.protocol.harness import make_pair, seat_keys


def test_the_queries_follow_the_line_from_nothing_to_the_first_deal() -> None:
    pair = make_pair(Settings(12, False), ("greedy", "greedy"), b"queries")
    creator, joiner = pair.sessions
    assert joiner.next_seq == 0 and joiner.offered_settings is None and joiner.opponent_public_key is None
    assert joiner.settings is None and joiner.first_dealer is None and joiner.seed is None
    # the creator's own HELLO is in its line: offered, not yet bound (the joiner's is not there)
    assert creator.next_seq == 1 and creator.offered_settings == Settings(12, False) and creator.settings is None
    assert creator.opponent_public_key is None
    pair.flush(0)
    pair.receive_one(1)  # the creator's HELLO reaches the joiner, which answers with its own: bound
    assert joiner.next_seq == 2 and joiner.settings == Settings(12, False) == joiner.offered_settings
    assert joiner.opponent_public_key == seat_keys(b"queries")[0] and joiner.first_dealer is None
    while creator.match is None:
        assert pair.step()
    assert creator.settings == Settings(12, False)
    assert creator.opponent_public_key == seat_keys(b"queries")[1]
    assert creator.seed is not None and creator.next_seq >= 4
    assert creator.first_dealer == choose_first_dealer(SeededDeal(creator.seed))[0]
