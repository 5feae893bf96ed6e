"""The 48 hanafuda cards, as small integers and 48-bit masks.

A card is an ``int`` from 0 to 47 in month order (pine first, paulownia last),
four cards a month, in the order the rules page lists them. A set of cards is
an ``int`` mask with bit ``card`` set, like python-chess's squares and
bitboards. Card ids are the seed's image names (``matsu_crane``,
``kiku_sake_cup``, ``kiri_plain_yellow``, ...).
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from ..errors import LocalError

__all__ = [
    "AKATAN",
    "AOTAN",
    "CARDS",
    "CARD_IDS",
    "CURTAIN",
    "INOSHIKACHO",
    "LIGHTS",
    "MONTH_MASKS",
    "MONTH_NAMES_EN",
    "MONTH_NAMES_JA",
    "MOON",
    "PLAINS",
    "RAINMAN",
    "RIBBONS",
    "SAKE_CUP",
    "TANE",
    "Card",
    "CardInfo",
    "Kind",
    "UnknownCard",
    "card_from_id",
    "cards_of",
    "mask_of",
    "suggest_card_ids",
]

Card = int
"""A card: 0 (``matsu_crane``) to 47 (``kiri_plain_2``)."""


class Kind(enum.IntEnum):
    """A card's kind, valued by its card points (used to pick the first dealer)."""

    LIGHT = 20
    TANE = 10
    RIBBON = 5
    PLAIN = 1


class Ribbon(enum.Enum):
    NONE = "none"
    AKATAN = "akatan"  # red ribbon with poem
    AOTAN = "aotan"  # blue ribbon
    PLAIN_RED = "plain_red"  # red ribbon without writing


@dataclass(frozen=True, slots=True)
class CardInfo:
    card: Card
    id: str
    month: int  # 1..12
    kind: Kind
    ribbon: Ribbon
    name_en: str
    name_ja: str

    @property
    def value(self) -> int:
        return int(self.kind)


MONTH_NAMES_EN = (
    "Pine", "Plum", "Cherry", "Wisteria", "Iris", "Peony",
    "Bush Clover", "Pampas", "Chrysanthemum", "Maple", "Willow", "Paulownia",
)  # fmt: skip
MONTH_NAMES_JA = ("松", "梅", "桜", "藤", "菖蒲", "牡丹", "萩", "芒", "菊", "紅葉", "柳", "桐")

L, T, R, P = Kind.LIGHT, Kind.TANE, Kind.RIBBON, Kind.PLAIN
_AK, _AO, _PR, _NO = Ribbon.AKATAN, Ribbon.AOTAN, Ribbon.PLAIN_RED, Ribbon.NONE

