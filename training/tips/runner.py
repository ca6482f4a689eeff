"""Playing the arms: blocks of duplicate games, in this process or in workers.

A `Block` is one arm's games (candidate against each opponent, every deal and seating);
`play_block` plays it and `Runner` maps blocks over worker processes started with
``spawn`` (`parlour.training.distributed.RaySession` maps them over Ray tasks, with
the same interface). Every game's seeds come from its deal, so results do not depend
on the number of workers or on the executor (local processes or Ray).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import envs
from ...agents.base import Agent
from ..arena import play_game, seatings, teams_of, win_share
from ..distributed import ShippedCheckpoint, worker_agent, worker_env

AGENT_SALT = (
    1_000_003  # arm-specific agent seeds (A/A calibration): deal seed + salt * k
)
@dataclass(frozen=True)
class Block:
    """Games for one arm: ``candidate`` against each opponent, deal and seating.

    ``salt`` shifts the candidate's agent seeds (0 for the A/B arms, which share their
    random numbers; A/A calibration gives its two arms different salts).
    """

    env: str
    env_options: tuple[tuple[str, Any], ...]
    candidate: str
    opponents: tuple[str, ...]
    deal_seeds: tuple[int, ...]
    salt: int = 0


def play_block(
    block: Block, checkpoints: Mapping[str, ShippedCheckpoint] | None = None
) -> np.ndarray:
    """Play a block; returns ``[deal, opponent, seating, metric]`` (metrics: win share,
    score), the candidate's result in each game. The env and agents are kept in the
    worker between blocks (``checkpoints``: weights shipped to a Ray worker)."""
    env = worker_env(block.env, block.env_options)
    game = env.unwrapped.game
    n = game.num_players
    teams = teams_of(game)
    rotations = seatings(n, teams)

    def agent(spec: str, role: Any) -> Agent:
        from .baseline import make_follower, parse_follower

        followed = parse_follower(spec)
        if followed is not None:  # follow:TIP:AGENT, arm A of the strong baseline
            base = agent(followed[1], role)
            return make_follower(spec, block.env, dict(block.env_options), base)
        return worker_agent(
            spec, block.env, block.env_options, 0, role, checkpoints=checkpoints
        )

    candidate = agent(block.candidate, "candidate")
    fields = [[agent(o, ("field", s)) for s in range(n)] for o in block.opponents]
    out = np.zeros((len(block.deal_seeds), len(block.opponents), len(rotations), 2))
    for d, deal_seed in enumerate(block.deal_seeds):
        for o, field_agents in enumerate(fields):
            for r, mine in enumerate(rotations):
                candidate.reset(seed=deal_seed + AGENT_SALT * block.salt)
                for s, a in enumerate(field_agents):
                    a.reset(seed=deal_seed + 7919 * (s + 1))
                players = [
                    candidate if m else field_agents[s] for s, m in enumerate(mine)
                ]
                scores = play_game(env, players, seed=deal_seed)
                own = [scores[s] for s in range(n) if mine[s]]
                out[d, o, r, 0] = win_share(scores, teams, mine)
                out[d, o, r, 1] = float(np.mean(own))
    return out


def games_per_deal(env: str, env_options: Mapping[str, Any], opponents: int) -> int:
    """Games one arm plays per deal: one per seating and opponent."""
    game = envs.make(env, raw=True, **dict(env_options)).game
    return len(teams_of(game)) * opponents


class Runner:
    """Runs blocks in this process or in worker processes (same results either way:
    every game's seeds come from its deal)."""

    def __init__(self, workers: int = 1):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def map(
        self,
        fn: Callable[[Any], Any],
        jobs: Sequence[Any],
        done: Callable[[int], None] | None = None,
    ) -> list[Any]:
        """``[fn(job) for job in jobs]``; ``done(i)`` is called as each job finishes."""
        if self.workers == 1 or len(jobs) <= 1:
            results = []
            for i, job in enumerate(jobs):
                results.append(fn(job))
                if done is not None:
                    done(i)
            return results
        if self._pool is None:
            import multiprocessing

            # spawn: the workers start clean (no inherited torch or BLAS threads).
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn")
            )
        futures = [self._pool.submit(fn, job) for job in jobs]
        index = {f: i for i, f in enumerate(futures)}
        from concurrent.futures import as_completed

        for f in as_completed(futures):
            if done is not None:
                done(index[f])
        return [f.result() for f in futures]


def _chunks(seq: Sequence[int], size: int) -> list[tuple[int, ...]]:
    return [tuple(seq[i : i + size]) for i in range(0, len(seq), size)]
