"""The frame codec: canonical msgpack only, every flaw named."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from koikoi.protocol.framing import MAX_FRAME_BYTES, FrameError, decode, encode


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "malformed_frame"),
        (b"\xc1", "malformed_frame"),
        (b"\x92\x01", "malformed_frame"),
        (b"\x01\x02", "trailing_bytes"),
        (b"\xcc\x05", "non_canonical"),  # 5 as uint8
        (b"\xd9\x01a", "non_canonical"),  # "a" as str8
        (b"\xdc\x00\x01\x01", "non_canonical"),  # [1] as array16
        (b"\x82\xa1a\x01\xa1a\x02", "duplicate_key"),
        (b"\x91\xcb" + bytes(8), "float_not_allowed"),  # [0.0]: a flat list with a float
        (b"\xca" + bytes(4), "float_not_allowed"),
        (b"\xd4\x01\x00", "ext_not_allowed"),
        (b"\x81\x90\x01", "malformed_frame"),  # a list as a map key (unhashable)
        (b"\x81\xc0\x01", "bad_map_key"),
        (b"\x91" * 20 + b"\x00", "too_deep"),
        (b"\xa2\xff\xfe", "malformed_frame"),  # invalid UTF-8
        (bytes(MAX_FRAME_BYTES + 1), "oversized_frame"),
    ],
)
def test_each_flaw_has_its_code(data: bytes, code: str) -> None:
    with pytest.raises(FrameError) as e:
        decode(data)
    assert e.value.code == code


def test_encode_refuses_floats_and_decode_returns_lists() -> None:
    with pytest.raises(FrameError):
        encode([1, 2.5])
    assert decode(encode((1, b"x", "y", None, True))) == [1, b"x", "y", None, True]


scalars = st.one_of(
    st.integers(-(2**63), 2**64 - 1), st.binary(max_size=40), st.text(max_size=20), st.booleans(), st.none()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(obj=values)
def test_canonical_round_trip(obj: object) -> None:
    data = encode(obj)
    assert decode(data) == obj
    assert data == msgpack.packb(obj, use_bin_type=True)


@pytest.mark.parametrize("junk", [b"\xc1", b"\x92\x01", b"\xd9\x05ab", b"\xdc\x00\x05\x01"])
def test_a_frame_that_is_no_msgpack_is_named_without_the_decoders_class(junk: bytes) -> None:
    """The message says what is wrong; the decoder's exception class (``ValueError``) says nothing to a person and
    reached the user through ``koikoi resume`` and ``koikoi audit`` (new-user trial, 2026-12-01)."""
    with pytest.raises(FrameError) as ei:
        decode(junk)
    assert ei.value.code == "malformed_frame" and "Error" not in ei.value.message, ei.value.message
