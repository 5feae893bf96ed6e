"""External bots over the JSON-lines protocol: whole matches through --bot cmd:, and every way a bot can fail."""

from __future__ import annotations

import json
import random
import shlex
import sys
import textwrap
import time
from pathlib import Path

import pytest

from koikoi.client.botspec import BotSpecError, bot_from_spec, close_bot, opened_bot, parse_bot_spec
from koikoi.client.cli import main
from koikoi.client.external_bot import BotError, ExternalBot, view_to_json
from koikoi.engine import Match, SeededDeal, Settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "bots" / "example_bot.py"
PY = shlex.quote(sys.executable)
EXAMPLE_SPEC = f"cmd:{PY} {shlex.quote(str(EXAMPLE))}"


def _selfplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["selfplay", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_example_bot_plays_whole_matches(capsys: pytest.CaptureFixture[str]) -> None:
    runs = []
    for _ in range(2):
        code, out, err = _selfplay(capsys, "--games", "6", "--bots", f"greedy,{EXAMPLE_SPEC}", "--seed", "x", "--json")
        assert code == 0, err
        data = json.loads(out)
        assert data["games"] == 6 and sum(data["wins"]) + data["draws"] == 6
        data.pop("rounds_per_s")
        runs.append(data)
    assert runs[0] == runs[1]
    # both seats, against itself, 12 rounds, no doubling
    code, out, err = _selfplay(
        capsys, "--games", "2", "--bots", f"{EXAMPLE_SPEC},{EXAMPLE_SPEC}", "--rounds", "12", "--no-double", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["games"] == 2


def _bot(tmp_path: Path, body: str, name: str = "bot.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return f"cmd:{PY} {shlex.quote(str(path))}"


HELLO = """\
import json, sys
def send(o):
    sys.stdout.write(json.dumps(o) + "\\n"); sys.stdout.flush()
line = sys.stdin.readline()
send({"type": "hello", "protocol": 1, "name": "t"})
"""

BAD_BOTS = {
    "crash": (HELLO + "sys.stdin.readline()\nprint('boom', file=sys.stderr)\nsys.exit(3)\n", "exit code 3"),
    "hang": (HELLO + "import time\nsys.stdin.readline()\ntime.sleep(60)\n", "did not answer within"),
    "chatter": (
        HELLO + "sys.stdin.readline()\nwhile True:\n    send({'type': 'info', 'message': 'hmm'})\n",
        "did not answer within",
    ),
    "garbage": (HELLO + "sys.stdin.readline()\nprint('e2e4', flush=True)\n", "not JSON"),
    "nested": (HELLO + "sys.stdin.readline()\nprint('[' * 100000 + ']' * 100000, flush=True)\n", "nested too deeply"),
    "nested_hello": (
        "import sys\nsys.stdin.readline()\nprint('{\"a\":' * 50000 + '1' + '}' * 50000, flush=True)\n",
        "nested too deeply",
    ),
    "not_object": (HELLO + "sys.stdin.readline()\nprint('[1, 2]', flush=True)\n", "not an object"),
    "illegal": (
        HELLO + "m = json.loads(sys.stdin.readline())\nsend({'type': 'action', 'id': m['id'], 'action': 'koikoi'})\n",
        "not legal now",
    ),
    "notation": (
        HELLO + "m = json.loads(sys.stdin.readline())\nsend({'type': 'action', 'id': m['id'], 'action': 'pawn'})\n",
        "not an action",
    ),
    "wrong_id": (
        HELLO + "m = json.loads(sys.stdin.readline())\nsend({'type': 'action', 'id': 99, 'action': m['legal'][0]})\n",
        "while we asked decision",
    ),
    "wrong_type": (HELLO + "sys.stdin.readline()\nsend({'type': 'move'})\n", "not an action"),
    "error": (HELLO + "sys.stdin.readline()\nsend({'type': 'error', 'message': 'lost'})\n", "reported an error"),
    "no_hello": ('import sys\nsys.stdin.readline()\nprint(\'{"type": "ready"}\', flush=True)\n', "not a hello"),
    "old_protocol": (
        'import sys\nsys.stdin.readline()\nprint(\'{"type": "hello", "protocol": 0}\', flush=True)\n',
        "speaks protocol 0",
    ),
    "silent_exit": ("import sys\nsys.exit(0)\n", "exited while we waited"),
}


@pytest.mark.parametrize("kind", sorted(BAD_BOTS))
def test_misbehaving_bot_gives_one_clear_line(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body, expected = BAD_BOTS[kind]
    spec = _bot(tmp_path, body)
    t = time.monotonic()
    code, out, err = _selfplay(capsys, "--games", "1", "--bots", f"random,{spec}", "--bot-timeout", "1", "--json")
    assert code == 1
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("koikoi selfplay: bot ") and expected in lines[0], lines[0]
    assert "Traceback" not in err
    assert time.monotonic() - t < 8
    if kind == "crash":
        assert "boom" in lines[0]


def test_bad_specs_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for bots in ("random,cmd:", "random,cmd:/no/such/program-xyz", "random,cmd:'unclosed", "random,grandmaster"):
        code, _out, err = _selfplay(capsys, "--games", "1", "--bots", bots)
        assert code == 2, bots
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    with pytest.raises(BotSpecError):
        parse_bot_spec("cmd:   ")


def test_spec_api_for_other_commands(tmp_path: Path) -> None:
    assert parse_bot_spec("strong").name == "strong"
    spec = parse_bot_spec(EXAMPLE_SPEC)
    assert spec.external and spec.argv[0] == sys.executable
    m = Match(Settings(), SeededDeal(bytes(32)), 0)
    with opened_bot(EXAMPLE_SPEC, random.Random(0)) as bot:
        assert isinstance(bot, ExternalBot) and bot.name == "example"
        a = bot.choose(m.view(m.to_move))
        assert a in m.legal_actions()
        proc = bot._proc
    assert proc.poll() is not None  # closed: the program has exited
    close_bot(bot)  # twice is fine
    close_bot(bot_from_spec("greedy", random.Random(0)))  # built-in: nothing to close
    with pytest.raises(BotError, match="is closed"):
        bot.choose(m.view(m.to_move))


def test_a_bot_that_ignores_quit_is_killed(tmp_path: Path) -> None:
    spec = _bot(
        tmp_path,
        HELLO + "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    time.sleep(1)\n",
    )
    bot = bot_from_spec(spec, random.Random(0))
    assert isinstance(bot, ExternalBot)
    t = time.monotonic()
    bot.close()
    assert bot._proc.poll() is not None
    assert time.monotonic() - t < 5


def test_info_lines_and_unknown_fields_are_fine(tmp_path: Path) -> None:
    """Info lines, blank lines and unknown fields are skipped; the action the bot names is the one played."""
    spec = _bot(
        tmp_path,
        "import json, sys\n"
        "def send(o):\n"
        "    sys.stdout.write(json.dumps(o) + '\\n'); sys.stdout.flush()\n"
        "sys.stdin.readline()\n"
        "send({'type': 'info', 'message': 'starting'})\n"
        "send({'type': 'hello', 'protocol': 1, 'name': 'chatty', 'colour': 'red'})\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'quit':\n        break\n"
        "    send({'type': 'info', 'message': 'thinking'})\n"
        "    print()\n"
        "    send({'type': 'action', 'id': m['id'], 'action': m['legal'][-1], 'extra': 1})\n"
        "sys.exit(0)\n",
    )
    m = Match(Settings(), SeededDeal(bytes(32)), 0)
    chosen: list[tuple[str, str]] = []
    with opened_bot(spec, random.Random(0)) as bot:
        assert isinstance(bot, ExternalBot)
        assert bot.name == "chatty"  # the hello was read past the info line before it
        for _ in range(8):
            view = m.view(m.to_move)
            action = bot.choose(view)
            chosen.append((action.text, view.legal_actions[-1].text))
            m.apply(action)
        proc = bot._proc
        assert proc.poll() is None  # still running: nothing it wrote was taken for an error
    assert len(chosen) == 8
    assert all(got == wanted for got, wanted in chosen), chosen  # each answer is the bot's own: legal[-1]
    firsts = _first_legal(8)
    assert any(wanted != first for (_, wanted), first in zip(chosen, firsts, strict=True)), "legal[-1] is legal[0]"
    assert proc.wait(timeout=5) == 0  # it left on quit, by itself


def _first_legal(n: int) -> list[str]:
    """legal[0] at each of the first ``n`` decisions when every seat plays legal[-1] (to tell the two apart)."""
    m = Match(Settings(), SeededDeal(bytes(32)), 0)
    out = []
    for _ in range(n):
        legal = m.view(m.to_move).legal_actions
        out.append(legal[0].text)
        m.apply(legal[-1])
    return out


def _spec_decide_example() -> dict[str, object]:
    """The ``decide`` request shown in spec/bot-protocol.md."""
    text = (ROOT / "spec" / "bot-protocol.md").read_text(encoding="utf-8")
    blocks = text.split("```json\n")[1:]
    found = [json.loads(b.split("```", 1)[0]) for b in blocks if b.startswith('{"type": "decide"')]
    assert len(found) == 1, "spec/bot-protocol.md shows one decide request"
    example = found[0]
    assert isinstance(example, dict)
    return example


def test_view_json_has_exactly_the_documented_fields() -> None:
    """The view and its round history carry exactly the fields spec/bot-protocol.md shows, as it shows them."""
    example = _spec_decide_example()
    spec_view = example["view"]
    assert isinstance(spec_view, dict)
    spec_round = spec_view["history"][0]
    m = Match(Settings(), SeededDeal(bytes(32)), 0)
    rng = random.Random(0)
    while m.round == 1:
        acts = m.legal_actions()
        m.apply(acts[int(rng.random() * len(acts))])
    view = view_to_json(m.view(m.to_move))
    assert set(view) == set(spec_view)
    (played,) = view["history"]
    assert set(played) == set(spec_round)
    result = m.history[0]
    assert played["round"] == 1 and played["dealer"] == result.dealer and played["winner"] == result.winner
    assert played["end"] in {"shobu", "hand_yaku", "drawn"} and played["end"] == result.end.value
    assert played["yaku"] == [{"id": y.value, "points": p} for y, p in result.yaku]
    assert played["payment"] == result.payment and played["points"] == list(result.points) == view["points"]
    assert sum(played["points"]) == 50
    assert json.loads(json.dumps(view)) == view  # plain JSON values only
