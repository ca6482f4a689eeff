"""The ``ckpt:PATH`` agent: a trained policy loaded from a checkpoint, played greedily.

``ckpt:PATH`` accepts a checkpoint directory, its manifest, or a run directory (its
latest checkpoint). ``ckpt:PATH@sample`` samples from the policy instead of taking its
best move. A checkpoint made for another env or other options is refused with a message
saying so. On a Ray worker the agent is built from the weights the driver shipped
(``shipped``), never from a file the worker would have to reach.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..training import checkpoint as ckpt_io
from ..training.policy import NumpyPolicy, PolicyAgent


class CheckpointAgent(PolicyAgent):
    """Plays the actor of a trained policy."""

    def __init__(
        self,
        path: str,
        env_name: str,
        env_options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        deterministic: bool = True,
        shipped: Any = None,
    ):
        from .. import envs

        if shipped is None:
            ckpt = ckpt_io.load(path)
            weights = ckpt_io.to_numpy(ckpt.tensors["policy"])
        else:
            # weights sent to a Ray worker (parlour.training.distributed.
            # ShippedCheckpoint): loaded and verified where the file is
            ckpt = ckpt_io.Checkpoint(Path(path), dict(shipped.manifest), {})
            weights = shipped.policy
        game = envs.make(env_name, raw=True, **(env_options or {})).game
        ckpt_io.check_compatible(
            ckpt,
            env_name,
            envs.game_options(env_name, env_options),
            game.observation_size,
            game.num_actions,
        )
        policy = NumpyPolicy(weights, ckpt.manifest.get("activation", "tanh"))
        spec = f"ckpt:{path}" + ("" if deterministic else "@sample")
        super().__init__(policy, spec, deterministic=deterministic, seed=seed)
        self.step = ckpt.step
