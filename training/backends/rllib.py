"""The rllib backend: PPO on RLlib's current API stack, with env runners on a local
Ray or a cluster (``parlour train ENV --backend rllib [--num-env-runners N]
[--address ADDR]``).

Self-play is the sb3 backend's: ONE learning policy, and every other seat played by an
opponent from the run's `OpponentPool` (frozen snapshots of the learner, the heuristic
bot, ``random``, mixed by ``opponents``). Each env runner process builds its own copy
of the pool from the config, and the env it steps is `SelfPlayEnv` (the learner's seat
only; opponents and partners move inside ``step``, partners share the team reward, the
loser gets its terminal reward) with the observation in the layout of
`parlour.integrations.rllib`, so that its `MaskedPPOTorchRLModule` masks the illegal
actions. When the run adds a snapshot to the driver's pool, the snapshot's numpy
weights (never code) are sent to every env runner before the next iteration, and the
runners send back the episodes' outcomes (opponent kind, final return) for the
progress bar and the node they run on (``RUN_DIR/rllib_runners.json``).

The module is RLlib's default PPO network with ``net_arch`` hidden layers of
``activation`` and separate actor and critic, so the actor is the MLP that
`NumpyPolicy` runs: `export_weights` renames RLlib's tensors into SB3's key names, and
a checkpoint's ``policy`` is that actor (what ``parlour eval`` and ``ckpt:PATH``
read). The checkpoint also holds the whole module and the learner's optimiser state
as tensors, and the pool's snapshots; the learner runs in the driver
(``num_learners=0``), so all of it is read there without RLlib's pickled checkpoints.

One RLlib iteration (``Algorithm.train``) samples a rollout of ``n_envs × n_steps``
learner decisions from the env runners and updates on it; `collect` runs it, and
`update` only records its metrics. An interrupt during the iteration is undone by
`rewind`, which puts back the weights and optimiser state of the rollout's start.

**An env runner lost** (its process killed, its node gone): Ray starts the runner's
actor again (RLlib's ``restart_failed_env_runners``, at most `RUNNER_RESTARTS` times a
runner) and RLlib gives it the learner's weights; `_sync` sends it the pool's
snapshots. An iteration in which every runner died sampled and trained nothing, so
`collect` waits for them (at most `RUNNER_WAIT` seconds) and runs it again: the run
goes on, its steps counting only what was sampled and trained on.
"""

from __future__ import annotations

import copy
import functools
import itertools
import os
import socket
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from .. import checkpoint as ckpt_io
from .. import imitation
from ..config import TrainConfig
from ..policy import NumpyPolicy, actor_state, saved_snapshots
from ..selfplay import OpponentPool, SelfPlayEnv
from . import ray_support

# Ray and RLlib are imported only when the backend is built (after the checks).

RUNNERS_FILE = "rllib_runners.json"
#: times Ray may restart one env runner's actor after its process died
RUNNER_RESTARTS = 100
#: seconds `collect` waits for lost env runners to come back before it gives up
RUNNER_WAIT = 300.0
VALUE_CLIP = 1e6  # RLlib clips value-function errors at 10 by default; SB3 does not

# --- the env runners' side -----------------------------------------------------------
# Per process: the run's opponent pool (shared by every env of the process) and the
# outcomes of finished episodes not yet sent to the driver, keyed by run.
_POOLS: dict[str, OpponentPool] = {}
_OUTCOMES: dict[str, list[tuple[str, float]]] = {}
_ENV_COUNTER = itertools.count()


def _process_pool(spec: Mapping[str, Any]) -> OpponentPool:
    key = spec["run_key"]
    pool = _POOLS.get(key)
    if pool is None:
        # each process draws its opponents with its own generator
        seed = int(spec["seed"]) + 7919 * (1 + int(spec.get("worker_index", 0)))
        pool = OpponentPool(
            spec["env"],
            dict(spec["opponents"]),
            seed=seed,
            env_options=dict(spec["env_options"]),
            max_snapshots=int(spec["max_snapshots"]),
        )
        _POOLS[key] = pool
    return pool


