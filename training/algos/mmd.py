"""Magnetic mirror descent (MMD) on the batched self-play rollout.

Sokota, D'Orazio, Kolter, Loizou, Lanctot, Mitliagkas, Brown, Kroer: "A Unified Approach
to Reinforcement Learning, Quantal Response Equilibria, and Two-Player Zero-Sum Games",
ICLR 2023. MMD's step is mirror descent with a second, "magnetic" regulariser: the new
policy maximises the advantage-weighted objective minus ``alpha * KL(pi || rho)``, the
reverse KL to a magnet policy ``rho``, with the step size bounding how far it moves from
the last policy. Its deep-RL form, as in the paper's experiments, is PPO's update with
that term added: here PPO's clipped surrogate and entropy bonus (the batch backend's
`training.backends.batch.BatchBackend`, whose rollout, advantages and value loss are
used unchanged) plus ``mmd_alpha * KL(pi || rho)`` over the legal actions. The magnet
starts as the initial policy (the warm start's, where there is one) and moves toward
the current policy every ``mmd_magnet_every`` updates by ``mmd_magnet_step`` of the way
in parameter space (1: a copy), which turns the regularised equilibrium MMD converges to
into a sequence that approaches the game's Nash equilibrium.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch

from ..backends.batch import BatchBackend


class MMDBackend(BatchBackend):
    """PPO's update plus MMD's reverse-KL pull toward a periodically moved magnet."""

    method = "batched self-play MMD"
    log_name = "batch_mmd"

    def build(self) -> None:
        super().build()
        self.magnet = copy.deepcopy(self.net).requires_grad_(False)

    def modules(self) -> dict[str, Any]:
        return {**super().modules(), "magnet": self.magnet}

    def imitate(self, data: Any, progress: Callable[[int, float], None]):
        report = super().imitate(data, progress)
        # the magnet starts where self-play starts: at the teacher's policy
        self.magnet.load_state_dict(self.net.state_dict())
        return report

    def regulariser(
        self, obs: torch.Tensor, mask: torch.Tensor, logp_all: torch.Tensor
    ) -> tuple[torch.Tensor | None, dict[str, torch.Tensor]]:
        """``mmd_alpha`` times the mean reverse KL ``KL(pi || magnet)`` over the legal
        actions."""
        with torch.no_grad():
            magnet_logp = self.magnet.masked_log_probs(obs, mask)
        # the illegal actions' terms are 0 (pi = 0): left out of exp() (see
        # `masked_entropy`) and of the difference of two -1e8s
        legal_logp = logp_all.masked_fill(~mask, 0.0)
        diff = (legal_logp - magnet_logp.masked_fill(~mask, 0.0)).masked_fill(
            ~mask, 0.0
        )
        kl = (legal_logp.exp() * diff).sum(1).mean()
        return self.config.mmd_alpha * kl, {"magnet_kl": kl.detach()}

    def after_update(self) -> None:
        """Every ``mmd_magnet_every`` updates the magnet moves ``mmd_magnet_step`` of
        the way to the current policy."""
        c = self.config
        if (self._steps // self.rollout_steps) % c.mmd_magnet_every:
            return
        with torch.no_grad():
            for magnet, current in zip(
                self.magnet.parameters(), self.net.parameters(), strict=True
            ):
                magnet.lerp_(current, c.mmd_magnet_step)


__all__ = ["MMDBackend"]
