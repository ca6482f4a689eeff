"""What Parlour ships as ``pretrained`` agents (``parlour/models/<name>/``): every model
is complete, small, loads through the agent spec and plays; the wheel carries them and
``pretrained`` loads from an installed copy (slow test)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from parlour import envs
from parlour.envs.core import fingerprint
from parlour.training import pretrained
from parlour.training.arena import run_arena

ROOT = Path(__file__).resolve().parent.parent
ENV = "german_whist_v0"
FILES = {"manifest.json", "weights.pt", "command.sh", "card.md"}

SHIPPED = pretrained.shipped()


def test_models_are_shipped_small_and_complete():
    assert ENV in SHIPPED  # the German Whist agent at least
    total = 0
    for env, directory in SHIPPED.items():
        assert {p.name for p in directory.iterdir()} == FILES, env
        total += sum(p.stat().st_size for p in directory.iterdir())
        info = json.loads((directory / "manifest.json").read_text())["pretrained"]
        assert {row["field"] for row in info["evaluation"]} >= {"random", "heuristic"}
        assert "parlour train" in (directory / "command.sh").read_text()
    assert total < 5_000_000


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_each_shipped_agent_loads_and_plays(name):
    info = json.loads((SHIPPED[name] / "manifest.json").read_text())
    env, options = info["env"], info["env_options"]
    assert pretrained.model_name(env, info["game_options"]) == name
    assert pretrained.model_dir(env, options) == SHIPPED[name]
    result = run_arena(env, ["pretrained", "random"], games=2, env_options=options)
    assert result.games == 2


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_models_were_trained_on_the_rules_of_now(name):
    """The guard for the shipped models: a change of an engine's rule tables, actions,
    observation layout or play refuses the models trained before it (retrain them, or
    show they play the same and store the new fingerprint)."""
    info = json.loads((SHIPPED[name] / "manifest.json").read_text())
    current = envs.fingerprint(info["env"], info["game_options"])
    stored = info.get("fingerprint", {})
    assert not fingerprint.changes(stored, current), (
        f"{name}: {fingerprint.describe(stored, current)}"
    )


def test_package_data_covers_every_shipped_file():
    import fnmatch
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = config["package-data"]["parlour"]
    for path in (ROOT / "parlour" / "models").rglob("*"):
        if path.is_file():
            rel = path.relative_to(ROOT / "parlour").as_posix()
            assert any(fnmatch.fnmatch(rel, p) for p in patterns), rel


@pytest.mark.slow
def test_wheel_ships_the_models_and_pretrained_loads_from_it(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        check=True,
        timeout=600,
    )
    (wheel,) = (tmp_path / "dist").glob("parlour-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for env in SHIPPED:
        for name in FILES:
            assert f"parlour/models/{env}/{name}" in names
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        timeout=600,
    )
    script = (
        "import parlour, parlour.agents as a;"
        "from parlour.training import pretrained as p;"
        "print(parlour.__file__);"
        f"print(a.make('pretrained', {ENV!r}).policy.num_actions);"
        "print(p.model_dir('german_whist_v0'))"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.split("\n")
    assert out[0].startswith(str(target))
    assert out[1] == "52"
    assert out[2].startswith(str(target))
