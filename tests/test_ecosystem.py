"""The ecosystem's own checks on the envs as shipped, and the trainers that take them.

Every test taking ``env_name`` and ``options`` runs once per entry of
``parlour.envs.VARIANTS`` (``conftest.py``). Nothing here wraps an env to make a
check pass: PettingZoo's ``api_test``, ``seed_test``, ``render_test`` and (through
PettingZoo's own ``turn_based_aec_to_parallel``) ``parallel_api_test`` /
``parallel_seed_test`` get ``envs.make(...)``; TorchRL's ``PettingZooWrapper`` and
Tianshou's ``PettingZooEnv`` get it too; gymnasium's and SB3's ``check_env`` get the
registered ``parlour/SelfPlay-<env>``.

Modes: everything runs with the default ``illegal_action="raise"`` except the tools
that sample actions without the mask (``parallel_seed_test``, the two ``check_env``),
which need ``"penalize"`` (``docs/integrations.md``). The ``slow`` tests repeat the
copy and infos checks over many seeds and whole episodes (``make test-slow``).
"""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env as gym_check_env
from pettingzoo.test import (
    api_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
)
from pettingzoo.utils.conversions import turn_based_aec_to_parallel
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import check_env_specs

from parlour import envs
from parlour.envs import IllegalActionError
from parlour.integrations import tianshou as ts_helpers
from parlour.integrations import torchrl as trl_helpers
from parlour.training import selfplay

torch.set_num_threads(1)

#: warnings PettingZoo's checkers raise for every env with a dict observation and mask
#: (as for PettingZoo's own classic games), and the one our reset gives for the probe
#: ``reset(options={"options": 1})`` of api_test / parallel_api_test
CHECKER_NOISE = [
    "Observation is not a NumPy array",
    "Observation space for each agent",
    r"unknown reset option\(s\) \['options'\]",
]


