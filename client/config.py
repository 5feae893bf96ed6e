"""The user's config file: ``config.toml`` in the koikoi config dir.

The dir is the one :mod:`koikoi.client.identity` uses (``$KOIKOI_CONFIG_DIR``
when set, else the platformdirs user config dir), so the key and the config
always sit side by side. A small TOML file, every key optional::

    relay = "ws://relay.example:7878"   # used when --relay and KOIKOI_RELAY are not given
    lang = "ja"                         # card names: en or ja (default: from the locale)
    assist = true                       # mark capturable cards (default: on)

    [practice]                          # the settings last used by `koikoi practice`
    rounds = 6
    double_at_8 = true
    level = "normal"

Keys this version does not know are kept when the file is rewritten. Writes
are atomic: a temporary file in the same dir, flushed, then renamed over the
old one, so a crash never leaves half a file.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import tomllib
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LocalError
from ..support import atomic_write
from .identity import config_dir

__all__ = [
    "CONFIG_FILE",
    "RELAY_ENV",
    "Config",
    "ConfigError",
    "PracticeSettings",
    "config_path",
    "dump_toml",
    "env_relay_problem",
    "load_config",
    "relay_url_ok",
    "resolve_relay",
    "save_config",
]

CONFIG_FILE = "config.toml"
RELAY_ENV = "KOIKOI_RELAY"
LEVEL_NAMES = ("easy", "normal", "strong")


class ConfigError(LocalError):
    """The config file cannot be read or holds a bad value (the message names the file and key)."""


@dataclass(frozen=True, slots=True)
class PracticeSettings:
    rounds: int = 6
    double_at_8: bool = True
    level: str = "normal"


@dataclass(frozen=True, slots=True)
class Config:
    relay: str | None = None
    lang: str | None = None
    assist: bool | None = None
    practice: PracticeSettings = PracticeSettings()
    extra: Mapping[str, object] = field(default_factory=dict)
    """Keys this version does not know (kept when saving)."""
    practice_extra: Mapping[str, object] = field(default_factory=dict)


RELAY_URL_WANT = "a relay URL (ws://HOST:PORT or wss://HOST)"


def relay_url_ok(url: str) -> bool:
    """Whether ``url`` can name a relay: ``ws://`` or ``wss://``, a host, and a port (when given) in 0..65535."""
    try:
        parts = urllib.parse.urlsplit(url)
        _ = parts.port  # ValueError when it is no port number
    except ValueError:
        return False
    return parts.scheme in ("ws", "wss") and bool(parts.hostname)


def env_relay_problem(env: Mapping[str, str] | None = None) -> str | None:
    """What is wrong with ``$KOIKOI_RELAY`` in one line (None: unset, empty, or a relay URL)."""
    env = os.environ if env is None else env
    value = env.get(RELAY_ENV, "").strip()
    if not value or relay_url_ok(value):
        return None
    return f"${RELAY_ENV} must be {RELAY_URL_WANT}, not {value!r}"


def config_path() -> Path:
    return config_dir() / CONFIG_FILE


