"""Learner steps per second of the rllib backend (1 and 2 env runners) and the sb3
backend, side by side in one run, with what a cluster curve is projected from.

    python benchmarks/rllib_speed.py [--env german_whist_v0] [--steps 20000]
        [--runners 1 2] [--set key=value] [--json FILE]

Each measurement builds the backend as ``parlour train`` does (the env's default
config, configs/ENV.yaml; evaluations, checkpoints, TensorBoard and the warm start
off, one snapshot of the learner in the pool as at step 0 of a run) and drives the
same rollout loop. The first rollout is a warm-up and is not timed; Ray's start and
the algorithm's build are reported apart (``startup_s``). For rllib the iteration is
split into the learner's update (timed around RLlib's ``LearnerGroup.update``) and the
rest, sampling on the env runners in parallel and the weights' sync, giving the
per-runner rate ``r`` (steps/s of one runner) and the update cost ``u`` (learner
seconds per step). PPO samples and then updates, so N
runners give about ``1 / (1 / (N r) + u)`` steps/s once each runner has a CPU of its
own; the projection is printed for N up to 64. Target (issue 18): rllib with 2 env
runners >= sb3 on the 2-core machine. Not a test: nothing fails on a slow machine.

`measure` is importable (benchmarks/scale_out.py joins it with the arena's figures).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import config_summary

OFF = [
    "eval_every=1000000000",
    "checkpoint_every=1000000000",
    "snapshot_every=1000000000",
    "tensorboard=false",
    "warm_start=''",
]


def measure(
    backend: str = "rllib",
    num_env_runners: int = 2,
    steps: int = 20_000,
    env: str = "german_whist_v0",
    overrides: Sequence[str] = (),
) -> dict[str, Any]:
    """Train ``steps`` learner steps (plus a warm-up rollout) with ``backend`` and
    return the timed rate: ``steps_per_s`` over the rollouts after the first, and,
    for rllib, ``sample_s`` and ``learn_s`` per rollout, ``per_runner_steps_per_s``
    and ``learner_s_per_step``."""
    import torch

    from parlour.training import backends
    from parlour.training.selfplay import OpponentPool
    from parlour.training.train import load_config

    torch.set_num_threads(1)  # as train() does
    config = load_config(None, env=env, overrides=[*overrides, *OFF])
    rollout = config.n_envs * config.n_steps
    config.total_timesteps = steps + rollout
    options = {"num_env_runners": num_env_runners} if backend == "rllib" else {}
    backends.check_options(backend, config, options)
    pool = OpponentPool.of_config(config)
    with tempfile.TemporaryDirectory() as run_dir:
        t0 = time.perf_counter()
        learner = backends.make(
            backend, config, pool, Path(run_dir), lambda _: None, options
        )
        startup = time.perf_counter() - t0
        learn_clock = _time_learner_updates(learner) if backend == "rllib" else None
        try:
            learner.begin(config.total_timesteps, lambda kind, final: None)
            pool.add_snapshot(learner.export_weights(), "self@0")
            rows = []
            while learner.steps < config.total_timesteps:
                learner.begin_rollout()
                before = learner.steps
                t1 = time.perf_counter()
                if not learner.collect():
                    break
                t2 = time.perf_counter()
                learner.update()
                t3 = time.perf_counter()
                row = {"steps": learner.steps - before, "collect_s": t2 - t1}
                row["update_s"] = t3 - t2
                if learn_clock is not None:
                    # RLlib's iteration: the env runners sample, then the learner
                    # updates (timed here), then the weights go back to the runners
                    row["learn_s"] = learn_clock.pop()
                    row["sample_s"] = row["collect_s"] - row["learn_s"]
                rows.append(row)
        finally:
            learner.close()
    timed = rows[1:] or rows
    n = sum(r["steps"] for r in timed)
    seconds = sum(r["collect_s"] + r["update_s"] for r in timed)
    out: dict[str, Any] = {
        "backend": backend,
        "num_env_runners": num_env_runners if backend == "rllib" else None,
        "env": env,
        "steps": n,
        "seconds": round(seconds, 2),
        "steps_per_s": n / seconds,
        "startup_s": round(startup, 1),
        "rollout": rollout,
        "config": config_summary(config),
    }
    if backend == "sb3":
        # SB3 samples in collect and learns in update, in this process
        sample = sum(r["collect_s"] for r in timed)
        learn = sum(r["update_s"] for r in timed)
        out["per_runner_steps_per_s"] = n / sample
        out["learner_s_per_step"] = learn / n
    elif all("sample_s" in r for r in timed):
        sample = sum(r["sample_s"] for r in timed)
        learn = sum(r["learn_s"] for r in timed)
        runners = max(1, num_env_runners)
        out["per_runner_steps_per_s"] = n / sample / runners
        out["learner_s_per_step"] = learn / n
    return out


class _Clock:
    """Seconds spent in the learner's updates since the last `pop`."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def pop(self) -> float:
        seconds, self.seconds = self.seconds, 0.0
        return seconds


