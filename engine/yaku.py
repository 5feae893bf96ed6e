"""Yaku and the count of a round: this game's rules, and Nintendo's for the calculator.

``total_points(mask)`` is the fast path the rules use after every capture; it is
four table look-ups. ``yaku_of(mask)`` lists the yaku with their points, and
``count_round`` turns them into a :class:`Breakdown`: one line per yaku, each
multiplier with its reason, the cap and the payment. The calculator, the
koi-koi prompt and the round-end screen all print the same breakdown.
"""

from __future__ import annotations

import enum
import unicodedata
from dataclasses import dataclass, field
from typing import Final

from .cards import (
    AKATAN,
    AOTAN,
    CURTAIN,
    INOSHIKACHO,
    LIGHTS,
    MOON,
    PLAINS,
    RAINMAN,
    RIBBONS,
    SAKE_CUP,
    TANE,
    four_of_a_month,
    iter_cards,
    month_counts,
)

__all__ = [
    "HAND_YAKU_POINTS",
    "YAKU_ORDER",
    "Breakdown",
    "Multiplier",
    "Rules",
    "Yaku",
    "count_hand_yaku",
    "count_round",
    "hand_yaku",
    "total_points",
    "yaku_of",
]


class Yaku(enum.Enum):
    GOKO = "goko"
    SHIKO = "shiko"
    AME_SHIKO = "ame_shiko"
    SANKO = "sanko"
    HANAMI = "hanami"
    TSUKIMI = "tsukimi"
    INOSHIKACHO = "inoshikacho"
    AKATAN = "akatan"
    AOTAN = "aotan"
    AKATAN_AOTAN = "akatan_aotan"
    TANE = "tane"
    TAN = "tan"
    KASU = "kasu"
    TESHI = "teshi"
    KUTTSUKI = "kuttsuki"

    @property
    def name_en(self) -> str:
        return _NAMES[self][0]

    @property
    def name_ja(self) -> str:
        return _NAMES[self][1]


_NAMES: dict[Yaku, tuple[str, str]] = {
    Yaku.GOKO: ("Gokō (five lights)", "五光"),
    Yaku.SHIKO: ("Shikō (four lights)", "四光"),
    Yaku.AME_SHIKO: ("Ame-shikō (rainy four lights)", "雨四光"),
    Yaku.SANKO: ("Sankō (three lights)", "三光"),
    Yaku.HANAMI: ("Hanami de ippai (flower viewing)", "花見で一杯"),
    Yaku.TSUKIMI: ("Tsukimi de ippai (moon viewing)", "月見で一杯"),
    Yaku.INOSHIKACHO: ("Inoshikachō (boar, deer, butterflies)", "猪鹿蝶"),
    Yaku.AKATAN: ("Akatan (red poem ribbons)", "赤短"),
    Yaku.AOTAN: ("Aotan (blue ribbons)", "青短"),
    Yaku.AKATAN_AOTAN: ("Akatan-Aotan no chōfuku (red and blue ribbons)", "赤短・青短の重複"),
    Yaku.TANE: ("Tane (five animals)", "タネ"),
    Yaku.TAN: ("Tan (five ribbons)", "タン"),
    Yaku.KASU: ("Kasu (ten plains)", "カス"),
    Yaku.TESHI: ("Teshi (four of a month in hand)", "手四"),
    Yaku.KUTTSUKI: ("Kuttsuki (four pairs in hand)", "くっつき"),
}

YAKU_ORDER: tuple[Yaku, ...] = tuple(Yaku)
HAND_YAKU_POINTS = 6


class Rules(enum.Enum):
    """Whose counting: this game's (``game``) or Nintendo's (calculator only)."""

    GAME = "game"
    NINTENDO = "nintendo"


def _light_yaku(lights: int) -> tuple[Yaku, int] | None:
    n = lights.bit_count()
    rain = bool(lights & RAINMAN)
    if n == 5:
        return (Yaku.GOKO, 10)
    if n == 4:
        return (Yaku.AME_SHIKO, 7) if rain else (Yaku.SHIKO, 8)
    if n == 3 and not rain:
        return (Yaku.SANKO, 5)
    return None


