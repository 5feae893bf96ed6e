"""The relay's word on the key the opponent's seat proved, against the opponent's HELLO (client/match_loop.py
``_check_seat_key``): a seat proved with a key other than its HELLO's could never be certified silent, so a
cheater doing it would escape every loss on time (tests/adversary/test_adversary_attack_alias_key_stall.py).
Before the first deal the honest client stops, nobody winning; later it says so once and plays on."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import cast

import pytest

from koikoi.client.botspec import parse_bot_spec
from koikoi.client.link import Link
from koikoi.client.match_loop import NetGame, _Stop
from koikoi.client.output import Output
from koikoi.client.tuning import Tuning
from koikoi.engine import Settings
from koikoi.protocol.witness import fingerprint
from koikoi.testing import make_pair, seat_keys


def _game(peer_key: bytes | None, *, dealt: bool) -> tuple[NetGame, io.StringIO]:
    """Seat 0 of a pair whose HELLOs are both in (``dealt``: the first deal too), the relay saying ``peer_key``."""
    pair = make_pair(Settings(6), ("greedy", "greedy"), b"seat-key")
    s = pair.sessions[0]
    for _ in range(10_000):
        if s.referee.hellos[1] is not None and (s.match is not None) == dealt:
            break
        assert pair.step()
    assert s.referee.hellos[1] is not None and (s.match is not None) == dealt
    err = io.StringIO()
    game = NetGame(
        Output("koikoi host", False, out=err, err=err), Tuning(), bot_spec=parse_bot_spec("random"),
        lang="en", assist=False,
    )  # fmt: skip
    game.session = s
    game.link = cast(Link, SimpleNamespace(ticket=SimpleNamespace(peer_key=peer_key)))
    return game, err


def test_a_seat_proved_with_another_key_stops_the_match_before_the_deal() -> None:
    honest_hello_key = seat_keys(b"seat-key")[1]
    alias = bytes(range(32))
    game, _ = _game(alias, dealt=False)
    with pytest.raises(_Stop) as ei:
        game._check_seat_key()
    assert ei.value.code == "relay_seat_mismatch" and not ei.value.keep_seat
    assert fingerprint(alias) in ei.value.message and fingerprint(honest_hello_key) in ei.value.message
    for fine in (honest_hello_key, None):  # the same key, or the relay has not said: nothing happens
        game, _ = _game(fine, dealt=False)
        game._check_seat_key()


def test_after_the_deal_a_changed_seat_key_is_said_once_and_play_goes_on() -> None:
    game, err = _game(bytes(range(32)), dealt=True)
    game._check_seat_key()
    game._check_seat_key()
    assert err.getvalue().count("cannot certify a timeout") == 1
