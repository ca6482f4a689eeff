"""OpenSpiel's PyTorch learning algorithms on Parlour games, through
``rl_environment.Environment`` and the information-state tensor, unchanged.

Each algorithm runs briefly (tiny nets, a few hundred steps); the tests check that it
runs on Parlour's rules, learns from real transitions and acts only legally.
"""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from open_spiel.python import rl_environment
from open_spiel.python.pytorch import deep_cfr, dqn, escher, nfsp, policy_gradient
from test_openspiel import TINY, _random_position  # tests/ is on sys.path

from parlour.integrations import openspiel as pos


@pytest.mark.parametrize(
    ("game_string", "moves"),
    [("parlour_german_whist", 21), ("parlour_forty_fives(players=4)", 6)],
)
def test_same_information_state_same_tensor(game_string: str, moves: int) -> None:
    """Histories the seat cannot tell apart (resampled deals) share its tensor; the
    other seats' tensors change with their hidden cards."""
    game = pyspiel.load_game(game_string)
    state = _random_position(game, moves, seed=5)
    seat = state.current_player()
    rng = np.random.default_rng(1)
    size = game.information_state_tensor_size()
    assert len(state.information_state_tensor(seat)) == size
    moved = 0
    for _ in range(4):
        sample = pos.resample_from_infostate(state, seat, rng)
        assert sample.information_state_string(seat) == state.information_state_string(
            seat
        )
        assert sample.information_state_tensor(seat) == state.information_state_tensor(
            seat
        )
        moved += any(
            sample.information_state_tensor(p) != state.information_state_tensor(p)
            for p in range(game.num_players())
            if p != seat
        )
    assert moved >= 2


@pytest.mark.parametrize(
    "game_string", ["parlour_german_whist", "parlour_fuenfzehnern"]
)
def test_different_information_states_different_tensors(game_string: str) -> None:
    """On sampled positions of the games whose whole own history fits the tensor,
    two different information-state strings never share a tensor."""
    game = pyspiel.load_game(game_string)
    by_tensor: dict[tuple[float, ...], str] = {}
    strings = set()
    for seed in range(40):
        moves = 1 + seed % 7
        state = _random_position(game, moves, seed=seed)
        for seat in range(game.num_players()):
            key = tuple(state.information_state_tensor(seat))
            string = state.information_state_string(seat)
            strings.add(string)
            assert by_tensor.setdefault(key, string) == string
    assert len(strings) >= 60


def test_own_actions_are_the_last_slots() -> None:
    """The action part holds the seat's own actions in order, one slot each."""
    game = pyspiel.load_game("parlour_german_whist")
    state = _random_position(game, 5, seed=3)
    size = game.engine.observation_size
    for seat in range(2):
        tensor = np.asarray(state.information_state_tensor(seat))
        slots = tensor[size:].reshape(pos.OWN_MOVES, game.num_distinct_actions())
        mine = [s.action for s in state.full_history() if s.player == seat]
        assert [int(np.argmax(row)) for row in slots[: len(mine)]] == mine
        assert slots.sum() == len(mine)
        assert np.array_equal(tensor[:size], state.observation_tensor(seat))


def _run_agents(env: rl_environment.Environment, agents: list, episodes: int) -> int:
    """Play ``episodes`` training episodes; return the number of agent steps."""
    steps = 0
    for _ in range(episodes):
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            output = agents[player].step(time_step)
            assert output.action in time_step.observations["legal_actions"][player]
            time_step = env.step([output.action])
            steps += 1
        for agent in agents:
            agent.step(time_step)
    return steps


def _env(game_string: str) -> tuple[rl_environment.Environment, int, int]:
    env = rl_environment.Environment(pyspiel.load_game(game_string))
    size = env.observation_spec()["info_state"][0]
    assert size == env.game.information_state_tensor_size()
    return env, size, env.action_spec()["num_actions"]


