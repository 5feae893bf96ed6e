"""Generate the sealed deck's test vectors (spec/vectors/sealed/). Deterministic: run it again and
nothing changes.

    python spec/vectors/sealed/generate.py          # (re)write the vectors
    python spec/vectors/sealed/generate.py --check  # exit 1 when a file differs

``deal.json``: one whole deal attempt with fixed match secrets — the round secrets, every derived scalar,
permutation and key, every step's body (the msgpack bytes the integration signs), the opened cards, a
few turns' published keys and the disclosure. ``negative.json``: one vector per cheat — the steps as
sent (only those that differ from ``deal.json``'s, unless the vector has its own secrets), the published
keys, the disclosed round secrets, and the fault :func:`koikoi.protocol.sealed.verify_deal` must name.
These secrets are public and for vectors only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nacl.bindings import (
    crypto_core_ed25519_add,
    crypto_core_ed25519_from_uniform,
    crypto_core_ed25519_scalar_mul,
    crypto_scalarmult_ed25519_noclamp,
)

from koikoi.engine.cards import CARD_IDS, four_of_a_month, mask_of
from koikoi.engine.yaku import hand_yaku
from koikoi.protocol import proofs as P
from koikoi.protocol import sealed as S
from koikoi.protocol.framing import encode
from koikoi.protocol.proofs import context
from koikoi.protocol.steps import Step

HERE = Path(__file__).resolve().parent
K, O = S.Role.OTHER, S.Role.DEALER  # noqa: E741 (the spec's names)


def _secret(label: str) -> bytes:
    return hashlib.sha256(b"koikoi/sealed-vectors\x00" + label.encode()).digest()


def _j(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode()


def _hexes(xs: tuple[bytes, ...] | list[bytes] | None) -> list[str] | None:
    return None if xs is None else [x.hex() for x in xs]


def _order(k: S.SeatSecrets, o: S.SeatSecrets) -> list[int]:
    return [k.permutation[o.permutation[i]] for i in range(48)]


def _plain(order: list[int]) -> bool:
    return (
        not four_of_a_month(mask_of(order[16:24]))
        and hand_yaku(mask_of(order[0:8])) is None
        and hand_yaku(mask_of(order[8:16])) is None
    )


def _find(label: str, pred: Callable[[list[int]], bool]) -> tuple[bytes, bytes, int]:
    """Fixed match secrets (K's counted up from ``label``/0) whose round 1, attempt 0 deal meets ``pred``."""
    om = _secret(label + "/O")
    o = S.derive(S.round_secret(om, 1, 0))
    n = 0
    while True:
        km = _secret(f"{label}/K/{n}")
        if pred(_order(S.derive(S.round_secret(km, 1, 0)), o)):
            return km, om, n
        n += 1


def _secrets_json(sec: S.SeatSecrets) -> dict[str, Any]:
    return {
        "round_secret_hex": sec.round_secret.hex(),
        "mask_hex": sec.mask.hex(),
        "mask_inverse_hex": sec.mask_inverse.hex(),
        "permutation": list(sec.permutation),
        "keys_hex": [k.hex() for k in sec.keys],
    }


def _bodies(att: S.Attempt) -> dict[str, str | None]:
    return {
        "shuffle": att.shuffle.encode().hex(),
        "shuffle_lock": att.shuffle_lock.encode().hex(),
        "lock": None if att.lock is None else att.lock.encode().hex(),
        "claim": None if att.claim is None else att.claim.encode().hex(),
    }


def _published(keys: list[S.PublishedKey]) -> list[dict[str, Any]]:
    return [{"role": p.role.letter, "position": p.position, "key_hex": p.key.hex()} for p in keys]


def _fault(f: object) -> dict[str, Any]:
    assert isinstance(f, S.SealedFault), f
    return {"rule": f.rule, "role": f.role.letter, "seat": f.seat, "step": f.step, "index": f.index}


def _mul(s: bytes, p: bytes) -> bytes:
    return crypto_scalarmult_ed25519_noclamp(s, p)


def _with_points(step: Any, i: int, p: bytes) -> Any:
    pts = list(step.points)
    pts[i] = p
    return dataclasses.replace(step, points=tuple(pts))


def _with_key(step: Any, positions: tuple[int, ...], pos: int, key: bytes) -> Any:
    keys = list(step.keys)
    keys[positions.index(pos)] = key
    return dataclasses.replace(step, keys=tuple(keys))


IDENTITY = (1).to_bytes(32, "little")
ORDER_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
NOT_ON_CURVE = (2).to_bytes(32, "little")
JOKER = crypto_core_ed25519_from_uniform(hashlib.sha512(b"koikoi/sealed-vectors/joker").digest()[:32])


def _proof_json(p: P.ShuffleProof) -> dict[str, Any]:
    return {"chain_hex": _hexes(p.chain), "responses_hex": _hexes(p.responses)}


SID = hashlib.sha256(b"koikoi/sealed-vectors\x00session id").digest()
CTX = context(SID, 1, 0)


def _honest_w(o: S.SeatSecrets, x: S.Shuffle) -> tuple[bytes, ...]:
    return tuple(_mul(o.mask, x.points[o.permutation[i]]) for i in range(48))


def build_all() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    km, om, _n = _find("deal", _plain)
    ks, os_ = S.round_secret(km, 1, 0), S.round_secret(om, 1, 0)
    k, o = S.derive(ks), S.derive(os_)
    att = S.honest_attempt(k, o, CTX)
    assert att.lock is not None and att.claim is not None
    one = S.StepOne(att.shuffle)
    assert S.check_shuffle(CTX, att.shuffle) is None
    assert S.check_shuffle_lock(CTX, one, att.shuffle_lock) is None
    assert (
        S.check_lock(CTX, att.shuffle_lock, att.lock) is None and S.check_lock_keys(att.shuffle_lock, att.lock) is None
    )
    v = S.verify_deal(att, ks, os_, dealer=0)
    assert isinstance(v, S.VerifiedDeal)
    order = list(v.order)
    # the first turns: O (dealer) plays hand position 0 and draws 24; K plays 8 and draws 25
    turns = [
        {
            "mover": "O",
            "hand_position": 0,
            "mover_keys_hex": [o.key(0).hex(), o.key(24).hex()],
            "answer_hex": k.key(24).hex(),
        },
        {
            "mover": "K",
            "hand_position": 8,
            "mover_keys_hex": [k.key(8).hex(), k.key(25).hex()],
            "answer_hex": o.key(25).hex(),
        },
    ]
    published = [
        S.PublishedKey(O, 0, o.key(0)),
        S.PublishedKey(O, 24, o.key(24)),
        S.PublishedKey(K, 24, k.key(24)),
        S.PublishedKey(K, 8, k.key(8)),
        S.PublishedKey(K, 25, k.key(25)),
        S.PublishedKey(O, 25, o.key(25)),
    ]
    assert isinstance(S.verify_deal(att, ks, os_, published), S.VerifiedDeal)
    s1, s2, s3 = att.shuffle, att.shuffle_lock, att.lock
    out["deal.json"] = _j(
        {
            "description": "one sealed deal attempt (round 1, attempt 0), the dealer O at seat 0, K at seat 1, "
            "with its proofs (spec/sealed.md §5) under the session id below",
            "group_order": S.GROUP_ORDER,
            "labels": {
                "card": S.CARD_LABEL.decode(),
                "round": S.ROUND_LABEL.decode(),
                "mask": S.MASK_LABEL.decode(),
                "key": S.KEY_LABEL.decode(),
                "permutation": S.PERMUTATION_LABEL.decode(),
                "proof_generator": P.GENERATOR_LABEL.decode(),
                "challenge": P.CHALLENGE_LABEL.decode(),
                "nonce": P.NONCE_LABEL.decode(),
                "context": P.CONTEXT_LABEL.decode(),
            },
            "tags": {
                "shuffle": S.STEP1_TAG.decode(),
                "shuffle_lock_mask": S.STEP2_TAG.decode(),
                "shuffle_lock_keys": S.STEP2_LOCK_TAG.decode(),
                "lock": S.STEP3_TAG.decode(),
            },
            "proof_generator_h_hex": P.H.hex(),
            "card_points_hex": {cid: S.CARD_POINTS[c].hex() for c, cid in enumerate(CARD_IDS)},
            "session_id_hex": SID.hex(),
            "round": 1,
            "attempt": 0,
            "context_hex": CTX.hex(),
            "k_match_secret_hex": km.hex(),
            "o_match_secret_hex": om.hex(),
            "k": _secrets_json(k),
            "o": _secrets_json(o),
            "steps": {
                "shuffle": {"points_hex": _hexes(s1.points), "proof": _proof_json(s1.proof)},
                "shuffle_lock": {
                    "points_hex": _hexes(s2.points),
                    "keys_hex": _hexes(s2.keys),
                    "masked_hex": _hexes(s2.masked),
                    "proof": _proof_json(s2.proof),
                    "lock_proof_hex": _hexes(s2.lock_proof.responses),
                },
                "lock": {
                    "points_hex": _hexes(s3.points),
                    "keys_hex": _hexes(s3.keys),
                    "claim_hex": _hexes(s3.claim),
                    "lock_proof_hex": _hexes(s3.lock_proof.responses),
                },
                "claim": {"claim_hex": _hexes(att.claim.keys)},
            },
            "bodies_hex": _bodies(att),
            "order": order,
            "dealer_hand": order[0:8],
            "other_hand": order[8:16],
            "table": order[16:24],
            "deck": order[24:48],
            "k_sees_after_shuffle_lock": {
                str(p): c for p, c in sorted(_checked(S.open_shuffle_lock(k, one, s2)).items())
            },
            "o_sees_after_lock": {str(p): c for p, c in sorted(_checked(S.open_lock(o, s2, s3)).items())},
            "turns": turns,
            "published": _published(published),
            "opened_by_turns": {"0": order[0], "24": order[24], "8": order[8], "25": order[25]},
            "disclose_body_hex": {"k": encode([[ks]]).hex(), "o": encode([[os_]]).hex()},
            "verified": {"order": order, "redeal": v.redeal, "hand_yaku": None, "complete": v.complete},
        }
    )

    other = S.derive(_secret("another")).keys[0]
    at_once: list[dict[str, Any]] = []
    vectors: list[dict[str, Any]] = []

    def refused(name: str, desc: str, a: S.Attempt, check: str, f: S.SealedFault | None, **key: Any) -> None:
        base, bodies = _bodies(att), _bodies(a)
        at_once.append(
            {
                "name": name,
                "description": desc,
                "check": check,
                "bodies_hex": {st: b for st, b in bodies.items() if b != base[st]},
                **key,
                "fault": _fault(f),
            }
        )

    # step 1, K: its shuffle argument
    def k_shuffle(points: tuple[bytes, ...]) -> S.Shuffle:
        """K's best try: the honest argument's algorithm run on points that are not its shuffle."""
        return S.Shuffle(
            points, P.prove_shuffle(CTX, S.STEP1_TAG, S.CARD_POINTS, points, k.mask_inverse, k.permutation, ks)
        )

    for name, desc, pts in (
        ("k_duplicates_a_card", "K's shuffle holds the point at 3 again at 5", _set(s1.points, 5, s1.points[3])),
        ("k_replaces_a_card", "K's shuffle holds a masked non-card at 5", _set(s1.points, 5, _mul(k.mask, JOKER))),
        (
            "k_masks_two_cards_apart",
            "K's shuffle masks the card at 5 with another scalar (a copy of no card under a)",
            _set(s1.points, 5, _mul(other, S.CARD_POINTS[k.permutation[5]])),
        ),
    ):
        bad = dataclasses.replace(att, shuffle=k_shuffle(pts))
        refused(name, desc, bad, "check_shuffle", S.check_shuffle(CTX, bad.shuffle))
    refused(
        "k_shuffle_of_another_session",
        "K's honest shuffle and argument, made for another session id: the challenge binds the session",
        dataclasses.replace(att, shuffle=S.shuffle_step(k, context(bytes(32), 1, 0))),
        "check_shuffle",
        S.check_shuffle(CTX, S.shuffle_step(k, context(bytes(32), 1, 0))),
    )
    bad1 = dataclasses.replace(att, shuffle=dataclasses.replace(s1, points=_set(s1.points, 0, NOT_ON_CURVE)))
    refused(
        "bad_point_not_on_curve",
        "K's step-1 point at 0 is not on the curve",
        bad1,
        "check_shuffle",
        S.check_shuffle(CTX, bad1.shuffle),
    )

    # step 2, O: W a shuffle of step 1 under O's mask, Y re-keyed W
    x = s1.points
    w = _honest_w(o, s1)
    rekey = [crypto_core_ed25519_scalar_mul(o.keys[i], o.mask_inverse) for i in range(48)]

    def o_step2(y: tuple[bytes, ...], masked: tuple[bytes, ...] = w) -> S.ShuffleLock:
        """O's best try: the honest proofs' algorithms run on its points."""
        return S.ShuffleLock(
            y,
            s2.keys,
            masked,
            P.prove_shuffle(CTX, S.STEP2_TAG, x, masked, o.mask_inverse, o.permutation, os_),
            P.prove_rekey(CTX, S.STEP2_LOCK_TAG, masked, y, rekey, os_),
        )

    def o_refused(name: str, desc: str, sl: S.ShuffleLock) -> None:
        refused(
            name,
            desc,
            dataclasses.replace(att, shuffle_lock=sl),
            "check_shuffle_lock",
            S.check_shuffle_lock(CTX, one, sl),
        )

    sums = list(s2.points)
    for i in range(4):  # O's hand positions 0-3 lock sums of two step-1 points: K's keys would name 8 cards
        sums[i] = _mul(o.keys[i], crypto_core_ed25519_add(x[2 * i], x[2 * i + 1]))
    o_refused(
        "o_locks_sums",
        "O locks sums of two step-1 points at its hand positions 0-3 (the peek at K's hand)",
        o_step2(tuple(sums)),
    )
    wsum = list(w)
    wsum[0] = _mul(o.mask, crypto_core_ed25519_add(x[0], x[1]))
    ysum = list(s2.points)
    ysum[0] = _mul(rekey[0], wsum[0])
    o_refused(
        "o_masks_a_sum",
        "O's masked point at 0 is a sum of two step-1 points (the lock proof then holds)",
        o_step2(tuple(ysum), tuple(wsum)),
    )
    dup = list(s2.points)
    dup[40] = _mul(o.keys[40], x[o.permutation[30]])
    o_refused(
        "o_duplicates_a_card",
        "O locks at 40 the step-1 point it locked at 30 (the peek at a deck card)",
        o_step2(tuple(dup)),
    )
    rep = list(s2.points)
    rep[30] = _mul(o.keys[30], JOKER)
    o_refused("o_replaces_a_card", "O locks a non-card at 30", o_step2(tuple(rep)))
    o_refused(
        "o_wrong_private_key",
        "O's key for K's hand position 9 is not its key",
        _with_key(s2, S.SHUFFLE_LOCK_KEY_POSITIONS, 9, other),
    )
    o_refused(
        "o_wrong_public_key",
        "O's key for table position 17 is not its key",
        _with_key(s2, S.SHUFFLE_LOCK_KEY_POSITIONS, 17, other),
    )
    o_refused(
        "bad_point_identity",
        "O's step-2 point at 13 is the identity",
        dataclasses.replace(s2, points=_set(s2.points, 13, IDENTITY)),
    )

    # step 3, K: each Z_i re-keyed Y_i; its published keys
    wanted = next(c for c in range(48) if c not in order[8:24])
    z10 = _mul(crypto_core_ed25519_scalar_mul(k.keys[10], o.keys[10]), S.CARD_POINTS[wanted])
    krekey = [crypto_core_ed25519_scalar_mul(k.keys[i], k.mask_inverse) for i in range(48)]
    zs = _set(s3.points, 10, z10)
    relock = dataclasses.replace(s3, points=zs, lock_proof=P.prove_rekey(CTX, S.STEP3_TAG, s2.points, zs, krekey, ks))
    refused(
        "k_relocks_its_own_card",
        f"K locks its hand position 10 as card {wanted} (it knows O's key for it)",
        dataclasses.replace(att, lock=relock),
        "check_lock",
        S.check_lock(CTX, s2, relock),
    )
    small = dataclasses.replace(s3, points=_set(s3.points, 7, ORDER_8))
    refused(
        "bad_point_small_order",
        "K's step-3 point at 7 has order 8",
        dataclasses.replace(att, lock=small),
        "check_lock",
        S.check_lock(CTX, s2, small),
    )
    kpub = _with_key(s3, S.LOCK_KEY_POSITIONS, 20, other)
    refused(
        "k_wrong_public_key",
        "K's key for table position 20 is not its key",
        dataclasses.replace(att, lock=kpub),
        "check_lock_keys",
        S.check_lock_keys(s2, kpub),
    )
    refused(
        "o_wrong_turn_key",
        "O publishes a wrong key for drawn position 24 (its play, or its answer to K's)",
        att,
        "check_dealer_key",
        S.check_dealer_key(one, s2, 24, other, Step.TURN),
        position=24,
        key_hex=other.hex(),
    )

    def add(name: str, desc: str, a: S.Attempt, pub: list[S.PublishedKey] | None = None, **kw: Any) -> None:
        kk = kw.get("k_secret", ks)
        oo = kw.get("o_secret", os_)
        f = S.verify_deal(a, kk, oo, pub or [], dealer=0)
        base = _bodies(att)
        bodies = _bodies(a)
        own = "k_match_secret" in kw
        vectors.append(
            {
                "name": name,
                "description": desc,
                "k_round_secret_hex": kk.hex(),
                "o_round_secret_hex": oo.hex(),
                "bodies_hex": bodies if own else {s: b for s, b in bodies.items() if b != base[s]},
                "published": _published(pub or []),
                "fault": _fault(f),
            }
        )

    add(
        "k_wrong_private_key",
        "K's key for O's hand position 2 is not its key (only O can tell: it stops)",
        dataclasses.replace(att, lock=_with_key(s3, S.LOCK_KEY_POSITIONS, 2, other)),
    )
    add(
        "k_false_claim",
        "K claims a hand yaku with a hand that has none (the line refuses it at once too)",
        dataclasses.replace(att, lock=S.lock_step(k, s2, True, CTX)),
    )
    add(
        "o_false_claim",
        "O claims a hand yaku with a hand that has none (the line refuses it at once too)",
        dataclasses.replace(att, claim=S.claim_step(o, True)),
    )
    add(
        "wrong_turn_key",
        "K publishes a wrong key for drawn position 30 (its play's deck key: only O can tell, and stops)",
        att,
        [S.PublishedKey(K, 30, other)],
    )
    add(
        "k_secret_mismatch",
        "K discloses a round secret that is not the one it dealt with",
        att,
        k_secret=_secret("not K's"),
    )
    add(
        "o_secret_mismatch",
        "O discloses a round secret that is not the one it dealt with",
        att,
        o_secret=_secret("not O's"),
    )

    def k_has_yaku(order: list[int]) -> bool:
        return not four_of_a_month(mask_of(order[16:24])) and hand_yaku(mask_of(order[8:16])) is not None

    km2, om2, _ = _find("k-yaku", k_has_yaku)
    k2, o2 = S.derive(S.round_secret(km2, 1, 0)), S.derive(S.round_secret(om2, 1, 0))
    honest2 = S.honest_attempt(k2, o2, CTX)
    none2 = dataclasses.replace(honest2, lock=S.lock_step(k2, honest2.shuffle_lock, False, CTX))
    add(
        "k_false_none",
        "K's hand holds a hand yaku, K says none (all four bodies given: other secrets)",
        none2,
        k_secret=k2.round_secret,
        o_secret=o2.round_secret,
        k_match_secret=True,
    )
    out["negative.json"] = _j(
        {
            "description": "each cheat (O is seat 0; every proof under deal.json's context). at_once: refused "
            "when the step arrives, by the named check, before the receiver sends anything; at_disclosure: named "
            "by verify_deal after the round's disclosures. bodies_hex holds the steps that differ from "
            "deal.json's (every step when the vector has its own secrets)",
            "at_once": at_once,
            "at_disclosure": vectors,
        }
    )
    return out


def _set(points: tuple[bytes, ...], i: int, p: bytes) -> tuple[bytes, ...]:
    pts = list(points)
    pts[i] = p
    return tuple(pts)


def _checked(x: dict[int, int] | S.SealedFault) -> dict[int, int]:
    assert isinstance(x, dict)
    return x


def main(argv: list[str]) -> int:
    check = "--check" in argv
    bad = 0
    for name, data in sorted(build_all().items()):
        path = HERE / name
        if check:
            if not path.exists() or path.read_bytes() != data:
                print(f"differs: {name}", file=sys.stderr)
                bad += 1
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            print(f"wrote {path.relative_to(HERE)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
