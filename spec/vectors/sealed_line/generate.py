"""Generate the sealed line's test vectors (spec/vectors/sealed_line/). Deterministic: run it again and
nothing changes.

    python spec/vectors/sealed_line/generate.py          # (re)write the vectors
    python spec/vectors/sealed_line/generate.py --check  # exit 1 when a file differs

``match.json``: a whole 6-round sealed match between two seats that always take their first legal
action, with fixed match secrets: every message of the line (signer, kind, the body's canonical msgpack
bytes, spec/sealed-line.md), each round's revealed deal, the rounds' results and the auditor's verdict.
``negative.json``: one vector per cheat — the line from the cheater's changed message on, and either the
rule the line refuses that message with at once (``refused``: a fault the message proves against the line
before it; the line ends there) or, for a fault only a seat's secret shows, the honest seat's stop, both
disclosures and the fault the honest seat's verification and the auditor name (``fault``).
These secrets are public and for vectors only.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from koikoi.engine.actions import PLAY, ActionKind, from_code
from koikoi.engine.cards import CARD_IDS, cards_of
from koikoi.engine.match import Settings
from koikoi.protocol.sealed_line import LineKind, SealedSeat, Sent, audit_line
from koikoi.testing import run_pair

HERE = Path(__file__).resolve().parent
SETTINGS = Settings(rounds=6)
FIRST_DEALER = 0


def _secret(label: str) -> bytes:
    return hashlib.sha256(b"koikoi/vectors/sealed-line\x00" + label.encode()).digest()


SECRETS = (_secret("seat 0"), _secret("seat 1"))
OTHER_KEY = hashlib.sha256(b"koikoi/vectors/sealed-line/other key").digest()[:31] + b"\x00"


def _msg(m: Sent) -> dict[str, Any]:
    return {"seat": m.seat, "kind": m.kind.value, "body": m.encode().hex()}


def _ids(mask: int) -> list[str]:
    return [CARD_IDS[c] for c in cards_of(mask)]


def _replace(m: Sent, field: int, index: int | None, value: Any) -> Sent:
    body = list(m.body)
    if index is None:
        body[field] = value
    else:
        items = list(body[field])
        items[index] = value
        body[field] = items
    return Sent(m.seat, m.kind, tuple(body))


def _nth(kind: LineKind, n: int, change: Callable[[Sent, SealedSeat], Sent]) -> Callable[[Sent, SealedSeat], Sent]:
    count = [0]

    def t(m: Sent, s: SealedSeat) -> Sent:
        if m.kind is not kind:
            return m
        if kind is LineKind.MOVE and from_code(m.body[0]).kind is not ActionKind.PLAY:
            return m
        count[0] += 1
        return change(m, s) if count[0] == n else m

    return t


def _in_round(
    round_number: int, kind: LineKind, n: int, change: Callable[[Sent, SealedSeat], Sent]
) -> Callable[[Sent, SealedSeat], Sent]:
    """Like :func:`_nth`, counting only the messages of round ``round_number``."""
    count = [0]

    def t(m: Sent, s: SealedSeat) -> Sent:
        if m.kind is not kind or s.round != round_number:
            return m
        count[0] += 1
        return change(m, s) if count[0] == n else m

    return t


def _wrong_card(m: Sent, s: SealedSeat) -> Sent:
    named = from_code(m.body[0]).card
    other = next(c for c in range(48) if c != named and c not in s.known_cards().values())
    return _replace(m, 0, None, PLAY[other].code)


CHEATS: list[tuple[str, int, Callable[[Sent, SealedSeat], Sent]]] = [
    ("K's shuffle repeats a card", 1, _nth(LineKind.SHUFFLE, 1, lambda m, s: _replace(m, 0, 5, m.body[0][3]))),
    ("O's key for K's hand is wrong", 0, _nth(LineKind.SHUFFLE_LOCK, 1, lambda m, s: _replace(m, 1, 2, OTHER_KEY))),
    (
        "K claims a hand yaku it does not hold",
        1,
        _nth(LineKind.LOCK, 1, lambda m, s: _replace(m, 2, None, list(s.secrets_now().keys[8:16]))),
    ),
    ("O's draw key is wrong", 0, _nth(LineKind.DRAW, 2, lambda m, s: _replace(m, 0, None, OTHER_KEY))),
    (
        "K's key for O's hand is wrong (only O's secret shows it)",
        1,
        _nth(LineKind.LOCK, 1, lambda m, s: _replace(m, 1, 0, OTHER_KEY)),
    ),
    (
        "K's deck key in its play is wrong (only O's secret shows it)",
        1,
        _nth(LineKind.MOVE, 1, lambda m, s: _replace(m, 2, 2, OTHER_KEY)),
    ),
    ("K names a card its keys do not open", 1, _nth(LineKind.MOVE, 1, _wrong_card)),
    (
        "seat 1's draw key is wrong in round 2",
        1,
        _in_round(2, LineKind.DRAW, 1, lambda m, s: _replace(m, 0, None, OTHER_KEY)),
    ),
    (
        "seat 0's draw key is wrong in the last round (the deciding one)",
        0,
        _in_round(SETTINGS.rounds, LineKind.DRAW, 1, lambda m, s: _replace(m, 0, None, OTHER_KEY)),
    ),
]


def build_all() -> dict[str, bytes]:
    seats, line = run_pair(SETTINGS, FIRST_DEALER, SECRETS)
    audit = audit_line(SETTINGS, FIRST_DEALER, line)
    assert audit.match is not None and audit.fault is None and audit.error is None
    rounds = []
    for v in seats[0].verdicts:
        assert v.deal is not None
        rounds.append(
            {
                "round": v.round,
                "dealer_hand": _ids(v.deal.dealer_hand),
                "other_hand": _ids(v.deal.other_hand),
                "table": _ids(v.deal.table),
                "deck": [CARD_IDS[c] for c in v.deal.deck],
            }
        )
    match = {
        "settings": {"rounds": SETTINGS.rounds, "double_at_8": SETTINGS.double_at_8, "deck": "sealed"},
        "first_dealer": FIRST_DEALER,
        "match_secrets": [s.hex() for s in SECRETS],
        "player": "each seat takes its first legal action",
        "line": [_msg(m) for m in line],
        "deals": rounds,
        "results": [r.to_json() for r in audit.match.history],
        "audit": {"fault": None, "points": list(audit.match.points), "winner": audit.match.winner},
    }
    negative = []
    for name, cheater, tamper in CHEATS:
        seats, bad = run_pair(SETTINGS, FIRST_DEALER, SECRETS, cheater=cheater, tamper=tamper)
        at = next(i for i, (a, b) in enumerate(zip(bad, line, strict=False)) if a != b)
        found = seats[1 - cheater].verdict
        a = audit_line(SETTINGS, FIRST_DEALER, bad)
        vec: dict[str, Any] = {"name": name, "cheater": cheater, "from": at, "line": [_msg(m) for m in bad[at:]]}
        if a.error is not None:  # refused at once: the cheater's changed message ends the line
            assert a.error[0] == cheater and bad[-1].seat == cheater and found is None, (name, a.error)
            vec["round"] = seats[1 - cheater].round
            vec["refused"] = {"rule": a.error[1], "seat": a.error[0], "message": a.error[2]}
        else:
            assert found is not None and found.fault is not None and a.fault is not None, name
            assert (found.fault.rule, found.fault.seat) == (a.fault.rule, a.fault.seat) == (a.fault.rule, cheater)
            vec["round"] = found.round
            vec["fault"] = {"rule": a.fault.rule, "seat": a.fault.seat, "message": a.fault.message}
        negative.append(vec)
    return {
        "match.json": (json.dumps(match, indent=1) + "\n").encode(),
        "negative.json": (json.dumps(negative, indent=1) + "\n").encode(),
    }


def main(argv: list[str]) -> int:
    check = "--check" in argv
    bad = 0
    for name, data in sorted(build_all().items()):
        path = HERE / name
        if check:
            if not path.exists() or path.read_bytes() != data:
                print(f"differs: {name}", file=sys.stderr)
                bad += 1
        else:
            path.write_bytes(data)
            print(f"wrote {path.relative_to(HERE)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
