"""Honest matches recorded in relay order, for the spectator's tests (``test_spectator.py`` and
``test_spectator_adversary.py``), and an oracle that knows every card.

**Relay order.** The in-memory harness (:mod:`koikoi.testing`) hands every frame a session sends to
``Pair.deliver``, which passes it through the pair's tamper hook on its way to the other seat: that hook is
where the relay stands. :func:`record` wraps the hook (or none) and writes down ``(seat, frame)`` for every
frame that comes out of it, in the order the harness delivers them: what a relay takes from the seats, in
the order it takes them (a cheating client's tamper runs first, so what it really sent is recorded; a
misbehaving network's tamper too, so its damage reaches the spectator as it reaches the seat).

**The oracle** (:class:`Oracle`) replays the moves of a spectator's line on a full match dealt with every
card known — the shared seed, or in sealed mode each deal attempt's order derived from both seats' match
secrets (their private keys, which only the test has) — and says which cards lie in a hand or the deck at
that point: the cards a watcher must never be shown.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache

from koikoi.engine.actions import from_code
from koikoi.engine.deal import Deal, SeededDeal, deal_from_order
from koikoi.engine.events import Dealt, Drawn, DrawnChoice, Played, Redeal
from koikoi.engine.match import Match, Phase, Settings
from koikoi.protocol.codes import Status
from koikoi.protocol.errors import ProtocolError
from koikoi.protocol.messages import MsgType, build, parse, private_bytes
from koikoi.protocol.referee import Referee
from koikoi.protocol.sealed import CARD_POINTS, derive, round_secret
from koikoi.protocol.sealed_line import SealedSeat, match_secret
from koikoi.protocol.spectator import Spectator, WatchEvent
from koikoi.testing import Pair, Tamper, fixed_key, make_pair, reforge

__all__ = [
    "ALL_CARDS",
    "Oracle",
    "World",
    "card_events_public",
    "feed_all",
    "forged_move",
    "held_bytes",
    "hidden_points",
    "junk",
    "record",
    "round_secrets",
    "secret_values",
    "secrets_of",
    "spectator",
    "world",
]

ALL_CARDS = (1 << 48) - 1

Relay = list[tuple[int, bytes]]


def record(relay: Relay, inner: Tamper | None = None) -> Tamper:
    """A tamper hook that passes every frame through ``inner`` (or untouched) and writes what comes out,
    with its sender's seat, to ``relay``: the relay's order."""

    def hook(seat: int, index: int, frame: bytes) -> Sequence[bytes]:
        out = [frame] if inner is None else list(inner(seat, index, frame))
        relay.extend((seat, f) for f in out)
        return out

    return hook


@dataclass
class World:
    """One honest match recorded in relay order: its settings and seed (the keys derive from it), the frames,
    both seats' transcripts and their one verdict (``status``, ``winner``, ``points``)."""

    name: str
    deck: str
    settings: Settings
    seed: bytes
    relay: Relay
    transcripts: tuple[bytes, bytes]
    status: Status
    winner: int | None
    points: tuple[int, int]
    match_id: bytes
    first_dealer: int
    shared_seed: bytes | None
    fault_by: int | None = None
    """The seat a cheat in this world made commit a proven fault (its signed message is in the relay's order)."""
    pair: Pair | None = field(default=None, repr=False)


def _finish(name: str, deck: str, settings: Settings, seed: bytes, pair: Pair, relay: Relay) -> World:
    stalled = pair.run()
    assert not stalled, name
    res = pair.result(stalled)
    a, b = res.sessions
    assert a.ended is not None and b.ended is not None, name
    oa, ob = a.ended.outcome, b.ended.outcome
    assert (oa.status, oa.winner, oa.points) == (ob.status, ob.winner, ob.points), name
    ref = a.referee
    assert ref.sid is not None and ref.first_dealer is not None
    return World(
        name, deck, settings, seed, relay, res.transcripts, oa.status, oa.winner, oa.points, ref.sid,
        ref.first_dealer, ref.seed if deck == "shared" else None, pair=pair,
    )  # fmt: skip


def _desync(relay: Relay, seed: bytes, cheater: int, nth: int) -> Tamper:
    """A cheating client at ``cheater`` that signs its ``nth`` MOVE again with a wrong state hash."""
    seen = [0]

    def hook(seat: int, index: int, frame: bytes) -> Sequence[bytes]:
        if seat == cheater:
            try:
                m = parse(frame)
            except Exception:
                return [frame]
            if m.type is MsgType.MOVE:
                seen[0] += 1
                if seen[0] == nth:
                    return [reforge(frame, fixed_key(seed, cheater), state_hash=bytes(32))]
        return [frame]

    return record(relay, hook)