def _time_learner_updates(learner: Any) -> _Clock:
    """Time every ``LearnerGroup.update`` of an rllib backend (RLlib's own timers are
    smoothed over iterations, too coarse for one run)."""
    clock = _Clock()
    group = learner.algo.learner_group
    update = group.update

    def timed(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return update(*args, **kwargs)
        finally:
            clock.seconds += time.perf_counter() - t

    group.update = timed
    return clock


def projection(per_runner: float, learner_s_per_step: float, runners: int) -> float:
    """Steps/s of N runners with a CPU each: sampling in parallel, then the update."""
    return 1.0 / (1.0 / (runners * per_runner) + learner_s_per_step)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="german_whist_v0")
    parser.add_argument("--steps", type=int, default=20_000, help="timed steps each")
    parser.add_argument(
        "--runners", type=int, nargs="+", default=[1, 2], help="env runner counts"
    )
    parser.add_argument("--no-sb3", action="store_true", help="skip the sb3 run")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="override"
    )
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = parser.parse_args(argv)
    if args.steps < 1 or any(n < 0 for n in args.runners):
        parser.error("--steps must be positive and --runners at least 0")
    runs = []
    try:
        if not args.no_sb3:
            runs.append(measure("sb3", 0, args.steps, args.env, args.set))
        for n in args.runners:
            runs.append(measure("rllib", n, args.steps, args.env, args.set))
    except ValueError as err:
        print(f"rllib_speed: error: {err}", file=sys.stderr)
        return 2
    load = os.getloadavg()
    print(f"{args.env}, {args.steps:,} timed steps each, load {load[0]:.2f}")
    print(
        f"{'backend':<18}{'steps/s':>9}{'per runner':>12}{'learner ms/1k':>15}"
        f"{'startup s':>11}"
    )
    sb3 = next((r for r in runs if r["backend"] == "sb3"), None)
    for r in runs:
        name = r["backend"] + (
            f" ({r['num_env_runners']} runners)" if r["backend"] == "rllib" else ""
        )
        per = r.get("per_runner_steps_per_s")
        cost = r.get("learner_s_per_step")
        print(
            f"{name:<18}{r['steps_per_s']:>9,.0f}"
            f"{per if per is None else format(per, ',.0f'):>12}"
            f"{cost if cost is None else format(cost * 1e6, ',.0f'):>15}"
            f"{r['startup_s']:>11}"
        )
    if sb3 is not None:
        for r in runs:
            if r["backend"] == "rllib":
                ratio = r["steps_per_s"] / sb3["steps_per_s"]
                print(f"ratio rllib/{r['num_env_runners']} runners to sb3: {ratio:.2f}")
        two = next(
            (r for r in runs if r["backend"] == "rllib" and r["num_env_runners"] == 2),
            None,
        )
        if two is not None:
            verdict = "PASS" if two["steps_per_s"] >= sb3["steps_per_s"] else "MISS"
            print(f"target rllib with 2 env runners >= sb3: {verdict}")
    best = max(
        (r for r in runs if r["backend"] == "rllib" and "learner_s_per_step" in r),
        key=lambda r: r["num_env_runners"] or 0,
        default=None,
    )
    if best is not None:
        per, cost = best["per_runner_steps_per_s"], best["learner_s_per_step"]
        curve = {n: projection(per, cost, n) for n in (1, 2, 4, 8, 16, 32, 64)}
        print(
            f"projection (a CPU per runner; r={per:,.0f} steps/s per runner, "
            f"u={cost * 1e6:,.0f} µs of learner per step, from "
            f"{best['num_env_runners']} runners): "
            + ", ".join(f"{n}: {v:,.0f}" for n, v in curve.items())
            + f"; ceiling 1/u = {1 / cost:,.0f} steps/s"
        )
        for r in runs:
            r["projection"] = curve if r is best else None
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
