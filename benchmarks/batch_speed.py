"""How fast the batched German Whist engine plays, against the scalar env, in one run.

Rows (random legal play with observations), for each ``--variants`` (German Whist;
Honeymoon Whist with its default episode, the match):

* ``scalar``: ``envs.make("german_whist_v0")`` in PettingZoo's ``agent_iter`` loop as
  ``benchmarks/env_speed.py`` drives it: ``env.last()`` (observation and mask), a
  random legal card, ``env.step``. Only card plays count (not the finished agents'
  dead steps); the deal is in the time.
* ``batch`` at each ``--sizes`` B: `GermanWhistBatch` on ``--device``; per round
  ``observe()`` (the player to act's observation, ``(B, 8n + 18)`` float32),
  ``legal_mask()``, one uniform random legal card per game, ``step``. B card plays a
  round; automatic re-deals are in the time. ``engine`` excludes the random pick (what
  a trainer replaces with its policy).

Rates are card plays per CPU second of this process (``time.process_time``, as
env_speed.py), so other work on a shared machine disturbs them less; wall-clock rates
are printed too. torch runs ``--threads`` threads (default 1). Each row runs
``--seconds`` per repeat and keeps its best repeat. A benchmark is not a test: the
targets of issue 17 (B = 4,096: >= 1,000,000 card plays/s and >= 12x scalar) are
reported as MET or MISS, never raised.

    python benchmarks/batch_speed.py
    python benchmarks/batch_speed.py --sizes 256 4096 16384 --json batch.json
    python benchmarks/batch_speed.py --variants german --seconds 1 --repeats 1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from parlour import envs
from parlour.envs.batch import GermanWhistBatch

ENV = "german_whist_v0"
VARIANT_NAMES = ("german", "honeymoon")
TARGET_B = 4096
TARGET_RATE = 1_000_000
TARGET_RATIO = 12.0
MEMORY_B = 65_536
MEMORY_LIMIT = 4 * 2**30


def play_scalar(variant: str, seconds: float, seed: int) -> dict[str, float]:
    """Random legal play in the scalar env for ``seconds`` of CPU time."""
    env = envs.make(ENV, variant=variant)
    pick = random.Random(seed)
    plays = games = 0
    env.reset(seed=seed)
    cpu, wall = time.process_time(), time.perf_counter()
    while True:
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[pick.randrange(len(legal))]))
            plays += 1
        games += 1
        if time.process_time() - cpu >= seconds:
            break
        env.reset()
    return {
        "plays": plays,
        "games": games,
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
        "pick_cpu_s": 0.0,
    }


def play_batch(
    variant: str, batch_size: int, seconds: float, seed: int, device: str
) -> dict[str, float]:
    """Random legal play in `GermanWhistBatch` for ``seconds`` of CPU time."""
    batch = GermanWhistBatch(batch_size, variant=variant, device=device, seed=seed)
    n = batch.num_actions
    rng = np.random.default_rng(seed)
    plays = games = 0
    pick_cpu = 0.0
    cpu, wall = time.process_time(), time.perf_counter()
    while time.process_time() - cpu < seconds:
        batch.observe()
        mask = batch.legal_mask()
        t = time.process_time()
        # uniform among the legal cards: the largest of uniform scores, lifted by 1
        # where legal (numpy's float32 generator: the cheapest uniform pick measured)
        if device == "cpu":
            score = rng.random((batch_size, n), dtype=np.float32)
            score += mask.numpy()
            actions = torch.from_numpy(score.argmax(1))
        else:
            actions = (torch.rand(batch_size, n, device=device) + mask).argmax(1)
        pick_cpu += time.process_time() - t
        _rewards, terminated = batch.step(actions)
        games += int(terminated.sum())
        plays += batch_size
    if device != "cpu":
        torch.cuda.synchronize()
    return {
        "plays": plays,
        "games": games,
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
        "pick_cpu_s": pick_cpu,
    }


def measure(
    variant: str, kind: str, batch_size: int, args: argparse.Namespace, seed: int
) -> dict[str, float]:
    if kind == "scalar":
        return play_scalar(variant, args.seconds, seed)
    return play_batch(variant, batch_size, args.seconds, seed, args.device)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 4096])
    parser.add_argument(
        "--variants", nargs="+", choices=VARIANT_NAMES, default=list(VARIANT_NAMES)
    )
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    if any(b < 1 for b in args.sizes):
        parser.error("--sizes must be positive integers")
    if args.seconds <= 0 or args.repeats < 1 or args.threads < 1:
        parser.error("--seconds must be > 0, --repeats and --threads >= 1")
    try:
        torch.device(args.device)
    except RuntimeError as err:
        parser.error(f"--device: {err}")
    if args.device != "cpu" and not torch.cuda.is_available():
        parser.error(f"--device {args.device}: no CUDA device here")
    torch.set_num_threads(args.threads)

    rows = [
        (v, kind, b)
        for v in args.variants
        for kind, b in [("scalar", 1), *(("batch", b) for b in args.sizes)]
    ]
    best: dict[tuple[str, str, int], dict[str, float]] = {}
    with tqdm(total=len(rows) * args.repeats, desc="rows", unit="row") as bar:
        for repeat in range(args.repeats):
            for key in rows:
                r = measure(*key, args, args.seed + repeat)
                rate = r["plays"] / r["cpu_s"]
                if key not in best or rate > best[key]["plays"] / best[key]["cpu_s"]:
                    best[key] = r
                bar.update()

    load = os.getloadavg()
    out: list[dict[str, Any]] = []
    print(
        f"\nrandom legal play with observations; torch "
        f"{torch.__version__}, {args.threads} thread(s), device {args.device}; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    header = (
        f"{'variant':<11}{'kind':<7}{'B':>7}{'plays/CPU-s':>14}{'plays/wall-s':>14}"
        f"{'engine/CPU-s':>14}{'x scalar':>10}{'games/s':>10}"
    )
    print(header)
    print("-" * len(header))
    for v, kind, b in rows:
        r = best[(v, kind, b)]
        scalar = best[(v, "scalar", 1)]
        scalar_rate = scalar["plays"] / scalar["cpu_s"]
        rate = r["plays"] / r["cpu_s"]
        engine = r["plays"] / max(r["cpu_s"] - r["pick_cpu_s"], 1e-9)
        row = {
            "env": ENV,
            "options": {"variant": v},
            "kind": kind,
            "batch_size": b,
            "device": args.device if kind == "batch" else "cpu",
            "card_plays_per_s": rate,
            "card_plays_per_wall_s": r["plays"] / r["wall_s"],
            "engine_card_plays_per_s": engine,
            "ratio_to_scalar": rate / scalar_rate,
            "games_per_s": r["games"] / r["cpu_s"],
            "cpu_s": r["cpu_s"],
            "threads": args.threads,
            "load_average": list(load),
            "python": platform.python_version(),
            "torch": torch.__version__,
        }
        out.append(row)
        print(
            f"{v:<11}{kind:<7}{b:>7}{rate:>14,.0f}{row['card_plays_per_wall_s']:>14,.0f}"
            f"{engine:>14,.0f}{row['ratio_to_scalar']:>10.1f}"
            f"{row['games_per_s']:>10,.0f}"
        )

    memory: dict[str, dict[str, Any]] = {}
    for v in args.variants:
        probe = GermanWhistBatch(8, variant=v, seed=0)
        state = probe.state_bytes()
        # one observation (float32) and one mask (bool) a game on top of the state
        per_game = state + 4 * probe.observation_size + probe.num_actions
        total = per_game * MEMORY_B
        fits = total <= MEMORY_LIMIT
        memory[v] = {"state_bytes_per_game": state, "fits_65536": fits}
        print(
            f"\n{v}: state per game {state} bytes ({per_game} with one observation "
            f"and mask); B = {MEMORY_B:,}: {total / 2**20:,.0f} MiB, "
            f"{'fits in' if fits else 'does NOT fit in'} 4 GiB"
        )
    target = best.get(("german", "batch", TARGET_B))
    if target is not None:
        rate = target["plays"] / target["cpu_s"]
        scalar = best[("german", "scalar", 1)]
        scalar_rate = scalar["plays"] / scalar["cpu_s"]
        for what, ok in (
            (
                f">= {TARGET_RATE:,} card plays/s at B = {TARGET_B} (German Whist)",
                rate >= TARGET_RATE,
            ),
            (f">= {TARGET_RATIO:g}x scalar", rate / scalar_rate >= TARGET_RATIO),
        ):
            print(f"target {what}: {'MET' if ok else 'MISS'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"rows": out, "memory": memory},
                f,
                indent=2,
            )
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
