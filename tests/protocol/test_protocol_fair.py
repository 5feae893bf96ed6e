"""Modified peers in memory: the cheater never wins; the honest side wins where the fault is proven or
the silence witnessed; both sides end the same way, and both transcripts audit to it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from nacl.signing import SigningKey

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, build, msg_hash, parse, parse_resend, resend_frame
from koikoi.protocol.session import CertificateRejected, FrameDropped, MatchDecided, Session
from koikoi.protocol.transcript import encode_transcript, parse_transcript
from koikoi.protocol.witness import sign_certificate
from koikoi.testing import Pair, fixed_key, make_pair, reforge

SEED = b"fair"
HONEST, CHEAT = 0, 1


def _pair(**options: object) -> Pair:
    return make_pair(Settings(6), ("greedy", "greedy"), SEED, **options)  # type: ignore[arg-type]


def _settle(pair: Pair, after: int = 10) -> None:
    """Play (no clock) until both lines hold ``after`` messages and nothing is in transit."""
    for _ in range(10_000):
        if min(s.referee.next_seq for s in pair.sessions) >= after and not any(pair.queues):
            return
        assert pair.step()
    raise AssertionError("never settled")


def _both_end(pair: Pair, status: str, winner: int | None, code: str) -> None:
    """Both sessions ended the same way, and both transcripts audit to it."""
    for seat in (0, 1):
        end = pair.sessions[seat].ended
        assert end is not None, seat
        o = end.outcome
        assert (o.status, o.winner, o.code) == (status, winner, code), (seat, o)
        rep = audit(bytes(pair.files[seat]))
        assert rep.valid and rep.errors == [], rep.errors
        assert (rep.status, rep.result["winner"]) == (status, winner)
        assert rep.ending is not None and rep.ending["code"] == code


def _cheat_sends(pair: Pair, frame: bytes) -> None:
    """The cheater's frame goes to the honest side through the relay (the witness sees it)."""
    assert pair.witness is not None
    pair.witness.saw(CHEAT, frame, pair.now)
    pair.queues[HONEST].append(frame)


# -- ABORTs that prove nothing are their signer's resignation -------------------------------------


def _evidence(kind: str, pair: Pair) -> tuple[str, bytes, bytes]:
    r = pair.sessions[CHEAT].referee
    own, honest = r.last_of(CHEAT), r.last_of(HONEST)
    assert own is not None and honest is not None
    if kind == "own_message":
        return "desync", own.frame, b""
    if kind == "own_illegal_move":  # a bad message it signed itself, right where the line goes on
        bad = reforge(own.frame, fixed_key(SEED, CHEAT), type=MsgType.MOVE, seq=r.next_seq, prev=r.head_hash,
                      action=0, state_hash=bytes(32))  # fmt: skip
        return "illegal_move", bad, b""
    if kind == "honest_valid_message":
        return "illegal_move", honest.frame, b""
    if kind == "same_message_twice":
        return "equivocation", honest.frame, honest.frame
    if kind == "not_provable_code":
        return "bad_signature", honest.frame[:-1] + bytes([honest.frame[-1] ^ 1]), b""
    if kind == "forged_by_the_cheater":  # the honest seat's move, re-signed by the cheater's key
        return "illegal_move", reforge(honest.frame, fixed_key(SEED, CHEAT), action=0), b""
    if kind == "another_match":
        other = make_pair(Settings(6), ("greedy", "greedy"), SEED, nonces=(bytes([5]) * 32, bytes([6]) * 32))
        other.run()
        m = next(
            f
            for f in parse_transcript(bytes(other.files[0])).frames
            if parse(f).seat == HONEST and parse(f).type is MsgType.MOVE
        )
        return "desync", reforge(m, fixed_key(SEED, HONEST), state_hash=bytes(32)), b""
    raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind",
    [
        "own_message",
        "own_illegal_move",
        "honest_valid_message",
        "same_message_twice",
        "not_provable_code",
        "forged_by_the_cheater",
        "another_match",
    ],
)
def test_an_abort_that_proves_nothing_is_the_aborters_resignation(kind: str) -> None:
    pair = _pair()
    _settle(pair)
    r = pair.sessions[CHEAT].referee
    code, ev, ev2 = _evidence(kind, pair)
    lie = build(fixed_key(SEED, CHEAT), MsgType.ABORT, r.sid or b"", r.next_seq, r.head_hash, CHEAT,
                [code, "made up", ev, ev2])  # fmt: skip
    cheater_file = encode_transcript([*parse_transcript(bytes(pair.files[CHEAT])).frames, lie])
    honest = pair.sessions[HONEST]
    events = honest.receive(lie)
    pair.flush(HONEST)
    end = next(e for e in events if isinstance(e, MatchDecided)).outcome
    assert (end.status, end.code, end.by, end.loser, end.winner) == (
        "resigned", "unproven_abort", CHEAT, CHEAT, HONEST)  # fmt: skip
    assert end.evidence_verified is False
    assert not any(parse(f).type is MsgType.ABORT and parse(f).seat == HONEST
                   for f in parse_transcript(bytes(pair.files[HONEST])).frames)  # fmt: skip
    for data in (bytes(pair.files[HONEST]), cheater_file):  # both files say the same
        rep = audit(data)
        assert rep.valid and (rep.status, rep.result["winner"]) == ("resigned", HONEST)
        assert rep.ending is not None and (rep.ending["code"], rep.ending["loser"]) == ("unproven_abort", CHEAT)


