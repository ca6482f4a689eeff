"""The learning algorithms of the batch backend (``parlour train ENV --backend batch
--algo NAME``, or the config key ``algo``), each a module over the batched self-play
rollout (`training.batch_selfplay`) and the one run-directory contract
(`training.backends.batch.BatchLearner`):

- ``ppo``: PPO, `training.backends.batch.BatchBackend`;
- ``mmd``: magnetic mirror descent (Sokota et al., ICLR 2023), `training.algos.mmd`;
- ``nfsp``: neural fictitious self-play (Heinrich & Silver 2016), `training.algos.nfsp`;
- ``dmc``: Deep Monte-Carlo (Zha et al., DouZero, ICML 2021), `training.algos.dmc`.

Every checkpoint's ``policy`` is the network that plays, under SB3's actor names, so
``ckpt:PATH``, ``parlour eval`` and the league load any of them: PPO's and MMD's policy,
NFSP's average policy, DMC's Q-network (greedy play is the argmax of the masked
Q-values). docs/algorithms.md describes each with its paper and hyperparameters.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import TrainConfig

# name -> "module:class", imported only when chosen
ALGOS: dict[str, str] = {
    "ppo": "parlour.training.backends.batch:BatchBackend",
    "mmd": "parlour.training.algos.mmd:MMDBackend",
    "nfsp": "parlour.training.algos.nfsp:NFSPBackend",
    "dmc": "parlour.training.algos.dmc:DMCBackend",
}
DEFAULT = "ppo"
# the algorithms whose network is an actor-critic: the warm start fits it
WARM_STARTS = ("ppo", "mmd")


def learner_class(name: str) -> type:
    """The batch backend class of the algorithm ``name``."""
    if name not in ALGOS:
        raise ValueError(f"unknown algo {name!r} (algos: {', '.join(ALGOS)})")
    module, _, cls = ALGOS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def check_config(config: TrainConfig) -> None:
    """One-line ValueErrors for a config the chosen algorithm cannot run (before
    anything is written): a warm start for an algorithm without an actor-critic."""
    if config.warm_start and config.algo not in WARM_STARTS:
        raise ValueError(
            f"warm_start fits an actor-critic, which algo={config.algo} does not "
            f"have: set warm_start='' (the warm start is {' and '.join(WARM_STARTS)}'s)"
        )


__all__ = ["ALGOS", "DEFAULT", "WARM_STARTS", "check_config", "learner_class"]
