"""Agent agreement (German Whist): how often an agent does what each tip prescribes.

For a trained checkpoint, the heuristic and random play alike: at each of the agent's
decisions, `parlour.agents.german_whist.tip_situations` says which tips speak of the
situation and whether the card agrees; the counts get Wilson intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import agents as agents_mod
from ... import envs
from ...agents.base import Agent
from ...agents.german_whist.tip_situations import (
    AGREEMENT_TIPS,
    CONTEST_TIPS,
    tip_situations,
)
from ..arena import play_game
from ..stats import wilson


@dataclass
class Agreement:
    """How often one agent's decisions agree with each tip's prescription."""

    agent: str
    games: int
    counts: dict[str, list[int]] = field(default_factory=dict)  # tip -> [agree, n]
    contests: dict[str, dict[str, list[int]]] = field(default_factory=dict)

    def rate(self, tip: str) -> Any:
        agree, n = self.counts.get(tip, [0, 0])
        return wilson(agree, n) if n else None

    def contest_rate(self, tip: str, kind: str) -> Any:
        won, n = self.contests.get(tip, {}).get(kind, [0, 0])
        return wilson(won, n) if n else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "games": self.games,
            "agreement": {
                t: {"agree": a, "situations": n} for t, (a, n) in self.counts.items()
            },
            "contest": self.contests,
        }


def agreement(
    agent: str | Agent,
    *,
    env: str = "german_whist_v0",
    env_options: Mapping[str, Any] | None = None,
    opponent: str = "heuristic",
    deals: int = 100,
    seed: int = 0,
) -> Agreement:
    """Play ``deals`` duplicate deals (both seats) of ``agent`` against ``opponent`` and
    count, at each of the agent's decisions, what `tip_situations` finds."""
    if env != "german_whist_v0":
        raise ValueError(
            f"agent agreement is implemented for german_whist_v0, not {env}"
        )
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be a positive integer, got {deals!r}")
    env_options = dict(env_options or {})
    wrapped = envs.make(env, **env_options)
    raw = wrapped.unwrapped
    game = raw.game
    context = {"env_options": env_options}
    me = (
        agent
        if isinstance(agent, Agent)
        else agents_mod.make(agent, env, seed=seed, **context)
    )
    other = agents_mod.make(opponent, env, seed=seed + 1, **context)
    result = Agreement(agent if isinstance(agent, str) else agent.spec, 0)
    for tip in AGREEMENT_TIPS:
        result.counts[tip] = [0, 0]
    for tip in CONTEST_TIPS:
        result.contests[tip] = {}
    seeds = np.random.SeedSequence(seed).generate_state(deals, dtype=np.uint32).tolist()
    def count(p: int, action: int) -> None:
        if p != seat:
            return
        for tip, what in tip_situations(game, raw.game_state, p, action).items():
            if tip in CONTEST_TIPS:
                kind, contested = what
                cell = result.contests[tip].setdefault(kind, [0, 0])
                cell[0] += contested
                cell[1] += 1
            else:
                result.counts[tip][0] += bool(what)
                result.counts[tip][1] += 1

    for deal_seed in seeds:
        for seat in (0, 1):
            me.reset(seed=deal_seed)
            other.reset(seed=deal_seed + 7919)
            players = [me, other] if seat == 0 else [other, me]
            play_game(wrapped, players, seed=deal_seed, on_move=count)
            result.games += 1
    wrapped.close()
    return result


def run_agreement(
    specs: Sequence[str],
    *,
    env_options: Mapping[str, Any] | None = None,
    deals: int = 100,
    seed: int = 0,
) -> list[Agreement]:
    """`agreement` for each agent spec, on the same deals."""
    return [
        agreement(spec, env_options=env_options, deals=deals, seed=seed)
        for spec in specs
    ]
