"""The referee's verdict rules, one test each, at the referee's API (not end to end): whether an ABORT's
evidence proves the fault it names (spec/protocol.md §6.2) and whether a TIMEOUT's certificate proves the
silence (§7.3). Each line is built message by message from a handshake, so every rule is met on its boundary:
the evidence or certificate that proves, and the one that differs from it in the rule's one point and does not.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from koikoi.engine.match import Settings
from koikoi.protocol.codes import Code, Status
from koikoi.protocol.errors import ProtocolError
from koikoi.protocol.messages import (
    RULES_VERSION,
    ZERO_HASH,
    MsgType,
    build,
    commit_value,
    commitment_of,
    msg_hash,
    parse,
)
from koikoi.protocol.referee import Disposition, Referee
from koikoi.protocol.transcript import parse_transcript
from koikoi.protocol.witness import fingerprint, sign_certificate
from koikoi.testing import fixed_key, run_match, witness_key

SEED = b"referee rules"
ROOM = "TEST-ROOM"
MOVE_TIME_S = 120
RELAY = witness_key(SEED)


class Line:
    """Both seats' keys and a referee fed the messages they sign (every one must be accepted)."""

    def __init__(self, *, move_time_s: int = MOVE_TIME_S, relay_key: bytes | None = None) -> None:
        self.keys = (fixed_key(SEED, 0), fixed_key(SEED, 1))
        self.ref = Referee()
        rk = bytes(RELAY.verify_key) if relay_key is None else relay_key
        for seat in (0, 1):
            pk = self.keys[seat].public_key().public_bytes_raw()
            nonce = bytes([seat + 1]) * 32
            body: list[Any] = [RULES_VERSION, ROOM, 6, False, move_time_s, "shared", rk, pk, nonce, False, False]
            self.send(seat, MsgType.HELLO, body)
        assert self.ref.sid is not None

    @property
    def sid(self) -> bytes:
        assert self.ref.sid is not None
        return self.ref.sid

    def sign(
        self, seat: int, t: MsgType, body: list[Any], *, seq: int | None = None, prev: bytes | None = None
    ) -> bytes:
        """A message of ``seat`` for the line's next place (or ``seq``, ``prev``), not sent."""
        r = self.ref
        return build(
            self.keys[seat],
            t,
            r.sid or b"",
            r.next_seq if seq is None else seq,
            r.head_hash if prev is None else prev,
            seat,
            body,
        )

    def send(self, seat: int, t: MsgType, body: list[Any]) -> bytes:
        frame = self.sign(seat, t, body)
        self.ref.accept(frame)
        return frame

    def commit(self) -> bytes:
        """Seat 0's COMMIT: the line then waits for seat 1's VALUE."""
        value = commit_value(self.keys[0], self.sid, 0)
        return self.send(0, MsgType.COMMIT, [commitment_of(self.sid, value)])

    def value(self) -> bytes:
        """Seat 1's VALUE: the line then waits for seat 0's REVEAL."""
        return self.send(1, MsgType.VALUE, [commit_value(self.keys[1], self.sid, 1)])

    def seat_keys(self) -> tuple[bytes, bytes]:
        return (self.keys[0].public_key().public_bytes_raw(), self.keys[1].public_key().public_bytes_raw())


def _last(line: Line, seat: int) -> bytes:
    m = line.ref.last_of(seat)
    return m.hash if m is not None else b""


# -- an ABORT's evidence ------------------------------------------------------------------------------------


def _bad_reveal() -> tuple[Line, bytes]:
    """A line waiting for seat 0's REVEAL, and a REVEAL of seat 0 that does not open its commitment."""
    line = Line()
    line.commit()
    line.value()
    return line, line.sign(0, MsgType.REVEAL, [b"\x07" * 32])


def test_evidence_that_fails_with_the_code_named_proves_it() -> None:
    line, bad = _bad_reveal()
    assert line.ref.evidence_problem(Code.COMMITMENT_MISMATCH, bad, b"", 1) is None


