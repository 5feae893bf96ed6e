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
from nacl.signing import SigningKey

from koikoi.engine import Settings
from koikoi.engine.actions import CHOOSE, from_code
from koikoi.engine.bots import make_bot
from koikoi.engine.deal import SeededDeal
from koikoi.protocol.audit import audit
from koikoi.protocol.framing import encode
from koikoi.protocol.messages import (
    PROTOCOL_VERSION,
    RULES_VERSION,
    SIG_TRAILER,
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
    private_bytes,
    public_bytes,
    resend_frame,
    session_id,
    settings_digest,
)
from koikoi.protocol.sealed_line import SealedSeat
from koikoi.protocol.session import Session
from koikoi.protocol.transcript import encode_transcript, parse_transcript
from koikoi.protocol.witness import sign_certificate
from koikoi.testing import Pair, Witness, fixed_key, reforge, seat_keys, witness_key

HERE = Path(__file__).resolve().parent
SEED = b"koikoi protocol vectors v1"
ROOM = "KQ7M3XWAT"
RELAY = witness_key(SEED)
RELAY_KEY = bytes(RELAY.verify_key)
SEAT_KEYS = seat_keys(SEED)
"""The player keys bound to the relay's seats (each proved its key when it took the seat)."""


def _nonce(label: str) -> bytes:
    return hashlib.sha256(b"koikoi/vector-nonce\x00" + label.encode()).digest()


def _pair(
    settings: Settings,
    label: str,
    *,
    join_rounds: int | None = None,
    join_room: str = ROOM,
    join_relay_key: bytes = RELAY_KEY,
    join_move_time: int | None = None,
    bots: tuple[str | None, str | None] = ("greedy", "random"),
    deck: str = "shared",
    watchers: bool | None = None,
    join_watchers: bool | None = None,
    publish: tuple[bool, bool] = (False, False),
) -> Pair:
    a = Session.create(
        fixed_key(SEED, 0),
        ROOM,
        settings,
        _nonce(label + "/0"),
        relay_key=RELAY_KEY,
        deck=deck,
        watchers=watchers,
        publish=publish[0],
    )
    b = Session.join(
        fixed_key(SEED, 1),
        join_room,
        _nonce(label + "/1"),
        rounds=join_rounds,
        move_time_s=join_move_time,
        relay_key=join_relay_key,
        watchers=join_watchers,
        publish=publish[1],
    )
    rng = random.Random(label)
    bot_objs = tuple(make_bot(n, random.Random(rng.random())) if n else None for n in bots)
    pair = Pair((a, b), (bot_objs[0], bot_objs[1]), witness=Witness(RELAY, ROOM, seat_keys=SEAT_KEYS))
    a.start()
    return pair


