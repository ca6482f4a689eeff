"""``parlour bench``: one benchmark protocol, for a training recipe or for agents."""

from __future__ import annotations

import argparse

from .common import (
    Command,
    UsageError,
    add_executor_args,
    check_executor,
    env_arg,
    parse_options,
)


def cmd_bench(args: argparse.Namespace) -> int:
    from ..training import bench as bench_mod

    check_executor(args)
    if args.agent and (args.steps is not None or args.config or args.preset):
        raise UsageError("--agent measures existing agents: drop --steps and --config")
    if not args.agent and args.steps is None:
        raise UsageError("give --steps N to train, or --agent SPEC to measure")
    protocol = bench_mod.Protocol(
        games=args.games,
        br_steps=args.br_steps,
        br_games=args.br_games,
        exact_games=args.exact_games,
        rating_deals=args.rating_deals,
        br_overrides=tuple(args.br_set or []),
        fields=tuple(args.fields or ()),
        executor=args.executor,
    )
    recipe = None
    if not args.agent:
        recipe = bench_mod.Recipe(
            args.trainer, args.config, args.preset, tuple(args.set or [])
        )
    result = bench_mod.bench(
        args.env,
        args.steps,
        args.seeds,
        recipe,
        args.agent or (),
        protocol,
        parse_options(args.option),
        args.seed,
        args.out,
        args.append,
        progress=not args.quiet,
    )
    print(result.markdown())
    print(f"wrote {result.out_dir / 'bench.json'}, {result.out_dir / 'bench.md'}")
    if args.append is not None:
        print(f"appended to {args.append}")
    return 0


def cmd_bench_plot(args: argparse.Namespace) -> int:
    from ..training.bench_curves import bench_plot

    path = bench_plot(args.dirs, args.out, args.label or (), args.vs or (), args.title)
    print(f"wrote {path}")
    return 0


def _plot_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour bench-plot``."""
    p.add_argument(
        "dirs", nargs="+", metavar="DIR", help="`parlour bench` output directories"
    )
    p.add_argument("--out", required=True, metavar="PNG", help="the figure to write")
    p.add_argument(
        "--label",
        action="append",
        metavar="NAME",
        help="a benchmark's name in the legend, one per DIR in order "
        "(default: each directory's name)",
    )
    p.add_argument(
        "--vs",
        nargs="+",
        metavar="OPPONENT",
        help="a panel per opponent (default: every opponent of the curves)",
    )
    p.add_argument("--title", help="the figure's title (default: the game, the seeds)")


def _bench_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour bench``."""
    from ..training.bench import MIN_SEEDS, Protocol

    env_arg(p)
    d = Protocol()
    p.add_argument("--steps", type=int, help="learner decisions each seed trains for")
    p.add_argument(
        "--seeds",
        type=int,
        default=MIN_SEEDS,
        help=f"training runs, seeds SEED.. SEED+N-1 (at least {MIN_SEEDS})",
    )
    p.add_argument("--seed", type=int, default=0, help="the first training seed (0)")
    p.add_argument(
        "--trainer",
        default="sb3",
        metavar="NAME",
        help="the training backend of the recipe (sb3, batch, rllib)",
    )
    p.add_argument("--config", metavar="FILE", help="the recipe's YAML config")
    p.add_argument(
        "--preset", metavar="NAME", help="the recipe's preset (configs/ENV.NAME.yaml)"
    )
    p.add_argument(
        "-c",
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a key of the recipe's config, repeatable (passed through)",
    )
    p.add_argument(
        "--agent",
        action="append",
        metavar="SPEC",
        help="measure this agent without training (random, heuristic, solver, "
        "pretrained, ckpt:PATH ...), repeatable: one row each",
    )
    counts = {
        "games": "held-out duplicate games against each field",
        "br_steps": "the learned best response's budget in learner decisions",
        "br_games": "the best response's held-out evaluation games",
        "exact_games": "games of the exact yardstick, where the game has one",
        "rating_deals": "deals per table of the rating's games",
    }
    for key, what in counts.items():
        # checked by Protocol.check: a bad count is one line, as every other error
        default = getattr(d, key)
        flag = "--" + key.replace("_", "-")
        p.add_argument(flag, type=int, default=default, help=f"{what} ({default})")
    p.add_argument(
        "--br-set",
        action="append",
        metavar="KEY=VALUE",
        help="override a key of the best response's training config, repeatable",
    )
    p.add_argument(
        "--fields",
        nargs="+",
        metavar="SPEC",
        help="the fields and the rating's ladder (default: random, heuristic and "
        "solver where the env has one)",
    )
    p.add_argument(
        "--out", metavar="DIR", help="where to write (default runs/bench-ENV-...)"
    )
    p.add_argument(
        "--append",
        metavar="RESULTS",
        help="also append to this results file: the Markdown table to a .md file, "
        "else one JSON line",
    )
    add_executor_args(p, "arena games")


#: the subcommands of this module (`parlour.cli.build_parser` adds them)
COMMANDS = (
    Command(
        "bench",
        cmd_bench,
        help="train a recipe with several seeds and measure every agent the same way",
        description="Trains --seeds runs of a recipe (--trainer, --config/--preset, "
        "-c KEY=VALUE) for --steps each, or takes --agent specs, and measures each "
        "agent the same way: win share against random, heuristic and solver on "
        "held-out duplicate deals, a learned best response at --br-steps, the exact "
        "yardstick where the game has one, a rating against the reference ladder, "
        "wall and CPU seconds. Writes bench.json and bench.md (docs/benchmark.md).",
        arguments=_bench_arguments,
        quiet=True,
    ),
    Command(
        "bench-plot",
        cmd_bench_plot,
        help="draw the learning curves of several benchmarks of one game",
        description="Draws the learning curves that `parlour bench` keeps in "
        "bench.json (each seed's evaluations during training: -c eval_every=N) of "
        "one or more benchmarks of the same game, one per algorithm say, into one "
        "PNG: a panel per opponent, the mean over each benchmark's seeds with a band "
        "from its lowest to its highest seed (docs/benchmark.md).",
        arguments=_plot_arguments,
    ),
)
