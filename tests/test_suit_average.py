"""The policy averaged over the renamings of the suits (`parlour.training.policy.
SuitAverage`): ``ckpt:PATH@sym``, ``@plain``, the manifest's ``suit_average`` and
their one-line refusals where an env's record renames no suits."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from parlour import agents, envs
from parlour.agents.base import Agent, Turn
from parlour.agents.checkpoint import CheckpointAgent
from parlour.agents.spec import AgentSpec
from parlour.training import checkpoint as ckpt_io
from parlour.training import pretrained
from parlour.training.arena import play_game
from parlour.training.batch_selfplay import _Snapshot, is_network
from parlour.training.distributed import ship_checkpoints, worker_agent
from parlour.training.policy import (
    NumpyPolicy,
    PolicyAgent,
    SuitAverage,
    actor_state,
    masked_softmax,
    pick,
    suit_renamings,
)

ENV = "german_whist_v0"
HONEYMOON = {"variant": "honeymoon"}
PLAIN_ENV = "herzeln_v0"  # its record renames no suits


def _game(options: dict | None = None):
    return envs.make(ENV, raw=True, **(options or {})).game


class _Recorder(Agent):
    """The heuristic bot, keeping every decision it is asked."""

    spec = "recorder"

    def __init__(self, options: dict | None, seed: int) -> None:
        self.bot = agents.make("heuristic", ENV, seed=seed, env_options=options)
        self.turns: list[Turn] = []

    def act(self, turn: Turn) -> int:
        self.turns.append(turn)
        return self.bot.act(turn)


def _turns(options: dict | None = None, games: int = 3, seed: int = 0) -> list[Turn]:
    """Every decision of a few games of the heuristic bot against itself."""
    env = envs.make(ENV, **(options or {}))
    recorder = _Recorder(options, seed)
    for g in range(games):
        play_game(env, [recorder, recorder], seed=seed + g)
    return recorder.turns


def _positions(options: dict | None = None, games: int = 3, seed: int = 0):
    """(observations, masks) of every decision of a few heuristic games."""
    turns = _turns(options, games, seed)
    return (
        np.array([t.observation for t in turns], dtype=np.float32),
        np.array([t.mask for t in turns]).astype(bool),
    )


def _best(average: SuitAverage, observation: np.ndarray, mask: np.ndarray) -> int:
    """The averaged policy's best move."""
    return pick(average.log_probabilities(observation, mask), mask)


def _shipped_policy(name: str = ENV) -> NumpyPolicy:
    loaded = ckpt_io.load(pretrained.named(name))
    return NumpyPolicy(ckpt_io.to_numpy(loaded.tensors["policy"]), "relu")


def _symmetric_linear_policy(game, seed: int = 0) -> NumpyPolicy:
    """A linear policy (no hidden layer) made symmetric under every renaming: its
    weights averaged over the renamings, so renaming a position renames its
    logits."""
    obs_index, action_index = suit_renamings(ENV, game)
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(game.observation_size, game.num_actions))
    b = rng.normal(size=game.num_actions)
    w_sym = np.mean(
        [w[o][:, a] for o, a in zip(obs_index, action_index, strict=True)], axis=0
    )
    b_sym = np.mean([b[a] for a in action_index], axis=0)
    return NumpyPolicy(
        actor_state([], (w_sym.T.astype(np.float32), b_sym.astype(np.float32)))
    )


@pytest.mark.parametrize("options", [{}, HONEYMOON], ids=["german", "honeymoon"])
def test_renamings_are_24_permutations_with_the_identity_first(options):
    game = _game(options)
    obs_index, action_index = suit_renamings(ENV, game)
    assert obs_index.shape == (24, game.observation_size)
    assert action_index.shape == (24, game.num_actions)
    assert (obs_index[0] == np.arange(game.observation_size)).all()
    assert (action_index[0] == np.arange(game.num_actions)).all()
    assert len({tuple(a) for a in action_index}) == 24
    for index in (*obs_index, *action_index):
        assert sorted(index) == list(range(len(index)))


