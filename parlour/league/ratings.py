"""The league's ratings: openskill's Plackett-Luce model, updated game by game in the
order stored, each side a team of the agents in its seats, ranked by its score (the
mean return of its seats); plus each agent's share of the wins and its scores.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..training.arena import win_share


def fit(
    games: Iterable[tuple[list[str], list[list[int]], list[float]]],
) -> dict[str, dict[str, Any]]:
    """Ratings and per-agent results from games (agent per seat, sides' seats, returns
    per seat), updated game by game with openskill's Plackett–Luce model.

    Each side is a team of the distinct agents in its seats (partners may be different
    agents); sides rank by their mean return, ties sharing a rank. An agent holding
    several sides of one game (fewer agents than sides) gets the sum of its sides'
    rating changes. Returns ``{agent: {"mu", "sigma", "wins", "scores"}}``.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    wins: dict[str, list[float]] = {}
    scores: dict[str, list[float]] = {}
    for seats, teams, returns in games:
        side_score = [float(np.mean([returns[s] for s in team])) for team in teams]
        members = [list(dict.fromkeys(seats[s] for s in team)) for team in teams]
        for i, team in enumerate(teams):
            share = win_share(returns, teams, [s in team for s in range(len(seats))])
            for name in members[i]:
                wins.setdefault(name, []).append(share)
                scores.setdefault(name, []).append(side_score[i])
        for team in members:
            for name in team:
                if name not in ratings:
                    ratings[name] = model.rating(name=name)
        order = sorted(set(side_score), reverse=True)
        ranks = [order.index(v) for v in side_score]
        # copies, so one agent on two sides is rated from the same prior on both
        entry = [
            [
                model.create_rating([ratings[n].mu, ratings[n].sigma], name=n)
                for n in team
            ]
            for team in members
        ]
        updated = model.rate(entry, ranks=ranks)
        delta: dict[str, float] = {}
        sigma: dict[str, float] = {}
        for team in updated:
            for r in team:
                delta[r.name] = delta.get(r.name, 0.0) + r.mu - ratings[r.name].mu
                sigma[r.name] = min(sigma.get(r.name, math.inf), r.sigma)
        for name, d in delta.items():
            ratings[name].mu += d
            ratings[name].sigma = sigma[name]
    return {
        name: {
            "mu": float(r.mu),
            "sigma": float(r.sigma),
            "wins": wins[name],
            "scores": scores[name],
        }
        for name, r in ratings.items()
    }