def yaku_of(mask: int, rules: Rules = Rules.GAME) -> list[tuple[Yaku, int]]:
    """The yaku in a pile of captured cards, with their points, in ``YAKU_ORDER``.

    This game: only the best light yaku; Chōfuku replaces Akatan and Aotan;
    Tane and Tan count beside Inoshikachō / Akatan / Aotan, each with its
    extra points; the Sake cup is a tane only. Nintendo: Tane is void once
    Inoshikachō is made, Tan is void once Akatan, Aotan or Chōfuku is made,
    and the Sake cup counts as a plain too.
    """
    out: list[tuple[Yaku, int]] = []
    light = _light_yaku(mask & LIGHTS)
    if light is not None:
        out.append(light)
    if mask & (CURTAIN | SAKE_CUP) == CURTAIN | SAKE_CUP:
        out.append((Yaku.HANAMI, 5))
    if mask & (MOON | SAKE_CUP) == MOON | SAKE_CUP:
        out.append((Yaku.TSUKIMI, 5))
    n_tane = (mask & TANE).bit_count()
    ino = mask & INOSHIKACHO == INOSHIKACHO
    if ino:
        out.append((Yaku.INOSHIKACHO, 5 + n_tane - 3))
    n_rib = (mask & RIBBONS).bit_count()
    aka = mask & AKATAN == AKATAN
    ao = mask & AOTAN == AOTAN
    if aka and ao:
        out.append((Yaku.AKATAN_AOTAN, 10 + n_rib - 6))
    elif aka:
        out.append((Yaku.AKATAN, 5 + n_rib - 3))
    elif ao:
        out.append((Yaku.AOTAN, 5 + n_rib - 3))
    nintendo = rules is Rules.NINTENDO
    if n_tane >= 5 and not (nintendo and ino):
        out.append((Yaku.TANE, n_tane - 4))
    if n_rib >= 5 and not (nintendo and (aka or ao)):
        out.append((Yaku.TAN, n_rib - 4))
    n_plain = (mask & PLAINS).bit_count()
    if nintendo and mask & SAKE_CUP:
        n_plain += 1
    if n_plain >= 10:
        out.append((Yaku.KASU, n_plain - 9))
    return out


def _sum(ys: list[tuple[Yaku, int]]) -> int:
    return sum(p for _, p in ys)


def _subsets(mask: int) -> list[int]:
    """Every subset of ``mask`` (2**popcount of them)."""
    subs = [0]
    for c in iter_cards(mask):
        bit = 1 << c
        subs += [s | bit for s in subs]
    return subs


# Fast path: the points of this game's counting split into four independent
# parts, each a table indexed by the masked capture pile.
_LIGHT_VIEW_MASK: Final = LIGHTS | SAKE_CUP
_LIGHT_VIEW_YAKU = (Yaku.GOKO, Yaku.SHIKO, Yaku.AME_SHIKO, Yaku.SANKO, Yaku.HANAMI, Yaku.TSUKIMI)
_LIGHT_VIEW: Final[dict[int, int]] = {}
for _s in _subsets(_LIGHT_VIEW_MASK):
    _ys = [y for y in yaku_of(_s) if y[0] in _LIGHT_VIEW_YAKU]
    _LIGHT_VIEW[_s] = _sum(_ys)
_TANE_PTS: Final[dict[int, int]] = {}
for _s in _subsets(TANE):
    _TANE_PTS[_s] = _sum([y for y in yaku_of(_s) if y[0] in (Yaku.INOSHIKACHO, Yaku.TANE)])
_RIBBON_PTS: Final[dict[int, int]] = {}
for _s in _subsets(RIBBONS):
    _RIBBON_PTS[_s] = _sum([y for y in yaku_of(_s) if y[0] in (Yaku.AKATAN, Yaku.AOTAN, Yaku.AKATAN_AOTAN, Yaku.TAN)])
_KASU_PTS: Final[tuple[int, ...]] = tuple(max(0, n - 9) for n in range(25))
del _s, _ys


def total_points(mask: int) -> int:
    """This game's yaku points for a capture pile (the sum of ``yaku_of(mask)``)."""
    return (
        _LIGHT_VIEW[mask & _LIGHT_VIEW_MASK]
        + _TANE_PTS[mask & TANE]
        + _RIBBON_PTS[mask & RIBBONS]
        + _KASU_PTS[(mask & PLAINS).bit_count()]
    )


