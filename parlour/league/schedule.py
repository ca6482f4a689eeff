"""Who plays whom, on which deals: a league's tables, their seatings, the deals' seeds
and the batches of games a worker plays.

A game has ``k`` sides (its partnerships, else one per seat; `teams_of`). A *table*
is ``k`` agents, one per side: every pair of agents when ``k = 2``; for 3-6 sides the
agents are seated in rotation (table ``i`` is agents ``i, i+1, …, i+k-1`` of the list,
wrapping round, so a short list fills a big table). Each deal of a table is played once
per seating (the agents rotate through the sides, as the arena's duplicate mode rotates
the candidate), so every agent holds every side's cards. Deal ``j`` of a table has the
seed `deal_seed(j)`: the same cards at every table.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import __version__
from ..training.arena import play_game, teams_of
from ..training.distributed import ShippedCheckpoint, worker_agent, worker_env
from .store import dumps

#: deals per batch (each deal is played once per seating)
BATCH_DEALS = 4


def canonical_table(table: Sequence[str]) -> tuple[str, ...]:
    """A table up to rotation (all its seatings are played): its smallest rotation."""
    k = len(table)
    return min(tuple(table[(i + r) % k] for i in range(k)) for r in range(k))


def tables_for(names: Sequence[str], sides: int) -> list[tuple[str, ...]]:
    """The tables of a league: every pair for two sides; for more, the agents seated in
    rotation (one table per agent, wrapping round the list)."""
    if sides == 2:
        tables = [canonical_table(p) for p in itertools.combinations(names, 2)]
    elif len(names) == sides:
        tables = [canonical_table(names)]
    else:
        n = len(names)
        tables = [
            canonical_table([names[(i + j) % n] for j in range(sides)])
            for i in range(n)
        ]
    return list(dict.fromkeys(tables))


def deal_seed(index: int) -> int:
    """The env seed of deal ``index`` (the same for every table)."""
    return int(np.random.SeedSequence([0x1EA6, index]).generate_state(1)[0])


def seating_sides(table: Sequence[str], seating: int) -> list[str]:
    """Agent per side in a seating: the table rotated by ``seating`` sides."""
    k = len(table)
    return [table[(i + seating) % k] for i in range(k)]


@dataclass(frozen=True)
class Batch:
    """A few deals of one table: what a worker needs to play them."""

    env_name: str
    env_options: dict[str, Any]
    options: str
    table: tuple[str, ...]  # agent names, one per side
    specs: dict[str, str]  # name -> spec
    hashes: dict[str, str]  # name -> checkpoint hash (checkpoint agents only)
    first_deal: int
    deals: int

    @property
    def pairing(self) -> str:
        return dumps(list(self.table))


def _final_info(env) -> dict[str, Any]:
    """The engine's public record at the end of the game just played."""
    return json.loads(dumps(env.unwrapped.details()))


def play_batch(
    batch: Batch,
    on_game: Callable[[], None] | None = None,
    checkpoints: Mapping[str, ShippedCheckpoint] | None = None,
) -> list[dict[str, Any]]:
    """Play every deal of a batch in every seating; one stored row per game. A deal's
    seed fixes its outcome: agents are reseeded from it before each game. The env and
    agents are kept in this process between batches (``checkpoints``: weights shipped
    to a Ray worker, `parlour.training.distributed`)."""
    env = worker_env(batch.env_name, batch.env_options)
    teams = teams_of(env.unwrapped.game)
    k = len(teams)
    seats_count = sum(len(t) for t in teams)
    rows = []
    for deal in range(batch.first_deal, batch.first_deal + batch.deals):
        seed = deal_seed(deal)
        for seating in range(k):
            seats = [""] * seats_count
            for team, name in zip(
                teams, seating_sides(batch.table, seating), strict=True
            ):
                for s in team:
                    seats[s] = name
            players = [
                worker_agent(
                    batch.specs[n],
                    batch.env_name,
                    batch.env_options,
                    seed=s,
                    checkpoints=checkpoints,
                )
                for s, n in enumerate(seats)
            ]
            for s, player in enumerate(players):
                player.reset(seed=seed + 7919 * (s + 1))
            returns = play_game(env, players, seed=seed)
            info = _final_info(env)
            rows.append(
                {
                    "env": batch.env_name,
                    "options": batch.options,
                    "pairing": batch.pairing,
                    "deal": deal,
                    "seed": seed,
                    "seating": seating,
                    "seats": dumps(seats),
                    "hashes": dumps(
                        {n: batch.hashes[n] for n in set(seats) if n in batch.hashes}
                    ),
                    "teams": dumps(teams),
                    "returns": dumps([float(r) for r in returns]),
                    "scores": dumps(info["scores"]) if "scores" in info else None,
                    "info": dumps(info),
                    "version": __version__,
                    "played_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
            )
            if on_game is not None:
                on_game()
    return rows


def play_batch_task(
    batch: Batch, checkpoints: Mapping[str, ShippedCheckpoint] | None = None
) -> list[dict[str, Any]]:
    """A Ray task: `play_batch` with the shipped checkpoints."""
    return play_batch(batch, checkpoints=checkpoints)
