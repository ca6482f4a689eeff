"""The batch backend's algorithms (`parlour.training.algos`: ``--algo ppo|mmd|nfsp|
dmc``): each trains on every env with a batched engine and leaves a checkpoint that
plays as ``ckpt:PATH``; resume and Ctrl-C keep each one's networks; DMC's returns,
NFSP's transitions and reservoir, MMD's magnet; bad hyperparameters are one line before
a run directory exists."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from helpers import record_engine_steps, tiny_training

from parlour.cli import main
from parlour.envs.batch import ENGINES
from parlour.training import backends
from parlour.training import checkpoint as ckpt_io
from parlour.training.algos import ALGOS, learner_class
from parlour.training.algos.dmc import DMCBackend
from parlour.training.algos.mmd import MMDBackend
from parlour.training.algos.nfsp import NFSPBackend
from parlour.training.arena import run_arena
from parlour.training.backends.batch import BatchBackend
from parlour.training.selfplay import OpponentPool
from parlour.training.train import config_from_dict, resume_config, train

TINY = tiny_training(
    256,
    every=128,
    n_envs=8,
    n_steps=16,
    batch_size=32,
    replay_size=256,
    reservoir_size=256,
    target_update_every=2,
    eval_games=1,
    eval_every=1_000_000,
)
SETTINGS = {
    "mmd": {"mmd_magnet_every": 1, "mmd_magnet_step": 0.5},
    "nfsp": {"nfsp_eta": 0.5},
    "dmc": {"epsilon": 0.1},
}


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as `train` does
    yield
    torch.set_num_threads(threads)


def config_of(algo: str, **overrides):
    return config_from_dict(
        {**TINY, "algo": algo, **SETTINGS.get(algo, {}), **overrides}
    )


def make_backend(algo: str, **overrides):
    config = config_of(algo, **overrides)
    pool = OpponentPool(config.env, dict(config.opponents), seed=config.seed)
    return BatchBackend(config, pool, None, lambda steps: None)


def test_every_algo_has_its_class():
    assert list(ALGOS) == ["ppo", "mmd", "nfsp", "dmc"]
    classes = [BatchBackend, MMDBackend, NFSPBackend, DMCBackend]
    assert [learner_class(a) for a in ALGOS] == classes
    for algo, cls in zip(ALGOS, classes, strict=True):
        assert type(make_backend(algo)) is cls


@pytest.mark.parametrize("env", sorted(ENGINES))
@pytest.mark.parametrize("algo", list(ALGOS))
def test_each_algo_trains_on_each_batched_env(algo, env, tmp_path):
    """A few rollouts, then the checkpoint plays as ``ckpt:PATH`` in the arena."""
    options = {} if env == "german_whist_v0" else {"eval_opponents": ["random"]}
    result = train(
        config_of(algo, env=env, **options),
        run_dir=tmp_path,
        progress=False,
        backend="batch",
    )
    assert result.steps == 256 and not result.interrupted
    saved = ckpt_io.load(tmp_path)
    assert saved.step == 256 and saved.manifest["config"]["algo"] == algo
    arena = run_arena(env, [f"ckpt:{tmp_path}", "random"], games=2, seed=3)
    assert arena.games == 2


@pytest.mark.parametrize("algo", list(ALGOS))
def test_the_checkpoint_plays_the_algorithms_policy(algo, tmp_path):
    """``ckpt:PATH`` plays the network that is the algorithm's policy: PPO's and MMD's
    actor, NFSP's average policy, DMC's greedy argmax over the masked Q-values."""
    train(config_of(algo), run_dir=tmp_path, progress=False, backend="batch")
    saved = ckpt_io.load(tmp_path)
    backend = make_backend(algo)
    backend.restore(saved)
    net = {"ppo": "net", "mmd": "net", "nfsp": "average", "dmc": "q"}[algo]
    turn = backend.env.turn
    obs, mask = turn.observation[:8], turn.mask[:8]
    with torch.no_grad():
        network = getattr(backend, net)
        out = network(obs, mask)[0] if net == "net" else network(obs)
    want = out.masked_fill(~mask, -torch.inf).argmax(1).numpy()
    policy = backend.export_weights()
    got = [policy.act(o, m) for o, m in zip(obs.numpy(), mask.numpy(), strict=True)]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("algo", ["mmd", "nfsp", "dmc"])
def test_resume_restores_every_network(algo, tmp_path):
    train(config_of(algo), run_dir=tmp_path, progress=False, backend="batch")
    saved = ckpt_io.load(tmp_path)
    backend = make_backend(algo)
    backend.restore(saved)
    for name, module in backend.modules().items():
        if isinstance(module, torch.nn.Module):
            for key, value in module.state_dict().items():
                torch.testing.assert_close(value, saved.tensors[name][key])
    config, changes = resume_config(tmp_path, ["total_timesteps=512"])
    assert changes == ["total_timesteps: 256 -> 512"]
    result = train(
        config, run_dir=tmp_path, resume=True, progress=False, backend="batch"
    )
    assert result.steps == 512 and ckpt_io.load(tmp_path).step == 512
    # the algorithm is kept on resume: another one's networks are not in the checkpoint
    other = "dmc" if algo != "dmc" else "nfsp"
    with pytest.raises(ValueError, match="a resumed run keeps its algo"):
        resume_config(tmp_path, [f"algo={other}"])


@pytest.mark.parametrize("algo", ["mmd", "nfsp", "dmc"])
def test_interrupted_update_rewinds_every_network(algo, tmp_path, monkeypatch):
    cls = learner_class(algo)
    real = cls.update
    calls = {"n": 0}
    start = {}

    def update(self):
        calls["n"] += 1
        if calls["n"] == 2:
            for name, module in self.modules().items():
                if isinstance(module, torch.nn.Module):
                    start[name] = {k: v.clone() for k, v in module.state_dict().items()}
            real(self)
            raise KeyboardInterrupt
        return real(self)

    monkeypatch.setattr(cls, "update", update)
    result = train(config_of(algo), run_dir=tmp_path, progress=False, backend="batch")
    assert result.interrupted and result.steps == 128
    saved = ckpt_io.load(tmp_path)
    assert start.keys() >= {"policy"}
    for name, tensors in start.items():
        for key, value in tensors.items():
            torch.testing.assert_close(saved.tensors[name][key], value)


# --- the algorithms' own pieces -------------------------------------------------------
def test_dmc_regresses_each_decisions_monte_carlo_return():
    """Replaying the engine steps: a stored decision's target is its seat's rewards
    from that decision to the end of its episode (times reward_scale), and the
    decisions whose episode has not ended wait for the next rollout."""
    backend = make_backend("dmc", n_steps=64, total_timesteps=1024, reward_scale=0.5)
    backend.begin(1024, lambda kind, final: None)
    log = record_engine_steps(backend.env)
    backend.collect()
    B = backend.env.batch_size
    # per game: the stored decisions in order and the rewards after each
    open_: dict[int, list[list[float]]] = {g: [] for g in range(B)}
    returns: list[float] = []
    stored = 0
    for learner, rewards, dones in log:
        for g in learner.nonzero().squeeze(1).tolist():
            if stored < backend.rollout_steps:
                open_[g].append([0.0])
                stored += 1
        for g in range(B):
            for d in open_[g]:
                d[0] += float(rewards[g]) * 0.5
            if dones[g]:
                returns += [d[0] for d in open_[g]]
                open_[g] = []
    got = sorted(backend._ready["ret"].tolist())
    np.testing.assert_allclose(got, sorted(returns), atol=1e-5)
    waiting = sum(len(v) for v in open_.values())
    assert len(backend._waiting["obs"]) == waiting
    assert len(returns) + waiting == backend.rollout_steps


def test_nfsp_transitions_chain_each_games_decisions():
    """A transition's reward is the seat's rewards up to the game's next learner
    decision, whose observation is its next state; an episode's end closes it."""
    backend = make_backend("nfsp", n_steps=32, total_timesteps=1024, replay_size=1024)
    backend.begin(1024, lambda kind, final: None)
    obs_log = []
    real_act = backend.act

    def act(obs, mask, best_response):
        obs_log.append(obs.clone())
        return real_act(obs, mask, best_response)

    backend.act = act
    log = record_engine_steps(backend.env)
    backend.collect()
    r = backend.replay
    slot = 0
    pending: dict[int, int] = {}
    want_reward = np.zeros(1024)
    for (learner, rewards, dones), obs in zip(log, obs_log, strict=True):
        for i, g in enumerate(learner.nonzero().squeeze(1).tolist()):
            if g in pending:
                torch.testing.assert_close(r["next_obs"][pending[g]], obs[i])
                assert r["complete"][pending[g]] and not r["done"][pending[g]]
            torch.testing.assert_close(r["obs"][slot], obs[i])
            pending[g] = slot
            slot += 1
        for g, s in pending.items():
            want_reward[s] += float(rewards[g])
        for g in dones.nonzero().squeeze(1).tolist():
            if g in pending:
                assert r["done"][pending.pop(g)]
    np.testing.assert_allclose(
        r["reward"][:slot].numpy(), want_reward[:slot], atol=1e-5
    )
    for s in pending.values():
        assert not r["complete"][s]


