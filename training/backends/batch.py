"""The batch backend: a compact PPO (in the style of cleanrl's one-file agents) on the
vectorised self-play environment (`training.batch_selfplay.BatchSelfPlay`).

``parlour train ENV --backend batch`` plays ``n_envs`` games at once on the env's
batched engine (`parlour.envs.batch.ENGINES`); the learner's decisions of a rollout are
the learner rows of successive engine steps (about ``n_envs / players`` a step), the
opponents (frozen snapshots, ``random``) play the other rows in one batched forward pass
each. The rest of a run is shared with the other backends: the run directory, warm
start, opponent pool, evaluations, checkpoints and ``ckpt:PATH`` agents.

The network is SB3's ``MlpPolicy`` layout under SB3's parameter names (separate policy
and value MLPs of ``net_arch``, ``action_net``, ``value_net``, orthogonal init), so the
exported weights are an ordinary `NumpyPolicy` and checkpoints pass the same checks.

One rollout is exactly ``n_envs × n_steps`` learner decisions. Each game's decisions
are chained in time; a decision's reward is everything the learner's seat received up
to its next decision, and its episode ends where the game's did. At the end of a
rollout the last decision of each game still in play bootstraps from the value of the
game's position seen from the learner's seat (the next decision's own observation where
the learner is to act; otherwise the position before the opponents' cards). At the last
engine step of a rollout, learner decisions beyond the rollout's size are played but not
stored (they only give their predecessors' bootstrap value).

The config's ``algo`` picks the learning algorithm over this rollout (`BatchBackend`
makes the chosen one's learner): ``ppo`` is `BatchBackend` here; ``mmd``, ``nfsp`` and
``dmc`` are the modules of `parlour.training.algos` (docs/algorithms.md). `BatchLearner`
is what they share: the batched self-play env, the step count, the rewind and checkpoint
of named modules, and the logs.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from ... import envs
from .. import checkpoint as ckpt_io
from .. import imitation
from ..batch_selfplay import BatchSelfPlay, check_opponents, make_engine, sample_masked
from ..config import TrainConfig
from ..policy import NumpyPolicy, saved_snapshots
from ..selfplay import OpponentPool

_ILLEGAL = -1e8  # masked logits (as SB3's MaskableCategorical): exp() is exactly 0
# The warm start's fit takes minibatches of this many decisions, as the sb3 recipes' fit
# does (their batch_size): this backend's PPO minibatches (thousands of decisions) would
# leave the fit a sixteenth of the Adam steps, and the two backends' warm starts differ.
WARM_START_MINIBATCH = 256


@dataclass(frozen=True)
class PPOConfig:
    """The batch backend's hyperparameters (read from `TrainConfig`'s keys of the
    same meaning by `from_train_config`)."""

    num_games: int
    """games played together (``n_envs``)"""
    rollout_steps: int
    """learner decisions per rollout (``n_envs × n_steps``)"""
    minibatch_size: int
    """``batch_size``"""
    update_epochs: int
    """``n_epochs``: passes over a rollout per update"""
    learning_rate: float
    gamma: float
    gae_lambda: float
    clip_coef: float
    """``clip_range``"""
    ent_coef: float
    vf_coef: float
    max_grad_norm: float
    net_arch: tuple[int, ...]
    activation: str
    seed: int
    reward_scale: float
    """the learner's rewards are multiplied by it (the episodes' returns are not)"""
    norm_adv: bool = True
    """advantages normalised per minibatch (SB3's default)"""

    @classmethod
    def from_train_config(cls, c: TrainConfig) -> PPOConfig:
        return cls(
            num_games=c.n_envs,
            rollout_steps=c.n_envs * c.n_steps,
            minibatch_size=c.batch_size,
            update_epochs=c.n_epochs,
            learning_rate=c.learning_rate,
            gamma=c.gamma,
            gae_lambda=c.gae_lambda,
            clip_coef=c.clip_range,
            ent_coef=c.ent_coef,
            vf_coef=c.vf_coef,
            max_grad_norm=c.max_grad_norm,
            net_arch=tuple(c.net_arch),
            activation=c.activation,
            seed=c.seed,
            reward_scale=c.reward_scale,
        )


def check_config(config: TrainConfig) -> None:
    """One-line ValueErrors for a config this backend cannot run (called before
    anything is written): an env without a batched engine or with options it does not
    take, an opponent mix with scalar bots, the sb3-only ``exact_aux_fraction``."""
    make_engine(config.env, config.env_options, 1, seed=0)
    check_opponents(config.opponents)
    if config.exact_aux_fraction > 0:
        raise ValueError(
            "exact_aux_fraction labels positions with the scalar solver during the "
            "rollout, which the batch backend does not do: set it to 0 (or use "
            "--backend sb3)"
        )
    from .. import algos

    algos.check_config(config)


# --- the network ----------------------------------------------------------------------
def _mlp(sizes: list[int], activation: type[nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes, sizes[1:], strict=False):
        # ReLU in place on the Linear's fresh output (its backward needs only the
        # result): one large allocation less per layer, the same numbers
        act = activation(inplace=True) if activation is nn.ReLU else activation()
        layers += [nn.Linear(a, b), act]
    return nn.Sequential(*layers)


class _Extractor(nn.Module):
    def __init__(self, sizes: list[int], activation: type[nn.Module]) -> None:
        super().__init__()
        self.policy_net = _mlp(sizes, activation)
        self.value_net = _mlp(sizes, activation)


class ActorCritic(nn.Module):
    """Actor and critic MLPs with SB3 ``MlpPolicy``'s parameter names and init."""

    def __init__(
        self, observation_size: int, num_actions: int, net_arch, activation: str
    ) -> None:
        super().__init__()
        act = {"tanh": nn.Tanh, "relu": nn.ReLU}[activation]
        sizes = [observation_size, *net_arch]
        self.mlp_extractor = _Extractor(sizes, act)
        self.action_net = nn.Linear(sizes[-1], num_actions)
        self.value_net = nn.Linear(sizes[-1], 1)
        # SB3's (and cleanrl's) orthogonal init: sqrt(2) hidden, 0.01 actor, 1 critic
        for module, gain in (
            (self.mlp_extractor, math.sqrt(2)),
            (self.action_net, 0.01),
            (self.value_net, 1.0),
        ):
            for m in module.modules():
                if isinstance(m, nn.Linear):
                    nn.init.orthogonal_(m.weight, gain=gain)
                    nn.init.zeros_(m.bias)

    def forward(
        self, obs: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked log-probabilities ``(N, A)`` and values ``(N,)``."""
        return self.masked_log_probs(obs, mask), self.predict_values(obs).squeeze(1)

    def masked_log_probs(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Log-probabilities ``(N, A)`` of the masked policy (illegal actions get
        ``exp() == 0``)."""
        logits = self.action_net(self.mlp_extractor.policy_net(obs))
        return torch.log_softmax(logits.masked_fill(~mask, _ILLEGAL), dim=1)

    def predict_values(self, obs: torch.Tensor) -> torch.Tensor:
        """Values ``(N, 1)``."""
        return self.value_net(self.mlp_extractor.value_net(obs))


class _ActorExtractor(nn.Module):
    def __init__(self, sizes: list[int], activation: type[nn.Module]) -> None:
        super().__init__()
        self.policy_net = _mlp(sizes, activation)


class ActorMLP(nn.Module):
    """One MLP from observations to one output per action, under SB3's actor names
    (``mlp_extractor.policy_net``, ``action_net``), so that its weights are a
    `NumpyPolicy` and a checkpoint's ``policy``: NFSP's average policy (logits) and
    Q-networks (NFSP's best response, DMC; Q-values, which greedy play maximises)."""

    def __init__(
        self,
        observation_size: int,
        num_actions: int,
        net_arch,
        activation: str,
        head_gain: float = 0.01,
    ) -> None:
        super().__init__()
        act = {"tanh": nn.Tanh, "relu": nn.ReLU}[activation]
        sizes = [observation_size, *net_arch]
        self.mlp_extractor = _ActorExtractor(sizes, act)
        self.action_net = nn.Linear(sizes[-1], num_actions)
        for module, gain in (
            (self.mlp_extractor, math.sqrt(2)),
            (self.action_net, head_gain),
        ):
            for m in module.modules():
                if isinstance(m, nn.Linear):
                    nn.init.orthogonal_(m.weight, gain=gain)
                    nn.init.zeros_(m.bias)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """The outputs ``(N, A)``, unmasked."""
        return self.action_net(self.mlp_extractor.policy_net(obs))

    def masked_log_probs(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Log-probabilities ``(N, A)`` of the softmax of the outputs over the legal
        actions."""
        return torch.log_softmax(self(obs).masked_fill(~mask, _ILLEGAL), dim=1)


class _Rollout:
    """One rollout's learner decisions, in the order they were made."""

    def __init__(self, size: int, observation_size: int, num_actions: int) -> None:
        self.obs = torch.zeros(size, observation_size)
        self.masks = torch.zeros(size, num_actions, dtype=torch.bool)
        self.actions = torch.zeros(size, dtype=torch.int64)
        self.logp = torch.zeros(size)
        self.values = torch.zeros(size)
        self.rewards = torch.zeros(size)
        self.dones = torch.zeros(size, dtype=torch.bool)
        self.next_values = torch.zeros(size)
        # the index of the game's next decision in this rollout; `size` for none
        self.successor = torch.full((size,), size, dtype=torch.int64)
        self.blocks: list[tuple[int, int]] = []  # decisions of each engine step

    def clear(self) -> None:
        self.rewards.zero_()
        self.dones.zero_()
        self.next_values.zero_()
        self.successor.fill_(len(self.successor))
        self.blocks = []

    def advantages(self, gamma: float, lam: float) -> torch.Tensor:
        """GAE along each game's chain of decisions, an engine step at a time from
        the last (a decision's successor always lies in a later step)."""
        n = len(self.values)
        live = (~self.dones).float()
        delta = self.rewards + gamma * live * self.next_values - self.values
        adv = torch.zeros(n + 1)  # adv[n] = 0: the chain ends (bootstrapped)
        for start, end in reversed(self.blocks):
            nxt = adv[self.successor[start:end]]
            adv[start:end] = delta[start:end] + gamma * lam * live[start:end] * nxt
        return adv[:n]


class BatchLearner:
    """What every algorithm on the batched rollout shares (`training.backends.Backend`
    less the collection and the update): the vectorised self-play env, the step count,
    the saved state that `rewind` puts back, checkpoints of the modules `modules`
    names, the warm start of `policy_net` and the logs."""

    method = "batched self-play"
    log_name = "batch"

    def __init__(
        self,
        config: TrainConfig,
        pool: OpponentPool,
        run_dir: Path | None,
        on_step: Callable[[int], None],
    ) -> None:
        check_config(config)
        self.config = config
        self.pool = pool
        self.on_step = on_step
        torch.manual_seed(config.seed)
        self.env = BatchSelfPlay(
            config.env, config.env_options, config.n_envs, pool, seed=config.seed
        )
        # the scalar engine: its sizes and teams go into manifests and evaluations
        self.game = envs.make(config.env, raw=True, **config.env_options).game
        self.rollout_steps = config.n_envs * config.n_steps
        self.generator = torch.Generator().manual_seed(config.seed + 1)
        self._steps = 0
        self._rollout_start_steps = 0
        self._saved_state: dict[str, dict] | None = None
        self._collected = False
        self._writer = None
        if config.tensorboard and run_dir is not None:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(str(run_dir / "tensorboard" / self.log_name))
        self._logs: dict[str, float] = {}
        self._rollout_seconds = 0.0
        self.build()

    def build(self) -> None:
        """Make the algorithm's networks, optimisers and buffers (the env is made)."""
        raise NotImplementedError

    def reset_games(self) -> None:
        """Forget what belongs to the games in play (`begin` deals them afresh)."""

    @property
    def steps(self) -> int:
        return self._steps

    def modules(self) -> dict[str, Any]:
        """The networks and optimisers a checkpoint holds, by name; ``policy`` is the
        playing policy's network (SB3's actor names: what ``ckpt:`` agents read)."""
        raise NotImplementedError

    @property
    def policy_net(self) -> nn.Module:
        """The network that plays (exported, snapshotted, checkpointed)."""
        return self.modules()["policy"]

    # --- the warm start ---------------------------------------------------------------
    def imitate(self, data: Any, progress: Callable[[int, float], None]):
        return imitation.fit_warm_start(
            self.policy_net,
            data,
            self.config,
            progress,
            batch_size=WARM_START_MINIBATCH,
        )

    # --- the loop ---------------------------------------------------------------------
    def begin(
        self, total_timesteps: int, on_episode: Callable[[str, float], None]
    ) -> None:
        self.env.on_episode = on_episode
        # a resumed run plays on from other deals than the ones it stopped at
        self.env.reset(seed=self.config.seed * 1_000_003 + self._steps)
        self.reset_games()

    def begin_rollout(self) -> None:
        self._rollout_start_steps = self._steps
        self._saved_state = {
            name: copy.deepcopy(m.state_dict()) for name, m in self.modules().items()
        }

    def rewind(self) -> int:
        if self._saved_state is not None:
            for name, m in self.modules().items():
                m.load_state_dict(self._saved_state[name])
        self._steps = self._rollout_start_steps
        self._collected = False
        return self._steps

    def _log_timing(self, size: int, update_seconds: float) -> None:
        self.log("time/rollout_s", self._rollout_seconds)
        self.log("time/update_s", update_seconds)
        self.log("time/fps", size / (self._rollout_seconds + update_seconds))
        self._flush()

    # --- weights and checkpoints ------------------------------------------------------
    def export_weights(self) -> NumpyPolicy:
        return NumpyPolicy(
            ckpt_io.to_numpy(self.policy_net.state_dict()), self.config.activation
        )

    def checkpoint_tensors(self, snapshots: list[NumpyPolicy]) -> dict[str, Any]:
        return {
            **{name: m.state_dict() for name, m in self.modules().items()},
            "snapshots": [s.tensors() for s in snapshots],
        }

    def restore(self, saved: ckpt_io.Checkpoint) -> list[tuple[str, NumpyPolicy]]:
        try:
            for name, m in self.modules().items():
                m.load_state_dict(saved.tensors[name])
        except (KeyError, RuntimeError, ValueError) as err:
            raise ckpt_io.CheckpointError(
                f"checkpoint {saved.path} does not fit this config's network: "
                f"{str(err).splitlines()[0]}"
            ) from None
        self._steps = self._rollout_start_steps = saved.step
        return saved_snapshots(saved)

    # --- logs -------------------------------------------------------------------------
    def log(self, key: str, value: float) -> None:
        self._logs[key] = value

    def _flush(self) -> None:
        if self._writer is not None:
            for key, value in self._logs.items():
                self._writer.add_scalar(key, value, self._steps)
            self._writer.flush()
        self._logs.clear()

    def close(self) -> None:
        if self._writer is not None:
            self._flush()
            self._writer.close()
            self._writer = None


class BatchBackend(BatchLearner):
    """PPO on batched self-play (`training.backends.Backend`); built with a config
    whose ``algo`` is another algorithm, it makes that algorithm's learner
    (`training.algos`) instead, so that ``--backend batch`` names one class."""

    method = "batched self-play PPO"
    log_name = "batch_ppo"

    def __new__(cls, config: TrainConfig, *args: Any, **kwargs: Any) -> BatchLearner:
        if cls is not BatchBackend or config.algo == "ppo":
            return super().__new__(cls)
        from .. import algos

        chosen = algos.learner_class(config.algo)
        learner = chosen.__new__(chosen, config, *args, **kwargs)
        if not isinstance(learner, BatchBackend):
            # Python initialises only what __new__ returns of its own class (MMD is
            # PPO's subclass; NFSP and DMC are not)
            learner.__init__(config, *args, **kwargs)
        return learner

    def build(self) -> None:
        self.ppo = p = PPOConfig.from_train_config(self.config)
        self.net = ActorCritic(
            self.env.observation_size, self.env.num_actions, p.net_arch, p.activation
        )
        self.optimizer = torch.optim.Adam(
            self.net.parameters(), lr=p.learning_rate, eps=1e-5
        )
        self.buffer = _Rollout(
            p.rollout_steps, self.env.observation_size, self.env.num_actions
        )

    def modules(self) -> dict[str, Any]:
        return {"policy": self.net, "optimizer": self.optimizer}

    def collect(self) -> bool:
        """One rollout of exactly ``rollout_steps`` learner decisions."""
        t0 = time.perf_counter()
        env, buf, net = self.env, self.buffer, self.net
        env.refresh()  # snapshots added at this boundary join the games' draws
        buf.clear()
        size = self.rollout_steps
        B = env.batch_size
        last = torch.full((B,), -1, dtype=torch.int64)  # each game's latest decision
        arange = torch.arange(size)
        k = 0
        net.eval()
        while k < size:
            turn = env.turn
            rows = turn.learner.nonzero().squeeze(1)
            n = min(rows.numel(), size - k)
            with torch.no_grad():
                obs = turn.observation.index_select(0, rows)
                mask = turn.mask.index_select(0, rows)
                logp, values = net(obs, mask)
                actions = sample_masked(logp, mask, self.generator)
            stored = slice(k, k + n)
            buf.obs[stored] = obs[:n]
            buf.masks[stored] = mask[:n]
            buf.actions[stored] = actions[:n]
            buf.logp[stored] = logp[:n].gather(1, actions[:n, None]).squeeze(1)
            buf.values[stored] = values[:n]
            buf.blocks.append((k, k + n))
            # the games' previous decisions get this one as their successor
            prev = last[rows]
            linked = prev >= 0
            buf.next_values[prev[linked]] = values[linked]
            new = torch.full((rows.numel(),), size, dtype=torch.int64)
            new[:n] = arange[stored]
            buf.successor[prev[linked]] = new[linked]
            # decisions past the rollout's size are played, not stored: their games'
            # chains end here, bootstrapped from their values above
            last[rows] = torch.where(new < size, new, -1)
            learner_actions = torch.zeros(B, dtype=torch.int64)
            learner_actions[rows] = actions
            _, rewards, dones = env.step(learner_actions)
            open_ = last >= 0
            # scaled for the learner only: the episodes' returns stay in points
            scaled = rewards[open_] * self.ppo.reward_scale
            buf.rewards.index_add_(0, last[open_], scaled)
            buf.dones[last[open_ & dones]] = True
            last[dones] = -1
            k += n
            self.on_step(self._steps + k)
        pending = (last >= 0).nonzero().squeeze(1)
        if pending.numel():
            with torch.no_grad():
                view = env.learner_view().index_select(0, pending)
                values = net.predict_values(view).squeeze(1)
            buf.next_values[last[pending]] = values
        self._steps += size
        self._collected = True
        self._rollout_seconds = time.perf_counter() - t0
        return True

    def update(self) -> None:
        """PPO's clipped surrogate over the rollout: ``update_epochs`` passes in
        shuffled minibatches."""
        if not self._collected:
            return
        t0 = time.perf_counter()
        p, buf, net = self.ppo, self.buffer, self.net
        with torch.no_grad():
            advantages = buf.advantages(p.gamma, p.gae_lambda)
            returns = advantages + buf.values
        net.train()
        size = self.rollout_steps
        stats: dict[str, list[float]] = {}
        for _ in range(p.update_epochs):
            order = torch.randperm(size, generator=self.generator)
            for start in range(0, size, p.minibatch_size):
                idx = order[start : start + p.minibatch_size]
                # index_select copies whole rows: about 3x `buf.obs[idx]` here
                loss, terms = self.loss(
                    buf.obs.index_select(0, idx),
                    buf.masks.index_select(0, idx),
                    buf.actions.index_select(0, idx),
                    buf.logp.index_select(0, idx),
                    advantages.index_select(0, idx),
                    returns.index_select(0, idx),
                )
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), p.max_grad_norm)
                self.optimizer.step()
                for key, value in terms.items():
                    stats.setdefault(key, []).append(float(value))
        net.eval()
        self._collected = False
        self.after_update()
        var = float(returns.var())
        explained = (
            math.nan if var == 0 else 1 - float((returns - buf.values).var()) / var
        )
        for key, values_ in stats.items():
            self.log(f"train/{key}", float(np.mean(values_)))
        self.log("train/explained_variance", explained)
        self.log("train/learning_rate", p.learning_rate)
        self._log_timing(size, time.perf_counter() - t0)

    def loss(
        self,
        obs: torch.Tensor,
        mask: torch.Tensor,
        actions: torch.Tensor,
        old_logp: torch.Tensor,
        adv: torch.Tensor,
        returns: torch.Tensor,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """One minibatch's PPO loss (clipped surrogate, entropy bonus, value error)
        and its diagnostics (detached scalars)."""
        p = self.ppo
        logp_all, values = self.net(obs, mask)
        logp = logp_all.gather(1, actions[:, None]).squeeze(1)
        log_ratio = logp - old_logp
        ratio = log_ratio.exp()
        if p.norm_adv and len(adv) > 1:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg_loss = torch.max(
            -adv * ratio,
            -adv * ratio.clamp(1 - p.clip_coef, 1 + p.clip_coef),
        ).mean()
        v_loss = ((values - returns) ** 2).mean()
        entropy = masked_entropy(logp_all, mask).mean()
        loss = pg_loss - p.ent_coef * entropy + p.vf_coef * v_loss
        extra, terms = self.regulariser(obs, mask, logp_all)
        if extra is not None:
            loss = loss + extra
        with torch.no_grad():
            terms |= {
                "policy_gradient_loss": pg_loss.detach(),
                "value_loss": v_loss.detach(),
                "entropy_loss": -entropy.detach(),
                "approx_kl": ((ratio - 1) - log_ratio).mean(),
                "clip_fraction": ((ratio - 1).abs() > p.clip_coef).float().mean(),
            }
        return loss, terms

    def regulariser(
        self, obs: torch.Tensor, mask: torch.Tensor, logp_all: torch.Tensor
    ) -> tuple[torch.Tensor | None, dict[str, torch.Tensor]]:
        """A term added to the loss and its diagnostics (PPO: none; MMD: the pull to
        its magnet)."""
        return None, {}

    def after_update(self) -> None:
        """Called after each update (MMD moves its magnet here)."""


def masked_entropy(logp_all: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per-row entropy ``(N,)`` of masked log-probabilities: ``-p log p`` over the
    legal actions only (the illegal ones' terms are 0 either way, p = exp(-1e8) = 0,
    and leaving them out of exp() matters: torch's CPU exp of such inputs is about
    50x its normal speed)."""
    legal_logp = logp_all.masked_fill(~mask, 0.0)
    return -(legal_logp.exp() * legal_logp).sum(1)


__all__ = [
    "ActorCritic",
    "BatchBackend",
    "ActorMLP",
    "BatchLearner",
    "PPOConfig",
    "check_config",
    "masked_entropy",
]
