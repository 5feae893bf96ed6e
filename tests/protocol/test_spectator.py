"""The spectator (koikoi.protocol.spectator, spec/watching.md): whole matches between bots through the
in-memory harness, their frames fed in the relay's order (``spectator_world.record``: the order the harness
delivers them), ending with the audit's verdict on a seat's file; the hiding test's method (nothing the
spectator holds is a hidden card's plaintext point or a seat's secret, and the board names no card in a
hand or the deck); frames ahead of the line, repeats, junk, a crossing end message, a late watcher and a
relay that misbehaves at random. The generic adversary is tests/adversary/test_spectator_adversary.py."""

from __future__ import annotations

import json
import random

import pytest
from spectator_world import (
    Oracle,
    card_events_public,
    feed_all,
    forged_move,
    held_bytes,
    hidden_points,
    record,
    round_secrets,
    secret_values,
    spectator,
    world,
)

from koikoi.engine.cards import CARD_IDS
from koikoi.engine.match import Settings
from koikoi.protocol.audit import AuditReport, audit
from koikoi.protocol.codes import Code, Status
from koikoi.protocol.messages import Msg, MsgType, build, parse, resend_frame
from koikoi.protocol.sealed import CARD_POINTS
from koikoi.protocol.spectator import (
    MAX_AHEAD_BYTES,
    MAX_AHEAD_FRAMES,
    FaultSeen,
    KeptAhead,
    RoundCounted,
    RoundStopped,
    Spectator,
    Superseded,
    WatchEvent,
    WatchOver,
    WatchStarted,
)
from koikoi.testing import chaos, fixed_key, make_pair

WORLDS = [
    "shared",
    "sealed",
    "shared_resigned",
    "sealed_resigned",
    "sealed_crossed",
    "sealed_stopped",
    "shared_forfeit",
    "shared_on_time",
]


def _same_verdict(a: AuditReport, b: AuditReport) -> None:
    for key in ("valid", "status", "result", "ending", "rounds", "settings", "players", "first_dealer", "match_id"):
        assert getattr(a, key) == getattr(b, key), key
    assert a.messages == b.messages


def _named(board_cards: frozenset[str] | tuple[str, ...]) -> int:
    mask = 0
    for c in board_cards:
        mask |= 1 << CARD_IDS.index(c)
    return mask


def _board_mask(sp: Spectator) -> int:
    b = sp.board()
    cards = (*b.table, *b.captures[0], *b.captures[1], *((b.drawn,) if b.drawn is not None else ()))
    return _named(cards)


# -- whole matches --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", WORLDS)
def test_a_watcher_fed_in_relay_order_ends_with_the_audits_verdict(name: str) -> None:
    w = world(name)
    sp = Spectator()
    events = feed_all(sp, w.relay)
    seat = audit(w.transcripts[1])  # (both seats ended with one verdict: spectator_world checks)
    assert seat.status is w.status
    rep = sp.report()
    _same_verdict(rep, seat)
    assert sp.over and sp.match_id == w.match_id
    # the line is the seats' line, message for message
    assert [m.frame for m in sp.referee.msgs] == [m.frame for m in w.pair.sessions[0].referee.msgs]  # type: ignore[union-attr]
    # the events: started first, over last (with the same verdict), every round that counts told once
    started = [e for e in events if isinstance(e, WatchStarted)]
    assert len(started) == 1 and events.index(started[0]) == 0
    assert list(started[0].players) == rep.players and started[0].match_id == w.match_id
    assert started[0].settings.to_json() | {"watchers": None} == rep.settings | {"watchers": None}  # type: ignore[operator]
    over = events[-1]
    assert isinstance(over, WatchOver) and over.report.status is rep.status and over.report.result == rep.result
    assert sum(isinstance(e, WatchOver) for e in events) == 1
    assert [e.result.to_json() for e in events if isinstance(e, RoundCounted)] == rep.rounds
    b = sp.board()
    assert b.ending is not None and b.ending.status is w.status and b.ending.winner == w.winner
    assert list(b.points) == rep.result["points"] and b.players == tuple(rep.players)
    assert b.last_events[-1] is over