def _played(settings: Settings, label: str, deck: str = "shared", publish: tuple[bool, bool] = (False, False)) -> bytes:
    pair = _pair(settings, label, deck=deck, publish=publish)
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
    move_time_s, deck, relay_key = 120, "shared", bytes(32)  # every input of the session id is in the file
    watchers, publish = True, (False, True)
    digest = settings_digest(st)
    fields = [PROTOCOL_VERSION, RULES_VERSION, ROOM, digest, move_time_s, deck, watchers, *publish, relay_key]
    preimage = encode([*fields, pk0, pk1, n0, n1])
    sid = session_id(
        ROOM,
        st,
        (pk0, pk1),
        (n0, n1),
        move_time_s=move_time_s,
        relay_key=relay_key,
        deck=deck,
        watchers=watchers,
        publish=publish,
    )
    assert sid == hashlib.sha256(b"koikoi/session/v3\x00" + preimage).digest()
    v0, v1 = commit_value(k0, sid, 0), commit_value(k1, sid, 1)
    seed = match_seed(sid, v0, v1)
    from koikoi.engine.match import choose_first_dealer

    first, turned = choose_first_dealer(SeededDeal(seed))
    out["commit_reveal.json"] = _j(
        {
            "description": "session id, commit-reveal and the match seed, with fixed keys and nonces; "
            "session_id = SHA-256(b'koikoi/session/v3\\x00' || session_id_preimage), the preimage being "
            "msgpack([protocol_version, rules_version, room, settings_digest, move_time_s, deck, watchers, "
            "creator_publish, joiner_publish, relay_key, creator_public_key, joiner_public_key, creator_nonce, "
            "joiner_nonce])",
            "protocol_version": PROTOCOL_VERSION,
            "rules_version": RULES_VERSION,
            "room": ROOM,
            "settings": {"rounds": st.rounds, "double_at_8": st.double_at_8},
            "settings_digest_hex": digest.hex(),
            "move_time_s": move_time_s,
            "deck": deck,
            "watchers": watchers,
            "creator_publish": publish[0],
            "joiner_publish": publish[1],
            "relay_key_hex": relay_key.hex(),
            "creator_private_key_hex": private_bytes(k0).hex(),
            "joiner_private_key_hex": private_bytes(k1).hex(),
            "creator_public_key_hex": pk0.hex(),
            "joiner_public_key_hex": pk1.hex(),
            "creator_fingerprint": fingerprint(pk0),
            "joiner_fingerprint": fingerprint(pk1),
            "creator_nonce_hex": n0.hex(),
            "joiner_nonce_hex": n1.hex(),
            "session_id_preimage_hex": preimage.hex(),
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
    complete = _played(Settings(12, True), "complete", publish=(True, False))
    out["match_complete.koikoi"] = complete
    out["match_complete.audit.json"] = _j(_report(complete, "match_complete.koikoi"))
    # a whole sealed match (spec/protocol.md §14, spec/sealed-line.md): every deal step, key and disclosure
    sealed = _played(Settings(6, True), "sealed", deck="sealed")
    out["match_sealed.koikoi"] = sealed
    out["match_sealed.audit.json"] = _j(_report(sealed, "match_sealed.koikoi"))
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
    bad_reveal = reforge(frames[4], fixed_key(SEED, 0), value=bytes(32))
    neg(
        "commitment_mismatch",
        "commitment_mismatch",
        [*frames[:4], bad_reveal],
        {"code": "commitment_mismatch", "seq": 4},
        "the REVEAL re-signed by the creator with a value that does not open its commitment",
    )
    # a commitment from another session: the same creator, another session's COMMIT
    other = _played(Settings(12, True), "other session")
    other_commit = parse_transcript(other).frames[2]
    neg(
        "commitment_other_session",
        "replay",
        [*frames[:2], other_commit],
        {"code": "replay", "seq": 2},
        "the creator's COMMIT taken from another session (same key): it carries that session's id",
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
        {"code": "settings_mismatch", "status": "abandoned", "message": "rounds: creator 12, joiner 6"},
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

    ab = _pair(Settings(12, True), "complete", publish=(True, False))  # the complete match, until move k
    ab.tamper = tamper
    ab.run()
    aborted = bytes(ab.files[1 - km.seat])
    out["match_forfeit.koikoi"] = aborted
    out["match_forfeit.audit.json"] = _j(_report(aborted, "match_forfeit.koikoi"))
    out.update(_messages(frames))
    out.update(_endings())
    return out


def _messages(frames: list[bytes]) -> dict[str, bytes]:
    """Three messages byte for byte: a HELLO (with its signed bytes), RESEND frames, a TIMEOUT with its
    certificate."""
    out: dict[str, bytes] = {}
    hello = parse(frames[0])
    out["hello.json"] = _j(
        {
            "description": f"the creator's HELLO: [{PROTOCOL_VERSION}, 1, b'', 0, zero hash, 0, rules_version, "
            "room, rounds, double_at_8, move_time_s, deck, relay_key, public_key, nonce, watchers, publish, sig]; "
            "sig = Ed25519(context || frame[:-66]), verified with the public_key inside it",
            "fields": {
                "rules_version": hello.body[0],
                "room": hello.body[1],
                "rounds": hello.body[2],
                "double_at_8": hello.body[3],
                "move_time_s": hello.body[4],
                "deck": hello.body[5],
                "relay_key_hex": hello.body[6].hex(),
                "public_key_hex": hello.body[7].hex(),
                "nonce_hex": hello.body[8].hex(),
                "watchers": hello.body[9],
                "publish": hello.body[10],
            },
            "private_key_hex": private_bytes(fixed_key(SEED, 0)).hex(),
            "context": context(MsgType.HELLO).decode(),
            "signed_bytes_hex": (context(MsgType.HELLO) + hello.frame[:-66]).hex(),
            "signature_hex": hello.sig.hex(),
            "frame_hex": hello.frame.hex(),
            "message_hash_hex": msg_hash(hello.frame).hex(),
        }
    )
    sid = parse(frames[2]).match
    out["resend.json"] = _j(
        {
            "description": f"the unsigned RESEND control frame: msgpack [{PROTOCOL_VERSION}, 0, MATCH, from_seq]; "
            "never a message of the line, never in a transcript",
            "vectors": [
                {
                    "match_hex": m.hex(),
                    "from_seq": q,
                    "frame_hex": resend_frame(m, q).hex(),
                    "frame_hash_hex": msg_hash(resend_frame(m, q)).hex(),
                }
                for m, q in ((b"", 0), (b"", 1), (sid, 7), (sid, 300))
            ],
        }
    )
    # a TIMEOUT claimed after seat 1 went silent at sequence 20 of the complete match's line
    line = frames[:20]
    seat1_last = [f for f in line if parse(f).seat == 1][-1]
    seat0_last = [f for f in line if parse(f).seat == 0][-1]
    waiting = parse(frames[20]).seat
    claimer = 1 - waiting
    last = (msg_hash(seat0_last), msg_hash(seat1_last))
    # the claimer's messages after the silent seat's last one: the relay forwarded them (§7.3, step 6b)
    since = max(i for i, f in enumerate(line) if parse(f).seat == waiting)
    recent = [msg_hash(f) for f in line[since + 1 :]]
    cert = sign_certificate(RELAY, ROOM, waiting, last, 125_000, True, recent, SEAT_KEYS)
    tkey = fixed_key(SEED, claimer)
    t = build(tkey, MsgType.TIMEOUT, sid, 20, msg_hash(line[-1]), claimer, [cert, b""])
    out["timeout.json"] = _j(
        {
            "description": f"a TIMEOUT: [{PROTOCOL_VERSION}, 8, MATCH, SEQ, PREV, SEAT, certificate, "
            "silent_frame, sig]; "
            "the certificate is the relay's signed blob (protocol/witness.py, spec/relay.md); silent_frame is "
            "empty unless the silent seat's last frame was junk (spec/protocol.md §7)",
            "relay_private_seed_hex": bytes(RELAY).hex(),
            "relay_public_key_hex": RELAY_KEY.hex(),
            "certificate": {
                "room": ROOM,
                "silent_seat": waiting,
                "last0_hex": last[0].hex(),
                "last1_hex": last[1].hex(),
                "silent_ms": 125_000,
                "connected": True,
                "recent_hex": [h.hex() for h in recent],
                "blob_hex": cert.hex(),
            },
            "claimer": claimer,
            "seq": 20,
            "frame_hex": t.hex(),
        }
    )
    return out


def _run_until(pair: Pair, pred: Any) -> None:
    for _ in range(100_000):
        if pred():
            return
        if not pair.step():
            break
    assert pred(), "never reached"


def _settled(pair: Pair, after: int) -> Pair:
    """Play until both lines hold at least ``after`` messages and nothing is in transit."""
    _run_until(pair, lambda: min(s.referee.next_seq for s in pair.sessions) >= after and not any(pair.queues))
    return pair


def _endings() -> dict[str, bytes]:
    """Transcripts for every way a match ends (each from the honest side's file), with the audit's verdict."""
    cases: dict[str, tuple[str, bytes]] = {}
    st = Settings(6, True)
    k0, k1 = fixed_key(SEED, 0), fixed_key(SEED, 1)

    # resigned: seat 1 resigns mid-match
    p = _settled(_pair(st, "end/resign"), 12)
    p.sessions[1].resign()
    p.run()
    cases["resigned"] = ("seat 1 resigns after sequence 11", bytes(p.files[0]))

    # on time: seat 1 stops moving; seat 0 asks the relay (the witness) and claims with its certificate
    p = _pair(st, "end/on_time", bots=("greedy", None))
    p.run()
    cases["on_time"] = ("seat 1 stops moving; seat 0's TIMEOUT carries the relay's certificate", bytes(p.files[0]))

    # junk, then silence: seat 1 sends a frame with a broken signature and nothing more; seat 0 cites it
    p = _pair(st, "end/junk", bots=("greedy", None))
    _run_until(p, lambda: p.sessions[1].referee.match is not None and p.sessions[1].my_turn and not any(p.queues))
    s1 = p.sessions[1]
    legal = s1.view().legal_actions[0]
    s1.play(legal)
    mine = s1.frames_to_send()
    junk = mine[0][:-1] + bytes([mine[0][-1] ^ 1])
    p.silent[1] = True
    assert p.witness is not None
    p.witness.saw(1, junk, p.now)
    p.queues[0].append(junk)
    p.run()
    cases["on_time_after_junk"] = (
        "seat 1 sends a frame with a broken signature, then nothing: seat 0's TIMEOUT cites it",
        bytes(p.files[0]),
    )

    # refusing to reveal: the creator never sends its REVEAL: a loss on time
    p = _pair(st, "end/no_reveal")
    _run_until(p, lambda: p.sessions[1].referee.next_seq >= 3)
    p.silent[0] = True
    p.run()
    cases["no_reveal_on_time"] = ("the creator never reveals: the joiner wins on time", bytes(p.files[1]))

    # forfeit by equivocation: seat 1 signs two different moves for one sequence number
    p = _settled(_pair(st, "end/equivocation"), 10)
    s1 = p.sessions[1]
    _run_until(p, lambda: s1.my_turn)
    bot = p.bots[1]
    assert bot is not None
    s1.play(bot.choose(s1.view()))
    p.flush(1)
    first = p.queues[0][-1]
    p.queues[0].append(reforge(first, k1, state_hash=bytes(32)))
    p.run()
    cases["equivocation"] = ("seat 1 signs two different moves for one sequence number", bytes(p.files[0]))

    # an ABORT citing the aborter's own message: proves nothing, so it is the aborter's resignation
    p = _settled(_pair(st, "end/self_abort"), 10)
    r = p.sessions[1].referee
    own = r.last_of(1)
    assert own is not None
    lie = build(k1, MsgType.ABORT, r.sid or b"", r.next_seq, r.head_hash, 1, ["desync", "made up", own.frame, b""])
    p.queues[0].append(lie)
    p.run()
    cases["self_evidence_abort"] = ("seat 1 aborts citing its own move as a desync", bytes(p.files[0]))

    # false timeouts by seat 0 while seat 1 is to move: no, a forged, a stale, a foreign, an early certificate
    def waiting_for_1(label: str) -> Pair:
        q = _settled(_pair(st, label), 8)
        _run_until(q, lambda: q.sessions[1].my_turn and not any(q.queues))
        return q

    p = waiting_for_1("end/stale")
    stale = p.witness.certify(1, p.now + 500) if p.witness else b""  # seat 1's last frame then ...
    _run_until(p, lambda: p.sessions[0].referee.next_seq >= 14 and p.sessions[1].my_turn and not any(p.queues))
    other = SigningKey(hashlib.sha256(b"another relay").digest())
    r0 = p.sessions[0].referee
    last = tuple(msg_hash(m.frame) if (m := r0.last_of(s)) is not None else b"" for s in (0, 1))
    since = max(i for i, m in enumerate(r0.msgs) if m.seat == 1)
    sent = [m.hash for m in r0.msgs[since + 1 :]]  # seat 0's messages seat 1 awaits: the relay forwarded them
    claims = {
        "false_timeout_none": ("no certificate at all", b""),
        "false_timeout_forged": (
            "a certificate whose signature does not verify",
            _flip(sign_certificate(RELAY, ROOM, 1, (last[0], last[1]), 500_000, True, sent, SEAT_KEYS)),
        ),
        "false_timeout_stale": ("a genuine certificate from earlier in the match", stale),
        "false_timeout_foreign": (
            "a certificate signed by another relay",
            sign_certificate(other, ROOM, 1, (last[0], last[1]), 500_000, True, sent, SEAT_KEYS),
        ),
        "false_timeout_early": (
            "a genuine certificate, but seat 1 was silent only 3 s",
            sign_certificate(RELAY, ROOM, 1, (last[0], last[1]), 3_000, True, sent, SEAT_KEYS),
        ),
        "false_timeout_other_holder": (
            "a genuine certificate, but the relay's seat 1 was held by another player's key (spec/protocol.md §7.3,"
            " step 3)",
            sign_certificate(
                RELAY,
                ROOM,
                1,
                (last[0], last[1]),
                500_000,
                True,
                sent,
                (SEAT_KEYS[0], public_bytes(fixed_key(SEED, 7))),
            ),
        ),
    }
    base = [bytes(f) for f in parse_transcript(bytes(p.files[1])).frames]
    for name, (what, blob) in claims.items():
        t = build(k0, MsgType.TIMEOUT, r0.sid or b"", r0.next_seq, r0.head_hash, 0, [blob, b""])
        cases[name] = (f"seat 0 claims a timeout with {what}: its resignation", encode_transcript([*base, t]))

    # a body off its schema is its signer's proven fault, by the one message (spec/protocol.md §2.2, §6.2):
    # seat 1's first draw key in a sealed match, 31 bytes, then zero
    for name, bad, what in (
        ("bad_shape_draw_key", b"\x07" * 31, "a 31-byte draw key (bad_shape)"),
        ("bad_scalar_draw_key", bytes(32), "a zero draw key (bad_scalar)"),
    ):
        p = _pair(st, "end/" + name, deck="sealed")
        changed: list[bool] = []

        def forge(seat: int, i: int, frame: bytes, bad: bytes = bad, changed: list[bool] = changed) -> list[bytes]:
            if seat == 1 and not changed and parse_resend(frame) is None and parse(frame).type is MsgType.DRAW:
                changed.append(True)
                m = parse(frame)
                return [build(k1, MsgType.DRAW, m.match, m.seq, m.prev, 1, [bad])]
            return [frame]

        p.tamper = forge
        p.run()
        cases[name] = (f"seat 1 sends {what}: seat 0 aborts citing it, a forfeit", bytes(p.files[0]))

    # a stop that supersedes the honest seat's draw key and next move, then the honest seat's DISCLOSE at the
    # next SEQ: an ABORT for equivocation citing that move and that DISCLOSE proves nothing (they follow
    # different messages: they answer two lines), so the forger's own file is its resignation
    p = _pair(st, "end/superseded", deck="sealed", bots=("greedy", "greedy"))
    h, c = p.sessions

    def c_just_played() -> bool:
        last = c.referee.msgs[-1] if c.referee.msgs else None
        return last is not None and last.seat == 1 and last.type is MsgType.MOVE and bool(last.body[2])

    _run_until(p, lambda: c_just_played() and bool(p.queues[0]))
    while p.queues[0]:
        p.receive_one(0)  # the honest seat takes the play and answers it with its draw key ...
    if h.my_turn:
        bot = p.bots[0]
        assert bot is not None
        p.note(0, h.play(bot.choose(h.view())))  # ... and its own next move, in one hop
    p.flush(0)
    held = list(p.queues[1])  # the honest seat's draw key and move, never delivered to the cheater
    p.queues[1].clear()
    gone = [parse(f) for f in held if parse_resend(f) is None]
    assert [m.type for m in gone] == [MsgType.DRAW, MsgType.MOVE], [m.type for m in gone]
    sl = c.referee.sealed
    assert isinstance(sl, SealedSeat)
    sl._stop("the vector's cheater stops the round")  # a stop: its DISCLOSE takes the draw key's place
    events: list[Any] = []
    c._advance(events)
    p.note(1, events)
    p.flush(1)
    while p.queues[0]:
        p.receive_one(0)  # the stop supersedes the draw key and the move; the honest seat discloses
    p.flush(0)
    disclose = next(f for f in p.queues[1] if parse_resend(f) is None and parse(f).type is MsgType.DISCLOSE)
    p.queues[1].clear()
    c.receive(disclose)
    move = gone[1]
    assert parse(disclose).seq == move.seq and parse(disclose).prev != move.prev
    cheater_line = [bytes(f) for f in parse_transcript(bytes(p.files[1])).frames]
    for rec in c.records():
        cheater_line.append(rec.frame)
    tip = parse(cheater_line[-1])
    abort = build(
        k1,
        MsgType.ABORT,
        tip.match,
        tip.seq + 1,
        tip.hash,
        1,
        ["equivocation", f"seat 0 signed two messages for sequence {move.seq}", move.frame, disclose],
    )
    cases["superseded_equivocation"] = (
        "seat 1 stops across seat 0's draw key and move, then aborts for equivocation citing that move and seat "
        "0's DISCLOSE at the same SEQ (they follow different messages): its own file is its resignation",
        encode_transcript([*cheater_line, abort]),
    )

    # the RESULT phase: the engine's winner resigns instead of countersigning; the resigner loses
    p = _pair(st, "end/result_phase")
    p.run()
    ended = p.sessions[0].match
    assert ended is not None and ended.winner is not None
    w = ended.winner
    frames = [bytes(f) for f in parse_transcript(bytes(p.files[1 - w])).frames]
    at = next(i for i, f in enumerate(frames) if (x := parse(f)).type is MsgType.RESULT and x.seat == w)
    head = parse(frames[at - 1])
    resign = build(fixed_key(SEED, w), MsgType.RESIGN, head.match, at, head.hash, w, [])
    cases["resigned_in_result_phase"] = (
        f"the engine's winner (seat {w}) resigns instead of its RESULT: the resigner loses, whatever the points",
        encode_transcript([*frames[:at], resign]),
    )

    # the HELLOs disagree: abandoned, no loser
    for name, kw, what in (
        ("room_mismatch", {"join_room": "OTHERROOM"}, "the joiner was seated in another room"),
        ("relay_mismatch", {"join_relay_key": hashlib.sha256(b"other relay").digest()}, "the joiner saw another relay"),
        ("settings_mismatch", {"join_move_time": 30}, "the joiner expects 30 s a move, the room has 120"),
        (
            "settings_mismatch_watchers",
            {"watchers": True, "join_watchers": False},
            "the room allows watchers, the joiner expects none",
        ),
    ):
        p = _pair(st, "end/" + name, **kw)
        p.run()
        cases[name] = (what, bytes(p.files[0]))

    out: dict[str, bytes] = {}
    index = []
    for name, (description, data) in cases.items():
        rep = _report(data, f"{name}.koikoi")
        out[f"endings/{name}.koikoi"] = data
        index.append(
            {
                "name": name,
                "file": f"endings/{name}.koikoi",
                "description": description,
                "status": rep["status"],
                "winner": rep["result"]["winner"],
                "ending": rep["ending"],
            }
        )
    out["endings/index.json"] = _j({"description": "valid transcripts, one per way a match ends", "vectors": index})
    return out


def _flip(blob: bytes) -> bytes:
    return blob[:-1] + bytes([blob[-1] ^ 1])


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
