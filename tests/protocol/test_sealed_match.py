"""Sealed mode's line (koikoi.protocol.sealed_line): whole matches between two seat-side matches, the
auditor, resume, hiding, and every cheat caught by the end of its round with the cheater named, by the
honest seat's verification and by the auditor, the match ending as the cheater's forfeit (a refusal to
disclose: the honest seat waits for exactly that disclosure, which the relay's clock then decides)."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import itertools
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import msgpack
import pytest
from nacl.bindings import (
    crypto_core_ed25519_from_uniform,
    crypto_core_ed25519_scalar_invert,
    crypto_core_ed25519_scalar_mul,
    crypto_scalarmult_ed25519_noclamp,
)

from koikoi.engine.actions import PLAY, ActionKind, from_code
from koikoi.engine.cards import four_of_a_month, mask_of
from koikoi.engine.match import Settings
from koikoi.engine.yaku import hand_yaku
from koikoi.protocol import sealed as S
from koikoi.protocol.sealed_line import LineError, LineKind, SealedSeat, Sent, audit_line, match_secret
from koikoi.testing import run_pair

Tamper = Callable[[Sent, SealedSeat], Sent | None]


def secret(label: str) -> bytes:
    return hashlib.sha256(b"koikoi/test/sealed-line\x00" + label.encode()).digest()


@dataclasses.dataclass
class Played:
    seats: list[SealedSeat]
    line: list[Sent]


def play(
    settings: Settings,
    first_dealer: int,
    secrets: tuple[bytes, bytes],
    seed: int = 0,
    *,
    cheater: int | None = None,
    tamper: Tamper | None = None,
    until: Callable[[list[Sent]], bool] | None = None,
) -> Played:
    """Two seats making random legal decisions (see :func:`run_pair`)."""
    rng = random.Random(seed)
    seats, line = run_pair(
        settings,
        first_dealer,
        secrets,
        lambda s: rng.choice(s.match.legal_actions()),
        cheater=cheater,
        tamper=tamper,
        until=until,
    )
    return Played(seats, line)


def bots_match(rounds: int, first_dealer: int, seed: int) -> Played:
    return play(Settings(rounds=rounds), first_dealer, (secret(f"{seed}/0"), secret(f"{seed}/1")), seed)


# -- whole matches -----------------------------------------------------------------------------


def test_the_next_rounds_shuffle_leaves_with_its_senders_disclosure() -> None:
    """At a played-out round's end the next round's dealer discloses first, so the other seat's disclosure
    (which completes the round's verification) and its next SHUFFLE are one hop, whoever won the round."""
    moved = 0
    for seed in range(4):
        line = bots_match(6, seed % 2, seed).line
        firsts = [
            i
            for i, m in enumerate(line)
            if m.kind is LineKind.SHUFFLE and (i == 0 or line[i - 1].kind is LineKind.DISCLOSE)
        ]
        for a, b in itertools.pairwise(firsts):
            moved += line[a].seat != line[b].seat  # the deal moved to the other seat
        for i in firsts[1:]:
            assert line[i - 1].seat == line[i].seat, (seed, i)  # the SHUFFLE follows its sender's own DISCLOSE
    assert moved  # the order matters when the deal moves: some round here did


def test_a_round_boundary_is_three_crossings_and_the_disclosures_ride_on_them() -> None:
    """spec/sealed.md §6: from a round's end to the next dealer's first play, the line is N DISCLOSE (with
    N's last move when N made it), K' DISCLOSE + SHUFFLE, N SHUFFLE_LOCK, K' LOCK, N CLAIM + MOVE: five hops,
    three crossings between N's last message and its first play, the disclosures riding on them."""
    boundaries = 0
    for seed in range(4):
        line = bots_match(6, seed % 2, seed).line
        starts = [
            i for i, m in enumerate(line) if m.kind is LineKind.DISCLOSE and line[i - 1].kind is not LineKind.DISCLOSE
        ]
        for i in starts:
            j = next((j for j in range(i, len(line)) if line[j].kind is LineKind.MOVE), None)
            if j is None or [m.kind for m in line[i:j]] != [
                LineKind.DISCLOSE,
                LineKind.DISCLOSE,
                LineKind.SHUFFLE,
                LineKind.SHUFFLE_LOCK,
                LineKind.LOCK,
                LineKind.CLAIM,
            ]:
                continue  # the last round, a redeal or a hand yaku: another shape
            n = line[j].seat  # the next round's dealer
            assert [m.seat for m in line[i : j + 1]] == [n, 1 - n, 1 - n, n, 1 - n, n, n], (seed, i)
            boundaries += 1
    assert boundaries >= 8  # not vacuous: 11 of these 4 matches' 15 round ends (the others end a match)


@pytest.mark.parametrize(("rounds", "first_dealer", "seed"), [(6, 0, 1), (6, 1, 2), (12, 0, 3), (12, 1, 4)])
def test_whole_sealed_matches_end_alike_on_both_seats_and_audit_clean(
    rounds: int, first_dealer: int, seed: int
) -> None:
    p = bots_match(rounds, first_dealer, seed)
    a, b = p.seats
    assert a.match.is_over and b.match.is_over
    assert a.expected() is None and b.expected() is None and a.verdict is None and b.verdict is None
    assert a.match.points == b.match.points and a.match.winner == b.match.winner
    assert a.match.history == b.match.history and len(a.verdicts) == len(a.match.history)
    audit = audit_line(Settings(rounds=rounds), first_dealer, p.line)
    assert audit.fault is None and audit.error is None and audit.undisclosed_round is None
    assert audit.match is not None and audit.match.is_over
    assert audit.match.history == a.match.history
    # the same secrets and decisions make the same line, byte for byte
    again = bots_match(rounds, first_dealer, seed)
    assert [m.encode() for m in again.line] == [m.encode() for m in p.line]
    assert [(m.seat, m.kind) for m in again.line] == [(m.seat, m.kind) for m in p.line]


def test_the_auditor_replays_on_the_revealed_deals_and_refuses_a_changed_move() -> None:
    """A play naming a card its keys do not open: the line's one judge (the seats' and the auditor's) refuses
    it at once as the mover's ``wrong_card`` (the position's card is fixed by the proven steps and opened by
    the keys the move carries)."""
    p = bots_match(6, 0, 5)
    i = next(
        i for i, m in enumerate(p.line) if m.kind is LineKind.MOVE and from_code(m.body[0]).kind is ActionKind.PLAY
    )
    m = p.line[i]
    other = next(c for c in range(48) if c != from_code(m.body[0]).card)
    bad = Sent(m.seat, m.kind, (PLAY[other].code, m.body[1], m.body[2]))
    audit = audit_line(Settings(rounds=6), 0, [*p.line[:i], bad, *p.line[i + 1 :]])
    assert audit.fault is None and audit.error is not None
    assert audit.error[:2] == (m.seat, "wrong_card")


def test_the_auditor_refuses_a_wrong_state_hash_and_names_keys_sent_under_the_other_name() -> None:
    p = bots_match(6, 0, 6)
    i = next(i for i, m in enumerate(p.line) if m.kind is LineKind.MOVE)
    m = p.line[i]
    bad = Sent(m.seat, m.kind, (m.body[0], bytes(32), m.body[2]))
    audit = audit_line(Settings(rounds=6), 0, [*p.line[:i], bad, *p.line[i + 1 :]])
    assert audit.error is not None and audit.error[:2] == (m.seat, "desync")
    # a move put under the other seat's name: out of turn, that seat's (the judge checks the turn first)
    swapped = Sent(1 - m.seat, m.kind, m.body)
    audit = audit_line(Settings(rounds=6), 0, [*p.line[:i], swapped, *p.line[i + 1 :]])
    assert audit.fault is None and audit.error is not None and audit.error[:2] == (1 - m.seat, "out_of_turn")


def test_a_match_secret_is_derived_from_the_private_key_and_session() -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    sid = bytes(32)
    assert match_secret(key, sid, 0) == match_secret(key, sid, 0)
    assert len({match_secret(key, sid, 0), match_secret(key, sid, 1), match_secret(key, b"\x01" * 32, 0)}) == 3


# -- deals that need a search: redeals, hand yaku ------------------------------------------------


def round1_order(k_secret: bytes, o_secret: bytes, attempt: int = 0) -> list[int]:
    k = S.derive(S.round_secret(k_secret, 1, attempt))
    o = S.derive(S.round_secret(o_secret, 1, attempt))
    return [k.permutation[o.permutation[i]] for i in range(48)]


def find_k(pred: Callable[[list[int]], bool], o_secret: bytes, label: str) -> bytes:
    for n in itertools.count():
        k = secret(f"{label}/{n}")
        if pred(round1_order(k, o_secret)):
            return k
    raise AssertionError("unreachable")


def stands(order: list[int]) -> bool:
    return not four_of_a_month(mask_of(order[16:24]))


O_SECRET = secret("dealer")  # seat 0 deals first in these tests


def k_hand_yaku(order: list[int]) -> bool:
    return stands(order) and hand_yaku(mask_of(order[8:16])) is not None and hand_yaku(mask_of(order[:8])) is None


def o_hand_yaku(order: list[int]) -> bool:
    return stands(order) and hand_yaku(mask_of(order[:8])) is not None


def plain(order: list[int]) -> bool:
    return stands(order) and hand_yaku(mask_of(order[:8])) is None and hand_yaku(mask_of(order[8:16])) is None


K_REDEAL = find_k(lambda o: not stands(o), O_SECRET, "redeal")
K_YAKU = find_k(k_hand_yaku, O_SECRET, "k-yaku")
K_O_YAKU = find_k(o_hand_yaku, O_SECRET, "o-yaku")
K_PLAIN = find_k(plain, O_SECRET, "plain")


@pytest.mark.parametrize("k_secret", [K_REDEAL, K_YAKU, K_O_YAKU], ids=["redeal", "K's hand yaku", "O's hand yaku"])
def test_redeals_and_hand_yaku_go_through_the_line_and_the_audit(k_secret: bytes) -> None:
    p = play(Settings(rounds=6), 0, (O_SECRET, k_secret), 7)
    a, b = p.seats
    assert a.match.is_over and a.match.history == b.match.history and a.verdict is None and b.verdict is None
    first = a.match.history[0]
    order = round1_order(k_secret, O_SECRET)
    if not stands(order):
        assert first.redeals == 1 and sum(m.kind is LineKind.SHUFFLE for m in p.line[:8]) == 2
    else:
        assert first.end.value == "hand_yaku"
        assert first.winner == (1 if k_secret == K_YAKU else 0)
    audit = audit_line(Settings(rounds=6), 0, p.line)
    assert audit.fault is None and audit.error is None and audit.match is not None
    assert audit.match.history == a.match.history


# -- resume ----------------------------------------------------------------------------------


@pytest.mark.parametrize("cut", [3, 9, 40, 77])
def test_resume_mid_round_from_the_line_finishes_the_same_match(cut: int) -> None:
    whole = bots_match(6, 1, 11)
    secrets = (secret("11/0"), secret("11/1"))
    line = list(whole.line[:cut])
    seats = [SealedSeat.resume(Settings(rounds=6), s, 1, secrets[s], line) for s in (0, 1)]
    # the random decisions after the cut are not the whole match's: replay the rest of its line instead
    for m in whole.line[cut:]:
        me = seats[m.seat]
        made = me.move(from_code(m.body[0])) if m.kind is LineKind.MOVE else me.pending()[0]
        assert made == m
        seats[1 - m.seat].receive(m)
        line.append(m)
    assert seats[0].match.history == whole.seats[0].match.history and seats[0].match.is_over


def test_resume_refuses_a_line_this_seat_did_not_make() -> None:
    whole = bots_match(6, 0, 12)
    with pytest.raises(LineError) as e:
        SealedSeat.resume(Settings(rounds=6), 1, 0, secret("not mine"), whole.line[:5])
    assert e.value.code == "replay"


def test_accept_own_takes_what_the_seat_just_made_and_refuses_another_message() -> None:
    """How a referee applies the seat's own messages: the one just made is taken as it is; a rebuilt seat
    makes it again; a message that is not what the seat's secret makes is refused."""
    settings = Settings(rounds=6)
    k = SealedSeat(settings, 1, 0, K_PLAIN)
    (shuffle,) = k.pending()
    k.accept_own(shuffle)
    assert k.expected() == (0, LineKind.SHUFFLE_LOCK)
    fresh = SealedSeat(settings, 1, 0, K_PLAIN)
    fresh.accept_own(shuffle)
    assert fresh.expected() == (0, LineKind.SHUFFLE_LOCK)
    other = SealedSeat(settings, 1, 0, O_SECRET)
    with pytest.raises(LineError) as e:
        other.accept_own(shuffle)
    assert e.value.code == "replay"


# -- hiding ----------------------------------------------------------------------------------


def _inv(s: bytes) -> bytes:
    return crypto_core_ed25519_scalar_invert(s)


def _strip(s: bytes, p: bytes) -> int | None:
    try:
        return S.card_of_point(crypto_scalarmult_ed25519_noclamp(_inv(s), p))
    except Exception:
        return None


def _walk(obj: object, seen: set[int]) -> Iterator[object]:
    if id(obj) in seen:
        return
    seen.add(id(obj))
    yield obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(k, seen)
            yield from _walk(v, seen)
    elif isinstance(obj, list | tuple | set | frozenset):
        for v in obj:
            yield from _walk(v, seen)
    elif dataclasses.is_dataclass(obj) or hasattr(obj, "__dict__") or hasattr(obj, "__slots__"):
        names = list(getattr(obj, "__dict__", {}))
        for cls in type(obj).__mro__:
            names += list(getattr(cls, "__slots__", ()))
        for n in names:
            if hasattr(obj, n):
                yield from _walk(getattr(obj, n), seen)


@pytest.mark.parametrize("moves", [0, 5, 12])
def test_hiding_mid_round_each_seat_opens_exactly_its_hand_and_the_public_cards(moves: int) -> None:
    """With every point and every key a seat holds mid-round, every strip by one of its scalars (or its
    key times a key of the opponent's it holds) opens exactly its own hand and the public cards."""
    settings = Settings(rounds=6)

    def stop_at(line: list[Sent]) -> bool:
        dealt = any(m.kind is LineKind.CLAIM for m in line)
        return dealt and sum(m.kind is LineKind.DRAW for m in line) >= moves

    p = play(settings, 0, (O_SECRET, K_PLAIN), 3, until=stop_at)
    order = round1_order(K_PLAIN, O_SECRET)
    for seat in p.seats:
        r = seat._round
        assert r.number == 1 and not r.ended and r.draws == moves
        att = r.att
        assert att.s1 is not None and att.s2 is not None and att.s3 is not None
        sec = seat.secrets_now()
        mine = S.DEALER_HAND if seat.role is S.Role.DEALER else S.OTHER_HAND
        other_keys: dict[int, list[bytes]] = {}
        if seat.role is S.Role.OTHER:
            other_keys.update({p: [att.s2.key_for(p)] for p in S.SHUFFLE_LOCK_KEY_POSITIONS})
        else:
            other_keys.update({p: [att.s3.key_for(p)] for p in S.LOCK_KEY_POSITIONS})
        for pk in seat.published():
            if pk.role is not seat.role:
                other_keys.setdefault(pk.position, []).append(pk.key)
        own = [sec.mask, *sec.keys]
        found: dict[int, set[int]] = {}
        for pos in range(48):
            pts = [att.s2.points[pos], att.s3.points[pos]]
            scalars = [*own, *(crypto_core_ed25519_scalar_mul(sec.key(pos), o) for o in other_keys.get(pos, []))]
            scalars += other_keys.get(pos, [])
            for pt in pts:
                for s in scalars:
                    c = _strip(s, pt)
                    if c is not None:
                        found.setdefault(pos, set()).add(c)
        # public: the table, the played cards, the cards drawn so far (as the rules turned them)
        public = set(S.TABLE) | r.played | set(range(24, 24 + r.draws))
        # step 1 is no position yet: K's own mask opens it to its own permutation, and nothing else does
        step1 = [{c for s in own if (c := _strip(s, pt)) is not None} for pt in att.s1.points]
        if seat.role is S.Role.OTHER:
            assert step1 == [{sec.permutation[j]} for j in range(48)]
        else:
            assert step1 == [set()] * 48
        assert set(mine) | set(S.TABLE) <= set(found) <= set(mine) | public
        assert all(cs == {order[pos]} for pos, cs in found.items())
        # nothing in the seat's state is an unmasked hidden card or the opponent's secret
        hidden = {order[pos] for pos in range(48) if pos not in set(mine) | public}
        hidden_points = {S.CARD_POINTS[c] for c in hidden}
        held = [x for x in _walk(seat, set()) if isinstance(x, bytes)]
        assert not hidden_points & set(held)
        other_secret = O_SECRET if seat.seat == 1 else K_PLAIN
        assert other_secret not in held
        assert seat.match.hand(1 - seat.seat) == 0 and not hasattr(seat.match.source, "seed")
        assert set(seat.known_cards()) <= set(mine) | public


# -- cheats ----------------------------------------------------------------------------------

SETTINGS = Settings(rounds=6)
JOKER = crypto_core_ed25519_from_uniform(hashlib.sha512(b"koikoi/test/joker").digest()[:32])
OTHER_SCALAR = S.derive(hashlib.sha256(b"koikoi/test/other scalar").digest()).keys[0]
NOT_ON_CURVE = (2).to_bytes(32, "little")
ORDER_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")


def once(kind: LineKind, change: Callable[[Sent, SealedSeat], Sent], nth: int = 0) -> Tamper:
    """Change the cheater's ``nth`` message of ``kind`` (counting from 0)."""
    seen = [0]

    def t(m: Sent, s: SealedSeat) -> Sent | None:
        if m.kind is not kind:
            return m
        seen[0] += 1
        return change(m, s) if seen[0] == nth + 1 else m

    return t


def points(m: Sent, i: int, p: bytes) -> Sent:
    pts = list(m.body[0])
    pts[i] = p
    return Sent(m.seat, m.kind, (pts, *m.body[1:]))


def keys(m: Sent, i: int, k: bytes) -> Sent:
    ks = list(m.body[1])
    ks[i] = k
    return Sent(m.seat, m.kind, (m.body[0], ks, *m.body[2:]))


def dup_step2(m: Sent, s: SealedSeat) -> Sent:
    """O locks the step-1 point of its own hand position 0 at deck position 30 too (a peek at a deck card)."""
    sec = s.secrets_now()
    x = s._round.att.s1
    assert x is not None
    return points(m, 30, crypto_scalarmult_ed25519_noclamp(sec.key(30), x.points[sec.permutation[0]]))


def false_claim_k(m: Sent, s: SealedSeat) -> Sent:
    return Sent(m.seat, m.kind, (m.body[0], m.body[1], list(s.secrets_now().keys[8:16]), *m.body[3:]))


def false_claim_o(m: Sent, s: SealedSeat) -> Sent:
    return Sent(m.seat, m.kind, (list(s.secrets_now().keys[0:8]),))


def move_key(i: int, nth: int = 0) -> Tamper:
    def change(m: Sent, s: SealedSeat) -> Sent:
        ks = list(m.body[2])
        ks[i] = OTHER_SCALAR
        return Sent(m.seat, m.kind, (m.body[0], m.body[1], ks))

    return plays_only(change, nth)


def plays_only(change: Callable[[Sent, SealedSeat], Sent], nth: int) -> Tamper:
    seen = [0]

    def t(m: Sent, s: SealedSeat) -> Sent | None:
        if m.kind is not LineKind.MOVE or from_code(m.body[0]).kind is not ActionKind.PLAY:
            return m
        seen[0] += 1
        return change(m, s) if seen[0] == nth + 1 else m

    return t


def wrong_card(m: Sent, s: SealedSeat) -> Sent:
    named = from_code(m.body[0]).card
    other = next(c for c in range(48) if c != named and c not in s.known_cards().values())
    return Sent(m.seat, m.kind, (PLAY[other].code, m.body[1], m.body[2]))


# (cheater seat, tamper, rule); seat 0 deals round 1 (O), seat 1 is K. Every cheat but those in ONLY_A_SECRET
# is refused at once (a fault the message proves against the line before it); those are caught by the honest
# seat's secrets, which stop the round, and named by the verification after both disclosures.
CHEATS: dict[str, tuple[int, Tamper, str]] = {
    "shuffle duplicates a card (K)": (
        1,
        once(LineKind.SHUFFLE, lambda m, s: points(m, 5, m.body[0][3])),
        "bad_shuffle",
    ),
    "shuffle replaces a card (K)": (1, once(LineKind.SHUFFLE, lambda m, s: points(m, 5, JOKER)), "bad_shuffle"),
    "shuffle-lock duplicates a card (O)": (0, once(LineKind.SHUFFLE_LOCK, dup_step2), "bad_shuffle"),
    "shuffle-lock replaces a card (O)": (
        0,
        once(LineKind.SHUFFLE_LOCK, lambda m, s: points(m, 9, JOKER)),
        "bad_shuffle",
    ),
    "wrong private key (O, K's hand)": (
        0,
        once(LineKind.SHUFFLE_LOCK, lambda m, s: keys(m, 2, OTHER_SCALAR)),
        "wrong_private_key",
    ),
    "wrong private key (K, O's hand)": (
        1,
        once(LineKind.LOCK, lambda m, s: keys(m, 4, OTHER_SCALAR)),
        "wrong_private_key",
    ),
    "wrong public key (O, a table card)": (
        0,
        once(LineKind.SHUFFLE_LOCK, lambda m, s: keys(m, 12, OTHER_SCALAR)),
        "wrong_public_key",
    ),
    "wrong public key (K, a table card)": (
        1,
        once(LineKind.LOCK, lambda m, s: keys(m, 10, OTHER_SCALAR)),
        "wrong_public_key",
    ),
    "wrong public key (a played card)": (0, move_key(1, 1), "wrong_public_key"),
    "wrong public key (a deck card, in a move)": (1, move_key(2, 2), "wrong_public_key"),
    "wrong public key (a deck card, the draw key)": (
        0,
        once(LineKind.DRAW, lambda m, s: Sent(m.seat, m.kind, (OTHER_SCALAR,)), 1),
        "wrong_public_key",
    ),
    "false hand-yaku claim (K)": (1, once(LineKind.LOCK, false_claim_k), "false_hand_yaku"),
    "false hand-yaku claim (O)": (0, once(LineKind.CLAIM, false_claim_o), "false_hand_yaku"),
    "a point not in the group (K, step 1)": (
        1,
        once(LineKind.SHUFFLE, lambda m, s: points(m, 7, NOT_ON_CURVE)),
        "bad_point",
    ),
    "a point of small order (O, step 2)": (
        0,
        once(LineKind.SHUFFLE_LOCK, lambda m, s: points(m, 11, ORDER_8)),
        "bad_point",
    ),
    "a point not in the group (K, a deck position)": (
        1,
        once(LineKind.LOCK, lambda m, s: points(m, 26, NOT_ON_CURVE)),
        "bad_point",
    ),
    "a play naming another card": (1, plays_only(wrong_card, 0), "wrong_card"),
}


ONLY_A_SECRET = {"wrong private key (K, O's hand)", "wrong public key (a deck card, in a move)"}


def refused(p: Played, cheater: int, rule: str) -> None:
    """The honest seat's judge refused the cheater's message at once: the line ends with it (the honest seat
    sent nothing that answers it), and the auditor refuses it with the same rule."""
    honest = p.seats[1 - cheater]
    assert p.line[-1].seat == cheater and honest.verdict is None
    audit = audit_line(SETTINGS, 0, p.line)
    assert audit.fault is None and audit.error is not None and audit.error[:2] == (cheater, rule), audit.error
    with pytest.raises(LineError) as e:  # the honest seat's judge, shown the message again, refuses it again
        honest.receive(p.line[-1])
    assert e.value.code == rule


def caught(p: Played, cheater: int, rule: str) -> None:
    honest = p.seats[1 - cheater]
    v = honest.verdict
    assert v is not None, f"not caught: {honest.expected()}"
    assert v.round == 1
    assert v.fault is not None
    assert (v.fault.rule, v.fault.seat) == (rule, cheater), v.fault.message
    assert v.loser == cheater and honest.finished and honest.expected() is None
    audit = audit_line(SETTINGS, 0, p.line)
    assert audit.fault is not None and (audit.fault.rule, audit.fault.seat) == (rule, cheater)


@pytest.mark.parametrize("name", list(CHEATS))
def test_each_cheat_is_caught_in_its_round_with_the_cheater_named(name: str) -> None:
    cheater, tamper, rule = CHEATS[name]
    p = play(SETTINGS, 0, (O_SECRET, K_PLAIN), 21, cheater=cheater, tamper=tamper)
    if name in ONLY_A_SECRET:
        caught(p, cheater, rule)
    else:
        refused(p, cheater, rule)


def test_a_false_none_is_proven_at_the_disclosure() -> None:
    """K holds a hand yaku and says "none"; its program cannot play on a round its own rules ended, so it
    discloses; the verification names the false "none" (not the early disclosure)."""
    p = play(
        SETTINGS,
        0,
        (O_SECRET, K_YAKU),
        22,
        cheater=1,
        tamper=once(LineKind.LOCK, lambda m, s: Sent(m.seat, m.kind, (m.body[0], m.body[1], None, *m.body[3:]))),
        until=lambda line: any(m.kind is LineKind.LOCK for m in line),
    )
    o, k = p.seats
    (claim,) = o.pending()
    p.line.append(claim)
    k.receive(claim)
    assert o.expected() == (0, LineKind.MOVE)  # O believes the round goes on; K's own rules ended it
    k._stop("the cheater cannot play on")
    (stop,) = k.pending()
    p.line.append(stop)
    o.receive(stop)
    (disclose,) = o.pending()
    p.line.append(disclose)
    caught(p, 1, "false_no_hand_yaku")


@pytest.mark.parametrize("cheater", [0, 1])
def test_refusing_to_disclose_leaves_the_other_waiting_for_that_disclosure(cheater: int) -> None:
    p = play(
        SETTINGS,
        0,
        (O_SECRET, K_PLAIN),
        23,
        cheater=cheater,
        tamper=lambda m, s: None if m.kind is LineKind.DISCLOSE else m,
    )
    honest = p.seats[1 - cheater]
    assert honest.expected() == (cheater, LineKind.DISCLOSE) and honest.verdict is None and not honest.finished
    assert honest.pending() == [] or cheater == 1  # O discloses first: when K refuses, O has disclosed
    audit = audit_line(SETTINGS, 0, p.line)
    assert audit.fault is None and audit.error is None and audit.undisclosed_round == 1


def test_an_unfounded_stop_is_its_senders_resignation() -> None:
    p = play(SETTINGS, 0, (O_SECRET, K_PLAIN), 24, until=lambda line: len(line) >= 6)
    o = p.seats[0]
    stop = Sent(1, LineKind.DISCLOSE, ([S.round_secret(K_PLAIN, 1, 0)],))
    p.line.append(stop)
    o.receive(stop)
    p.line.extend(o.pending())
    v = o.verdict
    assert v is not None and v.fault is not None and (v.fault.rule, v.fault.seat) == ("unfounded_stop", 1)
    audit = audit_line(SETTINGS, 0, p.line)
    assert audit.fault is not None and (audit.fault.rule, audit.fault.seat) == ("unfounded_stop", 1)


# -- vectors ---------------------------------------------------------------------------------

VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors" / "sealed_line"


def test_the_vectors_are_what_the_code_makes() -> None:
    spec = importlib.util.spec_from_file_location("koikoi_sealed_line_vector_gen", VECTORS / "generate.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    for name, data in gen.build_all().items():
        assert (VECTORS / name).read_bytes() == data, name
    # and the published line, decoded, audits to the published result
    match = json.loads((VECTORS / "match.json").read_bytes())
    line = [
        Sent(m["seat"], LineKind(m["kind"]), tuple(msgpack.unpackb(bytes.fromhex(m["body"])))) for m in match["line"]
    ]
    audit = audit_line(Settings(rounds=6), match["first_dealer"], line)
    assert audit.match is not None and audit.fault is None and audit.error is None
    assert [r.to_json() for r in audit.match.history] == match["results"]
