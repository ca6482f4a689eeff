"""What every ``parlour`` subcommand shares: the usage error, ``-o KEY=VALUE`` options,
the env argument, the ``--executor local|ray`` flags and integer argument types."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import Any

import yaml

EXIT_USAGE = 2


class UsageError(Exception):
    """A user mistake: printed as one line, exit status 2."""


class Command:
    """A subcommand: its name, the function that runs it, its one-line help, the
    function that adds its arguments, whether it takes ``--quiet`` (no progress bars)
    and argparse's other parser options (``description``, ``usage`` …). Each module
    of `parlour.cli` lists its own in ``COMMANDS``."""

    def __init__(
        self,
        name: str,
        run: Callable[[argparse.Namespace], int],
        help: str,
        *,
        arguments: Callable[[argparse.ArgumentParser], None] | None = None,
        quiet: bool = False,
        **parser_options: Any,
    ) -> None:
        self.name, self.run, self.help = name, run, help
        self.arguments = arguments
        self.quiet = quiet
        self.parser_options = parser_options

    def add_to(self, sub: Any) -> argparse.ArgumentParser:
        """Add this subcommand to argparse's subparsers ``sub``."""
        p = sub.add_parser(self.name, help=self.help, **self.parser_options)
        if self.arguments is not None:
            self.arguments(p)
        if self.quiet:  # the commands that draw progress bars
            p.add_argument("--quiet", action="store_true", help="no progress bars")
        p.set_defaults(func=self.run)
        return p


def parse_options(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``["variant=honeymoon", "match_target=7"]`` -> ``{"variant": "honeymoon", ...}``.

    Values are read as YAML scalars, so numbers, booleans and ``null`` get their types.
    """
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(
                f"bad option {pair!r}: write KEY=VALUE, e.g. variant=honeymoon"
            )
        try:
            out[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = value
    return out


def env_arg(p: argparse.ArgumentParser) -> None:
    """The positional ENV and the repeatable ``-o KEY=VALUE``."""
    p.add_argument(
        "env", help="environment name, e.g. german_whist_v0 (see 'parlour list')"
    )
    p.add_argument(
        "-o",
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="environment option, repeatable (e.g. -o variant=honeymoon)",
    )


def add_executor_args(p: argparse.ArgumentParser, what: str) -> None:
    """``--executor local|ray`` and ``--address`` (docs/scale-out.md); the old
    spelling ``--backend local|ray`` is still read (`check_executor` warns)."""
    p.add_argument(
        "--executor",
        choices=["local", "ray"],
        help=f"play here, or spread the {what} as Ray tasks; the results are the "
        "same (local)",
    )
    # ``parlour train --backend`` names the trainer; here it was the executor's old
    # name, kept working out of the help
    p.add_argument(
        "--backend",
        choices=["local", "ray"],
        dest="old_backend",
        help=argparse.SUPPRESS,
    )
    p.add_argument(
        "--address",
        metavar="ADDR",
        help="with --executor ray: the cluster's head node, HOST:PORT as 'ray start "
        "--head' prints it (default: start a local Ray)",
    )


def check_executor(args: argparse.Namespace) -> None:
    """Settle ``args.executor`` (the old ``--backend local|ray`` with a one-line
    deprecation warning on stderr); ``--address`` without ``--executor ray`` is a
    usage error, said first, and so is ``--executor ray`` where Ray is missing."""
    from ..training.distributed import check_executor as check

    if args.old_backend is not None:
        print(
            f"parlour: --backend {args.old_backend} is deprecated here: write "
            f"--executor {args.old_backend} (--backend names the trainer of "
            "'parlour train')",
            file=sys.stderr,
        )
        if args.executor not in (None, args.old_backend):
            raise UsageError(
                f"--executor {args.executor} and --backend {args.old_backend} disagree"
            )
        args.executor = args.old_backend
    if args.executor is None:
        args.executor = "local"
    check(args.executor, args.address)
    if args.executor == "ray":  # Ray missing is said before any output file is made
        from ..training.distributed import import_ray

        import_ray()


def _int_at_least(minimum: int, what: str):
    """An argparse type: an integer of at least ``minimum`` (``what`` names it)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
        return value

    return parse


positive_int = _int_at_least(1, "a positive integer")
non_negative_int = _int_at_least(0, "a non-negative integer")


def parlour_command() -> str:
    """The ``parlour`` being run, as the user can type it here: ``parlour`` when that
    is the one on PATH, else its path (``.venv/bin/parlour`` after ``make demo``), else
    ``python -m parlour.cli``."""
    import os
    import shutil

    exe = sys.argv[0] if sys.argv else ""
    if os.path.basename(exe) == "parlour" and os.path.isfile(exe):
        here = os.path.abspath(exe)
        on_path = shutil.which("parlour")
        if on_path and os.path.samefile(on_path, here):
            return "parlour"
        relative = os.path.relpath(here)
        return shlex.quote(relative if not relative.startswith("..") else here)
    return f"{shlex.quote(sys.executable)} -m parlour.cli"

