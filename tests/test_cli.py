"""Smoke tests of the parlour command line, including bad input."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from helpers import TINY_TRAINING, as_from_a_terminal

import parlour
from parlour.cli import main


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "german_whist_v0" in out and "variant=honeymoon" in out


def test_arena_prints_table_and_json(tmp_path, capsys):
    path = tmp_path / "r.json"
    argv = "arena german_whist_v0 --agents heuristic random --games 10 --duplicate"
    assert main([*argv.split(), "--seed", "3", "--quiet", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "win rate" in out and "paired margin" in out
    data = json.loads(path.read_text())
    assert data["games"] == 10 and len(data["per_game"]) == 10
    assert data["parlour_version"] == parlour.__version__ and data["env_version"] == 0
    assert 0 <= data["win_rate"]["low"] <= data["win_rate"]["estimate"] <= 1


def _ctrl_c_at_game(monkeypatch, n: int) -> None:
    """Ctrl-C (a KeyboardInterrupt) in the middle of the arena's ``n``-th game."""
    from parlour.training import arena

    play, started = arena.play_game, []

    def play_game(*args, **kwargs):
        started.append(1)
        if len(started) == n:
            raise KeyboardInterrupt
        return play(*args, **kwargs)

    monkeypatch.setattr(arena, "play_game", play_game)


@pytest.mark.parametrize("duplicate", [True, False])
def test_ctrl_c_in_the_arena_reports_and_writes_the_finished_games(
    tmp_path, capsys, monkeypatch, duplicate
):
    path = tmp_path / "r.json"
    argv = "arena german_whist_v0 --agents heuristic random --games 40 --seed 3"
    argv += " --duplicate" if duplicate else ""
    _ctrl_c_at_game(monkeypatch, 8)  # the 4th deal's second seating
    assert main([*argv.split(), "--quiet", "--json", str(path)]) == 130
    out, err = capsys.readouterr()
    kept = 6 if duplicate else 7  # with --duplicate, whole deals only
    assert f"{kept} of 40 games (interrupted)" in out and "win rate" in out
    assert f"interrupted: kept {kept} of 40 games" in err and "Traceback" not in err
    data = json.loads(path.read_text())
    assert data["interrupted"] is True and data["planned"] == 40
    assert data["games"] == len(data["per_game"]) == kept
    # the games kept are the games a run of that length plays
    monkeypatch.undo()
    short = tmp_path / "short.json"
    argv = argv.replace("--games 40", f"--games {kept}")
    assert main([*argv.split(), "--quiet", "--json", str(short)]) == 0
    assert json.loads(short.read_text())["per_game"] == data["per_game"]


def test_ctrl_c_before_the_first_arena_game_writes_nothing(
    tmp_path, capsys, monkeypatch
):
    path = tmp_path / "r.json"
    _ctrl_c_at_game(monkeypatch, 1)
    argv = "arena german_whist_v0 --agents heuristic random --games 4 --quiet --json"
    assert main([*argv.split(), str(path)]) == 130
    assert "nothing to report" in capsys.readouterr().err
    assert not path.exists()


def test_a_real_ctrl_c_ends_the_arena_with_its_finished_games(tmp_path):
    record, path = tmp_path / "games.jsonl", tmp_path / "r.json"
    argv = "arena german_whist_v0 --agents heuristic random --games 100000 --duplicate"
    proc = subprocess.Popen(
        [sys.executable, "-m", "parlour.cli", *argv.split(), "--quiet"]
        + ["--json", str(path), "--record", str(record)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_from_a_terminal,
    )
    deadline = time.time() + 60
    while time.time() < deadline and (
        not record.exists() or len(record.read_text().splitlines()) < 5
    ):
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    data = json.loads(path.read_text())
    recorded = len(record.read_text().splitlines())
    assert data["interrupted"] is True and 4 <= data["games"] <= recorded
    assert data["games"] % 2 == 0  # whole deals of two seatings
    assert f"interrupted: kept {data['games']} of 100000 games" in err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["arena", "nope_v0", "--agents", "random", "random"], "unknown env"),
        (["arena", "german_whist_v0", "--agents", "random", "bogus"], "unknown agent"),
        (
            "arena german_whist_v0 --agents random random -o variant=x".split(),
            "variant must be one of",
        ),
        (
            "arena german_whist_v0 --agents random random -o colour=red".split(),
            "bad options",
        ),
        (
            "arena german_whist_v0 --agents random random -o novalue".split(),
            "KEY=VALUE",
        ),
        (
            "arena german_whist_v0 --agents heuristic:-no_such_tip random".split(),
            "no_such_tip",
        ),
        (["play", "german_whist_v0", "--seat", "5"], "--seat"),
    ],
)
def test_bad_arguments_give_clear_errors(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["arena", "german_whist_v0", "--agents", "random"],
        ["arena", "german_whist_v0", "--agents", "a", "b", "--games", "0"],
        ["frobnicate"],
        [],
    ],
)
def test_argparse_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "usage" in capsys.readouterr().err