def test_the_identity_renaming_alone_is_the_plain_policy():
    policy = _shipped_policy()
    game = _game()
    obs, masks = _positions()
    obs_index, action_index = suit_renamings(ENV, game)
    identity = SuitAverage(policy, (obs_index[:1], action_index[:1]))
    plain = masked_softmax(policy.logits(obs), masks)
    assert np.allclose(identity.probabilities(obs, masks), plain, atol=1e-6)
    for o, m in zip(obs, masks, strict=True):
        assert _best(identity, o, m) == policy.act(o, m)


def test_a_symmetric_network_plays_as_its_average():
    game = _game()
    policy = _symmetric_linear_policy(game)
    obs, masks = _positions()
    average = SuitAverage(policy, suit_renamings(ENV, game))
    plain = masked_softmax(policy.logits(obs), masks)
    assert np.allclose(average.probabilities(obs, masks), plain, atol=1e-5)
    assert [_best(average, o, m) for o, m in zip(obs, masks, strict=True)] == [
        policy.act(o, m) for o, m in zip(obs, masks, strict=True)
    ]


@pytest.mark.parametrize(
    ("name", "options"),
    [(ENV, {}), ("german_whist_v0.honeymoon", HONEYMOON)],
    ids=["german", "honeymoon"],
)
def test_a_renamed_position_gets_the_renamed_move(name, options):
    """The average is symmetric although the network is not: the network's own
    probabilities of a renamed position are not the renamed probabilities."""
    policy = _shipped_policy(name)
    game = _game(options)
    obs_index, action_index = suit_renamings(ENV, game)
    average = SuitAverage(policy, (obs_index, action_index))
    obs, masks = _positions(options, games=2)
    plain_differs = False
    for k in (1, 9, 23):  # a few renamings other than the identity
        o_k, a_k = obs_index[k], action_index[k]
        renamed = average.probabilities(obs[:, o_k], masks[:, a_k])
        assert np.allclose(
            renamed, average.probabilities(obs, masks)[:, a_k], atol=1e-5
        )
        best = [_best(average, o, m) for o, m in zip(obs, masks, strict=True)]
        renamed_best = [
            _best(average, o[o_k], m[a_k]) for o, m in zip(obs, masks, strict=True)
        ]
        assert [a_k[j] for j in renamed_best] == best
        plain = masked_softmax(policy.logits(obs[:, o_k]), masks[:, a_k])
        own = masked_softmax(policy.logits(obs), masks)[:, a_k]
        plain_differs |= not np.allclose(plain, own, atol=1e-3)
    assert plain_differs


def test_sampling_draws_from_the_average():
    policy = _shipped_policy()
    average = SuitAverage(policy, suit_renamings(ENV, _game()))
    turns = _turns(games=1)
    p = average.probabilities(
        np.array([t.observation for t in turns]), np.array([t.mask for t in turns])
    )
    # the decision where the averaged distribution is widest
    row = int(np.argmin(p.max(axis=1)))
    assert p[row].max() < 0.9
    agent = PolicyAgent(policy, "x", deterministic=False, seed=3, suit_average=average)
    draws = [agent.act(turns[row]) for _ in range(4000)]
    counts = np.bincount(draws, minlength=policy.num_actions) / len(draws)
    assert np.abs(counts - p[row]).max() < 0.03
    greedy = PolicyAgent(policy, "x", suit_average=average)
    assert greedy.act(turns[row]) == int(np.argmax(p[row]))


def test_an_average_of_another_policy_is_refused():
    policy = _shipped_policy()
    other = SuitAverage(_shipped_policy(), suit_renamings(ENV, _game()))
    with pytest.raises(ValueError, match="agent's own policy"):
        PolicyAgent(policy, "x", suit_average=other)


