"""Issue 12: the lines of a networked match (``koikoi host``, ``join``, ``resume``) follow ``--lang``.

The match loop's own words (the endings, time warnings, the result line) in Japanese under ``--lang ja``
or a Japanese locale, byte for byte the old English otherwise, and never in ``--json`` (its ``error``
events' messages are a contract)."""

from __future__ import annotations

import io
import json
import string
import sys
from types import SimpleNamespace
from typing import cast

import pytest

from koikoi.client.botspec import parse_bot_spec
from koikoi.client.match_loop import NetGame
from koikoi.client.output import Output
from koikoi.client.tui.words import WORDS
from koikoi.client.tuning import Tuning
from koikoi.protocol.codes import Status
from koikoi.protocol.referee import Outcome
from koikoi.protocol.session import OwnTimeExpired, Session, TimeoutWarning


def _game(
    monkeypatch: pytest.MonkeyPatch, lang: str | None, *, json_mode: bool = False, locale: str = "C.UTF-8"
) -> tuple[NetGame, io.StringIO, io.StringIO]:
    """A bot's seat 0 whose lines go to two strings (stdout, stderr), its language decided as host's is."""
    for key in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("LANG", locale)
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    out, err = io.StringIO(), io.StringIO()
    game = NetGame(
        Output("koikoi host", json_mode, out=out, err=err),
        Tuning(),
        bot_spec=parse_bot_spec("random"),
        lang=lang,
        assist=True,
    )
    game.make_player(0, 6)
    game.presentation.console = None  # the narrator is not under test: only the loop's own lines
    game.session = cast(Session, SimpleNamespace(seat=0))
    return game, out, err


def _end(game: NetGame, outcome: Outcome) -> int:
    game.session = cast(Session, SimpleNamespace(seat=0, ended=SimpleNamespace(outcome=outcome)))
    return game.report_outcome()


def _outcome(
    status: str, code: str | None, by: int | None, winner: int | None, points: tuple[int, int] = (11, 39)
) -> Outcome:
    return Outcome(status=Status(status), code=code, message="m", by=by, winner=winner, points=points, seq=None)


def test_every_network_line_has_japanese_with_the_same_fields() -> None:
    fields = string.Formatter()
    net = [k for k in WORDS["en"] if k.startswith("net_")]
    assert len(net) > 50
    for key in net:
        assert key in WORDS["ja"], key
        en = sorted(f for _, f, _, _ in fields.parse(WORDS["en"][key]) if f)
        ja = sorted(f for _, f, _, _ in fields.parse(WORDS["ja"][key]) if f)
        assert en == ja, key
        assert WORDS["ja"][key] != WORDS["en"][key] or not any(c.isalpha() for c in WORDS["en"][key]), key


