"""The ``solver`` and ``pimc:N`` bots for German Whist, and the registry's builder.

`PIMCAgent` plays stage 1 by PIMC over a base policy (the heuristic bot or the fast
rollout) and stage 2 exactly; `SolverAgent` is it with ``DEFAULT_SAMPLES`` samples.
`make_agent` is the registry's hook for these kinds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....envs.german_whist.rules import GermanWhist
from ...base import Agent, Turn
from .pimc import default_margin, pimc_card, rollout_card
from .positions import best_stage2_card
from .search import SHARED, Stage2Solver

#: PIMC samples per stage-1 decision of the ``solver`` bot (see ``docs/solvers.md``)
DEFAULT_SAMPLES = 8
#: the most PIMC samples a spec may ask for (a guard against typos like ``pimc:4000``).
MAX_SAMPLES = 1000


# --- the bots -------------------------------------------------------------------------
BASES = ("heuristic", "rollout")


class PIMCAgent(Agent):
    """``pimc:N``: stage 1 by PIMC over ``N`` sampled deals (`pimc_card`), stage 2
    exactly (`best_stage2_card`: with the hands open there is one consistent deal, so
    PIMC and the solver coincide).

    Options: ``base`` is the policy PIMC improves on: ``"heuristic"`` (default, the
    registry's `parlour.agents.german_whist.GermanWhistHeuristic`, seeded like this bot)
    or ``"rollout"`` (the fast `Rollout` policy), and ``base_agent``, any agent,
    replaces it (the ``expert`` agent's network); ``margin`` the sampled-deal margin a
    card needs over the base card (default `default_margin`).

    Known weaknesses of PIMC (Frank & Basin 1998; Long et al. 2010): *strategy fusion* —
    each sampled deal is played as if the cards were known, so a card that is right in
    every deal for a different follow-up looks better than it is; *non-locality* — the
    opponent's earlier choices carry information about his hand that uniform sampling
    ignores, and what our card reveals is not valued. Stage 1 after the current trick is
    played out by the simple `Rollout` policy, not searched, so values are only as good
    as that policy (``docs/solvers.md``).
    """

    def __init__(
        self,
        samples: int,
        seed: int | None = None,
        base: str = "heuristic",
        margin: int | None = None,
        solver: Stage2Solver | None = None,
        base_agent: Agent | None = None,
    ):
        if isinstance(samples, bool) or not isinstance(samples, int | np.integer):
            raise ValueError(f"PIMC samples must be an integer, got {samples!r}")
        if not 1 <= samples <= MAX_SAMPLES:
            raise ValueError(f"PIMC samples must be 1..{MAX_SAMPLES}, got {samples}")
        if base not in BASES:
            raise ValueError(f"PIMC base must be one of {list(BASES)}, got {base!r}")
        self.samples = int(samples)
        self.margin = default_margin(self.samples) if margin is None else int(margin)
        if self.margin < 1:
            raise ValueError(f"PIMC margin must be at least 1, got {margin!r}")
        self.base = base
        self.solver = solver or SHARED
        self.solver.requested()  # a bad PARLOUR_JIT is refused here, before any game
        self.spec = f"pimc:{self.samples}"
        # a given base policy (the ``expert`` agent's network) replaces ``base``
        self._given_base = base_agent
        self._base_agent: Agent | None = None
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None or not hasattr(self, "rng"):
            self.rng = np.random.default_rng(seed)
            if self._given_base is not None:
                self._base_agent = self._given_base
                self._base_agent.reset(seed)
            elif self.base == "heuristic":
                from ...german_whist import GermanWhistHeuristic

                self._base_agent = GermanWhistHeuristic(seed=seed)

    def search_settings(self) -> dict[str, Any]:
        """Samples and margin of stage 1 (stage 2 is exact)."""
        return {"samples": self.samples, "margin": self.margin}

    def act(self, turn: Turn) -> int:
        legal = turn.legal_actions()
        if len(legal) == 1:
            return legal[0]
        game, state = turn.game, turn.state
        if not isinstance(game, GermanWhist):
            raise ValueError(f"the German Whist solver bots cannot play {game!r}")
        if state.stage == 2:
            return best_stage2_card(game, state, self.solver)
        if self._base_agent is not None:
            base = self._base_agent.act(turn)
        else:
            base = rollout_card(game, state, turn.seat)
        return pimc_card(
            game,
            state,
            turn.seat,
            self.samples,
            self.rng,
            base,
            self.margin,
            self.solver,
        )


class SolverAgent(PIMCAgent):
    """``solver``: exact in stage 2, PIMC with ``DEFAULT_SAMPLES`` samples over the
    heuristic bot in stage 1.

    Stage 2 (`best_stage2_card`): German Whist — a card that keeps a won position won
    (the first in natural order: the cheapest card that wins the trick, then the lowest;
    leading, a top card, then low cards); in a lost position, the card after which the
    most tricks can still be taken, all 13 played out (the opponent must work hardest
    for his 7). Honeymoon Whist — the card that takes the most tricks, which maximises
    the deal's match points. Ties go to the natural order; of equivalent cards the
    weakest is played.
    """

    def __init__(self, seed: int | None = None, solver: Stage2Solver | None = None):
        super().__init__(DEFAULT_SAMPLES, seed=seed, solver=solver)
        self.spec = "solver"


def make_agent(kind: str, arg: str, seed: int | None = None) -> Agent:
    """The solver bots for ``german_whist_v0`` (`parlour.agents.make`): ``solver`` and
    ``pimc:N``. ValueError for anything else."""
    if kind == "solver":
        if arg:
            raise ValueError(
                "the solver bot takes no options (use pimc:N to set the samples)"
            )
        return SolverAgent(seed=seed)
    if kind == "pimc":
        try:
            n = int(arg)
        except ValueError:
            raise ValueError(
                f"write pimc:N with N the number of sampled deals (1..{MAX_SAMPLES}), "
                f"got {arg!r}"
            ) from None
        return PIMCAgent(n, seed=seed)
    raise ValueError(
        f"unknown agent kind {kind!r} for german_whist_v0; use random, heuristic, "
        "heuristic:-tip,+tip, ckpt:PATH, endgame:SPEC, solver or pimc:N"
    )
