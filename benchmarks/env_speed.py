"""How fast random legal play runs through Parlour's envs, and against what.

One run measures each row for ``--seconds`` of CPU time, ``--repeats`` times (the rows
taking turns), and keeps each row's fastest run:

* every game (``ENV_ROWS``: both German Whist variants and one setting of each other
  game) through ``parlour.envs.make`` (PettingZoo wrappers included), in PettingZoo's
  ``agent_iter`` loop: ``env.last()`` (observation and mask every step), a random legal
  action from the mask, ``env.step`` (``None`` for the finished agents' dead steps at
  the end, as the loop requires). Steps count every ``step`` call; a game is an episode
  (a whole match for Honeymoon's default).
* the same game's raw engine: ``new_state``, ``sample_chance`` at chance nodes,
  ``legal_actions`` and ``apply``; it counts decision actions (the deal is in the time).
* the framework floor: a trivial 2-player AEC env (``Discrete(52)``, a small float32
  vector and an int8 mask, 26 moves a game) behind the same wrapper as ours
  (`parlour.envs.core.aec.wrap`), in the same loop. No env can be faster than this.
  For comparison only, the same env behind PettingZoo's stock
  ``OrderEnforcingWrapper`` (``floor-stock``): what the API costs wrapped the usual
  way.
* PettingZoo's OpenSpiel-backed skat and spades through shimmy's
  ``OpenSpielCompatibilityV0`` in the same loop, when ``open_spiel`` and ``shimmy`` are
  importable (``pip install -e ".[bench]"``); otherwise those rows are skipped, with a
  note saying why.

It prints one table (steps/s, games/s, ratios to the floor and to shimmy's skat, engine
actions/s) and checks every game's speed targets. Rates are per CPU second of this
process, so other work on a shared machine disturbs them less than wall-clock rates. A
benchmark is not a test: a MISS on a slow or busy machine is reported, never raised.

    python benchmarks/env_speed.py                     # everything, 2 s x 3 per row
    python benchmarks/env_speed.py --seconds 0.5 --repeats 1 --envs floor german
    python benchmarks/env_speed.py --json speed.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

import numpy as np
import pettingzoo
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from tqdm import tqdm

from parlour import envs
from parlour.envs.core.aec import wrap
from parlour.envs.core.engine import CHANCE, TERMINAL, Game

# --- targets (every game; set for German Whist on the project's 2-core machine) ---
MIN_VS_FLOOR = 0.5  # wrapped env steps/s at least half the trivial env's
MIN_VS_SKAT = 5.0  # and five times shimmy's OpenSpiel skat
MIN_ENGINE = 50_000  # engine decision actions/s

#: row name -> (env name, options): one row per game (two for German Whist), each also
#: measured as a raw engine ("engine-<row>"); every game has the same targets.
ENV_ROWS: dict[str, tuple[str, dict[str, Any]]] = {
    "german": ("german_whist_v0", {"variant": "german"}),
    "honeymoon": ("german_whist_v0", {"variant": "honeymoon"}),
    "forty_fives": ("forty_fives_v0", {"players": 4}),
    "fuenfzehnern": ("fuenfzehnern_v0", {"players": 4}),
    "herzeln": ("herzeln_v0", {"players": 4}),
    "fuenfzehn_tot": ("fuenfzehn_tot_v0", {"players": 4}),
}
VARIANTS = tuple(ENV_ROWS)
SHIMMY_GAMES = ("skat", "spades")
ROWS = (
    "floor",
    "floor-stock",
    *VARIANTS,
    *(f"engine-{v}" for v in VARIANTS),
    *SHIMMY_GAMES,
)


def _row_label(row: str) -> str:
    name, options = ENV_ROWS[row]
    opts = ",".join(f"{k}={v}" for k, v in options.items())
    return f"{name} {opts}"


NOTES = (
    "Env rows count every env.step call (dead steps included); engine rows count",
    "decision actions, the deal's chance outcomes being in the time, not the count.",
    "x floor: against the trivial env behind our wrapper (the target's floor);",
    "x stock: against it behind PettingZoo's stock OrderEnforcingWrapper (no target).",
)
SHIMMY_NOTE = (
    "shimmy truncates OpenSpiel skat and spades right after the bidding: its",
    "game_length counts chance nodes (the deal), OpenSpiel's max_game_length() does",
    "not. Its games are short; steps/s of full games measured within 10% of these.",
)


@dataclass
class Result:
    """One measured row: ``steps`` are env ``step`` calls (decision actions for an
    engine row), ``seconds`` CPU seconds."""

    row: str
    label: str
    kind: str  # "env" or "engine"
    steps: int = 0
    games: int = 0
    seconds: float = 0.0
    skipped: str = ""  # why the row was not measured, if it was not

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds if self.seconds else 0.0

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds if self.seconds else 0.0


# --- the framework floor ------------------------------------------------------------
class FloorEnv(AECEnv):
    """The least a 2-player, 52-action card env can do in PettingZoo's AEC API.

    Players alternate for 26 moves; a move removes its action from a shared mask (like
    a card leaving the table). The observation is a fresh small float32 vector and int8
    mask per call, as any env must hand out arrays the caller may keep. Player 0 gets +1
    at the end. It checks nothing: it costs the API and the wrapper, not a game.
    """

    metadata = {"name": "floor_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, num_actions: int = 52, length: int = 26, obs_size: int = 8):
        super().__init__()
        self.num_actions, self.length, self.obs_size = num_actions, length, obs_size
        self.possible_agents = ["player_0", "player_1"]
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (obs_size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (num_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {
            a: spaces.Discrete(num_actions) for a in self.possible_agents
        }

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = "player_0"
        self._left = np.ones(self.num_actions, dtype=np.int8)
        self._moves = 0

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = np.zeros(self.obs_size, dtype=np.float32)
        obs[0] = self._moves / self.length
        if agent == self.agent_selection and not self.terminations[agent]:
            mask = self._left.copy()
        else:
            mask = np.zeros(self.num_actions, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._left[action] = 0
        self._moves += 1
        if self._moves == self.length:
            self.rewards = {"player_0": 1.0, "player_1": -1.0}
            self.terminations = {a: True for a in self.agents}
        else:
            self.agent_selection = "player_1" if agent == "player_0" else "player_0"
        self._accumulate_rewards()


# --- measurement loops -------------------------------------------------------------
def _mask_in_obs(obs: Any, info: dict) -> np.ndarray:
    return obs["action_mask"]


def _mask_in_info(obs: Any, info: dict) -> np.ndarray:
    return info["action_mask"]  # shimmy puts the mask in the infos


class _Budget:
    """A row's CPU-time budget, reporting progress every 0.1 s between games."""

    def __init__(self, seconds: float, progress: Callable[[float], None] | None):
        self.seconds, self.progress = seconds, progress
        self.start = self.last_report = time.process_time()

    def spent(self) -> float | None:
        """After a game: the CPU seconds used once the budget is, else None."""
        now = time.process_time()
        if self.progress is not None and now - self.last_report > 0.1:
            self.progress(now - self.last_report)
            self.last_report = now
        return now - self.start if now - self.start >= self.seconds else None


