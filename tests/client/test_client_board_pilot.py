"""The board driven by keys through Textual's pilot: whole practice matches, the questions, leaving.

The match loop runs in its own thread and talks to the board only through ``BoardTable``, as the
network loop does; the test presses keys like a person.
"""

from __future__ import annotations

import asyncio
import random
import time
from functools import cache
from pathlib import Path

import pytest
from textual.containers import VerticalScroll

from koikoi.client.commands.practice import _practice
from koikoi.client.tui import Look, PlayerQuit, Seats
from koikoi.client.tui.app import BoardApp, BoardTable
from koikoi.engine import Match, SeededDeal, Settings
from koikoi.engine.actions import KOIKOI
from koikoi.engine.bots import make_bot

SEATS = Seats(0, ("You", "Computer"))


class KeyPlayer:
    """Answers with keys: a hand card by number (or arrows + Enter), the first of two matches (or a
    click), koi-koi the first time and shōbu after, Enter between rounds, no to "play again?"."""

    def __init__(self, again: tuple[str, ...] = ("n",)) -> None:
        self.keys: list[str] = []
        self.koikoi = 0
        self.called = False
        """Whether the board then showed the koi-koi call (the multiplier's calls list) after ``k``."""
        self._asked_k = False
        self.seen_modes: set[str] = set()
        self.again = list(again)

    def answer(self, app: BoardApp) -> list[str]:
        m = app.model
        self.seen_modes.add(m.mode)
        if self._asked_k:
            self._asked_k = False
            self.called = any(seat == 0 for seat, _ in m.calls)
        if m.mode == "play":
            assert m.view is not None
            n = len(m.view.hand)
            if len(self.keys) % 3 == 0 and n > 1:
                return ["right", "left", "enter"]  # the selection, moved and back
            return [str(1 + len(self.keys) % n)]
        if m.mode in ("pick", "choose"):
            return ["2"] if len(self.keys) % 2 else ["right", "enter"]
        if m.mode == "decide":
            assert m.view is not None
            if self.koikoi == 0 and KOIKOI in m.view.legal_actions:
                self.koikoi += 1
                self._asked_k = True
                return ["k"]
            return ["s"]
        if m.mode == "round":
            return ["enter"]
        if m.mode == "again":
            return [self.again.pop(0)]
        return []


async def _play_by_keys(
    seed: bytes,
    lang: str = "en",
    size: tuple[int, int] = (80, 24),
    player: KeyPlayer | None = None,
    transcripts: list[Path] | None = None,
) -> tuple[BoardApp, KeyPlayer]:
    settings = Settings(rounds=6)
    bot = make_bot("greedy", random.Random(1))
    player = player or KeyPlayer()
    seed_text = "again" if transcripts is not None else None

    def loop(table: BoardTable) -> int:
        return _practice(table, bot, settings, seed, seed_text, ["Practice."], transcripts)

    app = BoardApp(SEATS, Look(lang=lang, width=size[0]), 6, start=loop)
    async with app.run_test(size=size) as pilot:
        deadline = time.monotonic() + 60
        while app.is_running and app.thread is not None and app.thread.is_alive():
            assert time.monotonic() < deadline, "the match does not end"
            keys = player.answer(app)
            if not keys:
                await pilot.pause(0.005)
                continue
            before = (app.questions, app.model.mode)
            player.keys += keys
            await pilot.press(*keys)
            while app.is_running and (app.questions, app.model.mode) == before and app.thread.is_alive():
                await pilot.pause(0.002)  # until the match loop asks the next question
    return app, player


@cache
def played(seed: bytes, lang: str = "en", size: tuple[int, int] = (80, 24)) -> tuple[BoardApp, KeyPlayer]:
    return asyncio.run(_play_by_keys(seed, lang, size))


def test_a_whole_practice_match_played_by_keys() -> None:
    app, player = played(b"\x01" * 32)  # a deal (protocol v2) with a koi-koi decision for the player
    assert app.thread_error is None, app.thread_error
    assert app.thread_result == 0
    assert app.model.match_end is not None
    _winner, points = app.model.match_end
    assert sum(points) == 50
    assert {"play", "round", "again"} <= player.seen_modes
    assert "decide" in player.seen_modes and player.koikoi == 1 and player.called  # k called koi-koi
    assert any(e.startswith("The match is over") for e in app.model.events)


