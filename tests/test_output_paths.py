"""Every output path of every command is checked before any game or training: a path
that cannot be written is refused in one line, exit 2, with no work done."""

from __future__ import annotations

import importlib
import json

import pytest

from parlour.cli import main
from parlour.paths import check_output_path, prepare_output_file

HUGE = "1000000000"
LEAGUE = ["league", "german_whist_v0", "--agents", "random", "heuristic"]


def _work(*_args, **_kwargs):
    raise AssertionError("work started before the output path was checked")


# training's work starts when the learner is made (after the run directory's check)
TRAINING = [
    ("parlour.training.backends", "make"),
    ("parlour.training.arena", "run_arena"),
]
# (command argv before the path, the option, what the work is: module, attribute)
FILE_OPTIONS = {
    "arena --json": (
        ["arena", "german_whist_v0", "--agents", "random", "random", "--games", HUGE],
        "--json",
        [("parlour.training.arena", "run_arena"), ("parlour.text", "run_text_arena")],
    ),
    "arena --record": (
        ["arena", "german_whist_v0", "--agents", "random", "random", "--games", HUGE],
        "--record",
        [("parlour.text", "run_text_arena")],
    ),
    "eval --json": (
        ["eval", "pretrained:german_whist_v0", "--games", HUGE],
        "--json",
        [
            ("parlour.training.arena", "run_arena"),
            ("parlour.training.checkpoint", "load"),
        ],
    ),
    "league --db": (
        [*LEAGUE, "--games", HUGE],
        "--db",
        [("parlour.league", "run_league")],
    ),
    "league --plot": (
        [*LEAGUE, "--games", HUGE],
        "--plot",
        [("parlour.league", "run_league")],
    ),
    "dice-table --plot": (
        ["dice-table"],
        "--plot",
        [("parlour.agents.fuenfzehn_tot_solver", "main")],
    ),
    "exploit --json": (
        ["exploit", "german_whist_v0", "random", "--steps", HUGE],
        "--json",
        TRAINING,
    ),
    "bench --append": (
        ["bench", "german_whist_v0", "--agent", "random", "--games", HUGE],
        "--append",
        [("parlour.training.bench", "run_arena")],
    ),
    "serve --db": (
        ["serve", "--port", "0"],
        "--db",
        [("parlour.web.service", "Parlour")],
    ),
}
DIR_OPTIONS = {
    "train --run-dir": (
        ["train", "german_whist_v0", "--set", f"total_timesteps={HUGE}"],
        "--run-dir",
        TRAINING,
    ),
    "demo --run-dir": (
        ["demo", "--steps", HUGE],
        "--run-dir",
        TRAINING,
    ),
    "exploit --run-dir": (
        ["exploit", "german_whist_v0", "random", "--steps", HUGE],
        "--run-dir",
        TRAINING,
    ),
    "dagger --run-dir": (
        ["dagger", "pretrained:german_whist_v0"],
        "--run-dir",
        [("parlour.training.dagger", "play_round")],
    ),
    "distil --out": (
        ["distil", "pretrained:german_whist_v0", "--data", "runs/none"],
        "--out",
        [("parlour.training.distil", "load_runs")],
    ),
    "bench --out": (
        ["bench", "german_whist_v0", "--steps", HUGE],
        "--out",
        [*TRAINING, ("parlour.training.bench", "run_arena")],
    ),
    "tips --out": (
        ["tips", "german_whist", "--games", HUGE],
        "--out",
        [("parlour.training.tips", "run_tips")],
    ),
    "new-game --envs-dir": (
        ["new-game", "faultless_v0"],
        "--envs-dir",
        [("parlour.cli.new_game", "write_game")],
    ),
}