def parse_config(data: Mapping[str, object], path: Path) -> Config:
    """A :class:`Config` from parsed TOML; :class:`ConfigError` names every bad value at once."""
    problems: list[str] = []

    def check(key: str, value: object, ok: bool, want: str) -> None:
        if not ok:
            problems.append(f"{key} must be {want}, not {value!r}")

    extra = {k: v for k, v in data.items() if k not in ("relay", "lang", "assist", "practice")}
    relay = data.get("relay")
    check("relay", relay, relay is None or (isinstance(relay, str) and bool(relay.strip())), "a URL string")
    if isinstance(relay, str) and relay.strip():
        check("relay", relay, relay_url_ok(relay.strip()), RELAY_URL_WANT)
    lang = data.get("lang")
    check("lang", lang, lang in (None, "en", "ja"), '"en" or "ja"')
    assist = data.get("assist")
    check("assist", assist, assist is None or isinstance(assist, bool), "true or false")
    prac = data.get("practice", {})
    check("practice", prac, isinstance(prac, dict), "a table ([practice])")
    if not isinstance(prac, dict):
        prac = {}
    d = PracticeSettings()
    rounds = prac.get("rounds", d.rounds)
    check("practice.rounds", rounds, type(rounds) is int and rounds in (6, 12), "6 or 12")
    double = prac.get("double_at_8", d.double_at_8)
    check("practice.double_at_8", double, isinstance(double, bool), "true or false")
    level = prac.get("level", d.level)
    check("practice.level", level, level in LEVEL_NAMES, " or ".join(f'"{n}"' for n in LEVEL_NAMES))
    if problems:
        raise ConfigError(f"{path}: {'; '.join(problems)}")
    practice_extra = {k: v for k, v in prac.items() if k not in ("rounds", "double_at_8", "level")}
    return Config(
        relay=relay.strip() if isinstance(relay, str) else None,
        lang=lang if isinstance(lang, str) else None,
        assist=assist if isinstance(assist, bool) else None,
        practice=PracticeSettings(int(rounds), bool(double), str(level)),
        extra=extra,
        practice_extra=practice_extra,
    )


def load_config(path: Path | None = None) -> Config:
    """The config; defaults when the file does not exist. :class:`ConfigError` when it is unusable."""
    path = path or config_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Config()
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
    return parse_config(data, path)


def to_mapping(cfg: Config) -> dict[str, object]:
    out: dict[str, object] = {}
    if cfg.relay is not None:
        out["relay"] = cfg.relay
    if cfg.lang is not None:
        out["lang"] = cfg.lang
    if cfg.assist is not None:
        out["assist"] = cfg.assist
    out.update(cfg.extra)
    p = cfg.practice
    out["practice"] = {"rounds": p.rounds, "double_at_8": p.double_at_8, "level": p.level, **cfg.practice_extra}
    return out


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE_KEY.match(k) else _str(k)


def _str(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, _dt.datetime | _dt.date | _dt.time):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(str(k))} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def dump_toml(data: Mapping[str, object]) -> str:
    """A small TOML writer: scalars, arrays, and tables (nested as dotted headers)."""
    lines: list[str] = []

    def table(prefix: str, d: Mapping[str, object]) -> None:
        for k, v in d.items():
            if not isinstance(v, dict):
                lines.append(f"{_key(k)} = {_value(v)}")
        for k, v in d.items():
            if isinstance(v, dict):
                name = f"{prefix}.{_key(k)}" if prefix else _key(k)
                lines.append("")
                lines.append(f"[{name}]")
                table(name, v)

    table("", data)
    return "\n".join(lines).lstrip("\n") + "\n"


def save_config(cfg: Config, path: Path | None = None) -> Path:
    """Write the config atomically (temp file in the same dir, fsync, rename). Returns the path."""
    path = path or config_path()
    text = "# koikoi settings (see `koikoi practice --help`)\n" + dump_toml(to_mapping(cfg))
    try:
        atomic_write(path, text.encode("utf-8"), prefix=".config-")
    except OSError as e:
        raise ConfigError(f"cannot write {path}: {e.strerror}") from None
    return path


def resolve_relay(
    cli_value: str | None, env: Mapping[str, str] | None = None, config: Config | None = None
) -> str | None:
    """The relay URL: ``--relay``, else ``$KOIKOI_RELAY``, else the config file's ``relay``, else None.

    The config file is read only when the first two are not given (so a
    damaged file matters only then: :class:`ConfigError`, also for a ``$KOIKOI_RELAY`` that is no relay
    URL; ``--relay`` is the caller's to check).
    """
    if cli_value is not None and cli_value.strip():
        return cli_value.strip()
    env = os.environ if env is None else env
    from_env = env.get(RELAY_ENV, "").strip()
    if from_env:
        problem = env_relay_problem(env)
        if problem is not None:
            raise ConfigError(problem)
        return from_env
    cfg = config if config is not None else load_config()
    return cfg.relay
