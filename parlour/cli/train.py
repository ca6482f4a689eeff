"""``parlour train``, ``parlour eval`` and ``parlour demo``."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from .common import (
    Command,
    UsageError,
    non_negative_int,
    parlour_command,
    parse_options,
    positive_int,
)

DEMO_STEPS = 150_000
DEMO_TEACHER_GAMES = 1_000


def cmd_train(args: argparse.Namespace) -> int:
    from ..paths import check_output_path
    from ..training import backends

    backends.check(args.backend)  # before any config is read or file written
    if args.algo is not None:
        from ..training.algos import ALGOS

        if args.algo not in ALGOS:
            raise UsageError(
                f"--algo {args.algo}: not an algorithm (algos: {', '.join(ALGOS)})"
            )
        # after the config's other overrides, so that it wins over a config file's
        args.set = [*(args.set or []), f"algo={args.algo}"]
    backend_options: dict[str, Any] = {}
    if args.num_env_runners is not None:
        backend_options["num_env_runners"] = args.num_env_runners
    if args.address is not None:
        backend_options["address"] = args.address
    if args.backend == "rllib" and not args.verbose:
        _quiet_ray()
    from ..training.train import (
        default_run_dir,
        load_config,
        resume_config,
        summary_table,
        train,
    )

    run_dir = args.run_dir
    if run_dir is not None:
        check_output_path(run_dir, directory=True, what="--run-dir")
    if args.resume:
        # A resumed run keeps the config it was started with (config.json); --set
        # changes single keys on purpose, and each change is printed.
        if args.config or args.preset:
            raise UsageError(
                "--resume continues with the run's stored config: drop "
                "--config/--preset (change single keys with --set)"
            )
        if run_dir is None:
            run_dir = default_run_dir(load_config(None, env=args.env))
        config, changes = resume_config(run_dir, args.set or [])
        if config.env != args.env:
            raise UsageError(f"{run_dir} holds a {config.env} run, not {args.env}")
        for line in changes:
            print(f"resume with --set {line}")
    else:
        config = load_config(
            args.config, env=args.env, overrides=args.set or [], preset=args.preset
        )
    result = train(
        config,
        run_dir=run_dir,
        resume=args.resume,
        progress=not args.quiet,
        backend=args.backend,
        backend_options=backend_options,
    )
    again = []  # what the resume command needs besides the run directory
    if args.backend != backends.DEFAULT:
        again += ["--backend", args.backend]
    for key, value in backend_options.items():
        again += ["--" + key.replace("_", "-"), str(value)]
    _report_run(result, summary_table, args.env, again)
    return 130 if result.interrupted else 0


def _quiet_ray() -> None:
    """Ray's and RLlib's start-up notices (the new API stack, token auth, gputil,
    deprecations inside RLlib) would bury the progress bar: only their errors show."""
    import logging

    from ..training.backends import ray_support

    if ray_support.ray_version() is None:
        return  # the backend's check says what to install
    import ray.rllib  # noqa: F401  (its loggers exist once it is imported)

    for name in list(logging.root.manager.loggerDict):
        if name == "ray" or name.startswith("ray."):
            logging.getLogger(name).setLevel(logging.ERROR)


def _report_run(result, summary_table, env: str, again: Sequence[str] = ()) -> None:
    if result.interrupted:
        if result.phase == "teacher games":
            print(
                "interrupted while playing the teacher's games: "
                f"{result.teacher_games:,}"
                f" kept in {result.run_dir / 'warm_start'}"
            )
        elif result.phase == "fit":
            print(
                f"interrupted during the fit: the {result.teacher_games:,} teacher "
                "games are kept, the fit starts again on resume"
            )
        else:
            print(
                f"interrupted at step {result.steps:,}; checkpoint saved: "
                f"{result.checkpoint}"
            )
        print(
            f"continue with: {parlour_command()} train {env} "
            + " ".join(shlex.quote(a) for a in again)
            + (" " if again else "")
            + "--resume --run-dir "
            + shlex.quote(str(result.run_dir))
        )
        return
    minutes = f"{result.seconds / 60:.1f} min"
    if result.session_seconds < result.seconds - 1:
        minutes += f" ({result.session_seconds / 60:.1f} min in this session)"
    print(f"trained {result.steps:,} steps in {minutes}")
    if result.phase_seconds:
        print(
            "time by phase: "
            + ", ".join(
                f"{name} {sec / 60:.1f} min"
                for name, sec in result.phase_seconds.items()
                if name != "done"
            )
        )
    print(summary_table(result))
    print(f"checkpoint: {result.checkpoint}")
    if result.plot is not None:
        print(f"learning curve: {result.plot}")


def cmd_eval(args: argparse.Namespace) -> int:
    from ..paths import check_output_path, prepare_output_file
    from ..training import checkpoint as ckpt_io
    from ..training.arena import ArenaInterrupted, run_arena, save_json

    if args.exact:
        from .exploit import cmd_exact

        return cmd_exact(args)
    if args.env is not None:
        raise UsageError("--env names the env of an agent spec: use it with --exact")
    source = args.checkpoint
    if source.startswith("pretrained:"):
        from ..training import pretrained

        source = str(pretrained.named(source.removeprefix("pretrained:")))
    if args.json is not None:
        # the value itself must name a file (not a folder, not empty), and so must
        # each opponent's file made from it
        check_output_path(args.json, what="--json")
        for opponent in args.vs:
            prepare_output_file(_eval_json_path(args.json, opponent), what="--json")
    ckpt = ckpt_io.load(source)
    options = ckpt.env_options
    options.update(parse_options(args.option))
    if args.stage2_quality and ckpt.env_name != "german_whist_v0":
        raise ValueError(
            f"--stage2-quality needs a german_whist_v0 checkpoint, got {ckpt.env_name}"
        )
    tables = []
    stopped, left = None, []
    for i, opponent in enumerate(args.vs):
        try:
            result = run_arena(
                ckpt.env_name,
                [f"ckpt:{ckpt.path}", opponent],
                games=args.games,
                duplicate=args.duplicate,
                seed=args.seed,
                env_options=options,
                progress=not args.quiet,
            )
        except ArenaInterrupted as stop:
            # Ctrl-C: the opponents done and this one's finished games are kept
            result = stopped = stop.result
        if result.games:
            tables.append(result.table())
            if args.json:
                save_json(result, _eval_json_path(args.json, opponent))
        if stopped is not None:
            left = args.vs[i + 1 :]
            break
    if tables:
        print(f"checkpoint {ckpt.path} ({ckpt.env_name}, step {ckpt.step})")
        print("\n\n".join(tables))
    if stopped is not None:
        print(
            f"interrupted: kept {stopped.games} of {stopped.planned} games against "
            f"{stopped.specs[1]}" + (f"; not played: {' '.join(left)}" if left else ""),
            file=sys.stderr,
        )
        return 130
    if args.stage2_quality:
        print()
        print(_stage2_report(ckpt.path, args.stage2_quality, args.seed, options))
    return 0


def _eval_json_path(json_arg: str, opponent: str) -> str:
    """``--json out.json`` writes ``out-OPPONENT.json`` per opponent."""
    safe = opponent.replace(":", "_").replace("/", "_")
    return f"{json_arg.removesuffix('.json')}-{safe}.json"


def _stage2_report(path, games: int, seed: int, options: dict) -> str:
    """The checkpoint's stage-2 play scored against the exact solver."""
    from ..agents.solver.german_whist import stage2_quality
    from ..training.yardsticks import stage2_lines

    q = stage2_quality(f"ckpt:{path}", games=games, seed=seed, env_options=options)
    return stage2_lines(q)


