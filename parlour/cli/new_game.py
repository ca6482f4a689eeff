"""``parlour new-game NAME``: write a new game's package under ``envs/`` from the
template, a complete small trick game that registers itself by its record.

The template (``parlour/templates/new_game/*.py.tmpl``, package data) is a real game:
engine with explicit chance, observation, env with its spec page, heuristic bot, text
view and rules summary, the generic tests' deal hooks and the record that names them
all. Right after the command, with no other file edited, ``parlour list`` shows the
game and ``pytest -k NAME`` runs the generic, ecosystem, text and OpenSpiel tests on it
(docs/adding_a_game.md).
"""

from __future__ import annotations

import argparse
import keyword
import re
from importlib import resources
from pathlib import Path
from string import Template

from .common import Command, UsageError

#: an env name: a lowercase identifier ending in its version, ``_v0``
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*_v\d+")


def package_of(name: str) -> str:
    """The package name of an env name (``toy_v0`` -> ``toy``); UsageError, one line,
    for a name that is not a lowercase identifier ending in ``_vN`` or that is taken."""
    from .. import envs

    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise UsageError(
            f"bad game name {name!r}: write a lowercase identifier ending in its "
            "version, e.g. toy_v0"
        )
    package = name.rsplit("_v", 1)[0]
    if keyword.iskeyword(package) or package.endswith("_"):
        raise UsageError(f"bad game name {name!r}: {package!r} cannot be a package")
    if name in envs.names():
        raise UsageError(f"{name} is already registered (see 'parlour list')")
    return package


def template_values(name: str, package: str) -> dict[str, str]:
    """What the template's placeholders become: ``toy_v0`` -> the class ``Toy``, the
    title ``Toy``; ``card_race_v1`` -> ``CardRace``, ``Card Race``."""
    words = package.split("_")
    title = " ".join(w.capitalize() for w in words if w)
    return {
        "env_name": name,
        "package": package,
        "cls": "".join(w.capitalize() for w in words if w),
        "title": title,
        "upper": title.upper(),
    }


def write_game(name: str, envs_dir: Path) -> list[Path]:
    """Write ``envs_dir/<package>/`` for the env ``name`` from the template; returns
    the files written. UsageError (before anything is written) for a bad or taken name
    or an existing directory."""
    package = package_of(name)
    target = envs_dir / package
    if not envs_dir.is_dir():
        raise UsageError(f"no envs directory at {envs_dir}")
    if target.exists():
        raise UsageError(f"{target} already exists; pick another name")
    values = template_values(name, package)
    templates = resources.files("parlour").joinpath("templates", "new_game")
    sources = sorted(
        (t for t in templates.iterdir() if t.name.endswith(".py.tmpl")),
        key=lambda t: t.name,
    )
    if not sources:
        raise UsageError(f"the game template is missing from {templates}")
    texts = {
        t.name.removesuffix(".tmpl"): Template(
            t.read_text(encoding="utf-8")
        ).substitute(values)
        for t in sources
    }
    target.mkdir()
    written = []
    for filename, text in texts.items():
        path = target / filename
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def cmd_new_game(args: argparse.Namespace) -> int:
    from .. import envs
    from ..paths import check_output_path

    envs_dir = (
        Path(args.envs_dir) if args.envs_dir is not None else Path(envs.__file__).parent
    )
    check_output_path(envs_dir, directory=True, exists=True, what="--envs-dir")
    written = write_game(args.name, envs_dir)
    print(f"wrote {written[0].parent}/: {', '.join(p.name for p in written)}")
    print(
        f"Next: 'parlour list' shows {args.name}; 'pytest -k {args.name}' runs the "
        "generic tests on it; then make the rules your game's (docs/adding_a_game.md)."
    )
    return 0


def _new_game_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour new-game``."""
    p.add_argument("name", help="the env name: a lowercase identifier ending _vN, "
                   "e.g. toy_v0")  # fmt: skip
    p.add_argument(
        "--envs-dir",
        metavar="DIR",
        help="where the game packages are, an existing writable directory "
        "(default: the envs/ of this parlour)",
    )


#: the subcommands of this module (`parlour.cli.build_parser` adds them)
COMMANDS = (
    Command(
        "new-game",
        cmd_new_game,
        help="write a new game's package from the template (a small trick game)",
        description="Write envs/PACKAGE/ for the env NAME (PACKAGE is NAME without "
        "its _vN) from the template: a complete small trick game with its record, "
        "registered as soon as it is written. Nothing else is edited.",
        arguments=_new_game_arguments,
    ),
)
