"""Agents named by spec strings: ``random``, ``heuristic``,
``heuristic:-win_cheaply``, ….

``make(spec, env_name)`` builds one; `parlour.agents.spec` parses the strings
(`AgentSpec`) and holds the table of kinds. A heuristic spec may switch the bot's
options (the seed's strategy tips) on with ``+name`` or off with ``-name``,
comma-separated.
``pretrained`` is the game's shipped checkpoint for its options
(``parlour/models/<name>/``, loaded as ``ckpt:`` loads it;
`parlour.training.pretrained`), refused with one line for an env without one or for
options none was trained for; ``pretrained:NAME`` is the shipped model ``NAME``
(``parlour list`` names them); ``@sample`` after either samples from its policy;
``@sym`` plays the policy averaged over the renamings of the suits, ``@plain`` the
network alone (otherwise the checkpoint's manifest chooses:
`parlour.agents.checkpoint`).
``expert`` is that network with the game's search at play time
(`parlour.agents.expert`).
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
from .spec import AgentSpec, forms, kinds, parse, parse_switches

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


def make(
    spec: str | AgentSpec, env_name: str, seed: int | None = None, **context: Any
) -> Agent:
    """Build an agent from its spec (a string or an `AgentSpec`) for the env
    ``env_name``.

    ``context`` carries what some agents need (``env_options`` for checkpoint
    agents; ``checkpoints``, PATH -> weights shipped to a Ray worker, which a
    ``ckpt:PATH`` agent plays instead of reading the file). Raises a one-line
    ValueError for a malformed spec or a kind the env has not, naming the env's kinds.
    """
    return parse(spec, env_name).build(env_name, seed, **context)


__all__ = [
    "EXACT_MOVES",
    "EXTRA_AGENTS",
    "HEURISTICS",
    "Agent",
    "AgentSpec",
    "EndgameAgent",
    "RandomAgent",
    "Turn",
    "exact_moves",
    "forms",
    "heuristic_class",
    "heuristic_switches",
    "kinds",
    "make",
    "parse",
    "parse_switches",
]
