"""A trained policy as plain numpy: fast inference for opponents, evaluation and the
play CLI.

MaskablePPO's ``MlpPolicy`` computes action logits as ``action_net(policy_net(obs))``
where ``policy_net`` is a stack of Linear + activation layers. Frozen opponents act on
every other step of self-play, so a numpy forward pass (tens of microseconds) instead of
a torch call with its per-call overhead keeps training fast; ``tests/test_training.py``
checks the two agree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from ..agents.base import Agent, Turn

ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
}

_POLICY_LAYER = re.compile(r"mlp_extractor\.policy_net\.(\d+)\.weight$")


class NumpyPolicy:
    """Masked action selection from the actor of an SB3 MLP policy."""

    def __init__(self, state_dict: Mapping[str, np.ndarray], activation: str = "tanh"):
        if activation not in ACTIVATIONS:
            raise ValueError(
                f"unknown activation {activation!r}; known: {sorted(ACTIVATIONS)}"
            )
        self.activation = ACTIVATIONS[activation]
        indices = sorted(
            int(m.group(1)) for k in state_dict if (m := _POLICY_LAYER.match(k))
        )
        try:
            self.layers = [
                (
                    np.ascontiguousarray(
                        state_dict[f"mlp_extractor.policy_net.{i}.weight"].T
                    ),
                    state_dict[f"mlp_extractor.policy_net.{i}.bias"],
                )
                for i in indices
            ]
            self.out = (
                np.ascontiguousarray(state_dict["action_net.weight"].T),
                state_dict["action_net.bias"],
            )
        except KeyError as err:
            raise ValueError(
                f"policy weights lack {err}: not an SB3 MLP actor"
            ) from None
        self.observation_size = (
            self.layers[0][0].shape[0] if self.layers else self.out[0].shape[0]
        )
        self.num_actions = self.out[0].shape[1]

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Unmasked action logits for one observation (or a batch)."""
        x = np.asarray(observation, dtype=np.float32)
        for w, b in self.layers:
            x = self.activation(x @ w + b)
        return x @ self.out[0] + self.out[1]

    def act(
        self,
        observation: np.ndarray,
        mask: np.ndarray,
        rng: np.random.Generator | None = None,
        deterministic: bool = True,
    ) -> int:
        """The greedy legal action, or one sampled from the masked softmax."""
        logits = self.logits(observation)
        legal = mask.astype(bool)
        if not legal.any():
            raise ValueError("no legal action in the mask")
        logits = np.where(legal, logits, -np.inf)
        if deterministic or rng is None:
            return int(np.argmax(logits))
        z = np.exp(logits - logits.max())
        p = z / z.sum()
        return int(rng.choice(len(p), p=p))


class PolicyAgent(Agent):
    """A `NumpyPolicy` as an agent: greedy by default, or sampling with its own
    generator."""

    def __init__(
        self,
        policy: NumpyPolicy,
        spec: str,
        deterministic: bool = True,
        seed: int | None = None,
    ):
        self.policy = policy
        self.spec = spec
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, turn: Turn) -> int:
        return self.policy.act(
            turn.observation, turn.mask, self.rng, self.deterministic
        )
