"""``parlour tips``: the seeds' strategy tips as duplicate A/B experiments."""

from __future__ import annotations

import argparse

from .common import (
    Command,
    UsageError,
    add_executor_args,
    check_executor,
)


def cmd_tips(args: argparse.Namespace) -> int:
    from ..paths import check_output_path
    from ..training.tips import run_tips

    if args.audit or args.baseline is not None:
        return _audit_or_baseline(args)
    if args.samples is not None:
        raise UsageError("--samples is for --audit")
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


def _audit_or_baseline(args: argparse.Namespace) -> int:
    """``--audit`` or ``--baseline AGENT``: one section of the report, and its JSON."""
    from pathlib import Path

    from ..paths import check_output_path
    from ..training.tips import default_workers, load_config
    from ..training.tips.audit import run_audit
    from ..training.tips.baseline import run_baseline
    from ..training.tips.sections import write_run

    if args.audit and args.baseline is not None:
        raise UsageError("give --audit or --baseline, not both")
    flag = "--audit" if args.audit else "--baseline"
    for name, given in (
        ("--opponents", args.opponents),
        ("--checkpoint", args.checkpoint),
        ("--executor ray", "ray" in (args.executor, args.old_backend)),
        ("--address", args.address),
    ):
        if given:
            raise UsageError(f"{name} does not go with {flag}")
    if args.baseline is not None and args.samples is not None:
        raise UsageError("--samples is for --audit")
    check_output_path(args.out, directory=True, what="--out")
    config = load_config(args.game)
    command = f"parlour tips {config.short}"
    command += " --audit" if args.audit else f" --baseline {args.baseline}"
    for tip in args.tip or ():
        command += f" --tip {tip}"
    for name in ("games", "samples", "seed"):
        if getattr(args, name) is not None:
            command += f" --{name} {getattr(args, name)}"
    command += f" --out {args.out}"
    common = {
        "tips": args.tip,
        "games": args.games,
        "seed": args.seed,
        "progress": not args.quiet,
        "command": command,
    }
    if args.audit:
        run = run_audit(args.game, samples=args.samples, **common)
        name = "audit"
    else:
        workers = args.workers or default_workers()
        run = run_baseline(args.game, args.baseline, workers=workers, **common)
        name = "baseline"
    paths = write_run(Path(args.out), config.short, name, run.as_dict())
    for path in paths.values():
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
        help="at most N duplicate deals per tip; with --audit, N games of "
        "self-play (default: the config's)",
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
    p.add_argument(
        "--audit",
        action="store_true",
        help="audit each tip's move against the judge (exact search, determinized "
        "search) at the positions of heuristic self-play; writes the report's audit "
        "section and GAME_audit.json (german_whist, forty_fives)",
    )
    p.add_argument(
        "--baseline",
        metavar="AGENT",
        help="A/B of each tip on a strong agent: AGENT following the tip where it "
        "speaks against AGENT alone (e.g. pretrained); writes the report's baseline "
        "section and GAME_baseline.json (german_whist, forty_fives)",
    )
    p.add_argument(
        "--samples",
        type=int,
        metavar="N",
        help="--audit: sampled deals per set at each decision (default: the config's)",
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
        "exactly and the seat order. With --audit (German Whist, Forty-Fives) each "
        "tip's move is compared with the best move by exact or determinized search; "
        "with --baseline AGENT the agent that follows each tip plays the agent alone. "
        "Each writes its own section of GAME.md and keeps the others.",
        arguments=_tips_arguments,
        quiet=True,
    ),
)
