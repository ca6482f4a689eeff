"""Learner steps per second of self-play training (whole loop: env, opponents,
updates), the sb3 backend and the batch backend's algorithms side by side in one run,
each batch algorithm against its network floor.

    python benchmarks/train_speed.py [--env german_whist_v0] [--steps 20000]
        [--batch-steps 262144] [--backends sb3 sb3-same batch]
        [--algos ppo mmd nfsp dmc] [--set key=value] [--profile] [--json PATH]

Rows (each a `parlour.training.train.train` run in this process, one torch thread):

- ``sb3``: the sb3 backend with the env's default config (``configs/ENV.yaml``, the
  current recipe);
- ``sb3-same``: the sb3 backend with the default config's envs, rollout and minibatch
  but the batch preset's network, PPO epochs and opponents (the same arithmetic per
  learner step as the batch row);
- ``batch/ALGO``: the batch backend with the batch preset (``configs/ENV.batch.yaml``)
  and ``algo=ALGO``, for each of ``--algos`` (docs/algorithms.md).

The network floor of a batch row is the same algorithm's network arithmetic for one
rollout with no env and no bookkeeping, timed in the same run on random inputs of the
same shapes: the forward passes that choose the learner's actions (one per decision, in
batches of the learner's rows of an engine step, about ``n_envs / players``) and the
update's forward passes, backward passes and optimiser steps on minibatches of
``batch_size`` (PPO, MMD: ``n_epochs`` passes over the rollout, MMD's magnet forward
included; NFSP: as many gradient steps of the Q-network, its target's forward included,
and of the average policy; DMC: ``n_epochs`` passes over a rollout's worth of
decisions). A row's share of its floor is its steps/s over the floor's.

Evaluation, checkpoints, TensorBoard and the warm start (a fixed cost before step 0)
are switched off, so only self-play training is timed; ``--set`` applies to every row.
Each row reports learner steps per wall-clock second and per CPU second of this
process (the machine may be shared: the CPU figure is the one less moved by other
work), and each batch row its share of its floor (both ways) and its ratio to each sb3
row.
Targets (German Whist, the 2-core machine): every batch algorithm >= 70% of its floor
and >= 10x the sb3 row (issue 29; batch PPO's older target was >= 20,000 learner
steps/s and >= 25x sb3). ``--profile`` prints where the batch rows' time goes (rollout
against update, and the functions that take the most). Not a test: nothing fails on a
slow machine.
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
TARGET_FLOOR, TARGET_RATIO = 0.70, 10
ALGOS = ("ppo", "mmd", "nfsp", "dmc")


def _config(env: str, backend: str, steps: int, overrides: list[str]):
    from parlour.training.train import load_config, presets

    off = [*overrides, *OFF, f"total_timesteps={steps}"]
    if backend.startswith("batch/"):
        if "batch" not in presets(env):
            raise ValueError(f"{env} has no batch preset (configs/{env}.batch.yaml)")
        algo = backend.removeprefix("batch/")
        return load_config(
            None, env=env, preset="batch", overrides=[*off, f"algo={algo}"]
        )
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
            backend="batch" if backend.startswith("batch/") else "sb3",
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
        _print_profile(profiler, backend)
    if backend.startswith("batch/"):
        wall_rate, cpu_rate = network_floor(config)
        row["floor_steps_per_s"] = round(wall_rate)
        row["floor_steps_per_cpu_s"] = round(cpu_rate)
        row["floor_share"] = round(row["steps_per_s"] / wall_rate, 3)
        row["floor_share_cpu"] = round(row["steps_per_cpu_s"] / cpu_rate, 3)
    return row


def network_floor(config, min_seconds: float = 3.0) -> tuple[float, float]:
    """Learner steps per wall-clock second and per CPU second of the batch
    algorithm's network arithmetic alone (the module docstring says what that is),
    timed over whole rollouts for at least ``min_seconds``."""
    import torch

    from parlour.training.backends.batch import BatchBackend
    from parlour.training.selfplay import OpponentPool

    pool = OpponentPool(config.env, dict(config.opponents), seed=config.seed)
    backend = BatchBackend(config, pool, None, lambda steps: None)
    work = _floor_work(backend, torch.Generator().manual_seed(0))
    work()  # the first rollout warms the allocator up
    rollouts, start, cpu = 0, time.perf_counter(), time.process_time()
    while rollouts == 0 or time.perf_counter() - start < min_seconds:
        work()
        rollouts += 1
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    backend.close()
    steps = rollouts * backend.rollout_steps
    return steps / wall, steps / cpu


def _floor_work(backend, gen):
    """A function doing one rollout's network arithmetic of ``backend`` on random
    inputs."""
    import torch
    from torch import nn

    c, env = backend.config, backend.env
    size, n_obs, A = backend.rollout_steps, env.observation_size, env.num_actions
    chunk = max(1, env.batch_size // env.num_players)  # learner rows per engine step
    acts = -(-size // chunk)
    obs = torch.rand(chunk, n_obs, generator=gen)
    mask = torch.ones(chunk, A, dtype=torch.bool)
    bs = c.batch_size
    mb_obs = torch.rand(bs, n_obs, generator=gen)
    mb_mask = torch.ones(bs, A, dtype=torch.bool)
    mb_act = torch.randint(A, (bs,), generator=gen)
    mb_val = torch.randn(bs, generator=gen)

    def step(loss, module, optimizer):
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(module.parameters(), c.max_grad_norm)
        optimizer.step()

    algo = c.algo
    if algo in ("ppo", "mmd"):
        net = backend.net
        updates = c.n_epochs * -(-size // bs)

        def work():
            with torch.no_grad():
                for _ in range(acts):
                    net(obs, mask)
            for _ in range(updates):
                loss, _ = backend.loss(mb_obs, mb_mask, mb_act, mb_val, mb_val, mb_val)
                step(loss, net, backend.optimizer)

        return work
    if algo == "nfsp":
        n_br = max(1, round(chunk * c.nfsp_eta))
        r, res = backend.replay, backend.reservoir
        for buf in (r, res):
            buf["obs"][:bs] = mb_obs
            buf["action"][:bs] = mb_act
        r["next_obs"][:bs] = mb_obs
        r["next_mask"][:bs] = True
        res["mask"][:bs] = True
        idx = torch.arange(bs)
        updates = max(1, c.n_epochs * size // bs)

        def work():
            with torch.no_grad():
                for _ in range(acts):
                    backend.q(obs[:n_br])
                    backend.average(obs[n_br:])
            for _ in range(updates):
                step(backend.q_loss(idx), backend.q, backend.q_optimizer)
                step(backend.average_loss(idx), backend.average, backend.optimizer)

        return work
    updates = c.n_epochs * -(-size // bs)

    def work():
        with torch.no_grad():
            for _ in range(acts):
                backend.q(obs)
        for _ in range(updates):
            step(backend.loss(mb_obs, mb_act, mb_val), backend.q, backend.optimizer)

    return work


def _print_profile(profiler: cProfile.Profile, backend: str) -> None:
    stats = pstats.Stats(profiler)
    total = stats.total_tt
    # cumulative seconds of the functions that show where a rollout's time goes
    parts = {
        "collect (rollout)": ("", "collect"),
        "update": ("", "update"),
        "opponents' cards": ("batch_selfplay.py", "opponent_actions"),
        "engine: observe": ("envs/batch/", "observe"),
        "engine: legal_mask": ("envs/batch/", "legal_mask"),
        "engine: step": ("envs/batch/", "step"),
    }
    print(f"\n{backend} row, profiled ({total:.1f} s in all):")
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
    parser.add_argument(
        "--algos",
        nargs="+",
        default=list(ALGOS),
        choices=ALGOS,
        help="the batch backend's algorithms, a row each",
    )
    parser.add_argument("--profile", action="store_true", help="profile the batch rows")
    parser.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.batch_steps < 1:
        parser.error("--steps and --batch-steps must be positive")

    configs = {}
    names = []
    for backend in args.backends:
        names += [f"batch/{a}" for a in args.algos] if backend == "batch" else [backend]
    for name in names:
        steps = args.batch_steps if name.startswith("batch/") else args.steps
        try:
            configs[name] = _config(args.env, name, steps, args.set)
        except ValueError as err:
            parser.error(str(err))
    # imports and the game packages load before any clock starts
    import parlour.training.algos.dmc  # noqa: F401
    import parlour.training.algos.mmd  # noqa: F401
    import parlour.training.algos.nfsp  # noqa: F401
    import parlour.training.backends.batch  # noqa: F401
    import parlour.training.backends.sb3  # noqa: F401
    from parlour import envs

    envs.make(args.env)
    rows = []
    for name, config in configs.items():
        print(f"{name}: {config.total_timesteps:,} learner steps ...", flush=True)
        rows.append(_run(config, name, args.profile and name.startswith("batch/")))

    print(
        f"\n{'backend':<10} {'steps':>9} {'wall s':>7} {'steps/s':>8} "
        f"{'steps/CPU s':>11} {'floor/s':>8} {'share':>6} {'load':>11}  "
        "network, epochs, games x steps"
    )
    for r in rows:
        floor = r.get("floor_steps_per_s")
        print(
            f"{r['backend']:<10} {r['steps']:>9,} {r['seconds']:>7.1f} "
            f"{r['steps_per_s']:>8,} {r['steps_per_cpu_s']:>11,} "
            + (f"{floor:>8,} {r['floor_share']:>6.0%} " if floor else f"{'':>16} ")
            + f"{r['load_before']:>5.1f}->{r['load_after']:<5.1f} "
            f"{r['net_arch']}, {r['n_epochs']}, {r['n_envs']} x {r['n_steps']}"
        )
    sb3 = [r for r in rows if not r["backend"].startswith("batch/")]
    for batch in (r for r in rows if r["backend"].startswith("batch/")):
        share = batch["floor_share"]
        verdict = "PASS" if share >= TARGET_FLOOR else "MISS"
        line = (
            f"{batch['backend']}: {share:.0%} of its network floor by the wall clock, "
            f"{batch['floor_share_cpu']:.0%} per CPU second (target >= "
            f"{TARGET_FLOOR:.0%}: {verdict})"
        )
        for r in sb3:
            wall = batch["steps_per_s"] / r["steps_per_s"]
            cpu = batch["steps_per_cpu_s"] / r["steps_per_cpu_s"]
            batch[f"ratio_{r['backend']}"] = round(wall, 1)
            batch[f"ratio_{r['backend']}_cpu"] = round(cpu, 1)
            verdict = "PASS" if wall >= TARGET_RATIO else "MISS"
            line += (
                f"; {wall:.1f}x {r['backend']} by the wall clock, {cpu:.1f}x per CPU "
                f"second (target >= {TARGET_RATIO}x: {verdict})"
            )
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
        print(f"rows written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
