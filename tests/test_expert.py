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
from parlour.agents.base import EndgameAgent, Turn
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


def test_league_names_expert_by_its_network_and_its_search(monkeypatch):
    """The league tells two versions of ``expert`` apart by the network's hash and the
    search's budget: the same network with other samples is another player."""
    from parlour.agents.solver.german_whist.pimc import default_margin
    from parlour.envs.german_whist import hooks
    from parlour.league.identity import expert_hash, identify

    honeymoon = {"variant": "honeymoon"}
    network = checkpoint_hash("pretrained", "german_whist_v0", honeymoon)
    name, digest = identify("expert", "german_whist_v0", honeymoon)
    assert digest == expert_hash(network, {"samples": 48, "margin": default_margin(48)})
    assert name == f"expert#{digest[:12]}" and digest != network
    assert checkpoint_hash("expert", "german_whist_v0", honeymoon) == digest
    # the German variant's expert searches over another network
    assert checkpoint_hash("expert", "german_whist_v0") != digest
    monkeypatch.setitem(hooks.EXPERT_SAMPLES, "honeymoon", 4)
    fewer = checkpoint_hash("expert", "german_whist_v0", honeymoon)
    assert fewer == expert_hash(network, {"samples": 4, "margin": default_margin(4)})
    assert fewer != digest


def test_german_whist_expert_searches_with_the_hooks_budget():
    """German Whist's expert samples and margin are its hooks' (German: a margin of
    its own, smaller than the default quarter; Honeymoon: the default)."""
    from parlour.agents.solver.german_whist.pimc import default_margin
    from parlour.envs.german_whist import hooks

    german = agents.make("expert", "german_whist_v0", seed=0)
    assert german.search_settings() == {
        "samples": hooks.EXPERT_SAMPLES["german"],
        "margin": hooks.EXPERT_MARGIN["german"],
    }
    quarter = default_margin(hooks.EXPERT_SAMPLES["german"])
    assert hooks.EXPERT_MARGIN["german"] < quarter
    honeymoon = agents.make(
        "expert", "german_whist_v0", seed=0, env_options={"variant": "honeymoon"}
    )
    samples = hooks.EXPERT_SAMPLES["honeymoon"]
    assert honeymoon.search_settings() == {
        "samples": samples,
        "margin": default_margin(samples),
    }


def test_trick_game_expert_settings_name_its_budget():
    from parlour.envs.fuenfzehnern import hooks

    expert = agents.make("expert", "fuenfzehnern_v0", seed=0)
    assert expert.search_settings() == {
        "samples": hooks.EXPERT_SAMPLES,
        "max_cards": hooks.EXPERT_MAX_CARDS[4],
        "margin": 0.0,
    }
    # Fünfzehn - tot's expert corrects its network exactly: no budget to name
    assert agents.make("expert", "fuenfzehn_tot_v0", seed=0).search_settings() == {}


class _Watched:
    """Seat 0: the expert, ``check(turn, action)`` called at each of its decisions
    (the global RNGs disturbed before each: the expert's own generator decides)."""

    spec = "watched"

    def __init__(self, expert, check):
        self.expert, self.check = expert, check
        self.moves: list[int] = []
        self.times: list[float] = []

    def act(self, turn):
        random.seed(len(self.moves))
        np.random.seed(len(self.moves) + 1)
        start = time.process_time()
        action = self.expert.act(turn)
        self.times.append(time.process_time() - start)
        assert turn.mask[action], f"illegal {turn.game.action_name(action)}"
        self.check(turn, action)
        self.moves.append(action)
        return action


def _play(env_name: str, seed: int, check=None, opponent: str = "random") -> _Watched:
    """One game of the expert on seat 0 against ``opponent`` on the other seats."""
    env = envs.make(env_name)
    expert = agents.make("expert", env_name, seed=seed)
    watched = _Watched(expert, check or (lambda turn, action: None))
    others = [
        agents.make(opponent, env_name, seed=seed + s)
        for s in range(1, env.unwrapped.game.num_players)
    ]
    play_game(env, [watched, *others], seed=seed)
    return watched


