"""Training backends: what one learning library does inside a Parlour training run.

`training.train` runs every backend the same way: the run directory and its lifecycle
(`training.rundir`), the warm start's teacher games (`training.imitation`), the opponent
pool (`training.selfplay`) and the evaluation schedule (`training.evaluation`) are
shared. A backend owns only the learner: its network and optimiser, how it collects
experience and how it updates on it. The loop it is driven by::

    backend.begin(total_timesteps)
    while backend.steps < total_timesteps:
        backend.begin_rollout()      # then: snapshots, checkpoints, evaluations
        if not backend.collect():
            break
        backend.update()

A new backend is a module here with a class implementing `Backend`, and one line in
`BACKENDS`; ``parlour train --backend NAME`` then picks it. A module-level
``check_config(config)`` refuses configs the backend cannot run before anything is
written (`check_config`); a backend with options of its own (rllib:
``num_env_runners``, ``address``) takes them as keywords and names a function in
`OPTION_CHECKS` that checks them before anything is written (`check_options`).
``sb3`` is sb3-contrib's MaskablePPO on the scalar envs, ``batch`` a compact PPO on the
batched engines (`training.backends.batch`; MMD, NFSP or DMC by the config's ``algo``,
`training.algos`), ``rllib`` RLlib's PPO on Ray env runners (`training.backends.rllib`).
The checkpoint format is the backend's own (`checkpoint_tensors`, `restore`); the
exported weights are always a `NumpyPolicy`, which is what the opponent pool, the
evaluations and ``ckpt:`` agents play with.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...envs.core.engine import Game
    from ..checkpoint import Checkpoint
    from ..config import TrainConfig
    from ..imitation import FitReport
    from ..policy import NumpyPolicy
    from ..selfplay import OpponentPool

# name -> "module:class", imported only when chosen (a backend may pull heavy modules)
BACKENDS: dict[str, str] = {
    "sb3": "parlour.training.backends.sb3:SB3Backend",
    "batch": "parlour.training.backends.batch:BatchBackend",
    "rllib": "parlour.training.backends.rllib:RLlibBackend",
}
# name -> "module:function(config, options)" checking a backend's options (and what it
# needs installed or reachable) before anything is written; ValueError, one line
OPTION_CHECKS: dict[str, str] = {
    "rllib": "parlour.training.backends.rllib:check_options",
}
DEFAULT = "sb3"


class Backend(Protocol):
    """What a training backend implements (`training.backends.sb3.SB3Backend` is the
    reference). It is built with ``(config, pool, run_dir, on_step)``: ``pool`` is the
    shared `OpponentPool` its self-play envs draw opponents from, ``run_dir`` the run
    directory (for the backend's own logs), and ``on_step(steps)`` is called after
    every learner decision collected (the progress bar)."""

    method: str
    """a few words for the learning-curve title, e.g. "self-play MaskablePPO\""""
    game: Game
    """the engine of the env trained on (its sizes go into the checkpoint manifest)"""
    rollout_steps: int
    """learner decisions collected by one `collect`"""

    @property
    def steps(self) -> int:
        """Learner decisions trained on so far (restored by `restore`)."""
        ...

    def imitate(self, data: Any, progress: Callable[[int, float], None]) -> FitReport:
        """The warm start's fit: train the policy (and value) heads on the teacher's
        decisions ``data`` (`training.imitation.Demonstrations`);
        ``progress(epoch, loss)`` after each epoch."""
        ...

    def begin(
        self, total_timesteps: int, on_episode: Callable[[str, float], None]
    ) -> None:
        """Get ready to train up to ``total_timesteps`` steps in all (counting those
        already trained); ``on_episode(opponent_kind, final_reward)`` is to be called
        at the end of every self-play episode."""
        ...

    def begin_rollout(self) -> None:
        """Called at every rollout boundary, before snapshots, checkpoints and
        evaluations: finish what belongs to the last update (so that a checkpoint
        holds it) and remember the weights and optimiser state that `rewind` puts
        back."""
        ...

    def collect(self) -> bool:
        """Collect one rollout (`rollout_steps` learner decisions) with the current
        policy against the pool; False stops training."""
        ...

    def update(self) -> None:
        """Update the policy on the rollout just collected."""
        ...

    def rewind(self) -> int:
        """After an interrupt (which may come in the middle of an update): put back
        the state remembered by the last `begin_rollout` and return its step count.
        Only whole rollouts count; the one in progress is collected again on
        resume."""
        ...

    def export_weights(self) -> NumpyPolicy:
        """The current policy's actor as numpy weights (greedy play, snapshots)."""
        ...

    def checkpoint_tensors(self, snapshots: list[NumpyPolicy]) -> dict[str, Any]:
        """Everything `restore` needs, as tensors for `training.checkpoint.save`:
        the policy, the optimiser state and the pool's ``snapshots``."""
        ...

    def restore(self, saved: Checkpoint) -> list[tuple[str, NumpyPolicy]]:
        """Continue from a checkpoint of this backend: load the weights, optimiser
        state and step count; return the snapshots (label, weights) for the pool.
        `training.checkpoint.CheckpointError` when it does not fit the config."""
        ...

    def log(self, key: str, value: float) -> None:
        """Record a scalar in the backend's log (e.g. TensorBoard)."""
        ...

    def close(self) -> None:
        """Release the envs."""
        ...


def names() -> list[str]:
    """The backends ``--backend`` accepts."""
    return sorted(BACKENDS)


def check(name: str) -> None:
    """ValueError (one line) for an unknown backend name."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r} (backends: {', '.join(names())})")


def check_config(name: str, config: TrainConfig) -> None:
    """ValueError (one line) for a config the backend ``name`` cannot run: the
    backend module's own ``check_config(config)``, where it has one (the batch backend
    needs a batched engine and refuses scalar bots in its rollout); learner_partners
    is sb3's alone, the algorithms other than ppo the batch backend's. Called before
    anything is written."""
    check(name)
    if config.algo != "ppo" and name != "batch":
        raise ValueError(
            f"algo={config.algo} runs on the batched engines only: use --backend batch "
            f"(--backend {name} trains ppo)"
        )
    if config.learner_partners and name != "sb3":
        raise ValueError(
            "learner_partners (the learner's snapshot as its partners) is played by "
            "the sb3 backend's self-play envs only: use --backend sb3"
        )
    module = importlib.import_module(BACKENDS[name].partition(":")[0])
    checker = getattr(module, "check_config", None)
    if checker is not None:
        checker(config)


def check_options(
    name: str, config: TrainConfig, options: Mapping[str, Any] | None = None
) -> None:
    """ValueError (one line) for backend options (``--num-env-runners``,
    ``--address``) the backend ``name`` does not take or cannot run with, and for
    what it needs that is missing (e.g. Ray for rllib). Nothing is started."""
    check(name)
    options = dict(options or {})
    if name not in OPTION_CHECKS:
        if options:
            flags = ", ".join("--" + k.replace("_", "-") for k in sorted(options))
            raise ValueError(f"{flags}: not an option of --backend {name}")
        return
    module, _, func = OPTION_CHECKS[name].partition(":")
    getattr(importlib.import_module(module), func)(config, options)


def make(
    name: str,
    config: TrainConfig,
    pool: OpponentPool,
    run_dir: Path,
    on_step: Callable[[int], None],
    options: Mapping[str, Any] | None = None,
) -> Backend:
    """Build the backend ``name`` for a run (`check` it and `check_options` first);
    ``options`` are the backend's own keywords."""
    check(name)
    module, _, cls = BACKENDS[name].partition(":")
    return getattr(importlib.import_module(module), cls)(
        config, pool, run_dir, on_step, **dict(options or {})
    )


__all__ = [
    "BACKENDS",
    "DEFAULT",
    "OPTION_CHECKS",
    "Backend",
    "check",
    "check_config",
    "check_options",
    "make",
    "names",
]
