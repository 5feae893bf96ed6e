"""Room codes, seat tokens and room passwords.

Room codes use an alphabet with no look-alike characters (no 0/O, 1/I/L, 2/Z,
5/S, 8/B, U/V), so they can be read aloud or copied by hand. Public rooms get
short codes (they are listed anyway); private rooms get nine characters,
``23**9`` codes, about 40.7 bits: unguessable, all the more with the relay's
limit on failed attempts. Codes are shown in groups of three (``K7M-4TQ-XWA``);
any case, spaces and dashes are accepted on input.

Randomness comes from :mod:`secrets`; passwords are hashed with scrypt (from
``cryptography``) and compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

__all__ = [
    "ALPHABET",
    "MAX_PASSWORD_BYTES",
    "PRIVATE_CODE_LENGTH",
    "PUBLIC_CODE_LENGTH",
    "SCRYPT_N",
    "SCRYPT_P",
    "SCRYPT_R",
    "PasswordHash",
    "code_bits",
    "format_code",
    "hash_password",
    "new_code",
    "new_token",
    "normalize_code",
    "token_hash",
    "tokens_equal",
    "verify_password",
]

ALPHABET = "34679ACDEFGHJKMNPQRTWXY"
"""23 characters, none of which looks like another (no 0 O 1 I L 2 Z 5 S 8 B U V)."""

PUBLIC_CODE_LENGTH = 5
PRIVATE_CODE_LENGTH = 9

SCRYPT_N = 2**13
SCRYPT_R = 8
SCRYPT_P = 1
SALT_BYTES = 16
MAX_PASSWORD_BYTES = 256

_ALLOWED = frozenset(ALPHABET)


def code_bits(length: int) -> float:
    """Entropy in bits of a random code of ``length`` characters."""
    import math

    return length * math.log2(len(ALPHABET))


def new_code(private: bool) -> str:
    """A fresh random room code (canonical form: upper case, no separators)."""
    n = PRIVATE_CODE_LENGTH if private else PUBLIC_CODE_LENGTH
    return "".join(secrets.choice(ALPHABET) for _ in range(n))


def normalize_code(text: str) -> str | None:
    """The canonical code for what a person typed, or None if it cannot be a code.

    Case is ignored, as are spaces and dashes."""
    if not isinstance(text, str) or len(text) > 32:
        return None
    s = text.upper().replace("-", "").replace(" ", "")
    if len(s) not in (PUBLIC_CODE_LENGTH, PRIVATE_CODE_LENGTH) or not set(s) <= _ALLOWED:
        return None
    return s


def format_code(code: str) -> str:
    """The code as shown to people: groups of three joined by dashes (public codes as is)."""
    if len(code) == PRIVATE_CODE_LENGTH:
        return "-".join(code[i : i + 3] for i in range(0, len(code), 3))
    return code


def new_token() -> str:
    """A seat token: 144 random bits, URL-safe text."""
    return secrets.token_urlsafe(18)


def token_hash(token: str) -> bytes:
    """What the relay keeps of a token (and what a seat's peer may learn): its SHA-256."""
    return hashlib.sha256(token.encode("utf-8")).digest()


def tokens_equal(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)


@dataclass(frozen=True, slots=True)
class PasswordHash:
    salt: bytes
    digest: bytes

    def __repr__(self) -> str:  # never show even the hash in logs
        return "PasswordHash(<redacted>)"


def _derive(password: str, salt: bytes) -> bytes:
    kdf = Scrypt(salt=salt, length=32, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P)
    return kdf.derive(password.encode("utf-8"))


def hash_password(password: str, salt: bytes | None = None) -> PasswordHash:
    """scrypt the password with a fresh salt (blocking: ~50 ms; run it in a thread)."""
    if salt is None:
        salt = secrets.token_bytes(SALT_BYTES)
    return PasswordHash(salt, _derive(password, salt))


def verify_password(password: str, stored: PasswordHash) -> bool:
    """Constant-time check of a password against its scrypt hash (blocking; run it in a thread)."""
    return hmac.compare_digest(_derive(password, stored.salt), stored.digest)