@pytest.mark.parametrize(
    "game_name", ["german_whist_v0", "fuenfzehnern_v0", "fuenfzehn_tot_v0"]
)
def test_expert_plays_legal_moves_the_same_given_a_seed(game_name):
    first = _play(game_name, 5)
    again = _play(game_name, 5)
    assert first.moves and first.moves == again.moves
    # the budget is 0.1 s a decision on average (benchmarks/expert_speed.py measures
    # it); here only a bound no loaded test machine should reach
    assert np.mean(first.times) < 2.0


def test_dice_expert_keeps_the_network_move_only_where_it_is_optimal():
    """Fünfzehn – tot: the moves the exact turn solution calls optimal include the
    optimal bot's, and the expert plays one of them."""
    assert isinstance(agents.make("expert", "fuenfzehn_tot_v0"), EndgameAgent)
    optimal = agents.make("optimal", "fuenfzehn_tot_v0")

    def check(turn, action):
        best = exact_choices(turn.game, turn.state)
        assert optimal.act(turn) in best and action in best

    seen = sum(len(_play("fuenfzehn_tot_v0", seed, check).moves) for seed in range(4))
    assert seen > 10


def test_expert_plays_the_network_where_it_does_not_search():
    """Fünfzehnern's first tricks (above the search's hand size of 6) are the
    network's cards."""
    network = agents.make("pretrained", "fuenfzehnern_v0", seed=1)
    above = []

    def check(turn, action):
        if turn.state.hands[turn.seat].bit_count() > 6:
            assert action == network.act(turn)
            above.append(action)

    _play("fuenfzehnern_v0", 11, check, opponent="heuristic")
    assert len(above) == 2


def test_german_whist_expert_plays_stage_2_exactly():
    from parlour.agents.solver.german_whist import optimal_moves

    stage2 = []

    def check(turn, action):
        if turn.state.stage == 2:
            assert action in optimal_moves(turn.game, turn.state)
            stage2.append(action)

    _play("german_whist_v0", 11, check, opponent="heuristic")
    assert stage2


def test_parlour_list_names_expert(capsys):
    assert cli_main(["list"]) == 0
    out = capsys.readouterr().out
    for name in envs.names():
        if pretrained.models_of(name):
            line = next(x for x in out.splitlines() if x.startswith(f"{name}:"))
            block = out[out.index(line) :].split("\n    agents: ")[1].split("\n")[0]
            assert "expert" in block.split(", "), name


@pytest.mark.parametrize("game_name", ["german_whist_v0", "forty_fives_v0"])
def test_expert_reads_only_what_its_seat_may_know(game_name):
    """Deals that differ only in cards the expert's seat cannot see (the record's
    ``hidden_twins``) get the same moves from two experts seeded alike while the games
    look the same to it: its samples come from what the seat knows."""
    rng = np.random.default_rng(3)
    decided = 0
    for trial in range(4):
        env_a, env_b = envs.make(game_name), envs.make(game_name)
        twins = envs.record(game_name).load("hidden_twins")
        opts_a, opts_b, observer, same_view = twins(env_a.unwrapped.game, rng)
        env_a.reset(seed=trial, options=opts_a)
        env_b.reset(seed=trial, options=opts_b)
        raw_a, raw_b = env_a.unwrapped, env_b.unwrapped
        expert_a = agents.make("expert", game_name, seed=trial)
        expert_b = agents.make("expert", game_name, seed=trial)
        while same_view(raw_a.game_state, raw_b.game_state):
            actor = env_a.agent_selection
            mask = env_a.observe(actor)["action_mask"]
            if raw_a.agent_name_mapping[actor] == observer:
                turns = [
                    Turn(r.game, r.game_state, observer, o["observation"], mask)
                    for r, o in (
                        (raw_a, env_a.observe(actor)),
                        (raw_b, env_b.observe(actor)),
                    )
                ]
                action = expert_a.act(turns[0])
                assert expert_b.act(turns[1]) == action
                decided += 1
            else:
                both = mask & env_b.observe(actor)["action_mask"]
                if not both.any():  # no common move: the hidden cards show next
                    break
                action = int(rng.choice(np.flatnonzero(both)))
            env_a.step(action)
            env_b.step(action)
    assert decided >= 8
