"""The timed soak behind ``benchmarks/soak.py --minutes M``: every env, every variant,
every bot kind and the batched engines, round after round until the time is up.

A *task* is one (env, variant, player) triple; the player is a bot kind (`KINDS`
picks a small argument for the kinds that take one) or ``batched``, the env's
batched engine. A round gives each task one unit of work:

* a bot kind plays one game through the full env, in the seat ``game % players``,
  random legal moves in the other seats; every step is checked as the random soak
  checks it (`parlour.envs.core.soak`: masks equal the engine's legal actions,
  observations in their spaces, the engine's ``check_invariants``, rewards adding up
  to the returns and to zero for a zero-sum game, returns within ``utility_bounds``)
  and the bot's move must be legal;
* ``batched`` takes `BATCH_STEPS` random legal steps of `BATCH_SIZE` games, checking
  every step: every game has a legal action and its seat to play, observations are
  finite float32, rewards sum to zero (zero-sum games) and every finished game's
  totals lie within the rules' ``utility_bounds``.

A task that fails is reported once, with the seed that replays it (`play_unit`), and
is not run again; the others go on.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parlour import agents, envs
from parlour.agents.base import Turn
from parlour.agents.spec import forms
from parlour.envs import batch
from parlour.envs.core.soak import DEFAULT_MAX_STEPS, _bounds, _play_one

#: the spec each kind is soaked as (a small argument where it takes one); forms not
#: here (``ckpt:PATH``, which ``pretrained`` covers, ``text:scripted``, the heuristic's
#: switches) are left out
KINDS = {
    "random": "random",
    "heuristic": "heuristic",
    "solver": "solver",
    "pimc:N": "pimc:2",
    "optimal": "optimal",
    "threshold:N": "threshold:12",
    "endgame:SPEC": "endgame:heuristic",
    "pretrained": "pretrained",
}
BATCHED = "batched"
BATCH_SIZE = 64
BATCH_STEPS = 50


@dataclass
class Task:
    """One env variant with one player (a bot spec or ``batched``) and its tally."""

    env: str
    variant: int
    options: dict[str, Any]
    player: str
    units: int = 0
    """games played (for ``batched``: games finished)"""
    checks: int = 0
    """game steps checked (a batched step checks `BATCH_SIZE` of them)"""
    seconds: float = 0.0
    failure: str | None = None
    agent: Any = field(default=None, repr=False)
    engine: Any = field(default=None, repr=False)
    totals: Any = field(default=None, repr=False)


def tasks(env_names: Sequence[str]) -> list[Task]:
    """Every (variant, player) task of the named envs; ``pretrained`` only for the
    variants its shipped checkpoint was trained on (the agent refuses the others)."""
    out = []
    for env in env_names:
        players = [KINDS[f] for f in forms(env) if f in KINDS]
        if env in batch.ENGINES:
            players.append(BATCHED)
        for index, options in enumerate(envs.VARIANTS.get(env, [{}])):
            for player in players:
                if player == "pretrained" and not _shipped_for(env, options):
                    continue
                out.append(Task(env, index, dict(options), player))
    return out


def _shipped_for(env: str, options: dict[str, Any]) -> bool:
    """Whether the env's shipped pretrained agent plays these options."""
    try:
        agents.make("pretrained", env, seed=0, env_options=options)
    except ValueError:
        return False
    return True


def play_unit(task: Task, seed: int, unit: int) -> tuple[int, int]:
    """One unit of ``task`` (a game, or `BATCH_STEPS` batched steps), seeded by
    ``(seed, unit)``; returns (games finished, game steps checked). AssertionError names
    what failed; ``play_unit(Task(...), seed, unit)`` replays it."""
    where = (
        f"{task.env} variant {task.variant} {task.options} {task.player}: "
        f"seed {seed}, unit {unit}"
    )
    seeds = np.random.SeedSequence([seed, unit])
    if task.player == BATCHED:
        return _batched_unit(task, seeds, where)
    env = envs.make(task.env, **task.options)
    game = env.unwrapped.game
    if task.agent is None:
        task.agent = agents.make(
            task.player, task.env, seed=seed, env_options=task.options
        )
    task.agent.reset(seed=int(seeds.generate_state(1)[0]))
    own = unit % game.num_players

    def choose(env: Any, seat: int, rng: np.random.Generator) -> int:
        obs = env.observe(env.agent_selection)
        if seat != own:
            legal = np.flatnonzero(obs["action_mask"])
            return int(legal[rng.integers(len(legal))])
        raw = env.unwrapped
        turn = Turn(
            raw.game, raw.game_state, seat, obs["observation"], obs["action_mask"]
        )
        return task.agent.act(turn)

    bound = getattr(game, "max_game_length", DEFAULT_MAX_STEPS)
    zero_sum = bool(getattr(game, "zero_sum", True))
    steps, _ = _play_one(env, seeds, bound, where, zero_sum, choose)
    return 1, steps