class RunnerEnv(gym.Env):
    """`SelfPlayEnv` with the observation as ``{"action_mask", "observations"}``
    (`parlour.integrations.rllib`'s layout) for an RLlib env runner. ``config`` (the
    env config) names the run, env, options, seed and opponent mix."""

    metadata = {"render_modes": []}

    def __init__(self, config: Mapping[str, Any]) -> None:
        from parlour.integrations import rllib as prl

        super().__init__()
        worker = int(getattr(config, "worker_index", 0))
        spec = {**dict(config), "worker_index": worker}
        key = spec["run_key"]
        outcomes = _OUTCOMES.setdefault(key, [])
        index = next(_ENV_COUNTER)
        options = dict(spec["env_options"])
        # as parlour.integrations.rllib does: RLlib's env checker samples actions
        # without the mask (the masked module never picks an illegal one)
        options.setdefault("illegal_action", "penalize")
        self.inner = SelfPlayEnv(
            spec["env"],
            options,
            pool=_process_pool(spec),
            seed=int(spec["seed"]) * 1000 + 100 * worker + index,
            on_episode=lambda kind, final: outcomes.append((kind, final)),
            reward_scale=float(spec["reward_scale"]),
        )
        self.mask_key, self.obs_key = prl.MASK_KEY, prl.OBS_KEY
        n = self.inner.action_space.n
        self.observation_space = gym.spaces.Dict(
            {
                self.mask_key: gym.spaces.Box(0.0, 1.0, shape=(n,), dtype=np.float32),
                self.obs_key: self.inner.observation_space,
            }
        )
        self.action_space = self.inner.action_space

    def _wrap(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return {
            self.mask_key: self.inner.action_masks().astype(np.float32),
            self.obs_key: obs,
        }

    def reset(self, *, seed: int | None = None, options: Any = None):
        obs, info = self.inner.reset(seed=seed, options=options)
        return self._wrap(obs), info

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.inner.step(int(action))
        return self._wrap(obs), reward, terminated, truncated, info


def _sync_runner(
    runner: Any,
    spec: Mapping[str, Any],
    snapshots: list[tuple[str, dict[str, np.ndarray], str]] | None,
) -> dict[str, Any]:
    """Run in every env runner process: replace the pool's snapshots (when given) and
    hand back the outcomes of the episodes finished since the last call, with where
    this runner runs."""
    worker = int(getattr(runner, "worker_index", 0))
    pool = _process_pool({**spec, "worker_index": worker})
    if snapshots is not None:
        pool.snapshots.clear()
        for label, weights, activation in snapshots:
            pool.add_snapshot(NumpyPolicy(weights, activation), label)
    outcomes = _OUTCOMES.setdefault(spec["run_key"], [])
    drained = list(outcomes)
    outcomes.clear()
    return {
        "worker_index": worker,
        "node_id": ray_support.node_id(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "has_env": getattr(runner, "env", None) is not None,
        "outcomes": drained,
    }


# --- weights between RLlib's module and NumpyPolicy ----------------------------------
def _linear_layers(
    state: Mapping[str, torch.Tensor], prefix: str
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (weight, bias) pairs of the Linear layers under ``prefix``, in order, as
    numpy arrays in torch's (out, in) layout."""
    found = []
    for key, value in state.items():
        if key.startswith(prefix) and key.endswith(".weight"):
            layer = key[: -len(".weight")]
            index = int(layer.rsplit(".", 1)[-1])
            found.append((layer, index, value))
    found.sort(key=lambda item: (item[0].rsplit(".", 1)[0], item[1]))
    return [
        (
            w.detach().cpu().numpy().astype(np.float32),
            state[f"{layer}.bias"].detach().cpu().numpy().astype(np.float32),
        )
        for layer, _, w in found
    ]


def sb3_actor(state: Mapping[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """The actor of an RLlib default PPO module (separate actor and critic, one
    linear policy head) under the common actor key names (`actor_state`), which
    `NumpyPolicy` and checkpoints read."""
    hidden = _linear_layers(state, "encoder.actor_encoder.")
    head = _linear_layers(state, "pi.")
    if not hidden or len(head) != 1:
        raise ValueError(
            "the RLlib module is not an MLP actor with one linear head "
            f"(hidden layers {len(hidden)}, head layers {len(head)})"
        )
    return actor_state(hidden, head[0])


class RLlibBackend:
    """PPO with RLlib's env runners and a local learner (`training.backends.Backend`).

    ``num_env_runners`` env-runner processes (0: sample in this process) on the Ray
    at ``address``, or on a local Ray started here when it is None (a Ray this process
    already runs is used as it is).
    """

    method = "self-play PPO (RLlib)"

    def __init__(
        self,
        config: TrainConfig,
        pool: OpponentPool,
        run_dir: Path,
        on_step: Callable[[int], None],
        num_env_runners: int = 2,
        address: str | None = None,
    ) -> None:
        check_options(config, {"num_env_runners": num_env_runners, "address": address})
        self.config = config
        self.pool = pool
        self.run_dir = Path(run_dir)
        self.on_step = on_step
        self.num_env_runners = num_env_runners
        self._started_ray = ray_support.connect(
            address, num_cpus=max(1, num_env_runners)
        )
        from ray.rllib.core import DEFAULT_MODULE_ID

        from parlour.integrations import rllib as prl

        self.module_id = DEFAULT_MODULE_ID
        self.run_key = uuid.uuid4().hex
        self.spec = {
            "run_key": self.run_key,
            "env": config.env,
            "env_options": dict(config.env_options),
            "seed": config.seed,
            "opponents": dict(config.opponents),
            "max_snapshots": config.max_snapshots,
            "reward_scale": config.reward_scale,
        }
        # envs built in this process (num_env_runners=0) play against the run's pool
        _POOLS[self.run_key] = pool
        self.rollout_steps = config.n_envs * config.n_steps
        model_config = {
            "fcnet_hiddens": list(config.net_arch),
            "fcnet_activation": config.activation,
            "head_fcnet_hiddens": [],
            "vf_share_layers": False,
        }
        algo_config = (
            prl.PPOConfig()
            .environment(RunnerEnv, env_config=dict(self.spec))
            .framework("torch")
            .env_runners(
                num_env_runners=num_env_runners,
                num_envs_per_env_runner=config.n_envs,
                rollout_fragment_length="auto",
                num_cpus_per_env_runner=1,
            )
            .learners(num_learners=0)
            .fault_tolerance(
                restart_failed_env_runners=True,
                max_num_env_runner_restarts=RUNNER_RESTARTS,
                delay_between_env_runner_restarts_s=1.0,
            )
            .training(
                lr=config.learning_rate,
                gamma=config.gamma,
                lambda_=config.gae_lambda,
                clip_param=config.clip_range,
                entropy_coeff=config.ent_coef,
                vf_loss_coeff=config.vf_coef,
                vf_clip_param=VALUE_CLIP,
                use_kl_loss=False,
                grad_clip=config.max_grad_norm,
                grad_clip_by="global_norm",
                train_batch_size_per_learner=self.rollout_steps,
                minibatch_size=config.batch_size,
                num_epochs=config.n_epochs,
            )
            .rl_module(rl_module_spec=prl.masked_ppo_spec(model_config))
            .debugging(seed=config.seed)
        )
        torch.manual_seed(config.seed)
        try:
            self.algo = algo_config.build_algo()
        except BaseException:
            ray_support.disconnect(self._started_ray)
            raise
        env = RunnerEnv(self.spec)
        self.game = env.inner.game
        env.close()
        self._steps = 0
        self._rollout_start_steps = 0
        self._saved_state: tuple[dict, dict] | None = None
        self._on_episode: Callable[[str, float], None] | None = None
        self._pushed: list[str] | None = None
        self._last: dict[str, Any] | None = None
        self._runners: dict[int, dict[str, Any]] = {}
        self._pids: dict[int, int] = {}  # the process each runner had at the last sync
        self._iteration_start = time.perf_counter()
        self._writer = None
        if config.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(str(self.run_dir / "tensorboard" / "rllib"))

    # --- the learner in this process -------------------------------------------------
    def _learner(self) -> Any:
        return self.algo.learner_group._learner

    def _module(self) -> torch.nn.Module:
        return self._learner().module[self.module_id]

    def _optimizers(self) -> list[tuple[str, torch.optim.Optimizer]]:
        return list(self._learner().get_optimizers_for_module(self.module_id))

    def _send_weights(self) -> None:
        """The learner's weights to every env runner (after imitate, restore)."""
        self.algo.env_runner_group.sync_weights(
            from_worker_or_learner_group=self.algo.learner_group, inference_only=True
        )

    @property
    def steps(self) -> int:
        return self._steps

    def imitate(self, data: Any, progress: Callable[[int, float], None]):
        report = imitation.fit_warm_start(
            self._module(), data, self.config, progress
        )
        self._send_weights()
        return report

    def begin(
        self, total_timesteps: int, on_episode: Callable[[str, float], None]
    ) -> None:
        self._on_episode = on_episode
        self._rollout_start_steps = self._steps
        self._sync()
        self._write_runners()

    def begin_rollout(self) -> None:
        self._rollout_start_steps = self._steps
        opts = {name: opt.state_dict() for name, opt in self._optimizers()}
        self._saved_state = (
            copy.deepcopy(self._module().state_dict()),
            copy.deepcopy(opts),
        )

    def collect(self) -> bool:
        self._sync()
        self._iteration_start = time.perf_counter()
        deadline = time.monotonic() + RUNNER_WAIT
        while True:
            result = self.algo.train()
            sampled = _sampled(result)
            if sampled > 0 or not self._runners_lost():
                break
            # every env runner died in this iteration: RLlib sampled and trained
            # nothing; wait for Ray to restart them, then run it again
            self._wait_for_runners(deadline)
            self._sync()
        self._last = result
        if sampled <= 0:
            return False
        self._steps += sampled
        self.on_step(self._steps)
        return True

    def update(self) -> None:
        # Algorithm.train updated the module already (RLlib's iteration is one call);
        # here its numbers go to TensorBoard.
        if self._last is None or self._writer is None:
            return
        from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, LEARNER_RESULTS

        learner = self._last.get(LEARNER_RESULTS, {}).get(self.module_id, {})
        for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss"):
            if key in learner:
                self.log(f"train/{key}", float(learner[key]))
        runners = self._last.get(ENV_RUNNER_RESULTS, {})
        if "episode_return_mean" in runners:
            self.log("rollout/ep_rew_mean", float(runners["episode_return_mean"]))
        seconds = time.perf_counter() - self._iteration_start
        self.log("time/iteration_s", seconds)
        self._writer.flush()

    def rewind(self) -> int:
        if self._saved_state is not None:
            module_state, opts = self._saved_state
            self._module().load_state_dict(module_state)
            for name, opt in self._optimizers():
                opt.load_state_dict(opts[name])
        self._steps = self._rollout_start_steps
        return self._rollout_start_steps

    def export_weights(self) -> NumpyPolicy:
        actor = sb3_actor(self._module().state_dict())
        return NumpyPolicy(actor, self.config.activation)

    def checkpoint_tensors(self, snapshots: list[NumpyPolicy]) -> dict[str, Any]:
        return {
            "policy": ckpt_io.to_torch(sb3_actor(self._module().state_dict())),
            "rllib_module": {
                k: v.detach().clone() for k, v in self._module().state_dict().items()
            },
            "rllib_optimizer": {
                name: opt.state_dict() for name, opt in self._optimizers()
            },
            "snapshots": [s.tensors() for s in snapshots],
        }

    def restore(self, saved: ckpt_io.Checkpoint) -> list[tuple[str, NumpyPolicy]]:
        tensors = saved.tensors
        if "rllib_module" not in tensors:
            other = saved.manifest.get("backend", "sb3")
            raise ckpt_io.CheckpointError(
                f"checkpoint {saved.path} was not written by the rllib backend: "
                f"resume it with the backend that wrote it (--backend {other})"
            )
        try:
            self._module().load_state_dict(tensors["rllib_module"])
            for name, opt in self._optimizers():
                opt.load_state_dict(tensors["rllib_optimizer"][name])
        except (KeyError, RuntimeError, ValueError) as err:
            raise ckpt_io.CheckpointError(
                f"checkpoint {saved.path} does not fit this config's network: {err}"
            ) from None
        self._send_weights()
        self._steps = self._rollout_start_steps = saved.step
        return saved_snapshots(saved)

    def log(self, key: str, value: float) -> None:
        if self._writer is not None:
            self._writer.add_scalar(key, value, self._steps)

    def close(self) -> None:
        try:
            if self._writer is not None:
                self._writer.close()
            self.algo.stop()
        finally:
            _POOLS.pop(self.run_key, None)
            ray_support.disconnect(self._started_ray)

    # --- the env runners: lost ones, and the pool on them ---------------------------
    def _runners_lost(self) -> bool:
        """Whether some remote env runner is out of service (its process died)."""
        group = self.algo.env_runner_group
        return group.num_healthy_remote_workers() < group.num_remote_workers()

    def _wait_for_runners(self, deadline: float) -> None:
        """Wait until Ray has restarted the lost env runners and RLlib has put the
        learner's weights on them; `RayUnavailable` (one line) past ``deadline``."""
        group = self.algo.env_runner_group
        while self._runners_lost():
            if time.monotonic() > deadline:
                lost = group.num_remote_workers() - group.num_healthy_remote_workers()
                raise ray_support.RayUnavailable(
                    f"{lost} env runner(s) died and did not come back in "
                    f"{RUNNER_WAIT:g} s; the run keeps its last checkpoint: continue "
                    "it with --resume"
                )
            time.sleep(1.0)
            self.algo.restore_env_runners(group)

    def _sync(self) -> None:
        """Send the pool's snapshots to every env runner when they changed (or when
        a runner was restarted, its pool empty), and pass the outcomes the runners
        recorded to ``on_episode``."""
        labels = [s.spec for s in self.pool.snapshots]
        send = labels != self._pushed
        results = self._call_runners(send)
        restarted = any(
            self._pids.get(info["worker_index"], info["pid"]) != info["pid"]
            for info in results
        )
        if restarted and not send:
            results += self._call_runners(True)  # a new process: its pool is empty
        self._pushed = labels
        for info in results:
            self._pids[info["worker_index"]] = info["pid"]
            outcomes = info.pop("outcomes")
            self._runners[info["worker_index"]] = info
            if self._on_episode is not None:
                for kind, final in outcomes:
                    self._on_episode(kind, final)
        if restarted:
            self._write_runners()  # where the runners run now

    def _call_runners(self, send: bool) -> list[dict[str, Any]]:
        """`_sync_runner` on every env runner in service, with the pool's snapshots
        when ``send``."""
        snapshots = None
        if send:
            activation = self.config.activation
            snapshots = [
                (s.spec, s.policy.state_dict(), activation) for s in self.pool.snapshots
            ]
        return self.algo.env_runner_group.foreach_env_runner(
            functools.partial(_sync_runner, spec=self.spec, snapshots=snapshots),
            local_env_runner=self.num_env_runners == 0,
        )

    def _write_runners(self) -> None:
        """Where the env runners run: RUN_DIR/rllib_runners.json."""
        ckpt_io.write_json_atomic(
            self.run_dir / RUNNERS_FILE,
            {
                "num_env_runners": self.num_env_runners,
                "runners": [self._runners[k] for k in sorted(self._runners)],
            },
        )


def _sampled(result: Mapping[str, Any]) -> int:
    """Env steps an RLlib iteration sampled (RLlib reports NaN when its runners
    returned nothing)."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED

    value = result.get(ENV_RUNNER_RESULTS, {}).get(NUM_ENV_STEPS_SAMPLED, 0)
    return int(value) if value == value else 0  # NaN != NaN


def check_options(config: TrainConfig, options: Mapping[str, Any]) -> None:
    """ValueError (one line) for rllib options or config keys the backend cannot run
    with; `RayUnavailable` when Ray is missing, unsupported or unreachable."""
    unknown = sorted(set(options) - {"num_env_runners", "address"})
    if unknown:
        raise ValueError(f"the rllib backend has no option(s) {unknown}")
    runners = options.get("num_env_runners", 2)
    if not isinstance(runners, int) or isinstance(runners, bool) or runners < 0:
        raise ValueError(f"--num-env-runners must be 0 or more, got {runners!r}")
    if config.exact_aux_fraction > 0:
        raise ValueError(
            "exact_aux_fraction is not supported by --backend rllib (use sb3, or "
            "--set exact_aux_fraction=0)"
        )
    ray_support.check(options.get("address"))
    ray_support.check_cpus(runners)


__all__ = ["RUNNERS_FILE", "RLlibBackend", "RunnerEnv", "check_options", "sb3_actor"]
