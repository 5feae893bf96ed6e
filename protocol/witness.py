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

    body  = msgpack [3, room str, silent_seat int, last0 bin, last1 bin, silent_ms int, connected bool,
                     recent [bin(32), ...], key0 bin(32), key1 bin(32)]
    sig   = Ed25519(relay key, "koikoi/relay-certificate/v3\\0" ‖ body)
    blob  = msgpack [body bin, relay_public_key bin(32), sig bin(64)]

``key0``/``key1`` are the players' Ed25519 public keys that hold seat 0/1 at the relay: each seat proved
its key when it took the seat (``create``/``join``/``resume`` carry the key and a signature over the
relay's key and the connection's nonce, :func:`seat_proof`), and the seat stays bound to it, so every
frame the witness counted for a seat came from a connection that proved that key. The match protocol
checks both against the keys the HELLOs bind: a certificate about a seat someone else held never fits.

``last0``/``last1`` are :func:`frame_hash` of the last *new* witnessed player
frame the relay received from seat 0/1 (the exact ``d`` bytes), or empty when it
has received none from that seat. ``recent`` lists the :func:`frame_hash` of the *other* seat's (the
claimer's) last ``RECENT_HASHES`` distinct frames, flagged or not, most recent last: the claimer's
messages the silent seat awaits answers to must be among them, or the relay never forwarded them (a
fork the claimer signed but never sent). ``silent_ms`` is :func:`silent_ms` over what
the witness recorded (:class:`SeatClock`, :func:`witness_frame`): how long the
silent seat has been awaited — from the later of the two seats' last new
frames, moved on by the silent seat's requests to send again (``ctl`` frames,
at most ``EXTENSION_MOVES`` move times in all), and 0 while a request of the
silent seat has gone unanswered (no frame from the other seat) for half the move
time. The relay (``relay/core.py``) and the in-memory harness's witness both
keep time with these functions, so they cannot differ.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from nacl.bindings import crypto_sign_open
from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey

from ..errors import RemoteError
from .framing import FrameError, decode, encode

__all__ = [
    "CERT_CONTEXT",
    "CERT_VERSION",
    "COPY_BYTES",
    "EXTENSION_MOVES",
    "NONCE_BYTES",
    "RECENT_HASHES",
    "SEAT_CONTEXT",
    "SEEN_HASHES",
    "CertificateError",
    "SeatClock",
    "SilenceCertificate",
    "fingerprint",
    "frame_hash",
    "open_certificate",
    "seat_claim",
    "seat_proof_ok",
    "sign_certificate",
    "sign_seat_proof",
    "silent_ms",
    "witness_frame",
]

CERT_VERSION = 3
CERT_CONTEXT = b"koikoi/relay-certificate/v3\x00"
SEAT_CONTEXT = b"koikoi/relay-seat/v1\x00"
"""The context of a seat proof: a player signs ``SEAT_CONTEXT ‖ relay key ‖ nonce`` with its own key."""
NONCE_BYTES = 32
_MSG_LABEL = b"koikoi/msg/v1\x00"
_FP_LABEL = b"koikoi/fingerprint/v1\x00"
_FP_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32: no I, L, O, U
_MAX_SILENT_MS = 2**32 - 1
SEEN_HASHES = 4096
"""Per seat, how many frame hashes the witness remembers to tell a repeat from a new frame."""
RECENT_HASHES = 32
"""Per seat, how many of its last distinct frames (flagged or not) a certificate lists for the claimer."""
COPY_BYTES = 64 * 1024
"""At most this many bytes of one seat's frames the relay keeps copies of (``SeatClock.copies``)."""
EXTENSION_MOVES = 2
"""Requests to send again (``ctl`` frames) move an awaited seat's silence on by at most this many move times."""


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


class CertificateError(RemoteError, ValueError):
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
    recent: frozenset[bytes] = frozenset()
    """The claimer's (``1 - silent_seat``) last distinct frames the relay received, as hashes."""
    seat_keys: tuple[bytes, bytes] = (b"", b"")
    """The players' public keys bound to seat 0 and seat 1 at the relay (each seat proved its key)."""

    @property
    def witness(self) -> str:
        """The relay key's fingerprint, as the auditor reports it."""
        return fingerprint(self.relay_key)