def play_games(
    env: AECEnv,
    seconds: float,
    seed: int,
    get_mask: Callable[[Any, dict], np.ndarray] = _mask_in_obs,
    progress: Callable[[float], None] | None = None,
) -> tuple[int, int, float]:
    """Random legal play in PettingZoo's agent_iter loop for ``seconds`` of CPU time;
    returns (steps, games, CPU seconds)."""
    pick = random.Random(seed)
    steps = games = 0
    env.reset(seed=seed)  # seed once; later resets continue the env's generator
    budget = _Budget(seconds, progress)
    while True:
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None  # a finished agent's dead step
            else:
                legal = np.flatnonzero(get_mask(obs, info))
                action = int(legal[pick.randrange(len(legal))])
            env.step(action)
            steps += 1
        games += 1
        if (spent := budget.spent()) is not None:
            return steps, games, spent
        env.reset()


def play_engine(
    game: Game,
    seconds: float,
    seed: int,
    progress: Callable[[float], None] | None = None,
) -> tuple[int, int, float]:
    """Random legal play on the raw engine for ``seconds`` of CPU time; returns
    (decision actions, games, CPU seconds)."""
    pick = random.Random(seed)
    rng = np.random.default_rng(seed)
    actions = games = 0
    budget = _Budget(seconds, progress)
    while True:
        state = game.new_state()
        while True:
            player = game.current_player(state)
            if player == CHANCE:
                # sample_chance may return several outcomes that follow each other
                for outcome in game.sample_chance(state, rng):
                    game.apply(state, outcome)
            elif player == TERMINAL:
                break
            else:
                legal = game.legal_actions(state)
                game.apply(state, legal[pick.randrange(len(legal))])
                actions += 1
        games += 1
        if (spent := budget.spent()) is not None:
            return actions, games, spent


def _floor_env() -> AECEnv:
    return wrap(FloorEnv())


