"""Agents named by spec strings: ``random``, ``heuristic``,
``heuristic:-win_cheaply``, ….

``make(spec, env_name)`` builds one. A heuristic spec may switch the bot's options (the
seed's strategy tips) on with ``+name`` or off with ``-name``, comma-separated.
``pretrained`` is the game's shipped checkpoint for its options
(``parlour/models/<name>/``, loaded as ``ckpt:`` loads it;
`parlour.training.pretrained`), refused with one line for an env without one or for
options none was trained for; ``pretrained@sample`` samples from its policy.
``endgame:SPEC`` is the agent ``SPEC`` corrected by the game's exact solver
where it can value the position (`EndgameAgent`). ``text:scripted`` is the scripted
text player of `parlour.text` (prompts in, answers out, sometimes malformed).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from .. import envs
from .base import Agent, EndgameAgent, RandomAgent, Turn

# The per-game agent hooks live in each game's record (`parlour.envs.GameRecord`:
# heuristic, extra_agents, exact_moves); HEURISTICS, EXTRA_AGENTS and EXACT_MOVES
# (env name -> "module:attribute") are views of them, built on first use.
_VIEWS = {
    "HEURISTICS": "heuristic",
    "EXTRA_AGENTS": "extra_agents",
    "EXACT_MOVES": "exact_moves",
}


def __getattr__(attr: str) -> Any:
    if attr in _VIEWS:
        field = _VIEWS[attr]
        return {r.name: getattr(r, field) for r in envs.records() if getattr(r, field)}
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def _load(hook: str) -> Any:
    mod, attr = hook.split(":")
    return getattr(importlib.import_module(mod), attr)


def exact_moves(env_name: str) -> Any:
    """The env's exact-move function (its record's ``exact_moves``); ValueError if it
    has none."""
    hook = envs.record(env_name).exact_moves if env_name in envs.names() else ""
    if not hook:
        having = sorted(r.name for r in envs.records() if r.exact_moves)
        raise ValueError(
            f"no exact solver labels for {env_name!r}; envs that have them: {having}"
        )
    return _load(hook)


def heuristic_class(env_name: str) -> type[Agent]:
    """The heuristic bot class of an env."""
    hook = envs.record(env_name).heuristic if env_name in envs.names() else ""
    if not hook:
        raise ValueError(f"no heuristic bot for {env_name!r} yet")
    return _load(hook)


def heuristic_switches(env_name: str) -> list[str]:
    """The on/off switches (strategy tips) of an env's heuristic bot, in order."""
    cls = heuristic_class(env_name)
    if hasattr(cls, "SWITCHES"):
        return list(cls.SWITCHES)
    return [
        name
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if p.kind is p.KEYWORD_ONLY and p.default is True
    ]


def parse_switches(text: str) -> dict[str, bool]:
    """``"-win_cheaply,+save_trumps"`` ->
    ``{"win_cheaply": False, "save_trumps": True}``."""
    out: dict[str, bool] = {}
    for token in filter(None, (t.strip() for t in text.split(","))):
        if token[0] not in "+-" or len(token) < 2:
            raise ValueError(
                f"bad switch {token!r}: write +name to turn an option on "
                "or -name to turn it off"
            )
        out[token[1:]] = token[0] == "+"
    return out


def make(spec: str, env_name: str, seed: int | None = None, **context: Any) -> Agent:
    """Build an agent from its spec string for the env ``env_name``.

    ``context`` carries what some agents need (``env_options`` for checkpoint
    agents; ``checkpoints``, PATH -> weights shipped to a Ray worker, which a
    ``ckpt:PATH`` agent plays instead of reading the file). Raises ValueError with
    the accepted forms for an unknown spec.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    kind, _, arg = spec.strip().partition(":")
    if kind == "random":
        if arg:
            raise ValueError("the random agent takes no options")
        return RandomAgent(seed)
    if kind == "heuristic":
        cls = heuristic_class(env_name)
        return cls(seed=seed, **parse_switches(arg))
    if kind == "ckpt":
        from .checkpoint import CheckpointAgent

        path, _, mode = (
            arg.rpartition("@") if arg.endswith("@sample") else (arg, "", "")
        )
        if not path:
            raise ValueError("write ckpt:PATH (a checkpoint or run directory)")
        return CheckpointAgent(
            path,
            env_name,
            context.get("env_options"),
            seed=seed,
            deterministic=mode != "sample",
            # a Ray worker gets the weights, not the file (parlour.training.distributed)
            shipped=(context.get("checkpoints") or {}).get(path),
        )
    if kind in ("pretrained", "pretrained@sample"):
        if arg:
            raise ValueError(
                "pretrained takes no options: it is the game's shipped agent "
                "(pretrained@sample samples from its policy)"
            )
        from ..training import pretrained

        return pretrained.agent(
            env_name,
            context.get("env_options"),
            seed=seed,
            deterministic=kind == "pretrained",
        )
    if kind == "endgame":
        if not arg:
            raise ValueError(
                "write endgame:SPEC, e.g. endgame:ckpt:PATH (SPEC corrected by the "
                "exact solver where it can value the position)"
            )
        return EndgameAgent(
            make(arg, env_name, seed=seed, **context), exact_moves(env_name)
        )
    if kind == "text":
        # Text play (parlour.text): only the scripted test player has a spec; a
        # language model is wrapped in code with parlour.text.TextAgent(ask).
        if arg != "scripted":
            raise ValueError(
                "write text:scripted (the scripted text player); wrap a language "
                "model with parlour.text.TextAgent(ask) in code"
            )
        from ..text import scripted_agent

        return scripted_agent(seed)
    extra = envs.record(env_name).extra_agents if env_name in envs.names() else ""
    if extra:
        return _load(extra)(kind, arg, seed)
    raise ValueError(
        f"unknown agent spec {spec!r}; use random, heuristic, heuristic:-tip,+tip, "
        "pretrained or ckpt:PATH"
    )


__all__ = [
    "EXACT_MOVES",
    "EXTRA_AGENTS",
    "HEURISTICS",
    "Agent",
    "EndgameAgent",
    "RandomAgent",
    "Turn",
    "exact_moves",
    "heuristic_class",
    "heuristic_switches",
    "make",
    "parse_switches",
]