def sign_certificate(
    key: SigningKey,
    room: str,
    silent_seat: int,
    last_frame: tuple[bytes, bytes],
    silent_ms: int,
    connected: bool,
    recent: Sequence[bytes] = (),
    seat_keys: tuple[bytes, bytes] = (b"", b""),
) -> bytes:
    """The relay's signed certificate blob (see the module docstring for its bytes). ``recent``: the
    claimer's last distinct frames' hashes (:attr:`SeatClock.recent`); ``seat_keys``: the player keys seat 0
    and seat 1 proved (empty: none bound, which no claim accepts)."""
    if silent_seat not in (0, 1):
        raise ValueError("silent_seat must be 0 or 1")
    if any(len(h) not in (0, 32) for h in last_frame):
        raise ValueError("a last-frame hash is 32 bytes, or empty")
    if len(recent) > RECENT_HASHES or any(len(h) != 32 for h in recent):
        raise ValueError(f"recent lists at most {RECENT_HASHES} hashes of 32 bytes")
    if any(len(k) not in (0, 32) for k in seat_keys):
        raise ValueError("a seat key is 32 bytes, or empty")
    silent_ms = max(0, min(int(silent_ms), _MAX_SILENT_MS))
    body = encode(
        [
            CERT_VERSION,
            room,
            silent_seat,
            last_frame[0],
            last_frame[1],
            silent_ms,
            connected,
            list(recent),
            seat_keys[0],
            seat_keys[1],
        ]
    )
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
    if isinstance(fields, list) and fields and type(fields[0]) is int and fields[0] != CERT_VERSION:
        raise CertificateError(f"the certificate is of version {fields[0]}, not {CERT_VERSION}")
    if not isinstance(fields, list) or len(fields) != 10 or type(fields[0]) is not int:
        raise CertificateError(
            "the certificate's body is not [3, room, seat, last0, last1, silent ms, connected, recent, key0, key1]"
        )
    _, room, seat, last0, last1, silent_ms, connected, recent, key0, key1 = fields
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
        and isinstance(recent, list)
        and len(recent) <= RECENT_HASHES
        and all(isinstance(h, bytes) and len(h) == 32 for h in recent)
        and isinstance(key0, bytes)
        and isinstance(key1, bytes)
        and len(key0) in (0, 32)
        and len(key1) in (0, 32)
    )
    if not ok:
        raise CertificateError("a field of the certificate's body has the wrong kind or range")
    return SilenceCertificate(
        room, seat, (last0, last1), silent_ms, connected, relay_key, frozenset(recent), (key0, key1)
    )


def seat_claim(relay_key: bytes, nonce: bytes) -> bytes:
    """What a player signs to take a seat on one connection: ``SEAT_CONTEXT ‖ relay key (32) ‖ nonce (32)``,
    the nonce being the one the relay announced on that connection (so a proof is good on no other)."""
    return SEAT_CONTEXT + relay_key + nonce


def sign_seat_proof(key: SigningKey, relay_key: bytes, nonce: bytes) -> bytes:
    """``key``'s seat proof for one connection (64 bytes): its Ed25519 signature of :func:`seat_claim`."""
    return key.sign(seat_claim(relay_key, nonce)).signature


def seat_proof_ok(player_key: object, proof: object, relay_key: bytes, nonce: bytes) -> bool:
    """Whether ``proof`` is ``player_key``'s Ed25519 signature of :func:`seat_claim` (libsodium's
    verification: canonical signatures, no small-order keys)."""
    if type(player_key) is not bytes or len(player_key) != 32 or type(proof) is not bytes or len(proof) != 64:
        return False
    try:
        crypto_sign_open(proof + seat_claim(relay_key, nonce), player_key)
    except (BadSignatureError, ValueError, TypeError):
        return False
    return True


@dataclass(eq=False)
class SeatClock:
    """What the witness keeps about one seat's timing (spec/relay.md "What the witness records")."""

    seated_at: float = 0.0
    """When the seat was taken (created, joined, or rebuilt after a restart)."""
    last_at: float | None = None
    """When the last *new* witnessed frame arrived from this seat (None: none yet)."""
    last_hash: bytes = b""
    """:func:`frame_hash` of that frame (empty: none yet)."""
    copies: dict[bytes, bytes] = field(default_factory=dict)
    """Copies of this seat's last distinct frames, flagged or not, by hash, least recent first (a repeat moves
    to the end), at most ``RECENT_HASHES`` and ``COPY_BYTES`` in all, when the caller gives the bytes (the relay
    does): a seat that resumes gets them back, so a transcript that lost its tail takes back the messages it
    lost (spec/protocol.md §8)."""
    copies_bytes: int = 0
    seen: dict[bytes, None] = field(default_factory=dict)
    """Hashes of this seat's recent witnessed frames (insertion-ordered, at most ``SEEN_HASHES``): a repeat is
    not news."""
    recent: dict[bytes, None] = field(default_factory=dict)
    """Hashes of this seat's last ``RECENT_HASHES`` distinct frames, flagged or not, least recently received
    first (a repeat moves to the end): what a certificate for this seat's claim lists."""
    ask_at: float | None = None
    """When this seat last sent a ``ctl`` frame (a request to send again)."""
    open_ask_at: float | None = None
    """When this seat's first ``ctl`` frame since the other seat's last witnessed frame arrived (None: its
    requests, if any, have been answered)."""

    def forget(self) -> None:
        """The seat is freed (a silent joiner removed): nothing of its frames counts any more."""
        self.last_at, self.last_hash, self.ask_at, self.open_ask_at = None, b"", None, None
        self.copies.clear()
        self.copies_bytes = 0
        self.seen.clear()
        self.recent.clear()


