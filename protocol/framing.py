"""Frames: strict msgpack, one object per frame.

Every frame on the wire (between players, and between a client and the relay)
is one msgpack object, encoded canonically: the shortest form for every int,
string, bytes, array and map header; ``str`` for text and ``bin`` for bytes;
no floats, no extension types, no duplicate map keys, no bytes after the
object, and no more than the frame-size limit. :func:`decode` rejects
anything else with a :class:`FrameError` whose ``code`` names the flaw, so
the exact received bytes can be hashed and verified without re-serialising.

This module is all the relay needs of the protocol.
"""

from __future__ import annotations

from typing import Any

import msgpack

from ..errors import RemoteError
from .codes import Code

__all__ = ["MAX_FRAME_BYTES", "FrameError", "decode", "encode"]

MAX_FRAME_BYTES = 64 * 1024
"""The default frame-size limit (64 KiB)."""

_MAX_DEPTH = 16
_SCALARS = frozenset({int, bytes, str, bool, type(None)})


class FrameError(RemoteError, ValueError):
    """A frame that is not a canonical msgpack object. ``code`` names the flaw:

    ``oversized_frame``, ``malformed_frame``, ``trailing_bytes``,
    ``non_canonical``, ``duplicate_key``, ``float_not_allowed``,
    ``ext_not_allowed``, ``too_deep``, ``bad_map_key``.
    """

    def __init__(self, code: Code, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")


def _check(obj: Any, depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise FrameError(Code.TOO_DEEP, f"frame nests deeper than {_MAX_DEPTH} levels")
    t = type(obj)
    if t is float:
        raise FrameError(Code.FLOAT_NOT_ALLOWED, "floats are not allowed in frames")
    if t is list:
        for x in obj:
            _check(x, depth + 1)
    elif t is dict:
        for k, v in obj.items():
            if type(k) not in (str, int):
                raise FrameError(Code.BAD_MAP_KEY, "map keys must be strings or integers")
            _check(v, depth + 1)


def _pairs(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[Any] = set()
        for k, _ in pairs:
            if k in seen:
                raise FrameError(Code.DUPLICATE_KEY, f"map key {k!r} appears twice")
            seen.add(k)
    return d


def _no_ext(code: int, data: bytes) -> Any:
    raise FrameError(Code.EXT_NOT_ALLOWED, f"msgpack extension type {code} is not allowed")


def encode(obj: Any) -> bytes:
    """The canonical bytes of ``obj`` (ints, str, bytes, bool, None, lists, dicts)."""
    _check(obj, 0)
    return msgpack.packb(obj, use_bin_type=True)  # type: ignore[no-any-return]


def decode(data: bytes, max_size: int = MAX_FRAME_BYTES) -> Any:
    """Decode one frame, rejecting anything but a canonical msgpack object."""
    if len(data) > max_size:
        raise FrameError(Code.OVERSIZED_FRAME, f"frame of {len(data)} bytes is over the {max_size}-byte limit")
    if not data:
        raise FrameError(Code.MALFORMED_FRAME, "empty frame")
    try:
        obj = msgpack.unpackb(
            data,
            raw=False,
            use_list=True,
            strict_map_key=False,
            object_pairs_hook=_pairs,
            ext_hook=_no_ext,
        )
    except FrameError:
        raise
    except msgpack.ExtraData:
        raise FrameError(Code.TRAILING_BYTES, "bytes follow the msgpack object") from None
    except UnicodeDecodeError:
        raise FrameError(Code.MALFORMED_FRAME, "a string is not valid UTF-8") from None
    except (ValueError, TypeError, msgpack.UnpackException):
        raise FrameError(Code.MALFORMED_FRAME, "not a msgpack object") from None
    if type(obj) is not list or not all(type(x) in _SCALARS for x in obj):  # a flat list of scalars: nothing to check
        _check(obj, 0)
    if msgpack.packb(obj, use_bin_type=True) != data:
        raise FrameError(Code.NON_CANONICAL, "the msgpack encoding is not canonical (not the shortest form)")
    return obj
