"""Random-play soak testing for any registered env (after OpenSpiel's RandomSimTest).

`soak` plays random legal games through the full ``parlour.envs.make(...)`` env
(PettingZoo wrappers included) and checks, at every step:

* the action mask of the acting seat equals the engine's ``legal_actions``, and the
  mask of every other seat is all zeros;
* every seat's observation lies in its observation space, is float32 and finite;
* the engine's ``check_invariants`` holds (cards conserved, counts consistent, …);
* the episode's rewards add up to the engine's ``returns``; for a zero-sum game the
  rewards of every step sum to zero, and so do the totals. Games are taken to be
  zero-sum: a game (or variant) that is not says so with a ``zero_sum = False``
  attribute on its `Game`, and ``soak(..., zero_sum=…)`` overrides both;
* the final returns lie within the game's ``utility_bounds`` (where it declares
  them);
* the episode ends within a bound: ``max_steps``, else the game's
  ``max_game_length``, else `DEFAULT_MAX_STEPS`.

A failure raises AssertionError naming the env, options, soak seed, game and step;
``soak(env, options, games=g + 1, seed=s)`` replays up to the failing game ``g``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from tqdm import tqdm

from .. import make

DEFAULT_MAX_STEPS = 100_000


def soak(
    env_name: str,
    options: Mapping[str, Any],
    games: int,
    seed: int,
    progress: bool = False,
    max_steps: int | None = None,
    zero_sum: bool | None = None,
) -> dict[str, Any]:
    """Play ``games`` random legal games of ``env_name`` with ``options``, checking
    every step (see the module docstring); AssertionError at the first failed check.

    Game ``g`` is seeded from ``(seed, g)``. Returns a dict: ``games``, ``steps``,
    ``wins`` (per seat: games where the seat had the best total, partners sharing a
    win), ``draws`` (all totals equal), ``mean_length`` and ``max_length`` in steps,
    and ``seconds``. ``progress`` shows a tqdm bar.
    """
    if isinstance(games, bool) or not isinstance(games, int) or games < 0:
        raise ValueError(f"games must be a non-negative integer, got {games!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    env = make(env_name, **options)
    raw = env.unwrapped
    game = raw.game
    bound = max_steps or getattr(game, "max_game_length", DEFAULT_MAX_STEPS)
    if zero_sum is None:
        zero_sum = bool(getattr(game, "zero_sum", True))
    n = game.num_players
    wins = [0] * n
    draws = total_steps = longest = 0
    label = f"{env_name} {dict(options)}"
    start = time.perf_counter()
    for g in tqdm(range(games), desc=label, unit="game", disable=not progress):
        where = f"{label} soak seed {seed}, game {g}"
        steps, totals = _play_one(
            env, np.random.SeedSequence([seed, g]), bound, where, zero_sum
        )
        total_steps += steps
        longest = max(longest, steps)
        best = max(totals)
        if best == min(totals):
            draws += 1
        else:  # every seat with the best total wins (partners share a win)
            for i, total in enumerate(totals):
                wins[i] += total == best
    return {
        "env": env_name,
        "options": dict(options),
        "games": games,
        "steps": total_steps,
        "wins": wins,
        "draws": draws,
        "mean_length": total_steps / games if games else 0.0,
        "max_length": longest,
        "seconds": time.perf_counter() - start,
    }


def _play_one(
    env: Any,
    seeds: np.random.SeedSequence,
    bound: int,
    where: str,
    zero_sum: bool,
    choose: Callable[[Any, int, np.random.Generator], int] | None = None,
) -> tuple[int, list[float]]:
    """One checked game: its number of steps and each seat's total reward. The moves
    are random legal ones, or ``choose(env, seat, rng)``'s (checked to be legal)."""
    raw = env.unwrapped
    game = raw.game
    agents = raw.possible_agents
    env.reset(seed=int(seeds.generate_state(1)[0]))
    rng = np.random.default_rng(seeds)
    totals = [0.0] * len(agents)
    steps = 0
    _check_step(env, where, steps)
    while not all(raw.terminations[a] for a in agents):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        if choose is None:
            action = int(legal[rng.integers(len(legal))])
        else:
            seat = raw.possible_agents.index(env.agent_selection)
            action = int(choose(env, seat, rng))
            if action not in legal:
                raise AssertionError(
                    f"{where}, step {steps}: seat {seat} chose {action}, not one of "
                    f"the legal {legal.tolist()}"
                )
        env.step(action)
        steps += 1
        rewards = [raw.rewards[a] for a in agents]
        if zero_sum and abs(sum(rewards)) > 1e-9:
            raise AssertionError(
                f"{where}, step {steps}: rewards {rewards} do not sum to 0"
            )
        totals = [t + r for t, r in zip(totals, rewards, strict=True)]
        _check_step(env, where, steps)
        if steps > bound:
            raise AssertionError(f"{where}: no end after {bound} steps")
    if not game.is_terminal(raw.game_state):
        raise AssertionError(f"{where}: all agents terminated, the engine plays on")
    returns = [float(r) for r in game.returns(raw.game_state)]
    if not np.allclose(totals, returns):
        raise AssertionError(
            f"{where}: rewards add up to {totals}, the engine returns {returns}"
        )
    if zero_sum and abs(sum(totals)) > 1e-9:
        raise AssertionError(f"{where}: final returns {totals} do not sum to 0")
    low, high = _bounds(game)
    if not all(low - 1e-9 <= t <= high + 1e-9 for t in totals):
        raise AssertionError(
            f"{where}: final returns {totals} outside the utility bounds "
            f"[{low}, {high}]"
        )
    return steps, totals


def _bounds(game: Any) -> tuple[float, float]:
    """The game's declared utility bounds (unbounded when it declares none)."""
    try:
        return game.utility_bounds()
    except ValueError:
        return -np.inf, np.inf


def _check_step(env: Any, where: str, step: int) -> None:
    """Masks against the engine, observations against their spaces, the invariants."""
    raw = env.unwrapped
    game, state = raw.game, raw.game_state
    actor = game.current_player(state)
    for seat, agent in enumerate(raw.possible_agents):
        obs = env.observe(agent)
        vec, mask = obs["observation"], obs["action_mask"]
        if vec.dtype != np.float32 or not np.isfinite(vec).all():
            raise AssertionError(
                f"{where}, step {step}: {agent}'s observation is not finite "
                f"float32 (dtype {vec.dtype})"
            )
        if not env.observation_space(agent).contains(obs):
            raise AssertionError(
                f"{where}, step {step}: {agent}'s observation is outside "
                "its observation space"
            )
        legal = np.flatnonzero(mask).tolist()
        expected = game.legal_actions(state) if seat == actor else []
        if legal != expected:
            raise AssertionError(
                f"{where}, step {step}: {agent}'s mask allows {legal}, the "
                f"engine {expected}"
            )
    try:
        game.check_invariants(state)
    except AssertionError as err:
        raise AssertionError(f"{where}, step {step}: {err}") from None


__all__ = ["DEFAULT_MAX_STEPS", "soak"]
