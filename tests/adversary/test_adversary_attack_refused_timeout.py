"""Attack: the relay's refusal of frames for a full buffer (33c8caa: "a full buffer for an absent seat refuses
frames instead of closing the room") is silent. A cheater fills its own buffer with the honest side's answers
and leaves; the honest side's winning TIMEOUT is refused, it never knows, it goes home the winner — and the
cheater comes back and wins the same match on time, its transcript auditing ``on_time``, cheater winner.

Steps (a modified client, an honest relay, an honest opponent; the cheater hosts the room with a move time
of 60 s, under the relay's grace of 120 s):
1. The match is played normally up to a turn of the cheater where it has several messages in a row (a play,
   a choice after the draw, a koi-koi decision, the next round's first play as the new dealer, ...). The
   honest side's last message is in, witnessed.
2. In one burst the cheater sends all but the last of them, before each (and after the last sent) four
   ``RESEND(id, 2)`` asks, flagged — then closes its connection (its close reaches the relay right behind its
   frames, before any answer comes back).
3. The honest side takes each of the cheater's messages (a new position of its line: a fresh budget of four
   answers, spec/protocol.md §5.2) and answers each ask with 16 messages and its own last message: 4 × 17 = 68
   flagged frames a position, sent within its rate. The cheater is away: the relay buffers them, 256 at most
   (relay/core.py ``_on_frame``); the rest are refused — not taken, not counted, and the sender is not told.
   From there every frame of the honest seat is dropped (its number is no longer the relay's next).
   Variant ``run_of_four``: three messages sent, four positions, 272 frames (about one match in five of
   greedy bots has such a run for a given seat). Variant ``rewind``: two messages, three positions (204
   frames; most matches), the burst opened by a ``resume`` on a new connection claiming it received nothing:
   the relay rewinds the honest seat's count by up to ``MAX_REWIND`` (64) and its ``peer back`` makes the
   honest client send those frames again, into the buffer too (the cheater first had the honest side answer a
   few asks while connected, so that it has sent 64 frames).
4. The line waits for the cheater, which stays away. At the move time the honest side asks for a
   certificate: the cheater is silent (its last frame is its third message, its asks were answered), the
   certificate fits, the honest session signs and "sends" its TIMEOUT — refused. It has won on time; with its
   end message unacknowledged it does not ``leave`` (client/match_loop.py ``_deliver_last``) and closes.
5. Seconds later the cheater takes its seat back: what waited for it is flushed (no TIMEOUT). It plays its
   fourth message, so its line waits for the honest seat, which is away (the grace runs from its close).
   A move time later the witness certifies the honest seat silent: last[honest] is its last message before
   the flood, last[cheater] the fourth message, every step of §7.3 holds on the cheater's line. The
   cheater's TIMEOUT ends its transcript ``on_time``, the cheater the winner.

Harm: the honest player, who won on time by the book, loses the same match on time in the cheater's
transcript, and the audit certifies it (issue 10: a loss on time of the honest player; the honest side's own
transcript says the opposite — the two files disagree, the relay signed both certificates, and neither file
shows a signature the cheater should not have made). A cheater can do it in most matches whose move time is
under the grace period. (With the named self-lockout stall, spec/relay.md, it needs no run at all: the honest
side's periodic RESENDs fill the buffer while its certificates are refused ``seat_locked_out``.) The same refusal
lets a cheater that is losing escape (send the last ask batch after a message that makes the line wait for
the honest side: its next move is refused, so none of its certificates fit, and the room closes
``opponent_left`` with nobody winning).

The flaw: a refused frame is indistinguishable, for its sender, from one taken; and the honest client treats
an end it sent as delivered. Suggested fix: never refuse an unflagged frame (an honest sender has one per
message it signs; when the buffer is full drop or refuse *flagged* frames — answers and requests, which are
asked for again — and bound unflagged junk separately, refusing the flooder's own frames); or tell the sender
("refused from n") so its client keeps the seat and sends again; and have the client confirm with the relay
that its end message was taken (its count, ``peer back``/``resumed`` ``received``) before it closes.
"""

from __future__ import annotations

import copy

import pytest
from relay_world import End, World, envelope

from koikoi.engine.bots import GreedyBot
from koikoi.protocol.audit import audit
from koikoi.protocol.framing import encode
from koikoi.protocol.messages import resend_frame
from koikoi.protocol.session import MatchDecided

CHEAT, HONEST = 0, 1  # the cheater hosts: it chose the move time
MOVE = 60  # under the relay's grace (120 s)
ASKS = 4  # per position of the line: the honest side's budget (protocol/session.py MAX_ANSWERS)
RUNS = {"run_of_four": 3, "rewind": 2}
"""The cheater's messages in the burst (one more follows once the honest side is gone)."""


class PacedWorld(World):
    """The honest client paces its frames under the relay's rate (client/link.py ``_pace``: 50 a second)."""

    def send(self, end: End, d: bytes, ctl: bool) -> None:
        if end.seat == HONEST and end.cid:
            self.now += 1 / 50
        super().send(end, d, ctl)