# --- specs ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "canonical", "average", "sample"),
    [
        ("ckpt:runs/x@sym", "ckpt:runs/x@sym", True, False),
        ("ckpt:runs/x@sample@sym", "ckpt:runs/x@sym@sample", True, True),
        ("ckpt:runs/a@b@plain", "ckpt:runs/a@b@plain", False, False),
        ("pretrained@sym", "pretrained@sym", True, False),
        ("pretrained:german_whist_v0@plain@sample", None, False, True),
        ("endgame:ckpt:runs/x@sym", "endgame:ckpt:runs/x@sym", None, False),
    ],
)
def test_suffixes_parse_and_write_back(text, canonical, average, sample):
    spec = AgentSpec.parse(text)
    assert str(spec) == (canonical or "pretrained:german_whist_v0@plain@sample")
    assert AgentSpec.parse(str(spec)) == spec
    assert spec.base.suit_average is (True if spec.inner else average)
    assert spec.base.sample is sample


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ckpt:runs/x@sym@plain", "at most once"),
        ("pretrained@sample@sample", "at most once"),
        ("random@sym", "only ckpt:PATH and pretrained take @sym"),
        ("heuristic@plain", "only ckpt:PATH and pretrained take @plain"),
    ],
)
def test_malformed_suffixes_are_refused_in_one_line(text, message):
    with pytest.raises(ValueError, match=message) as err:
        AgentSpec.parse(text)
    assert "\n" not in str(err.value)


def test_sym_is_refused_where_the_env_renames_no_suits():
    for text in ("pretrained@sym", "ckpt:runs/x@sym"):
        with pytest.raises(ValueError, match="herzeln_v0 has no suit renaming") as err:
            AgentSpec.parse(text, PLAIN_ENV)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="no suit renaming"):
        agents.make(AgentSpec("pretrained", suit_average=True), PLAIN_ENV)
    # the network alone is what such an env plays anyway
    assert agents.make("pretrained@plain", PLAIN_ENV).suit_average is None


def test_an_averaging_agent_is_a_network_the_batch_can_play():
    assert is_network("pretrained@sym") and is_network("ckpt:runs/x@plain@sample")
    assert not is_network("endgame:ckpt:runs/x@sym")


def test_the_batched_rollout_plays_the_average():
    agent = agents.make("pretrained@sym", ENV)
    obs, masks = _positions(games=1)
    import torch

    snapshot = _Snapshot(agent.policy, True, agent.suit_average)
    scores = snapshot.scores(torch.from_numpy(obs), torch.from_numpy(masks))
    chosen = scores.masked_fill(~torch.from_numpy(masks), -torch.inf).argmax(dim=1)
    assert chosen.tolist() == [
        _best(agent.suit_average, o, m) for o, m in zip(obs, masks, strict=True)
    ]
    plain = _Snapshot(agent.policy, True).scores(torch.from_numpy(obs), None)
    assert torch.equal(plain, snapshot.logits(torch.from_numpy(obs)))


# --- the manifest --------------------------------------------------------------
@pytest.fixture
def model(tmp_path):
    """A copy of the shipped German Whist model without ``suit_average``."""
    directory = shutil.copytree(pretrained.named(ENV), tmp_path / ENV)
    return ckpt_io.set_suit_average(directory, False)


def test_the_manifest_flag_round_trips(model):
    path = str(model)
    assert not ckpt_io.load(model).suit_average
    assert CheckpointAgent(path, ENV).suit_average is None
    ckpt_io.set_suit_average(model, True)
    loaded = ckpt_io.load(model)  # both hashes still check
    assert loaded.suit_average and loaded.manifest["suit_average"] is True
    assert CheckpointAgent(path, ENV).suit_average is not None
    assert agents.make(f"ckpt:{path}", ENV).suit_average is not None
    plain = agents.make(f"ckpt:{path}@plain", ENV)
    assert plain.suit_average is None and plain.spec == f"ckpt:{path}@plain"
    ckpt_io.set_suit_average(model, False)
    assert agents.make(f"ckpt:{path}", ENV).suit_average is None
    sym = agents.make(f"ckpt:{path}@sym@sample", ENV)
    assert sym.suit_average is not None and not sym.deterministic


