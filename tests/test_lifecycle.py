"""A training run's lifecycle: Ctrl-C in every phase keeps what is done and resumes
from there, bad settings are refused before anything is written, a resumed run keeps
its stored config, and every command checks its output paths before it plays a game.

The interrupts are simulated: a phase's work function raises KeyboardInterrupt, as
Ctrl-C would, on a chosen call.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch
from helpers import TINY_TRAINING, as_from_a_terminal

from parlour.cli import main as cli
from parlour.cli import parlour_command
from parlour.training import checkpoint as ckpt_io
from parlour.training import evaluation as eval_mod
from parlour.training import imitation
from parlour.training import train as train_mod
from parlour.training.train import config_from_dict, run_state, train

TINY = TINY_TRAINING
# a warm start and one rollout of self-play
WARM = {
    "warm_start": "heuristic",
    "warm_start_games": 6,
    "warm_start_epochs": 2,
    "total_timesteps": 128,
}


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def interrupt_on_call(monkeypatch, owner, name: str, call: int) -> dict[str, int]:
    """Make ``owner.name`` raise KeyboardInterrupt on its ``call``-th call (1-based);
    the other calls run the real function. Returns the call counter."""
    real = getattr(owner, name)
    calls = {"n": 0}

    def wrapper(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return calls


def count_calls(monkeypatch, owner, name: str) -> dict[str, int]:
    return interrupt_on_call(monkeypatch, owner, name, call=-1)


def eval_rows(run_dir) -> list[tuple[int, str]]:
    return [
        (r["step"], r["opponent"])
        for r in train_mod._read_evaluations(run_dir / "evaluations.csv")
    ]


# --- Ctrl-C in every phase ------------------------------------------------------------
@pytest.mark.parametrize("resume", [True, False])
def test_interrupted_teacher_games_are_kept_and_resumed(tmp_path, monkeypatch, resume):
    """Ctrl-C while the teacher plays: the finished chunks stay on disk (one game a
    chunk at this size), and both --resume and a fresh start with the same config
    play only the missing ones."""
    config = config_from_dict({**TINY, **WARM})
    interrupt_on_call(monkeypatch, imitation, "_collect_chunk", call=4)
    result = train(config, run_dir=tmp_path, progress=False)
    assert result.interrupted and result.phase == "teacher games"
    assert result.checkpoint is None and result.teacher_games == 3
    assert run_state(tmp_path)["phase"] == "teacher games"
    assert len(list((tmp_path / "warm_start").glob("games_*.npz"))) == 3
    monkeypatch.undo()
    calls = count_calls(monkeypatch, imitation, "_collect_chunk")
    result = train(config, run_dir=tmp_path, resume=resume, progress=False)
    assert not result.interrupted and result.steps == 128
    assert calls["n"] == 3  # 6 games, 3 of them stored
    assert result.teacher_games == 6
    assert run_state(tmp_path)["phase"] == "done"


def test_interrupted_fit_refits_from_the_stored_games(tmp_path, monkeypatch):
    config = config_from_dict({**TINY, **WARM})
    interrupt_on_call(monkeypatch, imitation, "fit", call=1)
    result = train(config, run_dir=tmp_path, progress=False)
    assert result.interrupted and result.phase == "fit" and result.teacher_games == 6
    monkeypatch.undo()
    collected = count_calls(monkeypatch, imitation, "_collect_chunk")
    fitted = count_calls(monkeypatch, imitation, "fit")
    result = train(config, run_dir=tmp_path, resume=True, progress=False)
    assert collected["n"] == 0 and fitted["n"] == 1
    assert not result.interrupted and result.steps == 128
    assert json.loads((tmp_path / "warm_start.json").read_text())["epochs"] == 2
    # time by phase, summed over both sessions
    assert {"teacher games", "fit", "self-play", "evaluation"} <= set(
        result.phase_seconds
    )
    assert run_state(tmp_path)["phase_seconds"] == pytest.approx(
        result.phase_seconds, abs=0.1
    )


def test_stored_teacher_games_equal_fresh_ones(tmp_path):
    """The compact chunks give back exactly the decisions collected (0/1 columns as
    packed bits, the other columns as float32)."""
    args = ("german_whist_v0", {}, "heuristic", 3)
    kept = imitation.collect(*args, seed=5, noise=0.2, store=tmp_path)
    again = imitation.collect(*args, seed=5, noise=0.2, store=tmp_path)
    fresh = imitation.collect(*args, seed=5, noise=0.2)
    for data in (kept, again):
        for field in ("observations", "masks", "actions", "returns", "targets"):
            np.testing.assert_array_equal(getattr(data, field), getattr(fresh, field))
    size = sum(p.stat().st_size for p in tmp_path.glob("*.npz"))
    assert size < fresh.observations.nbytes / 4  # compact: mostly 0/1 flags


def test_interrupted_ppo_update_resumes_at_the_rollout_start(tmp_path, monkeypatch):
    """Ctrl-C in the middle of the second PPO update: the checkpoint holds the
    weights of that rollout's start, labelled with its step, and resuming finishes
    the run."""
    from sb3_contrib import MaskablePPO

    config = config_from_dict(TINY)
    weights = {}
    real_train = MaskablePPO.train
    calls = {"n": 0}

    def update(self):
        calls["n"] += 1
        if calls["n"] == 2:
            weights["start"] = {
                k: v.clone() for k, v in self.policy.state_dict().items()
            }
            real_train(self)  # half an update's worth of change, then Ctrl-C
            raise KeyboardInterrupt
        return real_train(self)

    monkeypatch.setattr(MaskablePPO, "train", update)
    result = train(config, run_dir=tmp_path, progress=False)
    assert result.interrupted and result.phase == "self-play" and result.steps == 128
    saved = ckpt_io.load(tmp_path)
    assert saved.step == 128
    for key, value in weights["start"].items():
        torch.testing.assert_close(saved.tensors["policy"][key], value)
    monkeypatch.undo()
    result = train(config, run_dir=tmp_path, resume=True, progress=False)
    assert not result.interrupted and result.steps == 256


def test_interrupted_evaluation_is_redone(tmp_path, monkeypatch):
    """Ctrl-C during the evaluation at step 128 (the second one, after step 0):
    nothing of it is recorded, and resuming plays it again before going on."""
    config = config_from_dict({**TINY, "eval_opponents": ["random", "heuristic"]})
    # calls 1-2: step 0 against both; call 4: step 128 against the heuristic
    interrupt_on_call(monkeypatch, eval_mod, "run_arena", call=4)
    result = train(config, run_dir=tmp_path, progress=False)
    assert result.interrupted and result.steps == 128
    assert eval_rows(tmp_path) == [(0, "random"), (0, "heuristic")]
    monkeypatch.undo()
    result = train(config, run_dir=tmp_path, resume=True, progress=False)
    assert eval_rows(tmp_path) == [
        (s, o) for s in (0, 128, 256) for o in ("random", "heuristic")
    ]
    assert not result.interrupted


def test_evaluations_off_the_rollout_grid_are_not_repeated(tmp_path, monkeypatch):
    """eval_every=100 with rollouts of 128: the evaluation due at 100 is played at
    128; an interrupt in the next update must not make the resumed run play it
    again."""
    from sb3_contrib import MaskablePPO

    config = config_from_dict({**TINY, "eval_every": 100})
    interrupt_on_call(monkeypatch, MaskablePPO, "train", call=2)
    train(config, run_dir=tmp_path, progress=False)
    assert eval_rows(tmp_path) == [(0, "random"), (128, "random")]
    monkeypatch.undo()
    train(config, run_dir=tmp_path, resume=True, progress=False)
    assert eval_rows(tmp_path) == [(s, "random") for s in (0, 128, 256)]


def test_interrupted_final_evaluation_is_redone(tmp_path, monkeypatch):
    config = config_from_dict({**TINY, "eval_every": 1024})
    interrupt_on_call(monkeypatch, eval_mod, "run_arena", call=2)  # 1: step 0
    result = train(config, run_dir=tmp_path, progress=False)
    assert result.interrupted and result.steps == 256
    assert run_state(tmp_path)["phase"] == "self-play"
    monkeypatch.undo()
    result = train(config, run_dir=tmp_path, resume=True, progress=False)
    assert eval_rows(tmp_path) == [(0, "random"), (256, "random")]
    assert result.plot is not None and run_state(tmp_path)["phase"] == "done"


def test_killed_writes_are_cleaned_on_the_next_start(tmp_path, monkeypatch):
    config = config_from_dict({**TINY, **WARM})
    interrupt_on_call(monkeypatch, imitation, "fit", call=1)
    train(config, run_dir=tmp_path, progress=False)
    monkeypatch.undo()
    litter = [
        tmp_path / "checkpoints" / ".step_000000128.x1y2",
        tmp_path / ".latest.json.abc",
        tmp_path / "warm_start" / ".games_00002.npz.q9",
    ]
    litter[0].mkdir(parents=True)
    (litter[0] / "weights.pt").write_bytes(b"half")
    litter[1].write_text("{")
    litter[2].write_bytes(b"half")
    train(config, run_dir=tmp_path, resume=True, progress=False)
    assert not any(p.exists() for p in litter)


def test_elapsed_time_accumulates_across_resumes(tmp_path, monkeypatch):
    config = config_from_dict({**TINY, **WARM})
    interrupt_on_call(monkeypatch, imitation, "fit", call=1)
    first = train(config, run_dir=tmp_path, progress=False)
    monkeypatch.undo()
    # as if the first session had lasted ten minutes
    state = run_state(tmp_path)
    state["elapsed_s"] += 600
    ckpt_io.write_json_atomic(tmp_path / train_mod.STATE, state)
    second = train(config, run_dir=tmp_path, resume=True, progress=False)
    assert second.seconds >= 600 + first.seconds + second.session_seconds - 1
    assert second.session_seconds < second.seconds
    manifest = json.loads((second.checkpoint / ckpt_io.MANIFEST).read_text())
    assert manifest["elapsed_s"] >= 600


# --- the command line: resume keeps the stored config ---------------------------------
def tiny_sets(**extra) -> list[str]:
    sets = {**TINY, "warm_start": "''", **extra}
    del sets["env"]
    out = []
    for key, value in sets.items():
        out += ["--set", f"{key}={json.dumps(value) if key != 'warm_start' else value}"]
    return out


def test_cli_resume_uses_the_stored_config(tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    interrupt_on_call(monkeypatch, eval_mod, "run_arena", call=2)
    argv = ["train", "german_whist_v0", "--run-dir", str(run), "--quiet"]
    assert cli([*argv, *tiny_sets()]) == 130
    out = capsys.readouterr().out
    assert (
        f"continue with: {parlour_command()} train german_whist_v0 --resume "
        f"--run-dir {run}" in out
    )
    monkeypatch.undo()
    stored = json.loads((run / "config.json").read_text())
    # no --set: the run's own 256 steps, not the config file's budget
    assert cli([*argv, "--resume"]) == 0
    assert json.loads((run / "config.json").read_text()) == stored
    assert ckpt_io.load(run).step == 256
    assert "trained 256 steps in" in capsys.readouterr().out
    # an explicit --set applies on purpose, and says so
    assert cli([*argv, "--resume", "--set", "total_timesteps=384"]) == 0
    out = capsys.readouterr().out
    assert "resume with --set total_timesteps: 256 -> 384" in out
    assert ckpt_io.load(run).step == 384
    # keys the checkpoints depend on are refused, in one line
    assert cli([*argv, "--resume", "--set", "net_arch=[8]"]) == 2
    err = capsys.readouterr().err
    assert "a resumed run keeps its net_arch" in err and len(err.splitlines()) == 1
    assert cli([*argv, "--resume", "--config", "x.yaml"]) == 2
    assert "stored config" in capsys.readouterr().err


def test_cli_resume_needs_a_run(tmp_path, capsys):
    argv = ["train", "german_whist_v0", "--resume", "--run-dir", str(tmp_path / "no")]
    assert cli(argv) == 2
    assert "has no config.json" in capsys.readouterr().err


# --- validation before anything is written --------------------------------------------
@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("opponents.bogus=1", "opponents.bogus: unknown agent"),
        ("opponents.self=-1", "opponents.self must be a weight >= 0"),
        ("env_options.variant=bogus", "variant"),
        ("eval_opponents=[bogus]", "eval_opponents: unknown agent"),
        ("clip_range=0", "clip_range must lie in"),
        ("ent_coef=-0.1", "ent_coef must be >= 0"),
        ("max_grad_norm=0", "max_grad_norm must be positive"),
        ("max_grad_norm=-1", "max_grad_norm must be positive"),
        ("reward_scale=0", "reward_scale must be positive"),
        ("reward_scale=-0.5", "reward_scale must be positive"),
        ("batch_size=4096", "larger than a rollout"),
        ("total_timesteps=1000", "larger than the budget"),
        ("opponents={self: 0, random: 0}", "must not all be 0"),
    ],
)
def test_bad_settings_refused_before_the_run_dir_exists(
    tmp_path, capsys, setting, message
):
    run = tmp_path / "run"
    argv = ["train", "german_whist_v0", "--run-dir", str(run), "--set", setting]
    assert cli(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not run.exists()


def test_default_config_is_a_small_budget():
    """configs/german_whist_v0.yaml is the quick default (measured in docs/training.md:
    6.7 minutes on two cores); the strong recipe is a preset."""
    default = train_mod.load_config(None, env="german_whist_v0")
    strong = train_mod.load_config(None, env="german_whist_v0", preset="strong")
    assert default.total_timesteps < strong.total_timesteps
    assert default.warm_start_games < strong.warm_start_games
    assert train_mod.warm_start_warning(default) is None
    assert "strong" in train_mod.presets("german_whist_v0")
    with pytest.raises(ValueError, match="no preset 'huge'"):
        train_mod.load_config(None, env="german_whist_v0", preset="huge")


def test_progress_names_every_phase_with_its_total(tmp_path, capsys):
    """One bar per phase, each with its real total: the self-play bar ends at the
    last whole rollout (3 rollouts of 128 for a budget of 300), not at the budget."""
    config = config_from_dict({**TINY, **WARM, "total_timesteps": 300})
    train(config, run_dir=tmp_path, progress=True)
    err = capsys.readouterr().err.replace("\r", "\n")
    assert "teacher games (heuristic): 100%" in err and " 6/6 " in err
    assert re.search(r"fit \([\d,]+ decisions\): 100%.* 2/2 ", err)
    assert re.search(r"self-play: 100%.* 384/384 ", err)
    for step in (0, 128, 256, 384):
        assert re.search(rf"evaluation @ step {step}: .*/2 ", err)


def test_warm_start_dwarfing_the_budget_is_announced(tmp_path, capsys):
    config = config_from_dict({**TINY, "warm_start": "heuristic"})  # 2,000 games
    warning = train_mod.warm_start_warning(config)
    assert "outweigh the 256 self-play steps" in warning
    # a suggestion that fits: at least 40 decisions a German Whist game
    suggested = int(re.search(r"warm_start_games=(\d+)", warning)[1])
    assert 1 <= suggested <= 256 // 40
    config = config_from_dict({**TINY, **WARM, "warm_start_games": 4})
    train(config, run_dir=tmp_path, progress=True)
    assert "outweigh" in capsys.readouterr().err


# --- output paths, checked before any game --------------------------------------------
@pytest.fixture
def no_games(monkeypatch):
    """Any game played fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("a game was played before the output path was checked")

    from parlour.training import arena, tips

    monkeypatch.setattr(arena, "run_arena", refuse)
    monkeypatch.setattr(tips, "run_experiments", refuse)
    monkeypatch.setattr(eval_mod, "run_arena", refuse)


