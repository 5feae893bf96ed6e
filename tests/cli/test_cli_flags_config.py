"""The command line takes no option it was not given in full (``--round 12`` is not ``--rounds 12``, and
nothing is saved), names the subcommand of a typo and suggests the option; a relay URL that is no relay URL
names where it came from (the config file, ``$KOIKOI_RELAY``, ``--relay``); ``koikoi id --json`` with a
damaged key prints JSON."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import pytest

from koikoi.client.cli import build_parser, main
from koikoi.client.config import config_path, load_config, relay_url_ok


@pytest.fixture
def cfg_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "config"
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(d))
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("KOIKOI_RELAY", raising=False)
    return d


def test_no_parser_takes_an_abbreviation() -> None:
    parser, _ = build_parser()
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    parsers = [parser, *subs[0].choices.values()]
    assert len(parsers) > 10
    assert all(not p.allow_abbrev for p in parsers), [p.prog for p in parsers if p.allow_abbrev]


def test_round_is_not_rounds_and_nothing_is_saved(
    cfg_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # (taken for --rounds, the match would end at once)
    with pytest.raises(SystemExit) as e:
        main(["practice", "--round", "12"])
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", "koikoi practice: unknown option --round; did you mean --rounds?\n")
    assert not config_path().exists()
    assert load_config().practice.rounds == 6


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["host", "--passwrd", "x"], "koikoi host: unknown option --passwrd; did you mean --password?"),
        (["join", "ABCDE", "--relya=ws://h"], "koikoi join: unknown option --relya; did you mean --relay?"),
        (["host", "--rou", "12", "--relay", "ws:/x"], "koikoi host: unknown option --rou; did you mean --rounds?"),
        (["--verison"], "koikoi: unknown option --verison; did you mean --version?"),
        (["id", "--zzzzzz"], "koikoi id: unknown option --zzzzzz (see koikoi id --help)"),
        (["id", "stray"], "koikoi id: unexpected argument 'stray' (see koikoi id --help)"),
    ],
)
def test_a_typo_names_the_subcommand_and_the_option(
    cfg_dir: Path, argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert capsys.readouterr() == ("", said + "\n")


@pytest.mark.parametrize(
    ("url", "ok"),
    [("ws://h:7878", True), ("wss://relay.example", True), ("ws://[::1]:9", True), ("http://h", False),
     ("h:7878", False), ("ws://", False), ("ws://h:99999", False), ("ws://h:port", False)],
)  # fmt: skip
def test_relay_url_ok(url: str, ok: bool) -> None:
    assert relay_url_ok(url) is ok


def test_a_bad_relay_in_the_config_file_is_in_its_list(cfg_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg_dir.mkdir()
    config_path().write_text('relay = "relay.example:7878"\nlang = "fr"\n', encoding="utf-8")
    message = (
        f"bad config file {config_path()}: relay must be a relay URL (ws://HOST:PORT or wss://HOST), not "
        "'relay.example:7878'; lang must be \"en\" or \"ja\", not 'fr' (fix or remove it)"
    )
    assert main(["rooms", "--json"]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out) == {"event": "error", "code": "config", "message": message}
    assert err == f"koikoi rooms: {message}\n"


@pytest.mark.parametrize(
    ("cmd", "bot"), [(["host"], ["--bot", "random"]), (["join", "ACDEF"], ["--bot", "random"]), (["rooms"], [])]
)
def test_a_bad_koikoi_relay_says_so_like_a_config_error(
    cfg_dir: Path, cmd: list[str], bot: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KOIKOI_RELAY", "http://relay.example")
    message = (
        "$KOIKOI_RELAY must be a relay URL (ws://HOST:PORT or wss://HOST), not 'http://relay.example' (fix or unset it)"
    )
    assert main([*cmd, "--json"]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out) == {"event": "error", "code": "config", "message": message}
    assert err == f"koikoi {cmd[0]}: {message}\n"
    # --relay given: $KOIKOI_RELAY is not used, so it does not matter; a bad --relay is a usage error
    assert main([*cmd, *bot, "--relay", "ws:/nohost", "--json"]) == 2
    out, err = capsys.readouterr()
    assert err == f"koikoi {cmd[0]}: --relay: not a relay URL: 'ws:/nohost' (expected ws://HOST:PORT or wss://HOST)\n"


def test_id_json_with_a_damaged_key_prints_json(cfg_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg_dir.mkdir()
    key = cfg_dir / "identity.key"
    key.write_text("not a key\n")
    assert main(["id", "--json"]) == 1
    out, err = capsys.readouterr()
    message = f"the key file {key} is damaged (not an unencrypted PEM key)"
    assert json.loads(out) == {"event": "error", "code": "identity", "message": message, "key_file": str(key)}
    assert err == f"koikoi id: {message}\n"
    assert key.read_text() == "not a key\n"  # left as it was