def test_evidence_that_fails_with_another_code_proves_nothing() -> None:
    """The evidence is a flawed message, but not of the flaw the ABORT names: no proof of the named code."""
    line, bad = _bad_reveal()
    problem = line.ref.evidence_problem(Code.DESYNC, bad, b"", 1)
    assert problem == "the evidence fails with commitment_mismatch, not desync"


@pytest.mark.parametrize(
    ("named", "ending"),
    [
        (Code.ILLEGAL_MOVE, (Status.RESIGNED, Code.UNPROVEN_ABORT, 1, 1, 0, False)),
        (Code.COMMITMENT_MISMATCH, (Status.FORFEIT, Code.COMMITMENT_MISMATCH, 1, 0, 1, True)),
    ],
)
def test_an_abort_is_a_forfeit_only_when_its_evidence_fails_with_the_code_it_names(
    named: Code, ending: tuple[object, ...]
) -> None:
    """Otherwise it is its signer's resignation, saying why."""
    line, bad = _bad_reveal()
    line.send(1, MsgType.ABORT, [named.value, "a flawed reveal", bad, b""])
    o = line.ref.outcome()
    assert o is not None
    assert (o.status, o.code, o.by, o.loser, o.winner, o.evidence_verified) == ending
    if not o.evidence_verified:
        assert "the evidence fails with commitment_mismatch, not illegal_move" in o.message


def test_evidence_signed_by_the_aborter_proves_nothing() -> None:
    line = Line()
    line.commit()
    own = line.sign(1, MsgType.REVEAL, [b"\x07" * 32])  # the aborter's own out-of-turn message
    problem = line.ref.evidence_problem(Code.OUT_OF_TURN, own, b"", 1)
    assert problem == "the evidence is signed for seat 1, not the accused seat 0"


def test_evidence_of_another_match_proves_nothing() -> None:
    line, _ = _bad_reveal()
    other = line.sign(0, MsgType.REVEAL, [b"\x07" * 32])
    elsewhere = build(line.keys[0], MsgType.REVEAL, b"\x01" * 32, 4, line.ref.head_hash, 0, [b"\x07" * 32])
    assert line.ref.evidence_problem(Code.COMMITMENT_MISMATCH, other, b"", 1) is None
    problem = line.ref.evidence_problem(Code.COMMITMENT_MISMATCH, elsewhere, b"", 1)
    assert problem == "the evidence belongs to another match"


def test_evidence_ahead_of_the_line_proves_nothing() -> None:
    """A flawed message for the place after the next proves nothing: the line has not reached it."""
    line, _ = _bad_reveal()
    at_next = line.sign(0, MsgType.REVEAL, [b"\x07" * 32])
    ahead = line.sign(0, MsgType.REVEAL, [b"\x07" * 32], seq=line.ref.next_seq + 1)
    assert line.ref.evidence_problem(Code.COMMITMENT_MISMATCH, at_next, b"", 1) is None
    assert line.ref.evidence_problem(Code.COMMITMENT_MISMATCH, ahead, b"", 1) == "the evidence lies ahead of the line"


def test_an_end_message_off_its_schema_is_no_evidence() -> None:
    """A body off its schema proves its signer's fault, except an end message's (it is no message at all)."""
    line = Line()
    line.commit()
    off = line.sign(0, MsgType.TIMEOUT, [5, b""])  # a number where the certificate goes
    assert (
        line.ref.evidence_problem(Code.BAD_SHAPE, off, b"", 1)
        == "an end message off its schema is no message at all (malformed_message)"
    )


