"""``parlour train --backend rllib``: the RLlib module's actor is the `NumpyPolicy`
that evaluations and ``ckpt:`` agents play; bad input (Ray missing, an unsupported
Ray, an unreachable cluster, options of another backend) is one line and exit 2 with
nothing written; on a local Ray a tiny run writes the run directory, its checkpoint
plays as ``ckpt:PATH``, an interrupt in the middle of an update keeps the weights of
the rollout's start, and ``--resume`` continues the steps and the pool. The slow test
trains on a 2-node cluster started with ``ray start`` (`tests/ray_cluster.py`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from parlour import envs
from parlour.cli import main as cli
from parlour.integrations import rllib as prl
from parlour.training import checkpoint as ckpt_io
from parlour.training import imitation
from parlour.training.arena import run_arena
from parlour.training.backends import ray_support
from parlour.training.backends import rllib as rllib_backend
from parlour.training.policy import NumpyPolicy
from parlour.training.train import config_from_dict, read_evaluations, run_state, train

sys.path.insert(0, str(Path(__file__).parent))
from helpers import tiny_training  # noqa: E402
from ray_cluster import RayCluster, free_port  # noqa: E402

TINY = tiny_training(512, every=256, n_steps=128, eval_games=4, tensorboard=True)


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_numpy_policy_is_the_modules_actor(activation: str) -> None:
    """`export_weights`' renaming: NumpyPolicy's logits are the RLlib module's
    (masked) action logits, for every legal action."""
    env = prl.rllib_env("german_whist_v0")
    space = env.observation_spaces[env.possible_agents[0]]
    module = prl.MaskedPPOTorchRLModule(
        observation_space=space,
        action_space=env.action_spaces[env.possible_agents[0]],
        model_config={
            "fcnet_hiddens": [32, 24],
            "fcnet_activation": activation,
            "head_fcnet_hiddens": [],
            "vf_share_layers": False,
        },
    )
    policy = NumpyPolicy(rllib_backend.sb3_actor(module.state_dict()), activation)
    rng = np.random.default_rng(0)
    obs = rng.random((8, space[prl.OBS_KEY].shape[0])).astype(np.float32)
    mask = (rng.random((8, space[prl.MASK_KEY].shape[0])) < 0.5).astype(np.float32)
    mask[:, 0] = 1.0

    def logits(mask: np.ndarray) -> np.ndarray:
        batch = {
            prl.OBS_KEY: torch.from_numpy(obs),
            prl.MASK_KEY: torch.from_numpy(mask),
        }
        with torch.no_grad():
            return module.forward_inference({"obs": batch})[
                "action_dist_inputs"
            ].numpy()

    np.testing.assert_allclose(
        policy.logits(obs), logits(np.ones_like(mask)), rtol=1e-5, atol=1e-5
    )
    masked = logits(mask)
    for row in range(len(obs)):
        assert policy.act(obs[row], mask[row]) == int(masked[row].argmax())


# --- bad input: one line, exit 2, nothing written ------------------------------------
def _refused(capsys, tmp_path: Path, *extra: str) -> str:
    run_dir = tmp_path / "run"
    code = cli(
        [
            "train",
            "german_whist_v0",
            "--backend",
            "rllib",
            "--run-dir",
            str(run_dir),
            "--quiet",
            *extra,
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1, err
    assert not run_dir.exists()
    return err


def test_without_ray_installed(monkeypatch, capsys, tmp_path: Path) -> None:
    monkeypatch.setattr(ray_support, "ray_version", lambda: None)
    err = _refused(capsys, tmp_path)
    assert "not installed" in err and "pip install 'parlour[rllib]'" in err


def test_unsupported_ray_version(monkeypatch, capsys, tmp_path: Path) -> None:
    monkeypatch.setattr(ray_support, "ray_version", lambda: "2.45.0")
    err = _refused(capsys, tmp_path)
    assert "supports Ray 2.60.x, not the installed 2.45.0" in err


def test_unreachable_address(capsys, tmp_path: Path) -> None:
    err = _refused(capsys, tmp_path, "--address", f"127.0.0.1:{free_port()}")
    assert "no Ray cluster answers at --address 127.0.0.1:" in err
    assert "ray start --head" in err
    err = _refused(capsys, tmp_path, "--address", "127.0.0.1:notaport")
    assert "is not HOST:PORT" in err


def test_rllib_options_elsewhere_and_unsupported_keys(capsys, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    for extra in (["--address", "127.0.0.1:6379"], ["--num-env-runners", "2"]):
        code = cli(
            ["train", "german_whist_v0", "--run-dir", str(run_dir), "--quiet", *extra]
        )
        err = capsys.readouterr().err.strip()
        assert code == 2 and "not an option of --backend sb3" in err
    err = _refused(capsys, tmp_path, "--set", "exact_aux_fraction=0.1")
    assert "exact_aux_fraction is not supported by --backend rllib" in err
    with pytest.raises(SystemExit):  # argparse: a negative count
        cli(
            [
                "train",
                "german_whist_v0",
                "--backend",
                "rllib",
                "--num-env-runners",
                "-1",
            ]
        )
    assert not run_dir.exists()


# --- on a local Ray ------------------------------------------------------------------


@pytest.mark.xdist_group("ray")
def test_tiny_run_checkpoint_interrupt_and_resume(
    local_ray, tmp_path: Path, capsys
) -> None:
    """``parlour train --backend rllib`` with one env runner, 512 steps in rollouts of
    256. The learner's update of the second rollout is interrupted after it changed
    the weights: the checkpoint holds the weights of that rollout's start and 256
    steps, and the command to continue names the backend. A resume with another
    backend is refused; ``--resume`` trains to 512 with the pool's snapshots back;
    the run directory is complete and its checkpoint plays as ``ckpt:PATH``."""
    from ray.rllib.core.learner.learner_group import LearnerGroup

    run_dir = tmp_path / "run"
    config_file = tmp_path / "tiny.yaml"
    config_file.write_text(yaml.safe_dump(TINY))
    command = ["train", "german_whist_v0", "--run-dir", str(run_dir), "--quiet"]
    real_update = LearnerGroup.update
    seen: dict[str, object] = {"calls": 0}

    def update_then_interrupt(self, *args, **kwargs):
        seen["calls"] += 1
        if seen["calls"] == 2:
            module = self._learner.module[next(iter(self._learner.module.keys()))]
            seen["before"] = {k: v.clone() for k, v in module.state_dict().items()}
            real_update(self, *args, **kwargs)
            after = module.state_dict()
            assert any(not torch.equal(seen["before"][k], after[k]) for k in after)
            raise KeyboardInterrupt
        return real_update(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(LearnerGroup, "update", update_then_interrupt)
        code = cli(
            [
                *command,
                "--config",
                str(config_file),
                "--backend",
                "rllib",
                "--num-env-runners",
                "1",
            ]
        )
    out = capsys.readouterr().out
    assert code == 130
    assert "interrupted at step 256" in out
    assert "--backend rllib --num-env-runners 1 --resume --run-dir" in out
    saved = ckpt_io.load(run_dir)
    assert saved.step == 256
    for key, value in seen["before"].items():
        assert torch.equal(saved.tensors["rllib_module"][key], value), key
    assert saved.manifest["snapshots"] == ["self@256"]
    assert saved.manifest["backend"] == "rllib"
    assert saved.manifest["fingerprint"] == envs.fingerprint("german_whist_v0")
    runners = json.loads((run_dir / rllib_backend.RUNNERS_FILE).read_text())
    assert [r["worker_index"] for r in runners["runners"]] == [1]

    assert cli([*command, "--resume"]) == 2  # sb3, the default
    assert "trained with --backend rllib" in capsys.readouterr().err
    # the runners are not part of the run: continue sampling in this process
    code = cli([*command, "--resume", "--backend", "rllib", "--num-env-runners", "0"])
    assert code == 0
    assert run_state(run_dir)["phase"] == "done"
    for name in ("config.json", "evaluations.csv", "learning_curve.png"):
        assert (run_dir / name).is_file(), name
    assert any((run_dir / "tensorboard").rglob("events.out.tfevents.*"))
    final = ckpt_io.load(run_dir)
    assert 512 <= final.step < 512 + 16
    rows = read_evaluations(run_dir / "evaluations.csv")
    assert [r["step"] for r in rows] == [0, 256, final.step]
    assert final.manifest["snapshots"] == ["self@256"]  # restored, not re-added

    result = run_arena(
        "german_whist_v0", [f"ckpt:{run_dir}", "random"], games=4, duplicate=True
    )
    assert result.games == 4


@pytest.mark.xdist_group("ray")
def test_more_runners_than_the_clusters_cpus(local_ray, tmp_path: Path) -> None:
    """RLlib would wait forever for runners the Ray cannot place: refused first."""
    with pytest.raises(ValueError, match="needs 3 CPUs, one per runner; the Ray "):
        train(
            config_from_dict(TINY),
            run_dir=tmp_path / "run",
            progress=False,
            backend="rllib",
            backend_options={"num_env_runners": 3},
        )
    assert not (tmp_path / "run").exists()


@pytest.mark.xdist_group("ray")
def test_warm_start_fit_reaches_the_env_runner(local_ray, tmp_path: Path) -> None:
    """The warm start's fit trains the learner's RLlib module itself (an
    `imitation.ImitationPolicy`, normalised over the legal moves): the student then
    copies the teacher more often than chance, and the env runner plays with the
    fitted weights."""
    from parlour.training.selfplay import OpponentPool

    config = config_from_dict({**TINY, "tensorboard": False})
    pool = OpponentPool(config.env, dict(config.opponents), seed=0)
    backend = rllib_backend.RLlibBackend(
        config, pool, tmp_path, lambda _: None, num_env_runners=0
    )
    try:
        obs = np.zeros(backend.game.observation_size, np.float32)
        before = backend.export_weights().logits(obs)
        data = imitation.collect(config.env, {}, "heuristic", 20, seed=1)
        losses: list[float] = []
        report = backend.imitate(data, lambda epoch, loss: losses.append(loss))
        assert len(losses) == config.warm_start_epochs
        assert losses[-1] < losses[0]
        assert 0 < report.agreement <= 1
        module = backend._module()
        assert isinstance(module, imitation.ImitationPolicy)
        obs, masks = (torch.from_numpy(a[:16]) for a in (data.observations, data.masks))
        logp = module.masked_log_probs(obs, masks)
        torch.testing.assert_close(logp.exp().sum(1), torch.ones(16))
        assert (logp[~masks] < -1e7).all()
        assert module.predict_values(obs).shape == (16,)
        learner = backend._module().state_dict()
        runner = backend.algo.env_runner_group.local_env_runner.module
        for key, value in runner.state_dict().items():
            assert torch.equal(value, learner[key]), key
        after = backend.export_weights().logits(obs)
        assert not np.allclose(before, after)
    finally:
        backend.close()


@pytest.mark.xdist_group("ray")
def test_sb3_checkpoint_is_not_resumed_by_rllib(local_ray, tmp_path: Path) -> None:
    """A run the sb3 backend wrote cannot be continued by rllib (other tensors): the
    manifest's backend is read before anything is written."""
    config = config_from_dict({**TINY, "total_timesteps": 256, "tensorboard": False})
    train(config, run_dir=tmp_path / "run", progress=False, final_eval=False)
    with pytest.raises(ValueError, match="was trained with --backend sb3; continue it"):
        train(
            config_from_dict({**TINY, "tensorboard": False}),
            run_dir=tmp_path / "run",
            resume=True,
            progress=False,
            backend="rllib",
            backend_options={"num_env_runners": 0},
        )