# -- false TIMEOUT claims --------------------------------------------------------------------------


def _claims(pair: Pair) -> dict[str, bytes]:
    """Certificates the cheater (seat 1, waiting for the honest seat 0) could put in a TIMEOUT."""
    assert pair.witness is not None
    r = pair.sessions[CHEAT].referee
    last = (msg_hash(m.frame) if (m := r.last_of(0)) else b"", msg_hash(m.frame) if (m := r.last_of(1)) else b"")
    other = SigningKey(bytes(32))
    keys = pair.witness.seat_keys
    good = sign_certificate(pair.witness.key, "TEST-ROOM", HONEST, last, 500_000, True, seat_keys=keys)
    return {
        "none": b"",
        "forged": good[:-1] + bytes([good[-1] ^ 1]),
        "foreign": sign_certificate(other, "TEST-ROOM", HONEST, last, 500_000, True, seat_keys=keys),
        "early": sign_certificate(pair.witness.key, "TEST-ROOM", HONEST, last, 1_000, True, seat_keys=keys),
        "wrong_seat": sign_certificate(pair.witness.key, "TEST-ROOM", CHEAT, last, 500_000, True, seat_keys=keys),
        "wrong_room": sign_certificate(pair.witness.key, "OTHER", HONEST, last, 500_000, True, seat_keys=keys),
        "stale": pair.witness.certify(HONEST, pair.now + 500.0),  # the relay's word from before the last move
    }


@pytest.mark.parametrize("kind", ["none", "forged", "foreign", "early", "wrong_seat", "wrong_room", "stale"])
def test_a_false_timeout_claim_is_the_claimers_resignation(kind: str) -> None:
    pair = _pair()
    _settle(pair, 8)
    stale = _claims(pair)["stale"]
    for _ in range(10_000):  # on until the honest seat is to move, with the cheater waiting
        if pair.sessions[HONEST].my_turn and not any(pair.queues) and pair.sessions[CHEAT].referee.next_seq > 12:
            break
        assert pair.step()
    blob = stale if kind == "stale" else _claims(pair)[kind]
    cheat = pair.sessions[CHEAT]
    rejected = cheat.witnessed(blob)  # an honest session refuses to send it ...
    assert len(rejected) == 1 and isinstance(rejected[0], CertificateRejected)
    assert cheat.frames_to_send() == [] and not cheat.is_finished
    r = cheat.referee
    claim = build(fixed_key(SEED, CHEAT), MsgType.TIMEOUT, r.sid or b"", r.next_seq, r.head_hash, CHEAT,
                  [blob, b""])  # fmt: skip  # ... a modified one sends it anyway
    events = pair.sessions[HONEST].receive(claim)
    end = next(e for e in events if isinstance(e, MatchDecided)).outcome
    assert (end.status, end.code, end.by, end.loser, end.winner) == (
        "resigned", "unwitnessed_timeout", CHEAT, CHEAT, HONEST)  # fmt: skip
    pair.flush(HONEST)
    rep = audit(bytes(pair.files[HONEST]))
    assert rep.valid and rep.status == "resigned" and rep.result["winner"] == HONEST


