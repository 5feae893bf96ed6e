"""Generate spec/vectors/relay/certificate.json: relay silence certificates and seat proofs (spec/relay.md).

    python spec/vectors/relay/generate.py           # write the file
    python spec/vectors/relay/generate.py --check   # exit 1 if the file differs from what this makes

Ed25519 signatures are deterministic, so with the fixed seed below the body, the signature and the blob
are exact bytes an outside verifier can compare."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from nacl.signing import SigningKey

from koikoi.protocol.framing import decode
from koikoi.protocol.witness import (
    CERT_CONTEXT,
    SEAT_CONTEXT,
    fingerprint,
    frame_hash,
    seat_claim,
    seat_proof_ok,
    sign_certificate,
)

HERE = Path(__file__).resolve().parent
SEED = bytes(range(32))
PLAYER_SEEDS = (bytes([0xA0 + i for i in range(32)]), bytes([0xC0 + i for i in range(32)]))
"""The Ed25519 seeds of two players' keys (seat 0, seat 1): never use them for real play."""


def _h(label: str) -> bytes:
    """A stand-in frame's hash: frame_hash of the label's bytes."""
    return frame_hash(label.encode())


def make() -> str:
    key = SigningKey(SEED)
    players = [SigningKey(s) for s in PLAYER_SEEDS]
    pk = (bytes(players[0].verify_key), bytes(players[1].verify_key))
    cases = [
        ("silence while connected", "K7M4TQXWA", 1, (_h("seat 0: last move"), _h("seat 1: last move")), 125_000,
         True, [_h("seat 0: play"), _h("seat 0: resend 31"), _h("seat 0: last move")]),
        ("opponent left, nothing sent yet", "H3C9R", 1, (_h("seat 0: hello"), b""), 240_250, False,
         [_h("seat 0: hello")]),
        ("seat 0 silent, claimer sent nothing", "AE4CA", 0, (_h("seat 0: last move"), b""), 3_000, True, []),
    ]  # fmt: skip
    vectors = []
    for name, room, seat, last, ms, connected, recent in cases:
        blob = sign_certificate(key, room, seat, last, ms, connected, recent, pk)
        body, _, sig = decode(blob)
        vectors.append(
            {
                "name": name,
                "fields": {
                    "room": room,
                    "silent_seat": seat,
                    "last_frame_0": last[0].hex(),
                    "last_frame_1": last[1].hex(),
                    "silent_ms": ms,
                    "connected": connected,
                    "recent": [h.hex() for h in recent],
                    "seat_keys": [k.hex() for k in pk],
                },
                "body": body.hex(),
                "signature": sig.hex(),
                "blob": blob.hex(),
            }
        )
    proofs = []
    for i, player in enumerate(players):
        nonce = frame_hash(f"connection {i + 1}".encode())  # any 32 bytes the relay announced
        claim = seat_claim(bytes(key.verify_key), nonce)
        proof = player.sign(claim).signature
        assert seat_proof_ok(pk[i], proof, bytes(key.verify_key), nonce)
        proofs.append(
            {
                "player_seed": PLAYER_SEEDS[i].hex(),
                "player_key": pk[i].hex(),
                "relay_key": bytes(key.verify_key).hex(),
                "nonce": nonce.hex(),
                "claim": claim.hex(),
                "proof": proof.hex(),
            }
        )
    doc = {
        "about": "Relay silence certificates, version 3, and seat proofs (spec/relay.md, koikoi.protocol.witness; "
        "made by generate.py here). The signing key is the Ed25519 seed below (never use it for a real relay); "
        "Ed25519 signatures are deterministic, so body, signature and blob are exact. last_frame_N is "
        "frame_hash(d) of the last new witnessed frame from seat N (empty: none); recent lists frame_hash of the "
        "claimer's (1 - silent_seat) last distinct frames, flagged or not, least recent first; seat_keys are the "
        "player keys that proved seat 0 and seat 1 (the seat_proofs below). The frames here are stand-ins: "
        "frame_hash of short labels. A seat proof is the player's Ed25519 signature of claim = seat_context ‖ "
        "relay key ‖ nonce, the nonce being the one the relay announced on that connection.",
        "seed": SEED.hex(),
        "public_key": bytes(key.verify_key).hex(),
        "fingerprint": fingerprint(bytes(key.verify_key)),
        "context": CERT_CONTEXT.hex(),
        "vectors": vectors,
        "seat_context": SEAT_CONTEXT.hex(),
        "seat_proofs": proofs,
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    path = HERE / "certificate.json"
    text = make()
    if "--check" in argv:
        if path.read_text() != text:
            print(f"differs: {path.name}")
            return 1
        return 0
    path.write_text(text)
    print(f"wrote {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
