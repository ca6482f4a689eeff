"""Scaling out with Ray: arena deals per minute in one process and over Ray, in one run.

``--part arena`` (the default; also part of ``all``) plays duplicate German Whist deals
(heuristic against heuristic by default: the tips harness's workload) two ways:

* **1 process**: ``run_arena`` as ``parlour arena`` runs it, by the wall clock, and by
  this process's CPU time (the per-CPU rate, which other work on the machine disturbs
  little).
* **Ray, N CPUs**: ``run_arena(..., executor="ray")`` on a local Ray of this script's
  own started with ``num_cpus=N`` (``--cpus``, default 2), as ``parlour arena
  --executor ray`` runs it. Ray's start (once per command) is timed apart, and a short
  warm-up starts the worker processes and imports Parlour in them. The CPU time Ray's
  processes got (its workers, raylet and control store: every process under this one,
  read with psutil) says how many CPUs the run really had.

The deals are split into ``--rounds`` rounds, each played first in one process, then
over Ray (the same deals, and the results must be identical), so a change in the
machine's load falls on both rows alike. The speed-up is the Ray rate over the
1-process rate (target, issue 18: at least 1.8 with 2 CPUs). On a machine busy with
other work the run gets less than N CPUs and the figures say so; the load average is
printed after each round.

It also measures what a projection to a bigger cluster needs: the driver's CPU time per
Ray task (``--overhead-tasks`` empty chunks through the same path) and the time one
chunk of deals takes on a worker: a driver that spends ``c`` seconds per task keeps at
most ``chunk time / c`` CPUs busy (docs/scale-out.md).

``--part training`` measures learner steps per second of the RLlib backend with 1 and 2
env runners and of the SB3 backend, in one run (``benchmarks/rllib_speed.py``, which
prints its table, the ratios, the target check and the cluster projection;
``--train-steps`` timed steps each); if it refuses (e.g. Ray missing) the part says
so and, alone, exits with status 2.

    python benchmarks/scale_out.py                          # arena, 2,000 deals
    python benchmarks/scale_out.py --deals 4000 --cpus 2 --json scale.json
    python benchmarks/scale_out.py --part all
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET = 1.8  # Ray with 2 CPUs over one process, arena deals per minute
ENV = "german_whist_v0"
RLLIB_SPEED = Path(__file__).with_name("rllib_speed.py")


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _descendants_cpu() -> float:
    """CPU seconds of every live process under this one (Ray's processes)."""
    import psutil

    total = 0.0
    for p in psutil.Process().children(recursive=True):
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def arena_part(
    deals: int,
    specs: list[str],
    seed: int,
    cpus: int,
    rounds: int,
    overhead_tasks: int,
) -> dict[str, Any]:
    """The same deals in one process and over a local Ray with ``cpus`` CPUs, in
    ``rounds`` alternating rounds (so a change in the machine's load hits both rows
    alike)."""
    import ray

    from parlour.training import arena, distributed

    start = time.perf_counter()
    ray.init(
        address="local",
        num_cpus=cpus,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    single = {"deals": 0, "wall_s": 0.0, "cpu_s": 0.0}
    remote = {"deals": 0, "wall_s": 0.0, "ray_cpu_s": 0.0}
    identical = True
    loads = [load()]
    try:
        startup = time.perf_counter() - start
        # warm the caches here and start the workers (Parlour imported in them)
        kw = {"duplicate": True, "seed": seed + 99_999}
        arena.run_arena(ENV, specs, games=4, **kw)
        arena.run_arena(ENV, specs, games=8 * cpus, executor="ray", **kw)
        for r in range(rounds):
            n = deals // rounds + (1 if r < deals % rounds else 0)
            kw = {"games": 2 * n, "duplicate": True, "seed": seed + r}
            cpu, wall = time.process_time(), time.perf_counter()
            here = arena.run_arena(ENV, specs, **kw)
            single["wall_s"] += time.perf_counter() - wall
            single["cpu_s"] += time.process_time() - cpu
            cpu, wall = _descendants_cpu(), time.perf_counter()
            there = arena.run_arena(ENV, specs, executor="ray", **kw)
            remote["wall_s"] += time.perf_counter() - wall
            remote["ray_cpu_s"] += _descendants_cpu() - cpu
            single["deals"] += n
            remote["deals"] += n
            identical = identical and same_games(here, there)
            loads.append(load())
        with distributed.RaySession() as session:
            chunk = distributed.chunk_size(deals // rounds, session.workers)
            overhead = task_overhead(session, specs, seed, overhead_tasks)
    finally:
        ray.shutdown()
    single["per_wall_min"] = 60 * single["deals"] / single["wall_s"]
    single["per_cpu_min"] = 60 * single["deals"] / single["cpu_s"]
    remote["per_wall_min"] = 60 * remote["deals"] / remote["wall_s"]
    remote["cpus_used"] = remote["ray_cpu_s"] / remote["wall_s"]
    return {
        "single": single,
        "ray": remote,
        "cpus": cpus,
        "rounds": rounds,
        "ray_start_s": startup,
        "chunk_deals": chunk,
        "per_task": overhead,
        "loads": loads,
        "identical": identical,
    }


def task_overhead(session, specs: list[str], seed: int, tasks: int) -> dict[str, float]:
    """The arena's Ray path for ``tasks`` empty chunks (no deals), spread as the arena
    spreads chunks: the driver's CPU seconds per task (submitting, waiting, taking the
    result) and the wall seconds per task of the whole round trip."""
    from parlour.training import arena

    empty = arena.ArenaChunk(ENV, {}, (specs[0], specs[1]), seed, True, ())
    session.map(arena.play_chunk, [empty] * 4)  # warm
    cpu, wall = time.process_time(), time.perf_counter()
    session.map(arena.play_chunk, [empty] * tasks)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"driver_cpu_s": cpu / tasks, "wall_s": wall / tasks}


def training_part(steps: int) -> dict[str, Any]:
    """benchmarks/rllib_speed.py's rows (sb3, rllib with 1 and 2 env runners, in one
    run, with its table, ratios and projection printed), or why they did not run."""
    spec = importlib.util.spec_from_file_location("rllib_speed", RLLIB_SPEED)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    before = load()
    with tempfile.TemporaryDirectory() as tmp:
        rows = Path(tmp) / "rows.json"
        status = module.main(["--steps", str(steps), "--json", str(rows)])
        if status != 0:
            return {"measured": False, "reason": "rllib_speed.py refused (above)"}
        figures = json.loads(rows.read_text())
    return {
        "measured": True,
        "figures": figures,
        "load_before": before,
        "load_after": load(),
    }


def same_games(a, b) -> bool:
    return (
        a.candidate_scores == b.candidate_scores
        and a.field_scores == b.field_scores
        and a.candidate_wins == b.candidate_wins
        and a.deal_index == b.deal_index
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part",
        choices=["arena", "training", "all"],
        default="arena",
        help="what to measure (arena)",
    )
    parser.add_argument(
        "--deals", type=int, default=2000, help="duplicate deals a row (2000)"
    )
    parser.add_argument("--cpus", type=int, default=2, help="CPUs given to Ray (2)")
    parser.add_argument(
        "--agents",
        nargs=2,
        default=["heuristic", "heuristic"],
        metavar=("A", "B"),
        help="the arena's agents (heuristic heuristic)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="alternating rounds of the two rows, the deals split among them (4)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--overhead-tasks",
        type=int,
        default=200,
        help="empty tasks timed for the driver's cost per task (200)",
    )
    parser.add_argument(
        "--train-steps",
        type=int,
        default=20_000,
        help="--part training: timed learner steps a backend (20000)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the figures here")
    args = parser.parse_args(argv)
    if min(args.deals, args.cpus, args.overhead_tasks, args.rounds) < 1:
        parser.error("--deals, --cpus, --rounds and --overhead-tasks must be positive")
    if args.train_steps < 1:
        parser.error("--train-steps must be positive")
    if args.rounds > args.deals:
        parser.error("--rounds must not exceed --deals")
    if args.json:
        from parlour.training.checkpoint import check_output_path

        try:
            check_output_path(args.json, what="--json")
        except ValueError as err:
            parser.error(str(err))
    if args.part in ("arena", "all"):
        try:
            import psutil  # noqa: F401
            import ray  # noqa: F401
        except ImportError as err:
            parser.error(f"the arena part needs Ray and psutil ({err.name} is "
                         "missing): pip install 'parlour[rllib]' psutil")  # fmt: skip
    print(
        f"Python {platform.python_version()}, {platform.machine()} with "
        f"{os.cpu_count()} CPUs, load average {' '.join(map(str, load()))}"
    )
    out: dict[str, Any] = {"env": ENV, "command": " ".join(sys.argv)}
    if args.part in ("arena", "all"):
        print(
            f"arena: {ENV} {args.agents[0]} vs {args.agents[1]}, {args.deals} "
            "duplicate deals (2 games each), the same deals in both rows"
        )
        part = arena_part(
            args.deals,
            args.agents,
            args.seed,
            args.cpus,
            args.rounds,
            args.overhead_tasks,
        )
        one, many = part["single"], part["ray"]
        ratio = many["per_wall_min"] / one["per_wall_min"]
        print(f"{'row':<26} {'deals/min':>10}")
        rows = [
            ("1 process, wall", one["per_wall_min"]),
            ("1 process, per CPU", one["per_cpu_min"]),
            (f"Ray, {args.cpus} CPUs, wall", many["per_wall_min"]),
        ]
        for name, rate in rows:
            print(f"{name:<26} {rate:>10,.0f}")
        # per CPU Ray's processes really got (its control store and raylet included)
        per_cpu_ray = many["per_wall_min"] / max(many["cpus_used"], 1e-9)
        efficiency = per_cpu_ray / one["per_cpu_min"]
        print(
            f"{'Ray, per CPU it got':<26} {per_cpu_ray:>10,.0f}  "
            f"({efficiency:.0%} of the 1-process per-CPU rate)"
        )
        verdict = "PASS" if ratio >= TARGET else "MISS"
        print(
            f"speed-up over 1 process: {ratio:.2f} (target {TARGET} with 2 CPUs: "
            f"{verdict}); Ray's processes got {many['cpus_used']:.2f} CPUs and the "
            f"1 process {one['cpu_s'] / one['wall_s']:.2f}; load average (1 min) "
            f"over the {args.rounds} rounds: "
            + " -> ".join(f"{x[0]:.2f}" for x in part["loads"])
        )
        print(
            f"Ray's start took {part['ray_start_s']:.1f} s (once per command, not in "
            f"the rate); with {args.cpus} free CPUs the ideal is {args.cpus} x the "
            f"per-CPU rate = {args.cpus * one['per_cpu_min']:,.0f} deals/min"
        )
        chunk_s = 60 * part["chunk_deals"] / one["per_cpu_min"]
        task = part["per_task"]
        print(
            f"per Ray task: {1000 * task['driver_cpu_s']:.2f} ms of the driver's CPU, "
            f"{1000 * task['wall_s']:.2f} ms wall (empty chunks, {args.cpus} CPUs); "
            f"a chunk of {part['chunk_deals']} deals takes about {chunk_s:.2f} s on "
            f"one CPU, so one driver could feed about "
            f"{chunk_s / task['driver_cpu_s']:,.0f} CPUs"
        )
        print(f"results identical to the 1-process run: {part['identical']}")
        out["arena"] = {
            "agents": args.agents,
            **part,
            "speedup": ratio,
            "ray_per_cpu_min": per_cpu_ray,
            "ray_efficiency": efficiency,
            "target": TARGET,
        }
    if args.part in ("training", "all"):
        print("training (benchmarks/rllib_speed.py):")
        training = training_part(args.train_steps)
        out["training"] = training
        if not training["measured"]:
            print(f"training: {training['reason']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=str) + "\n")
        print(f"wrote {args.json}")
    if args.part == "training" and not out["training"]["measured"]:
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
