"""The ``expert`` agent (`parlour.agents.expert`): the shipped network with the game's
search at play time. It is built for every shipped model through the game record's
``expert`` hook, refused with one line where no model is shipped, plays only legal
moves, repeats itself given a seed, stays well inside its time budget and is listed
wherever agent specs are."""

from __future__ import annotations

import json
import random
import time

import numpy as np
import pytest

from parlour import agents, envs
from parlour.agents.base import EndgameAgent, RandomAgent
from parlour.agents.spec import AgentSpec, forms
from parlour.cli import main as cli_main
from parlour.envs.fuenfzehn_tot.hooks import exact_choices
from parlour.league.identity import checkpoint_hash
from parlour.training import pretrained
from parlour.training.arena import play_game

SHIPPED = pretrained.shipped()


def _model(name: str) -> tuple[str, dict]:
    info = json.loads((SHIPPED[name] / "manifest.json").read_text())
    return info["env"], info["env_options"]


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_expert_builds_for_every_shipped_model(name):
    """Every env with a shipped model has an expert hook, and the spec builds for the
    model's options."""
    env_name, options = _model(name)
    assert envs.record(env_name).expert, f"{env_name} has a model but no expert hook"
    assert "expert" in forms(env_name)
    agent = agents.make("expert", env_name, seed=0, env_options=options)
    assert agent.spec == "expert"


def test_expert_is_refused_in_one_line_where_no_model_is_shipped():
    with pytest.raises(ValueError) as err:
        agents.make("expert", "forty_fives_v0", env_options={"players": 6})
    message = str(err.value)
    assert "\n" not in message and "no pretrained agent is shipped" in message


def test_the_spec_reads_back_and_takes_no_argument():
    assert str(AgentSpec.parse("expert", "german_whist_v0")) == "expert"
    with pytest.raises(ValueError, match="the expert agent takes no options"):
        AgentSpec.parse("expert:16")
    with pytest.raises(ValueError, match="only ckpt:PATH and pretrained take @sample"):
        AgentSpec.parse("expert@sample")


def test_league_names_expert_by_the_weights_it_plays():
    """The league tells two versions of ``expert`` apart by the network's hash."""
    assert checkpoint_hash("expert", "german_whist_v0") == checkpoint_hash(
        "pretrained", "german_whist_v0"
    )


def _expert_game(env_name: str, seed: int, options=None) -> tuple[list[int], float]:
    """The expert's moves in one game on seat 0 against random seats (the global RNGs
    disturbed before every move), each checked legal; and its mean decision time."""
    env = envs.make(env_name, **(options or {}))
    game = env.unwrapped.game
    expert = agents.make("expert", env_name, seed=seed, env_options=options)
    players = [expert] + [RandomAgent(seed + s) for s in range(1, game.num_players)]
    moves: list[int] = []
    times: list[float] = []

    class Watched:
        spec = "expert"

        def act(self, turn):
            assert turn.seat == 0
            random.seed(len(moves))
            np.random.seed(len(moves) + 1)
            start = time.process_time()
            action = expert.act(turn)
            times.append(time.process_time() - start)
            assert turn.mask[action], f"illegal {game.action_name(action)}"
            moves.append(action)
            return action

    players[0] = Watched()
    play_game(env, players, seed=seed)
    return moves, float(np.mean(times))


@pytest.mark.parametrize(
    ("game_name", "options"),
    [
        ("german_whist_v0", None),
        ("fuenfzehnern_v0", None),
        ("fuenfzehn_tot_v0", None),
    ],
)
def test_expert_plays_legal_moves_the_same_given_a_seed(game_name, options):
    first, mean_time = _expert_game(game_name, 5, options)
    again, _ = _expert_game(game_name, 5, options)
    assert first and first == again
    # the budget is 0.1 s a decision on average (benchmarks/expert_speed.py measures
    # it); here only a bound no loaded test machine should reach
    assert mean_time < 2.0


def test_dice_expert_keeps_the_network_move_only_where_it_is_optimal():
    """Fünfzehn – tot: every move the exact turn solution calls optimal includes the
    optimal bot's, and the expert plays one of them."""
    env = envs.make("fuenfzehn_tot_v0")
    game = env.unwrapped.game
    expert = agents.make("expert", "fuenfzehn_tot_v0", seed=0)
    assert isinstance(expert, EndgameAgent)
    optimal = agents.make("optimal", "fuenfzehn_tot_v0")
    seen = 0

    class Check:
        spec = "check"

        def act(self, turn):
            nonlocal seen
            best = exact_choices(turn.game, turn.state)
            assert optimal.act(turn) in best
            action = expert.act(turn)
            assert action in best
            seen += 1
            return action

    for seed in range(3):
        play_game(env, [Check() for _ in range(game.num_players)], seed=seed)
    assert seen > 20


def test_parlour_list_names_expert(capsys):
    assert cli_main(["list"]) == 0
    out = capsys.readouterr().out
    for name in envs.names():
        if pretrained.models_of(name):
            line = next(x for x in out.splitlines() if x.startswith(f"{name}:"))
            block = out[out.index(line) :].split("\n    agents: ")[1].split("\n")[0]
            assert "expert" in block.split(", "), name


def test_expert_plays_the_network_where_it_does_not_search_and_exact_stage_2():
    """Fünfzehnern's first tricks (above the search's hand size) are the network's
    cards; German Whist's stage-2 cards are optimal."""
    from parlour.agents.solver.german_whist import optimal_moves

    for env_name, check in (
        ("fuenfzehnern_v0", "network"),
        ("german_whist_v0", "stage2"),
    ):
        env = envs.make(env_name)
        game = env.unwrapped.game
        expert = agents.make("expert", env_name, seed=1)
        network = agents.make("pretrained", env_name, seed=1)
        checked = 0

        class Check:
            spec = "check"

            def act(self, turn):
                nonlocal checked
                action = expert.act(turn)
                if check == "network" and turn.state.hands[0].bit_count() > 6:
                    assert action == network.act(turn)
                    checked += 1
                if check == "stage2" and turn.state.stage == 2:
                    assert action in optimal_moves(turn.game, turn.state)
                    checked += 1
                return action

        players = [Check()] + [
            agents.make("heuristic", env_name, seed=s)
            for s in range(1, game.num_players)
        ]
        play_game(env, players, seed=11)
        assert checked >= 2, env_name
