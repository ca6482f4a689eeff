"""Tianshou: a Parlour env for Tianshou's collectors (extra ``tianshou``).

``tianshou.env.PettingZooEnv(envs.make(name))`` takes every Parlour env as it is (the
mask comes from the observation, the per-agent infos are storable). What Tianshou
leaves to the user is collected here: `make_env`, `make_vector_env` (the factory list a
``DummyVectorEnv``/``SubprocVectorEnv`` wants; Parlour envs pickle, so subprocesses
work) and `random_policy`, a ``MultiAgentPolicy`` with Tianshou's masked random policy
in every seat and the agent index that its ``forward`` reads already set (it is
otherwise set only by the multi-agent algorithm classes). The default
``illegal_action="raise"`` is right: Tianshou's policies act inside the mask.

>>> from tianshou.data import Collector
>>> from parlour.integrations.tianshou import make_vector_env, random_policy
>>> venv = make_vector_env("german_whist_v0", 2)
>>> collector = Collector(random_policy(venv), venv)
>>> stats = collector.collect(n_episode=2, reset_before_collect=True)
"""

from __future__ import annotations

from functools import partial
from typing import Any

from tianshou.algorithm.multiagent.marl import MultiAgentPolicy
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.env import BaseVectorEnv, DummyVectorEnv, PettingZooEnv

from .. import envs


def make_env(name: str, **options: Any) -> PettingZooEnv:
    """The Parlour env ``name`` (``options`` as for `parlour.envs.make`) as Tianshou's
    ``PettingZooEnv``."""
    return PettingZooEnv(envs.make(name, **options))


def make_vector_env(
    name: str,
    num_envs: int,
    vector_env: type[BaseVectorEnv] = DummyVectorEnv,
    **options: Any,
) -> BaseVectorEnv:
    """``num_envs`` copies of the env in a Tianshou vector env (``DummyVectorEnv`` by
    default; ``SubprocVectorEnv`` works too)."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    envs.make(name, **options)  # bad options fail here, before any worker starts
    return vector_env([partial(make_env, name, **options)] * num_envs)


def random_policy(env: PettingZooEnv | BaseVectorEnv) -> MultiAgentPolicy:
    """A ``MultiAgentPolicy`` playing uniformly among the legal actions in every seat
    of ``env`` (a `make_env` env or a vector of them)."""
    if isinstance(env, BaseVectorEnv):
        agents = env.get_env_attr("agents", 0)[0]
        space = env.get_env_attr("action_space", 0)[0]
    else:
        agents, space = env.agents, env.action_space
    policy = MultiAgentPolicy(
        {a: MARLRandomDiscreteMaskedOffPolicyAlgorithm.Policy(space) for a in agents}
    )
    policy.agent_idx = {a: i for i, a in enumerate(agents)}
    return policy


__all__ = ["make_env", "make_vector_env", "random_policy"]
