"""The ``koikoi`` command: one entry point, one module per subcommand.

Each module in :mod:`koikoi.client.commands` defines ``COMMAND`` (its name),
``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``. Exit codes: 0
success, 1 a failure the command reports (an invalid transcript, an aborted
match, a bad config file), 2 a usage error. No traceback reaches the user: an unexpected error
is reported in one line (set ``KOIKOI_DEBUG=1`` to see the traceback).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from ..support import sole
from . import commands
from .config import ConfigError, env_relay_problem, load_config
from .netsetup import config_words
from .output import Output

__all__ = ["READS_CONFIG", "build_parser", "main"]

READS_CONFIG = frozenset({"host", "join", "practice", "rooms"})
"""The commands that read config.toml: a bad file stops each of them the same way, before it starts
(one line on stderr naming every bad value, an ``error`` event with code ``config`` under --json, exit 1)."""


def _command_modules() -> list[ModuleType]:
    mods = []
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{commands.__name__}.{info.name}")
        if hasattr(mod, "COMMAND"):
            mods.append(mod)
    return mods


class OneLineParser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are one line, ``koikoi CMD: what is wrong (see koikoi CMD --help)``,
    exit 2, like the unknown options :func:`unknown_words` names (argparse prints its usage first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, ModuleType]]:
    parser = OneLineParser(
        prog="koikoi",
        description="Koi-Koi (hanafuda) played peer-to-peer: play, practise, relay, audit and score.",
        allow_abbrev=False,
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"koikoi {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    by_name: dict[str, ModuleType] = {}
    for mod in _command_modules():
        p = sub.add_parser(
            mod.COMMAND, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP), allow_abbrev=False
        )
        mod.add_arguments(p)
        by_name[mod.COMMAND] = mod
    return parser, by_name


def unknown_words(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    """What is wrong with the arguments ``parser`` did not take, in one line without the program's name:
    ``unknown option --passwrd; did you mean --password?`` (an option is never guessed from a prefix:
    ``--round`` is not ``--rounds``)."""
    options = [s for a in parser._actions for s in a.option_strings if s.startswith("--")]
    for word in extras:
        if word.startswith("-") and word != "-":
            name = word.split("=", 1)[0]
            close = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}?" if close else f" (see {parser.prog} --help)"
            return f"unknown option {name}{hint}"
    return f"unexpected argument {extras[0]!r} (see {parser.prog} --help)"


def main(argv: Sequence[str] | None = None) -> int:
    parser, by_name = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:  # a usage error like argparse's own (SystemExit 2), in one line
        chosen = parser if not args.command else _subparser(parser, args.command)
        chosen.exit(2, f"{chosen.prog}: {unknown_words(chosen, extras)}\n")
    if not args.command:
        parser.print_help()
        return 2
    mod = by_name[args.command]
    if args.command in READS_CONFIG:
        problems = []
        try:
            load_config()
        except ConfigError as e:  # one report, the same for every command, naming every bad value
            problems.append(config_words(e))
        if hasattr(args, "relay") and not (args.relay or "").strip():  # (a command that takes a relay, not given)
            env = env_relay_problem()
            if env is not None:
                problems.append(config_words(ConfigError(env)))
        if problems:
            out = Output(f"koikoi {args.command}", bool(getattr(args, "json", False)))
            out.error("config", "; ".join(problems))
            return 1
    try:
        code: int = mod.run(args)
    except KeyboardInterrupt:
        print("koikoi: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # the last line of defence: words, never a traceback
        if os.environ.get("KOIKOI_DEBUG"):
            raise
        shown = sole(e)  # say what went wrong, not "a group"
        print(f"koikoi {args.command}: unexpected error: {shown.__class__.__name__}: {shown}", file=sys.stderr)
        return 1
    return code


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    return parser


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
