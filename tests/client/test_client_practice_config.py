"""The config file: where it lives, what it holds, the relay's resolution order, atomic writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from koikoi.client.cli import READS_CONFIG, main
from koikoi.client.config import (
    Config,
    ConfigError,
    PracticeSettings,
    config_path,
    load_config,
    resolve_relay,
    save_config,
)
from koikoi.client.identity import config_dir


@pytest.fixture
def cfg_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "conf"
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(d))
    monkeypatch.delenv("KOIKOI_RELAY", raising=False)
    return d


def test_the_config_sits_beside_the_identity_key(cfg_dir: Path) -> None:
    assert config_path() == cfg_dir / "config.toml"
    assert config_path().parent == config_dir()


def test_defaults_when_there_is_no_file(cfg_dir: Path) -> None:
    cfg = load_config()
    assert cfg == Config()
    assert cfg.practice == PracticeSettings(rounds=6, double_at_8=True, level="normal")
    assert not cfg_dir.exists()  # reading never creates anything


def test_round_trip_keeps_unknown_keys(cfg_dir: Path) -> None:
    cfg_dir.mkdir()
    config_path().write_text(
        'relay = "ws://127.0.0.1:7878"\nlang = "ja"\nfuture = [1, 2]\nquote = "a \\"b\\"\\nc"\n'
        '[practice]\nrounds = 12\ndouble_at_8 = false\nlevel = "strong"\nextra = true\n'
        "[other.deep]\nx = 1.5\n",
        encoding="utf-8",
    )
    cfg = load_config()
    assert cfg.relay == "ws://127.0.0.1:7878" and cfg.lang == "ja" and cfg.assist is None
    assert cfg.practice == PracticeSettings(12, False, "strong")
    save_config(Config(cfg.relay, cfg.lang, True, PracticeSettings(6, False, "easy"), cfg.extra, cfg.practice_extra))
    again = load_config()
    assert again.assist is True and again.practice == PracticeSettings(6, False, "easy")
    assert again.extra == {"future": [1, 2], "quote": 'a "b"\nc', "other": {"deep": {"x": 1.5}}}
    assert again.practice_extra == {"extra": True}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("relay = [", "not valid TOML"),
        ('lang = "fr"', "lang must be"),
        ("assist = 1", "assist must be"),
        ("[practice]\nrounds = 7", "practice.rounds must be 6 or 12"),
        ('[practice]\ndouble_at_8 = "yes"', "practice.double_at_8"),
        ('[practice]\nlevel = "godlike"', "practice.level"),
        ("practice = 3", "practice must be"),
    ],
)
def test_a_bad_file_is_named_with_the_bad_key(cfg_dir: Path, text: str, names: str) -> None:
    cfg_dir.mkdir()
    config_path().write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load_config()
    assert names in str(e.value) and str(config_path()) in str(e.value)


def test_every_bad_value_is_named_at_once(cfg_dir: Path) -> None:
    cfg_dir.mkdir()
    config_path().write_text(
        'lang = "fr"\nassist = 1\nrelay = ""\n[practice]\nrounds = 7\ndouble_at_8 = "yes"\nlevel = "godlike"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as e:
        load_config()
    assert str(e.value) == (
        f"{config_path()}: relay must be a URL string, not ''; lang must be \"en\" or \"ja\", not 'fr'; "
        "assist must be true or false, not 1; practice.rounds must be 6 or 12, not 7; "
        "practice.double_at_8 must be true or false, not 'yes'; "
        'practice.level must be "easy" or "normal" or "strong", not \'godlike\''
    )


BAD_TOP = 'lang = "fr"\nassist = "no"\n[practice]\nrounds = 7\n'


@pytest.mark.parametrize(
    "argv",
    [["practice"], ["practice", "--level", "easy"], ["host"], ["host", "--relay", "ws://127.0.0.1:9"],
     ["join", "ABCDE"], ["join", "ABCDE", "--relay", "ws://127.0.0.1:9"], ["rooms"]],
)  # fmt: skip
def test_every_command_that_reads_the_config_reports_a_bad_one_the_same_way(
    cfg_dir: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    cfg_dir.mkdir()
    config_path().write_text(BAD_TOP, encoding="utf-8")
    assert set(READS_CONFIG) == {"host", "join", "practice", "rooms"}
    problems = (
        "lang must be \"en\" or \"ja\", not 'fr'; assist must be true or false, not 'no'; "
        "practice.rounds must be 6 or 12, not 7"
    )
    message = f"bad config file {config_path()}: {problems} (fix or remove it)"
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"koikoi {argv[0]}: {message}\n")
    assert config_path().read_text(encoding="utf-8") == BAD_TOP  # left alone
    if argv[0] != "practice":
        assert main([*argv, "--json"]) == 1
        out, err = capsys.readouterr()
        assert json.loads(out) == {"event": "error", "code": "config", "message": message}
        assert err == f"koikoi {argv[0]}: {message}\n"


def test_commands_that_do_not_read_the_config_do_not_mind_it(cfg_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg_dir.mkdir()
    config_path().write_text(BAD_TOP, encoding="utf-8")
    assert main(["score", "susuki_moon", "kiku_sake_cup", "--json"]) == 0
    assert main(["cards", "--json"]) == 0
    capsys.readouterr()


def test_save_is_atomic(cfg_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    save_config(Config(relay="ws://one"))
    calls: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src: str, dst: str) -> None:
        calls.append((str(src), str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    save_config(Config(relay="ws://two"))
    ((src, dst),) = calls
    assert Path(src).parent == cfg_dir and dst == str(config_path())
    assert load_config().relay == "ws://two"

    # a failure at the rename leaves the old file whole and no temporary file behind
    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    before = config_path().read_bytes()
    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(ConfigError, match="No space left"):
        save_config(Config(relay="ws://three"))
    assert config_path().read_bytes() == before
    assert sorted(p.name for p in cfg_dir.iterdir()) == ["config.toml"]


def test_relay_resolution_order(cfg_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_relay(None) is None
    save_config(Config(relay="ws://from-config"))
    assert resolve_relay(None) == "ws://from-config"
    monkeypatch.setenv("KOIKOI_RELAY", "ws://from-env")
    assert resolve_relay(None) == "ws://from-env"
    assert resolve_relay("ws://from-cli") == "ws://from-cli"
    monkeypatch.setenv("KOIKOI_RELAY", "")
    assert resolve_relay(None) == "ws://from-config"
    # explicit env / config arguments (what a command passes in tests)
    assert resolve_relay(None, env={}, config=Config(relay="ws://c")) == "ws://c"
    assert resolve_relay(None, env={"KOIKOI_RELAY": "ws://e"}, config=Config(relay="ws://c")) == "ws://e"
    assert resolve_relay("ws://a", env={"KOIKOI_RELAY": "ws://e"}, config=Config(relay="ws://c")) == "ws://a"


def test_a_broken_config_matters_only_when_it_is_needed(cfg_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg_dir.mkdir()
    config_path().write_text("relay = [", encoding="utf-8")
    assert resolve_relay("ws://cli") == "ws://cli"
    monkeypatch.setenv("KOIKOI_RELAY", "ws://env")
    assert resolve_relay(None) == "ws://env"
    monkeypatch.delenv("KOIKOI_RELAY")
    with pytest.raises(ConfigError):
        resolve_relay(None)
