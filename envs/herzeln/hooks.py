"""Herzeln's record hooks (`parlour.envs.GameRecord`) beside the engine: a
random forced deal and hidden-information twins."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.twins import hands_deal, swap_twins
from .rules import HAND_SIZE


def random_deal(game: Any, rng: np.random.Generator) -> dict[str, Any]:
    """``{"dealer", "hands": [[8] × n]}`` from the cards in play."""
    return hands_deal(game, rng, HAND_SIZE)


hidden_twins = swap_twins(random_deal, HAND_SIZE)


#: the ``expert`` agent's PIMC samples per trick-play decision (32 since the compiled
#: search: about 5 ms a decision; 16 before)
EXPERT_SAMPLES = 32


def expert(network: Any, game: Any, seed: int | None) -> Any:
    """The ``expert`` agent: PIMC over the network in the last tricks of the trick
    contracts, the network before and in the Domino."""
    from ...agents.solver.herzeln import HerzelnPIMC

    return HerzelnPIMC(EXPERT_SAMPLES, seed=seed, base=network)
