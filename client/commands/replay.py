"""``koikoi replay FILE [--lang en|ja]``: a transcript, move by move, in words."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from ...engine.cards import card_name, cards_of
from ...engine.deal import SeededDeal
from ...engine.match import Match, RoundEnd, RoundResult
from ...engine.yaku import Yaku
from ...protocol.audit import AuditReport, audit
from ...protocol.messages import MsgType
from ...protocol.referee import Referee
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
        "deal": "— Round {r} of {n}: seat {d} deals. —",
        "table": "  Table: {cards}",
        "hand": "  Seat {s}'s hand: {cards}",
        "redeal": "  All four cards of a month lie on the table: the cards are dealt again.",
        "play_take": "{who} plays {card} and captures {taken}.",
        "play_table": "{who} plays {card} to the table.",
        "draw_take": "{who} draws {card} and captures {taken}.",
        "draw_table": "{who} draws {card}; it goes to the table.",
        "drawn": "{who} draws {card}, which matches two table cards.",
        "choose": "{who} chooses to capture {taken} with it.",
        "koikoi": "{who} has yaku worth {total} and calls koi-koi.",
        "shobu": "{who} calls shōbu with yaku worth {total}.",
        "hand_yaku": "{who} was dealt {yaku}.",
        "round_win": "Round {r}: seat {w} wins and is paid {p}.",
        "round_drawn": "Round {r} is drawn: nobody pays, and the dealer deals again.",
        "pools": "  Points: seat 0 {p0}, seat 1 {p1}.",
        "match_end": "The match is over: {res}.",
        "won": "seat {w} wins {p0}–{p1}",
        "tie": "a tie, {p0}–{p1}",
        "and": " and ",
    },
    "ja": {
        "seat": "席{s}",
        "header": "部屋 {room}：{rounds}回戦、{dbl}。",
        "players": "席0（作成者）{fp0}、席1（参加者）{fp1}。",
        "seed": "山札の種はコミットと公開で決定。最初の親は席{d}。",
        "deal": "— 第{r}局（全{n}局）：親は席{d} —",
        "table": "  場札：{cards}",
        "hand": "  席{s}の手札：{cards}",
        "redeal": "  場に同じ月の札が四枚：配り直し。",
        "play_take": "{who}が{card}を出して{taken}を取る。",
        "play_table": "{who}が{card}を場に出す。",
        "draw_take": "{who}が{card}を引いて{taken}を取る。",
        "draw_table": "{who}が{card}を引いて場に置く。",
        "drawn": "{who}が{card}を引く。場の二枚と合う。",
        "choose": "{who}はそれで{taken}を取る。",
        "koikoi": "{who}は役{total}文で「こいこい」。",
        "shobu": "{who}は役{total}文で「勝負」。",
        "hand_yaku": "{who}に手役：{yaku}。",
        "round_win": "第{r}局：席{w}の勝ち、{p}文。",
        "round_drawn": "第{r}局は流れ：支払いなし、親はそのまま。",
        "pools": "  持ち点：席0 {p0}、席1 {p1}。",
        "match_end": "対局終了：{res}。",
        "won": "席{w}の勝ち {p0}–{p1}",
        "tie": "引き分け {p0}–{p1}",
        "and": "と",
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
        ("×2 at 8+" if h0.double_at_8 else "No ×2 at 8+")
        if lang == "en"
        else ("8文以上は2倍" if h0.double_at_8 else "8文以上の2倍なし")
    )
    out(t["header"].format(room=h0.room, rounds=h0.rounds, dbl=dbl))
    from ...protocol.messages import fingerprint

    fps = [fingerprint(h.public_key) if h is not None else "?" for h in (h0, h1)]
    out(t["players"].format(fp0=fps[0], fp1=fps[1]))
    if ref.seed is None or ref.first_dealer is None or ref.settings is None:
        return
    out(t["seed"].format(d=ref.first_dealer))
    source = SeededDeal(ref.seed)

    def names(c: int) -> str:
        return card_name(c, lang)

    def cards(mask: int) -> str:
        return (", " if lang == "en" else "、").join(names(c) for c in cards_of(mask))

    def taken_text(mask: int) -> str:
        return t["and"].join(names(c) for c in cards_of(mask))

    attempts: dict[int, int] = {}
    pending = [False]

    def emit(entry: tuple[object, ...], m: Match) -> None:
        kind = entry[0]
        if kind == "deal":
            r, d = int(entry[1]), int(entry[2])  # type: ignore[call-overload]
            deal = source.deal(r, attempts.get(r, 0))
            hands = {d: deal.dealer_hand, 1 - d: deal.other_hand}
            out("")
            out(t["deal"].format(r=r, n=m.settings.rounds, d=d))
            out(t["table"].format(cards=cards(deal.table)))
            for s in (0, 1):
                out(t["hand"].format(s=s, cards=cards(hands[s])))
        elif kind == "redeal":
            r = int(entry[1])  # type: ignore[call-overload]
            attempts[r] = attempts.get(r, 0) + 1
            out(t["redeal"])
        elif kind in ("play", "draw"):
            _, seat, card, taken = entry
            who = t["seat"].format(s=seat)
            key = f"{kind}_{'take' if taken else 'table'}"
            if kind == "draw" and pending[0]:
                key = "choose"
            pending[0] = False
            out(t[key].format(who=who, card=names(int(card)), taken=taken_text(int(taken))))  # type: ignore[call-overload]
        elif kind == "drawn":
            pending[0] = True
            out(t["drawn"].format(who=t["seat"].format(s=entry[1]), card=names(int(entry[2]))))  # type: ignore[call-overload]
        elif kind in ("koikoi", "shobu"):
            out(t[str(kind)].format(who=t["seat"].format(s=entry[1]), total=entry[2]))
        elif kind == "hand_yaku":
            y = entry[2]
            assert isinstance(y, Yaku)
            out(t["hand_yaku"].format(who=t["seat"].format(s=entry[1]), yaku=y.name_ja if lang == "ja" else y.name_en))
        elif kind == "round_end":
            res = entry[1]
            assert isinstance(res, RoundResult)
            if res.end is RoundEnd.DRAWN or res.winner is None:
                out(t["round_drawn"].format(r=res.round))
            else:
                out(t["round_win"].format(r=res.round, w=res.winner, p=res.payment))
                if res.breakdown is not None:
                    for line in res.breakdown.lines(lang):
                        out(line)
            out(t["pools"].format(p0=res.points[0], p1=res.points[1]))
        elif kind == "match_end":
            w = entry[1]
            p = entry[2]
            assert isinstance(p, tuple)
            res_text = t["tie" if w is None else "won"].format(w=w, p0=p[0], p1=p[1])
            out("")
            out(t["match_end"].format(res=res_text))

    m = Match(ref.settings, source, ref.first_dealer)
    seen = 0
    for entry in m.log:
        emit(entry, m)
    seen = len(m.log)
    from ...engine.actions import from_code

    for msg in ref.msgs:
        if msg.type is not MsgType.MOVE:
            continue
        m.apply(from_code(msg.body[0]), msg.seat)
        for entry in m.log[seen:]:
            emit(entry, m)
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
    print(verdict(args.file, rep))
    return 0 if rep.valid else 1