# (id, kind, ribbon, English name, Japanese name), four per month in order.
_TABLE: tuple[tuple[str, Kind, Ribbon, str, str], ...] = (
    ("matsu_crane", L, _NO, "Pine with Crane", "松に鶴"),
    ("matsu_ribbon", R, _AK, "Pine with Red Poem Ribbon", "松に赤短"),
    ("matsu_plain_1", P, _NO, "Pine plain 1", "松のカス1"),
    ("matsu_plain_2", P, _NO, "Pine plain 2", "松のカス2"),
    ("ume_warbler", T, _NO, "Plum with Warbler", "梅に鶯"),
    ("ume_ribbon", R, _AK, "Plum with Red Poem Ribbon", "梅に赤短"),
    ("ume_plain_1", P, _NO, "Plum plain 1", "梅のカス1"),
    ("ume_plain_2", P, _NO, "Plum plain 2", "梅のカス2"),
    ("sakura_curtain", L, _NO, "Cherry with Curtain", "桜に幕"),
    ("sakura_ribbon", R, _AK, "Cherry with Red Poem Ribbon", "桜に赤短"),
    ("sakura_plain_1", P, _NO, "Cherry plain 1", "桜のカス1"),
    ("sakura_plain_2", P, _NO, "Cherry plain 2", "桜のカス2"),
    ("fuji_cuckoo", T, _NO, "Wisteria with Cuckoo", "藤に不如帰"),
    ("fuji_ribbon", R, _PR, "Wisteria with Red Ribbon", "藤に短冊"),
    ("fuji_plain_1", P, _NO, "Wisteria plain 1", "藤のカス1"),
    ("fuji_plain_2", P, _NO, "Wisteria plain 2", "藤のカス2"),
    ("ayame_bridge", T, _NO, "Iris with Eight-plank Bridge", "菖蒲に八橋"),
    ("ayame_ribbon", R, _PR, "Iris with Red Ribbon", "菖蒲に短冊"),
    ("ayame_plain_1", P, _NO, "Iris plain 1", "菖蒲のカス1"),
    ("ayame_plain_2", P, _NO, "Iris plain 2", "菖蒲のカス2"),
    ("botan_butterfly", T, _NO, "Peony with Butterflies", "牡丹に蝶"),
    ("botan_ribbon", R, _AO, "Peony with Blue Ribbon", "牡丹に青短"),
    ("botan_plain_1", P, _NO, "Peony plain 1", "牡丹のカス1"),
    ("botan_plain_2", P, _NO, "Peony plain 2", "牡丹のカス2"),
    ("hagi_boar", T, _NO, "Bush Clover with Boar", "萩に猪"),
    ("hagi_ribbon", R, _PR, "Bush Clover with Red Ribbon", "萩に短冊"),
    ("hagi_plain_1", P, _NO, "Bush Clover plain 1", "萩のカス1"),
    ("hagi_plain_2", P, _NO, "Bush Clover plain 2", "萩のカス2"),
    ("susuki_moon", L, _NO, "Pampas with Moon", "芒に月"),
    ("susuki_geese", T, _NO, "Pampas with Geese", "芒に雁"),
    ("susuki_plain_1", P, _NO, "Pampas plain 1", "芒のカス1"),
    ("susuki_plain_2", P, _NO, "Pampas plain 2", "芒のカス2"),
    ("kiku_sake_cup", T, _NO, "Chrysanthemum with Sake Cup", "菊に盃"),
    ("kiku_ribbon", R, _AO, "Chrysanthemum with Blue Ribbon", "菊に青短"),
    ("kiku_plain_1", P, _NO, "Chrysanthemum plain 1", "菊のカス1"),
    ("kiku_plain_2", P, _NO, "Chrysanthemum plain 2", "菊のカス2"),
    ("momiji_deer", T, _NO, "Maple with Deer", "紅葉に鹿"),
    ("momiji_ribbon", R, _AO, "Maple with Blue Ribbon", "紅葉に青短"),
    ("momiji_plain_1", P, _NO, "Maple plain 1", "紅葉のカス1"),
    ("momiji_plain_2", P, _NO, "Maple plain 2", "紅葉のカス2"),
    ("yanagi_rainman", L, _NO, "Willow with Rain Man", "柳に小野道風"),
    ("yanagi_swallow", T, _NO, "Willow with Swallow", "柳に燕"),
    ("yanagi_ribbon", R, _PR, "Willow with Red Ribbon", "柳に短冊"),
    ("yanagi_lightning", P, _NO, "Willow with Lightning (plain)", "柳のカス"),
    ("kiri_phoenix", L, _NO, "Paulownia with Phoenix", "桐に鳳凰"),
    ("kiri_plain_yellow", P, _NO, "Paulownia plain (yellow)", "桐のカス（黄）"),
    ("kiri_plain_1", P, _NO, "Paulownia plain 1", "桐のカス1"),
    ("kiri_plain_2", P, _NO, "Paulownia plain 2", "桐のカス2"),
)

