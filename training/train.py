"""Self-play training with sb3-contrib's MaskablePPO: one readable file, as cleanrl
writes them.

``parlour train ENV`` reads ``configs/ENV.yaml`` (or ``--config``, or a ``--preset``),
applies ``--set key=value`` overrides, checks everything, saves the resolved config in
the run directory and trains a learner against a pool of opponents
(`training.selfplay`), after an optional warm start by imitation (`training.imitation`).
Every ``checkpoint_every`` steps it writes an atomic checkpoint (`training.checkpoint`);
at step 0, every ``eval_every`` steps and at the end it plays the greedy learner against
the baseline bots on duplicate deals and appends the results to ``evaluations.csv``; at
the end it draws ``learning_curve.png``. The run's phase (teacher games, fit, self-play,
done) and its time are kept in ``state.json``: Ctrl-C in any phase keeps what is
finished, and ``--resume`` continues from there with the run's stored config, the step
count, optimiser state, snapshot pool and evaluation history intact (docs/training.md).
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import json
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv

from .. import agents as agents_mod
from .. import envs
from . import checkpoint as ckpt_io
from . import imitation
from .arena import run_arena, teams_of
from .policy import NumpyPolicy, PolicyAgent
from .selfplay import OpponentPool, SelfPlayEnv

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"


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
    opponents: dict[str, float] = field(
        default_factory=lambda: {"self": 0.5, "heuristic": 0.3, "random": 0.2}
    )
    """opponent pool mix: 'self' (frozen snapshots of the learner) and agent specs"""
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


# --- the run --------------------------------------------------------------------------
STATE = "state.json"
WARM_START_DIR = "warm_start"
# The phases of a run, in order; state.json names the one a run is in (or stopped in).
PHASES = ("teacher games", "fit", "self-play", "done")
# Keys a resumed run keeps: its checkpoints' network and its stored teacher games were
# made with them.
FROZEN_ON_RESUME = (
    "env",
    "env_options",
    "seed",
    "net_arch",
    "activation",
    "warm_start",
    "warm_start_games",
    "warm_start_noise",
    "warm_start_exact",
)


@dataclass
class TrainResult:
    run_dir: Path
    checkpoint: Path | None  # None when interrupted before the first checkpoint
    steps: int
    interrupted: bool
    evaluations: list[dict[str, Any]]
    plot: Path | None
    seconds: float
    """time spent on the run, summed over every session that worked on it"""
    phase: str = "done"
    """the phase the run stopped in (`PHASES`)"""
    session_seconds: float = 0.0
    """time spent by this call"""
    teacher_games: int = 0
    """teacher games kept in the run directory"""
    phase_seconds: dict[str, float] = field(default_factory=dict)
    """seconds spent in each phase (evaluations apart), over every session"""


def default_run_dir(config: TrainConfig) -> Path:
    """``runs/ENV-VARIANT-seedS`` (reproducible: the same config names the same
    directory)."""
    tag = "-".join(str(v) for _, v in sorted(config.env_options.items()))
    name = f"{config.env}" + (f"-{tag}" if tag else "") + f"-seed{config.seed}"
    return Path("runs") / name


def run_state(run_dir: str | Path) -> dict[str, Any] | None:
    """The phase a run directory's run is in and the seconds spent on it so far; None
    when the directory holds no run. `CheckpointError` for a corrupt state file."""
    run_dir = Path(run_dir)
    path = run_dir / STATE
    if path.is_file():
        try:
            data = json.loads(path.read_text())
        except (ValueError, OSError) as err:
            raise ckpt_io.CheckpointError(f"{path} is corrupt: {err}") from None
        elapsed = data.get("elapsed_s") if isinstance(data, dict) else None
        if (
            not isinstance(data, dict)
            or data.get("phase") not in PHASES
            or not isinstance(elapsed, int | float)
            or isinstance(elapsed, bool)
        ):
            raise ckpt_io.CheckpointError(
                f"{path} is corrupt: expected {{'phase': one of {list(PHASES)}, "
                "'elapsed_s': seconds}"
            )
        return data
    if (run_dir / ckpt_io.LATEST).is_file():  # a run written before state.json
        return {"phase": "self-play", "elapsed_s": 0.0}
    return None


def stored_config(run_dir: str | Path) -> TrainConfig:
    """The config a run directory's run was started with (``config.json``)."""
    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise ValueError(f"{run_dir} has no config.json: not a Parlour run directory")
    try:
        data = json.loads(path.read_text())
    except (ValueError, OSError) as err:
        raise ValueError(f"{path} is corrupt: {err}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} is corrupt: expected a mapping of settings")
    try:
        return config_from_dict(data)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def resume_config(
    run_dir: str | Path, overrides: Sequence[str] = ()
) -> tuple[TrainConfig, list[str]]:
    """The config to resume a run with: the stored one, with ``--set`` overrides
    applied on purpose. Returns it and one line per changed key; ValueError for a key
    in `FROZEN_ON_RESUME` (the run's checkpoints or teacher games depend on it)."""
    stored = stored_config(run_dir)
    data = dataclasses.asdict(stored)
    apply_overrides(data, overrides)
    config = config_from_dict(data)
    changes = []
    for f in dataclasses.fields(TrainConfig):
        old, new = getattr(stored, f.name), getattr(config, f.name)
        if old == new:
            continue
        if f.name in FROZEN_ON_RESUME:
            raise ValueError(
                f"--set {f.name}: a resumed run keeps its {f.name} ({old!r}); start a "
                "new run (another --run-dir) to change it"
            )
        changes.append(f"{f.name}: {old!r} -> {new!r}")
    return config, changes