def _batched_unit(
    task: Task, seeds: np.random.SeedSequence, where: str
) -> tuple[int, int]:
    """`BATCH_STEPS` random legal steps of the batched engine, every one checked."""
    import torch

    engine = batch.make(task.env, BATCH_SIZE, **task.options)
    engine.reset(seed=int(seeds.generate_state(1)[0]))
    generator = torch.Generator().manual_seed(int(seeds.generate_state(2)[1]))
    rules = engine.rules
    low, high = _bounds(rules)
    zero_sum = bool(getattr(rules, "zero_sum", True))
    totals = torch.zeros(BATCH_SIZE, engine.num_players, dtype=torch.float64)
    finished = 0
    for step in range(BATCH_STEPS):
        at = f"{where}, batch step {step}"
        mask = engine.legal_mask()
        if mask.shape != (BATCH_SIZE, engine.num_actions) or mask.dtype != torch.bool:
            raise AssertionError(
                f"{at}: legal_mask is {mask.dtype} {tuple(mask.shape)}"
            )
        stuck = torch.nonzero(~mask.any(dim=1)).flatten()
        if len(stuck):
            raise AssertionError(f"{at}: games {stuck.tolist()} have no legal action")
        seats = engine.to_play
        if bool(((seats < 0) | (seats >= engine.num_players)).any()):
            raise AssertionError(f"{at}: a seat to play outside 0..players-1")
        obs = engine.observe()
        if obs.dtype != torch.float32 or not bool(torch.isfinite(obs).all()):
            raise AssertionError(f"{at}: observations not finite float32")
        actions = torch.multinomial(mask.float(), 1, generator=generator).squeeze(1)
        rewards, terminated = engine.step(actions)
        if zero_sum and bool((rewards.sum(dim=1).abs() > 1e-5).any()):
            raise AssertionError(f"{at}: rewards do not sum to 0")
        totals += rewards.double()
        done = totals[terminated]
        if bool(((done < low - 1e-5) | (done > high + 1e-5)).any()):
            raise AssertionError(
                f"{at}: finished games' returns {done.tolist()} outside the utility "
                f"bounds [{low}, {high}]"
            )
        totals[terminated] = 0.0
        finished += int(terminated.sum())
    return finished, BATCH_STEPS * BATCH_SIZE


def run(
    env_names: Sequence[str], minutes: float, seed: int, progress: bool
) -> list[Task]:
    """Round after round of every task until ``minutes`` are up (every task plays at
    least once); returns the tasks with their tallies and failures."""
    from parlour.progress import progress_bar

    todo = tasks(env_names)
    budget = minutes * 60.0
    start = time.monotonic()
    unit = 0
    with progress_bar(
        total=round(budget), unit="s", desc="soak", disable=not progress
    ) as bar:
        while True:
            for task in todo:
                if task.failure is not None:
                    continue
                t = time.perf_counter()
                try:
                    games, checks = play_unit(task, seed, unit)
                except AssertionError as err:
                    task.failure = str(err)
                    games = checks = 0
                except Exception as err:  # a bot or engine crash is a failure too
                    task.failure = f"{task.player} seed {seed}, unit {unit}: {err!r}"
                    games = checks = 0
                task.seconds += time.perf_counter() - t
                task.units += games
                task.checks += checks
                elapsed = time.monotonic() - start
                bar.update(min(round(elapsed), bar.total) - bar.n)
                if elapsed >= budget and unit > 0:
                    return todo
            unit += 1
            bar.set_postfix_str(f"round {unit}", refresh=False)
            if time.monotonic() - start >= budget:
                return todo


def summary(tasks_: list[Task], seed: int) -> str:
    """The table: games and checks per env x player, then every failure."""
    by: dict[tuple[str, str], list[int | float]] = {}
    for t in tasks_:
        row = by.setdefault((t.env, t.player), [0, 0, 0, 0.0])
        row[0] += t.units
        row[1] += t.checks
        row[2] += t.failure is not None
        row[3] += t.seconds
    head = ("env", "player", "games", "steps checked", "failures", "seconds")
    rows = [head] + [
        (env, player, str(g), str(c), str(f), f"{s:.1f}")
        for (env, player), (g, c, f, s) in sorted(by.items())
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    total = sum(t.checks for t in tasks_)
    games = sum(t.units for t in tasks_)
    failed = [t for t in tasks_ if t.failure is not None]
    lines.append(
        f"{len(tasks_)} tasks, {games} games, {total} checked steps, "
        f"{len(failed)} failures (soak seed {seed})"
    )
    for t in failed:
        lines.append(
            f"FAILED {t.env} variant {t.variant} {t.options} {t.player}: {t.failure}"
        )
    return "\n".join(lines)


__all__ = ["BATCHED", "KINDS", "Task", "play_unit", "run", "summary", "tasks"]
