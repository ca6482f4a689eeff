"""``parlour tips``: the seeds' strategy tips as duplicate A/B experiments."""

from __future__ import annotations

import argparse

from .common import (
    Command,
    add_executor_args,
    check_executor,
)


def cmd_tips(args: argparse.Namespace) -> int:
    from ..paths import check_output_path
    from ..training.tips import run_tips

    check_executor(args)
    check_output_path(args.out, directory=True, what="--out")

    run = run_tips(
        args.game,
        tips=args.tip,
        games=args.games,
        opponents=args.opponents,
        checkpoint=args.checkpoint,
        out=args.out,
        seed=args.seed,
        workers=args.workers,
        progress=not args.quiet,
        executor=args.executor,
        address=args.address,
    )
    print(run.summary())
    for path in run.paths.values():
        print(f"wrote {path}")
    return 0


def _tips_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour tips``."""
    p.add_argument(
        "game", help="german_whist, forty_fives or fuenfzehn_tot (or ENV_v0)"
    )
    p.add_argument(
        "--tip",
        action="append",
        metavar="NAME",
        help="test only this tip, repeatable (default: every tip of the game)",
    )
    p.add_argument(
        "--games",
        type=int,
        metavar="N",
        help="at most N duplicate deals per tip (default: the config's)",
    )
    p.add_argument(
        "--opponents",
        nargs="+",
        metavar="SPEC",
        help="the opponent pool (default: random heuristic)",
    )
    p.add_argument(
        "--checkpoint",
        metavar="PATH",
        help="add ckpt:PATH to the pool and measure its agreement with the tips",
    )
    p.add_argument(
        "--out",
        default="runs/tips",
        metavar="DIR",
        help="where to write the report, chart and JSON, created if missing "
        "(runs/tips)",
    )
    p.add_argument("--seed", type=int, help="seed of the deals (default: the config's)")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="W",
        help="worker processes of the local executor (default: the number of CPUs)",
    )
    add_executor_args(p, "blocks of deals")


#: the subcommands of this module (`parlour.cli.build_parser` adds them)
COMMANDS = (
    Command(
        "tips",
        cmd_tips,
        help="test the seeds' strategy tips: duplicate A/B experiments with 95%% CIs",
        description="For each tip of GAME (german_whist, forty_fives, fuenfzehn_tot), "
        "the heuristic bot with the tip (A) against the same bot without it (B), over "
        "the same deals, seats rotated, against a pool of opponents; paired "
        "differences per deal with 95% intervals, a p-value and sequential stopping. "
        "Hypotheses come from configs/tips/ENV.yaml; writes GAME.md, GAME.png and "
        "GAME.json to --out. Fünfzehn – tot also gets the rules' arithmetic checked "
        "exactly and the seat order.",
        arguments=_tips_arguments,
        quiet=True,
    ),
)