#: a tiny replay learner: one hidden layer, learning after 32 transitions
_SMALL = {
    "hidden_layers_sizes": (32,),
    "batch_size": 16,
    "min_buffer_size_to_learn": 32,
    "replay_buffer_capacity": 1000,
}


def test_dqn_learns_on_german_whist() -> None:
    env, size, actions = _env("parlour_german_whist")
    agents = [dqn.DQN(p, size, actions, learn_every=4, **_SMALL) for p in range(2)]
    assert _run_agents(env, agents, 8) >= 200
    assert all(agent.loss is not None for agent in agents)


@pytest.mark.parametrize("loss", ["a2c", "rpg", "qpg", "rm"])
def test_policy_gradient_on_german_whist(loss: str) -> None:
    env, size, actions = _env("parlour_german_whist")
    agents = [
        policy_gradient.PolicyGradient(
            p, size, actions, loss_str=loss, hidden_layers_sizes=(32,), batch_size=4
        )
        for p in range(2)
    ]
    assert _run_agents(env, agents, 10) >= 250
    assert all(agent.loss is not None for agent in agents)


def test_nfsp_on_fuenfzehnern() -> None:
    env, size, actions = _env("parlour_fuenfzehnern")
    agents = [
        nfsp.NFSP(
            p,
            size,
            actions,
            reservoir_buffer_capacity=1000,
            anticipatory_param=0.9,
            seed=p,
            learn_every=8,
            **_SMALL,
        )
        for p in range(env.num_players)
    ]
    assert _run_agents(env, agents, 12) >= 300
    # (sl loss, rl loss): the average-policy network has been trained
    assert all(agent.loss[0] is not None for agent in agents)


def test_deep_cfr_on_tiny_fuenfzehn_tot() -> None:
    """Deep CFR (external-sampling traversals of the whole tree) on the scripted
    two-player Fünfzehn – tot: its policy network gives each legal move a
    probability."""
    game = pos.load_game("fuenfzehn_tot_v0", **TINY)
    solver = deep_cfr.DeepCFRSolver(
        game,
        policy_network_layers=(16,),
        advantage_network_layers=(16,),
        num_iterations=2,
        num_traversals=4,
        learning_rate=1e-3,
        batch_size_advantage=16,
        batch_size_strategy=16,
        memory_capacity=10_000,
    )
    _, advantage_losses, policy_loss = solver.solve()
    assert np.isfinite(policy_loss)
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    probs = solver.action_probabilities(state)
    # OpenSpiel keeps the legal moves' softmax probabilities without renormalising
    assert set(probs) == set(state.legal_actions())
    assert all(0.0 < p <= 1.0 for p in probs.values())


def test_escher_on_tiny_fuenfzehn_tot() -> None:
    """ESCHER (history value, regret and average-policy networks from sampled
    traversals; reads every seat's information-state tensor) trains two iterations on
    the scripted Fünfzehn – tot, NashConv computed over the whole tree."""
    game = pos.load_game("fuenfzehn_tot_v0", **TINY)
    cfg = escher.Config()
    # Too few traversals can leave a seat without a decision, hence no regret sample.
    for part in ("value", "regret", "avg_policy"):
        setattr(cfg, f"{part}_net", [8])
        setattr(cfg, f"{part}_batch_size", 2)
        setattr(cfg, f"{part}_batch_steps", 2)
        setattr(cfg, f"{part}_memory_capacity", 1000)
    cfg.value_traversals = cfg.regret_traversals = 16
    agent = escher.Agent(game, cfg)
    train = escher.TrainConfig(game)
    train.iterations, train.nashconv, train.games_vs_random = 2, True, 1
    escher.train(train, agent)
    assert agent.num_touched > 0
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    probs = agent.action_probabilities(state)  # over all actions, illegal ones 0
    assert set(np.flatnonzero(probs)) <= set(state.legal_actions())
    assert probs.sum() == pytest.approx(1.0)