def test_a_proven_fault_is_told_and_decides_nothing_until_the_abort() -> None:
    w = world("shared_forfeit")
    sp = Spectator()
    for i, (seat, frame) in enumerate(w.relay):
        events = sp.feed(seat, frame)
        faults = [e for e in events if isinstance(e, FaultSeen)]
        if faults:
            assert faults == [faults[0]] and faults[0].seat == 1 and faults[0].code is Code.DESYNC
            assert not sp.over and not any(isinstance(e, WatchOver) for e in events)
            assert sp.board().ending is None
            rest = feed_all(sp, w.relay[i + 1 :])
            assert isinstance(rest[-1], WatchOver) and rest[-1].report.status is Status.FORFEIT
            assert rest[-1].report.ending is not None and rest[-1].report.ending["loser"] == 1
            return
    raise AssertionError("the desync was never told")


def test_a_stop_the_verification_proves_unfounded_is_told_and_the_abort_ends_the_match() -> None:
    w = world("sealed_stopped")
    sp = Spectator()
    events = feed_all(sp, w.relay)
    told = [e for e in events if isinstance(e, RoundStopped | FaultSeen | WatchOver)]
    assert told[0] == RoundStopped(1, 1) and isinstance(told[1], FaultSeen) and isinstance(told[2], WatchOver)
    assert told[1].seat == 1 and told[1].code is Code.UNFOUNDED_STOP
    assert told[2].report.status is Status.FORFEIT and not any(isinstance(e, RoundCounted) for e in events)


def test_a_resignation_that_crossed_the_disclosure_of_a_round_leaves_the_round_uncounted() -> None:
    w = world("sealed_crossed")
    sp = Spectator()
    events = feed_all(sp, w.relay)
    assert any(isinstance(e, Superseded) and e.seat == 0 for e in events)
    assert not any(isinstance(e, RoundCounted) for e in events) and sp.report().rounds == []
    assert sp.board().points == (25, 25) and sp.report().status is Status.RESIGNED


def test_hellos_that_disagree_end_the_watch_abandoned_before_it_started() -> None:
    relay: list[tuple[int, bytes]] = []
    pair = make_pair(
        Settings(rounds=6), ("greedy", "random"), b"spectator/mismatch", join_rounds=12, tamper=record(relay)
    )
    assert not pair.run()
    sp = Spectator()
    events = feed_all(sp, relay)
    assert sp.over and sp.match_id is None and [type(e) for e in events] == [WatchOver]
    rep = sp.report()
    assert rep.status is Status.ABANDONED and rep.ending is not None and rep.ending["code"] == "settings_mismatch"
    assert sp.board().ending is not None and sp.board().settings is None and sp.board().round == 0
    _same_verdict(rep, audit(pair.result(False).transcripts[1]))


def test_a_line_of_another_match_and_junk_change_nothing() -> None:
    w, other = world("shared"), world("shared_resigned")
    sp = Spectator()
    rng = random.Random(5)
    cut = len(w.relay) // 2
    feed_all(sp, w.relay[:cut])
    line = list(sp.line)
    board = sp.board()
    junk: list[object] = [
        b"",
        b"\x00",
        rng.randbytes(300),
        rng.randbytes(70_000),
        b"\x94\x04\x00",
        bytearray(b"x"),
        None,
    ]
    junk += [f for _, f in other.relay]  # another match's messages: its HELLOs are the first of a line
    junk += [resend_frame(b"", 0), resend_frame(w.match_id, 3)]
    for i, j in enumerate(junk):
        assert sp.feed(i % 2, j) == []  # type: ignore[arg-type]
    for seat in (2, -1, True, "0"):
        assert sp.feed(seat, w.relay[cut][1]) == []  # type: ignore[arg-type]
    assert sp.line == line and sp.board() == board
    c = sp.counts
    assert c.resends == 2 and c.junk >= 6 and c.dropped >= len(other.relay) - 2
    feed_all(sp, w.relay[cut:])
    _same_verdict(sp.report(), audit(w.transcripts[0]))