def test_the_language_is_lang_else_the_locale_and_never_japanese_in_json(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _game(monkeypatch, "ja")[0].presentation.words_lang == "ja"
    assert _game(monkeypatch, None, locale="ja_JP.UTF-8")[0].presentation.words_lang == "ja"
    assert _game(monkeypatch, "en", locale="ja_JP.UTF-8")[0].presentation.words_lang == "en"
    assert _game(monkeypatch, None)[0].presentation.words_lang == "en"
    assert _game(monkeypatch, "ja", json_mode=True)[0].presentation.words_lang == "en"


def test_the_result_line_in_japanese(monkeypatch: pytest.MonkeyPatch) -> None:
    game, out, _ = _game(monkeypatch, "ja")
    assert _end(game, _outcome("resigned", "resigned", 1, 0, (39, 11))) == 0
    assert out.getvalue() == "\n対戦終了：あなたの勝ち：相手の投了。終了時の持ち点：あなた39、相手11。\n棋譜：None\n"


def test_the_result_line_in_english(monkeypatch: pytest.MonkeyPatch) -> None:
    # a resignation or a loss on time decides the match, not the points: the line says so (issue 21)
    game, out, _ = _game(monkeypatch, "en")
    assert _end(game, _outcome("resigned", "resigned", 1, 0, (39, 11))) == 0
    assert out.getvalue() == (
        "\nMatch over: you won: your opponent resigned. Points when it ended: you 39, your opponent 11.\n"
        "Transcript: None\n"
    )
    game, out, _ = _game(monkeypatch, "en")
    assert _end(game, _outcome("on_time", "timeout", 0, 0, (25, 25))) == 0
    assert out.getvalue() == (
        "\nMatch over: you won on time: your opponent did not move in time; the relay certified their silence."
        " Points when it ended: you 25, your opponent 25.\nTranscript: None\n"
    )
    game, out, _ = _game(monkeypatch, "en")
    assert _end(game, _outcome("on_time", "timeout", 1, 1, (25, 25))) == 0
    assert "Match over: your opponent won on time: you did not move in time;" in out.getvalue()
    game, out, _ = _game(monkeypatch, "en")
    assert _end(game, _outcome("complete", None, None, None)) == 0
    assert out.getvalue() == "\nMatch over: a draw, 11 to 39 (both players signed the result).\nTranscript: None\n"


def test_an_ending_without_a_result_in_japanese_on_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    game, out, err = _game(monkeypatch, "ja")
    assert _end(game, _outcome("abandoned", "relay_mismatch", 0, None)) == 1
    assert err.getvalue() == "koikoi host: 二人が鍵の違うリレーを通して対戦に来ました（m）。勝者なし\n"
    assert out.getvalue() == "棋譜：None\n"


def test_the_json_error_event_keeps_its_english_message_under_lang_ja(monkeypatch: pytest.MonkeyPatch) -> None:
    game, out, err = _game(monkeypatch, "ja", json_mode=True)
    assert _end(game, _outcome("abandoned", "relay_mismatch", 0, None)) == 1
    [event] = [json.loads(line) for line in out.getvalue().splitlines()]
    assert event == {
        "event": "error",
        "code": "relay_mismatch",
        "message": "the two players reached the match through relays with different keys (m); nobody wins",
        "winner": None,
        "points": [11, 39],
        "transcript": None,
    }
    assert err.getvalue() == f"koikoi host: {event['message']}\n"


@pytest.mark.parametrize(
    ("code", "by", "winner", "en", "ja"),
    [
        ("opponent_left", 0, 0, "your opponent left and did not come back; the relay certified their silence; "
         "you win the match", "相手が去って戻らず、リレーが相手の沈黙を証明しました。あなたの勝ち"),
        ("timeout", 1, 1, "you did not move in time; the relay certified your silence; your opponent wins the match",
         "時間内に指さず、リレーがあなたの沈黙を証明しました。相手の勝ち"),
        ("unproven_abort", 0, 1, "you accused your opponent without proof, which counts as resigning; your opponent "
         "wins the match", "証拠なしに相手を訴えたため、投了とみなされます。相手の勝ち"),
        ("room_mismatch", 0, None, "the relay seated the two players in different rooms (m); nobody wins",
         "リレーが二人を別々の部屋に入れました（m）。勝者なし"),
    ],
)  # fmt: skip
def test_why_a_match_ended_in_both_languages(
    monkeypatch: pytest.MonkeyPatch, code: str, by: int, winner: int | None, en: str, ja: str
) -> None:
    assert _game(monkeypatch, "en")[0].presentation.ending_text(0, code, "m", by, winner, None) == en
    assert _game(monkeypatch, "ja")[0].presentation.ending_text(0, code, "m", by, winner, None) == ja


def test_time_warnings_in_japanese(monkeypatch: pytest.MonkeyPatch) -> None:
    game, out, _ = _game(monkeypatch, "ja")
    game.presentation.show(TimeoutWarning(0, "move", 9.6))
    game.presentation.show(TimeoutWarning(1, "result", 30.0))
    game.presentation.show(OwnTimeExpired("move"))
    assert out.getvalue().splitlines() == [
        "手番の残り時間は10秒：過ぎると相手が時間切れ勝ちにできます。",
        "相手の結果の署名の残り時間は30秒：リレーが相手の沈黙を証明すれば、あなたの時間切れ勝ちです。",
        "手番の時間切れ：相手が時間切れ勝ちにできます。",
    ]
    game, out, _ = _game(monkeypatch, "en")
    game.presentation.show(TimeoutWarning(0, "move", 9.6))
    game.presentation.show(OwnTimeExpired("move"))
    assert out.getvalue().splitlines() == [
        "You have 10 s left for the move: after that your opponent can win the match on time.",
        "Your time for the move is up: your opponent may now win the match on time.",
    ]