# bad forms: name -> path (``{tmp}`` is a fresh folder holding the file ``afile``)
BAD_FILES = {
    "missing parent on a read-only file system": "/proc/no/such/out.png",
    "read-only file system": "/proc/out.png",
    "sysfs": "/sys/out.png",
    "/proc itself": "/proc",
    "parent is a file": "{tmp}/afile/out.png",
    "under a file's child": "{tmp}/afile/deeper/out.png",
    "a directory given for a file": "{tmp}",
    "a trailing slash": "{tmp}/newdir/",
    "empty": "",
}
BAD_DIRS = {
    "missing parent on a read-only file system": "/proc/no/such/run",
    "read-only file system": "/proc/parlour-run",
    "sysfs": "/sys/parlour-run",
    "/proc itself": "/proc",
    "a file given for a directory": "{tmp}/afile",
    "under a file": "{tmp}/afile/run",
}


def _cases(options, forms):
    return [
        pytest.param(option, form, id=f"{option}: {form}")
        for option in options
        for form in forms
    ]


# modules that bind a work function by name when first imported: imported before the
# patch, so that no module keeps the patched function after the test
IMPORT_FIRST = (
    "parlour.training.exploit",
    "parlour.training.bench",
    "parlour.training.dagger",
    "parlour.training.distil",
    "parlour.training.yardsticks",
    "parlour.training.train",
    "parlour.training.tips",
    "parlour.league",
    "parlour.text",
)


def _refused(monkeypatch, capsys, tmp_path, spec, bad):
    argv, option, work = spec
    for module in IMPORT_FIRST:
        importlib.import_module(module)
    for module, attr in work:
        try:
            mod = importlib.import_module(module)
        except ImportError as err:  # serve without the web extra
            pytest.skip(f"{module} is not importable: {err}")
        monkeypatch.setattr(mod, attr, _work)
    (tmp_path / "afile").write_text("keep me")
    path = bad.format(tmp=tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    code = main([*argv, option, path])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("parlour "), err
    assert "error:" in lines[0]
    assert out == ""
    # nothing was written: the folder and the file in it are as they were
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "afile").read_text() == "keep me"


@pytest.mark.parametrize("option,form", _cases(FILE_OPTIONS, BAD_FILES))
def test_bad_file_paths_are_refused_before_work(
    option, form, monkeypatch, capsys, tmp_path
):
    _refused(monkeypatch, capsys, tmp_path, FILE_OPTIONS[option], BAD_FILES[form])


@pytest.mark.parametrize("option,form", _cases(DIR_OPTIONS, BAD_DIRS))
def test_bad_directory_paths_are_refused_before_work(
    option, form, monkeypatch, capsys, tmp_path
):
    _refused(monkeypatch, capsys, tmp_path, DIR_OPTIONS[option], BAD_DIRS[form])


def test_envs_dir_must_exist(monkeypatch, capsys, tmp_path):
    spec = DIR_OPTIONS["new-game --envs-dir"]
    _refused(monkeypatch, capsys, tmp_path, spec, "{tmp}/missing")


def test_arena_json_creates_missing_folders(tmp_path, capsys):
    # the measured hole: the check passed, every game was played, the write failed
    path = tmp_path / "new" / "sub" / "r.json"
    argv = ["arena", "german_whist_v0", "--agents", "random", "random"]
    assert main([*argv, "--games", "2", "--quiet", "--json", str(path)]) == 0
    assert json.loads(path.read_text())["games"] == 2


def test_existing_file_is_probed_not_touched(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old")
    check_output_path(path, what="--json")
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_prepare_creates_parents_and_check_writes_nothing(tmp_path):
    check_output_path(tmp_path / "a" / "b" / "c.json")
    check_output_path(tmp_path / "d" / "e", directory=True)
    assert list(tmp_path.iterdir()) == []
    assert prepare_output_file(tmp_path / "a" / "b" / "c.json") == (
        tmp_path / "a" / "b" / "c.json"
    )
    assert (tmp_path / "a" / "b").is_dir() and not (tmp_path / "a/b/c.json").exists()


def test_old_home_still_imports():
    from parlour.training import checkpoint

    assert checkpoint.check_output_path is check_output_path
