"""The distribution ships every subpackage, and nothing installs top-level envs/agents
modules."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOP = {
    "parlour": "parlour",
    "envs": "parlour.envs",
    "agents": "parlour.agents",
    "training": "parlour.training",
}


def test_every_package_directory_is_listed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    assert config["package-dir"] == {v: k for k, v in TOP.items()}
    found = set()
    for folder, name in TOP.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([name, *rel.parts]))
    assert found == listed, (
        f"missing: {sorted(found - listed)}, extra: {sorted(listed - found)}"
    )
    assert not {"envs", "agents", "training"} & listed