_TWOS: Final = 0x222222222222  # a count of 2 in every month


def hand_yaku(hand: int) -> Yaku | None:
    """Teshi (four of a month) or Kuttsuki (four pairs) in a dealt hand of eight.

    Four of a month with two pairs is Teshi.
    """
    if four_of_a_month(hand):
        return Yaku.TESHI
    counts = month_counts(hand)
    if counts & ~_TWOS == 0 and (counts & _TWOS).bit_count() == 4:  # every month 0 or 2, four of them 2
        return Yaku.KUTTSUKI
    return None


class Multiplier(enum.Enum):
    DOUBLE_AT_8 = "double_at_8"
    DOUBLE_AT_7 = "double_at_7"
    KOIKOI = "koikoi"
    LOSER_CALLED = "loser_called"


@dataclass(frozen=True, slots=True)
class Breakdown:
    """The count of one round, step by step.

    ``yaku`` lists the winner's yaku with points; ``base`` is their sum;
    ``multipliers`` lists each factor with its reason; ``score`` is the base
    times every factor; ``payment`` is the score capped at what the loser has
    left (``cap`` is None when there is no cap: Nintendo's rules).
    """

    rules: Rules
    yaku: tuple[tuple[Yaku, int], ...]
    base: int
    doubled: bool
    multiplier: int
    multipliers: tuple[tuple[Multiplier, int, str], ...]
    score: int
    cap: int | None
    payment: int
    calls: int = 0
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, object]:
        return {
            "yaku": [{"id": y.value, "points": p} for y, p in self.yaku],
            "base": self.base,
            "doubled": self.doubled,
            "multiplier": self.multiplier,
            "score": self.score,
            "payment": self.payment,
        }

    def lines(self, lang: str = "en") -> list[str]:
        """The breakdown in words, one line per step (``lang``: ``en`` or ``ja``)."""
        ja = lang == "ja"
        names = [_yname(y, lang) + _extras(y, p, lang) for y, p in self.yaku]
        base_w, score_w = ("基本点", "得点") if ja else ("Base", "Score")
        width = max([_width(n) for n in names] + [10])
        out = [f"  {_pad(n, width)}  {p:>3}" for n, (_, p) in zip(names, self.yaku, strict=True)]
        out.append(f"  {_pad(base_w, width)}  {self.base:>3}")
        for kind, factor, reason in self.multipliers:
            out.append(f"  × {factor}  {_reason_ja(kind, self.calls) if ja else reason}")
        if not self.multipliers:
            out.append("  × 1  " + ("倍率なし" if ja else "no multiplier"))
        out.append(f"  {_pad(score_w, width)}  {self.score:>3}")
        if ja:
            if self.cap is None:
                out.append(f"  支払い {self.payment}点（任天堂のルールでは上限なし）")
            elif self.payment < self.score:
                out.append(f"  支払い {self.payment}点（相手の残りの持ち点{self.cap}点が上限）")
            else:
                out.append(f"  支払い {self.payment}点（相手の持ち点は{self.cap}点）")
            out.extend(f"  注：{_NOTES_JA.get(n, n)}" for n in self.notes)
            return out
        if self.cap is None:
            out.append(f"  Payment: {self.payment} (no cap under Nintendo's rules)")
        elif self.payment < self.score:
            out.append(f"  Payment: {self.payment} (capped at the {self.cap} points the loser has left)")
        else:
            out.append(f"  Payment: {self.payment} (the loser has {self.cap} left)")
        out.extend(f"  Note: {n}" for n in self.notes)
        return out


# The yaku that grow with extra cards: (points without extras, the extra card in English, in Japanese).
_GROWS: Final[dict[Yaku, tuple[int, str, str]]] = {
    Yaku.INOSHIKACHO: (5, "tane", "タネ"),
    Yaku.AKATAN: (5, "ribbon", "短冊"),
    Yaku.AOTAN: (5, "ribbon", "短冊"),
    Yaku.AKATAN_AOTAN: (10, "ribbon", "短冊"),
    Yaku.TANE: (1, "tane", "タネ"),
    Yaku.TAN: (1, "ribbon", "短冊"),
    Yaku.KASU: (1, "plain", "カス"),
}


