"""Modified peers and a lying relay, in memory (issue 10, part 2): the protocol's sessions through
:mod:`koikoi.testing`, with a witness that records what ``koikoi relay`` records.

The cheater is seat 1 unless said otherwise; it holds its own key and can sign anything with it.
"""

from __future__ import annotations

import pytest

from koikoi.engine.match import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, parse, parse_resend
from koikoi.protocol.session import MatchDecided
from koikoi.testing import Pair, Witness, fixed_key, make_pair, reforge

pytestmark = pytest.mark.net  # (in memory, but part of the adversary suite)

S6 = Settings(6, True)


MOVE = 10


def pair_with_relay_witness(seed: bytes, **options: object) -> Pair:
    """The harness's witness keeps time exactly as ``koikoi relay`` does (the same code)."""
    pair = make_pair(S6, ("greedy", "greedy"), seed, move_time_s=MOVE, **options)  # type: ignore[arg-type]
    assert pair.witness is not None
    return pair


def step_until(pair: Pair, done: object, limit: int = 100_000) -> None:
    for _ in range(limit):
        if done():  # type: ignore[operator]
            return
        if not pair.step():
            raise AssertionError("the match stopped before the point the test wanted")
    raise AssertionError("never reached")


def ended(pair: Pair, seat: int) -> MatchDecided:
    e = pair.sessions[seat].ended
    assert e is not None, f"seat {seat} did not end"
    return e


def _next_due(pair: Pair) -> float | None:
    """When :meth:`Pair.tick` would next move the clock to (as it computes it)."""
    due: list[float] = []
    for seat in (0, 1):
        s = pair.sessions[seat]
        w = s.wait()
        if w is None:
            continue
        started = pair.started[seat] if w.epoch == pair.epochs[seat] else pair.now
        d = s.next_deadline()
        if d is not None:
            due.append(started + d)
    return min(due) if due else None


def play_with_thinking(
    pair: Pair, think: tuple[float, float], max_moves: int = 10_000, claim_after: float | None = None
) -> None:
    """Run the match where each seat's bot takes ``think[seat]`` seconds (protocol time) per decision,
    the clocks ticking meanwhile (RESENDs, certificate requests, claims). With ``claim_after``, seat 1
    cheats: that long into each of seat 0's turns it asks the relay for a certificate of seat 0's
    silence and hands it to its session (a modified client need not wait for its own clock)."""
    for _ in range(max_moves):
        while pair.queues[0] or pair.queues[1]:
            pair.step()
        if all(s.is_finished for s in pair.sessions):
            return
        turn = next((seat for seat in (0, 1) if pair.sessions[seat].my_turn), None)
        if turn == 0 and claim_after is not None and pair.witness is not None:
            pair.now += claim_after
            pair.note(1, pair.sessions[1].witnessed(pair.witness.certify(0, pair.now)))
            pair.flush(1)
            while pair.queues[0] or pair.queues[1]:
                pair.step()
            if not pair.sessions[0].my_turn:
                continue
        target = pair.now + (think[turn] if turn is not None else 3600)
        while True:
            nxt = _next_due(pair)
            if nxt is None or nxt > target:
                break
            pair.tick()
            while pair.queues[0] or pair.queues[1]:
                pair.step()
            if turn is None or not pair.sessions[turn].my_turn:
                break
        if all(s.is_finished for s in pair.sessions):
            return
        if turn is not None and pair.sessions[turn].my_turn:
            pair.now = max(pair.now, target)
            pair.step()  # the bot's move, at last
        elif turn is None and _next_due(pair) is None:
            return
    raise AssertionError("the match did not end")


