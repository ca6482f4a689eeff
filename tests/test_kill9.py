"""kill -9 in every phase of a training run: the process is stopped dead (no
handler runs, no checkpoint is written on the way out) and ``--resume`` finishes the
run with nothing done twice, nothing lost beyond the last checkpoint, and no
temporary file left behind.

The kill is aimed with the test-only hook of `parlour.training.pause`: the training
process (``python -m parlour.cli train``) waits at the named point, writes its id to
a marker file, and the test sends SIGKILL to that id.

The rllib backend's cases (``-m slow``: a local Ray each) kill a driver with one env
runner; its Ray (control store, raylet, runner) goes with it, and the resume samples
in the test's process (``--num-env-runners 0``). RLlib's iteration samples and
trains in one call (`RLlibBackend.collect`), so its count is the number of updates.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
import torch
import yaml
from helpers import TINY_TRAINING
from ray_cluster import outlived

from parlour.training import imitation
from parlour.training import train as train_mod
from parlour.training.backends.batch import BatchBackend
from parlour.training.backends.sb3 import SB3Backend
from parlour.training.pause import PAUSE_AT, PAUSE_MARK
from parlour.training.train import config_from_dict, run_state, train

WARM = {
    "warm_start": "heuristic",
    "warm_start_games": 6,
    "warm_start_epochs": 2,
    "total_timesteps": 128,
}
LEARNERS = {"sb3": SB3Backend, "batch": BatchBackend}
# the method that trains on a rollout, per backend
TRAINS = {"sb3": "update", "batch": "update", "rllib": "collect"}
BACKENDS = [
    "sb3",
    "batch",
    pytest.param("rllib", marks=[pytest.mark.slow, pytest.mark.xdist_group("ray")]),
]


def learner(backend: str) -> type:
    """The backend's class (rllib's imported only when its case runs)."""
    if backend == "rllib":
        pytest.importorskip("ray.rllib")
        from parlour.training.backends.rllib import RLlibBackend

        return RLlibBackend
    return LEARNERS[backend]


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def killed_at(point: str, settings: dict, run_dir, backend: str) -> None:
    """Start ``parlour train`` with ``settings`` in ``run_dir``, wait until it
    reaches ``point`` (`parlour.training.pause`), and kill it with SIGKILL."""
    config = run_dir.parent / "config.yaml"
    config.write_text(yaml.safe_dump(settings))
    mark = run_dir.parent / "paused"
    env = {**os.environ, PAUSE_AT: point, PAUSE_MARK: str(mark)}
    command = [sys.executable, "-m", "parlour.cli", "train", settings["env"]]
    command += ["--config", str(config), "--run-dir", str(run_dir), "--quiet"]
    command += ["--backend", backend]
    if backend == "rllib":
        command += ["--num-env-runners", "1"]
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 300
    while not mark.exists():
        if proc.poll() is not None:
            pytest.fail(f"training ended before {point}: {proc.stderr.read()!r}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"training did not reach {point} in 300 s")
        time.sleep(0.05)
    assert int(mark.read_text()) == proc.pid
    under = psutil.Process(proc.pid).children(recursive=True)  # a local Ray's
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=60) == -signal.SIGKILL
    proc.stderr.close()
    # what the driver started ends with it (Ray ties its processes to the driver's
    # life); any left is ended here, by its id, and fails the test
    left = outlived(under)
    assert not left, f"left running: {left}"


def count_calls(monkeypatch, owner, name: str) -> dict[str, int]:
    """Count the calls of ``owner.name`` (the real function still runs)."""
    real = getattr(owner, name)
    calls = {"n": 0}

    def wrapper(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return calls


def resumed(settings: dict, run_dir, backend: str) -> train_mod.TrainResult:
    """What ``parlour train --resume`` does, in this process (to count calls)."""
    config = config_from_dict(settings)
    # rllib: sample in this process (the runners are not part of the run)
    options = {"num_env_runners": 0} if backend == "rllib" else None
    return train(
        config,
        run_dir,
        resume=True,
        progress=False,
        backend=backend,
        backend_options=options,
    )


def eval_steps(run_dir) -> list[int]:
    rows = train_mod._read_evaluations(run_dir / "evaluations.csv")
    return [r["step"] for r in rows]


def on_schedule(steps: list[int], expected: list[int], backend: str) -> bool:
    """``steps`` are ``expected``, each once; RLlib's may each be a few later (an
    iteration may sample a step or a few more than the rollout's)."""
    slack = 16 if backend == "rllib" else 1
    return len(steps) == len(expected) and all(
        e <= s < e + slack for s, e in zip(steps, expected, strict=True)
    )


