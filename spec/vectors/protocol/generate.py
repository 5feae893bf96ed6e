"""Generate the protocol's test vectors (spec/vectors/protocol/). Deterministic: run it again and
nothing changes.

    python spec/vectors/protocol/generate.py          # (re)write the vectors
    python spec/vectors/protocol/generate.py --check  # exit 1 when a file differs

Every key, nonce and bot here derives from fixed labels: these keys are public and for vectors only.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from koikoi.engine import Settings
from koikoi.engine.actions import CHOOSE, from_code
from koikoi.engine.bots import make_bot
from koikoi.engine.deal import SeededDeal
from koikoi.protocol.audit import audit
from koikoi.protocol.framing import encode
from koikoi.protocol.harness import Pair, fixed_key, reforge
from koikoi.protocol.messages import (
    PROTOCOL_VERSION,
    RULES_VERSION,
    SIG_TRAILER,
    MsgType,
    commit_value,
    commitment_of,
    context,
    fingerprint,
    match_seed,
    msg_hash,
    parse,
    private_bytes,
    public_bytes,
    session_id,
    settings_digest,
)
from koikoi.protocol.session import Session
from koikoi.protocol.transcript import encode_transcript, parse_transcript

HERE = Path(__file__).resolve().parent
SEED = b"koikoi protocol vectors v1"
ROOM = "KQ7-M3X"


def _nonce(label: str) -> bytes:
    return hashlib.sha256(b"koikoi/vector-nonce\x00" + label.encode()).digest()


def _pair(settings: Settings, label: str, *, join_rounds: int | None = None) -> Pair:
    a = Session.create(fixed_key(SEED, 0), ROOM, settings, _nonce(label + "/0"))
    b = Session.join(fixed_key(SEED, 1), ROOM, _nonce(label + "/1"), rounds=join_rounds)
    rng = random.Random(label)
    pair = Pair(
        (a, b), (make_bot("greedy", random.Random(rng.random())), make_bot("random", random.Random(rng.random())))
    )
    a.start()
    return pair


def _played(settings: Settings, label: str) -> bytes:
    pair = _pair(settings, label)
    assert not pair.run()
    t0, t1 = bytes(pair.files[0]), bytes(pair.files[1])
    assert t0 == t1
    return t0


def _j(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode()


def _report(data: bytes, name: str) -> dict[str, Any]:
    rep = audit(data).to_json(name)
    del rep["file"]
    return rep


def _noncanonical_move(frame: bytes, key: Ed25519PrivateKey) -> bytes:
    """The same MOVE with its sequence number as a uint16 (non-canonical for a value under 128), re-signed."""
    m = parse(frame)
    parts = [
        encode(PROTOCOL_VERSION),
        encode(int(m.type)),
        encode(m.match),
        b"\xcd" + m.seq.to_bytes(2, "big"),
        encode(m.prev),
        encode(m.seat),
        *(encode(x) for x in m.body),
    ]
    n = 6 + len(m.body) + 1
    unsigned = bytes([0x90 | n]) + b"".join(parts)
    return unsigned + SIG_TRAILER + key.sign(context(m.type) + unsigned)


def _duplicate_key_move(frame: bytes, key: Ed25519PrivateKey) -> bytes:
    """The same MOVE whose action field is a map with a key twice, re-signed."""
    m = parse(frame)
    parts = [encode(x) for x in (PROTOCOL_VERSION, int(m.type), m.match, m.seq, m.prev, m.seat)]
    parts.append(b"\x82\xa1a\x01\xa1a\x02")  # {"a": 1, "a": 2}
    parts.append(encode(m.body[1]))
    unsigned = bytes([0x90 | 9]) + b"".join(parts)
    return unsigned + SIG_TRAILER + key.sign(context(m.type) + unsigned)


def build_all() -> dict[str, bytes]:
    """Every vector file, by path relative to this folder."""
    out: dict[str, bytes] = {}

    # -- settings digests ------------------------------------------------
    out["settings_digest.json"] = _j(
        {
            "description": "SHA-256(b'koikoi/settings/v1\\x00' || msgpack([rules_version, rounds, double_at_8]))",
            "vectors": [
                {
                    "rules_version": RULES_VERSION,
                    "rounds": r,
                    "double_at_8": d,
                    "encoding_hex": encode([RULES_VERSION, r, d]).hex(),
                    "digest_hex": settings_digest(Settings(r, d)).hex(),
                }
                for r in (6, 12)
                for d in (True, False)
            ],
        }
    )

    # -- commitment and seed derivation ----------------------------------
    k0, k1 = fixed_key(SEED, 0), fixed_key(SEED, 1)
    pk0, pk1 = public_bytes(k0), public_bytes(k1)
    n0, n1 = _nonce("derivation/0"), _nonce("derivation/1")
    st = Settings(12, True)
    sid = session_id(ROOM, st, (pk0, pk1), (n0, n1))
    v0, v1 = commit_value(k0, sid, 0), commit_value(k1, sid, 1)
    seed = match_seed(sid, v0, v1)
    from koikoi.engine.selfplay import choose_first_dealer

    first, turned = choose_first_dealer(SeededDeal(seed))
    out["commit_reveal.json"] = _j(
        {
            "description": "session id, commit-reveal and the match seed, with fixed keys and nonces",
            "protocol_version": PROTOCOL_VERSION,
            "rules_version": RULES_VERSION,
            "room": ROOM,
            "settings": {"rounds": st.rounds, "double_at_8": st.double_at_8},
            "creator_private_key_hex": private_bytes(k0).hex(),
            "joiner_private_key_hex": private_bytes(k1).hex(),
            "creator_public_key_hex": pk0.hex(),
            "joiner_public_key_hex": pk1.hex(),
            "creator_fingerprint": fingerprint(pk0),
            "joiner_fingerprint": fingerprint(pk1),
            "creator_nonce_hex": n0.hex(),
            "joiner_nonce_hex": n1.hex(),
            "session_id_hex": sid.hex(),
            "creator_value_hex": v0.hex(),
            "joiner_value_hex": v1.hex(),
            "commitment_hex": commitment_of(sid, v0).hex(),
            "match_seed_hex": seed.hex(),
            "first_dealer_cards": [list(t) for t in turned],
            "first_dealer": first,
            "round_1_order": SeededDeal(seed).order(1, 0),
            "round_2_order": SeededDeal(seed).order(2, 0),
        }
    )

    # -- a complete match --------------------------------------------------
    complete = _played(Settings(12, True), "complete")
    out["match_complete.koikoi"] = complete
    out["match_complete.audit.json"] = _j(_report(complete, "match_complete.koikoi"))
    frames = parse_transcript(complete).frames
    moves = [i for i, f in enumerate(frames) if parse(f).type is MsgType.MOVE]

    # -- a signed move's exact bytes ----------------------------------------
    mi = moves[0]
    m = parse(frames[mi])
    key = fixed_key(SEED, m.seat)
    out["signed_move.json"] = _j(
        {
            "description": "one MOVE: [version, type, match, seq, prev, seat, action_code, state_hash, sig]; "
            "sig = Ed25519(context || frame[:-66])",
            "private_key_hex": private_bytes(key).hex(),
            "public_key_hex": public_bytes(key).hex(),
            "match_id_hex": m.match.hex(),
            "seq": m.seq,
            "prev_hex": m.prev.hex(),
            "seat": m.seat,
            "action": from_code(m.body[0]).text,
            "action_code": m.body[0],
            "state_hash_hex": m.body[1].hex(),
            "context": context(MsgType.MOVE).decode(),
            "signed_bytes_hex": (context(MsgType.MOVE) + m.frame[:-66]).hex(),
            "signature_hex": m.sig.hex(),
            "frame_hex": m.frame.hex(),
            "message_hash_hex": msg_hash(m.frame).hex(),
        }
    )

    # -- a verified abort (the receiver of a desynced move) -------------------
    # -- negatives ------------------------------------------------------------
    negatives: dict[str, tuple[str, list[bytes], dict[str, Any]]] = {}
    k = moves[6]
    km = parse(frames[k])
    kkey = fixed_key(SEED, km.seat)

    def neg(name: str, flaw: str, fs: list[bytes], expect: dict[str, Any], description: str) -> None:
        negatives[name] = (description, fs, {"flaw": flaw, **expect})

    neg(
        "sequence_gap",
        "sequence_gap",
        frames[:k] + frames[k + 1 :],
        {"code": "sequence_gap", "seq": k + 1},
        f"record {k} removed: the next message arrives out of sequence",
    )
    bad = bytearray(frames[k])
    bad[-1] ^= 0x01
    neg(
        "bad_signature",
        "bad_signature",
        [*frames[:k], bytes(bad), *frames[k + 1 :]],
        {"code": "bad_signature", "seq": k},
        f"one bit of record {k}'s signature flipped",
    )
    nc = _noncanonical_move(frames[k], kkey)
    neg(
        "non_canonical",
        "non_canonical",
        [*frames[:k], nc, *frames[k + 1 :]],
        {"code": "non_canonical", "seq": None, "frame_hex": nc.hex()},
        f"record {k}'s sequence number encoded as uint16 (0xcd), re-signed: valid but not canonical msgpack",
    )
    dk = _duplicate_key_move(frames[k], kkey)
    neg(
        "duplicate_key",
        "duplicate_key",
        [*frames[:k], dk, *frames[k + 1 :]],
        {"code": "duplicate_key", "seq": None, "frame_hex": dk.hex()},
        f"record {k}'s action replaced by a map with the key 'a' twice, re-signed",
    )
    illegal = reforge(frames[k], kkey, action=CHOOSE[0].code)
    neg(
        "illegal_move",
        "illegal_move",
        [*frames[:k], illegal],
        {"code": "illegal_move", "seq": k},
        f"record {k} re-signed by its sender with an action the rules forbid now",
    )
    desync = reforge(frames[k], kkey, state_hash=bytes(32))
    neg(
        "desync",
        "desync",
        [*frames[:k], desync],
        {"code": "desync", "seq": k},
        f"record {k} re-signed by its sender with a wrong state hash",
    )
    # a commitment from another session: the same creator, another session's COMMIT
    other = _played(Settings(12, True), "other session")
    other_commit = parse_transcript(other).frames[2]
    neg(
        "commitment_other_session",
        "commitment_mismatch",
        [*frames[:2], other_commit],
        {"code": "commitment_mismatch", "seq": 2},
        "the creator's COMMIT taken from another session (same key): it is bound to that session's id",
    )
    neg(
        "replay_other_match",
        "replay",
        [*frames[:k], parse_transcript(other).frames[k]],
        {"code": "replay", "seq": k},
        "a validly signed move from another match of the same players",
    )
    # settings mismatch: the joiner expects 6 rounds, the creator's room has 12
    mm = _pair(Settings(12, True), "mismatch", join_rounds=6)
    mm.run()
    mm_frames = parse_transcript(bytes(mm.files[0])).frames
    neg(
        "settings_mismatch",
        "settings_mismatch",
        mm_frames,
        {"code": "settings_mismatch", "status": "aborted", "message": "rounds: creator 12, joiner 6"},
        "the joiner expected 6 rounds, the room has 12: the handshake ends with settings_mismatch on both sides",
    )

    index = []
    for name, (description, fs, expect) in negatives.items():
        data = encode_transcript(fs)
        out[f"negative/{name}.koikoi"] = data
        index.append({"name": name, "file": f"negative/{name}.koikoi", "description": description, **expect})
    out["negative/index.json"] = _j(
        {"description": "each transcript has exactly one flaw, named by 'flaw'", "vectors": index}
    )

    # a verified abort: the receiver of the desynced move aborted with it as evidence
    def tamper(s: int, i: int, frame: bytes) -> list[bytes]:
        p = parse(frame)
        if p.type is MsgType.MOVE and p.seq == k:
            return [reforge(frame, fixed_key(SEED, p.seat), state_hash=bytes(32))]
        return [frame]

    ab = _pair(Settings(12, True), "complete")
    ab.tamper = tamper
    ab.run()
    aborted = bytes(ab.files[1 - km.seat])
    out["match_aborted.koikoi"] = aborted
    out["match_aborted.audit.json"] = _j(_report(aborted, "match_aborted.koikoi"))
    return out


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