@pytest.mark.parametrize(
    "argv",
    [
        ["arena", "german_whist_v0", "--agents", "random", "random", "--json", "F/x"],
        ["eval", "RUN", "--vs", "random", "--json", "F/out.json"],
        ["tips", "german_whist", "--out", "F"],
        ["train", "german_whist_v0", "--run-dir", "F"],
        ["demo", "--run-dir", "F/demo"],
        ["dice-table", "--half", "2", "--plot", "F/table.png"],
    ],
)
def test_output_paths_checked_before_any_game(tmp_path, no_games, capsys, argv):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    run = tmp_path / "run"
    run.mkdir()
    argv = [a.replace("F", str(blocker)) if a.startswith("F") else a for a in argv]
    argv = [str(run) if a == "RUN" else a for a in argv]
    if argv[0] == "eval":  # a real checkpoint to evaluate
        ckpt_io.save(run / "checkpoints" / "c", *_fake_checkpoint())
        ckpt_io.write_json_atomic(run / ckpt_io.LATEST, {"checkpoint": "checkpoints/c"})
    assert cli(argv) == 2
    err = capsys.readouterr().err
    assert "is a file, not a directory" in err and len(err.strip().splitlines()) == 1


def _fake_checkpoint():
    from parlour import envs
    from parlour.training.selfplay import SelfPlayEnv  # noqa: F401  (import check)

    game = envs.make("german_whist_v0", raw=True).game
    sizes = [game.observation_size, 8]
    policy = {
        "mlp_extractor.policy_net.0.weight": torch.zeros(8, sizes[0]),
        "mlp_extractor.policy_net.0.bias": torch.zeros(8),
        "action_net.weight": torch.zeros(game.num_actions, 8),
        "action_net.bias": torch.zeros(game.num_actions),
    }
    manifest = {
        "env": "german_whist_v0",
        "env_options": {},
        "game_options": envs.game_options("german_whist_v0", {}),
        "observation_size": game.observation_size,
        "num_actions": game.num_actions,
        "net_arch": [8],
        "activation": "tanh",
        "step": 0,
        "config": {},
        "snapshots": [],
    }
    return {"policy": policy}, manifest


