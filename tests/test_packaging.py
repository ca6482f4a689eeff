"""The distribution ships every subpackage, and nothing installs top-level envs/agents
modules; the version has one source."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOP = {
    "parlour": "parlour",
    "envs": "parlour.envs",
    "agents": "parlour.agents",
    "training": "parlour.training",
    "configs": "parlour.configs",
}


def test_every_package_directory_is_listed():
    """setup.py lists every folder with an ``__init__.py`` below the package-dir roots
    (a new game's package with no file edited), and no top-level envs/agents."""
    import importlib.util

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {v: k for k, v in TOP.items()}
    assert "packages" not in config  # setup.py's list, not a second one to edit
    spec = importlib.util.spec_from_file_location("parlour_setup", ROOT / "setup.py")
    setup_py = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup_py)
    listed = set(setup_py.packages())
    found = set()
    for folder, name in TOP.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([name, *rel.parts]))
    assert found == listed, (
        f"missing: {sorted(found - listed)}, extra: {sorted(listed - found)}"
    )
    assert {"parlour.envs.herzeln", "parlour.league", "parlour.cli"} <= listed
    assert not {"envs", "agents", "training", "configs"} & listed


def test_version_comes_from_pyproject():
    """``parlour.__version__`` (and ``parlour --version``) is pyproject's version, read
    back from the installed metadata; an env's version is its name's _vN."""
    import parlour
    from parlour.cli import build_parser

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert parlour.__version__ == project["version"]
    assert build_parser()._option_string_actions["--version"].version == (
        f"parlour {project['version']}"
    )
    assert parlour.versions("herzeln_v0") == {
        "parlour_version": project["version"],
        "env": "herzeln_v0",
        "env_version": 0,
    }
    assert parlour.env_version("chess_v12") == 12
    with pytest.raises(ValueError, match="_vN"):
        parlour.env_version("chess")


def test_citation_and_changelog_name_this_version():
    """CITATION.cff (CFF 1.2.0) cites the version pyproject declares; the changelog has
    an Unreleased section and one for every released version up to this one."""
    import yaml

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0"
    assert str(citation["version"]) == version
    assert citation["title"] and citation["authors"] and citation["message"]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## Unreleased" in changelog and f"## {version} " in changelog


# paths that lie outside a clone of the repository (the rule texts' files among them)
OUTSIDE = re.compile(
    r"\.\./shared\b|\bshared/(seeds|rules-notes|conventions|house-style)|/work/"
    r"|\b\d{3}_[0-9a-f]{16}\.txt\b"
)


def test_repository_names_no_path_outside_itself(repo_files):
    """No README, doc, docstring, comment, test, config or generated report names a
    file outside the repository: rule books are cited by title (docs/conventions.md)."""
    found = []
    here = Path(__file__).resolve().relative_to(ROOT).as_posix()  # holds the pattern
    for rel in repo_files:
        path = ROOT / rel
        if rel == here or path.suffix in {".pt", ".png", ".sqlite"}:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{rel}:{number}: {line.strip()[:80]}")
    assert not found, "\n".join(found)
