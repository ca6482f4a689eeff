"""TorchRL: a Parlour env as a TorchRL ``EnvBase`` (extra ``torchrl``).

The env needs no glue: ``PettingZooWrapper(envs.make(name), use_mask=True)`` passes
``check_env_specs`` for every variant. `make_env` is that call with the settings a
turn-based card game wants: ``use_mask=True`` (only the agent to act has a valid
step; the others are masked out), categorical actions with the legal-action mask kept
in the action spec (so ``env.rand_action`` and masked policies pick legal moves), and
one group for all seats (they share spaces). The default ``illegal_action="raise"`` is
right here: nothing samples outside the mask.

>>> from parlour.integrations.torchrl import make_env
>>> env = make_env("german_whist_v0", seed=0)
>>> rollout = env.rollout(100)  # random legal play until the deal ends
"""

from __future__ import annotations

from typing import Any

from torchrl.envs.libs.pettingzoo import PettingZooWrapper

from .. import envs


def make_env(
    name: str, *, seed: int | None = None, device: str = "cpu", **options: Any
) -> PettingZooWrapper:
    """The Parlour env ``name`` (``options`` as for `parlour.envs.make`) wrapped for
    TorchRL; seeded with ``seed`` when given."""
    env = PettingZooWrapper(
        envs.make(name, **options),
        use_mask=True,
        categorical_actions=True,
        device=device,
    )
    if seed is not None:
        env.set_seed(seed)
    return env


__all__ = ["make_env"]