def test_bad_evaluations_csv_is_one_line(tmp_path, capsys):
    config = config_from_dict(TINY)
    train(config, run_dir=tmp_path, progress=False)
    (tmp_path / "evaluations.csv").write_text("when,who\n1,2\n")
    with pytest.raises(ValueError, match="has the header"):
        train(config, run_dir=tmp_path, resume=True, progress=False)


# --- the first ten minutes ------------------------------------------------------------
def test_list_shows_whole_descriptions_and_every_agent_kind(capsys):
    from parlour import agents, envs
    from parlour.cli import EXTRA_KINDS, agent_kinds

    assert cli(["list"]) == 0
    out = capsys.readouterr().out
    assert "(seed" not in out and "seed 0" not in out
    assert "Fünfzehnern: 4 or 3 players, strict or relaxed lead rules, Zwang, " in out
    for name in envs.names():
        line = next(x for x in out.splitlines() if x.startswith(f"{name}:"))
        assert not line.rstrip().endswith(",")
        kinds = agent_kinds(name)
        assert f"    agents: {', '.join(kinds)}" in out
        # every kind listed is one the env builds
        for kind in [*EXTRA_KINDS[name], "text:scripted"]:
            assert kind in kinds
            agents.make(kind.replace(":N", ":2"), name, seed=0)
    assert "solver" in agent_kinds("forty_fives_v0")
    assert "endgame:SPEC" in agent_kinds("german_whist_v0")
    assert "optimal" in agent_kinds("fuenfzehn_tot_v0")


