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

import functools
import itertools
import re
from collections.abc import Callable, Mapping, Sequence
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
        return pick(self.logits(observation), mask, rng, deterministic)


class CanonicalPolicy(NumpyPolicy):
    """A network fitted to positions in their canonical form (the env record's
    ``canonical_form``; German Whist's stage 2: ranks compressed, suits in order): each
    observation is put in that form before the network reads it, and its logits are
    mapped back to the real moves. The checkpoint's manifest says so
    (``canonical_form``: `parlour.training.checkpoint.canonical_form_of`), and every
    agent built on it plays this way: it is the network's input, not a way of playing
    it."""

    def __init__(
        self,
        state_dict: Mapping[str, np.ndarray],
        activation: str,
        canonical: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    ):
        super().__init__(state_dict, activation)
        self.canonical = canonical

    def logits(self, observation: np.ndarray) -> np.ndarray:
        x, action_index = self.canonical(observation)
        scores = super().logits(x)  # canonical move j is real move action_index[j]
        return np.take_along_axis(scores, np.argsort(action_index, axis=-1), axis=-1)


def check_canonical_form(env_name: str) -> None:
    """ValueError (one line) unless the env's record puts positions in a canonical
    form (its ``canonical_form``)."""
    from .. import envs

    if not envs.record(env_name).canonical_form:
        having = ", ".join(r.name for r in envs.records() if r.canonical_form)
        raise ValueError(
            f"{env_name} has no canonical form of its positions (a network's input); "
            f"envs that have one: {having or 'none'}"
        )


def canonicalizer(
    env_name: str, game: Any
) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The env record's ``canonical_form`` for ``game``, as a function of the
    observations; ValueError (one line) for an env that has none."""
    from .. import envs

    check_canonical_form(env_name)
    return functools.partial(envs.record(env_name).load("canonical_form"), game)


def make_policy(
    state_dict: Mapping[str, np.ndarray],
    activation: str,
    env_name: str,
    game: Any,
    canonical_form: bool = False,
) -> NumpyPolicy:
    """The network of ``state_dict``: a `CanonicalPolicy` where it was fitted to
    positions in their canonical form, else a `NumpyPolicy`."""
    if canonical_form:
        return CanonicalPolicy(state_dict, activation, canonicalizer(env_name, game))
    return NumpyPolicy(state_dict, activation)


def pick(
    scores: np.ndarray,
    mask: np.ndarray,
    rng: np.random.Generator | None = None,
    deterministic: bool = True,
) -> int:
    """The legal move of the highest score (a logit or a log-probability), or one
    sampled from the softmax of the scores over the legal moves."""
    legal = mask.astype(bool)
    if not legal.any():
        raise ValueError("no legal action in the mask")
    logits = np.where(legal, scores, -np.inf)
    if deterministic or rng is None:
        return int(np.argmax(logits))
    z = np.exp(logits - logits.max())
    p = z / z.sum()
    return int(rng.choice(len(p), p=p))


def masked_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Move probabilities over the legal moves (``mask`` broadcast against
    ``logits``; the last axis is the actions); 0 for the illegal ones."""
    legal = np.broadcast_to(mask.astype(bool), logits.shape)
    z = np.where(legal, logits, -np.inf)
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def check_suit_renaming(env_name: str) -> None:
    """ValueError (one line) unless the env's record renames its suits (its
    ``suit_renaming``: the rules treat the four suits alike)."""
    from .. import envs

    if not envs.record(env_name).suit_renaming:
        having = ", ".join(r.name for r in envs.records() if r.suit_renaming)
        raise ValueError(
            f"{env_name} has no suit renaming to average a policy over (its rules do "
            f"not treat the suits alike); envs that have one: {having or 'none'}"
        )


def suit_renamings(env_name: str, game: Any) -> tuple[np.ndarray, np.ndarray]:
    """Every renaming of the four suits as ``(obs_index, action_index)``, int64
    arrays ``(24, observation_size)`` and ``(24, num_actions)``, the identity first
    (the env record's ``suit_renaming``: ``observation[obs_index[k]]`` is the
    position with its suits renamed, ``mask[action_index[k]]`` its moves).
    ValueError (one line) for an env whose record renames no suits."""
    from .. import envs

    check_suit_renaming(env_name)
    rename = envs.record(env_name).load("suit_renaming")
    pairs = [rename(game, p) for p in itertools.permutations(range(4))]
    return (
        np.stack([o for o, _ in pairs]).astype(np.int64),
        np.stack([a for _, a in pairs]).astype(np.int64),
    )


class SuitAverage:
    """A policy averaged over renamings of the suits: the position renamed every way,
    all in one forward pass, each renaming's masked move probabilities mapped back to
    the real moves, and their mean. Where the rules treat the suits alike, each
    renaming is an equally valid reading of the position, and their mean smooths the
    network's suit-specific errors; a network that is itself symmetric plays as
    before."""

    def __init__(
        self, policy: NumpyPolicy, renamings: tuple[np.ndarray, np.ndarray]
    ) -> None:
        obs_index, action_index = renamings
        if obs_index.shape[1] != policy.observation_size or (
            action_index.shape[1] != policy.num_actions
        ):
            raise ValueError(
                f"the renamings are of {obs_index.shape[1]} observation entries and "
                f"{action_index.shape[1]} actions, the policy's of "
                f"{policy.observation_size} and {policy.num_actions}"
            )
        self.policy = policy
        self.obs_index = obs_index
        # renamed move j is real move action_index[k, j], so real move i is renamed
        # move back[k, i]
        self.back = np.argsort(action_index, axis=1)

    def probabilities(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The mean masked move probabilities over the renamings, for one position
        ``(A,)`` or a batch ``(B, A)``."""
        x = np.asarray(observation, dtype=np.float32)
        renamed = x[..., self.obs_index]  # (..., R, obs)
        # one stacked matmul of one-row products, not one product of many rows:
        # OpenBLAS splits a many-row product over its threads, and on a busy machine
        # they wait for each other (the 2-core machine at load 4: 78 ms a decision
        # against 1.2 ms)
        logits = self.policy.logits(renamed[..., None, :])[..., 0, :]  # renamed moves
        back = np.broadcast_to(self.back, logits.shape)
        real = np.take_along_axis(logits, back, axis=-1)
        mask = np.asarray(mask).astype(bool)[..., None, :]
        return masked_softmax(real, mask).mean(axis=-2)

    def log_probabilities(
        self, observation: np.ndarray, mask: np.ndarray
    ) -> np.ndarray:
        """The log of `probabilities` (-inf for the illegal moves): scores whose
        softmax over the legal moves is the mean, and whose argmax is its best move."""
        with np.errstate(divide="ignore"):
            return np.log(self.probabilities(observation, mask))


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
    generator; with ``suit_average`` (a `SuitAverage` of the same policy) it plays the
    policy averaged over the suit renamings."""

    def __init__(
        self,
        policy: NumpyPolicy,
        spec: str,
        deterministic: bool = True,
        seed: int | None = None,
        suit_average: SuitAverage | None = None,
    ):
        if suit_average is not None and suit_average.policy is not policy:
            raise ValueError("suit_average must average the agent's own policy")
        self.policy = policy
        self.spec = spec
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        self.suit_average = suit_average

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, turn: Turn) -> int:
        if self.suit_average is None:
            scores = self.policy.logits(turn.observation)
        else:
            scores = self.suit_average.log_probabilities(turn.observation, turn.mask)
        return pick(scores, turn.mask, self.rng, self.deterministic)