def _resign_in(name: str, deck: str, seed: bytes, round_no: int, seat: int, *, drawn: int = 0) -> World:
    """``seat`` resigns once its match is in round ``round_no`` and ``drawn`` cards of the round's deck are
    turned, at its first chance."""
    relay: Relay = []
    settings = Settings(rounds=6)
    pair = make_pair(settings, ("greedy", "random"), seed, deck=deck, tamper=record(relay))
    for _ in range(100_000):
        m = pair.sessions[seat].referee.match
        played = not drawn or (m is not None and m.phase is Phase.PLAY and 24 - m.deck_count >= drawn)
        if m is not None and m.round >= round_no and played:
            break
        if not pair.step() and not pair.tick():
            raise AssertionError("the match ended before the round")
    pair.note(seat, pair.sessions[seat].resign())
    pair.flush(seat)
    return _finish(name, deck, settings, seed, pair, relay)


def _stopped() -> World:
    seed = b"spectator/sealed_stopped"
    relay: Relay = []
    settings = Settings(rounds=6)
    pair = make_pair(settings, ("greedy", "random"), seed, deck="sealed", tamper=record(relay))
    r = pair.sessions[1].referee
    for _ in range(100_000):
        m = r.match
        if m is not None and 24 - m.deck_count >= 3 and r.expected() == (0, MsgType.MOVE):
            break
        if not pair.step() and not pair.tick():
            raise AssertionError("the match ended before the stop")
    sl = r.sealed
    assert isinstance(sl, SealedSeat) and r.sid is not None
    secret = match_secret(fixed_key(seed, 1), r.sid, 1)
    body = [[round_secret(secret, sl.round, a) for a in range(sl.line.current.begun)]]
    stop = build(fixed_key(seed, 1), MsgType.DISCLOSE, r.sid, r.next_seq, r.head_hash, 1, body)
    relay.append((1, stop))  # (what a modified client sends goes to the relay too)
    pair.inject(1, stop)
    w = _finish("sealed_stopped", "sealed", settings, seed, pair, relay)
    assert w.status is Status.FORFEIT and w.winner == 0, w.status
    w.fault_by = 1
    return w


@cache
def world(name: str) -> World:
    """A recorded honest match by name (made once per process):

    - ``shared`` / ``sealed``: a 6-round match played out; ``sealed12``: a 12-round sealed one;
    - ``shared_resigned`` / ``sealed_resigned``: seat 1 resigns in round 2 after two cards were drawn (sealed:
      the round's deal is never disclosed);
    - ``sealed_crossed``: seat 1 resigns as soon as its match is in round 2, which is before round 1's
      disclosures: its RESIGN crosses seat 0's disclosure (superseded) and round 1 never counts;
    - ``sealed_stopped``: seat 1's client stops round 1 with no fault to show (its true DISCLOSE, early): the
      verification names its ``unfounded_stop`` and seat 0 aborts citing it;
    - ``shared_forfeit``: seat 1's client signs its 6th MOVE with a wrong state hash; seat 0 aborts citing it;
    - ``shared_on_time``: seat 1 stops sending in round 2; seat 0 wins on the relay's certificate.
    """
    if name in ("shared", "sealed", "sealed12"):
        deck = "shared" if name == "shared" else "sealed"
        relay: Relay = []
        settings = Settings(rounds=12 if name == "sealed12" else 6)
        seed = f"spectator/{name}".encode()
        pair = make_pair(settings, ("greedy", "random"), seed, deck=deck, tamper=record(relay))
        return _finish(name, deck, settings, seed, pair, relay)
    if name == "shared_resigned":
        return _resign_in(name, "shared", b"spectator/shared_resigned", 2, 1, drawn=2)
    if name == "sealed_resigned":
        return _resign_in(name, "sealed", b"spectator/sealed_resigned", 2, 1, drawn=2)
    if name == "sealed_crossed":
        return _resign_in(name, "sealed", b"spectator/sealed_resigned", 2, 1)
    if name == "sealed_stopped":
        return _stopped()
    if name == "shared_forfeit":
        relay = []
        settings = Settings(rounds=6)
        seed = b"spectator/desync"
        pair = make_pair(settings, ("greedy", "random"), seed, tamper=_desync(relay, seed, 1, 6))
        w = _finish(name, "shared", settings, seed, pair, relay)
        assert w.status is Status.FORFEIT and w.winner == 0, w.status
        w.fault_by = 1
        return w
    if name == "shared_on_time":
        relay = []
        settings = Settings(rounds=6)
        seed = b"spectator/on_time"
        pair = make_pair(settings, ("greedy", "random"), seed, tamper=record(relay), move_time_s=30)
        for _ in range(100_000):
            m = pair.sessions[1].referee.match
            if m is not None and m.round >= 2:
                break
            if not pair.step() and not pair.tick():
                raise AssertionError("the match ended before round 2")
        pair.silent[1] = True
        w = _finish(name, "shared", settings, seed, pair, relay)
        assert w.status is Status.ON_TIME and w.winner == 0, w.status
        return w
    raise KeyError(name)