def test_play_command_is_printed_as_it_can_be_run(tmp_path, monkeypatch):
    exe = tmp_path / ".venv" / "bin" / "parlour"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", [str(exe)])
    monkeypatch.setenv("PATH", "/nowhere")
    assert parlour_command() == ".venv/bin/parlour"
    monkeypatch.setenv("PATH", str(exe.parent))
    assert parlour_command() == "parlour"
    monkeypatch.setattr("sys.argv", ["pytest"])
    assert parlour_command().endswith(" -m parlour.cli")


def test_t_quantile_matches_published_values():
    from parlour.training.stats import mean_interval, t_quantile

    # Student's t, two-sided 95% (any table): df 1, 2, 4, 9, 29, 120
    table = {1: 12.706, 2: 4.303, 4: 2.776, 9: 2.262, 29: 2.045, 120: 1.980}
    for df, value in table.items():
        assert t_quantile(df) == pytest.approx(value, abs=5e-4)
    assert t_quantile(10**6) == pytest.approx(1.959966, abs=1e-5)
    values = [1.0, 2.0, 4.0, 7.0, 11.0]
    interval = mean_interval(values)
    sd = float(np.std(values, ddof=1))
    assert interval.high - interval.estimate == pytest.approx(
        2.776445 * sd / math.sqrt(5), rel=1e-5
    )