def temporaries(run_dir) -> list[str]:
    """What atomic writes leave under a temporary (dot-prefixed) name."""
    return sorted(str(p.relative_to(run_dir)) for p in run_dir.rglob(".*"))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("point", "stored_chunks"), [("teacher games:2", 2), ("fit", 6)]
)
def test_kill9_in_the_warm_start(tmp_path, monkeypatch, backend, point, stored_chunks):
    """Killed after the second of six teacher games (one a chunk) or as the fit
    starts: the resumed run plays only the missing games, fits once, and trains."""
    run_dir = tmp_path / "run"
    settings = {**TINY_TRAINING, **WARM}
    killed_at(point, settings, run_dir, backend)
    assert run_state(run_dir)["phase"] == point.split(":")[0]
    assert imitation.stored_games(run_dir / "warm_start") == stored_chunks
    collected = count_calls(monkeypatch, imitation, "_collect_chunk")
    fitted = count_calls(monkeypatch, learner(backend), "imitate")
    updates = count_calls(monkeypatch, learner(backend), TRAINS[backend])
    result = resumed(settings, run_dir, backend)
    assert collected["n"] == 6 - stored_chunks and fitted["n"] == 1
    assert not result.interrupted and updates["n"] == 1
    assert on_schedule([result.steps], [128], backend)
    assert result.teacher_games == 6
    assert len(list((run_dir / "warm_start").glob("games_*.npz"))) == 6
    assert on_schedule(eval_steps(run_dir), [0, 128], backend)
    assert temporaries(run_dir) == []


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("point", "every", "updates_left", "temporary"),
    [
        # the second rollout collected, not trained on: from the checkpoint at 128
        ("self-play:2", {}, 1, False),
        # the evaluation at 128 played, not recorded: played again
        ("evaluation:2", {}, 1, False),
        # the checkpoint at 128 half written: from nothing (no earlier checkpoint)
        ("checkpoint:1", {}, 2, True),
        # checkpoints every 256, evaluations every 128: killed after the evaluation
        # at 128 was recorded, the run resumes from step 0 and the row at 128, of
        # weights now lost, is dropped and played again
        ("self-play:2", {"checkpoint_every": 256}, 2, False),
    ],
)
def test_kill9_in_self_play(
    tmp_path, monkeypatch, backend, point, every, updates_left, temporary
):
    """Killed in self-play: the resume starts from the last checkpoint, trains each
    rollout once and records each evaluation once."""
    run_dir = tmp_path / "run"
    settings = {**TINY_TRAINING, **every}
    killed_at(point, settings, run_dir, backend)
    assert run_state(run_dir)["phase"] == "self-play"
    assert bool(temporaries(run_dir)) == temporary
    updates = count_calls(monkeypatch, learner(backend), TRAINS[backend])
    result = resumed(settings, run_dir, backend)
    assert not result.interrupted and on_schedule([result.steps], [256], backend)
    assert updates["n"] == updates_left  # no rollout trained on twice
    # one row a step, none lost
    assert on_schedule(eval_steps(run_dir), [0, 128, 256], backend)
    assert temporaries(run_dir) == []
    assert run_state(run_dir)["phase"] == "done"