def warm_start_warning(config: TrainConfig) -> str | None:
    """A warning when the warm start's teacher decisions outnumber the self-play
    budget (the teacher games then take most of the run's time and memory), else
    None. Decisions per game are counted on one random game."""
    if not config.warm_start:
        return None
    env = envs.make(config.env, **config.env_options)
    env.reset(seed=config.seed)
    rng = np.random.default_rng(config.seed)
    decisions = 0
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        decisions += 1
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    env.close()
    teacher = config.warm_start_games * decisions
    if teacher <= config.total_timesteps:
        return None
    fits = max(1, config.total_timesteps // max(1, decisions))
    return (
        f"warning: the warm start's {config.warm_start_games:,} teacher games (about "
        f"{teacher:,} decisions) outweigh the {config.total_timesteps:,} self-play "
        "steps and will take most of the run; for a short run use --set "
        f"warm_start_games={fits} (or warm_start='' for none)"
    )


def train(
    config: TrainConfig,
    run_dir: str | Path | None = None,
    resume: bool = False,
    progress: bool = True,
    final_eval: bool = True,
) -> TrainResult:
    """Run (or resume) a training run; returns where everything was written.

    The phases (`PHASES`): the warm start's teacher games (kept in ``RUN_DIR/
    warm_start/`` as they finish), its fit, self-play (checkpoints and evaluations),
    done. Ctrl-C in any phase keeps what is finished and returns an interrupted result;
    ``resume=True`` (or a fresh start with the very config the run was started with)
    continues from the last completed phase. Everything is checked before anything is
    written. ``final_eval=False`` skips the evaluations at step 0 and after the last
    step, leaving only the periodic ones (for timing runs).
    """
    config.validate()
    run_dir = Path(run_dir) if run_dir is not None else default_run_dir(config)
    ckpt_io.check_output_path(run_dir, directory=True, what="run directory")
    state = run_state(run_dir) if run_dir.is_dir() else None
    if state is None:
        if run_dir.is_dir() and any(run_dir.iterdir()):
            raise ValueError(
                f"run directory {run_dir} is not empty and holds no Parlour run: "
                "choose another --run-dir"
            )
        if resume:
            raise ValueError(f"nothing to resume: {run_dir} holds no run")
    else:
        stored = stored_config(run_dir)
        if stored.env != config.env or stored.env_options != config.env_options:
            raise ckpt_io.CheckpointError(
                f"{run_dir} holds a run for {stored.env} {stored.env_options}, not "
                f"{config.env} {config.env_options}"
            )
        if not resume:
            if stored != config:
                raise ValueError(
                    f"run directory {run_dir} is not empty: it holds a run with "
                    "another config; pass --resume to continue it (with its stored "
                    "config), or choose another --run-dir"
                )
            if state["phase"] == "done":
                raise ValueError(
                    f"run directory {run_dir} is not empty: it holds a finished run; "
                    "pass --resume with --set total_timesteps=N to train it further, "
                    "or choose another --run-dir"
                )
            if progress:
                print(f"continuing the interrupted run in {run_dir} (same config)")
        else:
            for key in FROZEN_ON_RESUME:
                if getattr(stored, key) != getattr(config, key):
                    raise ValueError(
                        f"{run_dir} was started with {key}={getattr(stored, key)!r}; "
                        f"a resumed run keeps it (got {getattr(config, key)!r})"
                    )
    # what a resumed run reads back is checked before anything is written
    saved, evaluations = None, []
    if state is not None and state["phase"] in ("self-play", "done"):
        if (run_dir / ckpt_io.LATEST).is_file():  # else killed before the first one
            saved = ckpt_io.load(run_dir)
        evaluations = _read_evaluations(run_dir / "evaluations.csv")
    if progress and (state is None or state["phase"] == "teacher games"):
        warning = warm_start_warning(config)
        if warning:
            print(warning, file=sys.stderr)

    # about 3x faster than the default for small MLPs on this CPU
    torch.set_num_threads(1)
    run_dir.mkdir(parents=True, exist_ok=True)
    removed = ckpt_io.clean_temporary(run_dir) + imitation.clean_temporary(
        run_dir / WARM_START_DIR
    )
    if removed and progress:
        print(f"removed {len(removed)} temporary file(s) left by an interrupted write")
    ckpt_io.write_json_atomic(run_dir / "config.json", dataclasses.asdict(config))
    (run_dir / "config.yaml").write_text(yaml.safe_dump(dataclasses.asdict(config)))
    phase = (
        state["phase"]
        if state is not None
        else ("teacher games" if config.warm_start else "self-play")
    )
    if phase == "done":
        phase = "self-play"  # a finished run trained further, or just re-reported
    session_start = time.time()
    earlier = float(state["elapsed_s"]) if state is not None else 0.0

    def elapsed() -> float:
        return earlier + time.time() - session_start

    # seconds by phase, evaluations apart, over every session
    seconds: dict[str, float] = dict(state.get("phase_seconds", {})) if state else {}
    clock: dict[str, Any] = {"phase": phase, "since": time.time()}

    def mark(now: str) -> None:
        t = time.time()
        key = clock["phase"]
        seconds[key] = seconds.get(key, 0.0) + t - clock["since"]
        clock.update(phase=now, since=t)

    def write_state(now: str) -> None:
        mark(now)
        data = {
            "phase": now,
            "elapsed_s": round(elapsed(), 1),
            "phase_seconds": {k: round(v, 1) for k, v in seconds.items()},
        }
        ckpt_io.write_json_atomic(run_dir / STATE, data)

    write_state(phase)

    game_options = envs.game_options(config.env, config.env_options)
    pool = OpponentPool(
        config.env,
        dict(config.opponents),
        seed=config.seed,
        env_options=config.env_options,
        max_snapshots=config.max_snapshots,
    )

    labeler = (
        agents_mod.exact_moves(config.env) if config.exact_aux_fraction > 0 else None
    )

    def make_env(i: int):
        return lambda: SelfPlayEnv(
            config.env,
            config.env_options,
            pool=pool,
            seed=config.seed * 1000 + i,
            labeler=labeler,
            label_fraction=config.exact_aux_fraction,
        )

    vec_env = DummyVecEnv([make_env(i) for i in range(config.n_envs)])
    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[config.activation]
    model = MaskablePPO(
        "MlpPolicy",
        vec_env,
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
        policy_kwargs={"net_arch": list(config.net_arch), "activation_fn": activation},
        tensorboard_log=str(run_dir / "tensorboard") if config.tensorboard else None,
        seed=config.seed,
        verbose=0,
        device="cpu",
    )
    game = vec_env.envs[0].game
    if saved is not None:
        _restore(model, pool, saved)

    def manifest() -> dict[str, Any]:
        return {
            "env": config.env,
            "env_options": config.env_options,
            "game_options": game_options,
            "observation_size": game.observation_size,
            "num_actions": game.num_actions,
            "net_arch": list(config.net_arch),
            "activation": config.activation,
            "step": int(model.num_timesteps),
            "config": dataclasses.asdict(config),
            "snapshots": [s.spec for s in pool.snapshots],
        }

    def save_checkpoint(step: int | None = None) -> Path:
        steps = int(model.num_timesteps if step is None else step)
        tensors = {
            "policy": model.policy.state_dict(),
            "optimizer": model.policy.optimizer.state_dict(),
            "snapshots": [_numpy_to_torch(s.policy) for s in pool.snapshots],
        }
        data = manifest()
        data["step"] = steps
        data["elapsed_s"] = round(elapsed(), 1)
        path = ckpt_io.save(
            run_dir / "checkpoints" / f"step_{steps:09d}", tensors, data
        )
        ckpt_io.write_json_atomic(
            run_dir / ckpt_io.LATEST, {"checkpoint": str(path.relative_to(run_dir))}
        )
        write_state(clock["phase"])  # the elapsed time, should the process be killed
        return path

    rotations = len(teams_of(game))
    per_opponent = -(-config.eval_games // rotations) * rotations

    def evaluate(steps: int) -> list[dict[str, Any]]:
        mark("evaluation")
        try:
            return _evaluate(steps)
        finally:
            mark("self-play")

    def _evaluate(steps: int) -> list[dict[str, Any]]:
        policy = _actor(model, config.activation)
        rows = []
        from tqdm import tqdm

        with tqdm(
            total=per_opponent * len(config.eval_opponents),
            desc=f"evaluation @ step {steps:,}",
            unit="game",
            leave=False,
            disable=not progress,
            dynamic_ncols=True,
        ) as bar:
            for opponent in config.eval_opponents:
                agent = PolicyAgent(policy, f"learner@{steps}")
                bar.set_postfix_str(f"vs {opponent}", refresh=False)
                result = run_arena(
                    config.env,
                    [agent, opponent],
                    games=config.eval_games,
                    duplicate=True,
                    seed=10_000 + config.seed,
                    env_options=config.env_options,
                    on_game=lambda _: bar.update(1),
                )
                win, score = result.win_rate(), result.mean_score()
                rows.append(
                    {
                        "step": steps,
                        "opponent": opponent,
                        "games": result.games,
                        "win_rate": win.estimate,
                        "win_low": win.low,
                        "win_high": win.high,
                        "mean_score": score.estimate,
                        "score_low": score.low,
                        "score_high": score.high,
                        "elapsed_s": round(elapsed(), 1),
                    }
                )
        # all opponents or none: an interrupted evaluation is redone on resume
        _append_evaluations(run_dir / "evaluations.csv", rows)
        return rows

    def stopped(now: str, path: Path | None, steps: int) -> TrainResult:
        write_state(now)
        vec_env.close()
        return TrainResult(
            run_dir,
            path,
            steps,
            True,
            evaluations,
            None,
            elapsed(),
            now,
            time.time() - session_start,
            imitation.stored_games(run_dir / WARM_START_DIR),
            dict(seconds),
        )

    if phase in ("teacher games", "fit"):
        try:
            report = warm_start(
                model, config, progress, run_dir / WARM_START_DIR, write_state
            )
        except KeyboardInterrupt:
            now = json.loads((run_dir / STATE).read_text())["phase"]
            return stopped(now, None, 0)
        ckpt_io.write_json_atomic(
            run_dir / "warm_start.json",
            {**dataclasses.asdict(report), "seconds": round(elapsed(), 1)},
        )
        pool.add_snapshot(_actor(model, config.activation), "self@warm_start")
        # A checkpoint at step 0, so that --resume after an interrupt never repeats it.
        save_checkpoint(0)
        phase = "self-play"
        write_state(phase)

    callback = _TrainingCallback(
        config,
        pool,
        save_checkpoint,
        evaluate,
        progress,
        evaluations,
        lambda: _actor(model, config.activation),
        start_eval=final_eval,
    )
    remaining = config.total_timesteps - int(model.num_timesteps)
    try:
        if remaining > 0:
            model.learn(
                total_timesteps=remaining,
                callback=callback,
                reset_num_timesteps=model.num_timesteps == 0,
                tb_log_name="ppo",
                progress_bar=False,
            )
    except KeyboardInterrupt:
        callback.close_bar()
        # Only whole rollouts count: the weights as they were at the start of the
        # rollout in progress, which is collected again after --resume.
        callback.restore_rollout_start()
        path = save_checkpoint(callback.rollout_start_steps)
        return stopped("self-play", path, callback.rollout_start_steps)
    callback.close_bar()
    steps = int(model.num_timesteps)
    path = save_checkpoint()
    try:
        if final_eval and not any(r["step"] == steps for r in evaluations):
            evaluations.extend(evaluate(steps))
    except KeyboardInterrupt:
        return stopped("self-play", path, steps)
    plot = plot_learning_curve(evaluations, run_dir / "learning_curve.png", config)
    write_state("done")
    vec_env.close()
    return TrainResult(
        run_dir,
        path,
        steps,
        False,
        evaluations,
        plot,
        elapsed(),
        "done",
        time.time() - session_start,
        imitation.stored_games(run_dir / WARM_START_DIR),
        dict(seconds),
    )


def warm_start(
    model,
    config: TrainConfig,
    progress: bool,
    store: Path | None = None,
    phase: Callable[[str], None] | None = None,
) -> imitation.FitReport:
    """Imitation before self-play (`training.imitation`): collect the teacher's games
    (kept in ``store`` as they finish) and fit the policy and value heads to them.
    ``phase(name)`` is told when the fit begins."""
    from tqdm import tqdm

    with tqdm(
        total=config.warm_start_games,
        unit="game",
        desc=f"teacher games ({config.warm_start})",
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        data = imitation.collect(
            config.env,
            config.env_options,
            config.warm_start,
            config.warm_start_games,
            seed=config.seed,
            noise=config.warm_start_noise,
            workers=config.warm_start_workers,
            progress=bar.update,
            exact=config.warm_start_exact,
            store=store,
        )
    if phase is not None:
        phase("fit")
    with tqdm(
        total=config.warm_start_epochs,
        unit="epoch",
        desc=f"fit ({len(data):,} decisions)",
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:

        def on_epoch(epoch: int, loss: float) -> None:
            bar.update(1)
            bar.set_postfix_str(f"loss {loss:.3f}", refresh=False)

        report = imitation.fit(
            model.policy,
            data,
            config.warm_start_epochs,
            batch_size=config.batch_size,
            learning_rate=config.warm_start_lr,
            vf_coef=config.vf_coef,
            seed=config.seed,
            progress=on_epoch,
        )
    if progress:
        print(
            f"warm start: the student plays the teacher's move in "
            f"{report.agreement:.1%} of {report.held_out_decisions:,} held-out "
            "decisions"
        )
    return report


def _actor(model, activation: str) -> NumpyPolicy:
    return NumpyPolicy(ckpt_io.to_numpy(model.policy.state_dict()), activation)


def _numpy_to_torch(policy: NumpyPolicy) -> dict[str, Any]:
    out = {}
    for i, (w, b) in enumerate(policy.layers):
        out[f"mlp_extractor.policy_net.{2 * i}.weight"] = torch.from_numpy(w.T.copy())
        out[f"mlp_extractor.policy_net.{2 * i}.bias"] = torch.from_numpy(b.copy())
    out["action_net.weight"] = torch.from_numpy(policy.out[0].T.copy())
    out["action_net.bias"] = torch.from_numpy(policy.out[1].copy())
    return out


def _restore(model, pool: OpponentPool, saved: ckpt_io.Checkpoint) -> None:
    try:
        model.policy.load_state_dict(saved.tensors["policy"])
        model.policy.optimizer.load_state_dict(saved.tensors["optimizer"])
    except (KeyError, RuntimeError, ValueError) as err:
        raise ckpt_io.CheckpointError(
            f"checkpoint {saved.path} does not fit this config's network: {err}"
        ) from None
    model.num_timesteps = saved.step
    model._num_timesteps_at_start = saved.step
    activation = saved.manifest.get("activation", "tanh")
    labels = saved.manifest.get("snapshots", [])
    for i, sd in enumerate(saved.tensors.get("snapshots", [])):
        label = labels[i] if i < len(labels) else f"snapshot{i}"
        pool.add_snapshot(NumpyPolicy(ckpt_io.to_numpy(sd), activation), label)


_EVAL_FIELDS = [
    "step",
    "opponent",
    "games",
    "win_rate",
    "win_low",
    "win_high",
    "mean_score",
    "score_low",
    "score_high",
    "elapsed_s",
]


def _append_evaluations(path: Path, rows: list[dict[str, Any]]) -> None:
    new = not path.exists()
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=_EVAL_FIELDS)
        if new:
            writer.writeheader()
        writer.writerows(rows)


def _read_evaluations(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != _EVAL_FIELDS:
            raise ValueError(
                f"{path} has the header {reader.fieldnames}, not {_EVAL_FIELDS}: "
                "not this run's evaluations file"
            )
        rows = list(reader)
    out = []
    for line, r in enumerate(rows, start=2):
        try:
            row = {k: (r[k] if k == "opponent" else float(r[k])) for k in _EVAL_FIELDS}
            row["step"] = int(row["step"])
            row["games"] = int(row["games"])
        except (TypeError, ValueError):
            raise ValueError(f"{path}, line {line}: a malformed row {r}") from None
        out.append(row)
    return out


def plot_learning_curve(
    evaluations: list[dict[str, Any]], path: Path, config: TrainConfig
) -> Path | None:
    """Win rate against each baseline over training, with 95% CI bands."""
    if not evaluations:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for opponent in dict.fromkeys(r["opponent"] for r in evaluations):
        rows = sorted(
            (r for r in evaluations if r["opponent"] == opponent),
            key=lambda r: r["step"],
        )
        x = [r["step"] for r in rows]
        ax.plot(x, [r["win_rate"] for r in rows], marker="o", label=f"vs {opponent}")
        ax.fill_between(
            x, [r["win_low"] for r in rows], [r["win_high"] for r in rows], alpha=0.2
        )
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_ylim(0, 1)
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate (duplicate deals, 95% CI)")
    opts = ", ".join(f"{k}={v}" for k, v in config.env_options.items())
    ax.set_title(
        f"{config.env}" + (f" ({opts})" if opts else "") + " — self-play MaskablePPO"
    )
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


class _TrainingCallback(BaseCallback):
    """Progress bar, snapshots, checkpoints and evaluations at rollout boundaries.

    Work happens at the start of a rollout, when the policy has just been updated and
    the step count covers only trained-on data, so a checkpoint taken there resumes
    exactly.
    """

    def __init__(
        self, config, pool, save, evaluate, progress, evaluations, actor, start_eval
    ):
        super().__init__()
        self.start_eval = start_eval
        self.config, self.pool = config, pool
        self.save, self.evaluate, self.actor = save, evaluate, actor
        self.progress, self.evaluations = progress, evaluations
        self.bar = None
        self.rollout_start_steps = 0
        self.saved_state: tuple[dict, dict] | None = None
        self.next: dict[str, int] = {}
        self.recent: dict[str, list[float]] = {}
        self.aux_rng = np.random.default_rng(config.seed + 17)

    def _on_training_start(self) -> None:
        steps = self.num_timesteps
        self.rollout_start_steps = steps
        c = self.config
        # An evaluation that was due at or before this step and is not in the record
        # (the step-0 point, or one interrupted by Ctrl-C) is done first.
        due = steps // c.eval_every * c.eval_every
        last = max((r["step"] for r in self.evaluations), default=-1)
        self.next = {
            "snapshot": _next_multiple(steps, c.snapshot_every),
            "checkpoint": _next_multiple(steps, c.checkpoint_every),
            "eval": (
                due
                if last < due and (due > 0 or self.start_eval)
                else _next_multiple(steps, c.eval_every)
            ),
        }
        for env in self.training_env.envs:
            env.unwrapped.on_episode = self._episode
        if self.progress:
            from tqdm import tqdm

            # SB3 stops after the rollout that reaches the budget: whole rollouts
            rollout = c.n_envs * c.n_steps
            final = steps + -(-(c.total_timesteps - steps) // rollout) * rollout
            self.bar = tqdm(
                total=final,
                initial=steps,
                unit="step",
                desc="self-play",
                dynamic_ncols=True,
            )

    def _episode(self, kind: str, final: float) -> None:
        window = self.recent.setdefault(kind, [])
        window.append(1.0 if final > 0 else 0.5 if final == 0 else 0.0)
        del window[:-200]

    def _on_rollout_start(self) -> None:
        steps = self.num_timesteps
        self.rollout_start_steps = steps
        self._exact_pass()
        self.saved_state = (
            copy.deepcopy(self.model.policy.state_dict()),
            copy.deepcopy(self.model.policy.optimizer.state_dict()),
        )
        if steps >= self.next["snapshot"]:
            self.pool.add_snapshot(self.actor(), f"self@{steps}")
            self.next["snapshot"] = _next_multiple(steps, self.config.snapshot_every)
        if steps >= self.next["checkpoint"]:
            self.save(steps)
            self.next["checkpoint"] = _next_multiple(
                steps, self.config.checkpoint_every
            )
        if steps >= self.next["eval"]:
            rows = self.evaluate(steps)
            self.evaluations.extend(rows)
            for r in rows:
                self.logger.record(f"eval/win_rate_vs_{r['opponent']}", r["win_rate"])
            self.next["eval"] = _next_multiple(steps, self.config.eval_every)

    def _exact_pass(self) -> None:
        """After a PPO update: one pass of the set loss over the learner's decisions
        that the solver labelled during the last rollout (``exact_aux_fraction``). Done
        before the checkpoint, so a checkpoint holds it."""
        rows = []
        for env in self.training_env.envs:
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
            self.aux_rng,
        )
        self.logger.record("train/exact_aux_loss", loss)
        self.logger.record("train/exact_aux_decisions", len(rows))

    def _on_step(self) -> bool:
        if self.bar is not None:
            self.bar.update(self.num_timesteps - self.bar.n)
            if self.n_calls % 50 == 0:
                self.bar.set_postfix_str(self._postfix(), refresh=False)
        return True

    def _postfix(self) -> str:
        parts = [f"{k} {np.mean(v):.2f}" for k, v in sorted(self.recent.items()) if v]
        text = "win vs " + " ".join(parts) if parts else ""
        if self.evaluations:
            last = self.evaluations[-len(self.config.eval_opponents) :]
            text += " | eval " + " ".join(
                f"{r['opponent']} {r['win_rate']:.2f}" for r in last
            )
        return text

    def restore_rollout_start(self) -> None:
        """Put back the weights and optimiser state of the start of the rollout in
        progress (an interrupt may come in the middle of a PPO update)."""
        if self.saved_state is not None:
            self.model.policy.load_state_dict(self.saved_state[0])
            self.model.policy.optimizer.load_state_dict(self.saved_state[1])

    def close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _next_multiple(steps: int, every: int) -> int:
    return (steps // every + 1) * every


def summary_table(result: TrainResult) -> str:
    """The final evaluation as a table."""
    if not result.evaluations:
        return "no evaluation"
    last_step = max(r["step"] for r in result.evaluations)
    lines = [
        f"{'opponent':<14} {'games':>6}  {'win rate [95% CI]':<26} mean score [95% CI]"
    ]
    for r in result.evaluations:
        if r["step"] != last_step:
            continue
        lines.append(
            f"{r['opponent']:<14} {int(r['games']):>6}  "
            f"{r['win_rate']:.3f} [{r['win_low']:.3f}, {r['win_high']:.3f}]"
            f"{'':<4} {r['mean_score']:+.3f} "
            f"[{r['score_low']:+.3f}, {r['score_high']:+.3f}]"
        )
    return "\n".join(lines)