def test_two_messages_prove_equivocation_only_when_they_differ_for_one_place_after_one_message() -> None:
    line = Line()
    at = line.ref.next_seq
    head = line.ref.head_hash
    a = line.sign(0, MsgType.COMMIT, [b"\x01" * 32])
    b = line.sign(0, MsgType.COMMIT, [b"\x02" * 32])
    later = line.sign(0, MsgType.COMMIT, [b"\x02" * 32], seq=at + 1)
    forked = line.sign(0, MsgType.COMMIT, [b"\x02" * 32], prev=b"\x09" * 32)
    ref = line.ref
    assert ref.evidence_problem(Code.EQUIVOCATION, a, b, 1) is None
    not_two = "the two messages are not different messages for one sequence number"
    assert ref.evidence_problem(Code.EQUIVOCATION, a, a, 1) == not_two
    assert ref.evidence_problem(Code.EQUIVOCATION, a, later, 1) == not_two
    assert ref.evidence_problem(Code.EQUIVOCATION, a, forked, 1) == (
        "the two messages follow different messages: they answer two lines, not one"
    )
    assert head == ref.head_hash  # (nothing was sent)


# -- a TIMEOUT's certificate --------------------------------------------------------------------------------


def _waiting_for_seat_1() -> tuple[Line, dict[str, Any]]:
    """A line waiting for seat 1's VALUE, and the fields of a certificate that proves seat 1's silence."""
    line = Line()
    line.commit()
    fields: dict[str, Any] = {
        "room": ROOM,
        "silent_seat": 1,
        "last_frame": (_last(line, 0), _last(line, 1)),
        "silent_ms": MOVE_TIME_S * 1000,
        "connected": True,
        "recent": [_last(line, 0)],
        "seat_keys": line.seat_keys(),
    }
    return line, fields


def _certificate(**fields: Any) -> bytes:
    return sign_certificate(RELAY, **fields)


def test_a_certificate_of_the_whole_move_time_proves_the_silence() -> None:
    line, fields = _waiting_for_seat_1()
    assert line.ref.certificate_problem(_certificate(**fields), b"", 0) is None


def test_a_silence_one_millisecond_short_of_the_move_time_proves_nothing() -> None:
    line, fields = _waiting_for_seat_1()
    fields["silent_ms"] = MOVE_TIME_S * 1000 - 1
    problem = line.ref.certificate_problem(_certificate(**fields), b"", 0)
    assert problem == f"seat 1 was silent {MOVE_TIME_S * 1000 - 1} ms, less than the move time ({MOVE_TIME_S} s)"


def test_a_certificate_whose_recent_frames_miss_a_message_since_the_silent_seats_last_proves_nothing() -> None:
    """§7.3 step 6b: every line message after the silent seat's last must be among the relay's recent frames
    of the claimer, or the silent seat may never have got it."""
    line, fields = _waiting_for_seat_1()
    commit = line.ref.msgs[-1]
    for recent in ([], [b"\x05" * 32], [msg_hash(line.ref.msgs[0].frame)]):
        fields["recent"] = recent
        problem = line.ref.certificate_problem(_certificate(**fields), b"", 0)
        assert problem == (
            f"the relay lists no frame of seat 0's message {commit.seq}: the silent seat may never have got it"
        )


def test_the_recent_check_covers_every_message_since_the_silent_seats_last() -> None:
    """With two messages of the claimer after the silent seat's last, listing either alone proves nothing."""
    line = Line()
    line.commit()
    line.value()
    line.send(0, MsgType.REVEAL, [commit_value(line.keys[0], line.sid, 0)])
    since: list[bytes] = []
    for _ in range(200):  # the engine's first legal move each time, until one seat has moved twice in a row
        exp = line.ref.expected()
        assert exp is not None and exp[1] is MsgType.MOVE
        msgs = line.ref.msgs
        if msgs[-1].seat == msgs[-2].seat != exp[0]:
            since = [msgs[-2].hash, msgs[-1].hash]
            break
        m = line.ref.match
        assert m is not None
        action = m.legal_actions()[0]
        trial = m.copy()
        trial.apply(action, exp[0])
        line.send(exp[0], MsgType.MOVE, [action.code, trial.state_hash()])
    assert since, "no seat moved twice in a row"
    exp = line.ref.expected()
    assert exp is not None
    silent, claimer = exp[0], 1 - exp[0]
    fields: dict[str, Any] = {
        "room": ROOM,
        "silent_seat": silent,
        "last_frame": (_last(line, 0), _last(line, 1)),
        "silent_ms": MOVE_TIME_S * 1000,
        "connected": True,
        "recent": since,
        "seat_keys": line.seat_keys(),
    }
    assert line.ref.certificate_problem(_certificate(**fields), b"", claimer) is None
    for missing, recent in ((0, since[1:]), (1, since[:1])):
        fields["recent"] = recent
        problem = line.ref.certificate_problem(_certificate(**fields), b"", claimer)
        seq = line.ref.msgs[-2 + missing].seq
        assert problem == (
            f"the relay lists no frame of seat {claimer}'s message {seq}: the silent seat may never have got it"
        )


