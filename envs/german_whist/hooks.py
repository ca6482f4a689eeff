"""German Whist's record hooks beside the engine (`parlour.envs.GameRecord`): how a
game is decided, a random forced deal and hidden-information twins."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..core.twins import Twins
from .rules import HAND_SIZE


def decided_by(game: Any) -> str:
    """German Whist and a Honeymoon match pay a win or a loss; one Honeymoon deal pays
    its match points."""
    return "points" if game.honeymoon and game.episode == "deal" else "win"


def random_deal(game: Any, rng: np.random.Generator) -> dict[str, Any]:
    """A random valid forced deal: ``{"dealer", "hands": [[13], [13]], "stock"}``."""
    names = list(game.deck.names)
    rng.shuffle(names)
    return {
        "dealer": int(rng.integers(2)),
        "hands": [names[:HAND_SIZE], names[HAND_SIZE : 2 * HAND_SIZE]],
        "stock": names[2 * HAND_SIZE :],
    }


def hidden_twins(game: Any, rng: np.random.Generator) -> Twins:
    """Two deals that differ only in what ``observer`` cannot know: one to four cards of
    the opponent's hand swapped with stock cards that the loser of a stage-1 trick draws
    face down. They look the same to the observer while both are in stage 1 (the
    opponent's hand is open in stage 2) and the observer has not drawn a different
    card."""
    deal = random_deal(game, rng)
    observer = int(rng.integers(2))
    twin = copy.deepcopy(deal)
    opp_hand, stock = twin["hands"][1 - observer], twin["stock"]
    swaps = int(rng.integers(1, 5))
    hidden_places = range(1, len(stock), 2)  # odd places are drawn face down
    for i, j in zip(
        rng.choice(HAND_SIZE, swaps, replace=False),
        rng.choice(hidden_places, swaps, replace=False),
        strict=True,
    ):
        opp_hand[i], stock[j] = stock[j], opp_hand[i]

    def same_view(a: Any, b: Any) -> bool:
        return (
            a.phase == b.phase
            and game.current_player(a) >= 0
            and a.stage == b.stage == 1
            and a.hands[observer] == b.hands[observer]
            and a.face_up == b.face_up
        )

    return {"deal": deal}, {"deal": twin}, observer, same_view


#: the ``expert`` agent's PIMC samples per stage-1 decision, set so that a decision
#: averages under 0.1 s on a 2-core machine with the compiled stage-2 search (numba).
#: Honeymoon's solves ask for the most tricks, three to four times the cost of
#: German's one question; it sampled 4 deals with the pure-Python search, and 48 since
#: the compiled one (50-65 ms a decision; against ``solver``, docs/results.md).
#: German samples 128 since 2026-12-06 (16 before; docs/solvers.md has the sweep)
EXPERT_SAMPLES = {"german": 128, "honeymoon": 48}
#: how many more of those deals another card must win than the network's card before
#: the expert plays it: German 4 of 128 (a 32nd; the sweep against ``solver`` found a
#: smaller share stronger once the samples are many), Honeymoon `default_margin`'s
#: quarter (None)
EXPERT_MARGIN: dict[str, int | None] = {"german": 4, "honeymoon": None}


def expert_search(game: Any) -> tuple[int, int | None]:
    """The ``expert`` agent's stage-1 PIMC budget for a game: (samples, margin)."""
    variant = "honeymoon" if game.honeymoon else "german"
    return EXPERT_SAMPLES[variant], EXPERT_MARGIN[variant]


def expert(network: Any, game: Any, seed: int | None) -> Any:
    """The ``expert`` agent: stage 1 by PIMC over the network (its card unless the
    sampled deals, stage 2 solved exactly, clearly favour another), stage 2 exactly."""
    from ...agents.solver.german_whist import PIMCAgent

    samples, margin = expert_search(game)
    return PIMCAgent(samples, seed=seed, base_agent=network, margin=margin)


def expert_labels(
    game: Any, state: Any, seat: int, move: int, rng: np.random.Generator
) -> list[int] | None:
    """What the ``expert`` agent's search says of the network's ``move`` (DAgger's
    ``expert`` teacher): in stage 1, where PIMC over the move (the expert's samples,
    stage 2 solved exactly) clearly prefers another card, the class of equivalent cards
    it plays instead, else None (it keeps the move); in stage 2 every optimal card (the
    expert plays stage 2 exactly)."""
    from ...agents.solver.german_whist import optimal_moves, pimc_choice

    if state.stage == 2:
        return optimal_moves(game, state)
    samples, margin = expert_search(game)
    cards, overridden = pimc_choice(game, state, seat, samples, rng, move, margin)
    return sorted(cards) if overridden else None