def test_the_same_seed_by_keys_in_japanese_ends_the_same() -> None:
    en, _ = played(b"\x07" * 32)
    ja, _ = played(b"\x07" * 32, "ja", (120, 40))
    assert en.model.match_end == ja.model.match_end
    assert any(e.startswith("対戦終了") for e in ja.model.events)


def _position() -> Match:
    return Match(Settings(), SeededDeal(b"\x05" * 32), first_dealer=0)


async def _asking(keys: list[str], *, network: bool = False) -> tuple[BoardApp, object, list[str], str]:
    """Ask seat 0's first decision, press ``keys``: the answer (an action, a PlayerQuit or None),
    what ``on_leave`` was told (network), and the class of the screen on top."""
    m = _position()
    result: list[object] = []
    left: list[str] = []

    def loop(table: BoardTable) -> None:
        table.show(m.log, m.view(0))
        try:
            result.append(table.choose(m.view(0), time.monotonic() + 90))
        except PlayerQuit as q:
            result.append(q)

    app = BoardApp(SEATS, Look(width=80), 6, start=loop, network=network)
    if network:
        app.on_leave = left.append
    async with app.run_test(size=(80, 24)) as pilot:
        while app.model.mode != "play":
            await pilot.pause(0.005)
        for k in keys:
            await pilot.press(k)
            await pilot.pause()
        for _ in range(100):
            if result:
                break
            await pilot.pause(0.005)
        top = type(app.screen).__name__ if app.is_running else ""
        return app, (result[0] if result else None), left, top


def test_q_asks_before_leaving_and_n_stays() -> None:
    app, answer, _, top = asyncio.run(_asking(["q"]))
    assert top == "ConfirmScreen" and answer is None  # still asking
    app, answer, _, top = asyncio.run(_asking(["q", "n", "9"]))
    assert answer is None and app.model.mode == "play" and top == "Screen"
    assert app.model.message == "9 is not a card in your hand (1–8)."
    app, answer, _, _ = asyncio.run(_asking(["q", "y"]))
    assert isinstance(answer, PlayerQuit) and answer.reason == "quit"
    assert app.leave_reason == "quit"


def test_q_in_network_play_resigns_through_on_leave_and_ctrl_c_interrupts() -> None:
    app, answer, left, _ = asyncio.run(_asking(["q", "y"], network=True))
    assert left == ["quit"] and isinstance(answer, PlayerQuit)
    assert app.model.mode == "watch" and app.leave_reason == "quit"
    _app, answer, left, _ = asyncio.run(_asking(["ctrl+c"], network=True))
    assert left == ["interrupt"] and isinstance(answer, PlayerQuit) and answer.reason == "interrupt"


def test_help_and_yaku_lists_open_and_close() -> None:
    async def run() -> None:
        m = _position()
        app = BoardApp(SEATS, Look(width=80), 6)
        async with app.run_test(size=(80, 24)) as pilot:
            app.ui_show(m.log, m.view(0))
            app.ui_ask(m.view(0), None)
            await pilot.press("y")
            await pilot.pause()
            from koikoi.client.tui.app import InfoScreen

            assert isinstance(app.screen, InfoScreen)
            assert any("Inoshikachō" in ln for ln in app.screen.lines)
            assert any("×2 when the base is 8 or more (on in this match)" in ln for ln in app.screen.lines)
            await pilot.press("x")  # not a closing key (issue 21: Esc or y close it; the arrows scroll it)
            await pilot.pause()
            assert isinstance(app.screen, InfoScreen)
            scroll = app.screen.query_one(VerticalScroll)
            assert scroll.max_scroll_y > 0  # at 80×24 the list is longer than its window
            await pilot.press("down", "down", "down")
            await pilot.pause()
            assert scroll.scroll_y == 3
            await pilot.press("end")
            await pilot.pause()
            assert scroll.scroll_y == scroll.max_scroll_y
            await pilot.press("up")
            await pilot.pause()
            assert scroll.scroll_y == scroll.max_scroll_y - 1
            await pilot.press("y")
            await pilot.pause()
            assert type(app.screen).__name__ == "Screen"
            await pilot.press("y", "escape")
            await pilot.pause()
            assert type(app.screen).__name__ == "Screen"
            await pilot.press("h")
            await pilot.pause()
            help_screen = app.screen
            assert isinstance(help_screen, InfoScreen) and "Help" in help_screen.title_text
            await pilot.press("escape")
            await pilot.pause()
            assert app.model.mode == "play"

    asyncio.run(run())


