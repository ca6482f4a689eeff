"""Scaling out with Ray: arena deals per minute in one process and over Ray, in one run.

``--part arena`` (the default part of ``all``) plays the same duplicate German Whist
deals (heuristic against heuristic by default: the tips harness's workload) twice:

* **1 process**: ``run_arena`` as ``parlour arena`` runs it, by the wall clock, and by
  this process's CPU time (the per-CPU rate, which other work on the machine disturbs
  little).
* **Ray, N CPUs**: ``run_arena(..., backend="ray")`` on a local Ray of this script's
  own started with ``num_cpus=N`` (``--cpus``, default 2), as ``parlour arena
  --backend ray`` runs it. Ray's start (once per command) is timed apart; a short
  warm-up run starts the worker processes and imports Parlour in them, then the timed
  run. The CPU time
  Ray's processes got in the timed run (its workers, raylet and control store: every
  process under this one, read with psutil) says how many CPUs the run really had.

The speed-up is the Ray rate over the 1-process rate (target, issue 18: at least 1.8
with 2 CPUs). On a machine busy with other work the run gets fewer than N CPUs and the
figure says so; the load average is printed before and after each row.

It also measures what a projection to a bigger cluster needs: the driver's cost per Ray
task (``--overhead-tasks`` empty chunks through the same path, one after another) and
the time one chunk of deals takes on a worker. A driver that spends ``o`` seconds per
task keeps at most ``chunk time / o`` CPUs busy (docs/scale-out.md).

``--part training`` measures learner steps per second of the RLlib backend against the
SB3 backend through ``benchmarks/rllib_speed.py`` (its ``measure()``), which comes with
the RLlib training backend; where that file is absent the part says so and measures
nothing.

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
import time
from pathlib import Path
from typing import Any

TARGET = 1.8  # Ray with 2 CPUs over one process, arena deals per minute
ENV = "german_whist_v0"
RLLIB_SPEED = Path(__file__).with_name("rllib_speed.py")


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def arena_single(deals: int, specs: list[str], seed: int) -> dict[str, Any]:
    """One process: deals per minute by the wall clock and per CPU minute."""
    from parlour.training.arena import run_arena

    run_arena(ENV, specs, games=4, duplicate=True, seed=seed + 1)  # warm caches
    before = load()
    cpu, wall = time.process_time(), time.perf_counter()
    result = run_arena(ENV, specs, games=2 * deals, duplicate=True, seed=seed)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "deals": deals,
        "games": result.games,
        "wall_s": wall,
        "cpu_s": cpu,
        "per_wall_min": 60 * deals / wall,
        "per_cpu_min": 60 * deals / cpu,
        "load_before": before,
        "load_after": load(),
        "_result": result,
    }


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


def arena_ray(
    deals: int, specs: list[str], seed: int, cpus: int, overhead_tasks: int
) -> dict[str, Any]:
    """The same deals over a local Ray with ``cpus`` CPUs."""
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
    try:
        startup = time.perf_counter() - start
        # start the workers and import Parlour in them
        warm = 4 * cpus
        arena.run_arena(
            ENV, specs, games=2 * warm, duplicate=True, seed=seed + 1, backend="ray"
        )
        before = load()
        cpu, wall = _descendants_cpu(), time.perf_counter()
        result = arena.run_arena(
            ENV, specs, games=2 * deals, duplicate=True, seed=seed, backend="ray"
        )
        wall = time.perf_counter() - wall
        cpu = _descendants_cpu() - cpu
        after = load()
        with distributed.RaySession() as session:
            chunk = distributed.chunk_size(deals, session.workers)
            overhead = task_overhead(session, specs, seed, overhead_tasks)
    finally:
        ray.shutdown()
    return {
        "deals": deals,
        "cpus": cpus,
        "games": result.games,
        "ray_start_s": startup,
        "wall_s": wall,
        "per_wall_min": 60 * deals / wall,
        "ray_cpu_s": cpu,
        "cpus_used": cpu / wall,
        "chunk_deals": chunk,
        "per_task": overhead,
        "load_before": before,
        "load_after": after,
        "_result": result,
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


def training_part() -> dict[str, Any]:
    """benchmarks/rllib_speed.py's ``measure()``, or why it did not run."""
    if not RLLIB_SPEED.exists():
        return {
            "measured": False,
            "reason": f"{RLLIB_SPEED.name} is not in this checkout (it comes with the "
            "RLlib training backend, --backend rllib); nothing measured",
        }
    spec = importlib.util.spec_from_file_location("rllib_speed", RLLIB_SPEED)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    if not hasattr(module, "measure"):
        return {
            "measured": False,
            "reason": f"{RLLIB_SPEED.name} has no measure() function; nothing measured",
        }
    before = load()
    figures = module.measure()
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
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--overhead-tasks",
        type=int,
        default=200,
        help="empty tasks timed for the driver's cost per task (200)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the figures here")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.cpus < 1 or args.overhead_tasks < 1:
        parser.error("--deals, --cpus and --overhead-tasks must be positive")
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
        one = arena_single(args.deals, args.agents, args.seed)
        many = arena_ray(
            args.deals, args.agents, args.seed, args.cpus, args.overhead_tasks
        )
        identical = same_games(one.pop("_result"), many.pop("_result"))
        ratio = many["per_wall_min"] / one["per_wall_min"]
        print(f"{'row':<26} {'deals/min':>10}  {'load before -> after':<24}")
        rows = [
            ("1 process, wall", one["per_wall_min"], one),
            ("1 process, per CPU", one["per_cpu_min"], one),
            (f"Ray, {args.cpus} CPUs, wall", many["per_wall_min"], many),
        ]
        for name, rate, row in rows:
            print(
                f"{name:<26} {rate:>10,.0f}  "
                f"{row['load_before'][0]:.2f} -> {row['load_after'][0]:.2f}"
            )
        # per CPU Ray's processes really got: what 2 free CPUs would give, projected
        per_cpu_ray = many["per_wall_min"] / max(many["cpus_used"], 1e-9)
        efficiency = per_cpu_ray / one["per_cpu_min"]
        print(
            f"{'Ray, per CPU it got':<26} {per_cpu_ray:>10,.0f}  "
            f"({efficiency:.0%} of the 1-process per-CPU rate)"
        )
        verdict = "PASS" if ratio >= TARGET else "MISS"
        print(
            f"speed-up over 1 process: {ratio:.2f} (target {TARGET} with 2 CPUs: "
            f"{verdict}); Ray's processes got {many['cpus_used']:.2f} CPUs in the "
            f"timed run; Ray's start took {many['ray_start_s']:.1f} s (once per "
            f"command, not in the rate)"
        )
        print(
            f"with {args.cpus} free CPUs the ideal is {args.cpus} x the per-CPU rate "
            f"= {args.cpus * one['per_cpu_min']:,.0f} deals/min"
        )
        chunk_s = 60 * many["chunk_deals"] / one["per_cpu_min"]
        task = many["per_task"]
        print(
            f"per Ray task: {1000 * task['driver_cpu_s']:.2f} ms of the driver's CPU, "
            f"{1000 * task['wall_s']:.2f} ms wall (empty chunks, {args.cpus} CPUs); "
            f"a chunk of {many['chunk_deals']} deals takes about {chunk_s:.2f} s on "
            f"one CPU, so one driver could feed about "
            f"{chunk_s / task['driver_cpu_s']:,.0f} CPUs"
        )
        print(f"results identical to the 1-process run: {identical}")
        out["arena"] = {
            "agents": args.agents,
            "single": one,
            "ray": many,
            "speedup": ratio,
            "ray_per_cpu_min": per_cpu_ray,
            "ray_efficiency": efficiency,
            "target": TARGET,
            "identical": identical,
        }
    if args.part in ("training", "all"):
        training = training_part()
        out["training"] = training
        if training["measured"]:
            print("training (benchmarks/rllib_speed.py):")
            print(json.dumps(training["figures"], indent=2, default=str))
        else:
            print(f"training: {training['reason']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=str) + "\n")
        print(f"wrote {args.json}")
    if args.part == "training" and not out["training"]["measured"]:
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
