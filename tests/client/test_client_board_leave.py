"""Leaving the board (q confirmed, Ctrl-C) while the network's match loop waits for the board.

The board's thread calls ``NetGame._on_leave``; trio's thread may at that moment be inside a call to the
board (a note, the clock, a show), waiting for the board's thread to run it. If ``_on_leave`` waited for
trio, neither thread would ever go on and the board would not exit (it happened under load)."""

from __future__ import annotations

import threading

import trio

from koikoi.client.match_loop import NetGame, PlayerLeft
from koikoi.client.output import Output
from koikoi.client.tuning import Tuning


def test_leaving_while_the_match_loop_waits_for_the_board_does_not_block_the_board() -> None:
    game = NetGame(Output("koikoi", False), Tuning(), bot_spec=None, lang="en", assist=True)
    in_board_call = threading.Event()
    board_ran_it = threading.Event()
    waited_out: list[bool] = []
    got: list[object] = []

    async def match_loop() -> None:
        game._token = trio.lowlevel.current_trio_token()
        game._playing = True
        in_board_call.set()
        # trio's own thread waits for the board, as BoardTable._call does (here: until the board's thread is free)
        waited_out.append(not board_ran_it.wait(timeout=10))
        with trio.fail_after(10):
            got.append(await game._inbox.receive())

    thread = threading.Thread(target=trio.run, args=(match_loop,), daemon=True)
    thread.start()
    assert in_board_call.wait(timeout=10)
    game._on_leave("quit")  # the board's thread: the person confirmed q
    board_ran_it.set()  # back on its loop, the board runs the pending call
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert waited_out == [False], "the board's thread waited for trio while trio waited for the board"
    assert got == [PlayerLeft("quit")]