def test_a_timeout_with_a_certificate_ends_the_match_on_time() -> None:
    for connected, code in ((True, Code.TIMEOUT), (False, Code.OPPONENT_LEFT)):
        line, fields = _waiting_for_seat_1()
        fields["connected"] = connected
        line.send(0, MsgType.TIMEOUT, [_certificate(**fields), b""])
        o = line.ref.outcome()
        assert o is not None
        assert (o.status, o.code, o.by, o.loser, o.winner) == (Status.ON_TIME, code, 0, 1, 0)
        assert o.witness == fingerprint(bytes(RELAY.verify_key))


def test_a_timeout_whose_certificate_is_short_is_its_signers_resignation() -> None:
    line, fields = _waiting_for_seat_1()
    fields["silent_ms"] = MOVE_TIME_S * 1000 - 1
    line.send(0, MsgType.TIMEOUT, [_certificate(**fields), b""])
    o = line.ref.outcome()
    assert o is not None
    assert (o.status, o.code, o.by, o.loser, o.winner) == (Status.RESIGNED, Code.UNWITNESSED_TIMEOUT, 0, 0, 1)
    assert "less than the move time" in o.message


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"room": "OTHER-ROOM"}, f"the certificate is for room 'OTHER-ROOM', not {ROOM!r}"),
        ({"silent_seat": 0}, "the certificate says seat 0 is silent, not seat 1"),
        (
            {"last_frame": (b"\x05" * 32, None)},
            "the relay's last frame from seat 0 is not its last message (stale or crossed)",
        ),
        (
            {"last_frame": (None, b"\x05" * 32)},
            "the relay's last frame from seat 1 is not its last message (stale or crossed)",
        ),
    ],
)
def test_a_certificate_off_the_line_in_one_point_proves_nothing(change: dict[str, Any], problem: str) -> None:
    line, fields = _waiting_for_seat_1()
    for name, value in change.items():
        if name == "last_frame":
            value = tuple(old if new is None else new for old, new in zip(fields[name], value, strict=True))
        fields[name] = value
    assert line.ref.certificate_problem(_certificate(**fields), b"", 0) == problem


def test_a_certificate_binding_another_key_to_a_seat_proves_nothing() -> None:
    line, fields = _waiting_for_seat_1()
    for seat in (0, 1):
        keys = list(line.seat_keys())
        for held, shown in ((b"", "no proven key"), (bytes(32), fingerprint(bytes(32)))):
            keys[seat] = held
            fields["seat_keys"] = (keys[0], keys[1])
            problem = line.ref.certificate_problem(_certificate(**fields), b"", 0)
            assert problem == f"the relay's seat {seat} was held by {shown}, not the key seat {seat}'s HELLO binds"


def test_a_certificate_of_another_relay_proves_nothing() -> None:
    line, fields = _waiting_for_seat_1()
    blob = sign_certificate(witness_key(b"another relay"), **fields)
    problem = line.ref.certificate_problem(blob, b"", 0)
    assert problem is not None and problem.startswith("the certificate is signed by relay ")


def test_a_claim_by_the_seat_the_line_waits_for_proves_nothing() -> None:
    line, fields = _waiting_for_seat_1()
    fields["silent_seat"] = 0
    fields["last_frame"] = (fields["last_frame"][0], fields["last_frame"][1])
    assert line.ref.certificate_problem(_certificate(**fields), b"", 1) == "the line does not wait for seat 0"


