"""Deep Monte-Carlo (DMC) on the batched self-play rollout.

Zha, Xie, Ma, Zhang, Lian, Hu, Liu: "DouZero: Mastering DouDizhu with Self-Play Deep
Reinforcement Learning", ICML 2021. DMC learns action values Q(s, a) by regressing the
Monte-Carlo return of each decision (the learner seat's rewards from it to the end of
the episode, undiscounted as in DouZero: ``gamma`` is not used) with a mean squared
error, and plays epsilon-greedy over the legal actions (``epsilon`` falling to
``epsilon_end``; DouZero keeps 0.01 throughout). There is no bootstrapping: a decision
is trained on once its episode has ended, so the decisions of games still in play at
the end of a rollout wait for the next one.

DouZero feeds each legal action's features (its cards) into the network beside the
state's and evaluates one Q per legal action. Here an action is one card or one call,
whose features are its one-hot vector, and the network has one output per action: the
one-hot's weights sit in the output layer instead of the first, so one forward pass
gives every legal action's Q and the checkpoint is an ordinary actor (`ActorMLP`).
Greedy play, the ``ckpt:PATH`` agent's, is the argmax of the masked Q-values; as a
frozen opponent in the pool a snapshot samples from their softmax.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
from torch import nn

from ..backends.batch import ActorMLP, BatchLearner
from .explore import epsilon, epsilon_greedy

_FIELDS = ("obs", "action", "game", "before", "ret")


class DMCBackend(BatchLearner):
    """DouZero's Deep Monte-Carlo on batched self-play."""

    method = "batched self-play DMC"
    log_name = "batch_dmc"

    def build(self) -> None:
        c = self.config
        self.q = ActorMLP(
            self.env.observation_size,
            self.env.num_actions,
            c.net_arch,
            c.activation,
            head_gain=1.0,
        )
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=c.learning_rate)
        B = self.env.batch_size
        # the learner seat's rewards so far in each game's episode (times reward_scale)
        self._so_far = torch.zeros(B)
        self._waiting = self._empty(0)  # decisions whose episode has not ended
        self._ready = self._empty(0)  # the rollout's decisions with their returns

    def _empty(self, n: int) -> dict[str, torch.Tensor]:
        return {
            "obs": torch.zeros(n, self.env.observation_size),
            "action": torch.zeros(n, dtype=torch.int64),
            "game": torch.zeros(n, dtype=torch.int64),
            "before": torch.zeros(n),  # the game's rewards before the decision
            "ret": torch.zeros(n),
        }

    def modules(self) -> dict[str, Any]:
        return {"policy": self.q, "optimizer": self.optimizer}

    def reset_games(self) -> None:
        # the games were dealt afresh: nothing waits for an episode's end
        self._so_far.zero_()
        self._waiting = self._empty(0)

    def collect(self) -> bool:
        """Play ``rollout_steps`` learner decisions epsilon-greedily; every stored
        decision whose episode ends gets its Monte-Carlo return."""
        t0 = time.perf_counter()
        env, size, B = self.env, self.rollout_steps, self.env.batch_size
        env.refresh()
        carried = len(self._waiting["obs"])
        buf = self._empty(carried + size)
        for key in _FIELDS:
            buf[key][:carried] = self._waiting[key]
        resolved = torch.zeros(carried + size, dtype=torch.bool)
        eps = epsilon(self.config, self._steps)
        filled, k = carried, 0
        while k < size:
            turn = env.turn
            rows = turn.learner.nonzero().squeeze(1)
            obs = turn.observation.index_select(0, rows)
            mask = turn.mask.index_select(0, rows)
            with torch.no_grad():
                actions = epsilon_greedy(self.q(obs), mask, eps, self.generator)
            # decisions past the rollout's size are played, not stored (their
            # predecessors' returns come from the episode's end all the same)
            n = min(rows.numel(), size - k)
            stored = slice(filled, filled + n)
            buf["obs"][stored] = obs[:n]
            buf["action"][stored] = actions[:n]
            buf["game"][stored] = rows[:n]
            buf["before"][stored] = self._so_far.index_select(0, rows[:n])
            filled += n
            learner_actions = torch.zeros(B, dtype=torch.int64)
            learner_actions[rows] = actions
            _, rewards, dones = env.step(learner_actions)
            self._so_far += rewards * self.config.reward_scale
            if dones.any():
                ended = dones.index_select(0, buf["game"][:filled]) & ~resolved[:filled]
                at = ended.nonzero().squeeze(1)
                final = self._so_far.index_select(0, buf["game"].index_select(0, at))
                buf["ret"][at] = final - buf["before"].index_select(0, at)
                resolved[at] = True
                self._so_far[dones] = 0.0
            k += n
            self.on_step(self._steps + k)
        done = resolved.nonzero().squeeze(1)
        waiting = (~resolved).nonzero().squeeze(1)
        self._ready = {key: buf[key].index_select(0, done) for key in _FIELDS}
        self._waiting = {key: buf[key].index_select(0, waiting) for key in _FIELDS}
        self._steps += size
        self._collected = True
        self._rollout_seconds = time.perf_counter() - t0
        return True

    def update(self) -> None:
        """``n_epochs`` passes in shuffled minibatches of ``batch_size`` over the
        decisions whose returns this rollout learned: Q(s, a) regressed on them."""
        if not self._collected:
            return
        t0 = time.perf_counter()
        c, data = self.config, self._ready
        n = len(data["obs"])
        losses = []
        self.q.train()
        for _ in range(c.n_epochs):
            order = torch.randperm(n, generator=self.generator)
            for start in range(0, n, c.batch_size):
                idx = order[start : start + c.batch_size]
                loss = self.loss(
                    data["obs"].index_select(0, idx),
                    data["action"].index_select(0, idx),
                    data["ret"].index_select(0, idx),
                )
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.q.parameters(), c.max_grad_norm)
                self.optimizer.step()
                losses.append(float(loss.detach()))
        self.q.eval()
        self._collected = False
        if losses:
            self.log("train/q_loss", float(np.mean(losses)))
        self.log("train/epsilon", epsilon(c, self._steps))
        self.log("train/decisions_trained", float(n))
        self.log("train/decisions_waiting", float(len(self._waiting["obs"])))
        self._log_timing(self.rollout_steps, time.perf_counter() - t0)

    def loss(
        self, obs: torch.Tensor, actions: torch.Tensor, returns: torch.Tensor
    ) -> torch.Tensor:
        """The mean squared error of Q(s, a) against the Monte-Carlo returns."""
        q = self.q(obs).gather(1, actions[:, None]).squeeze(1)
        return nn.functional.mse_loss(q, returns)


__all__ = ["DMCBackend"]