def _stock_floor_env() -> AECEnv:
    """The floor behind PettingZoo's own ``OrderEnforcingWrapper``, whose attribute
    reads go through ``__getattr__``: what an env wrapped the usual PettingZoo way
    pays for the API alone (for comparison; no target uses it)."""
    return wrappers.OrderEnforcingWrapper(FloorEnv())


def _shimmy_env(game_name: str) -> AECEnv:
    from shimmy import OpenSpielCompatibilityV0  # imports pyspiel too

    return OpenSpielCompatibilityV0(game_name=game_name)


def shimmy_missing() -> str:
    """Why the shimmy rows cannot run here, or "" when they can."""
    try:
        import pyspiel  # noqa: F401
        from shimmy import OpenSpielCompatibilityV0  # noqa: F401
    except ImportError as err:
        return f"open_spiel/shimmy not importable ({err}); pip install -e '.[bench]'"
    return ""


Runner = Callable[[float, int, Callable[[float], None] | None], tuple[int, int, float]]


def prepare(row: str, seed: int) -> tuple[Result, Runner | None]:
    """The empty result of ``row`` and a warmed-up function that measures it once, or
    None (with ``result.skipped`` saying why) when the row cannot run here."""
    if row == "floor":
        result = Result(row, "floor: trivial AEC env, wrapped", "env")
        make_env: Callable[[], AECEnv] = _floor_env
    elif row == "floor-stock":
        result = Result(row, "floor, PettingZoo's stock OrderEnforcingWrapper", "env")
        make_env = _stock_floor_env
    elif row in VARIANTS:
        result = Result(row, f"{_row_label(row)}, wrapped", "env")
        name, options = ENV_ROWS[row]
        make_env = partial(envs.make, name, **options)
    elif row in SHIMMY_GAMES:
        result = Result(row, f"shimmy OpenSpiel {row}", "env")
        result.skipped = shimmy_missing()
        if result.skipped:
            return result, None
        make_env = partial(_shimmy_env, row)
    else:
        variant = row.removeprefix("engine-")
        result = Result(row, f"engine {_row_label(variant)} (actions/s)", "engine")
        name, options = ENV_ROWS[variant]
        game = envs.make(name, raw=True, **options).game
        play_engine(game, 0.05, seed)  # warm up caches and first-call paths
        return result, partial(play_engine, game)
    try:
        env = make_env()
    except Exception as err:  # e.g. an OpenSpiel build without this game
        if row not in SHIMMY_GAMES:
            raise
        result.skipped = f"cannot load {row} through shimmy: {err}"
        return result, None
    get_mask = _mask_in_info if row in SHIMMY_GAMES else _mask_in_obs
    play_games(env, 0.05, seed, get_mask)
    return result, lambda seconds, seed, progress: play_games(
        env, seconds, seed, get_mask, progress
    )


def measure_all(
    rows: list[str], seconds: float, repeats: int, seed: int
) -> dict[str, Result]:
    """Measure every row ``repeats`` times and keep each row's fastest run (the least
    disturbed). Rows take turns within each round, so a change in the machine's load
    affects them alike and the ratios between them stay fair."""
    prepared = {row: prepare(row, seed) for row in rows}
    runnable = [row for row, (_, run) in prepared.items() if run is not None]
    with tqdm(
        total=round(seconds * repeats * len(runnable), 1),
        unit="s",
        bar_format="{bar:30} {n:.0f}/{total:.0f} CPU-s {postfix}",
        file=sys.stderr,
        disable=None,  # a bar on a terminal only, not in logs
    ) as bar:
        for rep in range(repeats):
            if bar.disable:  # in a log: one short line per round instead
                print(f"round {rep + 1}/{repeats}", file=sys.stderr, flush=True)
            for row in runnable:
                result, run = prepared[row]
                bar.set_postfix_str(f"round {rep + 1}/{repeats}: {row}")
                steps, games, spent = run(seconds, seed + rep, bar.update)
                if steps / spent > result.steps_per_s:
                    result.steps, result.games, result.seconds = steps, games, spent
    return {row: result for row, (result, _) in prepared.items()}


