"""``koikoi id``: this user's key fingerprint."""

from __future__ import annotations

import argparse
import json
import sys

from ..identity import IdentityError, fingerprint_of, key_path, load_or_create

COMMAND = "id"
HELP = "show this user's key fingerprint (to compare aloud with an opponent)"
DESCRIPTION = (
    "Show this user's key fingerprint. The key (Ed25519) is created on first use in the user config dir "
    "(or $KOIKOI_CONFIG_DIR), readable by its owner only. Compare fingerprints aloud to know who you play."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"fingerprint", "key_file", "created"} (a key that cannot be used: {"event": "error", '
        '"code": "identity", "message", "key_file"}, exit 1)',
    )


def run(args: argparse.Namespace) -> int:
    path = key_path()
    try:
        key, created = load_or_create(path)
    except (IdentityError, OSError) as e:
        message = str(e) if isinstance(e, IdentityError) else f"cannot use the key file {path}: {e.strerror or e}"
        print(f"koikoi id: {message}", file=sys.stderr)
        if args.json:  # (the shape of every networked command's error event)
            print(json.dumps({"event": "error", "code": "identity", "message": message, "key_file": str(path)}))
        return 1
    fp = fingerprint_of(key)
    if args.json:
        print(json.dumps({"fingerprint": fp, "key_file": str(path), "created": created}))
        return 0
    if created:
        print(f"koikoi id: created a new key in {path}", file=sys.stderr)
    print(fp)
    return 0
