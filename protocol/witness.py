"""The relay as the clock's witness: silence certificates (spec/relay.md, spec/protocol.md).

Silence cannot be proven by the players' signatures alone, so the relay signs
what it saw: for one room, the hash of the last frame it received from each
seat, how long one seat (the *silent* seat) has sent nothing, and whether that
seat is connected. A TIMEOUT claim carries such a certificate; the players and
the auditor check it with :func:`open_certificate` and then against the
transcript (the protocol's part: the key both HELLOs bound, the hashes at the
end of the line, the seat awaited, the bound move time).

One encoding, one verifier, shared by the relay (which signs) and the match
protocol and auditor (which verify). This module imports only the framing and
libsodium (PyNaCl), so the relay may import it without the rest of the
protocol.

Certificate bytes::

    body  = msgpack [1, room str, silent_seat int, last0 bin, last1 bin, silent_ms int, connected bool]
    sig   = Ed25519(relay key, "koikoi/relay-certificate/v1\\0" ‖ body)
    blob  = msgpack [body bin, relay_public_key bin(32), sig bin(64)]

``last0``/``last1`` are :func:`frame_hash` of the last player frame the relay
received from seat 0/1 (the exact ``d`` bytes), or empty when it has received
none from that seat. ``silent_ms`` counts from the later of the last frame received from
the silent seat and the last received from the other seat (each, if it sent
none, from when it took its seat): how long the silent seat has been awaited.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

from nacl.bindings import crypto_sign_open
from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey

from .framing import FrameError, decode, encode

__all__ = [
    "CERT_CONTEXT",
    "CERT_VERSION",
    "CertificateError",
    "SilenceCertificate",
    "fingerprint",
    "frame_hash",
    "open_certificate",
    "sign_certificate",
]

CERT_VERSION = 1
CERT_CONTEXT = b"koikoi/relay-certificate/v1\x00"
_MSG_LABEL = b"koikoi/msg/v1\x00"
_FP_LABEL = b"koikoi/fingerprint/v1\x00"
_FP_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32: no I, L, O, U
_MAX_SILENT_MS = 2**32 - 1


def frame_hash(frame: bytes) -> bytes:
    """``SHA-256("koikoi/msg/v1\\0" ‖ frame)``: a player message's hash, which the relay computes
    over the opaque frame bytes without reading them."""
    return hashlib.sha256(_MSG_LABEL + frame).digest()


def fingerprint(public_key: bytes) -> str:
    """A short fingerprint to compare aloud: 80 bits of a labelled hash, as four groups of four
    Crockford base32 characters (``7KQM-2XHD-R4T9-WB0E``). The same for players' and relays' keys."""
    digest = hashlib.sha256(_FP_LABEL + public_key).digest()[:10]
    std = base64.b32encode(digest).decode()
    table = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", _FP_ALPHABET)
    s = std.translate(table)
    return "-".join(s[i : i + 4] for i in range(0, 16, 4))


class CertificateError(ValueError):
    """A certificate that is not well formed or not signed by the key it names (``bad_certificate``)."""

    code = "bad_certificate"

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class SilenceCertificate:
    """What the relay witnessed, as signed. ``relay_key`` is the signer's raw Ed25519 public key."""

    room: str
    silent_seat: int
    last_frame: tuple[bytes, bytes]
    silent_ms: int
    connected: bool
    relay_key: bytes

    @property
    def witness(self) -> str:
        """The relay key's fingerprint, as the auditor reports it."""
        return fingerprint(self.relay_key)


def _body(room: str, silent_seat: int, last_frame: tuple[bytes, bytes], silent_ms: int, connected: bool) -> bytes:
    return encode([CERT_VERSION, room, silent_seat, last_frame[0], last_frame[1], silent_ms, connected])


def sign_certificate(
    key: SigningKey, room: str, silent_seat: int, last_frame: tuple[bytes, bytes], silent_ms: int, connected: bool
) -> bytes:
    """The relay's signed certificate blob (see the module docstring for its bytes)."""
    if silent_seat not in (0, 1):
        raise ValueError("silent_seat must be 0 or 1")
    if any(len(h) not in (0, 32) for h in last_frame):
        raise ValueError("a last-frame hash is 32 bytes, or empty")
    silent_ms = max(0, min(int(silent_ms), _MAX_SILENT_MS))
    body = _body(room, silent_seat, last_frame, silent_ms, connected)
    sig = key.sign(CERT_CONTEXT + body).signature
    return encode([body, bytes(key.verify_key), sig])


def open_certificate(blob: bytes) -> SilenceCertificate:
    """Check a certificate's form and its signature by the key it carries; return what it says.

    Whether that key is the witness both players bound, and whether the
    certificate fits the transcript, is the caller's check. Raises
    :class:`CertificateError` naming what is wrong.
    """
    try:
        outer = decode(blob)
    except FrameError as e:
        raise CertificateError(f"the certificate is not a canonical frame ({e.code})") from None
    if (
        not isinstance(outer, list)
        or len(outer) != 3
        or not all(isinstance(x, bytes) for x in outer)
        or len(outer[1]) != 32
        or len(outer[2]) != 64
    ):
        raise CertificateError("the certificate is not [body, relay key (32 bytes), signature (64 bytes)]")
    body, relay_key, sig = outer
    try:
        crypto_sign_open(sig + CERT_CONTEXT + body, relay_key)
    except (BadSignatureError, ValueError, TypeError):
        raise CertificateError("the certificate is not signed by the relay key it names") from None
    try:
        fields = decode(body)
    except FrameError as e:  # signed, yet not canonical: the relay's own fault
        raise CertificateError(f"the certificate's body is not a canonical frame ({e.code})") from None
    if not isinstance(fields, list) or len(fields) != 7 or fields[0] != CERT_VERSION or isinstance(fields[0], bool):
        raise CertificateError("the certificate's body is not [1, room, seat, last0, last1, silent ms, connected]")
    _, room, seat, last0, last1, silent_ms, connected = fields
    ok = (
        isinstance(room, str)
        and 1 <= len(room) <= 64
        and type(seat) is int
        and seat in (0, 1)
        and isinstance(last0, bytes)
        and isinstance(last1, bytes)
        and len(last0) in (0, 32)
        and len(last1) in (0, 32)
        and type(silent_ms) is int
        and 0 <= silent_ms <= _MAX_SILENT_MS
        and isinstance(connected, bool)
    )
    if not ok:
        raise CertificateError("a field of the certificate's body has the wrong kind or range")
    return SilenceCertificate(room, seat, (last0, last1), silent_ms, connected, relay_key)
