"""Room codes, tokens and password hashing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from koikoi.relay import codes

LOOK_ALIKES = set("0O1IL2Z5S8BUV")


def test_alphabet_has_no_look_alikes_and_private_codes_have_40_bits() -> None:
    assert not LOOK_ALIKES & set(codes.ALPHABET)
    assert len(set(codes.ALPHABET)) == len(codes.ALPHABET)
    assert codes.code_bits(codes.PRIVATE_CODE_LENGTH) >= 40


def test_codes_are_random_and_well_formed() -> None:
    private = {codes.new_code(True) for _ in range(2000)}
    assert len(private) == 2000
    for c in private:
        assert len(c) == codes.PRIVATE_CODE_LENGTH and set(c) <= set(codes.ALPHABET)
        assert codes.normalize_code(codes.format_code(c).lower()) == c
    public = codes.new_code(False)
    assert len(public) == codes.PUBLIC_CODE_LENGTH and codes.format_code(public) == public


@st.composite
def _typed_code(draw: st.DrawFn) -> tuple[str, str]:
    """A code and a way a person might type it: any case, spaces and dashes anywhere."""
    length = draw(st.sampled_from([codes.PUBLIC_CODE_LENGTH, codes.PRIVATE_CODE_LENGTH]))
    code = "".join(draw(st.lists(st.sampled_from(codes.ALPHABET), min_size=length, max_size=length)))
    typed = ""
    for ch in code:
        typed += draw(st.sampled_from(["", " ", "-", "  ", " - "]))
        typed += ch.lower() if draw(st.booleans()) else ch
    typed += draw(st.sampled_from(["", " ", "-"]))
    return code, typed


@given(_typed_code())
def test_normalize_accepts_only_codes(case: tuple[str, str]) -> None:
    code, typed = case
    expected = code if len(typed) <= 32 else None  # longer input is refused before it is read
    assert codes.normalize_code(typed) == expected
    assert codes.normalize_code(codes.format_code(code)) == code
    assert codes.normalize_code(codes.format_code(code).lower()) == code


@given(_typed_code(), st.sampled_from([*sorted(LOOK_ALIKES), "_", ".", "é", "\t"]), st.data())
def test_normalize_refuses_a_code_with_a_foreign_character_or_length(
    case: tuple[str, str], bad: str, data: st.DataObject
) -> None:
    code, _typed = case
    at = data.draw(st.integers(0, len(code) - 1))
    assert codes.normalize_code(code[:at] + bad + code[at + 1 :]) is None  # one character outside the alphabet
    assert codes.normalize_code(code[:-1]) is None  # one short
    assert codes.normalize_code(code + code[0]) is None  # one too many


@given(st.text(max_size=40))
def test_normalize_of_any_text_is_a_code_or_none(text: str) -> None:
    n = codes.normalize_code(text)
    if n is not None:
        assert n == text.upper().replace("-", "").replace(" ", "")
        assert set(n) <= set(codes.ALPHABET)
        assert len(n) in (codes.PUBLIC_CODE_LENGTH, codes.PRIVATE_CODE_LENGTH)


def test_tokens_and_passwords() -> None:
    t = codes.new_token()
    assert len(t) >= 24 and codes.new_token() != t
    assert codes.tokens_equal(codes.token_hash(t), codes.token_hash(t))
    assert not codes.tokens_equal(codes.token_hash(t), codes.token_hash(t + "x"))
    h = codes.hash_password("hunter2")
    assert codes.verify_password("hunter2", h)
    assert not codes.verify_password("hunter3", h)
    assert codes.hash_password("hunter2").salt != h.salt  # salted: same password, different hash
    assert "hunter2" not in repr(h) and h.digest.hex() not in repr(h)


@given(st.integers(min_value=-5, max_value=2**64 - 1), st.binary(max_size=300), st.binary(max_size=3))
def test_fast_frame_path_agrees_with_the_full_decoder(n: int, d: bytes, junk: bytes) -> None:
    from koikoi.protocol.framing import FrameError, decode, encode
    from koikoi.relay.core import fast_frame

    for msg in (
        encode({"t": "frame", "n": n, "d": d}),
        encode({"t": "frame", "n": n, "d": d}) + junk,
        encode({"t": "frame", "n": n, "d": d})[: len(junk) - 4],
    ):
        fast_n, size = fast_frame(msg)
        if fast_n:
            assert decode(msg) == {"t": "frame", "n": fast_n, "d": d} and size == len(d) and fast_n >= 1
        else:
            try:
                obj = decode(msg)
            except FrameError:
                continue
            assert not (
                obj.keys() == {"t", "n", "d"}
                and obj["n"] >= 1
                and list(obj) == ["t", "n", "d"]
                and type(obj["d"]) is bytes
            )
