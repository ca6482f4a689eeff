"""The sb3 backend: sb3-contrib's MaskablePPO over `SelfPlayEnv`s in one process.

`collect` and `update` are the two halves of ``MaskablePPO.learn``'s loop, called in
the same order with the same arguments, so a run is the run ``learn`` would make.
Checkpoints hold SB3's own state dicts (policy, optimiser) and the pool's snapshots in
SB3's key names. With ``exact_aux_fraction`` > 0 the solver-labelled decisions of a
rollout get one pass of the set loss at the next rollout boundary, before the
checkpoint there (docs/training.md).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv

from ... import agents as agents_mod
from .. import checkpoint as ckpt_io
from .. import imitation
from ..config import TrainConfig
from ..policy import NumpyPolicy, saved_snapshots
from ..selfplay import OpponentPool, SelfPlayEnv


class MaskedMlpPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's ``MlpPolicy`` (the same network, the same initialisation) with
    the masked log-probabilities `training.imitation.ImitationPolicy` asks for."""

    def masked_log_probs(self, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """Log-probabilities ``(N, A)`` of the masked policy (`ImitationPolicy`)."""
        return self.get_distribution(obs, action_masks=masks).distribution.logits


class _StepCallback(BaseCallback):
    """Tells the run of every learner decision collected."""

    def __init__(self, on_step: Callable[[int], None]) -> None:
        super().__init__()
        self.on_step_hook = on_step

    def _on_step(self) -> bool:
        self.on_step_hook(self.num_timesteps)
        return True


class SB3Backend:
    """MaskablePPO with an MLP policy (`training.backends.Backend`)."""

    method = "self-play MaskablePPO"

    def __init__(
        self,
        config: TrainConfig,
        pool: OpponentPool,
        run_dir: Path,
        on_step: Callable[[int], None],
    ) -> None:
        self.config = config
        labeler = (
            agents_mod.exact_moves(config.env)
            if config.exact_aux_fraction > 0
            else None
        )

        def make_env(i: int):
            return lambda: SelfPlayEnv(
                config.env,
                config.env_options,
                pool=pool,
                seed=config.seed * 1000 + i,
                labeler=labeler,
                label_fraction=config.exact_aux_fraction,
                reward_scale=config.reward_scale,
            )

        self.vec_env = DummyVecEnv([make_env(i) for i in range(config.n_envs)])
        activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[config.activation]
        self.model = MaskablePPO(
            MaskedMlpPolicy,
            self.vec_env,
            learning_rate=config.learning_rate,
            n_steps=config.n_steps,
            batch_size=config.batch_size,
            n_epochs=config.n_epochs,
            gamma=config.gamma,
            gae_lambda=config.gae_lambda,
            clip_range=config.clip_range,
            ent_coef=config.ent_coef,
            vf_coef=config.vf_coef,
            max_grad_norm=config.max_grad_norm,
            policy_kwargs={
                "net_arch": list(config.net_arch),
                "activation_fn": activation,
            },
            tensorboard_log=(
                str(run_dir / "tensorboard") if config.tensorboard else None
            ),
            seed=config.seed,
            verbose=0,
            device="cpu",
        )
        self.game = self.vec_env.envs[0].game
        self.rollout_steps = config.n_envs * config.n_steps
        self._callback = _StepCallback(on_step)
        self._iteration = 0
        self._total = 0
        self._rollout_start_steps = 0
        self._saved_state: tuple[dict, dict] | None = None
        self._aux_rng = np.random.default_rng(config.seed + 17)

    @property
    def steps(self) -> int:
        return int(self.model.num_timesteps)

    def imitate(self, data: Any, progress: Callable[[int, float], None]):
        return imitation.fit_warm_start(
            self.model.policy, data, self.config, progress
        )

    def begin(
        self, total_timesteps: int, on_episode: Callable[[str, float], None]
    ) -> None:
        model = self.model
        # what MaskablePPO.learn does before its loop
        self._total, self._callback = model._setup_learn(
            total_timesteps - model.num_timesteps,
            self._callback,
            model.num_timesteps == 0,
            "ppo",
            False,
        )
        self._callback.on_training_start({}, {})
        self._rollout_start_steps = self.steps
        for env in self.vec_env.envs:
            env.unwrapped.on_episode = on_episode

    def begin_rollout(self) -> None:
        self._rollout_start_steps = self.steps
        self._exact_pass()
        self._saved_state = (
            copy.deepcopy(self.model.policy.state_dict()),
            copy.deepcopy(self.model.policy.optimizer.state_dict()),
        )

    def collect(self) -> bool:
        model = self.model
        return model.collect_rollouts(
            model.env, self._callback, model.rollout_buffer, model.n_steps, True
        )

    def update(self) -> None:
        model = self.model
        self._iteration += 1
        model._update_current_progress_remaining(model.num_timesteps, self._total)
        model.dump_logs(self._iteration)
        model.train()

    def rewind(self) -> int:
        if self._saved_state is not None:
            self.model.policy.load_state_dict(self._saved_state[0])
            self.model.policy.optimizer.load_state_dict(self._saved_state[1])
        return self._rollout_start_steps

    def export_weights(self) -> NumpyPolicy:
        return NumpyPolicy(
            ckpt_io.to_numpy(self.model.policy.state_dict()), self.config.activation
        )

    def checkpoint_tensors(self, snapshots: list[NumpyPolicy]) -> dict[str, Any]:
        return {
            "policy": self.model.policy.state_dict(),
            "optimizer": self.model.policy.optimizer.state_dict(),
            "snapshots": [s.tensors() for s in snapshots],
        }

    def restore(self, saved: ckpt_io.Checkpoint) -> list[tuple[str, NumpyPolicy]]:
        model = self.model
        try:
            model.policy.load_state_dict(saved.tensors["policy"])
            model.policy.optimizer.load_state_dict(saved.tensors["optimizer"])
        except (KeyError, RuntimeError, ValueError) as err:
            raise ckpt_io.CheckpointError(
                f"checkpoint {saved.path} does not fit this config's network: {err}"
            ) from None
        model.num_timesteps = saved.step
        model._num_timesteps_at_start = saved.step
        return saved_snapshots(saved)

    def log(self, key: str, value: float) -> None:
        self.model.logger.record(key, value)

    def close(self) -> None:
        self.vec_env.close()

    def _exact_pass(self) -> None:
        """After a PPO update: one pass of the set loss over the learner's decisions
        that the solver labelled during the last rollout (``exact_aux_fraction``)."""
        rows = []
        for env in self.vec_env.envs:
            rows += env.unwrapped.labelled
            env.unwrapped.labelled = []
        if not rows:
            return
        n_actions = rows[0][1].shape[0]
        targets = np.zeros((len(rows), n_actions), dtype=bool)
        for i, (_, _, best) in enumerate(rows):
            targets[i, list(best)] = True
        loss = imitation.policy_pass(
            self.model.policy,
            self.model.policy.optimizer,
            np.stack([r[0] for r in rows]),
            np.stack([r[1] for r in rows]),
            targets,
            self.config.batch_size,
            self._aux_rng,
        )
        self.log("train/exact_aux_loss", loss)
        self.log("train/exact_aux_decisions", len(rows))
