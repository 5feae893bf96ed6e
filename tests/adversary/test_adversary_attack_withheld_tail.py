"""Attack: the cheater withholds the honest side's own lost message after a resume, so the honest side
decides again and equivocates — a proven fault, the cheater wins by forfeit in both files.

Spec §8 ("A lost tail") and issue 10: a file that lost its tail (a restored backup, a damaged disk) must not
make its player decide again: the resumed session asks RESEND(id, n) and "the answer holds every message from
its next SEQ — its own lost ones too … or the opponent's last message. Then it goes on."

1. The honest seat sends its move s at SEQ p (the cheater takes it); then its file loses that last record.
2. It resumes (``Session.from_transcript``): RESEND(id, p). The cheater answers only with its own last message
   (a message the honest side holds), as an honest peer that held nothing from p would — the honest side
   cannot tell the two apart, ends the resync (``_heard``) and decides again at SEQ p.
3. The honest player (a person, or any bot that is not deterministic) picks another action: s' at SEQ p.
4. The cheater now holds s and s', two messages of the honest seat for SEQ p: equivocation, proven; its
   (unmodified) session sends the ABORT. Both transcripts audit ``valid``, ``forfeit``, cheater winner.

Harm: an honest player who restored a backup (the case §8 was written for) loses by forfeit, certified by the
audit, whenever the opponent simply leaves out one message from its answer.

Harm: the cheater's transcript audits ``valid``, ``forfeit`` (equivocation, evidence_verified), cheater the
winner. (The honest file stays unfinished: the ABORT chains on the lost message, so it is dropped there.)

The fix: signatures cannot prove that the opponent holds nothing past our file, but the relay saw our frames.
It keeps copies of each seat's recent frames and gives them back in its answer to ``resume``
(``ResumeInfo.own_frames``); ``Session.reconnected(own_frames=...)`` takes back every message of ours among them
that the file lacks, and decides nothing until the line holds the newest of them (spec/protocol.md §8).
"""

from __future__ import annotations

import pytest
from in_memory import step_until

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import MsgType, parse, parse_resend, resend_frame
from koikoi.protocol.session import Session, SessionClosed
from koikoi.protocol.transcript import parse_transcript, record
from koikoi.testing import fixed_key, make_pair

HONEST, CHEAT = 0, 1
MOVE = 30


def test_a_withheld_own_message_after_a_resume_never_makes_the_honest_side_equivocate() -> None:
    seed = b"x10b-withheld-tail"
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed, move_time_s=MOVE)
    c, h = pair.sessions[CHEAT], pair.sessions[HONEST]
    for _ in range(20_000):
        r = h.referee
        if r.next_seq >= 12 and r.msgs[-1].seat == HONEST and r.msgs[-1].type is MsgType.MOVE:
            break
        assert pair.step()
    pair.silent[CHEAT] = True
    while pair.step():  # the cheater takes the honest move (and plays nothing: it is silent)
        pass
    s_new = h.referee.msgs[-1]
    p = s_new.seq
    assert c.referee.next_seq == p + 1 and c.referee.msgs[p].frame == s_new.frame
    frames = parse_transcript(bytes(pair.files[HONEST])).frames
    assert frames[-1] == s_new.frame
    lost = frames[:-1]  # 1. the file lost its last record
    s2 = Session.from_transcript(fixed_key(seed, HONEST), lost, resend_after=5.0)
    out = s2.frames_to_send()
    assert resend_frame(c.referee.sid or b"", p) in out
    # 2. the cheater answers with its own last message only (withholding the honest side's own s)
    own = c.referee.last_of(CHEAT)
    assert own is not None and own.seq < p
    w = pair.witness
    assert w is not None
    s2.reconnected(own_frames=w.clocks[HONEST].copies.values())  # the relay's copies, as `resume` gives them
    assert s2.referee.next_seq == p + 1 and s2.referee.msgs[p].frame == s_new.frame, "its lost move is not back"
    s2.receive(own.frame)  # the cheater's "answer": nothing newer than the file
    resumed: Session = s2  # (a fresh name: mypy keeps the narrowing of s2 from above)
    assert not resumed.resyncing  # it goes on from its own move: whatever it signs next is at p + 1 or later
    while resumed.my_turn:
        m = resumed.referee.match
        assert m is not None
        resumed.play(m.legal_actions()[-1])
    assert all(
        parse(x.frame).seq != p for x in resumed.records() if parse(x.frame).seat == HONEST and x.frame != s_new.frame
    )
    for f in resumed.frames_to_send():
        c.receive(f)
    cheat_file = bytes(pair.files[CHEAT]) + b"".join(record(x.frame) for x in c.records())
    rep = audit(cheat_file)
    assert not (rep.valid and rep.result["winner"] == CHEAT), f"the cheater's file audits {rep.status}: {rep.ending}"


def test_the_relays_copy_of_our_last_frame_is_taken_only_when_we_signed_it() -> None:
    """Who could forge, drop or replay ``last`` in the relay's ``resumed`` (spec/protocol.md §8): a made-up
    frame, or the opponent's message, is not ours and is ignored; an older frame of ours the file holds changes
    nothing; none (a relay that restarted) leaves the resume as before. Each resume then goes on after an
    honest opponent's answer. And a copy of our last message whose predecessor the file lost too (one turn
    of two messages) keeps the resume waiting, signing nothing — not even a resignation — but requests; with
    the copies of both, it has both back."""
    seed = b"x10c-own-last"
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed, move_time_s=MOVE)
    h, c = pair.sessions[HONEST], pair.sessions[CHEAT]

    def honest_moved_twice() -> bool:
        m = h.referee.msgs
        return len(m) >= 12 and m[-1].seat == m[-2].seat == HONEST and c.my_turn and not any(pair.queues)

    step_until(pair, honest_moved_twice)
    frames = parse_transcript(bytes(pair.files[HONEST])).frames
    theirs = c.referee.last_of(CHEAT)
    older = next(m for m in reversed(h.referee.msgs[:-2]) if m.seat == HONEST)
    assert theirs is not None and c.referee.next_seq == len(frames)
    w = pair.witness
    assert w is not None
    copies = list(w.clocks[HONEST].copies.values())
    assert frames[-1] in copies and frames[-2] in copies
    cases = [(frames, [bytes(range(32))], True), (frames, [theirs.frame], True), (frames, [older.frame], True),
             (frames, [], True), (frames[:-2], copies, True), (frames[:-2], [frames[-1]], False)]  # fmt: skip
    for kept, word, decides in cases:
        s2 = Session.from_transcript(fixed_key(seed, HONEST), kept, resend_after=5.0)
        s2.reconnected(own_frames=word)
        asked = s2.frames_to_send()
        assert resend_frame(c.referee.sid or b"", len(kept)) in asked
        s2.receive(theirs.frame)  # the opponent's answer: nothing newer than it holds, its last message
        assert s2.resyncing is not decides, (len(kept), [x[:8].hex() for x in word])
        if len(kept) < len(frames) and decides:  # both lost messages back from the relay's copies
            assert [m.frame for m in s2.referee.msgs[: len(frames)]] == frames
        if not decides:
            with pytest.raises(SessionClosed):  # not even a resignation: it could take a lost message's SEQ
                s2.resign()
            waits = s2.wait()
            assert waits is not None
            s2.time_passed(waits.epoch, 60.0)
            out = s2.frames_to_send()
            assert out and all(parse_resend(f) is not None or f in frames for f in out), "it signed something"