# --- report --------------------------------------------------------------------------
def _fmt(value: float | None, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def check_targets(results: dict[str, Result]) -> list[dict[str, Any]]:
    """Each game's targets against the measured rows; verdict PASS, MISS or SKIP."""
    checks = []

    def rate(row: str) -> float | None:
        r = results.get(row)
        return r.steps_per_s if r is not None and not r.skipped else None

    for variant in VARIANTS:
        env_rate = rate(variant)
        for what, base, need in (
            ("wrapped / floor", rate("floor"), MIN_VS_FLOOR),
            ("wrapped / shimmy skat", rate("skat"), MIN_VS_SKAT),
        ):
            value = env_rate / base if env_rate is not None and base else None
            checks.append(
                {
                    "target": f"{variant}: {what}",
                    "value": value,
                    "need": need,
                    "unit": "x",
                    "verdict": _verdict(value, need),
                }
            )
        engine = rate(f"engine-{variant}")
        checks.append(
            {
                "target": f"{variant}: engine actions/s",
                "value": engine,
                "need": MIN_ENGINE,
                "unit": "/s",
                "verdict": _verdict(engine, MIN_ENGINE),
            }
        )
    return checks


def _verdict(value: float | None, need: float) -> str:
    if value is None:
        return "SKIP"
    return "PASS" if value >= need else "MISS"


def table(results: dict[str, Result], checks: list[dict[str, Any]]) -> str:
    """The results and target checks as a fixed-width text table."""

    def rate(row: str) -> float | None:
        r = results.get(row)
        return r.steps_per_s if r is not None and not r.skipped else None

    floor_rate, stock_rate, skat_rate = rate("floor"), rate("floor-stock"), rate("skat")
    head = (
        f"{'row':<58}{'steps/s':>10}{'games/s':>10}{'steps/game':>12}"
        f"{'x floor':>9}{'x stock':>9}{'x skat':>8}"
    )
    lines = [head, "-" * len(head)]
    for r in results.values():
        if r.skipped:
            lines.append(f"{r.label:<58}  skipped: {r.skipped}")
            continue
        per_game = r.steps / r.games if r.games else None
        is_env = r.kind == "env"
        vs_floor = r.steps_per_s / floor_rate if is_env and floor_rate else None
        vs_stock = r.steps_per_s / stock_rate if is_env and stock_rate else None
        vs_skat = r.steps_per_s / skat_rate if is_env and skat_rate else None
        lines.append(
            f"{r.label:<58}{_fmt(r.steps_per_s):>10}{_fmt(r.games_per_s):>10}"
            f"{_fmt(per_game, '.1f'):>12}{_fmt(vs_floor, '.2f'):>9}"
            f"{_fmt(vs_stock, '.2f'):>9}{_fmt(vs_skat, '.2f'):>8}"
        )
    lines.append("")
    lines.append(f"{'target':<40}{'measured':>12}{'need':>13}  result")
    for c in checks:
        value = "-"
        if c["value"] is not None:
            # Rounded down: a MISS must never show the target (4.996x as 5.00x).
            shown = (
                math.floor(c["value"] * 100) / 100 if c["unit"] == "x" else c["value"]
            )
            value = _fmt(shown, ".2f" if c["unit"] == "x" else ",.0f") + c["unit"]
        need = ">=" + _fmt(c["need"], ".1f" if c["unit"] == "x" else ",.0f") + c["unit"]
        lines.append(f"{c['target']:<40}{value:>12}{need:>13}  {c['verdict']}")
    lines.extend(NOTES)
    if any(r in SHIMMY_GAMES and not results[r].skipped for r in results):
        lines.extend(SHIMMY_NOTE)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, measure, print the table and optionally write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds",
        type=float,
        default=2.0,
        help="CPU seconds per measurement (default 2)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="measurements per row; the fastest counts (default 3)",
    )
    parser.add_argument(
        "--envs",
        nargs="+",
        choices=ROWS,
        default=list(ROWS),
        metavar="ROW",
        help=f"rows to measure (default all): {' '.join(ROWS)}",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the envs and the random play"
    )
    parser.add_argument(
        "--json", metavar="FILE", help="also write the results as JSON to FILE"
    )
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be positive and --repeats at least 1")

    rows = [row for row in ROWS if row in args.envs]
    results = measure_all(rows, args.seconds, args.repeats, args.seed)
    checks = check_targets(results)
    print(
        f"Python {platform.python_version()}, numpy {np.__version__}, "
        f"pettingzoo {pettingzoo.__version__}, {platform.machine()} with "
        f"{os.cpu_count()} CPUs; best of {args.repeats} x {args.seconds:g} CPU-s a row"
    )
    print(table(results, checks))
    if args.json:
        payload = {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "pettingzoo": pettingzoo.__version__,
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "seconds": args.seconds,
            "repeats": args.repeats,
            "rows": [
                {
                    **asdict(r),
                    "steps_per_s": r.steps_per_s,
                    "games_per_s": r.games_per_s,
                }
                for r in results.values()
            ],
            "targets": checks,
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
