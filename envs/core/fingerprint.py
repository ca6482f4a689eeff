"""The rules fingerprint: what a trained network depends on, hashed, so that a
checkpoint trained on other rules is refused instead of playing nonsense.

A network trained on one rule variant reads observations in one layout and picks from
one action space; a change of the rules, the options' defaults, the action names or the
observation encoder leaves its weights meaningless even when the sizes still fit.
`fingerprint` hashes each of these into a component (a short SHA-256):

* ``options``: the game options with their defaults (`parlour.envs.game_options`);
* ``actions``: the number of actions and every action's name;
* ``rules``: the engine's constant tables (`Game.rule_tables`: card orders, scoring
  tables, contracts …) and its utility bounds;
* ``observation``: the observation size and the encodings of every decision of a few
  seeded sample games (any change of the layout, named or not, moves them);
* ``play``: those sample games themselves: every decision's seat, legal actions and the
  returns so far, and every chance node's outcomes with their probabilities (a rule
  changed in code rather than in a table moves them);

and ``digest`` hashes the five. Checkpoint manifests carry the fingerprint of the env
they were trained on (`parlour.training.checkpoint`); `changes` and `describe` say
which components differ. The sample games are chosen with Python's ``random.Random``,
whose ``random()`` sequence Python keeps stable across versions, so a fingerprint
depends on the rules alone.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
from collections.abc import Mapping
from typing import Any

import numpy as np

from .engine import CHANCE, TERMINAL, Game

#: component -> what changed when it differs (the refusal's words)
COMPONENTS = {
    "options": "game options changed",
    "actions": "action space changed",
    "rules": "rule tables changed",
    "observation": "observation layout changed",
    "play": "sample games changed (legal moves, chance outcomes or returns)",
}
SAMPLE_GAMES = 2
SAMPLE_DECISIONS = 250  # per game: a few deals of the long matches are enough
HEX = 16  # hex digits kept of each SHA-256


def _sha(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:HEX]


def _samples(game: Game) -> tuple[str, str]:
    """The hashes of the sample games' play and of their observations."""
    play, seen = hashlib.sha256(), hashlib.sha256()
    for seed in range(SAMPLE_GAMES):
        rng = random.Random(seed)
        state = game.new_state()
        decisions = 0
        while decisions < SAMPLE_DECISIONS:
            player = game.current_player(state)
            if player == TERMINAL:
                break
            if player == CHANCE:
                outcomes = sorted(
                    (int(o), float(p)) for o, p in game.chance_outcomes(state)
                )
                play.update(json.dumps(outcomes).encode())
                u = rng.random() * sum(p for _, p in outcomes)
                pick = outcomes[-1][0]
                for outcome, p in outcomes:
                    u -= p
                    if u < 0:
                        pick = outcome
                        break
                game.apply(state, pick)
                continue
            legal = [int(a) for a in game.legal_actions(state)]
            returns = [float(r) for r in game.returns(state)]
            play.update(json.dumps([player, legal, returns]).encode())
            seen.update(np.asarray(game.observe(state, player), dtype="<f4").tobytes())
            game.apply(state, legal[int(rng.random() * len(legal))])
            decisions += 1
        play.update(json.dumps([float(r) for r in game.returns(state)]).encode())
    return play.hexdigest()[:HEX], seen.hexdigest()[:HEX]


def of_game(game: Game, game_options: Mapping[str, Any]) -> dict[str, str]:
    """The fingerprint of an engine built with ``game_options`` (`fingerprint`)."""
    try:
        bounds: list[float] | None = list(game.utility_bounds())
    except ValueError:
        bounds = None
    play, seen = _samples(game)
    out = {
        "options": _sha(dict(game_options)),
        "actions": _sha(
            [game.num_actions, [game.action_name(a) for a in range(game.num_actions)]]
        ),
        "rules": _sha({"tables": game.rule_tables(), "utility_bounds": bounds}),
        "observation": _sha([game.observation_size, seen]),
        "play": play,
    }
    out["digest"] = _sha(out)
    return out


@functools.cache
def _cached(env_name: str, options_json: str) -> tuple[tuple[str, str], ...]:
    from ... import envs

    options = json.loads(options_json)
    game = envs.make(env_name, raw=True, **options).game
    return tuple(of_game(game, options).items())


def fingerprint(
    env_name: str, options: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """The rules fingerprint of an env with ``options`` (its defaults filled in):
    the components of `COMPONENTS` and their ``digest``, each a short SHA-256.
    Computed once per process for each env and options."""
    from ... import envs

    game_options = envs.game_options(env_name, dict(options or {}))
    key = json.dumps(game_options, sort_keys=True)
    return dict(_cached(env_name, key))


def changes(stored: Mapping[str, Any], current: Mapping[str, str]) -> list[str]:
    """The components (`COMPONENTS`) in which two fingerprints differ."""
    return [k for k in COMPONENTS if stored.get(k) != current.get(k)]


def describe(stored: Mapping[str, Any], current: Mapping[str, str]) -> str:
    """What changed between two fingerprints, e.g. ``observation layout changed (was
    1a2b3c4d…, now 5e6f7a8b…)``; empty when nothing did."""
    return "; ".join(
        f"{COMPONENTS[k]} (was {str(stored.get(k))[:8]}…, now {current[k][:8]}…)"
        for k in changes(stored, current)
    )


def check_shape(value: Any) -> str | None:
    """Why ``value`` is not a fingerprint (a dict of every component and the digest,
    each a string), or None when it is one."""
    keys = [*COMPONENTS, "digest"]
    if not isinstance(value, dict):
        return f"expected a mapping of {', '.join(keys)}"
    missing = [k for k in keys if not isinstance(value.get(k), str)]
    if missing:
        return f"no {', '.join(missing)}"
    return None


__all__ = ["COMPONENTS", "changes", "check_shape", "describe", "fingerprint", "of_game"]
