"""Attack (issue 18, the new line): a dealer's private stop at a redealt LOCK, with K's next SHUFFLE already
on its way.

The cheat. In a deal attempt the table redeals (four of a month), K (the cheater) sends a wrong key for O's
hand position 0 in its LOCK (no proof covers it: only O's key opens that position). Every judge sees a
redeal, so K's unmodified session sends its next SHUFFLE at once,
with the LOCK (one hop). Only O's secrets see the wrong key (``check_lock``: its hand does not open): O's
*private* stop (``SealedSeat.owes_stop``), its DISCLOSE due at once, whoever's turn the judge says it is.

1. ``test_a_private_stop_with_the_next_shuffle_buffered_does_not_crash``: the relay delivers K's
   SHUFFLE (sequence k+1) before its LOCK (k), as any network may. O buffers the SHUFFLE (ahead), takes the
   LOCK (its stop now owed), and ``Session._drain`` takes the buffered SHUFFLE before ``_advance`` sends the
   stop. ``SealedSeat.receive`` sets the SHUFFLE aside (it returns False: it crossed this seat's stop) but
   ``Referee._on_sealed`` ignores that and appends it to the line anyway: the referee's line now holds a
   SHUFFLE its judge never took. O's stop is then made by its judge with one secret (one attempt begun), and
   its own referee refuses it (``secrets_due`` counts two SHUFFLEs in the line): ``ProtocolError: bad_shape``
   escapes ``Session.receive`` (which "never raises"). The honest client crashes; resumed from its file (which
   holds the SHUFFLE) it crashes again, and the cheater wins on time.
2. ``test_a_cheater_silent_after_its_shuffle_crossed_the_stop_loses_on_time``: delivered in order, O's stop
   takes sequence k+1 and supersedes K's SHUFFLE there (spec/sealed-line.md §2). The cheater then sends
   nothing more. Its last frame at the relay is that SHUFFLE: not a message of O's line, and not junk
   (``Referee._off_the_line``: a message of this match signed by K, not an end message) — so no certificate
   of K's silence ever fits O's line (spec/protocol.md §7.3 step 6) and O waits for ever: a match it should
   win (K's ``bad_lock``, or K's silence) never ends. spec/sealed-line.md §2 says the other seat "must then
   disclose (else it is silent: time, §7)".
3. ``test_a_dealer_resumed_between_the_lock_and_its_stop_does_not_crash``: the same hole as 1 without a
   reordering: the dealer dies after writing K's LOCK and before sending its stop; resumed, K's answer (its
   SHUFFLE) is taken by ``Session._take`` itself (not ``_drain``) into the line past the owed stop, and the
   stop crashes the session again. So a fix in ``_drain`` alone is not enough.

Suggested fixes. (1) ``Referee._on_sealed``: a message ``SealedSeat.receive`` sets aside must not enter the
line (raise a non-provable ``LineError``: dropped); and ``Session._take``/``_drain`` must send an owed stop
before taking more of the opponent's messages (the stop then takes k+1 and supersedes the SHUFFLE, as when
delivered in order). (2) ``Referee._off_the_line``: a message of the silent seat at a SEQ where the line holds
the claimer's standing stop with the same PREV (a stop that cut it: not a seat-0 DISCLOSE under a seat-1
stop) can never continue the line — junk the claimer may cite (an honest seat that never got the stop asks
for it, flagged, so it is never certified silent); say so in spec/protocol.md §7.3 step 6.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import line_cheats
import pytest
from in_memory import step_until
from line_judge import fail_text, problems_if_cheater_wins

from koikoi.engine import Settings
from koikoi.engine.cards import four_of_a_month, mask_of
from koikoi.protocol.messages import MsgType, parse
from koikoi.protocol.sealed import TABLE, Lock
from koikoi.protocol.sealed_line import LineKind, SealedSeat, Sent
from koikoi.protocol.session import Session
from koikoi.testing import Pair, fixed_key, make_pair

SEED = b"attack18 redeal stop 411"
"""Found once by counting up: its round 1 deals four of a month on the table at the first attempt (checked in
:func:`_start`), so the LOCK is followed by K's next SHUFFLE with no forgery of the table."""


def _forge_redeal(mp: pytest.MonkeyPatch, cheater: int) -> None:
    """``cheater``, K of round 1, sends a wrong key for O's hand position 0 in the LOCK of its first deal
    attempt, which SEED deals as a redeal (the same forged LOCK whenever its line re-makes it: a modified
    client records what it sends)."""
    on_shuffle_lock = SealedSeat._on_shuffle_lock
    forged: dict[bytes, Sent] = {}

    def receive_shuffle_lock(self: SealedSeat, msg: Sent) -> None:
        on_shuffle_lock(self, msg)
        p = self._prepared
        first = self.round == 1 and len(self._round.attempts) == 1
        if self.seat != cheater or p is None or p.kind is not LineKind.LOCK or not first:
            return
        honest = p.encode()
        if honest not in forged:
            lock = Lock.from_body(p.body)
            keys = list(lock.keys)
            keys[0] = keys[1]  # a valid scalar that opens nothing at O's hand position 0
            forged[honest] = Sent(p.seat, p.kind, tuple(dataclasses.replace(lock, keys=tuple(keys)).body()))
        self._prepared = forged[honest]

    mp.setattr(SealedSeat, "_on_shuffle_lock", receive_shuffle_lock)


