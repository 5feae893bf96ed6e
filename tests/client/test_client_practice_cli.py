"""`koikoi practice`: options and their memory, quitting, a whole match in process, and a person's path
through a real pseudo-terminal."""

from __future__ import annotations

import functools
import io
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from koikoi.client.cli import main
from koikoi.client.config import PracticeSettings, load_config

HAND_ROW = re.compile(r"^ ([ *])(\d)  ", re.M)


def pick_card(screen: str) -> str:
    """The scripted player's choice: the first hand card marked as capturing, else card 1."""
    hand = screen[screen.rindex("Your hand:") :]
    for mark, num in HAND_ROW.findall(hand):
        if mark == "*":
            return str(num)
    return "1"


class Player:
    """Reads the screen, answers the last question: capture with the first marked card, take the
    first of two matches, call koi-koi the first time it is offered and shōbu after that."""

    def __init__(self) -> None:
        self.koikoi_calls = 0
        self.choices = 0
        self.plays = 0
        self.again = 0

    def answer(self, screen: str) -> str:
        tail = screen[-300:]
        if tail.rstrip().endswith("q quit):") and "Card to play" in tail[tail.rfind("\n") :]:
            self.plays += 1
            return pick_card(screen)
        if "Capture which" in tail[tail.rfind("\n") :]:
            self.choices += 1
            return "1"
        if "Koi-koi or shōbu?" in tail[tail.rfind("\n") :]:
            if self.koikoi_calls == 0:
                self.koikoi_calls += 1
                return "k"
            return "s"
        if "Press Enter" in tail[tail.rfind("\n") :]:
            return ""
        if "Play again? (y/n)" in tail[tail.rfind("\n") :]:
            self.again += 1
            return "n"
        raise AssertionError(f"no question on the screen: {tail!r}")


class Screen(io.StringIO):
    encoding = "utf-8"


class AutoInput(io.StringIO):
    def __init__(self, screen: Screen, player: Player, limit: int = 2000) -> None:
        super().__init__()
        self.screen = screen
        self.player = player
        self.limit = limit

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        self.limit -= 1
        assert self.limit > 0, "the match does not end"
        return self.player.answer(self.screen.getvalue()) + "\n"


def _practice_in_process(args: list[str]) -> str:
    """The screen of a whole practice match in this process, the scripted :class:`Player` answering (its own
    temporary config and data folders)."""
    screen = Screen()
    saved = (sys.stdin, sys.stdout, sys.stderr, dict(os.environ))
    tmp = tempfile.mkdtemp(prefix="koikoi-seed-")
    try:
        os.environ.update(KOIKOI_CONFIG_DIR=f"{tmp}/conf", KOIKOI_DATA_DIR=f"{tmp}/data", NO_COLOR="1",
                          COLUMNS="100", LANG="en_US.UTF-8")  # fmt: skip
        sys.stdin, sys.stdout, sys.stderr = AutoInput(screen, Player()), screen, io.StringIO()
        main(["practice", *args])
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved[:3]
        os.environ.clear()
        os.environ.update(saved[3])
        shutil.rmtree(tmp, ignore_errors=True)
    return screen.getvalue()


def _first_seed(args: list[str], wanted: Callable[[str], bool]) -> str:
    """The first of the seeds ``s0``, ``s1``, … whose match (the scripted player against ``args``) shows what
    ``wanted`` looks for: the deal follows from the seed through the protocol's session id, so which seed
    gives a capture choice or a koi-koi call is computed here, never assumed."""
    for i in range(60):
        seed = f"s{i}"
        if wanted(_practice_in_process(["--seed", seed, *args])):
            return seed
    raise AssertionError("no seed among s0-s59 gives the match the test needs")


def _round1(screen: str) -> str:
    """Round 1 as the player saw it, when another round follows it (else empty)."""
    end = screen.find("Press Enter for the next round")
    return "" if end < 0 else screen[:end]


@functools.cache
def choice_and_koikoi_seed() -> str:
    """A seed whose round 1 gives the scripted player (level easy, 6 rounds, ×2 at 8+) a capture choice and a
    koi-koi decision, and is not the match's last."""
    return _first_seed(
        ["--level", "easy", "--rounds", "6", "--double"],
        lambda out: "matches two field cards:" in _round1(out) and "You call koi-koi at" in _round1(out),
    )


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "conf"
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(d))
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    for k in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(k, raising=False)
    return d


