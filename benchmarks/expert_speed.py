"""How long the ``expert`` agent takes per decision, game by game.

For each game (German Whist, Honeymoon Whist, Forty-Fives, Fünfzehnern and Herzeln
with 4 players, Fünfzehn – tot) the expert plays ``--games`` games against the
heuristic bot (every other seat) and every one of its decisions is timed in CPU
seconds of this process (other work on a shared machine disturbs CPU time less than
wall-clock time). The target (issue 30) is a mean under 0.1 s a decision on the
project's 2-core machine; a benchmark is not a test: a MISS is reported, never raised.

    python benchmarks/expert_speed.py                 # 6 games of each
    python benchmarks/expert_speed.py --games 20 --only forty_fives_v0
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import COMPILED_SEARCHES, search_backend

from parlour import agents
from parlour.agents.base import Agent, Turn
from parlour.training.arena import run_arena

TARGET = 0.1  # seconds, mean CPU time per decision
GAMES = (
    ("german_whist_v0", {}),
    ("german_whist_v0", {"variant": "honeymoon"}),
    ("forty_fives_v0", {}),
    ("fuenfzehnern_v0", {}),
    ("herzeln_v0", {}),
    ("fuenfzehn_tot_v0", {}),
)


class Timed(Agent):
    """An agent whose every decision's CPU time is kept in ``times``."""

    def __init__(self, inner: Agent):
        self.inner = inner
        self.spec = inner.spec
        self.times: list[float] = []

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def act(self, turn: Turn) -> int:
        start = time.process_time()
        action = self.inner.act(turn)
        self.times.append(time.process_time() - start)
        return action


def main() -> None:
    """Time the expert's decisions in each game and print one row a game."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=6, help="games per env (6)")
    p.add_argument("--seed", type=int, default=0, help="deal seed (0)")
    p.add_argument("--only", default=None, help="one env name")
    args = p.parse_args()
    for env_name, options in GAMES:
        if args.only and env_name != args.only:
            continue
        if env_name in COMPILED_SEARCHES:  # numba's cache loaded before the clock
            label = COMPILED_SEARCHES[env_name][0]
            print(f"({label}: {search_backend(env_name)} search)", flush=True)
        timed = Timed(
            agents.make("expert", env_name, seed=args.seed, env_options=options)
        )
        run_arena(
            env_name,
            [timed, "heuristic"],
            games=args.games,
            seed=args.seed,
            env_options=options,
        )
        t = np.array(timed.times)
        label = env_name + "".join(f" {k}={v}" for k, v in options.items())
        verdict = "ok" if t.mean() < TARGET else "MISS"
        print(
            f"{label:40s} {len(t):6d} decisions  mean {1000 * t.mean():6.1f} ms  "
            f"p95 {1000 * np.percentile(t, 95):6.1f} ms  "
            f"max {1000 * t.max():7.1f} ms  [{verdict}]",
            flush=True,
        )


if __name__ == "__main__":
    main()
