"""The prompts: every answer is either an action or a clear message and the same question again."""

from __future__ import annotations

import io
import random
from collections.abc import Callable

import pytest

from koikoi.client.tui import ActionPrompt, HumanPlayer, Look, PlayerQuit, Seats
from koikoi.client.tui.render import matches_in
from koikoi.engine import CARD_IDS, CARDS, KOIKOI, PLAY, PLAY_AT, SHOBU, Match, Phase, SeatView, SeededDeal, Settings
from koikoi.engine.actions import CHOOSE
from koikoi.engine.bots import make_bot

LOOK = Look(width=100)


def find(pred: Callable[[Match, SeatView], bool]) -> tuple[Match, SeatView]:
    """The first decision in seeded random matches where ``pred`` holds."""
    for k in range(200):
        m = Match(Settings(), SeededDeal(bytes([k % 256, k // 256]) * 16), first_dealer=k % 2)
        bot = make_bot("random", random.Random(k))
        while not m.is_over:
            v = m.view(m.to_move)
            if pred(m, v):
                return m, v
            m.apply(bot.choose(v))
    raise AssertionError("no such position")


def two_matches(v: SeatView) -> int | None:
    for i, c in enumerate(v.hand):
        if len(matches_in(c, v.table)) == 2:
            return i
    return None


def play(view: SeatView, *lines: str) -> tuple[object, str]:
    inp = io.StringIO("".join(line + "\n" for line in lines))
    out = io.StringIO()
    player = HumanPlayer(inp, out, Seats(view.seat, ("You", "Computer")), LOOK)
    try:
        action: object = player.choose(view)
    except PlayerQuit as q:
        action = q
    return action, out.getvalue()


def test_a_card_by_number_or_by_id() -> None:
    _m, v = find(lambda m, v: v.phase is Phase.PLAY and len(v.hand) == 8)
    plain = next(i for i, c in enumerate(v.hand) if len(matches_in(c, v.table)) != 2)
    action, out = play(v, str(plain + 1))
    assert action is PLAY[v.hand[plain]]
    assert "Your hand: 8 cards" in out and "Card to play (1–8" in out
    action, _ = play(v, CARD_IDS[v.hand[plain]])
    assert action is PLAY[v.hand[plain]]
    action, _ = play(v, "  " + "０１２３４５６７８９"[plain + 1] + " ")  # full-width digits, spaces
    assert action is PLAY[v.hand[plain]]


def test_bad_card_input_explains_and_asks_again() -> None:
    _m, v = find(lambda m, v: v.phase is Phase.PLAY and len(v.hand) == 6)
    not_mine = next(c for c in range(48) if c not in v.hand)
    plain = next(i for i, c in enumerate(v.hand) if len(matches_in(c, v.table)) != 2)
    action, out = play(v, "7", "0", "", "xyzzy", "matsu_cran", CARD_IDS[not_mine], "koikoi", "k", str(plain + 1))
    assert action is PLAY[v.hand[plain]]
    assert "7 is not a card in your hand (1–6)." in out
    assert "0 is not a card in your hand (1–6)." in out
    assert "Type the number of the card to play (1–6)" in out
    assert "xyzzy is not a card number (1–6) or a card id." in out
    assert "Did you mean matsu_crane" in out
    assert f"{CARDS[not_mine].name_en} ({CARD_IDS[not_mine]}) is not in your hand." in out
    assert "Now play a card from your hand (1–6)." in out
    assert "k is not a card number (1–6) or a card id." in out
    assert out.count("Card to play (1–6") == 9
    assert "Traceback" not in out


def test_the_capture_choice_when_two_cards_match() -> None:
    _m, v = find(lambda m, v: v.phase is Phase.PLAY and two_matches(v) is not None)
    i = two_matches(v)
    assert i is not None
    card = v.hand[i]
    a, b = matches_in(card, v.table)
    action, out = play(v, str(i + 1), "3", "x", CARD_IDS[card], "2")
    assert action is PLAY_AT[card][b]
    assert f"{CARDS[card].name_en} matches two field cards:" in out
    assert f"  1  {CARDS[a].name_en}" in out and f"  2  {CARDS[b].name_en}" in out
    assert "3 is not one of the choices (1–2)." in out
    assert "x is not one of the choices (1–2) or a card id." in out
    assert f"{CARDS[card].name_en} is not one of the choices" in out
    # by card id, with the star notation, and going back to pick another card
    assert play(v, str(i + 1), CARD_IDS[a])[0] is PLAY_AT[card][a]
    assert play(v, f"{CARD_IDS[card]}*{CARD_IDS[b]}")[0] is PLAY_AT[card][b]
    other = next(j for j, c in enumerate(v.hand) if j != i and len(matches_in(c, v.table)) != 2)
    action, out = play(v, str(i + 1), "b", str(other + 1))
    assert action is PLAY[v.hand[other]] and "Pick another card." in out


def test_the_drawn_card_choice() -> None:
    _m, v = find(lambda m, v: v.phase is Phase.CHOOSE)
    targets = [x.target for x in v.legal_actions]
    assert v.pending_draw is not None
    action, out = play(v, "9", "", "2")
    assert action is CHOOSE[targets[1]]
    assert f"Which field card does the drawn {CARDS[v.pending_draw].name_en} capture?" in out
    assert "9 is not one of the choices (1–2)." in out
    assert "Type 1 or 2 for the field card to capture" in out
    assert play(v, CARD_IDS[targets[0]])[0] is CHOOSE[targets[0]]


def test_koikoi_or_shobu_shows_what_shobu_pays_now() -> None:
    m, v = find(lambda m, v: v.phase is Phase.DECIDE and KOIKOI in v.legal_actions)
    bd = m.shobu_breakdown(v.seat)
    action, out = play(v, "maybe", "k")
    assert action is KOIKOI
    pts = "1 point" if bd.payment == 1 else f"{bd.payment} points"
    assert f"If you call shōbu now, you win {pts}; the count:" in out
    for line in bd.lines("en"):
        assert line in out
    assert f"the multiplier at ×{v.multiplier + 1}" in out
    assert "Type k to call koi-koi (play on) or s to call shōbu" in out
    assert play(v, "s")[0] is SHOBU
    assert play(v, "Shōbu")[0] is SHOBU
    assert play(v, "koi-koi")[0] is KOIKOI


def test_on_the_last_turn_only_shobu() -> None:
    _m, v = find(lambda m, v: v.phase is Phase.DECIDE and KOIKOI not in v.legal_actions)
    action, out = play(v, "k", "")
    assert action is SHOBU
    assert "only shōbu is offered" in out
    assert "Press Enter (or s) to call shōbu" in out


def test_help_and_table_then_an_answer() -> None:
    _m, v = find(lambda m, v: v.phase is Phase.PLAY and len(v.hand) == 8)
    plain = next(i for i, c in enumerate(v.hand) if len(matches_in(c, v.table)) != 2)
    action, out = play(v, "h", "t", str(plain + 1))
    assert action is PLAY[v.hand[plain]]
    assert "Help:" in out and out.count("Your hand: 8 cards") == 2


@pytest.mark.parametrize("lines", [("q", "y"), ("QUIT", "yes"), ("9", "q", "Y"), (), ("q",)])
def test_q_asks_first_then_quits_and_end_of_input_quits(lines: tuple[str, ...]) -> None:
    _m, v = find(lambda m, v: v.phase is Phase.PLAY)
    result, out = play(v, *lines)
    assert isinstance(result, PlayerQuit)
    assert result.reason == ("quit" if len(lines) > 1 else "eof")
    assert ("Leave the match?" in out) == bool(lines)


def test_q_then_no_goes_on_with_the_match() -> None:
    """A ``q`` typed by mistake ends nothing: the question is asked, anything but y goes back to the move."""
    _m, v = find(lambda m, v: v.phase is Phase.PLAY and len(v.hand) == 8)
    plain = next(i for i, c in enumerate(v.hand) if len(matches_in(c, v.table)) != 2)
    action, out = play(v, "q", "n", str(plain + 1))
    assert action is PLAY[v.hand[plain]]
    assert "Leave the match?" in out


class _BadOnce(io.StringIO):
    """An input whose first line cannot be decoded."""

    bad = True

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        if self.bad:
            self.bad = False
            raise UnicodeDecodeError("ascii", b"\xff", 0, 1, "ordinal not in range(128)")
        return super().readline()


def test_undecodable_input_is_asked_again() -> None:
    _m, v = find(lambda m, v: v.phase is Phase.PLAY and len(v.hand) == 8)
    plain = next(i for i, c in enumerate(v.hand) if len(matches_in(c, v.table)) != 2)
    out = io.StringIO()
    action = HumanPlayer(_BadOnce(f"{plain + 1}\n"), out, Seats(v.seat), LOOK).choose(v)
    assert action is PLAY[v.hand[plain]]
    assert out.getvalue().count("Card to play") == 2 and "Traceback" not in out.getvalue()


def test_the_prompt_is_sans_io() -> None:
    m, v = find(lambda m, v: v.phase is Phase.PLAY and two_matches(v) is not None)
    i = two_matches(v)
    assert i is not None
    p = ActionPrompt(v, Seats(v.seat), LOOK)
    assert p.context() and p.question().startswith("Card to play")
    r = p.feed("99")
    assert r.action is None and not r.quit and r.lines
    r = p.feed(str(i + 1))
    assert r.action is None and p.question().startswith("Capture which with")
    r = p.feed("1")
    assert r.action is PLAY_AT[v.hand[i]][matches_in(v.hand[i], v.table)[0]]
    assert ActionPrompt(v, Seats(v.seat), LOOK).feed("q").quit
    with pytest.raises(ValueError):
        ActionPrompt(m.view(1 - v.seat), Seats(1 - v.seat), LOOK)


def test_the_move_clock_and_a_warning_on_lines_of_their_own() -> None:
    import threading
    import time

    _m, v = find(lambda m, v: v.phase is Phase.PLAY and len(v.hand) == 8)
    plain = next(i for i, c in enumerate(v.hand) if len(matches_in(c, v.table)) != 2)
    warned = threading.Event()

    class SlowInput(io.StringIO):
        """Answers only once the warning was shown (or after 5 s)."""

        def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
            warned.wait(5)
            return f"{plain + 1}\n"

    class Out(io.StringIO):
        def write(self, s: str) -> int:
            if "Hurry:" in s:
                warned.set()
            return super().write(s)

    out = Out()
    player = HumanPlayer(SlowInput(), out, Seats(0, ("You", "Computer")), LOOK)
    player.warn_at = 89.8  # the warning comes 0.2 s after the question
    action = player.choose(v, time.monotonic() + 90)
    assert action is PLAY[v.hand[plain]]
    text = out.getvalue()
    lines = text.split("\n")
    assert "Time left for this move: 1:30" in lines
    # the warning interrupts the open question: a line break first, the warning alone, the question again
    i = next(k for k, ln in enumerate(lines) if ln.startswith("Hurry:"))
    assert lines[i] == "Hurry: 1:30 left for this move." and lines[i - 1].startswith("Card to play (1–8")
    assert lines[i + 1].startswith("Card to play (1–8")
    # without a deadline: no clock
    _, out2 = play(v, str(plain + 1))
    assert "Time left" not in out2 and "Hurry" not in out2


def test_card_star_target_with_one_capture_plays_the_card_and_ids_in_any_case() -> None:
    """docs/players.md's ``CARD*TARGET`` works whenever TARGET is what the card takes, not only with two matches."""
    _m, v = find(lambda m, v: v.phase is Phase.PLAY and any(len(matches_in(c, v.table)) == 1 for c in v.hand))
    card = next(c for c in v.hand if len(matches_in(c, v.table)) == 1)
    (target,) = matches_in(card, v.table)
    assert play(v, f"{CARD_IDS[card]}*{CARD_IDS[target]}")[0] is PLAY[card]
    assert play(v, f"{CARD_IDS[card]}*{CARD_IDS[target]}".upper())[0] is PLAY[card]
    assert play(v, CARD_IDS[card].upper())[0] is PLAY[card]
    # a same-month target that is not on the field is still refused, naming what the card takes
    other = next(c for c in range(48) if CARDS[c].month == CARDS[card].month and c not in (card, target)
                 and c not in v.table)  # fmt: skip
    plain = next(i for i, c in enumerate(v.hand) if len(matches_in(c, v.table)) != 2)
    action, out = play(v, f"{CARD_IDS[card]}*{CARD_IDS[other]}", str(plain + 1))
    assert action is PLAY[v.hand[plain]]
    assert f"{CARDS[other].name_en} is not on the field; {CARDS[card].name_en} takes {CARDS[target].name_en}" in out


def test_a_number_out_of_range_is_answered_as_a_number_never_with_card_ids() -> None:
    _m, v = find(lambda m, v: v.phase is Phase.PLAY and len(v.hand) == 8)
    plain = next(i for i, c in enumerate(v.hand) if len(matches_in(c, v.table)) != 2)
    action, out = play(v, "-1", "1.5", "+3", str(plain + 1))
    assert action is PLAY[v.hand[plain]]
    assert "-1 is not a card number: type 1–8." in out and "1.5 is not a card number: type 1–8." in out
    assert "+3 is not a card number: type 1–8." in out
    assert "Did you mean" not in out and "plain_1" not in out
    _m, v = find(lambda m, v: v.phase is Phase.CHOOSE)
    targets = [x.target for x in v.legal_actions]
    action, out = play(v, "-1", "1")
    assert action is CHOOSE[targets[0]]
    assert "-1 is not one of the choices: type 1 or 2." in out and "Did you mean" not in out
