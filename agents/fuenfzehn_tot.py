"""Bots for Fünfzehn – tot (rule book: *Fünfzehn – tot*, German Wikipedia).

Both read the engine state; everything in it is public except the dice still to come.

* ``threshold:N`` stands as soon as its total is ``N`` or more and standing is allowed;
  rules 1 and 2 decide when it is not (a 9 stands; a 10 and a third roll roll on).
* ``optimal`` plays the exact turn solution of `parlour.agents.fuenfzehn_tot_solver`. In
  the last seat of a round it maximises the exact chance of beating the totals standing
  (not taking the match in the first half, winning the round in the second). In an
  earlier seat it uses the solver's backward induction, which assumes that the players
  still to come play the same round-optimal policy (switch ``lookahead``, on by
  default). With ``-lookahead`` an earlier seat plays as if it were last against the
  totals standing and, with nothing standing yet, stands from 11, the seed's "three
  rolls average 10.5".
* ``heuristic`` (the registry's default bot) is ``optimal``; ``heuristic:-lookahead``
  switches the look-ahead off.
"""

from __future__ import annotations

from typing import Any

from ..envs.fuenfzehn_tot.rules import LIMIT, ROLL, STAND, Phase
from .base import Agent, Turn
from .fuenfzehn_tot_solver import TurnSolution, solve_turn

FIRST_STAND = 11  # "Dreimal 3,5 wäre 10,5": the -lookahead first player's mark


def _choose(turn: Turn, want_stand: bool) -> int:
    """STAND if wanted and allowed, else ROLL if allowed, else the only legal action."""
    legal = turn.legal_actions()
    if want_stand and STAND in legal:
        return STAND
    if ROLL in legal:
        return ROLL
    return legal[0]


class ThresholdAgent(Agent):
    """Stand at ``threshold`` or more when the rules allow it; otherwise roll."""

    def __init__(self, threshold: int, seed: int | None = None):
        if isinstance(threshold, bool) or not isinstance(threshold, int):
            raise ValueError(f"threshold must be an integer 1..15, got {threshold!r}")
        if not 1 <= threshold <= LIMIT:
            raise ValueError(f"threshold must be 1..15, got {threshold}")
        self.threshold = threshold
        self.spec = f"threshold:{threshold}"

    def act(self, turn: Turn) -> int:
        return _choose(turn, turn.state.total >= self.threshold)


class OptimalAgent(Agent):
    """The exact turn solver's decision; the module docstring covers earlier seats.

    Switches: ``lookahead`` (default True).
    """

    SWITCHES = ("lookahead",)

    def __init__(
        self, seed: int | None = None, lookahead: bool = True, **switches: Any
    ):
        if switches:
            raise ValueError(
                f"unknown switch(es) {sorted(switches)} for the Fünfzehn – tot bot; "
                f"valid: {', '.join(self.SWITCHES)}"
            )
        self.lookahead = bool(lookahead)
        self.spec = "optimal" if self.lookahead else "heuristic:-lookahead"

    def solution(self, turn: Turn) -> TurnSolution | None:
        """The solved turn this agent decides by; None where ``-lookahead`` plays the
        first standing total of a round by the seed's mark instead."""
        game, state = turn.game, turn.state
        half = 1 if state.phase == Phase.HALF1 else 2
        before = state.order[: state.pos]
        standing = [None if state.busted[s] else state.totals[s] for s in before]
        after = len(state.order) - state.pos - 1
        if not self.lookahead and after:
            if all(t is None for t in standing):
                return None
            after = 0
        return solve_turn(
            half,
            standing,
            after,
            auto_stand_at_15_half1=game.auto_stand_at_15_half1,
            half2_bust=game.half2_bust,
            rule1=game.rule1,
            rule2=game.rule2,
        )

    def act(self, turn: Turn) -> int:
        state = turn.state
        solution = self.solution(turn)
        if solution is None:
            return _choose(turn, state.total >= FIRST_STAND)
        return _choose(turn, solution.decision(state.total, state.rolls) == "stand")


def make_agent(kind: str, arg: str, seed: int | None = None) -> Agent:
    """The agent kinds beyond ``random``/``heuristic`` for ``fuenfzehn_tot_v0``:
    ``threshold:N`` and ``optimal``; ValueError for anything else."""
    if kind == "threshold":
        try:
            n = int(arg)
        except ValueError:
            raise ValueError(
                f"write threshold:N with N a total 1..15, got {arg!r}"
            ) from None
        return ThresholdAgent(n, seed=seed)
    if kind == "optimal":
        if arg:
            raise ValueError(
                "the optimal agent takes no options (heuristic:-lookahead turns its "
                "look-ahead off)"
            )
        return OptimalAgent(seed=seed)
    spec = f"{kind}:{arg}" if arg else kind
    raise ValueError(
        f"unknown agent spec {spec!r} for fuenfzehn_tot_v0; use random, heuristic, "
        "heuristic:-lookahead, threshold:N or optimal"
    )


__all__ = ["FIRST_STAND", "OptimalAgent", "ThresholdAgent", "make_agent"]
