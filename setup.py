"""The wheel's package list, found by walking the source folders; pyproject.toml holds
everything else. A new package (a game written by ``parlour new-game``, say) is in the
wheel with no file edited."""

import tomllib
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent


def packages() -> list[str]:
    """Every folder with an ``__init__.py`` below each of pyproject's package-dir roots,
    named as it installs (``envs/herzeln`` is ``parlour.envs.herzeln``)."""
    config = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set()
    for name, folder in config["package-dir"].items():
        root = HERE / folder
        for init in root.rglob("__init__.py"):
            rel = init.parent.relative_to(root)
            if not any(part.startswith(".") for part in rel.parts):  # no hidden dirs
                found.add(".".join([name, *rel.parts]))
    return sorted(found)


if __name__ == "__main__":  # setuptools runs this file as __main__
    setup(packages=packages())