# --- a 2-node cluster ----------------------------------------------------------------
@pytest.mark.slow
def test_two_node_cluster(tmp_path: Path) -> None:
    """``ray start`` a head and a worker node with 1 CPU each, train German Whist for
    a few thousand steps with 2 env runners through ``--address``: one runner runs
    on each node; the checkpoint evaluates. The cluster's processes are ended by
    their process groups (never ``ray stop``)."""
    run_dir = tmp_path / "run"
    parlour = str(Path(sys.executable).with_name("parlour"))
    with RayCluster(tmp_path / "cluster", cpus_per_node=[1, 1]) as cluster:
        nodes = cluster.alive_nodes()
        assert len(nodes) == 2
        # without the cluster's token: refused in one line, nothing written
        wrong = {**cluster.env, "RAY_AUTH_TOKEN": "0" * 64}
        out = subprocess.run(
            [parlour, "train", "german_whist_v0", "--backend", "rllib"]
            + ["--address", cluster.address, "--run-dir", str(run_dir), "--quiet"],
            capture_output=True,
            text=True,
            env=wrong,
            timeout=300,
        )
        assert out.returncode == 2, out.stderr[-2000:]
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert "cannot join the Ray cluster at --address" in out.stderr
        assert "RAY_AUTH_TOKEN" in out.stderr
        assert not run_dir.exists()
        out = subprocess.run(
            [
                parlour,
                "train",
                "german_whist_v0",
                "--backend",
                "rllib",
                "--num-env-runners",
                "2",
                "--address",
                cluster.address,
                "--run-dir",
                str(run_dir),
                "--quiet",
                "--set",
                "total_timesteps=4096",
                "--set",
                "warm_start=''",
                "--set",
                "eval_every=2048",
                "--set",
                "checkpoint_every=2048",
                "--set",
                "snapshot_every=2048",
                "--set",
                "eval_games=20",
                "--set",
                "tensorboard=false",
            ],
            capture_output=True,
            text=True,
            env=cluster.env,
            timeout=900,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        runners = json.loads((run_dir / rllib_backend.RUNNERS_FILE).read_text())
        assert sorted(r["node_id"] for r in runners["runners"]) == sorted(nodes)
        assert all(r["has_env"] for r in runners["runners"])
    assert ckpt_io.load(run_dir).step >= 4096
    code = cli(["eval", str(run_dir), "--vs", "random", "--games", "40", "--duplicate"])
    assert code == 0


def test_runner_env_scales_the_learners_rewards():
    """An env runner's env pays the learner its rewards times the run's
    ``reward_scale``, and reports the episode's return in points."""
    spec = {
        "run_key": "scale-test",
        "env": "herzeln_v0",
        "env_options": {"players": 4},
        "seed": 3,
        "opponents": {"random": 1.0},
        "max_snapshots": 1,
        "reward_scale": 0.02,
    }
    env = rllib_backend.RunnerEnv(spec)
    rng = np.random.default_rng(3)
    obs, _ = env.reset()
    total, done = 0.0, False
    while not done:
        legal = np.flatnonzero(obs[env.mask_key])
        obs, reward, done, _, info = env.step(int(rng.choice(legal)))
        total += reward
    assert abs(info["final_return"]) > 10
    assert total == pytest.approx(0.02 * info["final_return"])
    rllib_backend._OUTCOMES.pop("scale-test", None)
    rllib_backend._POOLS.pop("scale-test", None)


def test_lost_runners_that_do_not_come_back_are_one_line() -> None:
    """An env runner out of service past the wait: one line that says what is kept;
    an iteration whose runners returned nothing (RLlib's NaN) sampled no step."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED

    class Group:
        def num_remote_workers(self) -> int:
            return 2

        def num_healthy_remote_workers(self) -> int:
            return 1

    class Algo:
        env_runner_group = Group()

        def restore_env_runners(self, group) -> list[int]:
            return []

    backend = object.__new__(rllib_backend.RLlibBackend)
    backend.algo = Algo()
    assert backend._runners_lost()
    with pytest.raises(ray_support.RayUnavailable) as info:
        backend._wait_for_runners(deadline=0.0)
    assert str(info.value) == (
        "1 env runner(s) died and did not come back in 300 s; the run keeps its last "
        "checkpoint: continue it with --resume"
    )
    nan = {ENV_RUNNER_RESULTS: {NUM_ENV_STEPS_SAMPLED: float("nan")}}
    assert rllib_backend._sampled(nan) == 0
    full = {ENV_RUNNER_RESULTS: {NUM_ENV_STEPS_SAMPLED: 257}}
    assert rllib_backend._sampled(full) == 257
