"""Silence certificates: one encoding, signed by the relay's key, opened by players and auditors alike."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st
from nacl.signing import SigningKey

from koikoi.protocol.framing import decode, encode
from koikoi.protocol.messages import fingerprint as messages_fingerprint
from koikoi.protocol.messages import msg_hash
from koikoi.protocol.witness import (
    CERT_CONTEXT,
    CertificateError,
    fingerprint,
    frame_hash,
    open_certificate,
    sign_certificate,
)

KEY = SigningKey(hashlib.sha256(b"koikoi/test-relay-key").digest())
H0, H1 = hashlib.sha256(b"a").digest(), hashlib.sha256(b"b").digest()
K0, K1 = bytes(SigningKey(bytes([1] * 32)).verify_key), bytes(SigningKey(bytes([2] * 32)).verify_key)


def test_a_signed_certificate_opens_to_what_was_signed() -> None:
    blob = sign_certificate(KEY, "KQ7M3XWAT", 1, (H0, H1), 125_000, False, [H0, H1], (K0, K1))
    c = open_certificate(blob)
    assert c.seat_keys == (K0, K1)
    assert (c.room, c.silent_seat, c.last_frame, c.silent_ms, c.connected) == ("KQ7M3XWAT", 1, (H0, H1), 125_000, False)
    assert c.recent == {H0, H1}
    assert c.relay_key == bytes(KEY.verify_key)
    assert c.witness == fingerprint(bytes(KEY.verify_key))


def test_the_exact_bytes() -> None:
    blob = sign_certificate(KEY, "AE4CA", 0, (b"", H1), 7, True, [H0], (K0, b""))
    body, key, sig = decode(blob)
    assert body == encode([3, "AE4CA", 0, b"", H1, 7, True, [H0], K0, b""])
    assert key == bytes(KEY.verify_key)
    assert sig == KEY.sign(CERT_CONTEXT + body).signature
    assert blob == encode([body, key, sig])


def test_the_players_hash_and_fingerprint_are_the_relays() -> None:
    frame = b"\x93\x01\x02\x03"
    assert frame_hash(frame) == msg_hash(frame) == hashlib.sha256(b"koikoi/msg/v1\x00" + frame).digest()
    assert messages_fingerprint(bytes(32)) == fingerprint(bytes(32))


def _resign(body: bytes, key: SigningKey = KEY) -> bytes:
    return encode([body, bytes(key.verify_key), key.sign(CERT_CONTEXT + body).signature])


def _v3(*fields: object) -> bytes:
    """A version-3 body: ``[3, room, seat, last0, last1, silent ms, connected, recent, key0, key1]``."""
    return encode([3, *fields])


@pytest.mark.parametrize(
    "body",
    [
        encode([1, "AE4CA", 0, b"", b"", 1, True]),  # version 1: it lists no recent frames of the claimer
        encode([2, "AE4CA", 0, b"", b"", 1, True, []]),  # version 2: it names no seat keys
        encode([4, "AE4CA", 0, b"", b"", 1, True, [], K0, K1]),  # another version
        _v3("AE4CA", 2, b"", b"", 1, True, [], K0, K1),  # no such seat
        _v3("AE4CA", 0, b"x", b"", 1, True, [], K0, K1),  # a hash of the wrong size
        _v3("AE4CA", 0, b"", b"", -1, True, [], K0, K1),  # negative silence
        _v3("AE4CA", 0, b"", b"", 1, 1, [], K0, K1),  # connected is not a bool
        _v3("", 0, b"", b"", 1, True, [], K0, K1),  # no room
        _v3("AE4CA", True, b"", b"", 1, True, [], K0, K1),  # a bool is not a seat
        _v3("AE4CA", 0, b"", b"", 1, True, [], K0),  # a field missing
        _v3("AE4CA", 0, b"", b"", 1, True, [b"x"], K0, K1),  # a recent hash of the wrong size
        _v3("AE4CA", 0, b"", b"", 1, True, H0, K0, K1),  # recent is not a list
        _v3("AE4CA", 0, b"", b"", 1, True, [H0] * 33, K0, K1),  # more than RECENT_HASHES
        _v3("AE4CA", 0, b"", b"", 1, True, [], K0[:31], K1),  # a seat key of the wrong size
        _v3("AE4CA", 0, b"", b"", 1, True, [], K0, "key"),  # a seat key that is not bytes
    ],
)
def test_a_signed_but_malformed_body_is_refused(body: bytes) -> None:
    with pytest.raises(CertificateError):
        open_certificate(_resign(body))


def test_another_key_or_context_does_not_verify() -> None:
    blob = sign_certificate(KEY, "AE4CA", 0, (H0, H1), 1000, True)
    body, _, sig = decode(blob)
    other = SigningKey(bytes(32))
    with pytest.raises(CertificateError, match="not signed"):
        open_certificate(encode([body, bytes(other.verify_key), sig]))  # a key swapped in
    wrong_context = KEY.sign(b"koikoi/v1/move\x00" + body).signature
    with pytest.raises(CertificateError, match="not signed"):
        open_certificate(encode([body, bytes(KEY.verify_key), wrong_context]))


@given(st.binary(max_size=300), st.integers(min_value=0, max_value=299), st.integers(min_value=1, max_value=255))
def test_any_flipped_byte_or_garbage_is_refused(junk: bytes, at: int, flip: int) -> None:
    blob = sign_certificate(KEY, "AE4CA", 1, (H0, H1), 120_000, True)
    i = at % len(blob)
    damaged = blob[:i] + bytes([blob[i] ^ flip]) + blob[i + 1 :]
    with pytest.raises(CertificateError):
        open_certificate(damaged)
    if junk != blob:
        with pytest.raises(CertificateError):
            open_certificate(junk)


def test_the_copies_of_a_seats_frames_are_bounded_and_the_newest_stay() -> None:
    from koikoi.protocol.witness import COPY_BYTES, RECENT_HASHES, SeatClock, witness_frame

    me, other = SeatClock(), SeatClock()
    small = [b"s%d" % i for i in range(RECENT_HASHES + 5)]
    for i, f in enumerate(small):
        witness_frame(me, other, frame_hash(f), float(i), ctl=i % 2 == 0, frame=f)
    assert list(me.copies.values()) == small[5:]  # at most RECENT_HASHES, the oldest out first
    witness_frame(me, other, frame_hash(small[5]), 99.0, frame=small[5])  # a repeat moves to the end
    assert list(me.copies.values())[-1] == small[5]
    big = bytes(COPY_BYTES // 3 + 1)
    for i in range(3):
        f = big + bytes([i])
        witness_frame(me, other, frame_hash(f), 100.0 + i, frame=f)
    assert me.copies_bytes == sum(map(len, me.copies.values())) <= COPY_BYTES
    assert list(me.copies.values())[-2:] == [big + b"\x01", big + b"\x02"]  # the newest stay
    assert frame_hash(big + b"\x00") not in me.copies
