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
    "forty_fives_v0": "parlour.envs.forty_fives",
    "herzeln_v0": "parlour.envs.herzeln",
    "fuenfzehnern_v0": "parlour.envs.fuenfzehnern",
    "fuenfzehn_tot_v0": "parlour.envs.fuenfzehn_tot",
}

#: every variant of every env, as (name, options): the generic tests run over these.
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "forty_fives_v0": [
        {"players": 4},
        {"players": 2, "variant": "twenty_five"},
        {"players": 3, "episode": "deal", "void_must_trump": False},
        {"players": 6, "episode": "deal", "packets": "2+3"},
        {"players": 4, "variant": "auction", "episode": "deal"},
        {"players": 6, "variant": "auction", "episode": "deal", "bidder_leads": False},
        {"players": 2, "variant": "one_ten", "target": 30, "max_deals": 3},
    ],
    "fuenfzehn_tot_v0": [
        {"players": 2},
        {"players": 4, "matches": 5, "auto_forced_moves": True, "zero_sum": False},
        {
            "players": 5,
            "matches": 3,
            "auto_stand_at_15_half1": True,
            "half2_bust": "ends_round",
            "all_bust": "next_starter",
        },
        {"players": 6, "matches": 2},
        {"players": 3, "matches": 4, "rule1": False, "rule2": False},
    ],
    "herzeln_v0": [
        {"players": 4},
        {"players": 3, "contract": "no_hearts"},
        {"players": 3, "contract": "domino"},
        {"players": 4, "contract": "domino", "domino_layout": "per_suit_rows"},
        {"players": 4, "contract": "king_of_hearts", "early_end": True},
    ],
    "german_whist_v0": [
        {"variant": "german"},
        {"variant": "honeymoon", "episode": "deal"},
        {"variant": "honeymoon", "episode": "match"},
    ],
    "fuenfzehnern_v0": [
        {"players": 4},
        {"players": 3, "removed_suit": "S", "lead_rules": "relaxed"},
        {
            "lead_rules": "relaxed",
            "tying_scoring": True,
            "episode": "match",
            "num_hands": 2,
        },
        {"players": 3, "unbeatable_duty_on_first_suit": False, "episode": "match"},
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


__all__ = ["VARIANTS", "IllegalActionError", "game_options", "make", "module", "names"]