def test_a_watcher_given_its_room_and_relay_drops_another_lines_hello() -> None:
    """A HELLO of another relay's room fed first: a watcher that knows its room and relay drops it and follows
    its own line; one that knows neither takes the first HELLO it is fed (as a joiner would), and the line
    it then waits for never comes."""
    w, other = world("shared"), world("shared_resigned")
    sp = spectator(w)
    assert sp.feed(*other.relay[0]) == [] and sp.counts.dropped == 1
    feed_all(sp, w.relay)
    _same_verdict(sp.report(), audit(w.transcripts[0]))
    blind = Spectator()
    blind.feed(*other.relay[0])
    feed_all(blind, w.relay)
    assert not blind.over and blind.line == [other.relay[0][1]]


def test_every_frame_twice_makes_no_event_twice() -> None:
    w = world("shared")
    once = Spectator()
    events = feed_all(once, w.relay)
    twice = Spectator()
    doubled = [x for pair in zip(w.relay, w.relay, strict=True) for x in pair]
    assert [e.to_json() for e in feed_all(twice, doubled)] == [e.to_json() for e in events]
    assert feed_all(twice, w.relay) == []
    assert twice.line == once.line and twice.counts.accepted == once.counts.accepted
    assert twice.counts.held >= once.counts.held + 2 * len(once.line)  # each accepted frame's second and third copy


