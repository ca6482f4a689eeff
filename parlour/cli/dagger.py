"""``parlour dagger``: fit a network to a solver's moves on its own positions."""

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
)
