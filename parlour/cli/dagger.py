"""``parlour dagger``: fit a network to a solver's moves on its own positions;
``parlour distil``: refit one to several DAgger runs' rows at once."""

from __future__ import annotations

import argparse

from .common import Command


def cmd_dagger(args: argparse.Namespace) -> int:
    from ..training import dagger

    return dagger.run_command(args)


def _dagger_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour dagger`` (`parlour.training.dagger.Settings`)."""
    from ..training import dagger

    dagger.add_arguments(p)


def cmd_distil(args: argparse.Namespace) -> int:
    from ..training import distil

    return distil.run_command(args)


def _distil_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour distil`` (`parlour.training.distil.Settings`)."""
    from ..training import distil

    distil.add_arguments(p)


#: the subcommands of this module (`parlour.cli.build_parser` adds them)
COMMANDS = (
    Command(
        "dagger",
        cmd_dagger,
        help="fit a trained network to a solver's moves on the positions its own "
        "play reaches (DAgger; German Whist's stage 2 exactly, or a trick game's PIMC "
        "bot)",
        description="Round by round: the network plays (against --opponents), the "
        "teacher (--teacher: exact, the env's exact solver, or solver / pimc:N, a "
        "trick game's PIMC bot) labels its decisive positions with every best move, "
        "and the network is fitted to them, held near the source network elsewhere. "
        "Each round is a checkpoint of RUN (parlour eval RUN, ckpt:RUN); Ctrl-C keeps "
        "the finished rounds and --resume continues.",
        arguments=_dagger_arguments,
        quiet=True,
    ),
    Command(
        "distil",
        cmd_distil,
        help="refit a network to the labelled decisions of several DAgger runs at "
        "once, optionally wider or deeper, keeping the epoch best on their held-out "
        "rows",
        description="The set loss on every run's decisive rows (held-out rows kept "
        "aside to choose the epoch), the KL divergence to the source on the others; "
        "--hidden widens or deepens the network without changing its play. Writes "
        "the best epoch's actor as the checkpoint --out (figures in distil.json); "
        "Ctrl-C writes the best epoch so far.",
        arguments=_distil_arguments,
    ),
)
