"""The Parlour environments and their registry.

Each game's package under ``envs/`` declares its `GameRecord` as ``GAME``
(`envs/core/record.py`); `names`, `record` and `VARIANTS` are read from those records.

Examples:
    >>> from parlour import envs
    >>> envs.names()[:2]
    ['forty_fives_v0', 'fuenfzehn_tot_v0']
    >>> envs.record("german_whist_v0").title
    'German Whist'
    >>> env = envs.make("german_whist_v0", variant="honeymoon")
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Any

from .core.engine import IllegalActionError
from .core.record import GameRecord

#: the packages under envs/ that are not games (shared code, the batched engines)
_NOT_GAMES = ("core", "batch")


@functools.cache
def _records() -> dict[str, GameRecord]:
    found: dict[str, GameRecord] = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.ispkg or info.name in _NOT_GAMES:
            continue
        package = importlib.import_module(f"{__name__}.{info.name}")
        record = getattr(package, "GAME", None)
        if not isinstance(record, GameRecord):
            raise ImportError(
                f"{package.__name__} declares no GAME record (a GameRecord, "
                "docs/adding_a_game.md)"
            )
        if record.name in found:
            raise ImportError(f"two packages register {record.name!r}")
        found[record.name] = record
    return dict(sorted(found.items()))


def records() -> list[GameRecord]:
    """Every game's record (`GameRecord`), by env name: one per package under
    ``envs/`` (each declares ``GAME``)."""
    return list(_records().values())


def record(name: str) -> GameRecord:
    """The record of a registered env; ValueError naming the known ones."""
    found = _records().get(name)
    if found is None:
        raise ValueError(f"unknown env {name!r}; known: {', '.join(names())}")
    return found


def names() -> list[str]:
    """The registered env names."""
    return list(_records())


def __getattr__(attr: str) -> Any:
    # VARIANTS, the table the generic tests read, is a view of the records; built on
    # first use so that `import parlour.envs` loads no game.
    if attr == "VARIANTS":
        return {r.name: [dict(o) for o in r.variants] for r in records()}
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def module(name: str):
    """The module of a registered env (it has ``env()`` and ``raw_env``)."""
    return importlib.import_module(record(name).package)


def make(name: str, raw: bool = False, **options: Any):
    """A new env by name; ``raw=True`` skips PettingZoo's wrappers. Bad options raise
    ValueError."""
    mod = module(name)
    try:
        return mod.raw_env(**options) if raw else mod.env(**options)
    except TypeError as err:  # unknown keyword: say which options exist
        import inspect

        params = [
            p for p in inspect.signature(mod.raw_env.__init__).parameters if p != "self"
        ]
        raise ValueError(
            f"bad options for {name}: {err}; options: {', '.join(params)}"
        ) from None


#: raw_env keywords that change how the env is driven, not which game it is
_DRIVER_OPTIONS = ("render_mode", "illegal_action")


def game_options(name: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The env's game options with defaults filled in (driver options such as
    render_mode left out): two option dicts describe the same game exactly when these
    are equal."""
    import inspect

    params = inspect.signature(module(name).raw_env.__init__).parameters
    out = {
        k: p.default
        for k, p in params.items()
        if k != "self"
        and k not in _DRIVER_OPTIONS
        and p.default is not inspect.Parameter.empty
    }
    for k, v in (options or {}).items():
        if k not in params or k == "self":
            raise ValueError(
                f"unknown option {k!r} for {name}; options: {', '.join(out)}"
            )
        if k not in _DRIVER_OPTIONS:
            out[k] = v
    return out


def fingerprint(name: str, options: dict[str, Any] | None = None) -> dict[str, str]:
    """The rules fingerprint of an env with ``options`` (`core.fingerprint`): short
    SHA-256s of its game options, actions, rule tables, observation layout and sample
    games, and their digest; checkpoints carry it."""
    from .core.fingerprint import fingerprint as compute

    return compute(name, options)


__all__ = [
    "VARIANTS",
    "GameRecord",
    "IllegalActionError",
    "fingerprint",
    "game_options",
    "make",
    "module",
    "names",
    "record",
    "records",
]