def cmd_demo(args: argparse.Namespace) -> int:
    import time

    from ..paths import check_output_path
    from ..training.train import load_config, summary_table, train

    run_dir = args.run_dir
    if run_dir is None:
        run_dir = f"runs/demo-{time.strftime('%Y%m%d-%H%M%S')}"
    check_output_path(run_dir, directory=True, what="--run-dir")
    overrides = [
        f"total_timesteps={args.steps}",
        f"eval_every={max(args.steps // 4, 1)}",
        f"checkpoint_every={max(args.steps // 4, 1)}",
        f"seed={args.seed}",
        f"eval_games={args.eval_games}",
    ]
    if args.steps < 4 * 512:
        # a budget below one rollout of the config (4 envs × 512 steps): shorter ones
        n_steps = max(1, args.steps // 4)
        overrides += [f"n_steps={n_steps}", f"batch_size={min(256, 4 * n_steps)}"]
    if args.teacher_games:
        # With the demo's few games the teacher's own stage-2 card is the better label:
        # solver labels (the config's warm_start_exact) pay off only with more data
        # (1,000 games: 0.82 against random with them, 0.90 without; docs/results.md).
        overrides += [
            f"warm_start_games={args.teacher_games}",
            "warm_start_epochs=10",
            "warm_start_exact=false",
        ]
    else:
        overrides.append("warm_start=''")
    config = load_config(None, env="german_whist_v0", overrides=overrides)
    warm = (
        f"imitation of the heuristic bot over {args.teacher_games:,} games, then "
        if args.teacher_games
        else ""
    )
    print(
        f"Parlour demo: {warm}self-play MaskablePPO on German Whist for "
        f"{args.steps:,} learner steps,\n"
        f"evaluated against random play and the heuristic bot on duplicate deals "
        f"({args.eval_games} games each).\n"
    )
    result = train(config, run_dir=run_dir, progress=not args.quiet)
    _report_run(result, summary_table, "german_whist_v0")
    if result.interrupted:
        return 130
    print(
        f"\nRun directory: {result.run_dir} (config, evaluations.csv, TensorBoard logs)"
    )
    print(
        f"Play against it: {parlour_command()} play german_whist_v0 "
        f"--opponent {shlex.quote(f'ckpt:{result.run_dir}')}"
    )
    return 0


def _train_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour train``."""
    p.add_argument("env", help="environment name, e.g. german_whist_v0")
    p.add_argument(
        "--config", metavar="FILE", help="YAML config (default configs/ENV.yaml)"
    )
    p.add_argument(
        "--preset",
        metavar="NAME",
        help="a named config, configs/ENV.NAME.yaml (German Whist: strong, the "
        "recipe of docs/results.md, about 45 min)",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a config key, repeatable (e.g. total_timesteps=100000, "
        "env_options.variant=honeymoon)",
    )
    p.add_argument(
        "--run-dir",
        metavar="DIR",
        help="where to write, created if missing (default runs/ENV-...)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --run-dir from its last completed phase, with the "
        "config it was started with (--set changes a key on purpose)",
    )
    p.add_argument(
        "--backend",
        default="sb3",
        metavar="NAME",
        help="the learning library (sb3: sb3-contrib's MaskablePPO; rllib: RLlib's "
        "PPO with env runners on Ray; parlour.training.backends lists them)",
    )
    p.add_argument(
        "--algo",
        default=None,
        metavar="NAME",
        help="--backend batch: the learning algorithm, ppo (default), mmd, nfsp or "
        "dmc (docs/algorithms.md); the same as --set algo=NAME",
    )
    p.add_argument(
        "--num-env-runners",
        type=non_negative_int,
        default=None,
        metavar="N",
        help="--backend rllib: env-runner processes collecting self-play "
        "(default 2; 0 = in this process)",
    )
    p.add_argument(
        "--address",
        default=None,
        metavar="HOST:PORT",
        help="--backend rllib: join the Ray cluster there ('ray start --head' "
        "prints it) instead of starting a local Ray",
    )
    p.add_argument(
        "--verbose",
        action="store_true",
        help="--backend rllib: show Ray's and RLlib's warnings",
    )


def _eval_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour eval``."""
    p.add_argument(
        "checkpoint",
        help="checkpoint directory or run directory, or pretrained:NAME (a shipped "
        "agent: the env's name for its default options, e.g. german_whist_v0, "
        "german_whist_v0.honeymoon); with --exact any agent spec",
    )
    p.add_argument(
        "--exact",
        action="store_true",
        help="score the agent against the game's exact solution (German Whist: stage "
        "2 against perfect play; Fünfzehn – tot: the loss against optimal) over "
        "--games games",
    )
    p.add_argument(
        "--env",
        metavar="ENV",
        help="--exact: the env of an agent spec that is no checkpoint (e.g. "
        "--env fuenfzehn_tot_v0 for threshold:12)",
    )
    p.add_argument(
        "--vs",
        nargs="+",
        default=["random", "heuristic"],
        metavar="SPEC",
        help="opponent specs (random heuristic)",
    )
    p.add_argument(
        "--games", type=positive_int, default=1000, help="games per opponent"
    )
    p.add_argument(
        "--duplicate", action="store_true", help="replay deals with seats swapped"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "-o",
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="env option override (normally taken from the checkpoint)",
    )
    p.add_argument(
        "--json",
        metavar="FILE",
        help="write results as JSON, one file per opponent (FILE-OPPONENT.json; "
        "missing folders are created)",
    )
    p.add_argument(
        "--stage2-quality",
        type=positive_int,
        metavar="GAMES",
        help="German Whist only: also play GAMES games against the heuristic and score "
        "every stage-2 decision against the exact solver (optimal fraction, tricks "
        "lost vs perfect play)",
    )


def _demo_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour demo``."""
    p.add_argument(
        "--steps",
        type=positive_int,
        default=DEMO_STEPS,
        help=f"learner steps ({DEMO_STEPS:,})",
    )
    p.add_argument(
        "--eval-games",
        type=positive_int,
        default=400,
        help="evaluation games per opponent (400)",
    )
    p.add_argument(
        "--teacher-games",
        type=non_negative_int,
        default=DEMO_TEACHER_GAMES,
        help="games of the heuristic bot imitated before self-play "
        f"({DEMO_TEACHER_GAMES:,}; 0: no warm start)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--run-dir",
        metavar="DIR",
        help="where to write, created if missing (default runs/demo-TIME)",
    )


#: the subcommands of this module (`parlour.cli.build_parser` adds them)
COMMANDS = (
    Command(
        "train",
        cmd_train,
        help="self-play training (MaskablePPO by default)",
        description="Train a self-play agent. Hyperparameters come from "
        "configs/ENV.yaml (or --config) and --set overrides; the run directory gets "
        "the resolved config, checkpoints, evaluations.csv, TensorBoard logs and "
        "learning_curve.png.",
        arguments=_train_arguments,
        quiet=True,
    ),
    Command(
        "eval",
        cmd_eval,
        help="evaluate a checkpoint against bots, or any agent against an exact "
        "solution (--exact)",
        arguments=_eval_arguments,
        quiet=True,
    ),
    Command(
        "demo",
        cmd_demo,
        help="the main job on a small budget: train German Whist, evaluate, plot",
        description="Trains a German Whist agent with the default config on a short "
        "budget, evaluates it against random and heuristic play on duplicate deals, "
        "prints the table and says where the checkpoint and learning curve are.",
        arguments=_demo_arguments,
        quiet=True,
    ),
)
