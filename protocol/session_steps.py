"""What a session signs: its HELLO from what this side proposes or expects (:class:`Proposal`), every
automatic step the line owes from its seat (:class:`Steps`) — COMMIT, VALUE, REVEAL, the RESULT, the sealed
line's deal, draw keys and disclosures, the ABORT a sealed round's verification proves —, its player's
MOVE, and an ABORT or a TIMEOUT only when its evidence or its certificate proves the opponent's fault."""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..engine.actions import Action
from ..engine.match import Match
from .codes import Code
from .messages import (
    DECKS,
    HELLO_KEY_INDEX,
    MAX_EVIDENCE_BYTES,
    MAX_MOVE_TIME_S,
    MAX_ROOM_CHARS,
    RULES_VERSION,
    SEALED_TYPES,
    MsgType,
    commit_value,
    commitment_of,
    public_bytes,
)
from .play import TYPE_OF
from .referee import Hello, Referee
from .sealed_line import SealedSeat, Sent
from .session_events import Deck
from .session_repair import KeptToCite

__all__ = ["Proof", "Proposal", "Steps", "ToSign"]


ToSign = tuple[MsgType, list[object]]
"""One message to sign: its type and its body."""
Proof = tuple[Code, str, bytes]
"""An ABORT's grounds: the code, the message and the opponent's signed message that proves it."""


@dataclass(frozen=True, slots=True)
class Proposal:
    """What this side's HELLO binds: the room code, its nonce, the relay key as announced to it, the
    room's settings — the creator's (all given), or what the joiner expects (None: the creator's) — and this
    player's own consent to a public archive (``publish``, never compared)."""

    room: str
    nonce: bytes
    relay_key: bytes
    rounds: int | None
    double_at_8: bool | None
    move_time_s: int | None
    deck: Deck | None
    watchers: bool | None = None
    publish: bool = False

    @classmethod
    def checked(
        cls,
        room: str,
        nonce: bytes,
        relay_key: bytes,
        rounds: int | None,
        double_at_8: bool | None,
        move_time_s: int | None,
        deck: Deck | str | None,
        *,
        creator: bool,
        watchers: bool | None = None,
        publish: bool = False,
    ) -> Proposal:
        """The proposal, or ``ValueError`` naming what is wrong (``creator``: all the settings are given but
        ``watchers``, whose None is the deck's default: allowed for a sealed deck, not for a shared one)."""
        if not room or len(room) > MAX_ROOM_CHARS:
            raise ValueError(f"a room code is 1 to {MAX_ROOM_CHARS} characters")
        if len(nonce) != 32:
            raise ValueError("a nonce is 32 bytes")
        if rounds is not None and rounds not in (6, 12):
            raise ValueError("rounds are 6 or 12")
        if move_time_s is not None and (type(move_time_s) is not int or not 0 <= move_time_s <= MAX_MOVE_TIME_S):
            raise ValueError(f"the move time is a whole number of seconds, 0 to {MAX_MOVE_TIME_S}")
        if type(relay_key) is not bytes or len(relay_key) != 32:
            raise ValueError("a relay key is 32 bytes")
        if creator and (rounds is None or double_at_8 is None or move_time_s is None or deck is None):
            raise ValueError("the creator sets the room's rounds, doubling, move time and deck")
        if deck is not None and deck not in DECKS:
            raise ValueError(f"the deck is sealed or shared, not {deck!r}")
        if watchers is not None and type(watchers) is not bool:
            raise ValueError("watchers is true, false or None")
        if type(publish) is not bool:
            raise ValueError("publish is true or false")
        d = None if deck is None else Deck(deck)
        if creator and watchers is None:
            watchers = d is Deck.SEALED
        return cls(room, nonce, relay_key, rounds, double_at_8, move_time_s, d, watchers, publish)

    def hello(self, public_key: bytes, creator: Hello | None) -> list[object]:
        """The body of this side's HELLO: its own settings, or the creator's (``creator``) where it expects
        none. Sent even when it differs from the creator's: both sides then see the same mismatch."""
        rounds, dbl, mt, watchers = self.rounds, self.double_at_8, self.move_time_s, self.watchers
        deck = None if self.deck is None else str(self.deck)
        if creator is not None:  # the joiner's: the creator's settings where it expects none
            rounds = creator.rounds if rounds is None else rounds
            dbl = creator.double_at_8 if dbl is None else dbl
            mt = creator.move_time_s if mt is None else mt
            deck = creator.deck if deck is None else deck
            watchers = creator.watchers if watchers is None else watchers
        assert rounds is not None and dbl is not None and mt is not None and deck is not None
        assert watchers is not None
        body: list[object] = [RULES_VERSION, self.room, rounds, dbl, mt, deck]
        body += [self.relay_key, public_key, self.nonce, watchers, self.publish]
        assert body[HELLO_KEY_INDEX] is public_key
        return body