def test_a_certificate_about_a_seat_another_key_held_at_the_relay_proves_nothing() -> None:
    """The relay binds each seat to the key that proved it; a certificate names both. A certificate that fits
    the line in every other way proves nothing when either seat was held by a key other than its HELLO's: the
    frames the witness counted were another player's (a stolen token, a rebuilt room's made-up seat)."""
    pair = _pair()
    _settle(pair, 8)
    for _ in range(10_000):
        if pair.sessions[HONEST].my_turn and not any(pair.queues) and pair.sessions[CHEAT].referee.next_seq > 12:
            break
        assert pair.step()
    w = pair.witness
    assert w is not None
    r = pair.sessions[CHEAT].referee
    now = pair.now + 3 * 120
    assert r.certificate_problem(w.certify(HONEST, now), b"", CHEAT) is None  # the true holders: it proves
    stranger = bytes(SigningKey(bytes([9] * 32)).verify_key)
    honest_key, cheat_key = w.seat_keys  # (HONEST is seat 0)
    for held in ((stranger, cheat_key), (honest_key, stranger), (b"", cheat_key)):
        w.seat_keys = held
        problem = r.certificate_problem(w.certify(HONEST, now), b"", CHEAT)
        assert problem is not None and "was held by" in problem and "HELLO" in problem, problem


# -- equivocation ------------------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["real_first", "other_first"])
def test_equivocation_forfeits_with_both_messages_as_evidence(order: str) -> None:
    pair = _pair()
    _settle(pair)
    cheat = pair.sessions[CHEAT]
    for _ in range(1000):
        if cheat.my_turn and not any(pair.queues):
            break
        assert pair.step()
    bot = pair.bots[CHEAT]
    assert bot is not None
    cheat.play(bot.choose(cheat.view()))
    pair.flush(CHEAT)
    real = pair.queues[HONEST].pop()
    other = reforge(real, fixed_key(SEED, CHEAT), state_hash=bytes(32))
    pair.queues[HONEST].extend([real, other] if order == "real_first" else [other, real])
    pair.run()
    honest_end = pair.sessions[HONEST].ended
    assert honest_end is not None
    o = honest_end.outcome
    if order == "real_first":
        assert (o.status, o.code, o.winner, o.evidence_verified) == ("forfeit", "equivocation", HONEST, True)
        abort = parse(parse_transcript(bytes(pair.files[HONEST])).frames[-1])
        assert {abort.body[2], abort.body[3]} == {real, other}  # both signed messages are the evidence
    else:  # the wrong state hash is seen first: a proven desync
        assert (o.status, o.code, o.winner) == ("forfeit", "desync", HONEST)
    _both_end(pair, "forfeit", HONEST, o.code or "")


# -- junk, silence, refusing to reveal ----------------------------------------------------------


