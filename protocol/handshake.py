"""The handshake of a match's line (spec/protocol.md §4): the two HELLOs, their agreement, and the
commit-reveal that picks the first dealer.

:class:`Handshake` holds what the first five messages bind — both seats' HELLOs and keys, the session id
(the match id every later message carries), the settings, the creator's commitment, both values, the match
seed and the first dealer — or, when the HELLOs disagree, the fields they differ in. Each value is set once,
by the message that binds it, after that message's checks passed: the session id exists exactly when both
HELLOs are in and agree.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..engine.deal import SeededDeal
from ..engine.match import Settings, choose_first_dealer
from .codes import Code
from .errors import ProtocolError
from .messages import (
    DECKS,
    HELLO_KEY_INDEX,
    MAX_MOVE_TIME_S,
    MAX_ROOM_CHARS,
    RULES_VERSION,
    ZERO_HASH,
    Msg,
    MsgType,
    commitment_of,
    load_public,
    match_seed,
    session_id,
)
from .witness import fingerprint

__all__ = ["HANDSHAKE_MESSAGES", "Handshake", "Hello", "HelloField", "Mismatch", "describe_mismatch"]

HANDSHAKE_MESSAGES = 5
"""The handshake's messages: HELLO, HELLO, COMMIT, VALUE, REVEAL (sequence numbers 0 to 4)."""
_ORDER = ((0, MsgType.HELLO), (1, MsgType.HELLO), (0, MsgType.COMMIT), (1, MsgType.VALUE), (0, MsgType.REVEAL))


@dataclass(frozen=True, slots=True)
class Hello:
    rules_version: int
    room: str
    rounds: int
    double_at_8: bool
    move_time_s: int
    deck: str
    relay_key: bytes
    public_key: bytes
    nonce: bytes
    watchers: bool
    """The room's setting: watchers may follow it (compared like ``deck``)."""
    publish: bool
    """The signer's own consent: a relay keeping an archive may publish the match (never compared)."""

    @classmethod
    def of(cls, msg: Msg) -> Hello:
        rv, room, rounds, dbl, mt, deck, rk, pk, nonce, watchers, publish = msg.body
        return cls(rv, room, rounds, dbl, mt, deck, rk, pk, nonce, watchers, publish)


class HelloField(enum.StrEnum):
    """A HELLO field both seats must agree on, in the order they are compared (the value is the field's name).
    ``publish``, each seat's own consent, is none of them."""

    ROOM = "room"
    RELAY_KEY = "relay_key"
    RULES_VERSION = "rules_version"
    ROUNDS = "rounds"
    DOUBLE_AT_8 = "double_at_8"
    MOVE_TIME_S = "move_time_s"
    DECK = "deck"
    WATCHERS = "watchers"

    @property
    def label(self) -> str:
        """The field's words in a mismatch's description."""
        return _FIELD_LABELS[self]


_FIELD_LABELS = {
    HelloField.RULES_VERSION: "rules version",
    HelloField.ROOM: "room",
    HelloField.ROUNDS: "rounds",
    HelloField.DOUBLE_AT_8: "doubling at 8+",
    HelloField.MOVE_TIME_S: "move time",
    HelloField.DECK: "deck",
    HelloField.WATCHERS: "watchers",
    HelloField.RELAY_KEY: "relay",
}

Mismatch = tuple[HelloField, object, object]
"""A field the HELLOs differ in: the field, the creator's value, the joiner's (or this client's)."""


def _show(v: object) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, bytes):
        return "none" if v == ZERO_HASH else fingerprint(v)
    return str(v)


def _show_field(name: HelloField, v: object) -> str:
    if name is HelloField.MOVE_TIME_S:
        return "none" if v == 0 else f"{v} s"
    if name is HelloField.WATCHERS:
        return "yes" if v else "no"
    return _show(v)


def describe_mismatch(diffs: list[Mismatch], mine: int | None) -> str:
    """``rounds: you 6, opponent 12`` from seat ``mine``'s side (``creator …, joiner …`` when None)."""
    parts = []
    for name, v0, v1 in diffs:
        label = name.label
        if mine is None:
            parts.append(f"{label}: creator {_show_field(name, v0)}, joiner {_show_field(name, v1)}")
        else:
            you, opp = (v0, v1) if mine == 0 else (v1, v0)
            parts.append(f"{label}: you {_show_field(name, you)}, opponent {_show_field(name, opp)}")
    return "; ".join(parts)


