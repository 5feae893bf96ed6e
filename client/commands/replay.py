"""``koikoi replay FILE [--lang en|ja]``: a transcript, move by move, in words."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from ...engine.actions import from_code
from ...engine.cards import card_name, cards_of
from ...engine.events import Dealt, Event, MatchEnded, Redeal
from ...engine.match import ActionRule, IllegalAction, Match
from ...protocol.audit import AuditReport, audit
from ...protocol.messages import MsgType
from ...protocol.referee import Referee
from ...protocol.sealed_line import RevealedDeals
from ..tui.render import Narrator
from ..tui.text import Look, Seats
from .audit import NotATranscriptFile, read_transcript_file, verdict

COMMAND = "replay"
HELP = "show a match transcript move by move, in words (English or Japanese)"
DESCRIPTION = (
    "Show a transcript move by move in words, with the count at each round end. The transcript is "
    "audited first: only what verifies is shown, then the audit's verdict."
)

_T: dict[str, dict[str, str]] = {
    "en": {
        "seat": "Seat {s}",
        "header": "Room {room}: {rounds} rounds, {dbl}.",
        "players": "Seat 0 (creator) {fp0}; seat 1 (joiner) {fp1}.",
        "seed": "The shuffle seed was agreed by commit and reveal; seat {d} deals first.",
        "table": "  Table: {cards}",
        "hand": "  Seat {s}'s hand: {cards}",
        "sealed": "  (a sealed deal never disclosed: the match ended before this round's end)",
    },
    "ja": {
        "seat": "席{s}",
        "header": "部屋 {room}：{rounds}局、{dbl}。",
        "players": "席0（作成者）{fp0}、席1（参加者）{fp1}。",
        "seed": "山札の種はコミットと公開で決定。最初の親は席{d}。",
        "table": "  場札：{cards}",
        "hand": "  席{s}の手札：{cards}",
        "sealed": "  （伏せた配札は公開されずに対局が終わった）",
    },
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a transcript file")
    p.add_argument("--lang", choices=("en", "ja"), default="en", help="card names and text in English or Japanese")


def _narrate(ref: Referee, lang: str, out: Callable[[str], None]) -> None:
    t = _T[lang]
    h0, h1 = ref.hellos
    if h0 is None:
        return
    dbl = (
        ("×2 at 8+" if h0.double_at_8 else "no ×2 at 8+")
        if lang == "en"
        else ("8点以上で2倍" if h0.double_at_8 else "8点以上の2倍なし")
    )
    out(t["header"].format(room=h0.room, rounds=h0.rounds, dbl=dbl))
    from ...protocol.messages import fingerprint

    fps = [fingerprint(h.public_key) if h is not None else "?" for h in (h0, h1)]
    out(t["players"].format(fp0=fps[0], fp1=fps[1]))
    if ref.seed is None or ref.first_dealer is None or ref.settings is None:
        return
    out(t["seed"].format(d=ref.first_dealer))
    source = ref.deal_source()  # the shared seed, or the deals a sealed match's disclosures revealed
    if source is None:
        return

    def cards(mask: int) -> str:
        return (", " if lang == "en" else "、").join(card_name(c, lang) for c in cards_of(mask))

    seats = Seats(me=None, names=(t["seat"].format(s=0), t["seat"].format(s=1)))
    narrator = Narrator(seats, Look(lang=lang, width=10_000), ref.settings.rounds, sentences=lang)
    attempts: dict[int, int] = {}

    def emit(events: Sequence[Event]) -> None:
        for e in events:
            if isinstance(e, Dealt):
                out("")
                for line in narrator.entry(e):
                    out(f"— {line} —")
                try:
                    deal = source.deal(e.round, attempts.get(e.round, 0))
                except IllegalAction as err:
                    if err.rule is not ActionRule.NOT_DISCLOSED:
                        raise
                    out(t["sealed"])
                    continue
                hands = {e.dealer: deal.dealer_hand, 1 - e.dealer: deal.other_hand}
                out(t["table"].format(cards=cards(deal.table)))
                for s in (0, 1):
                    out(t["hand"].format(s=s, cards=cards(hands[s])))
                continue
            if isinstance(e, Redeal):
                attempts[e.round] = attempts.get(e.round, 0) + 1
            elif isinstance(e, MatchEnded):
                out("")
            for line in narrator.entry(e):
                out(line)

    if isinstance(source, RevealedDeals):
        if ref.match is not None:  # sealed: the auditor's match followed every card the line made public
            emit(ref.match.log)
        return
    m = Match(ref.settings, source, ref.first_dealer)
    emit(m.log)
    seen = len(m.log)
    for msg in ref.msgs:
        if msg.type is not MsgType.MOVE:
            continue
        m.apply(from_code(msg.body[0]), msg.seat)
        emit(m.log[seen:])
        seen = len(m.log)


def run(args: argparse.Namespace) -> int:
    try:
        data = read_transcript_file(args.file)
    except NotATranscriptFile as e:
        print(f"koikoi replay: {args.file}: {e.message}", file=sys.stderr)
        return 2
    rep: AuditReport = audit(data)
    ref = rep.referee
    if ref is not None:
        _narrate(ref, args.lang, print)
    print("")
    print(verdict(args.file, rep, args.lang))
    return 0 if rep.valid else 1