CARDS: tuple[CardInfo, ...] = tuple(
    CardInfo(i, cid, i // 4 + 1, kind, rib, en, ja) for i, (cid, kind, rib, en, ja) in enumerate(_TABLE)
)
CARD_IDS: tuple[str, ...] = tuple(c.id for c in CARDS)
_BY_ID: dict[str, Card] = {cid: i for i, cid in enumerate(CARD_IDS)}

MONTH_OF: Final[tuple[int, ...]] = tuple(i // 4 for i in range(48))  # 0-based month index
MONTH_MASKS: Final[tuple[int, ...]] = tuple(0xF << (4 * m) for m in range(12))
CARD_MONTH_MASK: Final[tuple[int, ...]] = tuple(MONTH_MASKS[i // 4] for i in range(48))


def _mask(pred: Iterable[bool]) -> int:
    m = 0
    for i, ok in enumerate(pred):
        if ok:
            m |= 1 << i
    return m


LIGHTS: Final = _mask(c.kind is L for c in CARDS)
TANE: Final = _mask(c.kind is T for c in CARDS)
RIBBONS: Final = _mask(c.kind is R for c in CARDS)
PLAINS: Final = _mask(c.kind is P for c in CARDS)
AKATAN: Final = _mask(c.ribbon is _AK for c in CARDS)
AOTAN: Final = _mask(c.ribbon is _AO for c in CARDS)
RAINMAN: Final = 1 << _BY_ID["yanagi_rainman"]
SAKE_CUP: Final = 1 << _BY_ID["kiku_sake_cup"]
CURTAIN: Final = 1 << _BY_ID["sakura_curtain"]
MOON: Final = 1 << _BY_ID["susuki_moon"]
INOSHIKACHO: Final = (1 << _BY_ID["hagi_boar"]) | (1 << _BY_ID["momiji_deer"]) | (1 << _BY_ID["botan_butterfly"])


def suggest_card_ids(text: str) -> tuple[str, ...]:
    """The valid ids nearest to ``text``, in card order where several fit equally.

    Case, spaces and dashes are ignored (``MATSU_CRANE`` → ``matsu_crane``); a month's name or a card's
    last word names its cards (``sakura`` → the four cherry cards, ``moon`` → ``susuki_moon``);
    otherwise the closest spellings (``sakura_curtan`` → ``sakura_curtain``).
    """
    key = "_".join(text.strip().lower().replace("-", " ").replace("_", " ").split())
    if key in _BY_ID:
        return (key,)
    if not key:
        return ()
    words = [cid for cid in CARD_IDS if cid.startswith(key + "_") or cid.endswith("_" + key)]
    if words:
        return tuple(words[:6])
    return tuple(difflib.get_close_matches(key, CARD_IDS, n=3, cutoff=0.5))


class UnknownCard(LocalError, ValueError):
    """A card id that is not one of the 48; ``suggestions`` holds the nearest valid ids."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.suggestions = suggest_card_ids(text)
        hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"unknown card id {text!r}{hint}")


def card_from_id(text: str) -> Card:
    """The card named by ``text`` (a seed image name such as ``kiku_sake_cup``)."""
    try:
        return _BY_ID[text]
    except KeyError:
        raise UnknownCard(text) from None


def cards_of(mask: int) -> list[Card]:
    """The cards in ``mask``, in card order."""
    out: list[Card] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def iter_cards(mask: int) -> Iterator[Card]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def mask_of(cards: Iterable[Card]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


# Each month is 4 adjacent bits (a nibble): these count within every month at once.
_N1: Final = 0x111111111111  # bit 0 of every month
_M5: Final = 0x555555555555
_M3: Final = 0x333333333333


def month_counts(mask: int) -> int:
    """Each 4-bit month of the result holds how many cards of that month ``mask`` has."""
    x = mask - ((mask >> 1) & _M5)
    return (x & _M3) + ((x >> 2) & _M3)


def four_of_a_month(mask: int) -> bool:
    """True when ``mask`` holds all four cards of some month."""
    return bool(mask & (mask >> 1) & (mask >> 2) & (mask >> 3) & _N1)


def card_name(card: Card, lang: str = "en") -> str:
    info = CARDS[card]
    return info.name_ja if lang == "ja" else info.name_en