def quiet_checker(fn: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        for message in CHECKER_NOISE:
            warnings.filterwarnings("ignore", message=message)
        return fn()


def random_legal(env: Any, rng: np.random.Generator) -> int | None:
    """A random legal action of the agent to act (None once it is done)."""
    if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
        return None
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    return int(legal[rng.integers(len(legal))])


def record(env: Any, rng: np.random.Generator, steps: int) -> list[tuple]:
    """Play ``steps`` random legal steps (fewer if the episode ends): what every agent
    was shown at each step."""
    out = []
    for _ in range(steps):
        if not env.agents:
            break
        action = random_legal(env, rng)
        env.step(action)
        if not env.agents:
            break
        agent = env.agent_selection
        obs = env.observe(agent)
        out.append(
            (
                agent,
                action,
                obs["observation"].tobytes(),
                obs["action_mask"].tobytes(),
                dict(env.rewards),
                dict(env.terminations),
                {a: dict(i) for a, i in env.infos.items()},
            )
        )
    return out


# --- PettingZoo's checks, called directly ---------------------------------------------
def test_pettingzoo_api(env_name: str, options: dict) -> None:
    quiet_checker(lambda: api_test(envs.make(env_name, **options), num_cycles=1000))


def test_pettingzoo_seed(env_name: str, options: dict) -> None:
    quiet_checker(lambda: seed_test(lambda: envs.make(env_name, **options), 500))


def test_pettingzoo_render(
    env_name: str, options: dict, capsys: pytest.CaptureFixture
) -> None:
    """``render_test`` over the env's render modes: "human" prints and returns None,
    "ansi" returns the text."""
    render_test(
        lambda render_mode=None: envs.make(env_name, **options, render_mode=render_mode)
    )
    assert capsys.readouterr().out.strip(), "human mode printed nothing"


def test_pettingzoo_parallel_api(env_name: str, options: dict) -> None:
    par = turn_based_aec_to_parallel(envs.make(env_name, **options))
    quiet_checker(lambda: parallel_api_test(par, num_cycles=1000))


def test_pettingzoo_parallel_seed(env_name: str, options: dict) -> None:
    """``parallel_seed_test`` samples actions without the mask: with
    ``illegal_action="penalize"`` an illegal one ends the episode with the penalty."""
    parallel_seed_test(
        lambda: turn_based_aec_to_parallel(
            envs.make(env_name, **options, illegal_action="penalize")
        )
    )


def test_parallel_seed_needs_penalize() -> None:
    """With the default ``"raise"`` the unmasked sampling of ``parallel_seed_test`` hits
    an illegal action (German Whist: 52 actions, 13 legal at most): the reason the docs
    name ``"penalize"`` for it."""
    with pytest.raises(IllegalActionError):
        for _ in range(20):  # one step per run; a run may by chance pick a legal card
            parallel_seed_test(
                lambda: turn_based_aec_to_parallel(envs.make("german_whist_v0"))
            )


# --- PettingZoo conventions -----------------------------------------------------------
def test_render_human_prints_what_ansi_returns(
    env_name: str, options: dict, capsys: pytest.CaptureFixture
) -> None:
    human = envs.make(env_name, **options, render_mode="human")
    ansi = envs.make(env_name, **options, render_mode="ansi")
    human.reset(seed=4)
    ansi.reset(seed=4)
    assert human.render() is None
    assert capsys.readouterr().out == ansi.render() + "\n"


def test_state_is_pettingzoos(env_name: str, options: dict) -> None:
    """``state()`` is PettingZoo's global-state hook (not implemented, so no
    ``state_space``); the engine state is ``game_state``."""
    env = envs.make(env_name, **options)
    env.reset(seed=0)
    with pytest.raises(NotImplementedError):
        env.state()
    assert not hasattr(env.unwrapped, "state_space")
    raw = env.unwrapped
    assert (
        raw.game.current_player(raw.game_state)
        == raw.agent_name_mapping[env.agent_selection]
    )


def test_metadata_name_on_the_class(env_name: str, options: dict) -> None:
    cls = envs.module(env_name).raw_env
    assert cls.metadata["name"] == env_name
    assert envs.make(env_name, **options).metadata["name"] == env_name


def test_player_count_option_is_players() -> None:
    """One name for the player count in every env that has one."""
    for name in envs.names():
        params = envs.game_options(name)
        assert "num_players" not in params, name
    for name in ("forty_fives_v0", "fuenfzehn_tot_v0", "fuenfzehnern_v0", "herzeln_v0"):
        assert "players" in envs.game_options(name), name


def test_numpy_integer_actions_work(env_name: str, options: dict) -> None:
    """numpy integers (what samplers and vector envs hand out) and 0-d integer arrays
    are actions; floats, bools and strings are refused (``test_generic``)."""
    env = envs.make(env_name, **options)
    env.reset(seed=0)
    legal = env.unwrapped.legal_actions()
    env.step(np.int64(legal[0]))
    if env.agents and not env.terminations[env.agent_selection]:
        env.step(np.array(env.unwrapped.legal_actions()[0], dtype=np.int32))
    with pytest.raises(IllegalActionError, match="must be an integer"):
        env.reset(seed=0)
        env.step(np.float32(legal[0]))


@pytest.mark.parametrize("call", ["step", "observe", "last", "render", "details"])
def test_raw_env_before_reset_says_so(env_name: str, options: dict, call: str) -> None:
    raw = envs.make(env_name, raw=True, **options, render_mode="ansi")
    args = {"step": (0,), "observe": ("player_0",)}.get(call, ())
    with pytest.raises(RuntimeError, match=rf"call reset\(\) before {call}\(\)"):
        getattr(raw, call)(*args)


# --- copies ---------------------------------------------------------------------------
def check_copies_continue(env_name: str, options: dict, seed: int, split: int) -> None:
    env = envs.make(env_name, **options)
    env.reset(seed=seed)
    record(env, np.random.default_rng(seed), split)
    if not env.agents:
        return
    copies = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    rest = record(env, np.random.default_rng(seed + 1), 10_000)
    for twin in copies:
        assert record(twin, np.random.default_rng(seed + 1), 10_000) == rest
    for twin in copies:  # the copies' next episodes (new deals, dice) match too
        assert twin.np_random.bit_generator.state == env.np_random.bit_generator.state


def test_pickle_and_deepcopy_mid_game(env_name: str, options: dict) -> None:
    """A deep copy and a pickled copy taken mid-game continue exactly as the
    original: observations, masks, rewards, terminations, infos, later chance."""
    check_copies_continue(env_name, options, seed=0, split=7)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_pickle_and_deepcopy_mid_game_many(
    env_name: str, options: dict, seed: int
) -> None:
    for split in (0, 1, 3, 20, 60, 200):
        check_copies_continue(env_name, options, seed=seed, split=split)


# --- infos ----------------------------------------------------------------------------
def storable(value: Any) -> bool:
    return isinstance(value, (bool, int, float, np.number, np.bool_)) or (
        isinstance(value, np.ndarray) and value.dtype != object
    )


def check_infos(env_name: str, options: dict, seed: int) -> None:
    env = envs.make(env_name, **options, illegal_action="penalize")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    shape = None
    while env.agents:
        infos = env.infos
        assert len({id(i) for i in infos.values()}) == len(infos), "a shared dict"
        for agent, info in infos.items():
            assert all(storable(v) for v in info.values()), (agent, info)
            now = {k: (type(v), np.shape(v)) for k, v in info.items()}
            assert shape is None or now == shape, "keys or types changed mid-episode"
            shape = now
        env.step(random_legal(env, rng))
    assert shape is not None


def test_infos_are_per_agent_and_storable(env_name: str, options: dict) -> None:
    """One dict per agent, same keys and types at every step, only numbers and
    fixed-shape arrays; the rich record is ``details()``."""
    check_infos(env_name, options, seed=0)
    env = envs.make(env_name, **options)
    env.reset(seed=0)
    assert env.unwrapped.details() == env.unwrapped.game.info(env.unwrapped.game_state)


@pytest.mark.slow
def test_infos_are_per_agent_and_storable_many(env_name: str, options: dict) -> None:
    for seed in range(1, 20):
        check_infos(env_name, options, seed)


def test_infos_flag_the_offender_of_a_penalised_move() -> None:
    env = envs.make("german_whist_v0", illegal_action="penalize")
    env.reset(seed=0)
    mask = env.observe(env.agent_selection)["action_mask"]
    offender = env.agent_selection
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert {a: i["illegal_action"] for a, i in env.infos.items()} == {
        a: a == offender for a in env.possible_agents
    }


# --- TorchRL --------------------------------------------------------------------------
def test_torchrl_wrapper_as_shipped(env_name: str, options: dict) -> None:
    """TorchRL's own wrapper and spec check, then a rollout of random legal play (the
    wrapper's random action reads the mask) to the episode's end or 60 steps."""
    env = PettingZooWrapper(envs.make(env_name, **options), use_mask=True)
    check_env_specs(env, seed=0)
    rollout = env.rollout(60)
    assert rollout.batch_size[0] >= 1
    group = next(iter(env.group_map))
    assert (group, "info", "return") in rollout.keys(True, True)


def test_torchrl_helper_plays_whole_episodes() -> None:
    env = trl_helpers.make_env(
        "german_whist_v0", variant="honeymoon", episode="deal", seed=1
    )
    rollout = env.rollout(1000)
    assert rollout["next", "done"][-1].all(), "the deal did not end"
    # one group per seat (TorchRL's default for AEC envs); the deal is zero-sum
    totals = torch.stack([rollout["next", g, "reward"].sum() for g in env.group_map])
    assert torch.isclose(totals.sum(), torch.tensor(0.0)) and totals.abs().max() > 0


# --- Tianshou -------------------------------------------------------------------------
def test_tianshou_collector_as_shipped(env_name: str, options: dict) -> None:
    """Tianshou's ``PettingZooEnv`` and collector, with Tianshou's masked random
    policy in every seat: one whole episode lands in the replay buffer, infos
    included."""

    def make() -> PettingZooEnv:
        return PettingZooEnv(envs.make(env_name, **options))

    venv = DummyVectorEnv([make])
    policy = ts_helpers.random_policy(venv)
    buffer = VectorReplayBuffer(5000, 1)
    stats = Collector(policy, venv, buffer).collect(
        n_episode=1, reset_before_collect=True
    )
    assert stats.n_collected_episodes == 1
    data = buffer.sample(0)[0]
    assert data.terminated[-1] or data.truncated[-1] or data.done.any()
    assert (
        data.info["illegal_action"].dtype == bool and not data.info.illegal_action.any()
    )
    assert np.all(data.obs.mask[np.arange(len(data)), data.act])  # legal moves only


def test_tianshou_helpers_vector_env() -> None:
    venv = ts_helpers.make_vector_env("fuenfzehn_tot_v0", 2, players=3)
    stats = Collector(ts_helpers.random_policy(venv), venv).collect(
        n_episode=4, reset_before_collect=True
    )
    assert stats.n_collected_episodes == 4
    with pytest.raises(ValueError, match="num_envs"):
        ts_helpers.make_vector_env("fuenfzehn_tot_v0", 0)
    with pytest.raises(ValueError, match="no_such_option"):
        ts_helpers.make_vector_env("fuenfzehn_tot_v0", 1, no_such_option=1)


# --- gymnasium and SB3: the self-play env ---------------------------------------------
def test_selfplay_registered_for_every_env() -> None:
    for name in envs.names():
        assert f"parlour/SelfPlay-{name}" in gym.registry
    env = gym.make("parlour/SelfPlay-german_whist_v0")
    assert isinstance(env.unwrapped, selfplay.SelfPlayEnv)
    assert env.unwrapped.env_name == "german_whist_v0"


def test_selfplay_check_env(env_name: str, options: dict) -> None:
    """gymnasium's and SB3's ``check_env`` on the registered env (they step with
    unmasked samples: ``"penalize"``)."""
    env = gym.make(
        f"parlour/SelfPlay-{env_name}",
        env_options={**options, "illegal_action": "penalize"},
    )
    gym_check_env(env.unwrapped)
    sb3_check_env(env.unwrapped)


def test_selfplay_penalised_step_ends_the_episode() -> None:
    env = selfplay.SelfPlayEnv(
        "forty_fives_v0",
        env_options={"players": 4, "illegal_action": "penalize"},
        seed=0,
    )
    env.reset(seed=0)
    bad = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, truncated, info = env.step(bad)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["illegal_action"] is True and info["final_return"] == -1.0
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(bad)
    env.reset()  # and the next episode starts normally
    assert env.action_masks().any()


def test_selfplay_raise_mode_refuses_illegal_and_non_integer_actions() -> None:
    env = selfplay.SelfPlayEnv("german_whist_v0", seed=0)
    env.reset(seed=0)
    bad = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(IllegalActionError):
        env.step(bad)
    legal = int(np.flatnonzero(env.action_masks())[0])
    with pytest.raises(IllegalActionError, match="must be an integer"):
        env.step(legal + 0.7)
    env.step(np.int64(legal))


# --- the documented examples ----------------------------------------------------------
DOC = Path(__file__).resolve().parents[1] / "docs" / "integrations.md"


def doc_examples() -> list[tuple[str, str]]:
    """(section title, code) of each ``python`` block in docs/integrations.md."""
    out, section = [], ""
    for part in re.split(r"^```", DOC.read_text(encoding="utf-8"), flags=re.M):
        if part.startswith("python\n"):
            out.append((section, part.removeprefix("python\n")))
        else:
            titles = re.findall(r"^## (.+)$", part, flags=re.M)
            section = titles[-1] if titles else section
    return out


#: examples that start a Ray cluster and train: about a minute, so in the slow suite
SLOW_EXAMPLES = {"RLlib"}


@pytest.mark.parametrize(
    ("section", "code"),
    [
        pytest.param(s, c, id=s, marks=[pytest.mark.slow] if s in SLOW_EXAMPLES else [])
        for s, c in doc_examples()
    ],
)
def test_integration_docs_examples_run(section: str, code: str) -> None:
    """Each library's example in docs/integrations.md runs as written."""
    with warnings.catch_warnings():
        for message in CHECKER_NOISE:
            warnings.filterwarnings("ignore", message=message)
        exec(compile(code, f"docs/integrations.md [{section}]", "exec"), {})


def test_integration_docs_cover_every_library() -> None:
    """Every library has at least one example (OpenSpiel has two: its search and
    solvers, and its learning algorithms through rl_environment)."""
    assert list(dict.fromkeys(s for s, _ in doc_examples())) == [
        "PettingZoo",
        "gymnasium and Stable-Baselines3",
        "TorchRL",
        "Tianshou",
        "RLlib",
        "OpenSpiel",
    ]
