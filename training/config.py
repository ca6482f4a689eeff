"""The training config: `TrainConfig`, its checks, presets and ``--set`` overrides.

Every backend (`training.backends`) reads the same config; ``parlour train ENV`` reads
``configs/ENV.yaml`` (or ``--config``, or a ``--preset``) and applies ``key=value``
overrides before anything is written (docs/training.md). The shipped configs are the
package data of ``parlour.configs`` (the repository's ``configs/`` folder), so an
installed wheel finds every preset.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from .. import agents as agents_mod
from .. import envs

# the shipped configs: configs/ in the repository, parlour/configs/ in a wheel
CONFIG_DIR = Path(str(resources.files("parlour.configs")))


@dataclass
class TrainConfig:
    """Everything a training run depends on; every field can be set with
    ``--set key=value``."""

    env: str = "german_whist_v0"
    """registered env name"""
    env_options: dict[str, Any] = field(default_factory=dict)
    """options passed to the env (e.g. variant)"""
    total_timesteps: int = 200_000
    """learner decisions to train for"""
    seed: int = 0
    """seed for the deals, the opponents and torch"""
    n_envs: int = 4
    """self-play envs stepped together (one process)"""
    net_arch: list[int] = field(default_factory=lambda: [128, 128])
    """hidden layer sizes of the policy and value networks"""
    activation: str = "tanh"
    """hidden activation: tanh or relu"""
    learning_rate: float = 3e-4
    n_steps: int = 512
    """rollout length per env before each update"""
    batch_size: int = 256
    n_epochs: int = 4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    reward_scale: float = 1.0
    """the learner's rewards (and the warm start's value targets) are multiplied by
    this: in games scored in points (Herzeln, Fünfzehnern) a value loss in points² would
    otherwise swamp the policy's share of the clipped gradient; evaluations and the
    logged returns stay in points"""
    opponents: dict[str, float] = field(
        default_factory=lambda: {"self": 0.5, "heuristic": 0.3, "random": 0.2}
    )
    """opponent pool mix: 'self' (frozen snapshots of the learner) and agent specs"""
    learner_partners: bool = False
    """in partnership games, the learner's partners play the newest frozen snapshot
    of the learner instead of the drawn opponent, so the learner plays a whole side
    (``parlour exploit``: a best response for one side); the sb3 backend only"""
    snapshot_every: int = 20_000
    """steps between frozen snapshots added to the pool"""
    max_snapshots: int = 10
    checkpoint_every: int = 20_000
    eval_every: int = 20_000
    eval_games: int = 200
    """games per baseline at each evaluation (duplicate deals)"""
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "heuristic"])
    tensorboard: bool = True
    """write TensorBoard logs to RUN_DIR/tensorboard"""
    torch_threads: int = 1
    """threads of torch's CPU kernels in the training process: 1 is about 3x faster
    for the sb3 backend's small minibatches; the batch backend's large ones gain from
    a second thread where a core is free"""
    warm_start: str = ""
    """teacher agent spec to imitate before self-play ('' = none; e.g. heuristic)"""
    warm_start_games: int = 2000
    """games of the teacher against itself to learn from"""
    warm_start_epochs: int = 10
    """passes over the teacher's decisions"""
    warm_start_noise: float = 0.1
    """chance of a random move (the teacher's move stays the label)"""
    warm_start_lr: float = 1e-3
    """Adam learning rate of the imitation phase"""
    warm_start_workers: int = 1
    """processes collecting the teacher's games"""
    warm_start_exact: bool = False
    """label the positions the game's exact solver values with every optimal move
    (German Whist: stage 2) instead of the teacher's move (like every warm_start_* key,
    inert without a warm_start teacher)"""
    exact_aux_fraction: float = 0.0
    """during self-play, this fraction of the learner's decisions in positions the
    game's exact solver values (German Whist: stage 2) is labelled with every optimal
    move, and after each PPO update the policy takes one pass over them (the
    warm start's set loss, PPO's optimiser); 0 = off"""
    algo: str = "ppo"
    """the learning algorithm of ``--backend batch`` (docs/algorithms.md): ppo, mmd
    (magnetic mirror descent), nfsp (neural fictitious self-play) or dmc (Deep
    Monte-Carlo); the sb3 and rllib backends train ppo only"""
    mmd_alpha: float = 0.05
    """MMD: weight of the reverse KL ``KL(policy || magnet)`` in the loss (Sokota et
    al.'s regularisation temperature alpha)"""
    mmd_magnet_every: int = 10
    """MMD: updates between two moves of the magnet toward the current policy"""
    mmd_magnet_step: float = 1.0
    """MMD: how far the magnet moves each time, in parameter space: 1 makes it a copy
    of the current policy, 0.1 a tenth of the way"""
    epsilon: float = 0.06
    """NFSP and DMC: the chance of a uniform legal action in epsilon-greedy play at
    the start of the run; it falls linearly to ``epsilon_end`` at total_timesteps"""
    epsilon_end: float = 0.0
    """NFSP and DMC: epsilon at the end of the run"""
    nfsp_eta: float = 0.1
    """NFSP: the anticipatory parameter, the chance that a game's learner plays its
    best response (epsilon-greedy Q) rather than its average policy"""
    nfsp_sl_learning_rate: float = 0.001
    """NFSP: Adam learning rate of the average policy's supervised fit
    (``learning_rate`` is the best response's)"""
    replay_size: int = 100_000
    """NFSP: transitions the best response's circular replay buffer holds"""
    reservoir_size: int = 200_000
    """NFSP: best-response decisions the average policy's reservoir holds"""
    target_update_every: int = 10
    """NFSP: gradient steps between copies of the Q-network to its target network"""

    def validate(self) -> None:
        """Raise ValueError for an inconsistent config."""
        envs.game_options(self.env, self.env_options)  # unknown env or option
        positive = (
            "total_timesteps",
            "n_envs",
            "n_steps",
            "batch_size",
            "n_epochs",
            "snapshot_every",
            "max_snapshots",
            "checkpoint_every",
            "eval_every",
            "eval_games",
            "warm_start_games",
            "warm_start_epochs",
            "warm_start_workers",
            "torch_threads",
        )
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.activation not in ("tanh", "relu"):
            raise ValueError(
                f"activation must be tanh or relu, got {self.activation!r}"
            )
        if not self.net_arch or any(
            not isinstance(h, int) or h < 1 for h in self.net_arch
        ):
            raise ValueError(
                f"net_arch must be a list of positive integers, got {self.net_arch}"
            )
        if not 0 < self.gamma <= 1 or not 0 < self.gae_lambda <= 1:
            raise ValueError("gamma and gae_lambda must lie in (0, 1]")
        if self.learning_rate <= 0:
            raise ValueError("learning_rate must be positive")
        self._validate_ppo()
        self._validate_algos()
        self._validate_opponents()
        if not 0 <= self.warm_start_noise < 1:
            raise ValueError("warm_start_noise must lie in [0, 1)")
        if self.warm_start_lr <= 0:
            raise ValueError("warm_start_lr must be positive")
        if self.warm_start:
            try:
                agents_mod.make(
                    self.warm_start, self.env, seed=0, env_options=self.env_options
                )
            except ValueError as err:
                raise ValueError(f"warm_start: {err}") from None
        if not 0 <= self.exact_aux_fraction <= 1:
            raise ValueError(
                f"exact_aux_fraction must lie in [0, 1], got {self.exact_aux_fraction}"
            )
        for key, uses_labels in (
            ("exact_aux_fraction", self.exact_aux_fraction > 0),
            ("warm_start_exact", bool(self.warm_start) and self.warm_start_exact),
        ):
            if uses_labels:
                try:
                    agents_mod.exact_moves(self.env)
                except ValueError as err:
                    raise ValueError(f"{key}: {err}") from None

    def _validate_ppo(self) -> None:
        rollout = self.n_envs * self.n_steps
        if not 0 < self.clip_range <= 1:
            raise ValueError(f"clip_range must lie in (0, 1], got {self.clip_range}")
        for name in ("ent_coef", "vf_coef"):
            value = getattr(self, name)
            if not 0 <= value < math.inf:
                raise ValueError(f"{name} must be >= 0, got {value}")
        if not 0 < self.reward_scale < math.inf:
            raise ValueError(f"reward_scale must be positive, got {self.reward_scale}")
        if not 0 < self.max_grad_norm < math.inf:
            raise ValueError(
                f"max_grad_norm must be positive, got {self.max_grad_norm}"
            )
        if self.batch_size > rollout:
            raise ValueError(
                f"batch_size {self.batch_size} is larger than a rollout "
                f"(n_envs × n_steps = {rollout})"
            )
        if rollout > self.total_timesteps:
            raise ValueError(
                f"one rollout (n_envs × n_steps = {rollout}) is larger than the "
                f"budget total_timesteps={self.total_timesteps}"
            )

    def _validate_algos(self) -> None:
        from .algos import ALGOS

        if self.algo not in ALGOS:
            raise ValueError(
                f"algo must be one of {', '.join(ALGOS)}, got {self.algo!r}"
            )
        for name in ("mmd_magnet_every", "replay_size", "reservoir_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if (
            not isinstance(self.target_update_every, int)
            or self.target_update_every < 1
        ):
            raise ValueError(
                "target_update_every must be a positive integer, got "
                f"{self.target_update_every!r}"
            )
        if not 0 <= self.mmd_alpha < math.inf:
            raise ValueError(f"mmd_alpha must be >= 0, got {self.mmd_alpha}")
        for name, low_open in (
            ("mmd_magnet_step", True),
            ("nfsp_eta", True),
            ("epsilon", False),
            ("epsilon_end", False),
        ):
            value = getattr(self, name)
            if not (0 < value <= 1 if low_open else 0 <= value <= 1):
                interval = "(0, 1]" if low_open else "[0, 1]"
                raise ValueError(f"{name} must lie in {interval}, got {value}")
        if not 0 < self.nfsp_sl_learning_rate < math.inf:
            raise ValueError(
                "nfsp_sl_learning_rate must be positive, got "
                f"{self.nfsp_sl_learning_rate}"
            )
        if self.algo == "nfsp":
            for name in ("replay_size", "reservoir_size"):
                if getattr(self, name) < self.batch_size:
                    raise ValueError(
                        f"{name} {getattr(self, name)} is smaller than a minibatch "
                        f"(batch_size = {self.batch_size})"
                    )

    def _validate_opponents(self) -> None:
        if not self.opponents:
            raise ValueError("opponents must name at least one opponent kind")
        for kind, weight in self.opponents.items():
            if (
                not isinstance(weight, int | float)
                or isinstance(weight, bool)
                or not 0 <= weight < math.inf
            ):
                raise ValueError(
                    f"opponents.{kind} must be a weight >= 0, got {weight!r}"
                )
            if kind != "self":
                try:
                    agents_mod.make(
                        kind, self.env, seed=0, env_options=self.env_options
                    )
                except ValueError as err:
                    raise ValueError(f"opponents.{kind}: {err}") from None
        if sum(self.opponents.values()) <= 0:
            raise ValueError("opponents: the weights must not all be 0")
        if not self.eval_opponents:
            raise ValueError("eval_opponents must name at least one agent spec")
        for spec in self.eval_opponents:
            try:
                agents_mod.make(spec, self.env, seed=0, env_options=self.env_options)
            except ValueError as err:
                raise ValueError(f"eval_opponents: {err}") from None


