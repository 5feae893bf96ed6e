"""The package's generic helpers (koikoi.support), which the relay and the client share."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from koikoi.support import TokenBucket, atomic_write, first_of, sole


def test_first_of_finds_the_kind_in_nested_groups() -> None:
    inner = KeyError("k")
    group = BaseExceptionGroup("outer", [ValueError("v"), ExceptionGroup("inner", [inner])])
    assert first_of(group, KeyError) is inner
    assert first_of(group, OSError) is None
    assert first_of(inner, (OSError, KeyError)) is inner


def test_sole_unwraps_only_groups_of_one() -> None:
    e = OSError("x")
    assert sole(ExceptionGroup("a", [ExceptionGroup("b", [e])])) is e
    two = ExceptionGroup("two", [e, KeyError()])
    assert sole(two) is two


def test_token_bucket_burst_then_rate() -> None:
    b = TokenBucket.full(rate=2.0, burst=3.0, now=0.0)
    assert [b.take(0.0) for _ in range(4)] == [True, True, True, False]
    assert b.wait_for_one(0.0) == pytest.approx(0.5)
    assert not b.take(0.25)
    assert b.take(0.5)  # 0.5 s at 2/s refilled one token (half was already there at 0.25)
    assert not b.take(0.5)
    assert [b.take(100.0) for _ in range(4)] == [True, True, True, False]  # never more than the burst


def test_atomic_write_replaces_or_keeps(tmp_path: Path) -> None:
    p = tmp_path / "sub" / "f"
    assert atomic_write(p, b"one")
    assert p.read_bytes() == b"one" and os.stat(p).st_mode & 0o777 == 0o600
    assert atomic_write(p, b"two")
    assert p.read_bytes() == b"two"
    assert not atomic_write(p, b"three", replace=False)  # never replaces
    assert p.read_bytes() == b"two"
    assert sorted(x.name for x in p.parent.iterdir()) == ["f"]  # no temporary file left


def test_atomic_write_failure_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "f"
    atomic_write(p, b"old")

    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="No space"):
        atomic_write(p, b"new")
    assert p.read_bytes() == b"old"
    assert [x.name for x in tmp_path.iterdir()] == ["f"]
