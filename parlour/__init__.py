"""Parlour: card and dice games from old rule books as multi-agent RL environments."""

from __future__ import annotations

import re
from importlib import metadata

try:
    # one source for the version: pyproject.toml, read back from the installed metadata
    __version__ = metadata.version("parlour")
except metadata.PackageNotFoundError:  # a source tree on sys.path, never installed
    __version__ = "0+unknown"

_ENV_VERSION = re.compile(r"_v(\d+)$")


def env_version(env: str) -> int:
    """The version of an env, its name's ``_vN`` suffix (docs/versions.md)."""
    found = _ENV_VERSION.search(env)
    if found is None:
        raise ValueError(f"env name {env!r} has no _vN version suffix")
    return int(found.group(1))


def versions(env: str) -> dict[str, str | int]:
    """What a result depends on beyond its seed: the Parlour version that made it, the
    env and the env's version; every manifest, JSON result and report carries it."""
    return {"parlour_version": __version__, "env": env, "env_version": env_version(env)}