def test_no_clock_or_no_relay_means_no_certificate_proves_a_silence() -> None:
    line = Line(move_time_s=0)
    line.commit()
    blob = _certificate(
        room=ROOM,
        silent_seat=1,
        last_frame=(_last(line, 0), _last(line, 1)),
        silent_ms=10**7,
        connected=True,
        recent=[_last(line, 0)],
        seat_keys=line.seat_keys(),
    )
    assert line.ref.certificate_problem(blob, b"", 0) == "this match has no clock (move time none)"
    line = Line(relay_key=ZERO_HASH)
    line.commit()
    assert line.ref.certificate_problem(blob, b"", 0) == "this match has no relay to witness time"


# -- a message's place in the chain -------------------------------------------------------------------------


def _committed(viewer: int | None = None) -> Line:
    """A line of HELLO, HELLO, COMMIT (seat 0's), judged by an observer or by seat ``viewer``'s referee."""
    line = Line()
    line.commit()
    if viewer is not None:
        ref = Referee((viewer, line.keys[viewer]))
        for m in line.ref.msgs:
            ref.accept(m.frame)
        line.ref = ref
    return line


def test_a_second_message_of_a_seat_for_one_place_after_one_message_is_its_equivocation() -> None:
    line = _committed()
    held = line.ref.msgs[2]
    other = line.sign(0, MsgType.COMMIT, [b"\x03" * 32], seq=2, prev=held.prev)
    j = line.ref.judge(parse(other))
    assert (j.disposition, j.code, j.evidence, j.attributed) == (
        Disposition.FAULT,
        Code.EQUIVOCATION,
        (other, held.frame),
        True,
    )


def test_a_message_for_a_taken_place_after_another_message_answers_another_line() -> None:
    """Two messages of one seat for one place that follow different messages prove nothing (a fork)."""
    line = _committed()
    other = line.sign(0, MsgType.COMMIT, [b"\x03" * 32], seq=2, prev=b"\x09" * 32)
    j = line.ref.judge(parse(other))
    assert (j.disposition, j.code, j.message) == (
        Disposition.DROPPED,
        Code.EQUIVOCATION,
        "seat 0's commit at sequence 2 answers another line",
    )


def test_a_seats_own_second_message_is_no_fault_of_it_in_its_own_line() -> None:
    line = _committed(viewer=0)
    held = line.ref.msgs[2]
    other = line.sign(0, MsgType.COMMIT, [b"\x03" * 32], seq=2, prev=held.prev)
    j = line.ref.judge(parse(other))
    assert (j.disposition, j.code) == (Disposition.DROPPED, Code.EQUIVOCATION)
    assert line.ref.judge(parse(other)).disposition is Disposition.DROPPED
    opponent = _committed(viewer=1).ref.judge(parse(other))
    assert opponent.disposition is Disposition.FAULT  # the same message in the opponent's line proves it


def test_what_a_place_held_or_ahead_makes_of_a_message() -> None:
    line = _committed()
    held = line.ref.msgs[2]
    assert line.ref.judge(held).disposition is Disposition.HELD
    crossed = line.ref.judge(parse(line.sign(1, MsgType.VALUE, [b"\x04" * 32], seq=2, prev=held.prev)))
    assert (crossed.disposition, crossed.code, crossed.junk) == (Disposition.DROPPED, Code.REPLAY, True)
    ahead = line.ref.judge(parse(line.sign(1, MsgType.VALUE, [b"\x04" * 32], seq=4)))
    assert (ahead.disposition, ahead.code) == (Disposition.AHEAD, Code.SEQUENCE_GAP)
    assert line.ref.next_seq == 3