class Steps:
    """The messages seat ``seat`` makes by itself, with its key: which are due from it now."""

    def __init__(self, key: Ed25519PrivateKey, seat: int, proposal: Proposal) -> None:
        self.key = key
        self.seat = seat
        self.proposal = proposal
        self.public_key = public_bytes(key)

    def hello(self, line: Referee) -> ToSign:
        return MsgType.HELLO, self.proposal.hello(self.public_key, line.hellos[0] if self.seat == 1 else None)

    def due(self, line: Referee) -> list[ToSign] | Proof | None:
        """What this seat signs now, in order: one or more messages, the grounds of an ABORT, or None (it
        waits for the opponent or for its player's move)."""
        sl = line.sealed
        if isinstance(sl, SealedSeat) and sl.owes_stop():
            return _steps(sl.pending())  # this seat's own stop (a check only its secrets make): its disclosure
        exp = line.expected()
        if exp is None or exp[0] != self.seat:
            return None
        t = exp[1]
        if t is MsgType.HELLO:
            assert line.hellos[0] is not None
            return [self.hello(line)]
        if t is MsgType.COMMIT:
            assert line.sid is not None
            return [(MsgType.COMMIT, [commitment_of(line.sid, commit_value(self.key, line.sid, 0))])]
        if t is MsgType.VALUE:
            assert line.sid is not None
            return [(MsgType.VALUE, [commit_value(self.key, line.sid, 1)])]
        if t is MsgType.REVEAL:
            assert line.sid is not None
            return [(MsgType.REVEAL, [commit_value(self.key, line.sid, 0)])]
        if t is MsgType.RESULT:
            m = line.match
            assert m is not None
            return [(MsgType.RESULT, [m.points[0], m.points[1], m.winner, m.state_hash()])]
        if t is MsgType.ABORT:
            return line.sealed_abort()  # a sealed round's verification proved the opponent's fault
        if isinstance(sl, SealedSeat) and (t in SEALED_TYPES or sl.made() is not None):
            return _steps(sl.pending())  # the sealed line's automatic steps: deal, draw key, disclosure
        return None  # a move: the player decides

    def refusal(self, line: Referee, code: Code, message: str, evidence: bytes, evidence2: bytes) -> str | None:
        """Why this seat does not sign the ABORT ``code`` with that evidence (the message to drop it with);
        None when the evidence proves the opponent's fault: an honest session never sends an ABORT that
        would count as its own resignation."""
        if len(evidence) > MAX_EVIDENCE_BYTES or len(evidence2) > MAX_EVIDENCE_BYTES:
            return f"{message} (too large to cite as evidence)"
        problem = line.evidence_problem(code, evidence, evidence2, self.seat)
        return None if problem is None else f"{message} ({problem})"

    def timeout(self, line: Referee, blob: bytes, kept: KeptToCite) -> list[object] | str:
        """The body of this seat's TIMEOUT carrying the relay's certificate ``blob``, or why that does not (yet)
        prove the opponent's silence. When the certificate names the opponent's last frame as junk it sent, the
        TIMEOUT cites it (one ``kept``, or one of our own messages, if it sent that unflagged; §7.3)."""
        named = line.silent_frame_needed(blob, self.seat)
        cited = b"" if named is None else kept.cite(line, self.seat, named)
        problem = line.certificate_problem(blob, cited, self.seat)
        return [blob, cited] if problem is None else problem

    def move(self, line: Referee, trial: Match, action: Action) -> list[object]:
        """The body of this seat's MOVE of ``action`` (``trial``: the match after it)."""
        sl = line.sealed
        if isinstance(sl, SealedSeat):  # [action, state before, keys] (spec/sealed-line.md §2)
            return list(sl.move(action).body)
        return [action.code, trial.state_hash()]


def _steps(outs: list[Sent]) -> list[ToSign] | None:
    return [(TYPE_OF[o.kind], list(o.body)) for o in outs] or None
