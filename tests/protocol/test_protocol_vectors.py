"""The implementation against every vector file in spec/vectors/protocol/."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from koikoi.engine import Settings
from koikoi.engine.actions import from_code
from koikoi.engine.deal import SeededDeal
from koikoi.engine.match import choose_first_dealer
from koikoi.protocol.audit import audit
from koikoi.protocol.errors import ProtocolError
from koikoi.protocol.framing import encode
from koikoi.protocol.messages import (
    PROTOCOL_VERSION,
    MsgType,
    build,
    commit_value,
    commitment_of,
    context,
    fingerprint,
    match_seed,
    msg_hash,
    parse,
    parse_resend,
    resend_frame,
    session_id,
    settings_digest,
)
from koikoi.protocol.witness import open_certificate

VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors" / "protocol"


def _load(name: str) -> Any:
    return json.loads((VECTORS / name).read_text())


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("koikoi_protocol_vector_gen", VECTORS / "generate.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_generator_reproduces_every_vector_file_byte_for_byte() -> None:
    built = _generator().build_all()
    on_disk = {
        str(p.relative_to(VECTORS)) for p in VECTORS.rglob("*") if p.is_file() and p.suffix in (".json", ".koikoi")
    }
    assert set(built) == on_disk
    for name, data in built.items():
        assert (VECTORS / name).read_bytes() == data, name


def test_settings_digest_for_all_four_room_settings() -> None:
    vs = _load("settings_digest.json")["vectors"]
    assert {(v["rounds"], v["double_at_8"]) for v in vs} == {(6, True), (6, False), (12, True), (12, False)}
    for v in vs:
        s = Settings(v["rounds"], v["double_at_8"])
        assert settings_digest(s, v["rules_version"]).hex() == v["digest_hex"]
    assert len({v["digest_hex"] for v in vs}) == 4


def test_commitment_and_seed_derivation_with_fixed_nonces() -> None:
    v = _load("commit_reveal.json")
    k0 = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(v["creator_private_key_hex"]))
    k1 = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(v["joiner_private_key_hex"]))
    pk0, pk1 = k0.public_key().public_bytes_raw(), k1.public_key().public_bytes_raw()
    assert (pk0.hex(), pk1.hex()) == (v["creator_public_key_hex"], v["joiner_public_key_hex"])
    assert (fingerprint(pk0), fingerprint(pk1)) == (v["creator_fingerprint"], v["joiner_fingerprint"])
    s = Settings(v["settings"]["rounds"], v["settings"]["double_at_8"])
    n0, n1 = bytes.fromhex(v["creator_nonce_hex"]), bytes.fromhex(v["joiner_nonce_hex"])
    relay_key = bytes.fromhex(v["relay_key_hex"])
    assert settings_digest(s).hex() == v["settings_digest_hex"]
    # every input of the session id is in the file: its preimage, rebuilt from them, hashes to it
    preimage = encode(
        [
            v["protocol_version"],
            v["rules_version"],
            v["room"],
            bytes.fromhex(v["settings_digest_hex"]),
            v["move_time_s"],
            v["deck"],
            v["watchers"],
            v["creator_publish"],
            v["joiner_publish"],
            relay_key,
            pk0,
            pk1,
            n0,
            n1,
        ]
    )
    assert preimage.hex() == v["session_id_preimage_hex"]
    sid = session_id(
        v["room"],
        s,
        (pk0, pk1),
        (n0, n1),
        move_time_s=v["move_time_s"],
        relay_key=relay_key,
        deck=v["deck"],
        watchers=v["watchers"],
        publish=(v["creator_publish"], v["joiner_publish"]),
    )
    assert sid.hex() == v["session_id_hex"] == hashlib.sha256(b"koikoi/session/v3\x00" + preimage).hexdigest()
    c, j = commit_value(k0, sid, 0), commit_value(k1, sid, 1)
    assert (c.hex(), j.hex()) == (v["creator_value_hex"], v["joiner_value_hex"])
    assert commitment_of(sid, c).hex() == v["commitment_hex"]
    seed = match_seed(sid, c, j)
    assert seed.hex() == v["match_seed_hex"]
    first, turned = choose_first_dealer(SeededDeal(seed))
    assert first == v["first_dealer"] and [list(t) for t in turned] == v["first_dealer_cards"]
    assert SeededDeal(seed).order(1, 0) == v["round_1_order"]
    assert SeededDeal(seed).order(2, 0) == v["round_2_order"]
    # the commitment is bound to the session: another session id does not open it
    assert commitment_of(bytes(32), c).hex() != v["commitment_hex"]


def test_a_signed_moves_exact_bytes() -> None:
    v = _load("signed_move.json")
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(v["private_key_hex"]))
    assert from_code(v["action_code"]).text == v["action"]
    frame = build(
        key,
        MsgType.MOVE,
        bytes.fromhex(v["match_id_hex"]),
        v["seq"],
        bytes.fromhex(v["prev_hex"]),
        v["seat"],
        [v["action_code"], bytes.fromhex(v["state_hash_hex"])],
    )
    assert frame.hex() == v["frame_hex"]
    assert context(MsgType.MOVE).decode() == v["context"] == f"koikoi/v{PROTOCOL_VERSION}/move\x00"
    signed = bytes.fromhex(v["signed_bytes_hex"])
    assert signed == context(MsgType.MOVE) + frame[:-66]
    pub = Ed25519PublicKey.from_public_bytes(bytes.fromhex(v["public_key_hex"]))
    pub.verify(bytes.fromhex(v["signature_hex"]), signed)
    assert msg_hash(frame).hex() == v["message_hash_hex"]
    m = parse(frame)
    assert (m.seq, m.seat, m.body[0]) == (v["seq"], v["seat"], v["action_code"])


@pytest.mark.parametrize("name", ["match_complete", "match_forfeit", "match_sealed"])
def test_whole_transcripts_audit_to_their_expected_reports(name: str) -> None:
    rep = audit((VECTORS / f"{name}.koikoi").read_bytes()).to_json(f"{name}.koikoi")
    del rep["file"]
    assert rep == _load(f"{name}.audit.json")
    assert rep["valid"] is True


def _negatives() -> list[dict[str, Any]]:
    vs: list[dict[str, Any]] = _load("negative/index.json")["vectors"]
    return vs


def test_the_negative_vectors_cover_the_issue_list() -> None:
    flaws = {v["flaw"] for v in _negatives()}
    assert flaws >= {
        "settings_mismatch",
        "sequence_gap",
        "bad_signature",
        "non_canonical",
        "duplicate_key",
        "commitment_mismatch",
        "illegal_move",
        "desync",
    }


@pytest.mark.parametrize("v", _negatives(), ids=lambda v: v["name"])
def test_each_negative_vector_fails_with_its_flag(v: dict[str, Any]) -> None:
    rep = audit((VECTORS / v["file"]).read_bytes())
    if v.get("status") == "abandoned":  # the handshake itself ends the match
        assert rep.status == "abandoned" and rep.ending is not None
        assert rep.ending["code"] == v["code"] == v["flaw"]
        assert rep.ending["message"] == v["message"]
        return
    assert not rep.valid and rep.status == "invalid"
    assert [(e.code, e.seq) for e in rep.errors] == [(v["code"], v["seq"])]
    assert v["code"] == v["flaw"]
    if "frame_hex" in v:
        with pytest.raises(ProtocolError) as e:
            parse(bytes.fromhex(v["frame_hex"]))
        assert e.value.code == v["flaw"]


def _endings() -> list[dict[str, Any]]:
    vs: list[dict[str, Any]] = _load("endings/index.json")["vectors"]
    return vs


def test_the_ending_vectors_cover_every_status_and_false_claim() -> None:
    names = {v["name"] for v in _endings()}
    assert names >= {
        "resigned",
        "on_time",
        "no_reveal_on_time",
        "equivocation",
        "self_evidence_abort",
        "false_timeout_none",
        "false_timeout_forged",
        "false_timeout_stale",
        "false_timeout_foreign",
        "false_timeout_early",
        "room_mismatch",
        "relay_mismatch",
        "settings_mismatch",
        "settings_mismatch_watchers",
    }
    assert {v["status"] for v in _endings()} == {"resigned", "forfeit", "on_time", "abandoned"}


@pytest.mark.parametrize("v", _endings(), ids=lambda v: v["name"])
def test_each_ending_vector_audits_to_its_verdict(v: dict[str, Any]) -> None:
    rep = audit((VECTORS / v["file"]).read_bytes())
    assert rep.valid and rep.errors == []
    assert (rep.status, rep.result["winner"], rep.ending) == (v["status"], v["winner"], v["ending"])
    if v["name"].startswith("false_timeout") or v["name"] == "self_evidence_abort":
        assert rep.ending is not None and rep.ending["by"] == rep.ending["loser"]  # the false claim's signer lost


def test_the_new_messages_exact_bytes() -> None:
    h = _load("hello.json")
    f = h["fields"]
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(h["private_key_hex"]))
    keys = [bytes.fromhex(f[k]) for k in ("relay_key_hex", "public_key_hex", "nonce_hex")]
    body = [f["rules_version"], f["room"], f["rounds"], f["double_at_8"], f["move_time_s"], f["deck"], *keys]
    body += [f["watchers"], f["publish"]]
    frame = build(key, MsgType.HELLO, b"", 0, bytes(32), 0, body)
    assert frame.hex() == h["frame_hex"] and msg_hash(frame).hex() == h["message_hash_hex"]
    assert context(MsgType.HELLO).decode() == h["context"] == f"koikoi/v{PROTOCOL_VERSION}/hello\x00"
    assert (context(MsgType.HELLO) + frame[:-66]).hex() == h["signed_bytes_hex"]
    assert frame[-64:].hex() == h["signature_hex"]
    key.public_key().verify(bytes.fromhex(h["signature_hex"]), bytes.fromhex(h["signed_bytes_hex"]))
    for v in _load("resend.json")["vectors"]:
        frame = resend_frame(bytes.fromhex(v["match_hex"]), v["from_seq"])
        assert frame.hex() == v["frame_hex"] and msg_hash(frame).hex() == v["frame_hash_hex"]
        assert parse_resend(frame) == (bytes.fromhex(v["match_hex"]), v["from_seq"])
    t = _load("timeout.json")
    cert = open_certificate(bytes.fromhex(t["certificate"]["blob_hex"]))
    c = t["certificate"]
    assert (cert.room, cert.silent_seat, cert.silent_ms, cert.connected) == (
        c["room"], c["silent_seat"], c["silent_ms"], c["connected"])  # fmt: skip
    assert cert.last_frame == (bytes.fromhex(c["last0_hex"]), bytes.fromhex(c["last1_hex"]))
    assert cert.recent == {bytes.fromhex(h) for h in c["recent_hex"]} and c["recent_hex"]
    assert cert.relay_key.hex() == t["relay_public_key_hex"]
    m = parse(bytes.fromhex(t["frame_hex"]))
    assert m.type is MsgType.TIMEOUT and m.seat == t["claimer"] and m.seq == t["seq"]
    assert m.body == (bytes.fromhex(c["blob_hex"]), b"")
