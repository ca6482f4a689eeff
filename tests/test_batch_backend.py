"""The batch backend (`parlour.training.backends.batch`): the Backend protocol, the
stitching of each game's learner decisions into a rollout, the advantage estimate,
and ``parlour train ENV --backend batch`` end to end (run directory, checkpoint,
``parlour eval``, ``ckpt:PATH``, resume, Ctrl-C, bad configs)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from helpers import record_engine_steps, tiny_training
from test_batch_selfplay import ToyTeams  # tests/ is on sys.path

from parlour import envs
from parlour.cli import main
from parlour.envs.batch import ENGINES
from parlour.training import backends
from parlour.training import checkpoint as ckpt_io
from parlour.training.arena import run_arena
from parlour.training.backends.batch import BatchBackend, PPOConfig, _Rollout
from parlour.training.selfplay import OpponentPool
from parlour.training.train import config_from_dict, train

TINY = tiny_training(512, every=256, n_envs=16, n_steps=16, batch_size=128)
# what --set needs for the same tiny run from the batch preset
TINY_SET = [
    f"{k}={json.dumps(v)}" for k, v in TINY.items() if k not in ("env", "tensorboard")
] + ["warm_start=''", "tensorboard=false"]


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as `train` does
    yield
    torch.set_num_threads(threads)


def make_backend(**overrides) -> BatchBackend:
    config = config_from_dict({**TINY, **overrides})
    pool = OpponentPool(config.env, dict(config.opponents), seed=config.seed)
    return BatchBackend(config, pool, None, lambda steps: None)


def test_batch_backend_is_registered():
    assert backends.BACKENDS["batch"] == "parlour.training.backends.batch:BatchBackend"


def test_hyperparameters_come_from_the_shared_config_keys():
    p = PPOConfig.from_train_config(config_from_dict(TINY))
    assert (p.num_games, p.rollout_steps, p.minibatch_size, p.update_epochs) == (
        16,
        256,
        128,
        1,
    )


def test_exported_weights_play_the_networks_policy():
    backend = make_backend()
    policy = backend.export_weights()
    obs = backend.env.turn.observation[:8]
    mask = backend.env.turn.mask[:8]
    with torch.no_grad():
        logp, _ = backend.net(obs, mask)
    logits = policy.logits(obs.numpy())
    masked = np.where(mask.numpy(), logits, -np.inf)
    expected = masked - np.logaddexp.reduce(masked, axis=1, keepdims=True)
    np.testing.assert_allclose(
        np.where(mask.numpy(), logp.numpy(), 0),
        np.where(mask.numpy(), expected, 0),
        atol=1e-5,
    )


def naive_advantages(buf: _Rollout, gamma: float, lam: float) -> np.ndarray:
    """GAE one decision at a time from the end, following each successor link."""
    n = len(buf.values)
    adv = np.zeros(n + 1)
    for k in range(n - 1, -1, -1):
        live = 0.0 if buf.dones[k] else 1.0
        delta = buf.rewards[k] + gamma * live * buf.next_values[k] - buf.values[k]
        adv[k] = delta + gamma * lam * live * adv[int(buf.successor[k])]
    return adv[:n]


def test_advantages_follow_each_games_chain():
    backend = make_backend()
    backend.begin(512, lambda kind, final: None)
    backend.collect()
    buf = backend.buffer
    buf.values = torch.randn(len(buf.values))  # any values: the recursion is the test
    got = buf.advantages(0.9, 0.8).numpy()
    np.testing.assert_allclose(got, naive_advantages(buf, 0.9, 0.8), rtol=1e-4)


@pytest.mark.parametrize(
    ("env", "scale"),
    [("german_whist_v0", 1.0), ("four seats", 1.0), ("four seats", 0.25)],
)
def test_a_rollout_stitches_each_games_decisions(env, scale, monkeypatch):
    """Replaying the engine steps a rollout made gives, for every stored decision,
    its game's next decision (or none), the rewards of its seat up to it (times
    ``reward_scale``), and whether the episode ended before it. Also over a made-up
    4-player partnership engine."""
    overrides = {"reward_scale": scale}
    if env == "four seats":
        monkeypatch.setitem(ENGINES, "forty_fives_v0", ToyTeams)
        overrides.update(env="forty_fives_v0", eval_opponents=["random"])
    backend = make_backend(n_steps=64, total_timesteps=1024, **overrides)
    env = backend.env
    log = record_engine_steps(env)
    backend.begin(1024, lambda kind, final: None)
    backend.collect()
    buf, size = backend.buffer, backend.rollout_steps
    rewards_log = np.stack([r.numpy() for _, r, _ in log])  # (steps, B)
    dones_log = np.stack([d.numpy() for _, _, d in log])
    # decisions in storage order: learner rows of each step by game, up to `size`
    games, steps = [], []
    for t, (learner, _, _) in enumerate(log):
        for g in learner.nonzero().squeeze(1).tolist():
            games.append(g)
            steps.append(t)
    cut = {g: t for g, t in zip(games[size:], steps[size:], strict=True)}
    games, steps = games[:size], steps[:size]
    assert buf.blocks[-1][1] == size and len(games) == size
    successor, later = [size] * size, {}
    for k in range(size - 1, -1, -1):
        successor[k] = later.get(games[k], size)
        later[games[k]] = k
    got = (buf.rewards.tolist(), buf.dones.tolist(), buf.successor.tolist())
    values, next_values = buf.values.tolist(), buf.next_values.tolist()
    for k, (g, t) in enumerate(zip(games, steps, strict=True)):
        succ = successor[k]
        end = steps[succ] if succ < size else cut.get(g, len(log))
        rewards, ended = 0.0, False
        for tt in range(t, end):
            if not ended:
                rewards += float(rewards_log[tt, g])
            ended = ended or bool(dones_log[tt, g])
        assert got[1][k] == ended, k
        assert got[0][k] == pytest.approx(rewards * scale), k
        if not ended:
            assert got[2][k] == succ, k
            if succ < size:
                assert next_values[k] == pytest.approx(values[succ])
    assert any(got[1]) and any(got[0])


def test_rewind_puts_back_the_rollout_start():
    backend = make_backend()
    backend.begin(512, lambda kind, final: None)
    backend.begin_rollout()
    before = {k: v.clone() for k, v in backend.net.state_dict().items()}
    backend.collect()
    backend.update()
    assert backend.steps == 256
    assert backend.rewind() == 0 and backend.steps == 0
    for k, v in backend.net.state_dict().items():
        torch.testing.assert_close(v, before[k])


# --- parlour train --backend batch ----------------------------------------------------
def test_train_eval_ckpt_and_resume_end_to_end(tmp_path, capsys):
    run = tmp_path / "run"
    args = ["train", "german_whist_v0", "--backend", "batch", "--preset", "batch"]
    args += ["--run-dir", str(run), "--quiet"]
    for item in TINY_SET:
        args += ["--set", item]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "trained 512 steps" in out
    for name in ("config.json", "evaluations.csv", "learning_curve.png", "latest.json"):
        assert (run / name).is_file(), name
    saved = ckpt_io.load(run)
    assert saved.step == 512 and saved.manifest["backend"] == "batch"
    assert saved.manifest["fingerprint"] == envs.fingerprint("german_whist_v0")
    assert saved.manifest["snapshots"] == ["self@256"]
    steps = [r["step"] for r in _rows(run)]
    assert steps == [0, 256, 512]

    assert main(["eval", str(run), "--vs", "random", "--games", "2", "--quiet"]) == 0
    assert "step 512" in capsys.readouterr().out
    result = run_arena("german_whist_v0", [f"ckpt:{run}", "random"], games=2)
    assert result.games == 2

    # resume continues the step count with the stored config
    resume = ["train", "german_whist_v0", "--backend", "batch", "--resume"]
    resume += ["--run-dir", str(run), "--quiet", "--set", "total_timesteps=1024"]
    assert main(resume) == 0
    assert "trained 1,024 steps" in capsys.readouterr().out
    assert ckpt_io.load(run).step == 1024
    # an sb3 resume of a batch run is refused before anything changes
    assert main([*resume[:3], "sb3", *resume[4:]]) == 2
    err = capsys.readouterr().err
    assert "trained with --backend batch" in err and len(err.splitlines()) == 1


def _rows(run):
    from parlour.training.rundir import read_evaluations

    return read_evaluations(run / "evaluations.csv")


def test_warm_start_fits_the_batch_network(tmp_path):
    config = config_from_dict(
        {
            **TINY,
            "warm_start": "heuristic",
            "warm_start_games": 4,
            "warm_start_epochs": 1,
            "total_timesteps": 256,
        }
    )
    result = train(config, run_dir=tmp_path, progress=False, backend="batch")
    report = json.loads((tmp_path / "warm_start.json").read_text())
    assert report["agreement"] > 0 and result.steps == 256
    assert ckpt_io.load(tmp_path / "checkpoints" / "step_000000000").step == 0


def test_interrupted_update_resumes_at_the_rollout_start(tmp_path, monkeypatch):
    config = config_from_dict(TINY)
    real = BatchBackend.update
    calls = {"n": 0}
    weights = {}

    def update(self):
        calls["n"] += 1
        if calls["n"] == 2:
            weights["start"] = {k: v.clone() for k, v in self.net.state_dict().items()}
            real(self)
            raise KeyboardInterrupt
        return real(self)

    monkeypatch.setattr(BatchBackend, "update", update)
    result = train(config, run_dir=tmp_path, progress=False, backend="batch")
    assert result.interrupted and result.steps == 256
    saved = ckpt_io.load(tmp_path)
    assert saved.step == 256
    for key, value in weights["start"].items():
        torch.testing.assert_close(saved.tensors["policy"][key], value)
    monkeypatch.undo()
    result = train(
        config, run_dir=tmp_path, resume=True, progress=False, backend="batch"
    )
    assert not result.interrupted and result.steps == 512


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["forty_fives_v0"], "forty_fives_v0 has no batched engine"),
        (["german_whist_v0"], "opponents.heuristic: the batched rollout"),
        (
            ["german_whist_v0", "--preset", "batch", "--set", "exact_aux_fraction=0.5"],
            "exact_aux_fraction labels positions",
        ),
        (
            ["german_whist_v0", "--preset", "batch", "--set", "env_options.episode=x"],
            "episode",
        ),
    ],
)
def test_bad_configs_are_one_line_before_anything_is_written(
    tmp_path, capsys, monkeypatch, args, message
):
    # whichever engines exist by now: Forty-Fives's is taken away
    monkeypatch.delitem(ENGINES, "forty_fives_v0", raising=False)
    run = tmp_path / "run"
    code = main(["train", *args, "--backend", "batch", "--run-dir", str(run)])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert not run.exists()


@pytest.mark.parametrize(
    ("env", "preset"),
    [
        ("forty_fives_v0", "batch"),
        ("fuenfzehnern_v0", "batch"),
        ("herzeln_v0", "batch"),
        ("herzeln_v0", "strong"),
        ("fuenfzehn_tot_v0", "batch"),
    ],
)
def test_every_batched_env_trains_with_its_batch_preset(env, preset, tmp_path, capsys):
    """Each env's ``--preset batch`` (and Herzeln's ``strong``, a batch recipe) runs as
    written (a tiny budget; the warm start off) on its batched engine and leaves a
    checkpoint that plays as ``ckpt:PATH``."""
    from parlour.envs import batch as batched
    from parlour.training import config as train_config

    assert env in batched.ENGINES and preset in train_config.presets(env)
    run = tmp_path / "run"
    args = ["train", env, "--backend", "batch", "--preset", preset]
    args += ["--run-dir", str(run), "--quiet"]
    for item in TINY_SET:
        if not item.startswith(("eval_every", "eval_games")):
            args += ["--set", item]
    args += ["--set", "eval_every=1000000", "--set", "eval_games=1"]
    assert main(args) == 0, capsys.readouterr().err
    saved = ckpt_io.load(run)
    assert saved.step == 512 and saved.manifest["env"] == env
    assert saved.manifest["game_options"]["players"] == 4
    result = run_arena(env, [f"ckpt:{run}", "random"], games=1)
    assert result.games == 1