def test_nfsp_reservoir_keeps_a_uniform_sample():
    backend = make_backend("nfsp", reservoir_size=100)
    n_obs = backend.env.observation_size
    A = backend.env.num_actions
    counts = np.zeros(1000)
    for _ in range(40):
        backend._seen = 0
        for start in range(0, 1000, 50):
            ids = torch.arange(start, start + 50)
            obs = ids[:, None].float().expand(50, n_obs)
            backend._keep_best_response(obs, torch.ones(50, A, dtype=torch.bool), ids)
        kept = backend.reservoir["action"].numpy()
        assert len(set(kept.tolist())) == 100
        counts[kept] += 1
    # each of the 1,000 decisions is kept with probability 1/10: about 4 times in 40
    assert counts[:500].sum() == pytest.approx(counts[500:].sum(), rel=0.25)


def test_nfsp_draws_best_response_games_with_eta():
    backend = make_backend(
        "nfsp", nfsp_eta=0.25, n_envs=4000, n_steps=1, total_timesteps=4000
    )
    backend.begin(256, lambda kind, final: None)
    assert backend._best_response.float().mean() == pytest.approx(0.25, abs=0.03)


def test_mmd_magnet_pulls_and_moves():
    backend = make_backend(
        "mmd", mmd_alpha=0.5, mmd_magnet_every=2, mmd_magnet_step=0.5
    )
    turn = backend.env.turn
    obs, mask = turn.observation, turn.mask
    logp = backend.net.masked_log_probs(obs, mask)
    extra, terms = backend.regulariser(obs, mask, logp)
    assert float(extra.detach()) == pytest.approx(
        0.0, abs=1e-6
    )  # the magnet is the policy
    backend.begin(256, lambda kind, final: None)
    magnet0 = {k: v.clone() for k, v in backend.magnet.state_dict().items()}
    backend.collect()
    backend.update()  # update 1: the magnet stays
    for k, v in backend.magnet.state_dict().items():
        torch.testing.assert_close(v, magnet0[k])
    backend.collect()
    backend.update()  # update 2: halfway to the current policy
    current = backend.net.state_dict()
    for k, v in backend.magnet.state_dict().items():
        torch.testing.assert_close(v, (magnet0[k] + current[k]) / 2)
    logp = backend.net.masked_log_probs(obs, mask)
    extra, terms = backend.regulariser(obs, mask, logp)
    assert float(terms["magnet_kl"]) > 0
    assert float(extra.detach()) == pytest.approx(0.5 * float(terms["magnet_kl"]))


