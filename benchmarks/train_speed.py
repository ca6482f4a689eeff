"""Learner steps per second of self-play training (whole loop: env, opponents, PPO
updates), the sb3 backend and the batch backend side by side in one run.

    python benchmarks/train_speed.py [--env german_whist_v0] [--steps 20000]
        [--batch-steps 262144] [--backends sb3 sb3-same batch] [--set key=value]
        [--profile] [--json PATH]

Rows (each a `parlour.training.train.train` run in this process, one torch thread):

- ``sb3``: the sb3 backend with the env's default config (``configs/ENV.yaml``, the
  current recipe);
- ``sb3-same``: the sb3 backend with the default config's envs, rollout and minibatch
  but the batch preset's network, PPO epochs and opponents (the same arithmetic per
  learner step as the batch row);
- ``batch``: the batch backend with the batch preset (``configs/ENV.batch.yaml``).

Evaluation, checkpoints, TensorBoard and the warm start (a fixed cost before step 0)
are switched off, so only self-play training is timed; ``--set`` applies to every row.
Each row reports learner steps per wall-clock second and per CPU second of this
process (the machine may be shared: the CPU figure is the one less moved by other
work), and the batch row its ratio to each sb3 row. Targets (issue 17, German Whist,
the 2-core machine): batch >= 20,000 learner steps/s and >= 25x sb3. ``--profile``
prints where the batch row's time goes (rollout against update, and the functions that
take the most). Not a test: nothing fails on a slow machine.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

from _common import config_summary

OFF = [
    "eval_every=1000000000",
    "checkpoint_every=1000000000",
    "tensorboard=false",
    "warm_start=''",
]
# what sb3-same takes from the batch preset
SAME = ("net_arch", "activation", "n_epochs", "opponents")
TARGET_STEPS, TARGET_RATIO = 20_000, 25


def _config(env: str, backend: str, steps: int, overrides: list[str]):
    from parlour.training.train import load_config, presets

    off = [*overrides, *OFF, f"total_timesteps={steps}"]
    if backend == "batch":
        if "batch" not in presets(env):
            raise ValueError(f"{env} has no batch preset (configs/{env}.batch.yaml)")
        return load_config(None, env=env, preset="batch", overrides=off)
    if backend == "sb3-same":
        batch = load_config(None, env=env, preset="batch")
        same = [f"{k}={json.dumps(getattr(batch, k))}" for k in SAME]
        return load_config(None, env=env, overrides=[*same, *off])
    return load_config(None, env=env, overrides=off)


def _run(config, backend: str, profile: bool) -> dict:
    from parlour.training.train import train

    profiler = cProfile.Profile() if profile else None
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as run_dir:
        wall, cpu = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.enable()
        result = train(
            config,
            run_dir=run_dir,
            progress=False,
            final_eval=False,
            backend="batch" if backend == "batch" else "sb3",
        )
        if profiler is not None:
            profiler.disable()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    row = {
        "env": config.env,
        "backend": backend,
        "steps": result.steps,
        "seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
        "steps_per_s": round(result.steps / wall),
        "steps_per_cpu_s": round(result.steps / cpu),
        "load_before": round(load, 2),
        "load_after": round(os.getloadavg()[0], 2),
        **config_summary(config),
    }
    if profiler is not None:
        _print_profile(profiler)
    return row


def _print_profile(profiler: cProfile.Profile) -> None:
    stats = pstats.Stats(profiler)
    total = stats.total_tt
    # cumulative seconds of the functions that show where a rollout's time goes
    parts = {
        "collect (rollout)": ("backends/batch.py", "collect"),
        "update (PPO)": ("backends/batch.py", "update"),
        "opponents' cards": ("batch_selfplay.py", "opponent_actions"),
        "engine: observe": ("envs/batch/", "observe"),
        "engine: legal_mask": ("envs/batch/", "legal_mask"),
        "engine: step": ("envs/batch/", "step"),
    }
    print(f"\nbatch row, profiled ({total:.1f} s in all):")
    for label, (where, name) in parts.items():
        seconds = sum(
            ct
            for (path, _, func), (_, _, _, ct, _) in stats.stats.items()
            if func == name and where in path.replace(os.sep, "/")
        )
        print(f"  {label:<20} {seconds:6.1f} s  {seconds / total:5.1%}")
    print("  functions taking the most time of their own:")
    top = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:12]
    for (path, line, name), (_, _, tt, _, _) in top:
        where = f"{Path(path).name}:{line}" if line else path
        print(f"    {tt:6.1f} s  {tt / total:5.1%}  {name}  ({where})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="german_whist_v0")
    parser.add_argument(
        "--steps", type=int, default=20_000, help="learner steps of each sb3 row"
    )
    parser.add_argument(
        "--batch-steps",
        type=int,
        default=262_144,
        help="learner steps of the batch row",
    )
    parser.add_argument(
        "--backends",
        nargs="+",
        default=["sb3", "sb3-same", "batch"],
        choices=["sb3", "sb3-same", "batch"],
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="config override for every row, repeatable",
    )
    parser.add_argument("--profile", action="store_true", help="profile the batch row")
    parser.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.batch_steps < 1:
        parser.error("--steps and --batch-steps must be positive")

    configs = {}
    for backend in args.backends:
        steps = args.batch_steps if backend == "batch" else args.steps
        try:
            configs[backend] = _config(args.env, backend, steps, args.set)
        except ValueError as err:
            parser.error(str(err))
    # imports and the game packages load before any clock starts
    import parlour.training.backends.batch  # noqa: F401
    import parlour.training.backends.sb3  # noqa: F401
    from parlour import envs

    envs.make(args.env)
    rows = []
    for backend, config in configs.items():
        print(f"{backend}: {config.total_timesteps:,} learner steps ...", flush=True)
        rows.append(_run(config, backend, args.profile and backend == "batch"))

    print(
        f"\n{'backend':<9} {'steps':>9} {'wall s':>7} {'steps/s':>8} "
        f"{'steps/CPU s':>11} {'load':>11}  network, epochs, games x steps"
    )
    for r in rows:
        print(
            f"{r['backend']:<9} {r['steps']:>9,} {r['seconds']:>7.1f} "
            f"{r['steps_per_s']:>8,} {r['steps_per_cpu_s']:>11,} "
            f"{r['load_before']:>5.1f}->{r['load_after']:<5.1f} "
            f"{r['net_arch']}, {r['n_epochs']}, {r['n_envs']} x {r['n_steps']}"
        )
    batch = next((r for r in rows if r["backend"] == "batch"), None)
    if batch is not None:
        rate = batch["steps_per_s"]
        verdict = "PASS" if rate >= TARGET_STEPS else "MISS"
        print(f"batch >= {TARGET_STEPS:,} learner steps/s: {verdict} ({rate:,})")
        for r in rows:
            if r["backend"] == "batch":
                continue
            wall = batch["steps_per_s"] / r["steps_per_s"]
            cpu = batch["steps_per_cpu_s"] / r["steps_per_cpu_s"]
            r["batch_ratio"], r["batch_ratio_cpu"] = round(wall, 1), round(cpu, 1)
            verdict = "PASS" if wall >= TARGET_RATIO else "MISS"
            print(
                f"batch / {r['backend']}: {wall:.1f}x by the wall clock, {cpu:.1f}x "
                f"per CPU second (target >= {TARGET_RATIO}x: {verdict})"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
        print(f"rows written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