def test_a_silent_cheater_that_sends_fresh_junk_cannot_be_certified(seed: bytes = b"junk") -> None:
    """Known limit (spec/relay.md): a cheater that is awaited sends new junk frames now and then instead of
    moving; the relay sees it alive, so no certificate fits and the honest side never gets to claim. It
    must not lose either; here we measure that the match never ends (the honest side has no way out but
    leaving an unfinished, resumable match)."""
    pair = pair_with_relay_witness(seed)
    b = pair.sessions[1]
    step_until(pair, lambda: b.referee.next_seq >= 10 and b.my_turn and not any(pair.queues))
    pair.silent[1] = True
    w = pair.witness
    assert w is not None
    t_end, next_junk, i = pair.now + 600, pair.now, 0
    while pair.now < t_end and not pair.sessions[0].is_finished:
        if pair.now >= next_junk:
            w.saw(1, b"junk %d" % i, pair.now)  # a new frame: the relay sees the cheater alive
            i, next_junk = i + 1, next_junk + 8
        if pair.step():
            continue
        if not pair.tick():
            break
    assert i > 50
    e0 = pair.sessions[0].ended
    assert e0 is None or e0.outcome.winner == 0, e0.outcome  # (in fact it never ends: the known limit)


def test_a_self_signed_abort_is_the_aborters_resignation() -> None:
    """The cheater aborts citing, as evidence, a bad move it signed itself."""
    seed = b"self-abort"
    pair = pair_with_relay_witness(seed)
    a, b = pair.sessions
    step_until(pair, lambda: b.referee.next_seq >= 10 and b.my_turn and not any(pair.queues))
    key1 = fixed_key(seed, 1)
    last = b.referee.msgs[-1].frame
    r = b.referee
    bad = reforge(
        last, key1, type=MsgType.MOVE, seq=r.next_seq, prev=r.head_hash, seat=1, action=999, state_hash=bytes(32)
    )
    abort = reforge(last, key1, type=MsgType.ABORT, seq=r.next_seq, prev=r.head_hash, seat=1,
                    code="illegal_move", message="seat 0 cheated", evidence=bad, evidence2=b"")  # fmt: skip
    pair.silent[1] = True
    pair.note(0, a.receive(abort))
    pair.flush(0)
    e = ended(pair, 0)
    assert e.outcome.winner == 0, e.outcome
    rep = audit(bytes(pair.files[0]))
    assert rep.valid and rep.result["winner"] == 0, rep.to_json("seat 0")


@pytest.mark.parametrize("seed", [b"think-1", b"think-2"])
def test_two_honest_players_who_each_answer_within_the_move_time_complete_the_match(seed: bytes) -> None:
    """Each player takes 60% of the move time for every decision (6 s of 10): nobody is late."""
    pair = pair_with_relay_witness(seed)
    play_with_thinking(pair, (0.6 * MOVE, 0.6 * MOVE))
    for seat in (0, 1):
        e = ended(pair, seat)
        assert e.outcome.status == "complete", (seat, e.outcome)


def at_honest_turn(seed: bytes) -> Pair:
    """A match paused a moment into seat 0's (the honest player's) turn, mid-match."""
    pair = pair_with_relay_witness(seed)
    a = pair.sessions[0]
    step_until(pair, lambda: a.referee.next_seq >= 10 and a.my_turn and not any(pair.queues))
    return pair


def cheater_claims(pair: Pair, seed: bytes, cert: bytes) -> MatchDecided:
    """Seat 1 signs a TIMEOUT carrying ``cert`` at the head of the line and seat 0 receives it."""
    b = pair.sessions[1]
    r = b.referee
    last = r.msgs[-1].frame
    claim = reforge(last, fixed_key(seed, 1), type=MsgType.TIMEOUT, seq=r.next_seq, prev=r.head_hash, seat=1,
                    certificate=cert, silent_frame=b"")  # fmt: skip
    pair.silent[1] = True
    pair.note(0, pair.sessions[0].receive(claim))
    pair.flush(0)
    return ended(pair, 0)