def _extras(y: Yaku, points: int, lang: str) -> str:
    """`` 5 + 2 more tane =`` when a yaku counts extra cards (nothing otherwise)."""
    grows = _GROWS.get(y)
    if grows is None or points <= grows[0]:
        return ""
    least, en, ja = grows
    more = points - least
    if lang == "ja":
        return f"  {least} + {ja}{more}枚 ="
    return f"  {least} + {more} more {en if more == 1 or en == 'tane' else en + 's'} ="


_NO_YAKU_NOTE = "no yaku: nothing to pay"
_NOTES_JA = {_NO_YAKU_NOTE: "役がないので支払いはありません"}


def _reason_ja(kind: Multiplier, calls: int) -> str:
    if kind is Multiplier.DOUBLE_AT_8:
        return "基本点が8点以上で2倍"
    if kind is Multiplier.DOUBLE_AT_7:
        return "基本点が7点以上で2倍（任天堂）"
    if kind is Multiplier.KOIKOI:
        return f"この回のこいこい{calls}回"
    return "負けた人がこいこいしていた（任天堂）"


def _width(text: str) -> int:
    """Columns on a terminal: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _yname(y: Yaku, lang: str) -> str:
    return y.name_ja if lang == "ja" else y.name_en


def count_round(
    captures: int,
    *,
    calls: int = 0,
    double_at_8: bool = True,
    loser_points: int = 25,
    rules: Rules = Rules.GAME,
    loser_called: bool = False,
) -> Breakdown:
    """The count for a winner holding ``captures``.

    This game: base = yaku points; ×2 when base ≥ 8 and ``double_at_8``;
    × (1 + ``calls``), the koi-koi calls by both players this round; payment
    capped at ``loser_points``. Nintendo: ×2 at 7+, ×2 when the loser had
    called koi-koi (``loser_called``; ``calls`` is not used), no cap.
    """
    ys = tuple(yaku_of(captures, rules))
    base = _sum(list(ys))
    mults: list[tuple[Multiplier, int, str]] = []
    doubled = False
    notes: list[str] = []
    if rules is Rules.GAME:
        if double_at_8 and base >= 8:
            doubled = True
            mults.append((Multiplier.DOUBLE_AT_8, 2, "base of 8 or more is doubled"))
        if calls:
            word = "call" if calls == 1 else "calls"
            mults.append((Multiplier.KOIKOI, 1 + calls, f"{calls} koi-koi {word} this round"))
    else:
        if base >= 7:
            doubled = True
            mults.append((Multiplier.DOUBLE_AT_7, 2, "base of 7 or more is doubled (Nintendo)"))
        if loser_called:
            mults.append((Multiplier.LOSER_CALLED, 2, "the loser had called koi-koi (Nintendo)"))
    score = base
    for _, f, _ in mults:
        score *= f
    multiplier = 1
    for m, f, _ in mults:
        if m in (Multiplier.KOIKOI, Multiplier.LOSER_CALLED):
            multiplier *= f
    if base == 0:
        notes.append(_NO_YAKU_NOTE)
    if rules is Rules.GAME:
        cap: int | None = loser_points
        payment = min(score, loser_points)
    else:
        cap = None
        payment = score
    return Breakdown(
        rules=rules,
        yaku=ys,
        base=base,
        doubled=doubled,
        multiplier=multiplier,
        multipliers=tuple(mults),
        score=score,
        cap=cap,
        payment=payment,
        calls=calls,
        notes=tuple(notes),
    )


def count_hand_yaku(yaku: Yaku, loser_points: int = 25) -> Breakdown:
    """A dealt hand yaku: 6 points, never doubled, no koi-koi, capped."""
    score = HAND_YAKU_POINTS
    return Breakdown(
        rules=Rules.GAME,
        yaku=((yaku, score),),
        base=score,
        doubled=False,
        multiplier=1,
        multipliers=(),
        score=score,
        cap=loser_points,
        payment=min(score, loser_points),
    )
