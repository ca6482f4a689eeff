"""Fünfzehn – tot's record hooks beside the engine (`parlour.envs.GameRecord`): the
``expert`` agent."""

from __future__ import annotations

from typing import Any

from .rules import ROLL, STAND


def exact_choices(game: Any, state: Any) -> list[int]:
    """Every legal action of the seat to act that keeps the exact turn solution's
    chance of winning the round (`parlour.agents.fuenfzehn_tot_solver`)."""
    from ...agents.fuenfzehn_tot import OptimalAgent
    from ...agents.fuenfzehn_tot_solver import KCLASSES
    from ...agents.solver.tricks import turn_for

    solution = OptimalAgent().solution(turn_for(game, state))
    assert solution is not None  # with the look-ahead every turn is solved
    k = min(state.rolls, KCLASSES - 1)
    value = {
        STAND: solution.stand_value[state.total],
        ROLL: solution.roll_value[state.total][k],
    }
    legal = game.legal_actions(state)
    best = max(value[a] for a in legal if value[a] is not None)
    return [a for a in legal if value[a] is not None and value[a] >= best]


def expert(network: Any, game: Any, seed: int | None) -> Any:
    """The ``expert`` agent: the network's stand-or-roll where the exact turn
    solution values it as highly as the other choice, else the solution's."""
    from ...agents.base import EndgameAgent

    return EndgameAgent(network, exact_choices)
