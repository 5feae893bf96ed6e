"""The sealed deck against spec/vectors/sealed/: the whole deal's bytes and every negative vector."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from koikoi.protocol import proofs as P
from koikoi.protocol import sealed as S
from koikoi.protocol.framing import decode
from koikoi.protocol.steps import Step

VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors" / "sealed"
DEAL: dict[str, Any] = json.loads((VECTORS / "deal.json").read_text())
_NEG: dict[str, Any] = json.loads((VECTORS / "negative.json").read_text())
AT_ONCE: list[dict[str, Any]] = _NEG["at_once"]
NEGATIVE: list[dict[str, Any]] = _NEG["at_disclosure"]
CTX = bytes.fromhex(DEAL["context_hex"])
ROLES = {"K": S.Role.OTHER, "O": S.Role.DEALER}


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("koikoi_sealed_vector_gen", VECTORS / "generate.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _attempt(bodies: dict[str, str | None]) -> S.Attempt:
    """Parse the step bodies (msgpack hex) as the integration will parse received steps."""
    lock, claim = bodies.get("lock"), bodies.get("claim")
    return S.Attempt(
        S.Shuffle.from_body(decode(bytes.fromhex(str(bodies["shuffle"])))),
        S.ShuffleLock.from_body(decode(bytes.fromhex(str(bodies["shuffle_lock"])))),
        None if lock is None else S.Lock.from_body(decode(bytes.fromhex(lock))),
        None if claim is None else S.Claim.from_body(decode(bytes.fromhex(claim))),
    )


def _published(items: list[dict[str, Any]]) -> list[S.PublishedKey]:
    return [S.PublishedKey(ROLES[p["role"]], p["position"], bytes.fromhex(p["key_hex"])) for p in items]


def test_the_generator_reproduces_every_vector_file_byte_for_byte() -> None:
    built = _generator().build_all()
    assert set(built) == {p.name for p in VECTORS.glob("*.json")}
    for name, data in built.items():
        assert (VECTORS / name).read_bytes() == data, name


def test_card_points_and_labels() -> None:
    assert DEAL["group_order"] == S.GROUP_ORDER
    assert [bytes.fromhex(h) for h in DEAL["card_points_hex"].values()] == list(S.CARD_POINTS)
    assert DEAL["labels"]["round"].encode() == S.ROUND_LABEL and DEAL["labels"]["key"].encode() == S.KEY_LABEL


def test_the_deal_re_derives_byte_for_byte_from_the_match_secrets() -> None:
    secrets = {}
    for who in ("k", "o"):
        ms = bytes.fromhex(DEAL[f"{who}_match_secret_hex"])
        rs = S.round_secret(ms, DEAL["round"], DEAL["attempt"])
        sec = S.derive(rs)
        want = DEAL[who]
        assert rs.hex() == want["round_secret_hex"]
        assert sec.mask.hex() == want["mask_hex"] and sec.mask_inverse.hex() == want["mask_inverse_hex"]
        assert list(sec.permutation) == want["permutation"]
        assert [x.hex() for x in sec.keys] == want["keys_hex"]
        secrets[who] = sec
    k, o = secrets["k"], secrets["o"]
    assert P.context(bytes.fromhex(DEAL["session_id_hex"]), DEAL["round"], DEAL["attempt"]) == CTX
    att = S.honest_attempt(k, o, CTX)
    assert att.lock is not None and att.claim is not None
    bodies = DEAL["bodies_hex"]
    assert att.shuffle.encode().hex() == bodies["shuffle"]
    assert att.shuffle_lock.encode().hex() == bodies["shuffle_lock"]
    assert att.lock.encode().hex() == bodies["lock"]
    assert att.claim.encode().hex() == bodies["claim"]
    assert [p.hex() for p in att.lock.points] == DEAL["steps"]["lock"]["points_hex"]
    parsed = _attempt(bodies)
    assert parsed == att
    v = S.verify_deal(parsed, k.round_secret, o.round_secret, _published(DEAL["published"]), dealer=0)
    assert isinstance(v, S.VerifiedDeal)
    assert list(v.order) == DEAL["order"] == DEAL["verified"]["order"]
    assert list(v.order[24:]) == DEAL["deck"] and not v.redeal and v.complete
    for pos, card in DEAL["opened_by_turns"].items():
        p = int(pos)
        assert S.open_card(att.lock.points[p], k.key(p), o.key(p)) == card
    one = S.StepOne(parsed.shuffle)
    assert S.check_shuffle(CTX, parsed.shuffle) is None
    assert S.check_shuffle_lock(CTX, one, parsed.shuffle_lock) is None
    assert parsed.lock is not None and S.check_lock(CTX, parsed.shuffle_lock, parsed.lock) is None
    assert S.check_lock_keys(parsed.shuffle_lock, parsed.lock) is None
    assert P.H.hex() == DEAL["proof_generator_h_hex"]
    seen_k = S.open_shuffle_lock(k, one, parsed.shuffle_lock)
    assert isinstance(seen_k, dict) and {str(p): c for p, c in seen_k.items()} == DEAL["k_sees_after_shuffle_lock"]
    disclosed = S.Disclose.from_body(decode(bytes.fromhex(DEAL["disclose_body_hex"]["k"])))
    assert disclosed == S.Disclose((k.round_secret,))
    assert disclosed.encode().hex() == DEAL["disclose_body_hex"]["k"]
    with pytest.raises(S.SealedFormatError, match="disclose: secrets must be an array of 0 to 8"):
        S.Disclose.from_body([[k.round_secret] * 9])  # one secret per deal attempt, at most MAX_ATTEMPTS


@pytest.mark.parametrize("vec", NEGATIVE, ids=[v["name"] for v in NEGATIVE])
def test_every_negative_vector_names_its_fault(vec: dict[str, Any]) -> None:
    bodies = dict(DEAL["bodies_hex"]) if vec["name"] != "k_false_none" else {}
    bodies.update(vec["bodies_hex"])
    att = _attempt(bodies)
    f = S.verify_deal(
        att,
        bytes.fromhex(vec["k_round_secret_hex"]),
        bytes.fromhex(vec["o_round_secret_hex"]),
        _published(vec["published"]),
        dealer=0,
    )
    assert isinstance(f, S.SealedFault), vec["name"]
    want = vec["fault"]
    assert (f.rule, f.role.letter, f.seat, f.step, f.index) == (
        want["rule"],
        want["role"],
        want["seat"],
        want["step"],
        want["index"],
    )
    assert f.rule in S.RULES


@pytest.mark.parametrize("vec", AT_ONCE, ids=[v["name"] for v in AT_ONCE])
def test_every_cheat_a_proof_shows_is_refused_by_its_check_at_once(vec: dict[str, Any]) -> None:
    bodies = dict(DEAL["bodies_hex"])
    bodies.update(vec["bodies_hex"])
    att = _attempt(bodies)
    assert att.lock is not None
    checks = {
        "check_shuffle": lambda: S.check_shuffle(CTX, att.shuffle),
        "check_shuffle_lock": lambda: S.check_shuffle_lock(CTX, S.StepOne(att.shuffle), att.shuffle_lock),
        "check_lock": lambda: S.check_lock(CTX, att.shuffle_lock, att.lock),
        "check_lock_keys": lambda: S.check_lock_keys(att.shuffle_lock, att.lock),
        "check_dealer_key": lambda: S.check_dealer_key(
            S.StepOne(att.shuffle), att.shuffle_lock, vec["position"], bytes.fromhex(vec["key_hex"]), Step.TURN
        ),
    }
    f = checks[vec["check"]]()
    assert isinstance(f, S.SealedFault), vec["name"]
    want = vec["fault"]
    assert (f.rule, f.role.letter, f.step, f.index) == (want["rule"], want["role"], want["step"], want["index"])
    # the steps before the refused one pass their own checks: the cheat is the refused step's alone
    if vec["check"] != "check_shuffle":
        assert S.check_shuffle(CTX, att.shuffle) is None
    if vec["check"] in ("check_lock", "check_lock_keys", "check_dealer_key"):
        assert S.check_shuffle_lock(CTX, S.StepOne(att.shuffle), att.shuffle_lock) is None


def test_every_rule_but_the_shape_has_a_negative_vector() -> None:
    covered = {v["fault"]["rule"] for v in [*NEGATIVE, *AT_ONCE]}
    assert covered == set(S.RULES) - {"bad_shape", "bad_scalar"}