def witness_frame(
    me: SeatClock, other: SeatClock, h: bytes, now: float, *, ctl: bool = False, frame: bytes | None = None
) -> None:
    """Record a frame received in order from seat ``me``: ``h`` its :func:`frame_hash`; ``ctl``: sent with the
    control flag; ``frame``: its bytes, kept among the seat's ``copies``. Every
    frame goes to the seat's ``recent`` (most recent last). A ``ctl`` frame is a request
    to send again: never news, and the seat's last frame only when it has none yet. A witnessed
    frame answers the other seat's open request when it is new or a repeat of the seat's last new frame (a
    re-delivery of what the asker awaits; a repeat of an older one withholds it: no answer); only a new one (not
    among the seat's last ``SEEN_HASHES``) becomes the seat's last frame — whoever signed it: an honest client
    sends without the flag only its own newest message (or its ENDED), every other frame (an answer with the
    other seat's messages in it) flagged, so a seat whose last frame is the other seat's message sent it so
    itself, and a claim cites it as junk (spec/protocol.md §7.3 step 6)."""
    me.recent.pop(h, None)
    me.recent[h] = None
    if len(me.recent) > RECENT_HASHES:
        del me.recent[next(iter(me.recent))]
    if frame is not None:
        me.copies_bytes -= len(me.copies.pop(h, b""))
        me.copies[h] = frame
        me.copies_bytes += len(frame)
        while len(me.copies) > RECENT_HASHES or me.copies_bytes > COPY_BYTES:
            me.copies_bytes -= len(me.copies.pop(next(iter(me.copies))))
    if ctl:
        me.ask_at = now
        if me.open_ask_at is None:
            me.open_ask_at = now
        if not me.last_hash:
            # a seat whose first frame is flagged (an honest seat's first frame is its HELLO, unflagged) still
            # gets a last frame: else a seat that flags every frame would never be named, and no claim of its
            # silence could fit (tests/adversary/test_adversary_attack_all_flagged_host.py)
            me.seen[h] = None
            me.last_hash = h
            me.last_at = now
        return
    if h in me.seen:
        if h == me.last_hash:  # a re-delivery of the seat's last message answers the other's request;
            other.open_ask_at = None  # an older one does not (it withholds what the asker awaits)
        return
    other.open_ask_at = None
    me.seen[h] = None
    if len(me.seen) > SEEN_HASHES:
        del me.seen[next(iter(me.seen))]
    me.last_hash = h
    me.last_at = now


def silent_ms(silent: SeatClock, other: SeatClock, now: float, move_time_s: int | None) -> int:
    """How long seat ``silent`` has been awaited and silent, in ms, as the certificate states it.

    From ``base``, the later of the two seats' last new frames (each, when it has sent none, from when it took
    its seat: a seat is awaited once the other has spoken, so the other's thinking time never counts). With
    a clock (``move_time_s`` > 0): a request to send again from the silent seat after ``base`` (it has not
    got the frame it awaits: the network, the relay or a crash lost it) moves the start on to that request,
    but never past ``base + EXTENSION_MOVES × move time`` (so asking for ever cannot stall a match); and a
    request that has had no answer at all from the other seat for half the move time means the silent seat
    is waiting for the other, not the other way round: 0."""
    base = max(
        silent.last_at if silent.last_at is not None else silent.seated_at,
        other.last_at if other.last_at is not None else other.seated_at,
    )
    since = base
    if move_time_s:
        if silent.open_ask_at is not None and now - silent.open_ask_at >= move_time_s / 2:
            return 0
        if silent.ask_at is not None and silent.ask_at > base:
            since = min(silent.ask_at, base + EXTENSION_MOVES * move_time_s)
    return max(0, min(int((now - since) * 1000), _MAX_SILENT_MS))
