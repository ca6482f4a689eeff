"""How fast ``parlour tips`` plays German Whist: heuristic-vs-heuristic duplicate deals.

A duplicate deal is one deal (env seed) played twice, the candidate in each seat: the
unit of the tip experiments (`parlour.training.tips`). The games run through the same
code the harness uses (`tips.play_block`: the wrapped env, `arena.play_game`, agents
reset per game), full heuristic against full heuristic.

Rows (a benchmark is not a test: a MISS is reported, never raised):

* **1 process, per CPU**: deals per minute of CPU time of this process
  (`time.process_time`), so other work on a shared machine disturbs it little.
* **1 process, wall**: the same run by the wall clock.
* **W workers, wall**: ``--workers`` processes (default: the CPUs) playing blocks of
  deals, by the wall clock, as ``parlour tips`` runs them. On a busy machine this row
  falls short of W times the per-CPU rate.

Target (issue 8): at least 2,000 duplicate deals per minute on this machine, so a tip at
±2 points of win rate (about 2,400 deals) takes minutes.

    python benchmarks/tips_speed.py                 # 200 deals a row
    python benchmarks/tips_speed.py --deals 400 --workers 2 --json speed.json
    python benchmarks/tips_speed.py --profile       # where the time goes (1 process)
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import resource
import time

import numpy as np

from parlour.training.tips import Block, Runner, play_block

TARGET = 2000.0  # duplicate deals per minute
ENV = "german_whist_v0"
OPTIONS = (("variant", "german"),)


def blocks(deals: int, seed: int, size: int) -> list[Block]:
    seeds = np.random.SeedSequence(seed).generate_state(deals, dtype=np.uint32).tolist()
    return [
        Block(ENV, OPTIONS, "heuristic", ("heuristic",), tuple(seeds[i : i + size]))
        for i in range(0, deals, size)
    ]


def single(deals: int, seed: int) -> dict[str, float]:
    """One process: deals per CPU minute and per wall minute."""
    play_block(blocks(2, seed + 1, 2)[0])  # warm the caches (env, agents, tables)
    cpu, wall = time.process_time(), time.perf_counter()
    for block in blocks(deals, seed, 25):
        play_block(block)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    per_cpu, per_wall = 60 * deals / cpu, 60 * deals / wall
    return {"deals": deals, "cpu_s": cpu, "wall_s": wall, "per_cpu_min": per_cpu,
            "per_wall_min": per_wall}  # fmt: skip


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def parallel(deals: int, seed: int, workers: int) -> dict[str, float]:
    """``workers`` processes, by the wall clock (worker start-up excluded), and the
    CPU the workers got: on a machine busy with other work it is less than
    ``workers`` CPUs for the whole time."""
    cpu = _children_cpu()
    with Runner(workers) as runner:
        runner.map(play_block, blocks(2 * workers, seed + 1, 2))  # start and warm
        wall = time.perf_counter()
        runner.map(play_block, blocks(deals, seed, 10))
        wall = time.perf_counter() - wall
    cpu = _children_cpu() - cpu  # the workers are reaped once the pool shuts down
    return {"deals": deals, "workers": workers, "wall_s": wall,
            "per_wall_min": 60 * deals / wall, "workers_cpu_s": cpu,
            "cpus_used": cpu / wall}  # fmt: skip


def profile(deals: int, seed: int, top: int = 25) -> str:
    prof = cProfile.Profile()
    prof.enable()
    for block in blocks(deals, seed, 25):
        play_block(block)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=200, help="deals per row (200)")
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="processes of the parallel row (default: the CPUs)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="print the top functions by own time (1 process) instead",
    )
    args = parser.parse_args(argv)  # fmt: skip
    if args.deals < 1 or args.workers < 1:
        parser.error("--deals and --workers must be positive")
    if args.profile:
        print(profile(args.deals, args.seed))
        return 0
    print(f"Python {platform.python_version()}, {platform.machine()} with "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"{ENV} heuristic vs heuristic, duplicate deals (2 games each)")  # fmt: skip
    one = single(args.deals, args.seed)
    many = parallel(args.deals, args.seed, args.workers)
    rows = [
        ("1 process, per CPU", one["per_cpu_min"]),
        ("1 process, wall", one["per_wall_min"]),
        (f"{args.workers} workers, wall", many["per_wall_min"]),
    ]
    print(f"{'row':<24} {'deals/min':>10} {'ms/game':>8}  target {TARGET:,.0f}")
    for name, rate in rows:
        ok = "PASS" if rate >= TARGET else "MISS"
        print(f"{name:<24} {rate:>10,.0f} {60_000 / rate / 2:>8.1f}  {ok}")
    print(f"the {args.workers} workers got about {many['cpus_used']:.2f} CPUs (their "
          f"start-up counted); with {args.workers} free CPUs they would play about "
          f"{args.workers * one['per_cpu_min']:,.0f} deals/min ({args.workers} x the "
          f"per-CPU rate)")  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"single": one, "parallel": many, "target": TARGET}, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
