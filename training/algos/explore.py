"""Epsilon-greedy play over masked action values, shared by NFSP's best response and
DMC."""

from __future__ import annotations

import torch

from ..batch_selfplay import sample_masked
from ..config import TrainConfig


def epsilon(config: TrainConfig, steps: int) -> float:
    """``epsilon`` at the start of the run, falling linearly to ``epsilon_end`` at
    ``total_timesteps``."""
    done = min(1.0, steps / config.total_timesteps)
    return config.epsilon + (config.epsilon_end - config.epsilon) * done


def epsilon_greedy(
    q: torch.Tensor, mask: torch.Tensor, eps: float, generator: torch.Generator
) -> torch.Tensor:
    """Per row: a uniform legal action with probability ``eps``, else the legal
    action of the highest value in ``q`` ``(N, A)``."""
    greedy = q.masked_fill(~mask, -torch.inf).argmax(dim=1)
    if eps <= 0:
        return greedy
    uniform = sample_masked(torch.zeros_like(q), mask, generator)
    explore = torch.rand(len(q), generator=generator) < eps
    return torch.where(explore, uniform, greedy)


__all__ = ["epsilon", "epsilon_greedy"]
