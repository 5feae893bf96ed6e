"""This user's identity: an Ed25519 key, created on first use, kept owner-only.

The key lives in ``identity.key`` (PKCS#8 PEM, unencrypted, mode 0600) in the
user config dir (platformdirs), or in ``$KOIKOI_CONFIG_DIR`` when set (tests
use it so they never touch the real home). Its fingerprint, four groups of
four characters, is what two players compare aloud.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import platformdirs
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..errors import LocalError
from ..protocol.messages import fingerprint, public_bytes
from ..support import atomic_write

__all__ = ["KEY_FILE", "IdentityError", "config_dir", "fingerprint_of", "key_path", "load_or_create"]

KEY_FILE = "identity.key"


class IdentityError(LocalError):
    """The key file exists but cannot be used (named in the message)."""


def config_dir() -> Path:
    env = os.environ.get("KOIKOI_CONFIG_DIR")
    if env:
        return Path(env)
    return Path(platformdirs.user_config_dir("koikoi", appauthor=False))


def key_path() -> Path:
    return config_dir() / KEY_FILE


def fingerprint_of(key: Ed25519PrivateKey) -> str:
    return fingerprint(public_bytes(key))


def _read(path: Path) -> Ed25519PrivateKey:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise IdentityError(f"cannot read the key file {path}: {e.strerror}") from None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise IdentityError(f"the key file {path} is damaged (not an unencrypted PEM key)") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise IdentityError(f"the key file {path} holds no Ed25519 key")
    return key


def load_or_create(path: Path | None = None) -> tuple[Ed25519PrivateKey, bool]:
    """This user's key, and whether it was created now. The file is made owner-only (0600)."""
    path = path or key_path()
    if path.exists():
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            os.chmod(path, 0o600)
        return _read(path), False
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    # atomic, mode 0600, never replaces: a concurrent first use keeps one key
    if not atomic_write(path, pem, replace=False, prefix=".identity-"):
        return _read(path), False
    return key, True
