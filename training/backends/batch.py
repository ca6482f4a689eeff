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


class BatchBackend:
    """PPO on batched self-play (`training.backends.Backend`)."""

    method = "batched self-play PPO"

    def __init__(
        self,
        config: TrainConfig,
        pool: OpponentPool,
        run_dir: Path,
        on_step: Callable[[int], None],
    ) -> None:
        check_config(config)
        self.config = config
        self.ppo = p = PPOConfig.from_train_config(config)
        self.pool = pool
        self.on_step = on_step
        torch.manual_seed(p.seed)
        self.env = BatchSelfPlay(
            config.env, config.env_options, p.num_games, pool, seed=p.seed
        )
        # the scalar engine: its sizes and teams go into manifests and evaluations
        self.game = envs.make(config.env, raw=True, **config.env_options).game
        self.rollout_steps = p.rollout_steps
        self.net = ActorCritic(
            self.env.observation_size, self.env.num_actions, p.net_arch, p.activation
        )
        self.optimizer = torch.optim.Adam(
            self.net.parameters(), lr=p.learning_rate, eps=1e-5
        )
        self.buffer = _Rollout(
            p.rollout_steps, self.env.observation_size, self.env.num_actions
        )
        self.generator = torch.Generator().manual_seed(p.seed + 1)
        self._steps = 0
        self._rollout_start_steps = 0
        self._saved_state: tuple[dict, dict] | None = None
        self._collected = False
        self._writer = None
        if config.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(str(run_dir / "tensorboard" / "batch_ppo"))
        self._logs: dict[str, float] = {}
        self._rollout_seconds = 0.0

    @property
    def steps(self) -> int:
        return self._steps

    # --- the warm start ---------------------------------------------------------------
    def imitate(self, data: Any, progress: Callable[[int, float], None]):
        return imitation.fit_warm_start(
            self.net, data, self.config, progress, batch_size=WARM_START_MINIBATCH
        )

    # --- the loop ---------------------------------------------------------------------
    def begin(
        self, total_timesteps: int, on_episode: Callable[[str, float], None]
    ) -> None:
        self.env.on_episode = on_episode
        # a resumed run plays on from other deals than the ones it stopped at
        self.env.reset(seed=self.ppo.seed * 1_000_003 + self._steps)

    def begin_rollout(self) -> None:
        self._rollout_start_steps = self._steps
        self._saved_state = (
            copy.deepcopy(self.net.state_dict()),
            copy.deepcopy(self.optimizer.state_dict()),
        )

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
        stats: dict[str, list[float]] = {
            "policy_gradient_loss": [],
            "value_loss": [],
            "entropy_loss": [],
            "approx_kl": [],
            "clip_fraction": [],
        }
        for _ in range(p.update_epochs):
            order = torch.randperm(size, generator=self.generator)
            for start in range(0, size, p.minibatch_size):
                idx = order[start : start + p.minibatch_size]
                # index_select copies whole rows: about 3x `buf.obs[idx]` here
                obs = buf.obs.index_select(0, idx)
                mask = buf.masks.index_select(0, idx)
                logp_all, values = net(obs, mask)
                actions = buf.actions.index_select(0, idx)
                logp = logp_all.gather(1, actions[:, None]).squeeze(1)
                log_ratio = logp - buf.logp.index_select(0, idx)
                ratio = log_ratio.exp()
                adv = advantages.index_select(0, idx)
                if p.norm_adv and len(idx) > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(
                    -adv * ratio,
                    -adv * ratio.clamp(1 - p.clip_coef, 1 + p.clip_coef),
                ).mean()
                v_loss = ((values - returns.index_select(0, idx)) ** 2).mean()
                # p log p of the legal actions; the illegal ones' terms are 0 either
                # way (p = exp(-1e8) = 0), and leaving them out of exp() matters:
                # torch's CPU exp of such inputs is about 50x its normal speed
                legal_logp = logp_all.masked_fill(~mask, 0.0)
                entropy = -(legal_logp.exp() * legal_logp).sum(1).mean()
                loss = pg_loss - p.ent_coef * entropy + p.vf_coef * v_loss
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), p.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    stats["policy_gradient_loss"].append(float(pg_loss))
                    stats["value_loss"].append(float(v_loss))
                    stats["entropy_loss"].append(-float(entropy))
                    stats["approx_kl"].append(float(((ratio - 1) - log_ratio).mean()))
                    stats["clip_fraction"].append(
                        float(((ratio - 1).abs() > p.clip_coef).float().mean())
                    )
        net.eval()
        self._collected = False
        var = float(returns.var())
        explained = (
            math.nan if var == 0 else 1 - float((returns - buf.values).var()) / var
        )
        update_seconds = time.perf_counter() - t0
        for key, values_ in stats.items():
            self.log(f"train/{key}", float(np.mean(values_)))
        self.log("train/explained_variance", explained)
        self.log("train/learning_rate", p.learning_rate)
        self.log("time/rollout_s", self._rollout_seconds)
        self.log("time/update_s", update_seconds)
        self.log("time/fps", size / (self._rollout_seconds + update_seconds))
        self._flush()

    def rewind(self) -> int:
        if self._saved_state is not None:
            self.net.load_state_dict(self._saved_state[0])
            self.optimizer.load_state_dict(self._saved_state[1])
        self._steps = self._rollout_start_steps
        self._collected = False
        return self._steps

    # --- weights and checkpoints ------------------------------------------------------
    def export_weights(self) -> NumpyPolicy:
        return NumpyPolicy(
            ckpt_io.to_numpy(self.net.state_dict()), self.config.activation
        )

    def checkpoint_tensors(self, snapshots: list[NumpyPolicy]) -> dict[str, Any]:
        return {
            "policy": self.net.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "snapshots": [s.tensors() for s in snapshots],
        }

    def restore(self, saved: ckpt_io.Checkpoint) -> list[tuple[str, NumpyPolicy]]:
        try:
            self.net.load_state_dict(saved.tensors["policy"])
            self.optimizer.load_state_dict(saved.tensors["optimizer"])
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


__all__ = ["ActorCritic", "BatchBackend", "PPOConfig", "check_config"]
