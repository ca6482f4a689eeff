"""The ``parlour`` command: list envs, play against a bot, run the arena, train, rate.

Every subcommand explains itself with ``--help``. Bad arguments print one clear line and
exit with status 2; nothing prints a traceback for a user's mistake. The subcommands
live in the modules of this package, each listing its own as ``COMMANDS`` (a `Command`
apiece: name, function, help, arguments); `COMMANDS` here names the modules in the order
``parlour --help`` shows them.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from .. import __version__
from .common import EXIT_USAGE, UsageError, parlour_command, parse_options
from .games import agent_kinds, env_description

#: the modules of this package that add subcommands, in the order of ``--help``
COMMANDS = (
    "games",
    "arena",
    "train",
    "exploit",
    "dagger",
    "bench",
    "tips",
    "league",
    "new_game",
    "serve",
)


def __getattr__(attr: str) -> Any:
    # EXTRA_KINDS (env name -> the agent kinds beyond random, heuristic and ckpt:PATH)
    # is a view of the game records' extra_kinds (parlour.envs.GameRecord).
    if attr == "EXTRA_KINDS":
        from .. import envs

        return {r.name: list(r.extra_kinds) for r in envs.records()}
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def build_parser() -> argparse.ArgumentParser:
    """The ``parlour`` parser with every subcommand of `COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="parlour",
        description="Card and dice games from old rule books as multi-agent RL "
        "environments.",
    )
    parser.add_argument(
        "--version", action="version", version=f"parlour {__version__}"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        for command in importlib.import_module(f"{__name__}.{name}").COMMANDS:
            command.add_to(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``parlour`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (UsageError, ValueError, FileNotFoundError) as err:
        print(f"parlour {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`parlour list | head`): stop quietly, as Unix tools do;
        # stdout is pointed at devnull so the interpreter's final flush cannot fail
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


__all__ = [
    "COMMANDS",
    "EXIT_USAGE",
    "UsageError",
    "agent_kinds",
    "build_parser",
    "env_description",
    "main",
    "parlour_command",
    "parse_options",
]