def test_a_bad_signature_sent_again_and_again_never_ends_the_match_then_silence_loses_on_time() -> None:
    """The cheater's client breaks the signature of everything it sends: its move is dropped (never the end
    of the match), and its repeats and requests that follow are no news to the relay (spec/relay.md), so
    once the move time has passed since its last new frame the honest side wins on time, citing it."""
    pair = _pair()
    _settle(pair)
    cheat = pair.sessions[CHEAT]
    real = cheat.frames_to_send

    def broken() -> list[bytes]:  # the cheater's client breaks the signature of everything it sends
        return [f[:-1] + bytes([f[-1] ^ 1]) for f in real()]

    cheat.frames_to_send = broken  # type: ignore[method-assign]
    cheat.is_control = lambda frame: parse_resend(frame) is not None  # type: ignore[method-assign]  # junk unflagged
    assert not pair.run()
    assert all(parse(f).type is not MsgType.ABORT for f in parse_transcript(bytes(pair.files[HONEST])).frames)
    drops = [e for e in pair.events[HONEST] if isinstance(e, FrameDropped)]
    assert drops and {d.code for d in drops} == {"bad_signature"}
    _both_end(pair, "on_time", HONEST, "timeout")
    claim = parse(parse_transcript(bytes(pair.files[HONEST])).frames[-1])
    assert claim.type is MsgType.TIMEOUT and claim.body[1]  # the junk it sent last is cited


def test_going_silent_loses_on_time() -> None:
    pair = _pair()
    _settle(pair)
    pair.silent[CHEAT] = True
    assert not pair.run()
    _both_end(pair, "on_time", HONEST, "timeout")


def test_refusing_to_reveal_loses_on_time() -> None:
    pair = make_pair(Settings(6), ("greedy", "greedy"), SEED)
    for _ in range(100):
        if pair.sessions[1].referee.next_seq >= 3:
            break
        pair.step()
    pair.silent[0] = True  # the creator got the joiner's value, knows the whole deal, and does not reveal
    assert not pair.run()
    _both_end(pair, "on_time", 1, "timeout")


# -- the cheater never wins, whatever it does ---------------------------------------------------------

Cheat = Callable[[Pair], None]


def _self_abort(pair: Pair) -> None:
    r = pair.sessions[CHEAT].referee
    own = r.last_of(CHEAT)
    assert own is not None
    _cheat_sends(pair, build(fixed_key(SEED, CHEAT), MsgType.ABORT, r.sid or b"", r.next_seq, r.head_hash, CHEAT,
                             ["illegal_move", "x", own.frame, b""]))  # fmt: skip


def _early_timeout(pair: Pair) -> None:
    r = pair.sessions[CHEAT].referee
    assert pair.witness is not None
    _cheat_sends(pair, build(fixed_key(SEED, CHEAT), MsgType.TIMEOUT, r.sid or b"", r.next_seq, r.head_hash,
                             CHEAT, [pair.witness.certify(HONEST, pair.now), b""]))  # fmt: skip


def _resend_flood(pair: Pair) -> None:
    r = pair.sessions[CHEAT].referee
    for q in range(0, r.next_seq + 5):
        _cheat_sends(pair, resend_frame(r.sid or b"", q))


@pytest.mark.parametrize("cheat", [_self_abort, _early_timeout, _resend_flood], ids=lambda f: f.__name__)
@pytest.mark.parametrize("after", [6, 20, 40])
def test_the_cheater_never_wins(cheat: Cheat, after: int) -> None:
    pair = _pair()
    _settle(pair, after)
    cheat(pair)
    pair.run()
    honest = pair.sessions[HONEST].ended
    assert honest is not None
    if honest.outcome.status != "complete":  # the cheater lost by its own false statement
        assert (honest.outcome.loser, honest.outcome.winner) == (CHEAT, HONEST)
    rep = audit(bytes(pair.files[HONEST]))
    assert rep.valid and rep.status == honest.outcome.status and rep.result["winner"] == honest.outcome.winner
    rep = audit(bytes(pair.files[CHEAT]))  # the cheater's own file never shows a win either
    assert rep.result["winner"] != CHEAT or rep.status == "complete"


# -- an end and a move for one sequence number (a fork) -------------------------------------------


def _cheaters_turn(pair: Pair, after: int) -> None:
    """Play until both lines hold ``after`` messages, nothing is in transit, and the cheater is to move."""
    for _ in range(10_000):
        c = pair.sessions[CHEAT]
        if c.referee.next_seq >= after and c.my_turn and not any(pair.queues):
            return
        assert pair.step()
    raise AssertionError("never the cheater's turn")