def test_a_late_watcher_and_a_reconnecting_one_see_the_same_match() -> None:
    """A watcher that gets the log from its start at the end of the match, and one whose connection dropped
    and that is sent the log again from an earlier index: the same events, the same verdict."""
    w = world("shared_resigned")
    live = Spectator()
    events = feed_all(live, w.relay)
    late = Spectator()
    assert [e.to_json() for e in feed_all(late, list(w.relay))] == [e.to_json() for e in events]
    again = Spectator()
    k = len(w.relay) // 2
    told = feed_all(again, w.relay[:k]) + feed_all(again, w.relay[k // 2 :])
    assert [e.to_json() for e in told] == [e.to_json() for e in events]


# -- ahead of the line -------------------------------------------------------------------------------


def test_messages_ahead_of_a_gap_are_kept_and_applied_once_it_fills() -> None:
    w = world("sealed_resigned")
    ref = Spectator()
    feed_all(ref, w.relay)
    k = next(i for i, (_, f) in enumerate(w.relay) if f in ref.line and parse(f).seq == 12)
    sp = Spectator()
    feed_all(sp, w.relay[:k] + w.relay[k + 1 :])
    assert sp.board().ending is None and len(sp.line) == 12 and len(sp.ahead) > 0
    events = sp.feed(*w.relay[k])
    assert sp.over and isinstance(events[-1], WatchOver) and len(sp.ahead) == 0
    assert sp.line == ref.line
    _same_verdict(sp.report(), audit(w.transcripts[1]))


def _msg(seq: int, size: int) -> Msg:
    frame = seq.to_bytes(4, "big") + bytes(size)
    return Msg(MsgType.MOVE, bytes(32), seq, bytes(32), 0, (), bytes(64), frame, seq.to_bytes(32, "big"))


def test_the_messages_kept_ahead_are_bounded_oldest_out_first() -> None:
    kept = KeptAhead()
    lost = sum(kept.keep(_msg(100 + i, 10)) for i in range(MAX_AHEAD_FRAMES + 44))
    assert lost == 44 and len(kept) == MAX_AHEAD_FRAMES
    assert [m.seq for m in kept.take(100 + 50)] == list(range(144, 151))  # the 44 oldest went first
    assert kept.keep(_msg(200, 10)) == 0 and kept.keep(_msg(200, 10)) == 0  # a repeat is kept once
    big = KeptAhead()
    for i in range(40):
        big.keep(_msg(i + 10, 60_000))
        assert big.bytes <= MAX_AHEAD_BYTES
    n = len(big)
    assert n == MAX_AHEAD_BYTES // 60_004 and [m.seq for m in big.take(1000)] == list(range(50 - n, 50))
    assert big.bytes == 0 and len(big) == 0


def test_a_watcher_keeps_at_most_the_bound_ahead_of_its_line() -> None:
    """Signed messages far ahead of the line (a cheating player can sign any number): the oldest go first."""
    w = world("shared")
    sp = Spectator()
    feed_all(sp, w.relay[:8])
    n = sp.referee.next_seq
    key = fixed_key(w.seed, 0)
    for i in range(MAX_AHEAD_FRAMES + 20):
        sp.feed(0, build(key, MsgType.MOVE, w.match_id, n + 10 + i, bytes(32), 0, [0, bytes(32)]))
    assert len(sp.ahead) == MAX_AHEAD_FRAMES and sp.counts.ahead_lost == 20
    feed_all(sp, w.relay[8:])
    assert sp.over and sp.report().status is w.status and len(sp.ahead) == 0


# -- endings that cross ----------------------------------------------------------------------------------


@pytest.mark.parametrize("resign_first", [False, True], ids=["move first", "resign first"])
def test_a_resignation_that_crossed_a_move_supersedes_it(resign_first: bool) -> None:
    """Seat 1 resigns without having seen seat 0's MOVE at the same place: in either order the resignation
    stands, the move leaves the line (told as superseded) and the board is as it was before it."""
    w = world("shared")
    sp = Spectator()
    order = [(s, f, parse(f)) for s, f in w.relay]
    i = next(i for i, (_, _, m) in enumerate(order) if m.type is MsgType.MOVE and m.seat == 0 and m.seq > 8)
    feed_all(sp, [(s, f) for s, f, _ in order[:i]])
    before = sp.board()
    move = order[i][2]
    resign = build(fixed_key(w.seed, 1), MsgType.RESIGN, w.match_id, move.seq, move.prev, 1, [])
    if resign_first:
        sp.feed(1, resign)
        assert sp.feed(0, move.frame) == [] and sp.counts.dropped == 1
    else:
        sp.feed(0, move.frame)
        assert sp.board().table != before.table or sp.board().captures != before.captures
        events = sp.feed(1, resign)
        assert events[0] == Superseded(0, 1) and isinstance(events[-1], WatchOver)
    after = sp.board()
    assert (after.table, after.captures, after.hand_counts, after.round) == (
        before.table,
        before.captures,
        before.hand_counts,
        before.round,
    )
    rep = sp.report()
    assert rep.status is Status.RESIGNED and rep.ending is not None and rep.ending["loser"] == 1
    assert rep.superseded == (0 if resign_first else 1)


# -- never a hidden card ----------------------------------------------------------------------------------


def _disclosed(sp: Spectator) -> set[bytes]:
    return {s for m in sp.referee.msgs + sp.referee.superseded if m.type is MsgType.DISCLOSE for s in m.body[0]}


@pytest.mark.parametrize("name", ["sealed_resigned", "sealed"])
def test_a_sealed_watcher_holds_no_hidden_card_and_no_secret(name: str) -> None:
    """The hiding test's method (tests/protocol/test_sealed_match.py ``_walk``), at every frame (every fourth
    in the long match): no bytes the spectator holds are the plaintext point of a card in a hand or the
    deck, a private key, a match secret or a round secret not yet disclosed; the board and the events name
    only cards the rules turned face up."""
    w = world(name)
    sp, oracle = Spectator(), Oracle(w)
    forbidden = secret_values(w) | {s for r in range(1, 7) for s in round_secrets(w, r)}
    walked = 0
    for i, (seat, frame) in enumerate(w.relay):
        events = sp.feed(seat, frame)
        hidden = oracle.hidden(sp.referee)
        assert not _board_mask(sp) & hidden, i
        assert not card_events_public(events, sp.referee, oracle), i
        if name == "sealed" and i % 4:
            continue
        held = held_bytes(sp)
        assert not hidden_points(hidden) & held, i
        assert not (forbidden - _disclosed(sp)) & held, i
        walked += hidden != 0
    assert walked > 20 and sp.over
    # the walk sees what the spectator holds: a hidden card's point put in it is found
    hidden = oracle.hidden(sp.referee)
    c = next(c for c in range(48) if hidden >> c & 1)
    sp.referee.chain.superseded.append(Msg(MsgType.MOVE, b"", 0, b"", 0, (CARD_POINTS[c],), b"", b"", b""))
    assert hidden_points(hidden) & held_bytes(sp)


def test_a_shared_watcher_could_compute_every_card_and_shows_none_of_them() -> None:
    """In shared mode the spectator's match holds both hands and the deck (it replays the seed): the board
    and the events still name only cards the rules turned face up."""
    for name in ("shared", "shared_resigned", "shared_on_time"):
        w = world(name)
        sp, oracle = Spectator(), Oracle(w)
        knew = False
        for i, (seat, frame) in enumerate(w.relay):
            events = sp.feed(seat, frame)
            m = sp.referee.match
            hidden = oracle.hidden(sp.referee)
            if m is not None and not m.is_over:
                assert m.hand(0) | m.hand(1) == hidden & (m.hand(0) | m.hand(1))  # the match knows the hands
                knew = knew or m.hand(0) != 0
            assert not _board_mask(sp) & hidden, (name, i)
            assert not card_events_public(events, sp.referee, oracle), (name, i)
            text = json.dumps(sp.board().to_json() | {"last_events": None})
            assert not {CARD_IDS[c] for c in range(48) if hidden >> c & 1 and f'"{CARD_IDS[c]}"' in text}, (name, i)
        assert knew


def test_forged_equivocations_are_told_as_faults_and_change_nothing() -> None:
    w = world("shared")
    sp = Spectator()
    faults: list[WatchEvent] = []
    for seat, frame in w.relay:
        sp.feed(seat, frame)
        forged = forged_move(w, frame)
        if forged is not None:
            faults += [e for e in sp.feed(1 - seat, forged) if isinstance(e, FaultSeen)]
    assert faults and all(e.code is Code.EQUIVOCATION for e in faults if isinstance(e, FaultSeen))
    _same_verdict(sp.report(), audit(w.transcripts[0]))


# -- a relay that misbehaves -----------------------------------------------------------------------------


@pytest.mark.parametrize(("deck", "seed"), [("shared", 1), ("shared", 2), ("shared", 3), ("sealed", 4)])
def test_a_watcher_behind_a_relay_that_drops_reorders_garbles_and_replays_catches_up(deck: str, seed: int) -> None:
    """The frames reach the relay through a network that misbehaves at random (``koikoi.testing.chaos``):
    the seats repair their line by RESEND, and the watcher, which asks for nothing, follows the answers
    they send each other: it ends with the seats' verdict, having kept messages ahead of the gaps."""
    relay: list[tuple[int, bytes]] = []
    s = f"spectator/chaos/{seed}".encode()
    pair = make_pair(Settings(rounds=6), ("greedy", "random"), s, deck=deck, tamper=record(relay, chaos(s, 0.08)))
    assert not pair.run()
    seat = pair.sessions[0].ended
    assert seat is not None
    sp = Spectator()
    feed_all(sp, relay)
    rep = sp.report()
    assert rep.status is seat.outcome.status and rep.result["points"] == list(seat.outcome.points)
    _same_verdict(rep, audit(pair.result(False).transcripts[0]))
    assert sp.counts.junk + sp.counts.dropped > 0 and sp.counts.ahead > 0


# -- what is told ------------------------------------------------------------------------------------------


def test_every_event_and_the_board_are_json() -> None:
    w = world("sealed_resigned")
    sp = Spectator()
    kinds = set()
    for seat, frame in w.relay:
        for e in sp.feed(seat, frame):
            j = json.loads(json.dumps(e.to_json()))
            assert j["event"] == e.kind.value
            kinds.add(e.kind.value)
        json.dumps(sp.board().to_json())
    assert {"started", "dealt", "played", "drawn", "round_counted", "yaku", "shobu", "over"} <= kinds, kinds
    over = sp.board().to_json()["last_events"][-1]
    assert over["report"]["status"] == "resigned" and "file" not in over["report"]


def test_the_board_before_and_between_rounds() -> None:
    w = world("sealed")
    sp = Spectator()
    assert sp.board().round == 0 and sp.board().table == () and sp.board().settings is None
    seen_dealing = seen_play = False
    for seat, frame in w.relay:
        sp.feed(seat, frame)
        b = sp.board()
        m = sp.referee.match
        if m is None:
            continue
        if b.table == ():  # a round being dealt: nothing on the table, no counts
            seen_dealing = True
            assert b.hand_counts == (0, 0) and b.deck_count == 0 and b.turn is None
        elif not sp.over:
            seen_play = True
            in_sight = len(b.table) + sum(map(len, b.captures)) + (b.drawn is not None)
            assert in_sight + sum(b.hand_counts) + b.deck_count == 48
        assert b.settings is not None and b.settings.deck.value == "sealed"
    assert seen_dealing and seen_play