def run(monkeypatch: pytest.MonkeyPatch, argv: list[str], stdin: io.StringIO | str) -> tuple[int, str, str]:
    out = Screen()
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin) if isinstance(stdin, str) else stdin)
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    try:
        code = main(argv)
    except SystemExit as e:
        code = int(e.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        ["--rounds", "7"],
        ["--double", "--no-double"],
        ["--level", "godlike"],
        ["--bot", "nosuchbot"],
        ["--level", "easy", "--bot", "random"],
        ["--lang", "fr"],
    ],
)
def test_usage_errors_exit_2(env: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    code, _, err = run(monkeypatch, ["practice", *argv], "")
    assert code == 2
    assert "Traceback" not in err
    assert not (env / "config.toml").exists()


def test_first_time_defaults_then_remembered_settings(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run(monkeypatch, ["practice", "--seed", "x"], "q\ny\n")
    assert code == 1 and "match abandoned (you quit)" in err
    assert "(level normal: the greedy bot): 6 rounds, ×2 at 8+." in out
    assert "Round 1 of 6" in out
    code, out, err = run(monkeypatch, ["practice", "--rounds", "12", "--no-double", "--level", "easy"], "q\ny\n")
    assert code == 1
    assert "(level easy: the random bot): 12 rounds, no ×2 at 8+." in out
    assert load_config().practice == PracticeSettings(12, False, "easy")
    # options not given come from the config; those given are saved
    code, out, _ = run(monkeypatch, ["practice", "--rounds", "6"], "q\ny\n")
    assert "(level easy: the random bot): 6 rounds, no ×2 at 8+." in out
    assert load_config().practice == PracticeSettings(6, False, "easy")
    code, out, _ = run(monkeypatch, ["practice", "--double"], "q\ny\n")
    assert "6 rounds, ×2 at 8+." in out
    assert load_config().practice == PracticeSettings(6, True, "easy")
    # --bot names the opponent for this match only
    code, out, _ = run(monkeypatch, ["practice", "--bot", "strong"], "q\ny\n")
    assert code == 1 and "(bot strong): 6 rounds" in out
    assert load_config().practice == PracticeSettings(6, True, "easy")


def test_end_of_input_and_interrupt_abandon_cleanly(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run(monkeypatch, ["practice", "--seed", "x"], "")
    assert code == 1 and "match abandoned (end of input)" in err

    class Interrupt(io.StringIO):
        def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
            raise KeyboardInterrupt

    code, out, err = run(monkeypatch, ["practice", "--seed", "x"], Interrupt())
    assert code == 1 and "match abandoned (interrupted)" in err and "Traceback" not in err + out


def test_a_broken_config_is_reported_and_left_alone(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env.mkdir()
    (env / "config.toml").write_text("[practice]\nrounds = 7\n", encoding="utf-8")
    code, out, err = run(monkeypatch, ["practice", "--level", "easy", "--seed", "x"], "q\ny\n")
    # like every command that reads the config (tests/client/test_client_practice_config.py): one line, nothing played
    assert code == 1 and out == ""
    problem = "practice.rounds must be 6 or 12, not 7"
    assert err == f"koikoi practice: bad config file {env / 'config.toml'}: {problem} (fix or remove it)\n"
    assert (env / "config.toml").read_text(encoding="utf-8") == "[practice]\nrounds = 7\n"


def test_japanese_names_and_the_fallback(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run(monkeypatch, ["practice", "--seed", "x", "--lang", "ja"], "q\ny\n")
    assert code == 1 and "に" in out  # e.g. 松に鶴
    # the plain mode's own lines in Japanese too: the intro (its first line), the keys, the last words
    first, keys = out.splitlines()[:2]
    assert first == "コンピューターとの練習（レベル normal：greedyボット）：6局、8点以上で2倍：あり。"
    assert keys.startswith("どの質問でも：h ヘルプ、t 場の表示、q 終了")
    assert err == "koikoi practice: 対戦を中止しました（あなたがやめた）\n"
    monkeypatch.setenv("LANG", "ja_JP.UTF-8")  # the locale asks for Japanese
    code, out2, _ = run(monkeypatch, ["practice", "--seed", "x"], "q\ny\n")
    assert out2 == out
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\ny\n"))
    monkeypatch.setattr(sys, "stdout", ascii_out)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert main(["practice", "--seed", "x", "--lang", "ja"]) == 1
    ascii_out.flush()
    text = ascii_out.buffer.getvalue().decode("ascii")
    assert "This terminal cannot show Japanese (its encoding is ascii)" in text
    assert "Round 1 of 6 - " in text and "x2 at 8+" in text


def test_a_whole_match_in_process(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    screen = Screen()
    player = Player()
    monkeypatch.setattr(sys, "stdin", AutoInput(screen, player))
    monkeypatch.setattr(sys, "stdout", screen)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    args = ["--level", "normal", "--rounds", "6"]
    seed = _first_seed(args, lambda out: "You call koi-koi at" in out and out.count("Card to play") >= 8)
    assert main(["practice", "--seed", seed, *args]) == 0
    out = screen.getvalue()
    assert "The match is over:" in out
    assert player.again == 1 and out.rstrip().endswith("Play again? (y/n):")
    assert "You call koi-koi at" in out and player.plays >= 8
    rounds = len(re.findall(r"^Round \d+ (ends|is drawn)", out, re.M))
    assert rounds >= 1 and out.count("Press Enter for the next round") == rounds - 1
    assert "Traceback" not in out
    # the match's transcript: the signed protocol record between two local keys, audited and replayed
    paths = list((env.parent / "data" / "transcripts").glob("*-practice.koikoi"))
    assert len(paths) == 1 and f"Transcript: {paths[0]}" in out
    code, audit_out, _ = run(monkeypatch, ["audit", str(paths[0]), "--json"], "")
    assert code == 0 and '"complete"' in audit_out
    code, replay_out, _ = run(monkeypatch, ["replay", str(paths[0])], "")
    assert code == 0 and "The match is over" in replay_out


# -- a person's path through a real pseudo-terminal -------------------------


def _spawn(env_dir: Path, *args: str) -> object:
    import pexpect

    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "COLUMNS", "LINES"))}
    env.update(KOIKOI_CONFIG_DIR=str(env_dir), KOIKOI_DATA_DIR=str(env_dir.parent / "data"), NO_COLOR="1",
               LANG="C.UTF-8", TERM="xterm")  # fmt: skip
    return pexpect.spawn(
        sys.executable,
        ["-m", "koikoi.client", "practice", "--plain", *args],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(50, 100),
    )


QUESTIONS = [
    r"Card to play \([^\n]*?q quit\): ",
    r"Capture which[^\n]*?\): ",
    r"Koi-koi or shōbu\?[^\n]*?\): ",
    r"Press Enter \(or s\) to call shōbu[^\n]*?: ",
    r"Press Enter for the next round[^\n]*?: ",
    r"Play again\? \(y/n\): ",
]


@pytest.mark.net
def test_a_person_plays_a_whole_match_in_a_terminal(tmp_path: Path) -> None:
    import pexpect

    child = _spawn(
        tmp_path / "conf", "--seed", choice_and_koikoi_seed(), "--level", "easy", "--rounds", "6", "--double"
    )
    assert isinstance(child, pexpect.spawn)
    player = Player()
    screen = ""
    round1: str | None = None
    start = time.monotonic()
    try:
        while True:
            i = child.expect([*QUESTIONS, pexpect.EOF])
            screen += child.before + (child.after if isinstance(child.after, str) else "")
            if i == len(QUESTIONS):
                break
            if i == 4 and round1 is None:
                round1 = screen  # the first round is over: keep what was seen
            child.sendline(player.answer(screen))
            assert time.monotonic() - start < 30
    finally:
        child.close()
    assert child.exitstatus == 0, screen[-2000:]
    assert "Traceback" not in screen and "\x1b[" not in screen
    # the first dealer, in words
    assert re.search(r"You turn .+ \(.+, month \d+\); Computer turns .+", screen)
    assert round1 is not None
    # round 1, as the person saw it: the table, a capture choice, a koi-koi call with the count before it
    assert "Round 1 of 6 · " in round1 and "Your hand: 8 cards (* = captures)" in round1
    assert "matches two field cards:" in round1 and "Capture which" in round1
    assert "If you call shōbu now, you win" in round1 and "Base" in round1
    assert re.search(r"You call koi-koi at \d+ points? and play on: the multiplier is now ×2\.", round1)
    assert re.search(r"Round 1 (ends: .* The count:|is drawn)", round1)
    assert "The match is over:" in screen


@pytest.mark.net
def test_ctrl_c_in_a_terminal_abandons_without_a_traceback(tmp_path: Path) -> None:
    import pexpect

    child = _spawn(tmp_path / "conf", "--seed", choice_and_koikoi_seed(), "--level", "easy")
    assert isinstance(child, pexpect.spawn)
    child.expect(QUESTIONS[0])
    child.sendline("9")
    child.expect("is not a card in your hand")
    child.expect(QUESTIONS[0])
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert "match abandoned (interrupted)" in child.before
    assert "Traceback" not in child.before
    assert child.exitstatus == 1


@pytest.mark.net
def test_ctrl_d_and_q_in_a_terminal(tmp_path: Path) -> None:
    import pexpect

    for send in ("\x04", "q\r"):
        child = _spawn(tmp_path / "conf", "--seed", choice_and_koikoi_seed(), "--level", "easy")
        assert isinstance(child, pexpect.spawn)
        child.expect(QUESTIONS[0])
        child.send(send)
        if send == "q\r":  # q asks first
            child.expect("Leave the match\\?")
            child.send("y\r")
        child.expect(pexpect.EOF)
        child.close()
        assert "match abandoned" in child.before and "Traceback" not in child.before
        assert child.exitstatus == 1


# -- the full-screen board in a real terminal ---------------------------------------

_ESC = re.compile(r"\x1b(\[[0-9;?<>=$]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def _spawn_board(env_dir: Path, *args: str) -> object:
    import pexpect

    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "COLUMNS", "LINES", "NO_COLOR"))}
    env.update(KOIKOI_CONFIG_DIR=str(env_dir), KOIKOI_DATA_DIR=str(env_dir.parent / "data"), LANG="C.UTF-8",
               TERM="xterm-256color")  # fmt: skip
    return pexpect.spawn(
        sys.executable,
        ["-m", "koikoi.client", "practice", *args],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(24, 80),
    )


def _seen(child: object) -> str:
    import pexpect

    assert isinstance(child, pexpect.spawn)
    return _ESC.sub("", child.before or "")


@pytest.mark.net
def test_the_board_in_an_80x24_terminal_and_q_asks_first(tmp_path: Path) -> None:
    import pexpect

    child = _spawn_board(tmp_path / "conf", "--seed", choice_and_koikoi_seed(), "--level", "easy", "--lang", "en")
    assert isinstance(child, pexpect.spawn)
    try:
        child.expect("Play a card: 1–8")
        screen = _seen(child)
        # one screen: the round line, both pools, the field by month, the numbered hand, the prompt
        assert "Round 1 of 6" in screen and "Points: You 25 · Computer 25" in screen
        assert re.search(r"Field \(\d+\)", screen) and "Your hand (8)" in screen
        assert re.search(r" ?\d{1,2} (Pine|Plum|Cherry|Wisteria|Iris|Peony|Bush Clover|Pampas|Chrysanthemum"
                         r"|Maple|Willow|Paulownia) ", screen)  # fmt: skip
        assert "Traceback" not in screen
        child.send("q")
        child.expect("Abandon this practice match\\?")
        child.send("n")
        child.send("h")
        child.expect("Help")
        child.send("h")  # the key that opened it closes it (any other key but Esc, Enter, q no longer does)
        child.send("q")
        child.expect("Abandon this practice match\\?")
        child.send("y")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    after = _seen(child)
    assert "match abandoned (you quit)" in after and "Traceback" not in after
    assert child.exitstatus == 1
    # the abandoned match's transcript is kept
    assert len(list((tmp_path / "data" / "transcripts").glob("*-practice.koikoi"))) == 1
