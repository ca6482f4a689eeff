"""Random forced deals and hidden-information twins: what the games' ``random_deal``
and ``hidden_twins`` hooks (`parlour.envs.GameRecord`) share.

The generic tests force a game's random deal (and break it in every way they know) and
play its twins: two starts that differ only in cards one seat cannot know, which must
look the same to that seat (its observation, its mask, its text prompt) for as long as
the games agree in everything it may see.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from .cards import cards_in

#: (options A, options B, observer seat, same_view(state A, state B))
Twins = tuple[dict[str, Any], dict[str, Any], int, Callable[[Any, Any], bool]]

#: public state fields that must agree for two twin games to look alike (those a game
#: lacks are ignored): Domino's layout and passes, Forty-Fives' robbing and auction
#: (not Forty-Fives' ``rob_seat``: who may still rob is hidden, see test_forty_fives.py)
PUBLIC_FIELDS = (
    "passes",
    "laid",
    "line_top",
    "line_bottom",
    "out_order",
    "robbed_by",
    "bid_history",
    "contract",
    "trump",
    "drawn",
    "turned",
)


def shuffled_names(game: Any, rng: np.random.Generator) -> list[str]:
    """The names of the cards in play (``game.in_play``, else the whole pack),
    shuffled."""
    in_play = getattr(game, "in_play", game.deck.all_mask)
    names = [game.deck.format(c) for c in cards_in(in_play)]
    rng.shuffle(names)
    return names


def hands_deal(game: Any, rng: np.random.Generator, hand_size: int) -> dict[str, Any]:
    """``{"dealer", "hands": [[hand_size] × n]}``: every card in play dealt."""
    names = shuffled_names(game, rng)
    n = game.num_players
    return {
        "dealer": int(rng.integers(n)),
        "hands": [names[hand_size * i : hand_size * (i + 1)] for i in range(n)],
    }


def swap_twins(
    make_deal: Callable[[Any, np.random.Generator], dict[str, Any]], hand_size: int
) -> Callable[[Any, np.random.Generator], Twins]:
    """Twins: one card swapped between two hands other than the observer's (with two
    players, between the opponent's hand and the bottom of the stock); alike to the
    observer until the difference shows in play."""

    def twins(game: Any, rng: np.random.Generator) -> Twins:
        deal = make_deal(game, rng)
        n = game.num_players
        observer = int(rng.integers(n))
        twin = copy.deepcopy(deal)
        i, j = rng.integers(hand_size, size=2)
        if n == 2:
            opp = twin["hands"][1 - observer]
            opp[i], twin["stock"][-1] = deal["stock"][-1], opp[i]
        else:
            a, b = rng.choice([s for s in range(n) if s != observer], 2, replace=False)
            twin["hands"][a][i] = deal["hands"][b][j]
            twin["hands"][b][j] = deal["hands"][a][i]

        def same_view(x: Any, y: Any) -> bool:
            return (
                x.phase == y.phase
                and x.deal_no == y.deal_no == 0
                and game.current_player(x) == game.current_player(y) >= 0
                and x.hands[observer] == y.hands[observer]
                and x.played_by == y.played_by
                and all(
                    getattr(x, f, None) == getattr(y, f, None) for f in PUBLIC_FIELDS
                )
            )

        return {"deal": deal}, {"deal": twin}, observer, same_view

    return twins


__all__ = ["PUBLIC_FIELDS", "Twins", "hands_deal", "shuffled_names", "swap_twins"]