def test_console_script_help():
    out = subprocess.run(
        [sys.executable, "-m", "parlour", "arena", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "--duplicate" in out and "--agents" in out


def test_play_a_whole_game_with_typos(monkeypatch, capsys):
    """A person's bad entries get a message and a new prompt; the game runs to its
    end."""
    answers = iter(["", "zz", "help"])
    seen = []

    def fake_input(prompt):
        out = capsys.readouterr().out
        seen.append(out)
        try:
            return next(answers)
        except StopIteration:
            pass
        legal = [line for line in out.splitlines() if line.startswith("Legal: ")]
        if not legal:  # no new listing since the last answer: reuse the previous one
            legal = [
                line
                for chunk in seen
                for line in chunk.splitlines()
                if line.startswith("Legal: ")
            ]
        return legal[-1].split()[-1].lower()  # lower case is accepted

    monkeypatch.setattr("builtins.input", fake_input)
    assert main(["play", "german_whist_v0", "--opponent", "random", "--seed", "4"]) == 0
    text = "".join(seen) + capsys.readouterr().out
    assert "Not understood" in text and "Type one of the legal moves" in text
    assert "You win" in text or "You lose" in text


def test_play_rejects_illegal_card_then_quits(monkeypatch, capsys):
    from parlour.envs.core.cards import FRENCH_52

    answers = []

    def fake_input(prompt):
        out = capsys.readouterr().out
        if answers:
            answers.append(out)
            return "quit"
        legal = next(
            line for line in out.splitlines() if line.startswith("Legal: ")
        ).split()[1:]
        answers.append(out)
        return next(n for n in FRENCH_52.names if n not in legal)

    monkeypatch.setattr("builtins.input", fake_input)
    assert main(["play", "german_whist_v0", "--opponent", "random", "--seed", "1"]) == 0
    text = "".join(answers) + capsys.readouterr().out
    assert "is not legal now" in text and "Bye." in text


def test_demo_smoke(tmp_path, capsys):
    run = tmp_path / "demo"
    argv = "demo --steps 256 --eval-games 4 --teacher-games 3 --quiet --run-dir"
    assert main([*argv.split(), str(run)]) == 0
    out = capsys.readouterr().out
    assert "checkpoint:" in out and "learning curve:" in out
    assert "imitation of the heuristic bot over 3 games" in out
    assert (run / "learning_curve.png").exists()
    assert (run / "warm_start.json").exists()
    # few teacher games: the teacher's own labels, not the config's solver labels
    assert json.loads((run / "config.json").read_text())["warm_start_exact"] is False
    # the learning curve starts at step 0; the time by phase is reported
    assert (run / "evaluations.csv").read_text().splitlines()[1].startswith("0,random")
    assert "time by phase: teacher games" in out and "evaluation" in out
    # the play command can be run as printed (here: python -m parlour.cli)
    play = next(x for x in out.splitlines() if x.startswith("Play against it: "))
    assert play.endswith(f"-m parlour.cli play german_whist_v0 --opponent ckpt:{run}")


def test_demo_without_a_teacher(tmp_path, capsys):
    """--teacher-games 0 turns the warm start off, solver labels included."""
    run = tmp_path / "demo"
    args = ["demo", "--steps", "256", "--eval-games", "4", "--teacher-games", "0"]
    assert main([*args, "--quiet", "--run-dir", str(run)]) == 0
    assert "imitation" not in capsys.readouterr().out
    assert not (run / "warm_start.json").exists()


def test_demo_rejects_negative_teacher_games(capsys):
    with pytest.raises(SystemExit) as err:
        main(["demo", "--teacher-games", "-1"])
    assert err.value.code == 2
    assert "expected a non-negative integer" in capsys.readouterr().err


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A German Whist checkpoint from a few hundred steps of training."""
    from parlour.training.train import config_from_dict, train

    config = config_from_dict(
        {
            **TINY_TRAINING,
            "opponents": {"random": 1.0},
            "snapshot_every": 20_000,  # the default: no self-play here
            "checkpoint_every": 256,
            "eval_every": 256,
        }
    )
    return train(config, run_dir=tmp_path_factory.mktemp("run"), progress=False)


def test_eval_reports_stage2_quality(tiny_run, capsys):
    argv = ["eval", str(tiny_run.run_dir), "--vs", "random", "--games", "2"]
    assert main([*argv, "--stage2-quality", "4", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "stage 2 against perfect play (german, 4 games" in out
    line = next(x for x in out.splitlines() if "optimal decisions" in x)
    assert 0.0 <= float(line.split()[-1].rstrip("%")) <= 100.0
    assert "tricks lost per decision" in out and "blunders / won positions" in out
    # without the flag: no solver report
    assert main([*argv, "--quiet"]) == 0
    assert "stage 2" not in capsys.readouterr().out


def test_ctrl_c_in_eval_keeps_the_opponents_done(
    tiny_run, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "e.json"
    argv = ["eval", str(tiny_run.run_dir), "--vs", "random", "heuristic", "solver"]
    argv += ["--games", "4", "--duplicate", "--quiet", "--json", str(out)]
    _ctrl_c_at_game(monkeypatch, 4 + 4)  # the 2nd opponent's 2nd deal, 2nd seating
    assert main([*argv, "--stage2-quality", "4"]) == 130
    printed, err = capsys.readouterr()
    assert "random" in printed and "2 of 4 games (interrupted)" in printed
    assert "stage 2" not in printed  # what comes after the opponents is not started
    assert "interrupted: kept 2 of 4 games against heuristic; not played: solver" in err
    assert json.loads((tmp_path / "e-random.json").read_text())["games"] == 4
    partial = json.loads((tmp_path / "e-heuristic.json").read_text())
    assert partial["interrupted"] is True and partial["games"] == 2
    assert not (tmp_path / "e-solver.json").exists()


def test_eval_stage2_quality_needs_german_whist(tiny_run, monkeypatch, capsys):
    from parlour.training import checkpoint as ckpt_io

    real = ckpt_io.load(tiny_run.run_dir)
    real.manifest = {**real.manifest, "env": "herzeln_v0"}
    monkeypatch.setattr(ckpt_io, "load", lambda path: real)
    argv = ["eval", str(tiny_run.run_dir), "--stage2-quality", "2", "--quiet"]
    assert main(argv) == 2
    assert "needs a german_whist_v0 checkpoint" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["eval", "x", "--stage2-quality", "0"])
    assert exc.value.code == 2
    assert "positive integer" in capsys.readouterr().err


def test_unknown_training_backend_is_refused_before_anything_is_written(
    tmp_path, capsys
):
    run_dir = tmp_path / "run"
    argv = ["train", "german_whist_v0", "--backend", "nope", "--run-dir", str(run_dir)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "unknown backend 'nope' (backends: " in err and "sb3)" in err
    assert len(err.strip().splitlines()) == 1
    assert not run_dir.exists()


def test_a_closed_pipe_is_not_a_traceback():
    """``parlour list | head -1``: when the reader has closed the pipe, the command
    stops without a traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "parlour.cli", "list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader is gone before the first line is written
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err, err


# --- --executor (where games are played) and the old --backend local|ray ------------
def test_executor_and_its_old_spelling_give_the_same_games(tmp_path, capsys):
    """arena, league and tips read --executor; their old ``--backend local|ray`` still
    works, with one deprecation line on stderr (``parlour train --backend`` is the
    trainer's)."""
    base = ["arena", "german_whist_v0", "--agents", "random", "heuristic"]
    base += ["--games", "4", "--duplicate", "--quiet", "--json"]
    results = {}
    for flag in ("--executor", "--backend"):
        path = tmp_path / f"{flag[2:]}.json"
        assert main([*base, str(path), flag, "local"]) == 0
        err = capsys.readouterr().err
        warned = [line for line in err.splitlines() if "deprecated" in line]
        assert warned == (
            []
            if flag == "--executor"
            else [
                "parlour: --backend local is deprecated here: write --executor local "
                "(--backend names the trainer of 'parlour train')"
            ]
        )
        results[flag] = json.loads(path.read_text())
    assert results["--executor"] == results["--backend"]
    boards = []
    for flag in ("--executor", "--backend"):
        db = tmp_path / f"{flag[2:]}.sqlite"
        argv = ["league", "german_whist_v0", "--agents", "random", "heuristic"]
        argv += ["--games", "2", "--db", str(db), "--quiet", "--json", flag, "local"]
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert ("deprecated" in err) == (flag == "--backend")
        boards.append(json.loads(out))
    assert boards[0] == boards[1]
    # the two spellings must agree; the trainer's values are not the executor's
    assert (
        main(
            [*base, str(tmp_path / "x.json"), "--executor", "local", "--backend", "ray"]
        )
        == 2
    )
    assert "--executor local and --backend ray disagree" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main([*base, str(tmp_path / "y.json"), "--backend", "sb3"])
    assert exc.value.code == 2
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "y.json").exists()


def test_the_old_backend_keyword_of_the_python_api_warns(tmp_path):
    from parlour import league
    from parlour.training.arena import run_arena

    kw = {"games": 4, "duplicate": True}
    new = run_arena("german_whist_v0", ["random", "heuristic"], executor="local", **kw)
    with pytest.warns(DeprecationWarning, match="backend= .* is now executor="):
        old = run_arena(
            "german_whist_v0", ["random", "heuristic"], backend="local", **kw
        )
    assert old.summary() == new.summary() and old.deal_index == new.deal_index
    with pytest.warns(DeprecationWarning):
        run = league.run_league(
            "german_whist_v0",
            ["random", "heuristic"],
            games=2,
            db=tmp_path / "l.sqlite",
            backend="local",
        )
    assert run.stored == 2
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="disagree"):
        run_arena(
            "german_whist_v0", ["random", "random"], executor="ray", backend="local"
        )
