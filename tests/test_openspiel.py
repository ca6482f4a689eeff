"""OpenSpiel adapter: OpenSpiel's own checks and algorithms on Parlour's rules.

``pyspiel.random_sim_test`` over every variant; exact tree search on a tiny scripted
Fünfzehn – tot (``get_all_states``, CFR+ and ``exploitability``) with every terminal
history replayed through the PettingZoo env; and MCTS against random play.
"""

from __future__ import annotations

import math

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as os_policy
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import (
    cfr,
    evaluate_bots,
    exploitability,
    get_all_states,
    ismcts,
    mcts,
)

from parlour import envs
from parlour.integrations import openspiel as pos

# The smallest Fünfzehn – tot there is with the rules intact: two players, one match
# (one first-half round decides the game: the lower total takes the match and, as the
# last player holding one, loses), player_0 starts (the roll-off scripted by the
# ``starter`` reset option), and the dice scripted by the ``dice`` reset option except
# two left to chance. Every 5 keeps the turns short: no turn can use up the script.
TINY = {"players": 2, "matches": 1, "starter": 0, "dice": "?,5,?," + ",".join("5" * 13)}


def test_every_env_is_registered() -> None:
    names = set(pyspiel.registered_names())
    for env_name in envs.names():
        assert pos.game_name(env_name) in names
    game = pyspiel.load_game("parlour_german_whist")
    assert game.num_players() == 2
    assert game.num_distinct_actions() == 52
    assert (
        game.get_type().information
        == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    )


def test_parameters_are_env_options() -> None:
    game = pyspiel.load_game("parlour_forty_fives(players=6,variant=auction)")
    assert game.num_players() == 6
    assert game.engine.variant == "auction"
    # A None default (target: "by variant") is the placeholder -1; 120 is explicit.
    assert game.get_parameters()["target"] == -1
    assert pos.load_game("forty_fives_v0", target=120).engine.target == 120
    bidder = pos.load_game("forty_fives_v0", variant="auction", bidder_leads=False)
    assert bidder.engine.bidder_leads is False


def test_bad_parameters_fail_with_the_envs_message() -> None:
    with pytest.raises(Exception, match="variant"):
        pyspiel.load_game("parlour_german_whist(variant=swedish)")
    with pytest.raises(Exception, match="Unknown parameter"):
        pyspiel.load_game("parlour_german_whist(varient=german)")
    with pytest.raises(Exception, match="die face"):
        pos.load_game("fuenfzehn_tot_v0", players=2, dice="3,9")


def test_random_sim_every_variant(env_name: str, options: dict) -> None:
    """OpenSpiel's C++ random-simulation test (legal-action masks, chance outcome
    probabilities, rewards adding up to returns, utility bounds, observations and
    information states at every node, cloning and serialisation)."""
    game = pos.load_game(env_name, **options)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_chance_nodes_are_the_engines() -> None:
    """A deal is one chance node per card, with the engine's outcomes and equal
    probabilities, not a whole shuffle at once."""
    state = pyspiel.load_game("parlour_german_whist").new_initial_state()
    assert state.is_chance_node()
    assert state.chance_outcomes() == [(0, 0.5), (1, 0.5)]  # who deals
    state.apply_action(0)
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 52 and math.isclose(sum(p for _, p in outcomes), 1.0)
    state.apply_action(outcomes[0][0])
    assert len(state.chance_outcomes()) == 51


def test_rl_environment_plays_a_game() -> None:
    """OpenSpiel's RL environment (observation tensors; there is no information-state
    tensor) plays German Whist to the end, paying +1 and -1."""
    env = rl_environment.Environment(
        pyspiel.load_game("parlour_german_whist"),
        observation_type=rl_environment.ObservationType.OBSERVATION,
    )
    rng = np.random.default_rng(0)
    step = env.reset()
    assert len(step.observations["info_state"][0]) == env.game.engine.observation_size
    while not step.last():
        player = step.observations["current_player"]
        step = env.step([int(rng.choice(step.observations["legal_actions"][player]))])
    assert sorted(step.rewards) == [-1.0, 1.0]


def _tiny_dice(outcomes: list[int], script: str) -> list[int | None]:
    """The scripted dice with the '?' filled in by the chance ``outcomes`` (None for
    a die the game ended before)."""
    chance = iter(outcomes)
    return [
        next(chance, None) if face == "?" else int(face) for face in script.split(",")
    ]