def test_t_quantile_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    from parlour.training.stats import t_quantile

    for df in [*range(1, 41), 60, 99, 150, 199, 200, 201, 250, 400, 1000, 5000]:
        for confidence in (0.9, 0.95, 0.99):
            want = stats.t.ppf(0.5 + confidence / 2, df)
            assert t_quantile(df, confidence) == pytest.approx(want, rel=1e-8)


def test_tips_summary_says_when_not_yet_reliable():
    from parlour.training.tips import run_tips

    run = run_tips(
        "german_whist",
        tips=["save_trumps", "duck_duds"],
        games=4,
        calibrate=200,
        agreement_deals=2,
    )
    text = run.summary()
    shaky = [r.name for r in run.results if r.shaky]
    assert shaky == ["save_trumps"]  # few deals where the arms differ
    line = next(x for x in text.splitlines() if "save_trumps" in x)
    assert "†" in line
    assert "† not yet reliable: too few deals differ between the arms" in text


def test_license_is_an_spdx_string():
    """setuptools >= 77 warns about the old ``license = {text = ...}`` table."""
    import tomllib
    from pathlib import Path

    data = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert data["project"]["license"] == "MIT"
    assert "setuptools>=77" in data["build-system"]["requires"]


def test_real_ctrl_c_with_collecting_workers(tmp_path):
    """A real SIGINT to the process group (what Ctrl-C in a terminal sends) while two
    worker processes play the teacher's games: exit status 130, one-line report, no
    traceback from the workers, and the finished chunks kept."""
    import os
    import signal
    import subprocess
    import sys
    import time

    run = tmp_path / "run"
    # 8 chunks of 25 games: the signal comes after the first and long before the last
    sets = ["warm_start_games=200", "warm_start_workers=2", "tensorboard=false"]
    argv = [sys.executable, "-m", "parlour.cli", "train", "german_whist_v0"]
    argv += ["--run-dir", str(run), "--quiet"]
    for s in sets:
        argv += ["--set", s]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=as_from_a_terminal,
    )
    try:
        deadline = time.time() + 120
        while not list((run / "warm_start").glob("games_*.npz")):
            assert proc.poll() is None, proc.communicate()
            assert time.time() < deadline, "no chunk of teacher games was written"
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert "interrupted while playing the teacher's games" in out
    assert run_state(run)["phase"] == "teacher games"
    assert imitation.stored_games(run / "warm_start") >= 25