def test_a_click_on_a_hand_card_plays_it() -> None:
    async def run() -> object:
        m = _position()
        v = m.view(0)
        app = BoardApp(SEATS, Look(width=80), 6)
        async with app.run_test(size=(80, 24)) as pilot:
            app.ui_show(m.log, v)
            fut = app.ui_ask(v, None)
            await pilot.pause()
            spot = next(h for h in app.board.hot if h.key == "hand:2")
            await pilot.click(offset=(spot.x0 + 3, spot.row))
            await pilot.pause()
            return fut.result(timeout=1) if fut.done() else app.model.mode

    from koikoi.client.tui.render import matches_in
    from koikoi.engine.actions import PLAY

    m = _position()
    card = m.view(0).hand[2]
    out = asyncio.run(run())
    if len(matches_in(card, m.view(0).table)) == 2:
        assert out == "pick"
    else:
        assert out is PLAY[card]


def test_a_trio_loop_keeps_running_while_the_board_waits_for_a_key() -> None:
    """The network's seam: trio runs in the match thread, asks through ``trio.to_thread``; its timers
    keep running while the person thinks, and ``show``/``note`` from trio return at once."""
    import trio

    from koikoi.client.tui.render import matches_in
    from koikoi.engine.actions import PLAY

    m = _position()
    v = m.view(0)
    plain = next(i for i, c in enumerate(v.hand) if len(matches_in(c, v.table)) != 2)
    ticks: list[float] = []
    answers: list[object] = []
    show_s: list[float] = []

    def body(table: BoardTable) -> str:
        async def main() -> None:
            async def ticker() -> None:
                while True:
                    ticks.append(time.monotonic())
                    await trio.sleep(0.01)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(ticker)
                t = time.perf_counter()
                table.show(m.log, v)
                table.note("Your opponent's connection dropped; the relay keeps the seat for 60 s.")
                show_s.append(time.perf_counter() - t)
                answers.append(
                    await trio.to_thread.run_sync(table.choose, v, time.monotonic() + 100, abandon_on_cancel=True)
                )
                # a moot question is withdrawn: the waiting thread gets PlayerQuit("cancelled")
                with trio.move_on_after(0.05):
                    await trio.to_thread.run_sync(table.choose, v, None, abandon_on_cancel=True)
                table.cancel()
                nursery.cancel_scope.cancel()

        trio.run(main)
        return "done"

    async def run() -> tuple[int, str]:
        app = BoardApp(SEATS, Look(width=80), 6, start=body, network=True, pause_between_rounds=False)
        async with app.run_test(size=(80, 24)) as pilot:
            while app.model.mode != "play":
                await pilot.pause(0.005)
            before = len(ticks)
            await pilot.pause(0.3)
            during = len(ticks) - before
            text = "\n".join(str(t) for t in app.model.notes)
            await pilot.press(str(plain + 1))
            while app.thread is not None and app.thread.is_alive():
                await pilot.pause(0.01)
            assert app.thread_result == "done", app.thread_error
            return during, text

    during, notes = asyncio.run(run())
    assert during >= 10, during  # ~30 ticks of 10 ms while the board waited for the key
    assert "connection dropped" in notes
    assert answers == [PLAY[v.hand[plain]]]
    assert max(show_s) < 0.5