def test_the_league_tells_the_average_from_the_network_alone(model):
    """One set of weights played two ways is two players in a league: their hashes
    differ, whether the spec or the manifest says which way."""
    from parlour.league.identity import checkpoint_hash, identify

    path = str(model)
    weights = ckpt_io.load(model).manifest["weights_sha256"]
    assert checkpoint_hash(f"ckpt:{path}", ENV) == weights
    assert checkpoint_hash(f"ckpt:{path}@plain", ENV) == weights
    averaged = checkpoint_hash(f"ckpt:{path}@sym", ENV)
    assert averaged != weights and len(averaged) == len(weights)
    ckpt_io.set_suit_average(model, True)
    assert checkpoint_hash(f"ckpt:{path}", ENV) == averaged
    assert checkpoint_hash(f"ckpt:{path}@plain", ENV) == weights
    name, digest = identify(f"ckpt:{path}", ENV)
    assert digest == averaged and name.endswith("#" + averaged[:12])


def test_export_writes_the_flag(model, tmp_path):
    out = pretrained.export(model, tmp_path / "root", suit_average=True)
    assert ckpt_io.load(out).suit_average
    again = pretrained.export(out, tmp_path / "again")  # kept when not given
    assert ckpt_io.load(again).suit_average


def test_a_flag_that_is_not_a_boolean_is_refused(model):
    manifest = json.loads((model / "manifest.json").read_text())
    manifest["suit_average"] = "yes"
    manifest["manifest_sha256"] = ckpt_io.manifest_digest(manifest)
    (model / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ckpt_io.CheckpointError, match="true or false") as err:
        ckpt_io.load(model)
    assert "\n" not in str(err.value)


def test_the_flag_is_refused_where_the_env_renames_no_suits(tmp_path):
    directory = shutil.copytree(pretrained.named(PLAIN_ENV), tmp_path / PLAIN_ENV)
    for write in (
        lambda: ckpt_io.set_suit_average(directory, True),
        lambda: pretrained.export(directory, tmp_path / "root", suit_average=True),
        lambda: CheckpointAgent(str(directory), PLAIN_ENV, suit_average=True),
    ):
        with pytest.raises(ValueError, match="no suit renaming") as err:
            write()
        assert "\n" not in str(err.value)
    assert not (tmp_path / "root").exists()
    assert not ckpt_io.load(directory).suit_average


def test_a_ray_worker_plays_the_flag_of_the_shipped_weights(model):
    ckpt_io.set_suit_average(model, True)
    spec = f"ckpt:{model}"
    shipped = ship_checkpoints([spec])
    assert shipped[str(model)].manifest["suit_average"] is True
    agent = worker_agent(spec, ENV, checkpoints=shipped, role="sym-test")
    assert agent.suit_average is not None
    plain = worker_agent(f"{spec}@plain", ENV, checkpoints=shipped, role="sym-test")
    assert plain.suit_average is None


@pytest.mark.parametrize(
    ("name", "options"),
    [(ENV, {}), ("german_whist_v0.honeymoon", HONEYMOON)],
    ids=["german", "honeymoon"],
)
def test_the_shipped_models_play_the_average_everywhere(name, options):
    """``pretrained``, ``ckpt:`` of its directory, and the network under ``expert``'s
    search all read the manifest's flag; ``@plain`` is the network alone."""
    directory = pretrained.named(name)
    assert ckpt_io.load(directory).suit_average
    for spec in ("pretrained", f"pretrained:{name}", f"ckpt:{directory}"):
        agent = agents.make(spec, ENV, env_options=options)
        assert agent.suit_average is not None, spec
    plain = agents.make("pretrained@plain", ENV, env_options=options)
    assert plain.suit_average is None
    expert = agents.make("expert", ENV, env_options=options)
    assert expert._given_base.suit_average is not None  # the PIMC bot's base agent