def _other_witness_cert(seed: bytes, room: str, pair: Pair, now: float) -> bytes:
    from koikoi.testing import witness_key

    assert pair.witness is not None
    w = Witness(witness_key(seed + b"-other"), room, seat_keys=pair.witness.seat_keys)
    w.clocks = pair.witness.clocks
    return w.certify(0, now)


CLAIMS = ["none", "garbage", "another_relay", "another_room", "too_early", "wrong_seat", "stale"]


@pytest.mark.parametrize("kind", CLAIMS)
def test_a_false_timeout_claim_is_the_claimers_resignation(kind: str) -> None:
    """A moment into the honest player's turn the cheater claims the match on time with a certificate
    that does not prove it: none, garbage, one signed by another relay, one for another room, one
    too early (the relay's genuine word, 1 s of silence), one naming the cheater as silent, and a stale
    one (genuine, from an earlier wait that has ended since)."""
    seed = b"claim-" + kind.encode()
    pair = pair_with_relay_witness(seed)
    a = pair.sessions[0]
    w = pair.witness
    assert w is not None
    stale = b""
    step_until(pair, lambda: a.referee.next_seq >= 6 and a.my_turn and not any(pair.queues))
    pair.now += 2 * MOVE
    stale = w.certify(0, pair.now)  # fits now; seat 0 moves next, which makes it stale
    step_until(pair, lambda: a.referee.next_seq >= 12 and a.my_turn and not any(pair.queues))
    pair.now += 1
    cert = {
        "none": b"",
        "garbage": b"\x93\xc4\x01x\xc4\x01y\xc4\x01z",
        "another_relay": _other_witness_cert(seed, w.room, pair, pair.now + 3 * MOVE),
        "another_room": Witness(w.key, "OTHER", seat_keys=w.seat_keys).certify(0, pair.now + 3 * MOVE),
        "too_early": w.certify(0, pair.now),
        "wrong_seat": w.certify(1, pair.now + 3 * MOVE),
        "stale": stale,
    }[kind]
    e = cheater_claims(pair, seed, cert)
    assert e.outcome.winner == 0, e.outcome
    rep = audit(bytes(pair.files[0]))
    assert rep.valid and rep.result["winner"] == 0, rep.to_json("seat 0")


def test_a_resend_flood_costs_a_bounded_number_of_answers() -> None:
    """The cheater sends 10 000 RESEND requests from sequence 0 (each answered by the whole line):
    the honest side answers a bounded number of them."""
    from koikoi.protocol.messages import resend_frame

    pair = at_honest_turn(b"flood")
    a = pair.sessions[0]
    sid = a.referee.sid
    assert sid is not None
    line = len(a.referee.msgs)
    sent = 0
    for _ in range(10_000):
        a.receive(resend_frame(sid, 0))
        sent += len(a.frames_to_send())
    assert sent <= 8 * (line + 1), (sent, line)
    for junk in (resend_frame(sid, 2**31), resend_frame(b"", 0), resend_frame(bytes(32), 0)):
        a.receive(junk)
    assert len(a.frames_to_send()) <= line + 1


def test_frames_far_ahead_are_kept_in_a_bounded_buffer() -> None:
    """The cheater signs 5 000 moves ahead of the line (valid signatures, this match): the honest side
    keeps a bounded number, and nothing ends."""
    seed = b"ahead"
    pair = at_honest_turn(seed)
    a, b = pair.sessions
    r = b.referee
    last = r.msgs[-1].frame
    key = fixed_key(seed, 1)
    for k in range(2, 5_002):
        a.receive(reforge(last, key, type=MsgType.MOVE, seq=r.next_seq + k, seat=1, action=1, state_hash=bytes(32)))
    assert len(a._buffer) <= 256, len(a._buffer)
    assert len(a._seen) <= len(a.referee.msgs) + 256, len(a._seen)
    assert a.ended is None


