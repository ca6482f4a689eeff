"""RLlib adapter: the multi-agent env through RLlib's own checks and episode
bookkeeping on every variant, then one PPO iteration with the masked module on a local
Ray and a greedy game that must play only legal moves."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from parlour import envs
from parlour.integrations import rllib as prl

# one Ray cluster per test run: with pytest-xdist these tests share one worker
pytestmark = pytest.mark.xdist_group("ray")


def _game_state(raw_env: Any) -> Any:
    """The engine state under a raw Parlour env (one place to follow its name)."""
    return raw_env.game_state


def test_registered_names() -> None:
    from ray.tune.registry import ENV_CREATOR, _global_registry

    for name in envs.names():
        assert _global_registry.contains(ENV_CREATOR, prl.PREFIX + name)


def test_bad_options_fail_before_ray_starts() -> None:
    with pytest.raises(ValueError, match="variant"):
        prl.rllib_env("german_whist_v0", variant="swedish")
    with pytest.raises(ValueError, match="unknown env"):
        prl.ppo_config("skat_v0")


def test_rllib_env_checker(env_name: str, options: dict) -> None:
    """RLlib's own multi-agent env checker, on the env as shipped (it steps with an
    action sampled without the mask)."""
    check_multiagent_environments(prl.rllib_env(env_name, **options))


def test_turns_and_final_rewards(env_name: str, options: dict) -> None:
    """A random legal game recorded in RLlib's `MultiAgentEpisode`: only the agent to
    act observes, its mask is its legal moves, and every agent's episode return (the
    final reward included, also for agents that did not make the last move) is the
    engine's return."""
    env = prl.rllib_env(env_name, illegal_action="raise", **options)
    raw = env.parlour_env.unwrapped
    rng = np.random.default_rng(3)
    obs, infos = env.reset(seed=11)
    episode = MultiAgentEpisode()
    episode.add_env_reset(observations=obs, infos=infos)
    acted = set()
    while True:
        assert len(obs) == 1
        ((agent, o),) = obs.items()
        legal = raw.legal_actions(agent)
        assert np.flatnonzero(o[prl.MASK_KEY]).tolist() == legal
        assert env.observation_spaces[agent].contains(o)
        action = int(rng.choice(legal))
        acted.add(agent)
        obs, rewards, terminated, truncated, infos = env.step({agent: action})
        episode.add_env_step(
            observations=obs,
            actions={agent: action},
            rewards=rewards,
            infos=infos,
            terminateds=terminated,
            truncateds=truncated,
        )
        if terminated["__all__"]:
            break
    assert set(obs) == set(env.possible_agents)
    returns = raw.game.returns(_game_state(raw))
    for seat, agent in enumerate(env.possible_agents):
        if agent in acted:
            got = episode.agent_episodes[agent].get_return()
            assert math.isclose(got, returns[seat], abs_tol=1e-9), (agent, got)
    teams = getattr(raw.game, "teams", None)
    for team in teams() if teams else []:
        assert len({returns[s] for s in team}) == 1  # partners share the result


def _greedy_game(module: Any, env_name: str, options: dict, seed: int) -> dict:
    """One game with every seat playing the module's most likely action; the env
    raises on an illegal one."""
    env = prl.rllib_env(env_name, illegal_action="raise", **options)
    obs, _ = env.reset(seed=seed)
    while True:
        ((agent, o),) = obs.items()
        batch = {"obs": {k: torch.as_tensor(v)[None] for k, v in o.items()}}
        with torch.no_grad():
            logits = module.forward_inference(batch)["action_dist_inputs"][0]
        action = int(logits.argmax())
        assert o[prl.MASK_KEY][action] == 1.0
        obs, rewards, terminated, _, _ = env.step({agent: action})
        if terminated["__all__"]:
            return rewards


@pytest.mark.parametrize(
    ("game", "game_options"),
    [("german_whist_v0", {}), ("forty_fives_v0", {"players": 4})],
    ids=["german_whist", "forty_fives_4p"],
)
def test_one_ppo_iteration_then_a_legal_greedy_game(
    local_ray: None, game: str, game_options: dict
) -> None:
    """One PPO iteration of self-play with the masked module (a tiny batch): every
    sampled episode ends normally and pays every seat, and the weights change; then
    a greedy game of the trained module plays only legal moves and pays every seat."""
    config = (
        prl.ppo_config(game, model_config={"fcnet_hiddens": [32]}, **game_options)
        .env_runners(num_env_runners=0, rollout_fragment_length=64)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=128, minibatch_size=64, num_epochs=1)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    try:
        weights = algo.get_module(prl.SHARED_POLICY).state_dict()
        before = {k: v.clone() for k, v in weights.items()}
        result = algo.train()
        runs = result["env_runners"]
        assert runs["num_episodes"] >= 1
        # Both games are zero-sum, so every episode's return summed over the seats is
        # 0 unless a final reward went missing or an illegal move was penalised (-1).
        assert runs["episode_return_min"] == runs["episode_return_max"] == 0.0
        assert set(runs["agent_episode_returns_mean"]) == set(
            envs.make(game, **game_options).possible_agents
        )
        assert math.isfinite(result["learners"][prl.SHARED_POLICY]["policy_loss"])
        module = algo.get_module(prl.SHARED_POLICY)
        after = module.state_dict()
        assert any(not torch.equal(before[k], after[k]) for k in before)
        rewards = _greedy_game(module, game, game_options, seed=5)
        assert set(rewards) == set(envs.make(game, **game_options).possible_agents)
    finally:
        algo.stop()
