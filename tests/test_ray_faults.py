"""Faults under the Ray executor: a Ray worker process killed in the middle of an
arena, a league and a tips run (the job it held is run again: the output is the local
run's, no game lost), and the driver killed with SIGKILL (the league keeps every batch
it stored and a re-run goes on; the arena and tips write nothing, never half a file,
and a re-run gives the local output); an RLlib env runner killed in training (Ray
restarts it and the run goes on). Each test starts the command as a process of its
own, with a local Ray of the command's own, and kills only processes under it, by
process id. They take a minute or more each: ``-m slow``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from ray_cluster import outlived
from test_distributed import stored_games
from test_league_faults import _check_sound, _count

from parlour.cli import main

pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]

ENV = "german_whist_v0"
PARLOUR = [sys.executable, "-m", "parlour.cli"]
WAIT = 240  # seconds: a local Ray starting on a loaded machine is slow


def _under(pid: int) -> list[psutil.Process]:
    """The processes under ``pid`` (its local Ray: control store, raylet, workers)."""
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _running(pid: int, task: str) -> psutil.Process | None:
    """A Ray worker under ``pid`` running ``task`` now: Ray names a worker's process
    ``ray::TASK`` while it runs the task (``ray::IDLE`` between tasks)."""
    for proc in _under(pid):
        try:
            title = proc.cmdline()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        if title and title[0].startswith(f"ray::{task}"):
            return proc
    return None


def _wait_for(proc: subprocess.Popen, found, what: str):
    """Poll ``found()`` until it gives something while ``proc`` runs."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        hit = found()
        if hit:
            return hit
        if proc.poll() is not None:
            pytest.fail(f"the command ended before {what}: {proc.stderr.read()!r}")
        time.sleep(0.02)
    proc.kill()
    pytest.fail(f"no {what} in {WAIT} s")


def _nothing_left(processes: list[psutil.Process]) -> None:
    """The command's Ray processes end with it; any left is killed (ours, by id) and
    the test fails."""
    left = outlived(processes)
    assert not left, f"left running: {left}"


