"""Agents named by spec strings: ``random``, ``heuristic``,
``heuristic:-win_cheaply``, ….

``make(spec, env_name)`` builds one. A heuristic spec may switch the bot's options (the
seed's strategy tips) on with ``+name`` or off with ``-name``, comma-separated.
``endgame:SPEC`` is the agent ``SPEC`` corrected by the game's exact solver where it can
value the position (`EndgameAgent`). ``text:scripted`` is the scripted text player of
`parlour.text` (prompts in, answers out, sometimes malformed).
"""

from __future__ import annotations

import importlib
from typing import Any

from .base import Agent, EndgameAgent, RandomAgent, Turn

# env name -> "module:Class" of its heuristic bot
HEURISTICS = {
    "german_whist_v0": "parlour.agents.german_whist:GermanWhistHeuristic",
    "forty_fives_v0": "parlour.agents.forty_fives:FortyFivesHeuristic",
    "fuenfzehnern_v0": "parlour.agents.fuenfzehnern:FuenfzehnernHeuristic",
    "herzeln_v0": "parlour.agents.herzeln:HerzelnHeuristic",
    "fuenfzehn_tot_v0": "parlour.agents.fuenfzehn_tot:OptimalAgent",
}

# env name -> "module:function" for its other agent kinds: function(kind, arg, seed)
# returns an Agent or raises ValueError naming the kinds it knows (make() asks last).
EXTRA_AGENTS = {
    "fuenfzehn_tot_v0": "parlour.agents.fuenfzehn_tot:make_agent",
    "german_whist_v0": "parlour.agents.solver.german_whist:make_agent",
    "forty_fives_v0": "parlour.agents.solver.forty_fives:make_agent",
    "fuenfzehnern_v0": "parlour.agents.solver.fuenfzehnern:make_agent",
    "herzeln_v0": "parlour.agents.solver.herzeln:make_agent",
}

# env name -> "module:function" giving, for positions an exact solver can value, every
# optimal action: function(game, state) -> list of action ids, or None where the solver
# knows nothing exact. The imitation warm start labels those positions with the set.
EXACT_MOVES = {
    "german_whist_v0": "parlour.agents.solver.german_whist:optimal_moves",
}


def exact_moves(env_name: str) -> Any:
    """The env's `EXACT_MOVES` function; ValueError if it has none."""
    if env_name not in EXACT_MOVES:
        raise ValueError(
            f"no exact solver labels for {env_name!r}; "
            f"envs that have them: {sorted(EXACT_MOVES)}"
        )
    mod, fn = EXACT_MOVES[env_name].split(":")
    return getattr(importlib.import_module(mod), fn)


def heuristic_class(env_name: str) -> type[Agent]:
    """The heuristic bot class of an env."""
    if env_name not in HEURISTICS:
        raise ValueError(f"no heuristic bot for {env_name!r} yet")
    mod, cls = HEURISTICS[env_name].split(":")
    return getattr(importlib.import_module(mod), cls)


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

    ``context`` carries what some agents need (e.g. ``env_options`` for checkpoint
    agents). Raises ValueError with the accepted forms for an unknown spec.
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
    if env_name in EXTRA_AGENTS:
        mod, fn = EXTRA_AGENTS[env_name].split(":")
        return getattr(importlib.import_module(mod), fn)(kind, arg, seed)
    raise ValueError(
        f"unknown agent spec {spec!r}; use random, heuristic, heuristic:-tip,+tip "
        "or ckpt:PATH"
    )


__all__ = [
    "EXACT_MOVES",
    "HEURISTICS",
    "Agent",
    "EndgameAgent",
    "RandomAgent",
    "Turn",
    "exact_moves",
    "heuristic_class",
    "make",
    "parse_switches",
]