def test_tiny_game_tree_matches_the_env() -> None:
    """Every terminal of OpenSpiel's full tree, replayed through the PettingZoo env
    with the same dice, ends there with the same returns."""
    game = pos.load_game("fuenfzehn_tot_v0", **TINY)
    states = get_all_states.get_all_states(
        game, include_chance_states=True, to_string=lambda s: s.history_str()
    )
    terminals = [s for s in states.values() if s.is_terminal()]
    assert len(states) > 100 and len(terminals) > 50
    env = envs.make("fuenfzehn_tot_v0", players=2, matches=1)
    for state in terminals:
        steps = state.full_history()
        chance = [s.action for s in steps if s.player == pyspiel.PlayerId.CHANCE]
        moves = [s.action for s in steps if s.player != pyspiel.PlayerId.CHANCE]
        env.reset(options={"starter": 0, "dice": _tiny_dice(chance, TINY["dice"])})
        for move in moves:
            env.step(move)
        assert all(env.terminations.values())
        returns = [env._cumulative_rewards[a] for a in env.possible_agents]
        assert returns == state.returns() and sorted(returns) == [-1.0, 1.0]


def test_cfr_solves_the_tiny_game() -> None:
    """CFR+ on the tiny game: exploitability falls from the uniform policy's (over
    0.5) to nearly nothing in ten iterations."""
    game = pos.load_game("fuenfzehn_tot_v0", **TINY)
    uniform = exploitability.exploitability(game, os_policy.UniformRandomPolicy(game))
    solver = cfr.CFRPlusSolver(game)
    for _ in range(10):
        solver.evaluate_and_update_policy()
    solved = exploitability.exploitability(game, solver.average_policy())
    assert uniform > 0.5
    assert solved < 0.05


def _mcts_wins(games: int, matches: int, simulations: int) -> int:
    """Games MCTS wins against uniform random play at two-player Fünfzehn – tot,
    seats alternating."""
    game = pos.load_game("fuenfzehn_tot_v0", players=2, matches=matches)
    rng = np.random.RandomState(7)
    wins = 0
    for g in range(games):
        seat = g % 2
        bots = [pyspiel.make_uniform_random_bot(p, 1000 + g) for p in range(2)]
        bots[seat] = mcts.MCTSBot(
            game,
            uct_c=2.0,
            max_simulations=simulations,
            evaluator=mcts.RandomRolloutEvaluator(1, rng),
            random_state=rng,
        )
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
        wins += returns[seat] > 0
    return wins


def _binomial_tail(wins: int, games: int) -> float:
    """P(at least ``wins`` of ``games``) for a player who wins half its games."""
    return sum(math.comb(games, k) for k in range(wins, games + 1)) / 2**games


def test_mcts_beats_random_short_game() -> None:
    """20 three-match games: MCTS wins clearly more than the 50% of an equal player
    (one-sided binomial p < 0.05)."""
    wins = _mcts_wins(games=20, matches=3, simulations=30)
    assert _binomial_tail(wins, 20) < 0.05, f"MCTS won {wins}/20"


@pytest.mark.slow
def test_mcts_beats_random_full_game() -> None:
    """30 games of the seed's ten matches: MCTS wins with p < 0.001."""
    wins = _mcts_wins(games=30, matches=10, simulations=30)
    assert _binomial_tail(wins, 30) < 0.001, f"MCTS won {wins}/30"


def _random_position(game: pyspiel.Game, moves: int, seed: int) -> pyspiel.State:
    """The position after the deal and ``moves`` random decisions."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while state.is_chance_node() or moves > 0:
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
            moves -= 1
    return state


@pytest.mark.parametrize(
    ("game_string", "moves"),
    [("parlour_german_whist", 21), ("parlour_forty_fives(players=4)", 6)],
)
def test_resample_keeps_what_the_seat_knows(game_string: str, moves: int) -> None:
    """Resampled states are in the seat's information state (same information-state
    string and observation, same legal moves) but deal the hidden cards anew."""
    game = pyspiel.load_game(game_string)
    state = _random_position(game, moves, seed=4)
    seat = state.current_player()
    rng = np.random.default_rng(0)
    moved = 0
    for _ in range(5):
        sample = pos.resample_from_infostate(state, seat, rng)
        assert sample.information_state_string(seat) == state.information_state_string(
            seat
        )
        assert sample.observation_tensor(seat) == state.observation_tensor(seat)
        assert sample.legal_actions() == state.legal_actions()
        others = [p for p in range(game.num_players()) if p != seat]
        moved += any(
            sample.observation_tensor(p) != state.observation_tensor(p) for p in others
        )
    assert moved >= 3  # the other seats' hidden cards change


def test_ismcts_plays_german_whist() -> None:
    """OpenSpiel's Python ISMCTS, given the resampler, plays a whole German Whist game
    against random play (every move legal: the engine would raise)."""
    game = pyspiel.load_game("parlour_german_whist")
    rng = np.random.RandomState(2)
    draws = np.random.default_rng(2)
    bot = ismcts.ISMCTSBot(
        game, mcts.RandomRolloutEvaluator(1, rng), 2.0, 4, random_state=rng
    )
    bot.set_resampler(
        lambda state, player: pos.resample_from_infostate(state, player, draws, 8)
    )
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        elif state.current_player() == 0:
            state.apply_action(bot.step(state))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert sorted(state.returns()) == [-1.0, 1.0]
