"""The distribution as a user gets it: ``python -m build`` makes an sdist and, from it,
a wheel that holds every module and every file a command reads (presets, tips
hypotheses, pretrained models, templates); installed alone into a fresh venv, every
command works from an empty directory.

The wheel is built from a copy of the checkout (never writing build/ or egg-info into
it), without build isolation: the test environment's setuptools builds it, so no
download is needed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# what a checkout may hold that is no part of a build
NOT_SOURCE = (".git", ".venv", "build", "dist", "runs", "site", "*.egg-info",
              "__pycache__", ".pytest_cache", ".ruff_cache")  # fmt: skip


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    """The sdist and the wheel built from it, as ``python -m build`` makes them."""
    tmp = tmp_path_factory.mktemp("dist")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "out"),
         str(src)],  # fmt: skip
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sdist,) = (tmp / "out").glob("parlour-*.tar.gz")
    (wheel,) = (tmp / "out").glob("parlour-*.whl")
    return {"sdist": sdist, "wheel": wheel}


def test_wheel_holds_every_package_file(dists, repo_files):
    """Every file under a package folder (modules, configs/ presets and tips
    hypotheses, parlour/models/, templates, assets) is in the wheel built from the
    sdist, at its package path; nothing else lands outside ``parlour/``."""
    package_dir = PYPROJECT["tool"]["setuptools"]["package-dir"]
    folders = {folder: pkg.replace(".", "/") for pkg, folder in package_dir.items()}
    expected = set()
    for rel in repo_files:
        for folder, target in folders.items():
            if rel.startswith(folder + "/"):
                expected.add(target + rel[len(folder) :])
    names = set(zipfile.ZipFile(dists["wheel"]).namelist())
    assert not expected - names, f"missing from the wheel: {sorted(expected - names)}"
    assert {"parlour/configs/german_whist_v0.strong.yaml",
            "parlour/configs/tips/german_whist_v0.yaml",
            "parlour/models/german_whist_v0/weights.pt"} <= names  # fmt: skip
    outside = {n.split("/")[0] for n in names} - {"parlour"}
    assert outside == {dists["wheel"].name.split("-py3")[0] + ".dist-info"}


def test_sdist_holds_the_project_files(dists):
    """The sdist carries the configs, the models, the licence, the changelog and the
    citation beside the sources."""
    with tarfile.open(dists["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "CITATION.cff",
            "configs/german_whist_v0.batch.yaml", "configs/tips/forty_fives_v0.yaml",
            "parlour/models/herzeln_v0/weights.pt"} <= names  # fmt: skip


def _fresh_venv(tmp_path: Path, wheel: Path) -> Path:
    """A new venv with only the wheel installed into it; the test environment's
    site-packages are added afterwards (a .pth) so it finds the dependencies without
    seeing the checkout."""
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True
    )
    python = venv / "bin" / "python"
    # before the .pth exists: pip must not see the test environment's own parlour
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", str(wheel)],  # fmt: skip
        check=True,
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    (Path(purelib) / "_test_dependencies.pth").write_text("\n".join(deps) + "\n")
    return venv


@pytest.mark.slow
def test_installed_wheel_runs_every_command(dists, tmp_path):
    """From an empty directory with only the wheel installed: list, arena with the
    pretrained agent, train with every preset (tiny budgets) and a user's own config
    file, eval, tips, league, play with scripted input, dice-table, new-game."""
    venv = _fresh_venv(tmp_path, dists["wheel"])
    work = tmp_path / "empty"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"

    def parlour(*argv: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            [str(venv / "bin" / "parlour"), *argv],
            cwd=work,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])
        return done.stdout

    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import parlour; print(parlour.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert Path(where).is_relative_to(venv) and ROOT.as_posix() not in where
    assert parlour("--version").strip() == f"parlour {PYPROJECT['project']['version']}"

    listing = parlour("list")
    assert "german_whist_v0" in listing and "pretrained" in listing
    parlour("arena", "german_whist_v0", "--agents", "pretrained", "heuristic",
            "--games", "4", "--duplicate", "--quiet", "--json", "arena.json")
    assert json.loads((work / "arena.json").read_text())["env_version"] == 0

    tiny = ["total_timesteps=256", "n_envs=4", "n_steps=32", "batch_size=64",
            "n_epochs=1", "snapshot_every=128", "checkpoint_every=256",
            "eval_every=256", "eval_games=2", "warm_start_games=2",
            "warm_start_epochs=1", "warm_start_workers=1", "tensorboard=false"]
    overrides = [arg for item in tiny for arg in ("--set", item)]
    # env.preset.yaml, the preset's own name may have dots (batch.mmd)
    presets = sorted(
        p.name.removesuffix(".yaml").split(".", 1)
        for p in (ROOT / "configs").glob("*.*.yaml")
    )
    assert len(presets) >= 7
    for env_name, preset in presets:
        batch = preset.split(".")[0] == "batch"
        backend = ["--backend", "batch"] if batch else []
        run_dir = f"runs/{env_name}-{preset}"
        parlour("train", env_name, "--preset", preset, *backend, *overrides,
                "--run-dir", run_dir, "--quiet")  # fmt: skip
        assert (work / run_dir / "latest.json").is_file(), (env_name, preset)
    # a user's own config file, by path
    (work / "mine.yaml").write_text("env: fuenfzehn_tot_v0\nwarm_start: ''\n")
    parlour("train", "fuenfzehn_tot_v0", "--config", "mine.yaml", *overrides,
            "--run-dir", "runs/mine", "--quiet")  # fmt: skip

    parlour("eval", "runs/german_whist_v0-batch", "--vs", "random", "--games", "2",
            "--quiet")  # fmt: skip
    parlour("eval", "pretrained:herzeln_v0", "--vs", "random", "--games", "1",
            "--quiet")  # fmt: skip
    parlour("tips", "german_whist", "--tip", "win_cheaply", "--games", "6",
            "--workers", "1", "--out", "tips", "--quiet")  # fmt: skip
    assert json.loads((work / "tips" / "german_whist.json").read_text())["tips"]
    parlour("league", "german_whist_v0", "--agents", "random", "pretrained",
            "--games", "2", "--db", "league.sqlite", "--quiet")  # fmt: skip
    board = json.loads(parlour("league", "show", "german_whist_v0", "--db",
                               "league.sqlite", "--json"))  # fmt: skip
    assert board[0]["games"] == 2
    played = parlour("play", "german_whist_v0", "--opponent", "pretrained",
                     stdin="help\nzz\nquit\n")  # fmt: skip
    assert "Legal: " in played and "Bye." in played
    assert "stand" in parlour("dice-table", "--half", "2", "--plot", "table.png")
    assert (work / "table.png").stat().st_size > 1000
    # the new-game templates are package data too
    (work / "games").mkdir()
    parlour("new-game", "toy_v0", "--envs-dir", "games")
    assert (work / "games" / "toy" / "rules.py").stat().st_size > 1000
