"""The Parlour environments and their registry.

>>> from parlour import envs
>>> envs.names()
['german_whist_v0']
>>> env = envs.make("german_whist_v0", variant="honeymoon")
"""

from __future__ import annotations

import importlib
from typing import Any

from .core.engine import IllegalActionError

# name -> module; games register here as they land.
_REGISTRY = {
    "german_whist_v0": "parlour.envs.german_whist",
}

#: every variant of every env, as (name, options): the generic tests run over these.
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "german_whist_v0": [
        {"variant": "german"},
        {"variant": "honeymoon", "episode": "deal"},
        {"variant": "honeymoon", "episode": "match"},
    ],
}


def names() -> list[str]:
    """The registered env names."""
    return sorted(_REGISTRY)


def module(name: str):
    """The module of a registered env (it has ``env()`` and ``raw_env``)."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown env {name!r}; known: {', '.join(names())}")
    return importlib.import_module(_REGISTRY[name])


def make(name: str, raw: bool = False, **options: Any):
    """A new env by name; ``raw=True`` skips PettingZoo's wrappers. Bad options raise ValueError."""
    mod = module(name)
    try:
        return mod.raw_env(**options) if raw else mod.env(**options)
    except TypeError as err:  # unknown keyword: say which options exist
        import inspect

        params = [p for p in inspect.signature(mod.raw_env.__init__).parameters if p != "self"]
        raise ValueError(f"bad options for {name}: {err}; options: {', '.join(params)}") from None


__all__ = ["VARIANTS", "IllegalActionError", "make", "module", "names"]