def _run_ahead(w: World) -> int:
    """How many actions in a row the cheater's bot takes from here (on copies: nothing is played)."""
    c = w.ends[CHEAT]
    cs = c.session
    assert cs is not None and cs.referee.match is not None and c.bot is not None
    assert isinstance(c.bot, GreedyBot)  # (a copy by its seed: a compiled engine's bot does not deep-copy)
    trial, bot = cs.referee.match.copy(), GreedyBot(copy.deepcopy(c.bot.rng))
    n = 0
    while not trial.is_over and trial.to_move == CHEAT:
        trial.apply(bot.choose(trial.view(CHEAT)), CHEAT)
        n += 1
    return n


def _to_a_run(how: str) -> PacedWorld:
    """A match played on to a turn of the cheater of more than ``RUNS[how]`` messages (the first of a few seeds
    that has one)."""
    for k in range(60):
        w = PacedWorld(b"x10i-refused-timeout-%s-%d" % (how.encode(), k), MOVE)
        w.open()
        cs = w.ends[CHEAT].session
        assert cs is not None
        while not cs.is_finished:
            if cs.my_turn and not w.core.out and cs.referee.next_seq >= 24 and _run_ahead(w) > RUNS[how]:
                return w
            if not w.step():
                break
    raise AssertionError(f"no run of {RUNS[how] + 1} messages of the cheater in 60 matches")


@pytest.mark.parametrize("how", sorted(RUNS))
def test_a_silently_refused_timeout_never_makes_the_winner_lose_on_time(how: str) -> None:
    w = _to_a_run(how)  # 1.
    c, h = w.ends[CHEAT], w.ends[HONEST]
    cs, hs = c.session, h.session
    assert cs is not None and hs is not None and c.bot is not None
    core = w.core
    c.silent = True
    sid = cs.referee.sid
    assert sid is not None
    cs.frames_to_send()
    ask = resend_frame(sid, 2)
    burst: list[tuple[bytes, bool]] = []  # 2. asks, a message, asks, ... asks
    for _ in range(RUNS[how]):
        burst += [(ask, True)] * ASKS
        events = cs.play(c.bot.choose(cs.view()))
        burst += [(f, False) for f in cs.frames_to_send()]
        w.note(c, events)  # (written to its file)
    burst += [(ask, True)] * ASKS
    exp = cs.referee.expected()
    assert exp is not None and exp[0] == CHEAT  # its line still waits for it
    if how == "rewind":
        for _ in range(4):  # earlier, still connected: a few asks, so that the honest side sends 64 frames
            for _ in range(ASKS):
                w.send(c, ask, True)
            w.pump()
            w.now += 5.5
            w.tick(h)
            w.pump()
        w.connect(c)  # the burst opens with a resume claiming nothing received: a rewind by MAX_REWIND
        resume = {"t": "resume", "room": w.room, "seat": CHEAT, "token": c.token, "received": 0}
        core.message(w.now, c.cid, encode(resume | w.prove(c.cid, cs.key)))
    for d, ctl in burst:
        c.sent += 1
        c.log.append((c.sent, d, ctl))
        core.message(w.now, c.cid, envelope(c.sent, d, ctl))
    core.disconnected(w.now, c.cid)  # ... and its close, right behind its frames
    c.cid = 0
    dropped_before = core.metrics.frames_dropped_total
    w.pump()  # 3. the honest side answers; the relay buffers 256 and refuses the rest
    t_end = w.now + 3 * MOVE
    while w.now < t_end and not hs.is_finished:  # 4. the honest side claims its win on time
        w.now += 0.5
        core.tick(w.now)
        w.pump()
        w.tick(h)
    he = hs.ended
    assert isinstance(he, MatchDecided) and he.outcome.status == "on_time" and he.outcome.winner == HONEST, he
    refused = core.metrics.frames_dropped_total - dropped_before
    core.disconnected(w.now, h.cid)  # it won: it closes (its TIMEOUT unacknowledged, no leave)
    h.cid = 0
    w.pump()
    w.now += 5  # 5. the cheater takes its seat back
    w.resume(c)
    if not cs.is_finished:  # (it got the honest TIMEOUT: the attack failed)
        c.silent = False  # its fourth message (and any more of its turn), now sent
        while cs.my_turn:
            w.note(c, cs.play(c.bot.choose(cs.view())))
        c.silent = True
        w.pump()
        t_end = w.now + MOVE + 1
        while w.now < t_end:
            w.now += 0.5
            core.tick(w.now)
            w.pump()
        r = w.request(c, {"t": "certify"}, "certificate")
        assert r is not None
        w.note(c, cs.witnessed(r["cert"]))
    rep = audit(bytes(c.file))
    assert not (rep.valid and rep.status == "on_time" and rep.result["winner"] == CHEAT), (
        f"the honest side won on time (its TIMEOUT one of {refused} frames the relay refused without a word), "
        f"went home, and lost the same match on time in the cheater's transcript: {rep.status}, {rep.ending}"
    )