def feed_all(spectator: Spectator, frames: Relay) -> list[WatchEvent]:
    events: list[WatchEvent] = []
    for seat, frame in frames:
        events += spectator.feed(seat, frame)
    return events


# -- every card known --------------------------------------------------------------------------------------


class _SecretDeals:
    """Each sealed deal attempt's order, from both seats' match secrets (``dealer()`` says who deals now)."""

    def __init__(self, secrets: tuple[bytes, bytes], dealer: Callable[[], int]) -> None:
        self.secrets = secrets
        self.dealer = dealer

    def dealt(self, round_number: int, attempt: int, dealer: int) -> Deal:
        ks = derive(round_secret(self.secrets[1 - dealer], round_number, attempt))
        os_ = derive(round_secret(self.secrets[dealer], round_number, attempt))
        return deal_from_order([ks.permutation[os_.permutation[p]] for p in range(48)])

    def deal(self, round_number: int, attempt: int) -> Deal:
        return self.dealt(round_number, attempt, self.dealer())

    def first_dealer_cards(self, attempt: int) -> tuple[int, int]:
        raise AssertionError("sealed mode turns no cards for the first dealer")


def secrets_of(w: World) -> tuple[bytes, bytes]:
    """Both seats' match secrets (what no watcher may ever hold)."""
    return match_secret(fixed_key(w.seed, 0), w.match_id, 0), match_secret(fixed_key(w.seed, 1), w.match_id, 1)


class Oracle:
    """A full match that follows the MOVEs of a line with every card known (see the module's docstring)."""

    def __init__(self, w: World) -> None:
        self.w = w
        self._moves: list[bytes] = []
        self._secret = _SecretDeals(secrets_of(w), lambda: w.first_dealer) if w.shared_seed is None else None
        self._match = self._new()

    def _new(self) -> Match:
        w = self.w
        if w.shared_seed is not None:
            return Match(w.settings, SeededDeal(w.shared_seed), w.first_dealer)
        holder: list[Match] = []
        source = _SecretDeals(secrets_of(w), lambda: holder[0].dealer if holder else w.first_dealer)
        m = Match(w.settings, source, w.first_dealer)
        holder.append(m)
        return m

    def _deal(self, round_number: int, attempt: int, dealer: int) -> Deal:
        if self._secret is not None:
            return self._secret.dealt(round_number, attempt, dealer)
        assert self.w.shared_seed is not None
        return SeededDeal(self.w.shared_seed).deal(round_number, attempt)

    def match(self, line: Referee) -> Match:
        """The full match after ``line``'s MOVEs (the same object while the line only grows)."""
        moves = [x for x in line.msgs if x.type is MsgType.MOVE]
        frames = [x.frame for x in moves]
        if frames[: len(self._moves)] != self._moves:
            self._moves, self._match = [], self._new()
        for x in moves[len(self._moves) :]:
            self._match.apply(from_code(x.body[0]), x.seat)
            self._moves.append(x.frame)
        return self._match

    def hidden(self, line: Referee) -> int:
        """The cards of the round ``line``'s match is in that lie in a hand or the deck once the line's MOVEs are
        played (a mask; none before the match): every card but the table it was dealt and the cards its play
        turned face up so far. (The full match may be a round ahead: it turns the last card of a round, and
        deals the next, at the last play; a sealed line waits for the draw's key.)"""
        if line.match is None:
            return 0
        r = line.match.round
        log = self.match(line).log
        table: int | None = None
        shown = redeals = 0
        current = 0
        for e in log:
            if isinstance(e, Redeal) and e.round == r:
                redeals = e.attempt + 1
            elif isinstance(e, Dealt):
                current = e.round
                if current == r:
                    table = self._deal(r, redeals, e.dealer).table
            elif current == r and isinstance(e, Played | Drawn | DrawnChoice):
                shown |= 1 << e.card
        if table is None:
            return 0
        return ALL_CARDS & ~(table | shown)