class Handshake:
    """What the handshake's messages bind, set by each message once its checks passed."""

    hellos: list[Hello | None]
    keys: list[Ed25519PublicKey | None]
    sid: bytes | None
    settings: Settings | None
    commitment: bytes | None
    values: list[bytes | None]
    seed: bytes | None
    first_dealer: int | None
    mismatch: list[Mismatch]

    def __init__(self) -> None:
        self.hellos = [None, None]
        self.keys = [None, None]
        self.sid = None
        self.settings = None
        self.commitment = None
        self.values = [None, None]
        self.seed = None
        self.first_dealer = None
        self.mismatch = []

    @staticmethod
    def expected(n: int) -> tuple[int, MsgType]:
        """Who sends the line's message ``n`` (below :data:`HANDSHAKE_MESSAGES`), and of what type."""
        return _ORDER[n]

    @property
    def bound(self) -> Hello | None:
        """The creator's HELLO once both HELLOs agreed (the settings the match is bound to); else None."""
        return self.hellos[0] if self.sid is not None else None

    @property
    def move_time_s(self) -> int | None:
        """The bound move time (None until both HELLOs agreed; 0: no clock)."""
        h = self.bound
        return h.move_time_s if h is not None else None

    @property
    def deck(self) -> str | None:
        """The bound deck, ``"sealed"`` or ``"shared"`` (None until both HELLOs agreed)."""
        h = self.bound
        return h.deck if h is not None else None

    @property
    def relay_key(self) -> bytes | None:
        """The bound relay key (None until both HELLOs agreed)."""
        h = self.bound
        return h.relay_key if h is not None else None

    @property
    def watchers(self) -> bool | None:
        """Whether watchers may follow the match, as bound (None until both HELLOs agreed)."""
        h = self.bound
        return h.watchers if h is not None else None

    @property
    def publish(self) -> tuple[bool, bool] | None:
        """Each seat's consent to a public archive, the creator's first (None until both HELLOs are in)."""
        h0, h1 = self.hellos
        return (h0.publish, h1.publish) if h0 is not None and h1 is not None else None

    def signer_key(self, msg: Msg) -> Ed25519PublicKey:
        """The key ``msg`` must verify with (a HELLO's own; else its seat's, from the line's HELLO)."""
        if msg.type is MsgType.HELLO:
            return load_public(msg.body[HELLO_KEY_INDEX])
        key = self.keys[msg.seat]
        if key is None:
            raise ProtocolError(
                Code.UNEXPECTED_MESSAGE, f"a {msg.type.label} from seat {msg.seat}, whose HELLO is not in the line"
            )
        return key

    def on_hello(self, msg: Msg) -> tuple[Code, str] | None:
        """Check and bind a HELLO; for the joiner's, the code and text of the mismatch when the HELLOs
        disagree (the match ends there, abandoned), else None."""
        h = Hello.of(msg)
        if not h.room or len(h.room) > MAX_ROOM_CHARS:
            raise ProtocolError(Code.MALFORMED_MESSAGE, f"a room code is 1 to {MAX_ROOM_CHARS} characters")
        if h.rounds not in (6, 12):
            raise ProtocolError(Code.MALFORMED_MESSAGE, f"rounds are 6 or 12, not {h.rounds}")
        if h.move_time_s > MAX_MOVE_TIME_S:
            raise ProtocolError(Code.MALFORMED_MESSAGE, f"a move time is 0 to {MAX_MOVE_TIME_S} s, not {h.move_time_s}")
        if h.deck not in DECKS:
            raise ProtocolError(Code.MALFORMED_MESSAGE, f"the deck is sealed or shared, not {h.deck!r}")
        self.hellos[msg.seat] = h
        self.keys[msg.seat] = load_public(h.public_key)
        if msg.seat == 0:
            return None
        h0 = self.hellos[0]
        assert h0 is not None
        diffs: list[Mismatch] = []
        for name in HelloField:
            a, b = getattr(h0, name), getattr(h, name)
            if a != b:
                diffs.append((name, a, b))
        if diffs:
            names = {d[0] for d in diffs}
            code = (
                Code.ROOM_MISMATCH
                if HelloField.ROOM in names
                else Code.RELAY_MISMATCH
                if HelloField.RELAY_KEY in names
                else Code.SETTINGS_MISMATCH
            )
            self.mismatch = diffs
            return code, describe_mismatch(diffs, None)
        if h0.rules_version != RULES_VERSION:
            self.mismatch = [(HelloField.RULES_VERSION, h0.rules_version, RULES_VERSION)]
            return Code.SETTINGS_MISMATCH, f"rules version {h0.rules_version}; this client plays {RULES_VERSION}"
        self.settings = Settings(rounds=h0.rounds, double_at_8=h0.double_at_8)
        self.sid = session_id(
            h0.room,
            self.settings,
            (h0.public_key, h.public_key),
            (h0.nonce, h.nonce),
            move_time_s=h0.move_time_s,
            relay_key=h0.relay_key,
            deck=h0.deck,
            watchers=h0.watchers,
            publish=(h0.publish, h.publish),
        )
        return None

    def on_commit(self, msg: Msg) -> None:
        self.commitment = msg.body[0]

    def on_value(self, msg: Msg) -> None:
        self.values[1] = msg.body[0]

    def on_reveal(self, msg: Msg) -> SeededDeal:
        """Check and bind the creator's REVEAL: the match seed and the first dealer; the seeded deal source."""
        value = msg.body[0]
        assert self.sid is not None and self.settings is not None and self.values[1] is not None
        if commitment_of(self.sid, value) != self.commitment:
            raise ProtocolError(Code.COMMITMENT_MISMATCH, "the revealed value does not open the creator's commitment")
        self.values[0] = value
        self.seed = match_seed(self.sid, value, self.values[1])
        source = SeededDeal(self.seed)
        self.first_dealer, _ = choose_first_dealer(source)
        return source
