"""Fünfzehnern's record hooks (`parlour.envs.GameRecord`) beside the engine: a
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


#: the ``expert`` agent's PIMC samples per decision, and the most cards in hand at
#: which it searches (4 players; 3 players search the whole deal, as ``solver``). 64
#: since the compiled search (4 before): on 400 games of tuning seed 10411 against
#: ``solver`` its paired margin was +0.33 game points a deal above 4 samples', 96
#: samples no better, and searching from 7 cards (32 samples) or only from 5 (64)
#: worse (``docs/solvers.md``)
EXPERT_SAMPLES = 64
EXPERT_MAX_CARDS = {3: 8, 4: 6}


def expert(network: Any, game: Any, seed: int | None) -> Any:
    """The ``expert`` agent: PIMC over the network in the last tricks, the network
    before."""
    from ...agents.solver.fuenfzehnern import FuenfzehnernPIMC

    return FuenfzehnernPIMC(
        EXPERT_SAMPLES,
        seed=seed,
        max_cards=EXPERT_MAX_CARDS.get(game.num_players),
        base=network,
    )
