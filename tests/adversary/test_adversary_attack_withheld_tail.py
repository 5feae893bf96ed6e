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

The fix: signatures cannot prove that the opponent holds nothing past our file, but the witness can. The
relay's answer to ``resume`` names the hash of the seat's own last witnessed frame (``ResumeInfo.own_last``),
and ``Session.reconnected(own_last=...)`` takes it: while it is none of the frames the file holds, the
resumed side decides nothing (it keeps asking; a withholding cheater gets a stall, never a forfeit); an
answer that brings the lost message back ends the resync as usual.
"""

from __future__ import annotations

from koikoi.engine import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.harness import fixed_key, make_pair
from koikoi.protocol.messages import MsgType, parse, parse_resend, resend_frame
from koikoi.protocol.session import Session
from koikoi.protocol.transcript import encode_transcript, parse_transcript, record

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
    s2.reconnected(own_last=w.clocks[HONEST].last_hash)  # the relay's word, as `resume` gives it to the client
    s2.receive(own.frame)
    if s2.resyncing and not s2.my_turn:
        # the defence: it does not decide again; an honest answer (the line from p: its own lost message
        # too) lets it go on, with the message it signed before, so nothing is signed twice
        for f in [x.frame for x in c.referee.msgs[p:]] + [own.frame]:
            s2.receive(f)
        resumed: Session = s2  # (a fresh name: mypy keeps the narrowing of s2.resyncing above)
        assert not resumed.resyncing and resumed.referee.msgs[p].frame == s_new.frame
        return
    m = s2.referee.match
    assert m is not None
    done = parse(s_new.frame).body[0]
    other = next(a for a in m.legal_actions() if a.code != done)  # 3. decides again, differently
    s2.play(other)
    sent = s2.frames_to_send()
    file2 = encode_transcript(lost) + b"".join(record(x.frame) for x in s2.records())
    for f in sent:
        c.receive(f)  # 4. the cheater's session sees two honest messages for SEQ p
    for f in c.frames_to_send():
        s2.receive(f)
    file2 += b"".join(record(x.frame) for x in s2.records())
    cheat_file = bytes(pair.files[CHEAT]) + b"".join(record(x.frame) for x in c.records())
    for name, data in (("cheater", cheat_file), ("honest", file2)):
        rep = audit(data)
        assert not (rep.valid and rep.result["winner"] == CHEAT), (
            f"the {name}'s file audits {rep.status}, winner seat {rep.result['winner']}: {rep.ending}"
        )


def test_the_relays_word_on_our_last_frame_can_stall_a_resume_but_never_make_it_sign() -> None:
    """Who could forge, drop or replay ``last`` in the relay's ``resumed`` (spec/protocol.md §8): a false hash
    (the relay, or a man in the middle) keeps the resumed side resyncing for ever — it signs nothing, decides
    nothing, and keeps asking; a replayed one (an older frame the file holds) changes nothing; none (a relay
    that restarted) leaves the resume as before. Each is checked against an honest opponent's answer."""
    seed = b"x10c-own-last"
    pair = make_pair(Settings(6), ("greedy", "greedy"), seed, move_time_s=MOVE)
    h, c = pair.sessions[HONEST], pair.sessions[CHEAT]
    for _ in range(20_000):
        if h.referee.next_seq >= 12 and h.my_turn and not any(pair.queues):
            break
        assert pair.step()
    frames = parse_transcript(bytes(pair.files[HONEST])).frames
    older = next(m for m in reversed(h.referee.msgs[:-2]) if m.seat == HONEST)
    for word, decides in ((bytes(range(32)), False), (older.hash, True), (b"", True)):
        s2 = Session.from_transcript(fixed_key(seed, HONEST), frames, resend_after=5.0)
        s2.reconnected(own_last=word)
        asked = s2.frames_to_send()
        assert resend_frame(c.referee.sid or b"", len(frames)) in asked
        theirs = c.referee.last_of(CHEAT)
        assert theirs is not None and c.referee.next_seq == len(frames)
        s2.receive(theirs.frame)  # the honest opponent's answer: nothing newer than the file, its last message
        assert s2.my_turn is decides and s2.resyncing is not decides, word.hex()
        if not decides:
            w = s2.wait()
            assert w is not None
            s2.time_passed(w.epoch, 60.0)
            out = s2.frames_to_send()
            assert out and all(parse_resend(f) is not None or f in frames for f in out), "it signed something"
