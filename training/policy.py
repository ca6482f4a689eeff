"""A trained policy as plain numpy: fast inference for opponents, evaluation and the
play CLI.

MaskablePPO's ``MlpPolicy`` computes action logits as ``action_net(policy_net(obs))``
where ``policy_net`` is a stack of Linear + activation layers. Frozen opponents act on
every other step of self-play, so a numpy forward pass (tens of microseconds) instead of
a torch call with its per-call overhead keeps training fast; ``tests/test_training.py``
checks the two agree.

Every backend hands its actor over under SB3's key names (`actor_state`), whatever its
own network calls the layers: that is what `NumpyPolicy`, checkpoints and the shipped
models read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..agents.base import Agent, Turn
from . import checkpoint as ckpt_io

if TYPE_CHECKING:
    import torch

ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
}

_POLICY_LAYER = re.compile(r"mlp_extractor\.policy_net\.(\d+)\.weight$")


def actor_state(
    hidden: Sequence[tuple[Any, Any]], head: tuple[Any, Any]
) -> dict[str, Any]:
    """An MLP actor's ``(weight, bias)`` pairs, the hidden layers in order and then
    the action head, under the common actor key names (SB3 ``MlpPolicy``'s), with the
    values as given (torch's ``(out, in)`` weights, or anything else keyed alike, such
    as the shapes a checkpoint must have)."""
    out = {}
    for i, (w, b) in enumerate(hidden):
        out[f"mlp_extractor.policy_net.{2 * i}.weight"] = w
        out[f"mlp_extractor.policy_net.{2 * i}.bias"] = b
    out["action_net.weight"], out["action_net.bias"] = head
    return out


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

    def state_dict(self) -> dict[str, np.ndarray]:
        """The actor's weights under `actor_state`'s names, in torch's layout (what
        this class reads back)."""
        return actor_state(
            [(w.T.copy(), b.copy()) for w, b in self.layers],
            (self.out[0].T.copy(), self.out[1].copy()),
        )

    def tensors(self) -> dict[str, torch.Tensor]:
        """`state_dict` as torch tensors (a snapshot in a checkpoint)."""
        return ckpt_io.to_torch(self.state_dict())

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


def saved_snapshots(saved: ckpt_io.Checkpoint) -> list[tuple[str, NumpyPolicy]]:
    """The opponent pool's snapshots a checkpoint holds, as (label, weights)."""
    activation = saved.manifest.get("activation", "tanh")
    labels = saved.manifest.get("snapshots", [])
    return [
        (
            labels[i] if i < len(labels) else f"snapshot{i}",
            NumpyPolicy(ckpt_io.to_numpy(sd), activation),
        )
        for i, sd in enumerate(saved.tensors.get("snapshots", []))
    ]


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