@pytest.mark.parametrize("end", ["abort", "resign"])
@pytest.mark.parametrize("after", [8, 25])
def test_an_end_and_a_move_signed_for_one_sequence_number_never_win_the_fork_on_time(end: str, after: int) -> None:
    """The cheater shows the honest side an end (a false ABORT, or a RESIGN) and goes on with a move signed for
    the same sequence number on its own line, then waits for the relay to certify the honest side's silence.
    The honest side signs an ENDED of the end it took (§7.4): its last frame at the relay lies on its line only,
    so the claim on the fork never fits, and the cheater's own file never shows it winning."""
    pair = _pair()
    _cheaters_turn(pair, after)
    r = pair.sessions[CHEAT].referee
    own = r.last_of(CHEAT)
    assert own is not None
    body: list[object] = [] if end == "resign" else ["illegal_move", "x", own.frame, b""]
    t = MsgType.RESIGN if end == "resign" else MsgType.ABORT
    forged = build(fixed_key(SEED, CHEAT), t, r.sid or b"", r.next_seq, r.head_hash, CHEAT, body)
    pair.inject(CHEAT, forged)  # first: the honest side takes the end, the cheater's move then arrives too late
    pair.run()
    honest = pair.sessions[HONEST].ended
    assert honest is not None and honest.outcome.winner == HONEST and honest.outcome.status == "resigned"
    assert pair.witness is not None
    pair.sessions[HONEST].reconnected()
    frames = pair.sessions[HONEST].frames_to_send()
    assert frames and parse(frames[-1]).type is MsgType.ENDED, "the honest side's last frame is not its ENDED"
    assert pair.witness.last[HONEST] == msg_hash(frames[-1])
    assert msg_hash(frames[-1]) not in {m.hash for m in pair.sessions[CHEAT].referee.msgs}
    rep = audit(bytes(pair.files[CHEAT]))
    assert rep.result["winner"] != CHEAT, (rep.status, rep.ending)
    cheater = pair.sessions[CHEAT].ended
    assert cheater is None or cheater.outcome.winner != CHEAT


def test_a_resumed_session_signs_the_same_ended_again() -> None:
    """After a crash, the ENDED of the opponent's end is rebuilt from the transcript, byte for byte, and sent
    again on reconnecting (the relay's last frame from this seat stays the same)."""
    pair = _pair()
    _cheaters_turn(pair, 12)
    pair.sessions[CHEAT].resign()
    pair.run()
    first = [f for f in pair.events[HONEST]]
    assert any(isinstance(e, MatchDecided) for e in first)
    pair.sessions[HONEST].reconnected()
    ended = pair.sessions[HONEST].frames_to_send()[-1]
    assert parse(ended).type is MsgType.ENDED
    frames = parse_transcript(bytes(pair.files[HONEST])).frames
    assert ended not in frames  # never part of the line, never in the transcript
    again = Session.from_transcript(fixed_key(SEED, HONEST), frames)
    again.reconnected()
    assert again.frames_to_send()[-1] == ended


def test_an_ended_is_never_evidence() -> None:
    """An ENDED the honest seat signed, cited where the honest seat is to move (where any other type of message
    would be ``unexpected_message``): the ABORT proves nothing and is the aborter's resignation."""
    pair = _pair()
    for _ in range(10_000):
        h = pair.sessions[HONEST]
        if h.referee.next_seq >= 10 and h.my_turn and not any(pair.queues):
            break
        assert pair.step()
    r = pair.sessions[CHEAT].referee
    ended = build(fixed_key(SEED, HONEST), MsgType.ENDED, r.sid or b"", r.next_seq, r.head_hash, HONEST, [r.head_hash])
    abort = build(fixed_key(SEED, CHEAT), MsgType.ABORT, r.sid or b"", r.next_seq, r.head_hash, CHEAT,
                  ["unexpected_message", "x", ended, b""])  # fmt: skip
    _cheat_sends(pair, abort)
    pair.run()
    _both_end(pair, "resigned", HONEST, "unproven_abort")