def _field_types() -> dict[str, Any]:
    return {f.name: f for f in dataclasses.fields(TrainConfig)}


def presets(env: str) -> list[str]:
    """The named presets of an env: ``configs/ENV.NAME.yaml``."""
    return sorted(p.name[len(env) + 1 : -5] for p in CONFIG_DIR.glob(f"{env}.*.yaml"))


def load_config(
    path: str | Path | None = None,
    env: str | None = None,
    overrides: Sequence[str] = (),
    preset: str | None = None,
) -> TrainConfig:
    """The config from a YAML file (default ``configs/ENV.yaml`` when it exists, or
    ``configs/ENV.PRESET.yaml`` for a named ``preset``), with ``key=value`` overrides;
    dotted keys reach into dicts (``env_options.variant=honeymoon``)."""
    data: dict[str, Any] = {}
    if preset is not None:
        if path is not None or env is None:
            raise ValueError("a preset needs the env and no --config file")
        if preset not in presets(env):
            known = ", ".join(presets(env)) or "none"
            raise ValueError(f"no preset {preset!r} for {env} (presets: {known})")
        path = CONFIG_DIR / f"{env}.{preset}.yaml"
    if path is None and env is not None and (CONFIG_DIR / f"{env}.yaml").is_file():
        path = CONFIG_DIR / f"{env}.yaml"
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"config file {path} does not exist")
        try:
            loaded = yaml.safe_load(p.read_text()) or {}
        except yaml.YAMLError as err:
            raise ValueError(f"config file {path} is not valid YAML: {err}") from None
        if not isinstance(loaded, dict):
            raise ValueError(f"config file {path} must hold a mapping of settings")
        data.update(loaded)
    if env is not None:
        if "env" in data and data["env"] != env:
            raise ValueError(f"config {path} is for {data['env']}, not {env}")
        data["env"] = env
    apply_overrides(data, overrides)
    return config_from_dict(data)


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> None:
    """Apply ``key=value`` overrides to a config mapping in place (values read as
    YAML; dotted keys reach into dicts)."""
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"bad --set {item!r}: write key=value")
        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError:
            parsed = value
        target = data
        *parents, leaf = key.split(".")
        for part in parents:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise ValueError(f"bad --set {item!r}: {part} is not a mapping")
        target[leaf] = parsed


def config_from_dict(data: Mapping[str, Any]) -> TrainConfig:
    """Build and validate a config, rejecting unknown keys and wrong types."""
    fields = _field_types()
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ValueError(f"unknown config key(s) {unknown}; known: {sorted(fields)}")
    kwargs = {}
    for key, value in data.items():
        default = getattr(TrainConfig(), key)
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, float):
            if isinstance(value, str):  # YAML 1.1 reads "1e-3" as a string
                try:
                    value = float(value)
                except ValueError:
                    pass
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            value = float(value) if ok else value
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, type(default))
        if not ok:
            raise ValueError(
                f"config key {key!r} must be {type(default).__name__}, got {value!r}"
            )
        kwargs[key] = value
    config = TrainConfig(**kwargs)
    config.validate()
    return config
