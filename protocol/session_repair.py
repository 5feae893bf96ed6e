"""The repair of a session's line (spec/protocol.md §5.2, §8): nothing the network could have done ends a
match, so what arrives out of order is kept until the gap fills (:class:`AheadOfLine`), what is dropped is
kept to cite should the relay name it as the opponent's last frame (:class:`KeptToCite`), the opponent's
requests to send again are answered within a budget (:class:`Answers`). The repair after a crash is
:mod:`.session_resume`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .messages import END_TYPES, MAX_EVIDENCE_BYTES, Msg, msg_hash
from .referee import Referee
from .session_outbox import Outbox

__all__ = [
    "FIRST_FLAGGED_KEPT",
    "MAX_ANSWERS",
    "MAX_ANSWER_MESSAGES",
    "MAX_BUFFERED",
    "AheadOfLine",
    "Answers",
    "KeptToCite",
]

FIRST_FLAGGED_KEPT = 8
"""How many of the first flagged frames dropped a session keeps to cite (see :class:`KeptToCite`)."""
MAX_ANSWERS = 4
"""How many RESEND requests a session answers per position of the line and per call of
:meth:`Session.time_passed` (forged or replayed requests then cost a bounded number of resends). A client
that lingers after the end to answer the opponent calls ``time_passed`` now and then to refill it."""
MAX_BUFFERED = 64
"""How many frames ahead of the line a session keeps (more are dropped: RESEND brings them again)."""
MAX_ANSWER_MESSAGES = 16
"""At most this many messages of the line answer one RESEND (then our end and last frames): a request for the
whole line would otherwise hold our own next message back behind it (the client paces what it sends), and
fill the relay's buffer for an absent seat. The asker takes them and asks again from where it got to."""


class AheadOfLine:
    """The opponent's messages ahead of the line, by sequence number (at most :data:`MAX_BUFFERED`), and the
    position of the line the last request for the gap was made at (one request a position)."""

    def __init__(self) -> None:
        self._msgs: dict[int, Msg] = {}
        self._asked = -1

    def __len__(self) -> int:
        return len(self._msgs)

    def hold(self, msg: Msg, next_seq: int) -> bool:
        """Keep ``msg`` (the line is at ``next_seq``); True when the gap before it is to be asked for now."""
        if msg.seq not in self._msgs and len(self._msgs) < MAX_BUFFERED:
            self._msgs[msg.seq] = msg
        if self._asked != next_seq:
            self._asked = next_seq
            return True
        return False

    def next(self, next_seq: int) -> Msg | None:
        """The held message at ``next_seq``, taken out (those before it, now behind the line, are dropped)."""
        for k in [k for k in self._msgs if k < next_seq]:
            del self._msgs[k]
        return self._msgs.pop(next_seq, None)

    def clear(self) -> None:
        self._msgs.clear()


class KeptToCite:
    """The opponent's frames this side did not use, kept so that, if the relay names one as the opponent's
    last, a TIMEOUT cites it as junk (spec/protocol.md §7.3); each small enough to cite. The last
    :data:`MAX_BUFFERED` dropped, and apart the first :data:`FIRST_FLAGGED_KEPT` flagged ones: a flagged frame
    is the witness's last frame of a seat only when it is that seat's first (spec/relay.md), so later flagged
    junk never pushes a citable frame out."""

    def __init__(self) -> None:
        self._last: dict[bytes, bytes] = {}
        self._first_flagged: dict[bytes, bytes] = {}
        self._flagged = False

    @contextmanager
    def flagged(self, flagged: bool) -> Iterator[None]:
        """While it lasts, what is kept came with the relay's control flag (when ``flagged``)."""
        self._flagged = flagged
        try:
            yield
        finally:
            self._flagged = False

    def keep(self, frame: bytes) -> None:
        if len(frame) > MAX_EVIDENCE_BYTES:
            return
        if self._flagged:
            if len(self._first_flagged) < FIRST_FLAGGED_KEPT:
                self._first_flagged[msg_hash(frame)] = frame
            return
        self._last[msg_hash(frame)] = frame
        while len(self._last) > MAX_BUFFERED:
            del self._last[next(iter(self._last))]

    def cite(self, line: Referee, seat: int, h: bytes) -> bytes:
        """The frame to cite as the opponent's last, whose hash is ``h``: one kept, or one of ``seat``'s own
        messages in ``line`` (if the opponent sent that unflagged); b"" when this side holds none."""
        own = (m.frame for m in line.msgs if m.seat == seat and m.hash == h)
        return self._last.get(h) or self._first_flagged.get(h) or next(own, b"")


class Answers:
    """The answers to the opponent's RESEND requests. Each answers :data:`MAX_ANSWERS` requests per position
    of the line and per tick of the clock (:meth:`refill`); the lowest request refused for it is owed to the
    next tick (a request left unanswered makes the asker "waiting" at the relay's witness, never silent)."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self._left = MAX_ANSWERS
        self._epoch = 0
        self._owed: tuple[bytes, int] | None = None

    def refill(self) -> tuple[bytes, int] | None:
        """A tick: the budget is full again; returns the request owed (to answer now), if any."""
        self._left = MAX_ANSWERS
        owed, self._owed = self._owed, None
        return owed

    def _spend(self, epoch: int, match: bytes, from_seq: int) -> bool:
        if self._epoch != epoch:
            self._epoch, self._left = epoch, MAX_ANSWERS
        if self._left <= 0:
            # more requests than an honest peer sends: the lowest is answered at the next tick (an asker's
            # request must not stay unanswered: the relay's witness counts it as waiting for us)
            if self._owed is None or from_seq < self._owed[1]:
                self._owed = (match, from_seq)
            return False
        self._left -= 1
        return True

    def answer(
        self, line: Referee, outbox: Outbox, epoch: int, match: bytes, from_seq: int, awaited: bool
    ) -> list[bytes]:
        """The frames that answer a request for ``line`` from ``from_seq`` on (``match``: the match id it
        names, b"" for none), in wait ``epoch``; ``awaited``: the line waits for this seat. Nothing for another
        match's request, or for one over the budget (then owed to the next tick)."""
        if match and line.sid is not None and match != line.sid:
            return []  # another match's request
        if not self._spend(epoch, match, from_seq):
            return []
        last = outbox.last_frame(line)
        if not match and line.sid is not None:
            # asked by a side that holds no match id yet: it can use only the HELLOs (then it asks again
            # with the match id); never the whole line, so a forged RESEND(b"", 0) costs two frames
            hellos = [x.frame for x in line.msgs[from_seq:2]]
            if last is not None and last not in hellos and not awaited:
                hellos.append(last)  # our last frame: the relay's clock then sees the request answered
            return hellos
        frames = [x.frame for x in line.msgs[from_seq : from_seq + MAX_ANSWER_MESSAGES]]
        if outbox.own_end is not None and outbox.own_end not in frames:
            frames.append(outbox.own_end)
        end = line.msgs[-1] if line.finished and line.msgs else None
        if end is not None and end.type in END_TYPES and end.frame not in frames:
            frames.append(end.frame)  # the opponent's own end message: the line is over, whatever it asks
        if not frames:
            # nothing new: show we heard, unless we are the one awaited (a re-sent message would look,
            # to the relay's clock, like an answer we have not given)
            if last is not None and not awaited:
                frames = [last]
        elif last is not None and frames[-1] != last:
            frames.append(last)  # the relay's last frame from us stays our last one
        return frames