def card_events_public(events: Sequence[WatchEvent], line: Referee, oracle: Oracle) -> list[str]:
    """What is wrong with the card events of one feed: each card event (a card played, drawn, a capture
    chosen) must be an entry of the full match's log after the line's MOVEs — a card the rules turned face
    up — unless a later event of the same feed says the line was cut back. Empty: nothing wrong."""
    from koikoi.engine.cards import CARD_IDS
    from koikoi.engine.events import Chosen
    from koikoi.protocol.spectator import CaptureChosen, CardDrawn, CardPlayed, Superseded

    if line.match is None:
        return []
    log = oracle.match(line).log
    public: set[tuple[str, int, str, tuple[str, ...]]] = set()
    for e in log:
        if isinstance(e, Played):
            public.add(("played", e.seat, CARD_IDS[e.card], _ids(e.taken)))
        elif isinstance(e, Drawn):
            public.add(("drawn", e.seat, CARD_IDS[e.card], _ids(e.taken)))
        elif isinstance(e, DrawnChoice):
            public.add(("drawn", e.seat, CARD_IDS[e.card], ()))
        elif isinstance(e, Chosen):
            public.add(("chosen", e.seat, CARD_IDS[e.card], _ids(e.taken)))
    wrong: list[str] = []
    cut_at = max((i for i, ev in enumerate(events) if isinstance(ev, Superseded)), default=-1)
    for i, ev in enumerate(events):
        if i < cut_at:
            continue
        if isinstance(ev, CardPlayed | CardDrawn | CaptureChosen):
            key = (ev.kind.value, ev.seat, ev.card, ev.captured)
            if key not in public:
                wrong.append(f"{ev} is no card the rules turned face up")
    return wrong


def _ids(mask: int) -> tuple[str, ...]:
    from koikoi.engine.cards import CARD_IDS, cards_of

    return tuple(CARD_IDS[c] for c in cards_of(mask))


def hidden_points(hidden: int) -> set[bytes]:
    """The plaintext card points of the cards in ``hidden``."""
    return {CARD_POINTS[c] for c in range(48) if hidden >> c & 1}


def held_bytes(obj: object) -> set[bytes]:
    """Every bytes value reachable from ``obj`` (the hiding test's walk: containers, dataclasses, slots)."""
    return {x for x in _walk(obj, set()) if isinstance(x, bytes)}


def _walk(obj: object, seen: set[int]) -> Iterator[object]:
    stack = [obj]
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, type) or (callable(o) and not hasattr(o, "__slots__")):
            continue
        seen.add(id(o))
        yield o
        if isinstance(o, bytes | str | int | float | bool) or o is None:
            continue
        if isinstance(o, dict):
            stack.extend(itertools.chain.from_iterable(o.items()))
        elif isinstance(o, list | tuple | set | frozenset):
            stack.extend(o)
        else:
            names = list(getattr(o, "__dict__", {}))
            for cls in type(o).__mro__:
                s = getattr(cls, "__slots__", ())
                names += [s] if isinstance(s, str) else list(s)
            stack.extend(getattr(o, n) for n in names if hasattr(o, n))


def secret_values(w: World) -> set[bytes]:
    """What a watcher must never hold: both private keys and match secrets, and every round secret of both
    seats that no DISCLOSE in the relay's log made public."""
    out = {private_bytes(fixed_key(w.seed, s)) for s in (0, 1)}
    out |= set(secrets_of(w))
    out |= {s for r in range(1, w.settings.rounds + 1) for s in round_secrets(w, r)}
    disclosed = set()
    for _, f in w.relay:
        try:
            m = parse(f)
        except ProtocolError:
            continue
        if m.type is MsgType.DISCLOSE:
            disclosed |= set(m.body[0])
    return out - disclosed


def spectator(w: World) -> Spectator:
    """A spectator that expects ``w``'s room and relay (as ``koikoi watch`` knows them)."""
    h = parse(w.relay[0][1])
    assert h.type is MsgType.HELLO and h.seat == 0
    return Spectator(room=h.body[1], relay_key=h.body[6])


def round_secrets(w: World, round_number: int, attempts: int = 4) -> set[bytes]:
    """Both seats' round secrets of ``round_number`` (its first ``attempts`` deal attempts)."""
    return {round_secret(s, round_number, a) for s in secrets_of(w) for a in range(attempts)}


def junk(rng: random.Random) -> bytes:
    """Random bytes of a random length (up to a little over a frame's limit)."""
    n = rng.choice((0, 1, 2, 5, 40, 300, 5000, 70_000))
    return rng.randbytes(n)


def forged_move(w: World, frame: bytes) -> bytes | None:
    """A MOVE like ``frame`` (a MOVE of the match) signed again by its own seat with a wrong state hash: a
    cheating player's equivocation, or an illegal message, never one the line could take."""
    try:
        m = parse(frame)
    except Exception:
        return None
    if m.type is not MsgType.MOVE:
        return None
    return reforge(frame, fixed_key(w.seed, m.seat), state_hash=hashlib.sha256(frame).digest())