def test_arrows_move_the_selection_and_enter_plays_it() -> None:
    from koikoi.client.tui.render import matches_in
    from koikoi.engine.actions import PLAY

    v = _position().view(0)
    probe = BoardApp(SEATS, Look(width=80), 6).model
    probe.ask(v)
    start = probe.sel
    app, answer, _, _ = asyncio.run(_asking(["right", "right", "left", "down", "up", "up"]))
    n = len(v.hand)
    assert answer is None and app.model.sel == (start + n) % n
    app, answer, _, _ = asyncio.run(_asking(["left", "enter"]))
    card = v.hand[(start - 1) % n]
    if len(matches_in(card, v.table)) == 2:
        assert answer is None and app.model.mode == "pick" and app.model.picking == card
    else:
        assert answer is PLAY[card]


def test_play_again_starts_a_new_match_with_its_own_transcript(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path))
    transcripts: list[Path] = []
    app, player = asyncio.run(_play_by_keys(b"\x07" * 32, player=KeyPlayer(("y", "n")), transcripts=transcripts))
    assert app.thread_error is None and app.thread_result == 0
    assert player.again == [] and len(transcripts) == 2 and all(p.exists() for p in transcripts)
    assert transcripts[0].read_bytes() != transcripts[1].read_bytes()  # another deal, another record
    assert app.model.match_end is not None  # the second match's end is on the board


async def _password(keys: list[str]) -> tuple[object, str]:
    """Ask for a room's password on the board (as ``koikoi join`` does), type ``keys``: the answer, and
    the screen as it was just before the last key."""
    got: list[object] = []

    def loop(table: BoardTable) -> None:
        try:
            got.append(table.ask_secret("Room ABCDE needs a password:"))
        except PlayerQuit as q:
            got.append(q)

    app = BoardApp(SEATS, Look(width=80), 6, start=loop, network=True)
    app.on_leave = lambda reason: None
    async with app.run_test(size=(80, 24)) as pilot:
        deadline = time.monotonic() + 10
        while type(app.screen).__name__ != "SecretScreen":
            assert time.monotonic() < deadline, "no password field"
            await pilot.pause(0.005)
        await pilot.press(*keys[:-1])
        await pilot.pause()
        shown = app.export_screenshot()
        await pilot.press(keys[-1])
        while not got and time.monotonic() < deadline:
            await pilot.pause(0.005)
    return (got[0] if got else None), shown


def test_a_room_password_is_asked_on_the_board_and_never_shown() -> None:
    answer, shown = asyncio.run(_password([*"qhunter2", "enter"]))
    assert answer == "qhunter2"  # q and h are letters of the password here, not quit or help
    assert "Room ABCDE needs a password:" in shown.replace("&#160;", " ")
    assert "hunter" not in shown and "•" in shown  # typed, not echoed
    answer, _ = asyncio.run(_password(["x", "escape"]))
    assert answer is None  # Esc: no password (the relay then says one is needed)


def test_the_yaku_list_names_each_yakus_cards_in_both_languages() -> None:
    from koikoi.client.tui.app import yaku_lines

    en = yaku_lines("en")
    i = next(k for k, ln in enumerate(en) if ln.startswith("Hanami de ippai "))
    assert en[i].split() == ["Hanami", "de", "ippai", "5"]
    assert en[i + 1].strip() == "Cherry with Curtain + Chrysanthemum with Sake Cup"
    i = next(k for k, ln in enumerate(en) if ln.startswith("Inoshikachō "))
    assert en[i].endswith(" 5 +1/tane")
    assert en[i + 1].strip() == "Peony with Butterflies + Bush Clover with Boar + Maple with Deer"
    ja = yaku_lines("ja")
    i = next(k for k, ln in enumerate(ja) if ln.startswith("花見で一杯"))
    assert ja[i] == "花見で一杯　5点" and ja[i + 1].strip() == "桜に幕 + 菊に盃"
    assert any(ln.startswith("猪鹿蝶") and ln.endswith("タネ1枚ごとに+1") for ln in ja)
    assert any(ln.startswith("赤短　") and ln.endswith("短冊1枚ごとに+1") for ln in ja)
    assert not any("/tane" in ln or "/tan" in ln for ln in ja)
