"""``parlour new-game``: the template game and the drill that proves a new game
touches no existing file.

The drill copies the repository's files (those git knows, committed or not) into a
temporary git repository, runs ``parlour new-game toy_v0`` there, and in subprocesses
that import the copy's code: ``pytest -k toy_v0`` over the generic, ecosystem, text and
OpenSpiel tests, ``parlour list`` and ``parlour arena toy_v0 --agents text:scripted
random``. Then ``git status`` in the copy must show the new ``envs/toy/`` and nothing
else. It takes about 30 s of CPU (a minute on a loaded machine), so it runs in the
default suite.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parlour.cli import main
from parlour.cli.new_game import template_values

ROOT = Path(__file__).resolve().parent.parent
#: the test files whose tests go over every registered env
GENERIC_FILES = [
    "tests/test_generic.py",
    "tests/test_ecosystem.py",
    "tests/test_text.py",
    "tests/test_openspiel.py",
    "tests/test_fingerprint.py",
]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Toy_v0", "lowercase identifier ending in its version"),
        ("toy", "lowercase identifier ending in its version"),
        ("toy_v", "lowercase identifier ending in its version"),
        ("1toy_v0", "lowercase identifier ending in its version"),
        ("toy-game_v0", "lowercase identifier ending in its version"),
        ("class_v0", "'class' cannot be a package"),
        ("german_whist_v0", "german_whist_v0 is already registered"),
        ("core_v0", "already exists"),
        ("german_whist_v1", "already exists"),
    ],
)
def test_bad_names_are_refused_before_anything_is_written(name, message, capsys):
    before = sorted(p.name for p in (ROOT / "envs").iterdir())
    assert main(["new-game", name]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert sorted(p.name for p in (ROOT / "envs").iterdir()) == before


def test_the_template_is_written_whole(tmp_path, capsys):
    """Every template file, each placeholder filled in and each file valid Python;
    the env name is written once (the engine's NAME), in code."""
    assert main(["new-game", "card_race_v1", "--envs-dir", str(tmp_path)]) == 0
    assert "card_race" in capsys.readouterr().out
    package = tmp_path / "card_race"
    written = sorted(p.name for p in package.iterdir())
    assert written == [
        "__init__.py",
        "bot.py",
        "env.py",
        "hooks.py",
        "observation.py",
        "rules.py",
        "state.py",
        "text.py",
    ]
    names_in_code = 0
    for path in package.iterdir():
        text = path.read_text(encoding="utf-8")
        assert "$" not in text, f"{path.name}: a placeholder is left"
        tree = ast.parse(text)
        names_in_code += sum(
            isinstance(node, ast.Constant) and node.value == "card_race_v1"
            for node in ast.walk(tree)
        )
    assert names_in_code == 1
    assert "class CardRace(Game[State])" in (package / "rules.py").read_text()
    assert main(["new-game", "card_race_v1", "--envs-dir", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_template_values():
    values = template_values("card_race_v1", "card_race")
    assert values["cls"] == "CardRace" and values["title"] == "Card Race"
    assert values["upper"] == "CARD RACE" and values["env_name"] == "card_race_v1"


def repository_files() -> list[str]:
    """The files of this checkout that git knows (tracked or new, not ignored)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


def import_shim(copy: Path, shim: Path) -> None:
    """A folder that makes ``import parlour`` load the copy, as the package-dir
    mapping of pyproject.toml does: ``parlour/`` holds links to the copy's
    ``parlour/*`` and to its ``envs``, ``agents`` and ``training``."""
    package = shim / "parlour"
    package.mkdir(parents=True)
    for entry in (copy / "parlour").iterdir():
        (package / entry.name).symlink_to(entry)
    for folder in ("envs", "agents", "training"):
        (package / folder).symlink_to(copy / folder)


def run(copy: Path, shim: Path, *argv: str, timeout: int = 900) -> str:
    """Run ``python -P argv`` in the copy with the copy's code imported (-P: the
    working directory, whose parlour/ lacks envs, is not put on sys.path)."""
    env = {**os.environ, "PYTHONPATH": str(shim)}
    done = subprocess.run(
        [sys.executable, "-P", *argv],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout[-4000:]}{done.stderr}"
    return done.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="the drill copies with git")
def test_the_drill_a_new_game_touches_no_existing_file(tmp_path):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the drill copies the files git knows")
    copy, shim = tmp_path / "repo", tmp_path / "shim"
    for name in repository_files():
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    git = ["git", "-c", "user.name=drill", "-c", "user.email=drill@localhost"]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        subprocess.run([*git, *argv], cwd=copy, check=True, capture_output=True)
    import_shim(copy, shim)
    where = run(copy, shim, "-c", "import parlour.envs as e; print(e.__file__)")
    assert Path(where.strip()).resolve().is_relative_to(copy.resolve())

    run(copy, shim, "-m", "parlour", "new-game", "toy_v0")
    listed = run(copy, shim, "-m", "parlour", "list")
    assert re.search(r"^toy_v0: Toy: a tiny trick game", listed, re.M), listed
    tests = run(
        copy, shim, "-m", "pytest", "-q", "-p", "no:xdist", "-k", "toy_v0",
        *GENERIC_FILES,
    )  # fmt: skip
    passed = re.search(r"(\d+) passed", tests)
    assert passed and int(passed.group(1)) >= 100, tests[-2000:]
    assert re.search(r"\b(failed|error)", tests) is None, tests[-2000:]
    arena = run(
        copy, shim, "-m", "parlour", "arena", "toy_v0", "--agents", "text:scripted",
        "random", "--games", "20",
    )  # fmt: skip
    # A game is won (+1) or lost (-1): the mean score is 2 × win rate − 1, and the
    # field's is its negative.
    row = re.search(r"^text:scripted\s+([\d.]+) \[.*?\]\s+(-?[\d.]+) ", arena, re.M)
    field = re.search(r"^random \(field\)\s+(-?[\d.]+) ", arena, re.M)
    assert row and field, arena
    win, score = float(row.group(1)), float(row.group(2))
    assert "20 games" in arena
    assert score == pytest.approx(2 * win - 1, abs=1e-3)
    assert float(field.group(1)) == pytest.approx(-score, abs=1e-3)

    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=copy,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert status and all(line.startswith("?? envs/toy/") for line in status), status
