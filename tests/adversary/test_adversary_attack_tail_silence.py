"""Attack: a resumed honest side whose file lost its tail is kept from deciding (the first lost-tail fix of
14e628e, which passed the relay's hash of its last frame), and the cheater that withholds the lost message
then wins ON TIME — the "stall, never a forfeit" of spec/protocol.md §8 is a loss on time.

Variant ``cheater`` (a modified opponent client, an honest relay):
1. The honest seat sends its move s at SEQ p; the cheater takes it. The honest side's file then loses s
   (a restored backup: the case §8 was written for) and it resumes: ``from_transcript`` (line at p), then
   ``reconnected(…)`` with the relay's true word (its last frame is s), so it stays resyncing:
   it decides nothing until s comes back.
2. The cheater never sends s back. When its own line (… s) waits for the cheater, it plays its turn as usual
   (the honest side buffers those messages: they are ahead of its line, which lacks s); then it answers each
   of the honest side's RESEND(id, p) with its own last message again — to the witness a repeat of its last
   new frame is an answer, so the honest side is never "waiting", and its requests move its silence on by at
   most 2 move times.
3. After 3 move times the cheater's unmodified session asks for a certificate of the honest seat's silence:
   last[honest] = hash(s), a message of the honest seat in the cheater's line (§7.3 step 6); last[cheater] =
   its last message (step 5); its messages after s are all in ``recent`` (6b). The TIMEOUT fits.

Variant ``relay_lies`` (an honest opponent, a relay that lies about ``last`` only — never about time):
the honest side's file is complete, but the relay's ``resumed`` names as its last frame a hash that is none
of its frames (spec §8: "a false hash makes the resumed side wait for a message that never comes — a stall,
never a loss"). The resumed side waits for ever; the honest opponent, after the move time, asks for a
certificate, which is TRUE (the resumed seat really sent nothing), and wins on time.

Harm: the honest side loses on time, and the audit certifies it (the winner's file is ``valid``,
``on_time``). In the first variant an honest player who restored a backup loses to any opponent that just
leaves out one message from its answers (before 14e628e it lost by forfeit, equivocation; now on time).
In the second a relay widens its trust from time to ``last``: its certificate is true, so no one can show
it lied.

The fix: the relay keeps the bytes of each seat's last witnessed frame and returns them in ``resumed``; the
session takes back a message it signed that its file lacks (checked and written like any other) and goes
on; anything the relay cannot back with a frame this seat signed is ignored (no stall, no loss). Known limit
(spec §8): a tail of two or more lost messages whose earlier ones the cheater withholds still leaves the
resumed side waiting, and then losing on time.
"""

from __future__ import annotations

import pytest
from in_memory import run_while_sending, step_until

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.codes import Status
from koikoi.protocol.messages import MsgType
from koikoi.protocol.session import MatchDecided, Session
from koikoi.protocol.transcript import encode_transcript, parse_transcript
from koikoi.testing import fixed_key, make_pair

HONEST, OTHER = 0, 1
MOVE = 20


@pytest.mark.parametrize("variant", ["cheater", "relay_lies"])
def test_a_resumed_side_kept_from_deciding_never_loses_on_time(variant: str) -> None:
    seed = b"x10c-tail-silence-" + variant.encode()
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed, move_time_s=MOVE)
    h, o = pair.sessions[HONEST], pair.sessions[OTHER]
    w = pair.witness
    assert w is not None

    def honest_moved() -> bool:
        r = h.referee
        return r.next_seq >= 12 and r.msgs[-1].seat == HONEST and r.msgs[-1].type is MsgType.MOVE

    step_until(pair, honest_moved)
    s = h.referee.msgs[-1]
    p = s.seq
    pair.silent[HONEST] = True  # the honest machine goes down right after sending s
    while pair.step():  # the opponent takes s (and plays its turn if the line waits for it)
        pass
    assert o.referee.msgs[p].frame == s.frame
    frames = parse_transcript(bytes(pair.files[HONEST])).frames
    assert frames[p] == s.frame
    kept = frames[:p] if variant == "cheater" else frames  # 1. the restored backup lost s
    own = list(w.clocks[HONEST].copies.values()) if variant == "cheater" else [b"\x5a" * 32]  # the relay's
    assert variant != "cheater" or s.frame in own
    resumed = Session.from_transcript(fixed_key(seed, HONEST), kept)
    pair.sessions = (resumed, o)
    pair.files[HONEST][:] = encode_transcript(kept)
    pair.silent[HONEST] = False
    pair.note(HONEST, resumed.reconnected(own_frames=own))
    pair.flush(HONEST)

    if variant == "cheater":
        pair.silent[OTHER] = True  # 2. the cheater sends only what it injects: never s

        def answer() -> None:
            lo = o.referee.last_of(OTHER)
            assert lo is not None
            pair.inject(OTHER, lo.frame)  # its own last message again: an "answer" to the witness

        run_while_sending(pair, HONEST, answer, MOVE / 4, 8 * MOVE)
        r = resumed.referee
        assert r.next_seq <= p or r.msgs[p].frame == s.frame, "the resumed side signed a second message at p"
    else:
        t_end = pair.now + 8 * MOVE
        while pair.now < t_end and not o.is_finished:
            if pair.step():
                continue
            if not pair.tick():
                pair.now += 1
    e = o.ended
    said = e.outcome.status if isinstance(e, MatchDecided) else e
    rep = audit(bytes(pair.files[OTHER]))
    # the harm is a loss by anything but the game's count (the match, once the side goes on, may be played out)
    lost = rep.valid and rep.result["winner"] == OTHER and rep.status is not Status.COMPLETE
    assert not lost, (
        f"the resumed honest side, kept from deciding, lost: the opponent's file audits {rep.status}, winner"
        f" seat {rep.result['winner']} ({rep.ending}); its session: {said}"
    )
