"""Neural fictitious self-play (NFSP) on the batched self-play rollout.

Heinrich and Silver, "Deep Reinforcement Learning from Self-Play in Imperfect-
Information Games", arXiv:1603.01121 (2016). The learner has two networks: a best
response, a Q-network trained off-policy (DQN: a circular replay buffer of its
transitions, a target network, epsilon-greedy play) to exploit the field, and an average
policy, fitted by supervised learning (cross-entropy) to the best response's own
decisions kept in a reservoir buffer (uniform over all it ever took), which approximates
the average of the best responses: the fictitious-play strategy that approaches a Nash
equilibrium. Each game's learner plays the best response with probability ``nfsp_eta``
(the anticipatory parameter) for the whole episode, else the average policy.

Here the other seats are the opponent pool's (frozen snapshots of the average policy,
random play) rather than NFSP agents learning at the same time; the checkpoint's
``policy``, what ``ckpt:PATH`` agents and the evaluations play, is the average policy.
A learner decision's transition runs to the game's next learner decision (its
observation and legal actions) or to the end of the episode, with the rewards of the
learner's seat in between. An update takes ``n_epochs × rollout / batch_size``
gradient steps for each network (PPO's passes over a rollout, as many samples), once
the buffers hold a minibatch. The buffers are not checkpointed: a resumed run fills
them again.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import torch
from torch import nn

from ..backends.batch import ActorMLP, BatchLearner
from ..batch_selfplay import sample_masked
from .explore import epsilon, epsilon_greedy


class NFSPBackend(BatchLearner):
    """NFSP's best response (DQN) and average policy (supervised) on batched
    self-play."""

    method = "batched self-play NFSP"
    log_name = "batch_nfsp"

    def build(self) -> None:
        c = self.config
        n_obs, A = self.env.observation_size, self.env.num_actions
        self.q = ActorMLP(n_obs, A, c.net_arch, c.activation, head_gain=1.0)
        self.q_target = copy.deepcopy(self.q).requires_grad_(False)
        self.average = ActorMLP(n_obs, A, c.net_arch, c.activation)
        self.q_optimizer = torch.optim.Adam(self.q.parameters(), lr=c.learning_rate)
        self.optimizer = torch.optim.Adam(
            self.average.parameters(), lr=c.nfsp_sl_learning_rate
        )
        R, S = c.replay_size, c.reservoir_size
        # the best response's transitions (a ring; `complete` once the game's next
        # decision or the episode's end is known)
        self.replay = {
            "obs": torch.zeros(R, n_obs),
            "action": torch.zeros(R, dtype=torch.int64),
            "reward": torch.zeros(R),
            "done": torch.zeros(R, dtype=torch.bool),
            "next_obs": torch.zeros(R, n_obs),
            "next_mask": torch.zeros(R, A, dtype=torch.bool),
            "complete": torch.zeros(R, dtype=torch.bool),
        }
        self._replay_at = 0
        # the best response's decisions (reservoir sampling over all of them)
        self.reservoir = {
            "obs": torch.zeros(S, n_obs),
            "mask": torch.zeros(S, A, dtype=torch.bool),
            "action": torch.zeros(S, dtype=torch.int64),
        }
        self._seen = 0
        B = self.env.batch_size
        self._last = torch.full((B,), -1, dtype=torch.int64)  # pending replay slot
        self._best_response = torch.zeros(B, dtype=torch.bool)
        self._gradient_steps = 0

    def modules(self) -> dict[str, Any]:
        return {
            "policy": self.average,
            "optimizer": self.optimizer,
            "q": self.q,
            "q_target": self.q_target,
            "q_optimizer": self.q_optimizer,
        }

    def reset_games(self) -> None:
        self._last.fill_(-1)
        self._best_response = self._draw_policies(self.env.batch_size)

    def _draw_policies(self, n: int) -> torch.Tensor:
        """Per new episode: play the best response (True) with probability eta."""
        return torch.rand(n, generator=self.generator) < self.config.nfsp_eta

    # --- the rollout ------------------------------------------------------------------
    def act(
        self, obs: torch.Tensor, mask: torch.Tensor, best_response: torch.Tensor
    ) -> torch.Tensor:
        """The learner's actions: epsilon-greedy Q where ``best_response``, a sample
        of the average policy elsewhere."""
        actions = torch.zeros(len(obs), dtype=torch.int64)
        eps = epsilon(self.config, self._steps)
        with torch.no_grad():
            br = best_response.nonzero().squeeze(1)
            if br.numel():
                m = mask.index_select(0, br)
                q = self.q(obs.index_select(0, br))
                actions[br] = epsilon_greedy(q, m, eps, self.generator)
            avg = (~best_response).nonzero().squeeze(1)
            if avg.numel():
                logits = self.average(obs.index_select(0, avg))
                actions[avg] = sample_masked(
                    logits, mask.index_select(0, avg), self.generator
                )
        return actions

    def collect(self) -> bool:
        """Play ``rollout_steps`` learner decisions; store every transition in the
        replay buffer and the best response's decisions in the reservoir."""
        t0 = time.perf_counter()
        env, size, B = self.env, self.rollout_steps, self.env.batch_size
        env.refresh()
        k = 0
        while k < size:
            turn = env.turn
            rows = turn.learner.nonzero().squeeze(1)
            obs = turn.observation.index_select(0, rows)
            mask = turn.mask.index_select(0, rows)
            br = self._best_response.index_select(0, rows)
            actions = self.act(obs, mask, br)
            self._keep_best_response(obs[br], mask[br], actions[br])
            self._store(rows, obs, mask, actions)
            learner_actions = torch.zeros(B, dtype=torch.int64)
            learner_actions[rows] = actions
            _, rewards, dones = env.step(learner_actions)
            self._reward(rewards, dones)
            k += min(rows.numel(), size - k)
            self.on_step(self._steps + k)
        self._steps += size
        self._collected = True
        self._rollout_seconds = time.perf_counter() - t0
        return True

    def _store(
        self,
        rows: torch.Tensor,
        obs: torch.Tensor,
        mask: torch.Tensor,
        actions: torch.Tensor,
    ) -> None:
        """This step's decisions complete their games' pending transitions and
        start new ones."""
        r = self.replay
        prev = self._last.index_select(0, rows)
        linked = prev >= 0
        done_slots = prev[linked]
        r["next_obs"][done_slots] = obs[linked]
        r["next_mask"][done_slots] = mask[linked]
        r["complete"][done_slots] = True
        size = len(r["obs"])
        slots = (self._replay_at + torch.arange(rows.numel())) % size
        self._replay_at = int(self._replay_at + rows.numel()) % size
        # a game whose pending transition is overwritten loses it
        self._last[torch.isin(self._last, slots)] = -1
        r["obs"][slots] = obs
        r["action"][slots] = actions
        r["reward"][slots] = 0.0
        r["done"][slots] = False
        r["complete"][slots] = False
        self._last[rows] = slots

    def _reward(self, rewards: torch.Tensor, dones: torch.Tensor) -> None:
        """The step's rewards go to the games' pending transitions; an episode's end
        completes its transition and draws the game's next policy."""
        r = self.replay
        open_ = self._last >= 0
        r["reward"].index_add_(
            0, self._last[open_], rewards[open_] * self.config.reward_scale
        )
        ended = self._last[open_ & dones]
        r["done"][ended] = True
        r["complete"][ended] = True
        self._last[dones] = -1
        if dones.any():
            self._best_response[dones] = self._draw_policies(int(dones.sum()))

    def _keep_best_response(
        self, obs: torch.Tensor, mask: torch.Tensor, actions: torch.Tensor
    ) -> None:
        """Reservoir sampling: the t-th decision ever seen replaces a uniform slot
        with probability size / (t + 1) once the reservoir is full."""
        n = len(obs)
        if n == 0:
            return
        res = self.reservoir
        size = len(res["obs"])
        t = self._seen + torch.arange(n)
        j = (torch.rand(n, generator=self.generator) * (t + 1)).long()
        slot = torch.where(t < size, t, j)
        keep = slot < size
        slot = slot[keep]
        res["obs"][slot] = obs[keep]
        res["mask"][slot] = mask[keep]
        res["action"][slot] = actions[keep]
        self._seen += n

    # --- the update -------------------------------------------------------------------
    def update(self) -> None:
        """``n_epochs × rollout / batch_size`` gradient steps of each network on
        minibatches drawn from its buffer."""
        if not self._collected:
            return
        t0 = time.perf_counter()
        c = self.config
        n_steps = max(1, c.n_epochs * self.rollout_steps // c.batch_size)
        complete = self.replay["complete"].nonzero().squeeze(1)
        filled = min(self._seen, len(self.reservoir["obs"]))
        q_losses, sl_losses = [], []
        self.q.train()
        self.average.train()
        for _ in range(n_steps):
            if complete.numel() >= c.batch_size:
                pick = torch.randint(
                    complete.numel(), (c.batch_size,), generator=self.generator
                )
                q_losses.append(self.q_step(complete[pick]))
            if filled >= c.batch_size:
                idx = torch.randint(filled, (c.batch_size,), generator=self.generator)
                sl_losses.append(self.average_step(idx))
        self.q.eval()
        self.average.eval()
        self._collected = False
        if q_losses:
            self.log("train/q_loss", float(np.mean(q_losses)))
        if sl_losses:
            self.log("train/average_policy_loss", float(np.mean(sl_losses)))
        self.log("train/epsilon", epsilon(c, self._steps))
        self.log("train/replay_transitions", float(complete.numel()))
        self._log_timing(self.rollout_steps, time.perf_counter() - t0)

    def q_loss(self, idx: torch.Tensor) -> torch.Tensor:
        """DQN's Huber loss on the replay transitions ``idx``: Q(s, a) against
        ``r + gamma * max over the legal a' of Q_target(s', a')`` (r at an
        episode's end)."""
        r = self.replay
        q = self.q(r["obs"].index_select(0, idx))
        q = q.gather(1, r["action"].index_select(0, idx)[:, None]).squeeze(1)
        with torch.no_grad():
            nxt = self.q_target(r["next_obs"].index_select(0, idx))
            nxt = nxt.masked_fill(~r["next_mask"].index_select(0, idx), -torch.inf)
            best = nxt.max(dim=1).values
            done = r["done"].index_select(0, idx)
            best = torch.where(done, torch.zeros_like(best), best)
            target = r["reward"].index_select(0, idx) + self.config.gamma * best
        return nn.functional.smooth_l1_loss(q, target)

    def q_step(self, idx: torch.Tensor) -> float:
        """One gradient step of the best response; the target network copies it
        every ``target_update_every`` steps."""
        loss = self.q_loss(idx)
        self.q_optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.q.parameters(), self.config.max_grad_norm)
        self.q_optimizer.step()
        self._gradient_steps += 1
        if self._gradient_steps % self.config.target_update_every == 0:
            self.q_target.load_state_dict(self.q.state_dict())
        return float(loss.detach())

    def average_loss(self, idx: torch.Tensor) -> torch.Tensor:
        """The average policy's cross-entropy on the reservoir's decisions ``idx``."""
        res = self.reservoir
        logp = self.average.masked_log_probs(
            res["obs"].index_select(0, idx), res["mask"].index_select(0, idx)
        )
        return -logp.gather(1, res["action"].index_select(0, idx)[:, None]).mean()

    def average_step(self, idx: torch.Tensor) -> float:
        """One gradient step of the average policy."""
        loss = self.average_loss(idx)
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.average.parameters(), self.config.max_grad_norm)
        self.optimizer.step()
        return float(loss.detach())


__all__ = ["NFSPBackend"]
