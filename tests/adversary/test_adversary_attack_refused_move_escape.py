"""Attack: a cheater escapes its loss on time at will by filling its own buffer at the relay with the honest side's
answers as it leaves: the relay then refuses the honest side's next move without a word (33c8caa: "a full
buffer for an absent seat refuses frames"), so none of the honest side's certificates ever fits its line, and
the room closes ``opponent_left`` with nobody winning.

Steps (a modified client, an honest relay, an honest opponent, move time 60 s under the relay's grace, 120 s):
1. The match is played normally up to a turn of the cheater of three messages or more (a play, a choice
   after the draw, a koi-koi decision, ...). The cheater is losing, or simply wants out.
2. In one burst the cheater sends the messages of its turn, four ``RESEND(id, 2)`` asks (flagged) before each
   and four after the last — then closes its connection (the close reaches the relay right behind its
   frames, before any answer comes back). It never comes back.
3. The honest side answers: each of the cheater's messages is a new position of its line, with a fresh budget
   of four answers (spec/protocol.md §5.2), each of 16 messages and its own last: 4 × 4 × 17 = 272 flagged
   frames, within its rate. The cheater is away: the relay buffers 256 (relay/core.py ``_on_frame``) and
   refuses the rest — not taken, not counted, and the sender is not told.
4. The honest side plays its move: refused too (its number is no longer the relay's next). It waits for the
   cheater. At the move time it asks for a certificate; the witness's last frame of the honest seat is its
   message before the flood, not its move: step 5 of §7.3 fails, ``CertificateRejected`` — again and again.
5. The cheater's grace ends: the room closes ``opponent_left`` with a certificate that does not fit either.
   The honest client stops, nobody winning (``opponent_left``); the match it was winning is unfinished.

Harm: a losing player escapes for free, whenever it has a turn of three messages (most matches have many):
issue 10, "a losing player must not escape for free" (silence must be a loss on time). The witness saw the
cheater silent for the whole grace period; only the relay's silent refusal of the honest move keeps the
honest side from proving it.

The flaw and fix: as in ``test_adversary_attack_refused_timeout.py`` (which turns the same refusal into a
false win): never refuse an unflagged frame (an honest sender sends one per message it signs; refuse or drop
*flagged* frames when the buffer is full, and bound a flooder's unflagged junk separately), or tell the
sender which frames were refused so it can send them again.
"""

from __future__ import annotations

import copy
from typing import Any

from relay_world import End, World, envelope

from koikoi.engine.bots import GreedyBot
from koikoi.protocol.messages import resend_frame
from koikoi.protocol.session import MatchDecided

CHEAT, HONEST = 0, 1
MOVE = 60  # under the relay's grace (120 s)
ASKS = 4  # per position of the line: the honest side's budget (protocol/session.py MAX_ANSWERS)


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
    return n if not trial.is_over else 0


def _to_a_turn() -> PacedWorld:
    """A match played on to a turn of the cheater of three messages or more (the first of a few seeds)."""
    for k in range(20):
        w = PacedWorld(b"x10i-refused-move-%d" % k, MOVE)
        w.open()
        cs = w.ends[CHEAT].session
        assert cs is not None
        while not cs.is_finished:
            if cs.my_turn and not w.core.out and cs.referee.next_seq >= 24 and _run_ahead(w) >= 3:
                return w
            if not w.step():
                break
    raise AssertionError("no turn of three messages of the cheater in 20 matches")


def test_a_cheater_that_fills_its_own_buffer_as_it_leaves_still_loses_on_time() -> None:
    w = _to_a_turn()  # 1.
    c, h = w.ends[CHEAT], w.ends[HONEST]
    cs, hs = c.session, h.session
    assert cs is not None and hs is not None and c.bot is not None
    core = w.core
    c.silent = True
    sid = cs.referee.sid
    assert sid is not None
    cs.frames_to_send()
    ask = resend_frame(sid, 2)
    burst: list[tuple[bytes, bool]] = []  # 2. asks, a message, asks, ..., the turn's last message, asks
    while cs.my_turn:
        burst += [(ask, True)] * ASKS
        events = cs.play(c.bot.choose(cs.view()))
        burst += [(f, False) for f in cs.frames_to_send()]
        w.note(c, events)
    burst += [(ask, True)] * ASKS
    for d, ctl in burst:
        c.sent += 1
        core.message(w.now, c.cid, envelope(c.sent, d, ctl))
    core.disconnected(w.now, c.cid)  # ... and its close, right behind its frames; it never comes back
    c.cid = 0
    dropped_before = core.metrics.frames_dropped_total
    notices: list[dict[str, Any]] = []
    t_end = w.now + core.cfg.grace + 3 * MOVE
    while w.now < t_end and not hs.is_finished:  # 3.-5.: the honest side answers, plays, waits, claims
        if not w.step():
            w.now += 0.3
        core.tick(w.now)
        w.pump()
        closed = [x for x in h.replies if x.get("t") == "room_closed"]
        if closed:
            notices += closed
            h.replies.clear()
            if isinstance(closed[0].get("cert"), bytes):
                w.note(h, hs.witnessed(closed[0]["cert"]))
            break  # client/match_loop.py: opponent_left with a certificate that does not fit: nobody wins
        w.tick(h)
    refused = core.metrics.frames_dropped_total - dropped_before
    e = hs.ended
    assert isinstance(e, MatchDecided) and e.outcome.status == "on_time" and e.outcome.winner == HONEST, (
        f"the cheater left for good and never lost: the relay refused {refused} of the honest side's frames "
        f"without a word, its move among them, so no certificate fit; the honest session ended {e}, the relay "
        f"said {[(n.get('reason'), 'cert' in n) for n in notices]}"
    )