Tamper = Callable[[int, int, bytes], Sequence[bytes]]


def _shuffle_before_lock(cheater: list[int], reordered: list[bytes]) -> Tamper:
    """A relay that delivers the cheater's first LOCK after the SHUFFLE that follows it (a reordering); the
    frames it reordered go in ``reordered``."""
    held: list[bytes] = []

    def tamper(seat: int, index: int, frame: bytes) -> Sequence[bytes]:
        if not cheater or seat != cheater[0]:
            return [frame]
        t = parse(frame).type
        if t is MsgType.LOCK and not held and not reordered:
            held.append(frame)
            return []
        if t is MsgType.SHUFFLE and held:
            out = [frame, *held]
            reordered.extend(out)
            held.clear()
            return out
        return [frame]

    return tamper


def _start(mp: pytest.MonkeyPatch, tamper: Tamper | None = None, box: list[int] | None = None) -> tuple[Pair, int]:
    """A sealed match to its first deal, the cheat in place; returns the pair and the honest seat (round 1's
    dealer)."""
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed=SEED, deck="sealed", tamper=tamper)
    step_until(pair, lambda: all(s.referee.sealed is not None for s in pair.sessions))
    sl = pair.sessions[0].referee.sealed
    assert sl is not None
    honest = sl.dealer
    seats = [s.referee.sealed for s in pair.sessions]
    assert all(isinstance(x, SealedSeat) for x in seats)
    k, o = (x.secrets_now() for x in (seats[1 - honest], seats[honest]) if isinstance(x, SealedSeat))
    table = [k.permutation[o.permutation[p]] for p in TABLE]
    assert four_of_a_month(mask_of(table)), "SEED no longer deals a redeal: find another"
    if box is not None:
        box.append(1 - honest)
    _forge_redeal(mp, 1 - honest)
    return pair, honest


def _shuffles(pair: Pair, seat: int) -> int:
    return sum(m.type is MsgType.SHUFFLE for m in pair.sessions[seat].referee.msgs)


def test_a_private_stop_with_the_next_shuffle_buffered_does_not_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    box: list[int] = []
    reordered: list[bytes] = []
    pair, honest = _start(monkeypatch, _shuffle_before_lock(box, reordered), box)
    try:
        pair.run()
    except Exception as e:  # the point of the test: Session.receive never raises
        pytest.fail(f"the honest dealer's session raised on a reordered SHUFFLE after its private stop: {e!r}")
    assert len(reordered) == 2, "the cheat did not fire (no redeal: no SHUFFLE after the LOCK)"
    problems = problems_if_cheater_wins(pair, honest, "forced redeal with a wrong key for the dealer's hand")
    assert not problems, fail_text(problems)


def test_a_cheater_silent_after_its_shuffle_crossed_the_stop_loses_on_time(monkeypatch: pytest.MonkeyPatch) -> None:
    pair, honest = _start(monkeypatch)
    cheater = 1 - honest
    step_until(pair, lambda: _shuffles(pair, cheater) == 2)  # its LOCK and its next SHUFFLE are both sent
    pair.flush(cheater)
    pair.silent[cheater] = True  # and from now on it sends nothing
    pair.run()
    assert pair.sessions[honest].referee.msgs[-1].type is not MsgType.SHUFFLE
    problems = problems_if_cheater_wins(pair, honest, "silence after its SHUFFLE crossed the dealer's stop")
    assert not problems, fail_text(problems)


def test_a_dealer_resumed_between_the_lock_and_its_stop_does_not_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """3. No reordering needed: the dealer's process dies after it wrote K's LOCK to its file and before it sent
    its stop (kill -9; resume re-derives the stop from the file). Resumed, it asks for the line (RESEND) and
    decides nothing until K answers; K's answer is its next SHUFFLE, which the resumed referee takes into the
    line past the owed stop (the same hole as 1, reached through ``Session._take`` directly, not ``_drain``):
    its stop is then refused by its own referee and ``Session.receive`` raises."""
    pair, honest = _start(monkeypatch)
    h = pair.sessions[honest]
    for _ in range(10_000):  # until K's LOCK is the next frame the dealer takes
        q = pair.queues[honest]
        if q and parse(q[0]).type is MsgType.LOCK:
            break
        assert pair.step(), "the match stopped before K's LOCK"
    frames = [*line_cheats.line_frames(pair, honest), pair.queues[honest].popleft()]  # its file: … LOCK
    resumed = Session.from_transcript(fixed_key(SEED, honest), frames)
    assert resumed.referee.next_seq == h.referee.next_seq + 1
    pair.sessions = (resumed, pair.sessions[1]) if honest == 0 else (pair.sessions[0], resumed)
    pair.files[honest][:] = line_cheats.transcript_of(frames)
    try:
        pair.reconnect()
        pair.run()
    except Exception as e:  # the point of the test: Session.receive never raises
        pytest.fail(f"the resumed dealer's session raised on K's answer after its owed stop: {e!r}")
    problems = problems_if_cheater_wins(pair, honest, "forced redeal, the dealer resumed before its stop")
    assert not problems, fail_text(problems)
