"""Forty-Fives' record hooks beside the engine (`parlour.envs.GameRecord`): how a
game is decided, a random forced deal and hidden-information twins."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.twins import shuffled_names, swap_twins
from .tables import HAND_SIZE, KITTY_SIZE


def decided_by(game: Any) -> str:
    """A game to the target pays a win or a loss; one deal pays its points."""
    return "win" if game.episode == "match" else "points"


def random_deal(game: Any, rng: np.random.Generator) -> dict[str, Any]:
    """``{"dealer", "hands": [[5] × n], "kitty": [3] (auction), "stock": [...]}``."""
    names = shuffled_names(game, rng)
    n = game.num_players
    deal: dict[str, Any] = {
        "dealer": int(rng.integers(n)),
        "hands": [names[HAND_SIZE * i : HAND_SIZE * (i + 1)] for i in range(n)],
    }
    rest = names[HAND_SIZE * n :]
    if game.auction:
        deal["kitty"], rest = rest[:KITTY_SIZE], rest[KITTY_SIZE:]
    deal["stock"] = rest
    return deal


hidden_twins = swap_twins(random_deal, HAND_SIZE)


#: the ``expert`` agent's PIMC samples per trick-play decision (``solver``: 16); 64
#: beat 16 by +0.024 [+0.012, +0.035] of win share a deal against ``solver`` on the
#: same 2,000 deals (seeds 20002, 20003; ``docs/results.md``)
EXPERT_SAMPLES = 64


def expert(network: Any, game: Any, seed: int | None) -> Any:
    """The ``expert`` agent: PIMC over the network at every trick-play decision; the
    network robs, bids, names trumps and discards."""
    from ...agents.solver.forty_fives import FortyFivesPIMC

    return FortyFivesPIMC(EXPERT_SAMPLES, seed=seed, base=network)