# --- the command line -----------------------------------------------------------------
def test_algo_flag_and_config_key_pick_the_algorithm(tmp_path, capsys):
    run = tmp_path / "run"
    args = ["train", "german_whist_v0", "--backend", "batch", "--algo", "dmc"]
    args += ["--run-dir", str(run), "--quiet", "--set", "warm_start=''"]
    for key, value in TINY.items():
        if key != "env":
            args += ["--set", f"{key}={json.dumps(value)}"]
    assert main(args) == 0, capsys.readouterr().err
    assert ckpt_io.load(run).manifest["config"]["algo"] == "dmc"
    assert main(["eval", str(run), "--vs", "random", "--games", "2", "--quiet"]) == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--algo", "a2c"],
            "--algo a2c: not an algorithm (algos: ppo, mmd, nfsp, dmc)",
        ),
        (["--set", "algo=a2c"], "algo must be one of ppo, mmd, nfsp, dmc"),
        (["--set", "mmd_alpha=-1"], "mmd_alpha must be >= 0"),
        (["--set", "mmd_magnet_every=0"], "mmd_magnet_every must be a positive"),
        (["--set", "mmd_magnet_step=0"], "mmd_magnet_step must lie in (0, 1]"),
        (["--set", "nfsp_eta=1.5"], "nfsp_eta must lie in (0, 1]"),
        (["--set", "epsilon=-0.1"], "epsilon must lie in [0, 1]"),
        (["--set", "epsilon_end=2"], "epsilon_end must lie in [0, 1]"),
        (["--set", "nfsp_sl_learning_rate=0"], "nfsp_sl_learning_rate must be"),
        (["--set", "target_update_every=0"], "target_update_every must be a positive"),
        (
            ["--algo", "nfsp", "--set", "replay_size=16"],
            "replay_size 16 is smaller than a minibatch",
        ),
        (
            ["--algo", "nfsp", "--set", "warm_start=heuristic"],
            "warm_start fits an actor-critic, which algo=nfsp does not have",
        ),
        (["--algo", "mmd", "--backend", "sb3"], "algo=mmd runs on the batched engines"),
    ],
)
def test_bad_hyperparameters_are_one_line_before_a_run_dir(
    tmp_path, capsys, extra, message
):
    run = tmp_path / "run"
    args = ["train", "german_whist_v0", "--backend", "batch", "--preset", "batch"]
    args += ["--run-dir", str(run), "--set", "warm_start=''", "--set", "batch_size=32"]
    code = main([*args, *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not run.exists()


@pytest.mark.parametrize("env", sorted(ENGINES))
def test_every_batched_env_has_a_preset_per_algorithm(env):
    from parlour.training import config as train_config

    for algo in ("mmd", "nfsp", "dmc"):
        assert f"batch.{algo}" in train_config.presets(env)
        config = train_config.load_config(None, env=env, preset=f"batch.{algo}")
        assert config.algo == algo and config.env == env and not config.warm_start
        backends.check_config("batch", config)


@pytest.mark.parametrize("algo", ["mmd", "nfsp", "dmc"])
def test_the_german_whist_presets_run_as_written(algo, tmp_path, capsys):
    """Each algorithm's German Whist preset trains (a tiny budget) and plays."""
    run = tmp_path / "run"
    args = [
        "train",
        "german_whist_v0",
        "--backend",
        "batch",
        "--preset",
        f"batch.{algo}",
    ]
    args += ["--run-dir", str(run), "--quiet"]
    for key in ("total_timesteps", "n_envs", "n_steps", "batch_size", "net_arch"):
        args += ["--set", f"{key}={json.dumps(TINY[key])}"]
    args += ["--set", "eval_games=1", "--set", "tensorboard=false"]
    assert main(args) == 0, capsys.readouterr().err
    assert ckpt_io.load(run).manifest["config"]["algo"] == algo


@pytest.mark.parametrize("algo", list(ALGOS))
def test_every_algorithm_implements_the_backend_protocol(algo):
    """Each learner class has the protocol's methods with its signatures (as
    tests/test_backends.py checks the class each backend name points to)."""
    import inspect

    wanted = {
        name: member
        for name, member in vars(backends.Backend).items()
        if not name.startswith("_")
    }
    cls = learner_class(algo)
    for name, member in wanted.items():
        have = getattr(cls, name, None)
        assert have is not None, f"{cls.__name__} lacks {name}"
        if isinstance(member, property):
            assert isinstance(have, property), name
        elif callable(member):
            assert list(inspect.signature(have).parameters) == list(
                inspect.signature(member).parameters
            ), name