def test_equivocation_is_a_proven_fault() -> None:
    """The cheater signs two different moves for one sequence number: the honest side proves it."""
    seed = b"equivocation"
    pair = pair_with_relay_witness(seed)
    a, b = pair.sessions
    step_until(pair, lambda: b.referee.next_seq >= 10 and b.my_turn and not any(pair.queues))
    view = b.view()
    m = b.match
    assert m is not None
    acts = m.legal_actions()
    r = b.referee
    key = fixed_key(seed, 1)
    frames = []
    for act in acts[:2]:
        trial = m.copy()
        trial.apply(act, 1)
        frames.append(reforge(r.msgs[-1].frame, key, type=MsgType.MOVE, seq=r.next_seq, prev=r.head_hash, seat=1,
                              action=act.code, state_hash=trial.state_hash()))  # fmt: skip
    assert len(frames) == 2 and view is not None
    pair.silent[1] = True
    for f in frames:
        pair.note(0, a.receive(f))
        pair.flush(0)
    e = ended(pair, 0)
    assert e.outcome.winner == 0 and e.outcome.code == "equivocation", e.outcome
    rep = audit(bytes(pair.files[0]))
    assert rep.valid and rep.result["winner"] == 0, rep.to_json("seat 0")


def test_a_move_garbled_on_its_way_to_the_relay_does_not_lose_the_mover_the_match() -> None:
    """Seat 0's move is damaged between seat 0 and the relay (a man in the middle on ws://): the relay
    records the damaged bytes as seat 0's last frame and forwards them. The opponent, a cheater, never
    asks for the move again (its RESEND requests are not sent) and, after the move time, claims with the
    certificate, citing the damaged frame as junk. Seat 0 did move; it must not lose on time (it could
    send its unacknowledged move again while it waits, which the relay would record as news)."""
    seed = b"garbled-up"
    pair = pair_with_relay_witness(seed)
    a = pair.sessions[0]
    step_until(pair, lambda: a.referee.next_seq >= 10 and a.my_turn and not any(pair.queues))
    w = pair.witness
    assert w is not None
    pair.step()  # seat 0 moves: its frame is in transit
    assert len(pair.queues[1]) == 1
    move = pair.queues[1].popleft()
    garbled = move[:-1] + bytes([move[-1] ^ 1])
    w.saw(0, garbled, pair.now)  # what the relay received and recorded instead
    pair.queues[1].append(garbled)

    def cheater_never_asks(seat: int, index: int, frame: bytes) -> list[bytes]:
        return [] if seat == 1 and parse_resend(frame) is not None else [frame]

    pair.tamper = cheater_never_asks
    pair.run(patience=300)
    e0 = pair.sessions[0].ended
    assert e0 is None or (e0.outcome.status, e0.outcome.loser) != ("on_time", 0), e0.outcome
    # seat 0 sent its move again while it waited: it reached the opponent intact and the line went on
    assert move in [m.frame for m in pair.sessions[1].referee.msgs]


@pytest.mark.parametrize("seed", [b"refuse-1", b"refuse-2", b"refuse-3"])
def test_a_creator_that_refuses_to_reveal_loses_on_time(seed: bytes) -> None:
    """Seed grinding's escape (the creator sees the joiner's VALUE, knows the deal, and does not reveal)
    is silence at sequence 4: the joiner gets the relay's certificate and wins on time; both
    transcripts say so. (``seed_grinding.py`` measures what the escape gains: nothing.)"""
    pair = pair_with_relay_witness(seed)
    step_until(pair, lambda: bool(pair.queues[0]) and parse(pair.queues[0][0]).type is MsgType.VALUE)
    pair.silent[0] = True  # the creator reveals nothing more
    pair.run(patience=300)
    for seat in (0, 1):
        e = ended(pair, seat)
        assert e.outcome.status == "on_time" and e.outcome.winner == 1, (seat, e.outcome)
        rep = audit(bytes(pair.files[seat]))
        assert rep.valid and rep.status == "on_time" and rep.result["winner"] == 1, rep.to_json(f"seat {seat}")