def test_an_end_message_cuts_only_the_other_seats_messages_from_its_place() -> None:
    line = Line()
    line.commit()
    commit = line.ref.msgs[2]
    value = parse(line.value())
    ref = line.ref
    with pytest.raises(ProtocolError) as e:  # seat 1's end at the place of its own VALUE
        ref.accept(line.sign(1, MsgType.RESIGN, [], seq=3, prev=commit.hash))
    assert e.value.code is Code.EQUIVOCATION
    with pytest.raises(ProtocolError) as e:  # seat 1's end before its own VALUE
        ref.accept(line.sign(1, MsgType.RESIGN, [], seq=2, prev=commit.prev))
    assert e.value.code is Code.REPLAY and "ignores its sender's own later message" in e.value.message
    with pytest.raises(ProtocolError) as e:  # no end message takes the first HELLO's place
        ref.accept(line.sign(1, MsgType.RESIGN, [], seq=0, prev=ZERO_HASH))
    assert e.value.code is Code.REPLAY
    acc = ref.accept(line.sign(0, MsgType.RESIGN, [], seq=3, prev=commit.hash))  # seat 0 had not seen the VALUE
    assert acc.superseded == [value] and ref.superseded == [value] and ref.next_seq == 4
    o = ref.outcome()
    assert o is not None and (o.status, o.by, o.loser) == (Status.RESIGNED, 0, 0)


def test_a_flawed_message_is_its_signers_fault_except_in_its_signers_own_line() -> None:
    """A REVEAL that does not open the commitment: proven against seat 0 by an observer or seat 1, never by
    seat 0's own referee (what it signed itself is no evidence it holds against its opponent)."""
    for viewer, disposition in ((None, Disposition.FAULT), (1, Disposition.FAULT), (0, Disposition.DROPPED)):
        line = _committed(viewer)
        line.value()
        bad = line.sign(0, MsgType.REVEAL, [b"\x07" * 32])
        j = line.ref.judge(parse(bad))
        assert (j.disposition, j.code) == (disposition, Code.COMMITMENT_MISMATCH), viewer
        assert j.evidence == ((bad, b"") if disposition is Disposition.FAULT else (b"", b""))


# -- a stop that would cut the line back ----------------------------------------------------------------------


@functools.cache
def _sealed_match(seed: bytes) -> list[bytes]:
    """A sealed match's line, played out by the harness."""
    return parse_transcript(run_match(Settings(6), seed=seed, deck="sealed").transcripts[0]).frames


def _sealed_line_closing(first: int) -> tuple[bytes, Referee]:
    """An observer's referee of a sealed match, just after a round whose disclosures came from seat ``first``
    and then the other seat closed it (the first such round of the first match, by its seed, that has one),
    and that match's seed (its keys')."""
    for i in range(20):
        seed = b"referee stop %d" % i
        ref = Referee()
        for frame in _sealed_match(seed):
            ref.accept(frame)
            m = ref.msgs
            if len(m) == ref.play.round_from > 6 and [x.type for x in m[-2:]] == [MsgType.DISCLOSE] * 2:
                if m[-2].seat == first:
                    return seed, ref
    raise AssertionError(f"no round of 20 matches has seat {first} disclose first")


@pytest.mark.parametrize(
    ("first", "problem"),
    [
        (0, "the disclose at sequence {seq} lies in a round already verified"),
        (1, "sequence {seq} is taken by seat 0's disclosure"),
    ],
)
def test_a_stop_never_reaches_back_into_a_verified_round(first: int, problem: str) -> None:
    """The first discloser of a round signs a second DISCLOSE at the place of the other's closing one (after
    its own): nobody's fault, dropped — neither a stop of the next round (cut back to there) nor its bad
    shape (it holds no secret of the next round's shuffles, of which there is none before it)."""
    seed, ref = _sealed_line_closing(first)
    seq = ref.next_seq - 1
    again = build(
        fixed_key(seed, first),
        MsgType.DISCLOSE,
        ref.sid or b"",
        seq,
        ref.msgs[-2].hash,
        first,
        [[b"\x01" * 32]],
    )
    j = ref.judge(parse(again))
    assert (j.disposition, j.code, j.message) == (Disposition.DROPPED, Code.REPLAY, problem.format(seq=seq))
    assert ref.next_seq == seq + 1 and ref.superseded == []
