"""The ``ckpt:PATH`` agent: a trained policy loaded from a checkpoint, played greedily.

``ckpt:PATH`` accepts a checkpoint directory, its manifest, or a run directory (its
latest checkpoint). ``ckpt:PATH@sample`` samples from the policy instead of taking its
best move. In an env whose record renames its suits (``suit_renaming``: German and
Honeymoon Whist), ``ckpt:PATH@sym`` plays the policy averaged over the 24 renamings of
the four suits (`parlour.training.policy.SuitAverage`) and ``ckpt:PATH@plain`` the
network alone; without either, the checkpoint's manifest says which (its
``suit_average`` field, set on the shipped German Whist models), and the network alone
where it says nothing. A checkpoint made for another env or other options is refused
with a message saying so. On a Ray worker the agent is built from the weights the
driver shipped (``shipped``, with the manifest), never from a file the worker would
have to reach.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..training import checkpoint as ckpt_io
from ..training.policy import (
    PolicyAgent,
    SuitAverage,
    make_policy,
    suit_renamings,
)
from .spec import policy_suffix


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
        suit_average: bool | None = None,
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
        policy = make_policy(
            weights,
            ckpt.manifest.get("activation", "tanh"),
            env_name,
            game,
            canonical_form=ckpt.canonical_form,
        )
        averaged = None
        if ckpt.suit_average if suit_average is None else suit_average:
            averaged = SuitAverage(policy, suit_renamings(env_name, game))
        spec = f"ckpt:{path}" + policy_suffix(suit_average, not deterministic)
        super().__init__(
            policy, spec, deterministic=deterministic, seed=seed, suit_average=averaged
        )
        self.step = ckpt.step
