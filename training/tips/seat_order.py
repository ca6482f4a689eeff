"""Fünfzehn – tot's seat order, simulated: whole games, each seat's losses.

The exact per-round seat chances are `parlour.agents.fuenfzehn_tot_rationale`'s; this
plays whole games of the bots (seat 0 starting the first round) through the same
`Runner` as the tip experiments.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import agents as agents_mod
from ..arena import play_game
from ..distributed import worker_env
from .runner import Runner, _chunks


def game_seat_order(
    games: int,
    *,
    players: int = 4,
    spec: str = "heuristic",
    seed: int = 0,
    runner: Runner | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Whole Fünfzehn – tot games of ``players`` copies of ``spec``, seat 0 starting the
    first round (the ``starter`` reset option): each seat's loss count."""
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive integer, got {games!r}")
    seeds = np.random.SeedSequence(seed).generate_state(games, dtype=np.uint32).tolist()
    jobs = [(players, spec, tuple(c)) for c in _chunks(seeds, 50)]
    runner = runner or Runner(1)
    bar = None
    if progress:
        from ...progress import progress_bar

        bar = progress_bar(total=games, desc="fuenfzehn_tot seat order", unit="game")

    def done(i: int) -> None:
        if bar is not None:
            bar.update(len(jobs[i][2]))

    try:
        losses = sum(np.asarray(r) for r in runner.map(_seat_block, jobs, done))
    finally:
        if bar is not None:
            bar.close()
    return {
        "games": games,
        "players": players,
        "spec": spec,
        "losses": [int(x) for x in losses],
    }


def _seat_block(
    job: tuple[int, str, tuple[int, ...]], checkpoints: Any = None
) -> list[int]:
    """Whole games of a chunk of seeds; each seat's losses. (``checkpoints``: what a
    Ray task is given, unused: the bots here have no weights.)"""
    players, spec, seeds = job
    env = worker_env("fuenfzehn_tot_v0", {"players": players})
    bots = [agents_mod.make(spec, "fuenfzehn_tot_v0", seed=s) for s in range(players)]
    losses = [0] * players
    for game_seed in seeds:
        for s, bot in enumerate(bots):
            bot.reset(seed=game_seed + 7919 * (s + 1))
        scores = play_game(env, bots, seed=game_seed, options={"starter": 0})
        losses[int(np.argmin(scores))] += 1
    return losses
