"""Sealed mode's line of messages: one seat's side (:class:`SealedSeat`) and the auditor's (:func:`audit_line`).

Sans-IO. This module is the sealed deck (``spec/sealed.md``, :mod:`koikoi.protocol.sealed`) played
message by message on a seat-side match (:meth:`koikoi.engine.match.Match.for_seat`): it decides who
sends what next, builds each of this seat's messages, does every live check on what it receives, and
verifies each round after the two disclosures. The session wraps each :class:`Sent` in a signed
envelope (one message type per :class:`LineKind`, the body as here); the auditor re-checks a whole line.

The line of one round (O = the round's dealer, K = the other seat)::

    K SHUFFLE [points]                      one deal attempt: steps 1-3 (a redeal starts again at 1)
    O SHUFFLE_LOCK [points, keys]
    K LOCK [points, keys, claim]
    O CLAIM [claim]                         step 4 (not sent when the attempt is redealt)
    M MOVE [action, state_hash, keys]       the player to move; keys = [position, hand key, deck key]
    P DRAW [key]                            for a play: the opponent's key for the drawn card, at once
    ...
    N DISCLOSE [secrets]                    the round's end: the round secret of every attempt; N is the
    K' DISCLOSE [secrets], K' SHUFFLE ...   next round's dealer, K' the other, whose disclosure completes
                                            the round and whose next SHUFFLE leaves with it

A MOVE's ``state_hash`` is the state *before* the move (the last point where neither seat waits for a
card; after a play both wait for the drawn card). A seat whose live check fails **stops**: its next
message is its DISCLOSE, at once, whoever's turn it is; the other seat must then disclose too (or lose
on time), and the verification names the fault (:attr:`SealedSeat.verdict`). A stop always ends the
match: a fault found forfeits it; a stop with no fault found is its sender's resignation.

The line's pieces, one module each (this module is their facade):

* :mod:`.line_vocabulary` - the message kinds (:class:`LineKind`), :class:`Sent`, :class:`LineError`,
  :class:`Verdict`, each kind's shape (:func:`check_shape`) and the match secret (:func:`match_secret`);
* :mod:`.line_round` - one round's state (:class:`LineRound`: its deal attempts, what its play published,
  who sends next), its verification (:func:`verify_line_round`) and the deals it revealed
  (:class:`RevealedDeals`);
* :mod:`.line_judge` - the line's one judge (:class:`SealedObserver`), the same code for a seat's view of
  its opponent and for the auditor;
* :mod:`.line_seat` - a seat's side (:class:`SealedSeat`): its judge with its secrets plugged in;
* :mod:`.line_audit` - a whole line re-checked (:func:`audit_line`, :class:`LineAudit`).

Two seats in memory without sessions (``run_pair``) are the test harness's: :mod:`koikoi.testing`.
"""

from __future__ import annotations

from .line_audit import LineAudit, audit_line
from .line_judge import SealedObserver
from .line_round import DealAttempt, LineRound, RevealedDeals, verify_line_round
from .line_seat import SealedSeat
from .line_vocabulary import (
    LINE_RULES,
    MATCH_SECRET_LABEL,
    LineError,
    LineKind,
    Sent,
    Verdict,
    check_shape,
    match_secret,
)

__all__ = [
    "LINE_RULES",
    "MATCH_SECRET_LABEL",
    "DealAttempt",
    "LineAudit",
    "LineError",
    "LineKind",
    "LineRound",
    "RevealedDeals",
    "SealedObserver",
    "SealedSeat",
    "Sent",
    "Verdict",
    "audit_line",
    "check_shape",
    "match_secret",
    "verify_line_round",
]
