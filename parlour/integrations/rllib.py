"""Parlour games as RLlib multi-agent envs, with a masked PPO module.

For RLlib's current API stack (RLModules, EnvRunners, ConnectorV2; ``ray[rllib]``
2.60). Importing this module registers every env with ``ray.tune.register_env`` under
``"parlour/<env name>"``, with the env options as the ``env_config``::

    from ray.rllib.algorithms.ppo import PPOConfig
    from parlour.integrations import rllib as parlour_rllib

    config = parlour_rllib.ppo_config("german_whist_v0", variant="honeymoon")
    # the same by hand:
    config = (
        PPOConfig()
        .environment("parlour/german_whist_v0", env_config={"variant": "honeymoon"})
        .multi_agent(policies={"shared"}, policy_mapping_fn=parlour_rllib.shared_policy)
        .rl_module(rl_module_spec=parlour_rllib.masked_ppo_multi_spec())
    )
    algo = config.build_algo()

The env (`ParlourMultiAgentEnv`)
    Turn-based: after ``reset`` and each ``step`` only the agent to act gets an
    observation, ``{"action_mask": float32 0/1 vector, "observations": the env's
    float32 observation}`` (the layout RLlib's action-masking example uses; the mask
    is float so that its log can be added to logits). ``step`` takes that agent's
    action. Rewards are the PettingZoo env's per-step rewards for every agent, so a
    reward earned while another agent moves (Herzeln's tricks, the end of a game) waits
    in RLlib's episode until that agent's next step. When the game ends every agent
    gets its final observation, reward and ``terminated``; partners (Forty-Fives with 4
    or 6 players) each receive the team's reward, as the env pays it.

Illegal actions
    RLlib's env checker steps a new env with an action sampled without the mask, so
    the env defaults to ``illegal_action="penalize"`` (an illegal action ends the game
    with reward -1 for the offender, PettingZoo's convention). The masked module never
    chooses one; pass ``illegal_action="raise"`` to make any illegal action an error.

The module (`MaskedPPOTorchRLModule`)
    RLlib's default PPO torch module built on the ``"observations"`` part; the mask
    sets the logits of illegal actions to the most negative float, so they are never
    sampled (and never chosen greedily). `masked_ppo_spec` / `masked_ppo_multi_spec`
    return ready specs; `ppo_config` a PPO config with one policy shared by all seats.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
    DefaultPPOTorchRLModule,
)
from ray.rllib.core.columns import Columns
from ray.rllib.core.models.base import ACTOR, ENCODER_OUT
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN
from ray.tune.registry import register_env

from parlour import envs

PREFIX = "parlour/"
SHARED_POLICY = "shared"
MASK_KEY = "action_mask"
OBS_KEY = "observations"


class ParlourMultiAgentEnv(MultiAgentEnv):
    """A Parlour env as an RLlib `MultiAgentEnv` (turn-based, masked observations).

    ``config`` is RLlib's ``env_config``: the env options plus ``"env"``, the env name
    (`rllib_env` and the registered creators fill it in).
    """

    def __init__(self, config: Mapping[str, Any] | None = None):
        super().__init__()
        options = dict(config or {})
        name = options.pop("env", None)
        if name is None:
            raise ValueError(
                "env_config needs 'env', the Parlour env name; known: "
                + ", ".join(envs.names())
            )
        options.setdefault("illegal_action", "penalize")
        self.name = name
        self.options = options
        self._env = envs.make(name, **options)  # ValueError on a bad option
        raw = self._env.unwrapped
        self.possible_agents = list(raw.possible_agents)
        self.agents = list(self.possible_agents)
        first = self.possible_agents[0]
        inner = raw.observation_space(first)["observation"]
        n = raw.action_space(first).n
        space = gym.spaces.Dict(
            {
                MASK_KEY: gym.spaces.Box(0.0, 1.0, shape=(n,), dtype=np.float32),
                OBS_KEY: inner,
            }
        )
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: raw.action_space(a) for a in self.possible_agents}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self._env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        agent = self._env.agent_selection
        return {agent: self._observe(agent)}, {}

    def step(
        self, action_dict: Mapping[str, Any]
    ) -> tuple[dict, dict, dict, dict, dict]:
        env = self._env
        agent = env.agent_selection
        if agent not in action_dict:
            raise ValueError(
                f"{agent} is to act, but the action dict holds {sorted(action_dict)}"
            )
        env.step(action_dict[agent])
        raw = env.unwrapped
        rewards = {a: float(raw.rewards[a]) for a in self.possible_agents}
        if all(raw.terminations[a] or raw.truncations[a] for a in raw.agents):
            # Everybody's game is over: each agent's final observation and reward.
            obs = {a: self._observe(a) for a in self.possible_agents}
            terminated = {a: bool(raw.terminations[a]) for a in self.possible_agents}
            truncated = {a: bool(raw.truncations[a]) for a in self.possible_agents}
            terminated["__all__"] = all(terminated.values())
            truncated["__all__"] = not terminated["__all__"]
            return obs, rewards, terminated, truncated, {}
        nxt = env.agent_selection
        return (
            {nxt: self._observe(nxt)},
            rewards,
            {"__all__": False},
            {"__all__": False},
            {},
        )

    def render(self) -> str | None:
        return self._env.render()

    def close(self) -> None:
        self._env.close()

    @property
    def parlour_env(self) -> Any:
        """The PettingZoo env underneath (for its action names, rendering, …)."""
        return self._env

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self._env.unwrapped.observe(agent)
        return {
            MASK_KEY: obs["action_mask"].astype(np.float32),
            OBS_KEY: obs["observation"],
        }


def rllib_env(name: str, **options: Any) -> ParlourMultiAgentEnv:
    """The Parlour env ``name`` with ``options`` as an RLlib `MultiAgentEnv`."""
    return ParlourMultiAgentEnv({"env": name, **options})


def _creator(name: str):
    def create(config: Mapping[str, Any]) -> ParlourMultiAgentEnv:
        return ParlourMultiAgentEnv({**dict(config or {}), "env": name})

    return create


def register() -> list[str]:
    """Register every env as ``"parlour/<name>"`` with ``ray.tune.register_env`` (done
    on import, and by `ppo_config`) and return the registered names. Ray keeps the
    registry in the running Ray: after ``ray.shutdown()`` a config built by hand needs
    ``register()`` again before ``build_algo()``."""
    out = []
    for name in envs.names():
        register_env(PREFIX + name, _creator(name))
        out.append(PREFIX + name)
    return out


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO torch module on the ``"observations"`` part of a masked
    observation, with illegal actions' logits set to the most negative float.

    The networks are built for the inner observation space; ``observation_space``
    stays the env's Dict space so that RLlib's connectors see what the env sends.
    """

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any):
        if not (
            isinstance(observation_space, gym.spaces.Dict)
            and set(observation_space.spaces) == {MASK_KEY, OBS_KEY}
        ):
            raise ValueError(
                "MaskedPPOTorchRLModule needs a Dict observation space with keys "
                f"{MASK_KEY!r} and {OBS_KEY!r} (a ParlourMultiAgentEnv's), got "
                f"{observation_space}"
            )
        self._masked_space = observation_space
        super().__init__(observation_space=observation_space[OBS_KEY], **kwargs)

    def setup(self) -> None:
        super().setup()
        self.observation_space = self._masked_space

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, Any]]:
        """(mask, the batch with only the inner observations), not changing
        ``batch``."""
        obs = batch[Columns.OBS]
        return obs[MASK_KEY], {**batch, Columns.OBS: obs[OBS_KEY]}

    @staticmethod
    def _masked(out: dict[str, Any], mask: torch.Tensor) -> dict[str, Any]:
        logits = out[Columns.ACTION_DIST_INPUTS]
        # log(1) = 0 keeps a legal logit; log(0) = -inf, clamped to a finite minimum
        # so that an all-zero mask (a finished agent's last observation) stays finite.
        out[Columns.ACTION_DIST_INPUTS] = logits + torch.clamp(
            torch.log(mask), min=FLOAT_MIN
        )
        return out

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._masked(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._masked(super()._forward_train(inner, **kwargs), mask)

    def compute_values(
        self, batch: dict[str, Any], embeddings: Any | None = None
    ) -> torch.Tensor:
        if isinstance(batch[Columns.OBS], dict):
            batch = self._split(batch)[1]
        return super().compute_values(batch, embeddings)

    # what parlour.training.imitation.fit trains (its ImitationPolicy protocol)
    def masked_log_probs(self, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """Log-probabilities ``(N, A)`` of the masked policy for inner observations
        (illegal actions' logits at -1e8, as in SB3's masked distribution)."""
        actor = self.encoder({Columns.OBS: obs})[ENCODER_OUT][ACTOR]
        logits = self.pi(actor)
        return torch.log_softmax(logits.masked_fill(~masks.bool(), -1e8), dim=1)

    def predict_values(self, obs: torch.Tensor) -> torch.Tensor:
        """The critic's values ``(N,)`` for inner observations."""
        return self.compute_values({Columns.OBS: obs})


def masked_ppo_spec(model_config: dict[str, Any] | None = None) -> RLModuleSpec:
    """An `RLModuleSpec` of `MaskedPPOTorchRLModule` (spaces come from the env)."""
    return RLModuleSpec(
        module_class=MaskedPPOTorchRLModule, model_config=dict(model_config or {})
    )


def masked_ppo_multi_spec(
    model_config: dict[str, Any] | None = None, module_id: str = SHARED_POLICY
) -> MultiRLModuleSpec:
    """A `MultiRLModuleSpec` with one masked PPO module, ``module_id``, for all
    seats."""
    return MultiRLModuleSpec(rl_module_specs={module_id: masked_ppo_spec(model_config)})


def shared_policy(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """RLlib policy mapping: every seat plays the one shared module (self-play)."""
    return SHARED_POLICY


def ppo_config(
    name: str, model_config: dict[str, Any] | None = None, **options: Any
) -> PPOConfig:
    """A PPO config for self-play on ``name`` (options as its ``env_config``) with one
    shared masked module; chain ``.training(...)``, ``.env_runners(...)`` as usual.

    The options are checked here, so a typo fails before Ray starts any worker. The
    envs are registered again here: Ray Tune's registry lives in the running Ray, so a
    ``ray.shutdown()`` forgets the registration made at import.
    """
    rllib_env(name, **options).close()
    register()
    return (
        PPOConfig()
        .environment(PREFIX + name, env_config=dict(options))
        .multi_agent(policies={SHARED_POLICY}, policy_mapping_fn=shared_policy)
        .rl_module(rl_module_spec=masked_ppo_multi_spec(model_config))
    )


register()

__all__ = [
    "MASK_KEY",
    "OBS_KEY",
    "PREFIX",
    "SHARED_POLICY",
    "MaskedPPOTorchRLModule",
    "ParlourMultiAgentEnv",
    "masked_ppo_multi_spec",
    "masked_ppo_spec",
    "ppo_config",
    "register",
    "rllib_env",
    "shared_policy",
]
