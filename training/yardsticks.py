"""The exact yardsticks: an agent's play scored against a game's exact solution.

``parlour eval AGENT --exact`` reports them for any agent spec. Two games have one:

* **German Whist**: stage 2 (the last 13 tricks, open cards) against perfect play
  (`parlour.agents.solver.german_whist.stage2_quality`): the share of optimal and of
  critical optimal decisions, and the tricks lost a deal.
* **Fünfzehn – tot**: the loss against ``optimal``. The agent plays one seat against
  ``optimal`` in every other one on duplicate dice seeds (each seat in turn).
  ``optimal`` in that seat would win exactly the fair share 1/n (every seat then
  plays the same deterministic policy on the same dice), so the loss is 1/n minus the
  agent's share, paired per deal. Each of the agent's decisions with a choice is also
  scored against the exact turn solution (`parlour.agents.fuenfzehn_tot_solver`,
  with the later seats playing ``optimal``): the share of optimal decisions and the
  round win probability lost a decision.

Other games have no exact yardstick (`check`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import agents as agents_mod
from ..agents.base import Agent, Turn
from .arena import run_arena
from .stats import Interval, mean_interval


@dataclass(frozen=True)
class Yardstick:
    """A game's exact yardstick (`GameRecord.exact_yardstick`): what it measures, and
    ``report(env, agent, games, seed, options)`` giving the lines to print and the
    JSON."""

    measures: str
    report: Callable[..., tuple[str, dict[str, Any]]]

    def __call__(
        self, env: str, agent: str, games: int, seed: int, options: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """The lines to print and the JSON for ``agent`` (`report`)."""
        return self.report(env, agent, games, seed, options)


def of(env: str) -> Yardstick:
    """The exact yardstick of ``env``'s record; ValueError (one line) where there is
    none."""
    from .. import envs

    if not envs.record(env).exact_yardstick:
        have = [r.name for r in envs.records() if r.exact_yardstick]
        raise ValueError(
            f"no exact yardstick for {env} (there is one for {', '.join(have)})"
        )
    return envs.record(env).load("exact_yardstick")


class _ScoredAgent(Agent):
    """Plays as ``inner`` and scores each decision with a choice against the exact
    turn solution of ``judge`` (the ``optimal`` agent)."""

    def __init__(self, inner: Agent, judge: Any) -> None:
        self.inner, self.judge = inner, judge
        self.spec = inner.spec
        self.decisions = self.optimal = 0
        self.lost = 0.0

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def act(self, turn: Turn) -> int:
        from ..agents.fuenfzehn_tot_solver import KCLASSES
        from ..envs.fuenfzehn_tot.rules import ROLL, STAND

        action = self.inner.act(turn)
        if {ROLL, STAND} <= set(turn.legal_actions()):
            state = turn.state
            solution = self.judge.solution(turn)
            stand = float(solution.stand_value[state.total])
            roll = float(
                solution.roll_value[state.total][min(state.rolls, KCLASSES - 1)]
            )
            best = max(stand, roll)
            mine = stand if action == STAND else roll
            self.decisions += 1
            self.optimal += mine >= best - 1e-12
            self.lost += best - mine
        return action


@dataclass
class TotQuality:
    """An agent's Fünfzehn – tot play against ``optimal`` (`tot_quality`)."""

    agent: str
    games: int
    win_share: Interval
    """the agent's win share in one seat against optimal in the others"""
    loss: Interval
    """the fair share (optimal's own in that seat) minus the agent's, per deal"""
    decisions: int
    """the agent's decisions with a choice (both roll and stand legal)"""
    optimal: int
    """of those, the ones whose round win probability is the solution's best"""
    win_probability_lost: float
    """summed over decisions: the round win probability given away"""

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "games": self.games,
            "win_share": self.win_share.as_dict(),
            "loss": self.loss.as_dict(),
            "decisions": self.decisions,
            "optimal_fraction": self.optimal / self.decisions if self.decisions else 1,
            "win_probability_lost_per_decision": (
                self.win_probability_lost / self.decisions if self.decisions else 0.0
            ),
        }


def tot_quality(
    agent: str,
    games: int = 1000,
    seed: int = 0,
    env_options: Mapping[str, Any] | None = None,
) -> TotQuality:
    """Play ``agent`` in one seat against ``optimal`` in every other seat on
    duplicate dice seeds; its loss in win share against optimal and its decisions
    scored against the exact turn solution."""
    env, options = "fuenfzehn_tot_v0", dict(env_options or {})
    judge = agents_mod.make("optimal", env, seed=0, env_options=options)
    inner = agents_mod.make(agent, env, seed=seed, env_options=options)
    scored = _ScoredAgent(inner, judge)
    result = run_arena(
        env, [scored, "optimal"], games, duplicate=True, seed=seed, env_options=options
    )
    fair = 1.0 / result.num_teams
    per_deal: dict[int, list[float]] = {}
    for d, won in zip(result.deal_index, result.candidate_wins, strict=True):
        per_deal.setdefault(d, []).append(fair - won)
    loss = mean_interval([float(np.mean(v)) for v in per_deal.values()])
    return TotQuality(
        agent,
        result.games,
        result.win_rate(),
        loss,
        scored.decisions,
        scored.optimal,
        scored.lost,
    )


def _stage2_report(
    env: str, agent: str, games: int, seed: int, options: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    from ..agents.solver.german_whist import stage2_quality

    q = stage2_quality(agent, games=games, seed=seed, env_options=options)
    data = {**q.as_dict(), "tricks_lost_per_game": q.tricks_lost / q.games}
    return stage2_lines(q), data


def _tot_report(
    env: str, agent: str, games: int, seed: int, options: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    q = tot_quality(agent, games, seed, options)
    data = q.as_dict()
    lines = [
        f"against optimal ({q.games} duplicate games, {agent} in one seat, optimal in "
        "the others):",
        f"  win share                 {q.win_share}",
        f"  loss in win share         {q.loss}  (optimal's own share: the fair "
        f"{q.win_share.estimate + q.loss.estimate:.3f})",
        f"  optimal decisions         {data['optimal_fraction']:.1%} of {q.decisions}",
        "  round win probability lost per decision "
        f"{data['win_probability_lost_per_decision']:.4f}",
    ]
    return "\n".join(lines), data


#: German Whist's yardstick: stage 2 scored by the exact solver
STAGE2 = Yardstick("stage 2 against perfect play", _stage2_report)
#: Fünfzehn – tot's yardstick: the loss in win share against the optimal policy
AGAINST_OPTIMAL = Yardstick("the loss against optimal", _tot_report)


def stage2_lines(q: Any) -> str:
    """A `Stage2Quality` as the lines ``parlour eval`` prints."""
    unit = "deal" if q.variant == "german" else "match"  # a Honeymoon game: a match
    lines = [
        f"stage 2 against perfect play ({q.variant}, {q.games} games vs heuristic, "
        f"{q.decisions} decisions with a choice):",
        f"  optimal decisions         {q.optimal_fraction:.1%}",
        f"  critical: optimal         {q.critical_optimal_fraction:.1%} "
        f"of {q.critical}",
        f"  tricks lost per decision  {q.mean_tricks_lost:.3f}",
        f"  tricks lost per {unit:<10}{q.tricks_lost / q.games:.3f}",
    ]
    if q.variant == "german":
        lines.append(f"  blunders / won positions  {q.blunders} / {q.won_positions}")
    return "\n".join(lines)
