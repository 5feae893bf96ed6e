"""The relay's Ed25519 key: it signs silence certificates (``koikoi.protocol.witness``).

The key lives in one small file, created on first start and never replaced:
``$KOIKOI_STATE_DIR/relay.key`` when that is set, else ``relay.key`` in the
platformdirs user state dir (``~/.local/state/koikoi`` on Linux), or any file
given with ``koikoi relay --key FILE``. The file holds the 32-byte Ed25519 seed
as 64 hex digits and a newline, mode 0600, written atomically (a temporary
file, fsync, then a hard link that never replaces an existing key, so two
relays starting at once end with one key).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
from nacl.signing import SigningKey

from ..errors import LocalError
from ..protocol.witness import fingerprint
from ..support import atomic_write

__all__ = ["KEY_FILE_NAME", "RelayKeyError", "default_key_path", "key_fingerprint", "load_or_create_key"]

KEY_FILE_NAME = "relay.key"


class RelayKeyError(LocalError):
    """A key file that cannot be read, written or understood; ``message`` is one line for a person."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.usage = usage
        """True when the file's content is wrong (a usage error), False for an I/O failure."""


def default_key_path() -> Path:
    """``$KOIKOI_STATE_DIR/relay.key``, else ``relay.key`` in the user state dir."""
    env = os.environ.get("KOIKOI_STATE_DIR")
    base = Path(env) if env else Path(platformdirs.user_state_dir("koikoi", appauthor=False))
    return base / KEY_FILE_NAME


def key_fingerprint(key: SigningKey) -> str:
    """The fingerprint of the key's public half (``witness.fingerprint``)."""
    return fingerprint(bytes(key.verify_key))


def _read(path: Path) -> SigningKey:
    try:
        text = path.read_bytes()
    except OSError as e:
        raise RelayKeyError(f"cannot read the relay key {path}: {e.strerror or e}") from None
    s = text.strip()
    try:
        seed = bytes.fromhex(s.decode("ascii")) if len(s) == 64 else b""
    except (UnicodeDecodeError, ValueError):
        seed = b""
    if len(seed) != 32:
        raise RelayKeyError(
            f"{path} is not a relay key (expected 64 hex digits, an Ed25519 seed; got {len(text)} bytes)", usage=True
        )
    return SigningKey(seed)


def load_or_create_key(path: Path | None = None) -> tuple[SigningKey, Path, bool]:
    """The key at ``path`` (default :func:`default_key_path`), created there if missing.

    Returns ``(key, path, created)``. Raises :class:`RelayKeyError` naming what is wrong.
    """
    path = path if path is not None else default_key_path()
    if not path.exists():
        key = SigningKey.generate()
        try:
            made = atomic_write(path, bytes(key).hex().encode() + b"\n", replace=False, prefix=".relay-key-")
        except OSError as e:
            raise RelayKeyError(f"cannot create the relay key {path}: {e.strerror or e}") from None
        if made:
            return key, path, True
        # another relay created it meanwhile: use that one
    return _read(path), path, False
