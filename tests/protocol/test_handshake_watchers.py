"""HELLO's ``watchers`` (a room setting, compared like the deck) and ``publish`` (each player's own consent,
never compared): both bound in the session id, carried by the events and the session, reported by the audit
(spec/protocol.md §2.2, §3, §10, §11)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.codes import Code
from koikoi.protocol.errors import ProtocolError
from koikoi.protocol.handshake import HelloField
from koikoi.protocol.messages import MsgType, parse, public_bytes, session_id
from koikoi.protocol.session import MatchDecided, MatchStarted, RoomSettings, Session
from koikoi.protocol.transcript import parse_transcript
from koikoi.testing import fixed_key, make_pair, reforge, run_match


def _ended(events: Sequence[object]) -> MatchDecided:
    [end] = [e for e in events if isinstance(e, MatchDecided)]
    return end


@pytest.mark.parametrize("deck", ["shared", "sealed"])
def test_a_joiner_expecting_no_watchers_in_a_room_that_allows_them_ends_settings_mismatch(deck: str) -> None:
    r = run_match(Settings(6), seed=b"watchers mismatch", deck=deck, watchers=True, join_watchers=False)
    assert not r.stalled
    for seat, you, opp in ((0, "yes", "no"), (1, "no", "yes")):
        o = _ended(r.events[seat]).outcome
        assert (o.status, o.code, o.winner, o.loser) == ("abandoned", Code.SETTINGS_MISMATCH, None, None)
        assert o.message == f"watchers: you {you}, opponent {opp}"
        assert r.sessions[seat].match is None and r.sessions[seat].match_id is None
        assert r.sessions[seat].referee.mismatch == [(HelloField.WATCHERS, True, False)]
    assert [e.watchers for e in r.events[1] if isinstance(e, RoomSettings)] == [True]
    assert r.transcripts[0] == r.transcripts[1]  # both HELLOs on both sides
    for t in r.transcripts:
        rep = audit(t)
        assert (rep.status, rep.valid) == ("abandoned", True)
        assert rep.ending is not None and rep.ending["code"] == "settings_mismatch"
        assert rep.ending["message"] == "watchers: creator yes, joiner no"
        assert rep.settings is not None and rep.settings["watchers"] is True
        assert rep.publish == [False, False]


def test_a_joiner_expecting_watchers_in_a_room_that_forbids_them_ends_settings_mismatch() -> None:
    r = run_match(Settings(6), seed=b"watchers mismatch 2", deck="sealed", watchers=False, join_watchers=True)
    assert _ended(r.events[1]).outcome.message == "watchers: you yes, opponent no"
    assert _ended(r.events[0]).outcome.code == Code.SETTINGS_MISMATCH
    assert audit(r.transcripts[0]).ending == {
        "by": None,
        "code": "settings_mismatch",
        "message": "watchers: creator no, joiner yes",
        "seq": 1,
        "loser": None,
        "witness": None,
        "evidence_verified": None,
    }


def test_watchers_and_another_setting_both_named() -> None:
    r = run_match(Settings(6), seed=b"watchers two", watchers=True, join_watchers=False, join_move_time=30)
    assert _ended(r.events[1]).outcome.message == "move time: you 30 s, opponent 120 s; watchers: you no, opponent yes"


@pytest.mark.parametrize("publish", [(True, False), (False, True), (True, True)])
def test_publish_differing_is_no_mismatch_and_both_consents_are_bound_and_reported(
    publish: tuple[bool, bool],
) -> None:
    r = run_match(Settings(6), seed=b"publish", publish=publish)
    assert not r.stalled
    for seat in (0, 1):
        assert _ended(r.events[seat]).outcome.status == "complete"
        assert r.sessions[seat].publish == publish
    assert r.transcripts[0] == r.transcripts[1]
    for rep in r.audits():
        assert (rep.status, rep.valid, rep.publish) == ("complete", True, list(publish))
        assert rep.to_json("f")["publish"] == list(publish)


@pytest.mark.parametrize(("deck", "default"), [("sealed", True), ("shared", False)])
def test_the_creators_watchers_default_to_its_decks_and_the_joiner_takes_the_creators(deck: str, default: bool) -> None:
    pair = make_pair(Settings(6), seed=b"watchers default", deck=deck)
    creator, joiner = pair.sessions
    assert creator.watchers is default and creator.publish is None
    assert joiner.watchers is False and joiner.publish is None  # a joiner naming nothing: shared until it knows
    stalled = pair.run()
    r = pair.result(stalled)
    assert not r.stalled
    for seat in (0, 1):
        [start] = [e for e in r.events[seat] if isinstance(e, MatchStarted)]
        assert start.watchers is default and r.sessions[seat].watchers is default
        assert r.sessions[seat].publish == (False, False)
    assert [e.watchers for e in r.events[1] if isinstance(e, RoomSettings)] == [default]
    for rep in r.audits():
        assert rep.settings is not None and rep.settings["watchers"] is default
    for watchers in (True, False):  # set explicitly: the room's, whatever the deck
        s = Session.create(fixed_key(b"w", 0), "ROOM", Settings(6), bytes(32), deck=deck, watchers=watchers)
        assert s.watchers is watchers


def test_a_joiner_that_names_its_watchers_shows_them_before_the_creators_hello() -> None:
    for w in (True, False):
        assert Session.join(fixed_key(b"w", 1), "ROOM", bytes(32), watchers=w).watchers is w
    assert Session.join(fixed_key(b"w", 1), "ROOM", bytes(32), deck="sealed").watchers is True


def test_the_session_id_changes_with_watchers_and_each_seats_publish() -> None:
    pks = (public_bytes(fixed_key(b"sid", 0)), public_bytes(fixed_key(b"sid", 1)))
    nonces = (b"\x01" * 32, b"\x02" * 32)
    ids = {
        session_id("ROOM", Settings(6), pks, nonces, watchers=w, publish=(p0, p1))
        for w, p0, p1 in itertools.product((False, True), repeat=3)
    }
    assert len(ids) == 8
    # and through the sessions: every other value the same, each of the three changes the match id
    seen = {_match_id(watchers=w, publish=(p0, p1)) for w, p0, p1 in itertools.product((False, True), repeat=3)}
    assert len(seen) == 8


def _match_id(*, watchers: bool, publish: tuple[bool, bool]) -> bytes:
    """The match id both seats bind, everything else fixed."""
    pair = make_pair(Settings(6), seed=b"sid", watchers=watchers, publish=publish)
    while pair.sessions[0].match_id is None or pair.sessions[1].match_id is None:
        assert pair.step()
    assert pair.sessions[0].match_id == pair.sessions[1].match_id
    return pair.sessions[0].match_id


def test_a_hello_whose_watchers_or_publish_is_not_a_bool_is_malformed() -> None:
    r = run_match(Settings(6), seed=b"hello bool")
    hello = parse_transcript(r.transcripts[0]).frames[0]
    key = fixed_key(b"hello bool", 0)
    for name, forged in (("watchers", reforge(hello, key, watchers=1)), ("publish", reforge(hello, key, publish=1))):
        with pytest.raises(ProtocolError) as e:
            parse(forged)
        assert e.value.code == Code.MALFORMED_MESSAGE and repr(name) in e.value.message
    assert parse(hello).type is MsgType.HELLO
    assert (parse(hello).field("watchers"), parse(hello).field("publish")) == (False, False)


def test_a_proposal_refuses_a_watchers_or_publish_that_is_not_a_bool() -> None:
    with pytest.raises(ValueError, match="watchers"):
        Session.create(fixed_key(b"w", 0), "ROOM", Settings(6), bytes(32), watchers=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="publish"):
        Session.join(fixed_key(b"w", 1), "ROOM", bytes(32), publish=None)  # type: ignore[arg-type]


@pytest.mark.parametrize("seat", [0, 1])
def test_a_resumed_session_keeps_its_hellos_watchers_and_publish(seat: int) -> None:
    pair = make_pair(Settings(6), seed=b"resume publish", deck="sealed", publish=(seat == 0, seat == 1))
    for _ in range(40):
        assert pair.step()
    frames = parse_transcript(bytes(pair.files[seat])).frames
    s = Session.from_transcript(fixed_key(b"resume publish", seat), frames)
    assert s.watchers is True and s.publish == (seat == 0, seat == 1)
    assert s.proposal.watchers is True and s.proposal.publish is True  # its own consent