def _killed_when(argv: list[str], ready, what: str) -> list[psutil.Process]:
    """Run ``parlour ARGV``, SIGKILL it (by its id) once ``ready(proc)``, and return
    the processes it had started (its Ray)."""
    proc = subprocess.Popen(
        [*PARLOUR, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        _wait_for(proc, lambda: ready(proc), what)
        ray_processes = _under(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    return ray_processes


def _tips_json(out: Path) -> dict:
    data = json.loads((out / "german_whist.json").read_text())
    data.pop("command")  # names its own --out
    return data


# command: (argv without the output, the output option, the Ray task, how to read it)
COMMANDS = {
    "arena": (
        ["arena", ENV, "--agents", "heuristic", "random", "--duplicate"]
        + ["--games", "2000", "--seed", "5"],
        "--json",
        "play_chunk",
        lambda path: json.loads(path.read_text()),
    ),
    "league": (
        ["league", ENV, "--agents", "random", "heuristic", "heuristic:-win_cheaply"]
        + ["--games", "240"],
        "--db",
        "play_batch_task",
        stored_games,
    ),
    "tips": (
        ["tips", "german_whist", "--tip", "duck_duds", "--opponents", "random"]
        + ["--games", "1200", "--seed", "3"],
        "--out",
        "play_block",
        _tips_json,
    ),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_killed_worker_loses_no_game(tmp_path, command):
    """SIGKILL to a Ray worker while it plays a job: Ray runs the job again
    (`distributed.TASK_RETRIES`) and the output is the local run's, every game."""
    argv, option, task, read = COMMANDS[command]
    local, remote = tmp_path / "local", tmp_path / "ray"
    workers = ["--workers", "1"] if command == "tips" else []
    assert main([*argv, option, str(local), "--quiet", *workers]) == 0
    proc = subprocess.Popen(
        [*PARLOUR, *argv, option, str(remote), "--quiet", "--executor", "ray"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        worker = _wait_for(proc, lambda: _running(proc.pid, task), f"{task} task")
        victim = worker.pid
        worker.kill()  # SIGKILL, by its id: a worker of the command's own Ray
        assert proc.poll() is None  # mid-run
        worker.wait(timeout=10)
        assert not psutil.pid_exists(victim)
        ray_processes = _under(proc.pid)
        err = proc.communicate(timeout=WAIT)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert read(remote) == read(local)
    _nothing_left(ray_processes)


def test_a_killed_league_driver_keeps_its_batches(tmp_path):
    """SIGKILL to ``parlour league --executor ray`` once batches are stored: the
    database is sound and holds whole batches only, the command's Ray goes with it,
    and a re-run adds its games to the kept ones."""
    db = tmp_path / "l.sqlite"
    argv = ["league", ENV, "--agents", "random", "heuristic", "--db", str(db)]
    ray_argv = [*argv, "--games", "100000", "--quiet", "--executor", "ray"]
    ray_processes = _killed_when(ray_argv, lambda proc: _count(db) >= 24, "games")
    kept = len(_check_sound(db))
    assert kept >= 24 and kept % 8 == 0  # whole batches: 4 deals x 2 seatings
    _nothing_left(ray_processes)
    assert main([*argv, "--games", "16", "--quiet", "--executor", "ray"]) == 0
    assert len(_check_sound(db)) == kept + 16


@pytest.mark.parametrize("command", ["arena", "tips"])
def test_a_killed_arena_or_tips_driver_leaves_no_half_output(tmp_path, command):
    """SIGKILL to ``parlour arena|tips --executor ray`` while its jobs run: nothing
    is written (the output comes whole at the end), the command's Ray goes with it,
    and the same command run again writes the local run's output."""
    argv, option, task, read = COMMANDS[command]
    out = tmp_path / "ray"
    ray_argv = [*argv, option, str(out), "--quiet", "--executor", "ray"]
    ray_processes = _killed_when(
        ray_argv, lambda proc: _running(proc.pid, task), f"a {task} task"
    )
    assert not out.exists() or (out.is_dir() and not any(out.iterdir()))
    _nothing_left(ray_processes)
    local = tmp_path / "local"
    workers = ["--workers", "1"] if command == "tips" else []
    assert main([*argv, option, str(local), "--quiet", *workers]) == 0
    assert main(ray_argv) == 0
    assert read(out) == read(local)


# --- RLlib: an env runner killed ------------------------------------------------------
def test_a_killed_env_runner_is_restarted_and_the_run_goes_on(tmp_path):
    """SIGKILL to the env runner of ``parlour train --backend rllib`` as it starts
    sampling: Ray restarts the runner (RLlib's fault tolerance), the iteration that
    lost it is run again, and the run ends with every step and evaluation once."""
    import yaml
    from helpers import tiny_training

    from parlour.training import checkpoint as ckpt_io
    from parlour.training.backends.rllib import RUNNERS_FILE
    from parlour.training.train import read_evaluations, run_state

    run_dir = tmp_path / "run"
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_training(1024, every=256, n_steps=128)))
    argv = ["train", ENV, "--config", str(config), "--run-dir", str(run_dir)]
    argv += ["--quiet", "--backend", "rllib", "--num-env-runners", "1"]
    proc = subprocess.Popen(
        [*PARLOUR, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    runners = run_dir / RUNNERS_FILE
    try:
        first = _wait_for(
            proc,
            lambda: runners.exists() and json.loads(runners.read_text())["runners"],
            "an env runner",
        )
        victim = first[0]["pid"]
        runner = next(p for p in _under(proc.pid) if p.pid == victim)
        runner.kill()  # SIGKILL, by its id: the run's own env runner
        assert proc.poll() is None  # mid-run
        runner.wait(timeout=10)
        ray_processes = _under(proc.pid)
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert run_state(run_dir)["phase"] == "done"
    now = json.loads(runners.read_text())["runners"]
    assert [r["worker_index"] for r in now] == [1] and now[0]["pid"] != victim
    final = ckpt_io.load(run_dir)
    assert final.step >= 1024
    steps = [r["step"] for r in read_evaluations(run_dir / "evaluations.csv")]
    # one row per evaluation, none twice; RLlib may sample a step or a few more than
    # a rollout's 256 (docs/training.md)
    assert len(steps) == 5 and steps[-1] == final.step, steps
    assert all(256 * i <= s < 256 * i + 16 for i, s in enumerate(steps)), steps
    _nothing_left(ray_processes)
