"""One benchmark protocol: ``parlour bench ENV``.

Given an env, a training recipe (a backend and a config: ``--config``/``--preset`` and
``-c key=value`` overrides, passed through unchanged) and a budget of learner steps,
`bench` trains one run per seed and then measures every seed's final agent the same
way (`measure`); ``--agent SPEC`` measures existing agents (bots, ``pretrained``,
``ckpt:PATH``) without training, with the same code. The measures:

* **win share** against ``random``, ``heuristic`` and ``solver`` (where the env has
  one) on fixed held-out duplicate deals (`training.arena.run_arena`);
* the **learned best response** at a fixed budget (`training.exploit.exploit`): its
  win share against the agent on held-out deals (a lower bound on exploitability);
* the **exact yardstick** where the game's record has one (`training.yardsticks`);
* the **rating** against a reference ladder (the env's ``random``, ``heuristic`` and
  ``solver``): the ladder's games among itself and the agent's games against each
  rung, fitted with the league's openskill model (`parlour.league.ratings.fit`);
* wall and CPU seconds of training and of the measurement.

Seeds never overlap (`seed_plan`): training run ``i`` has seed ``seed + i`` and the
best response of that run seed ``BR_SEED_OFFSET + seed + i``; every training run
(the agent's and the best response's) deals env seeds below
`training.selfplay.TRAIN_SEED_LIMIT` (2**31) or from a batched engine's own generator,
while every evaluation, best-response evaluation and rating game plays seeds with the
top bit set (``held_out``), from fixed seeds (`EVAL_SEED`, `RATING_SEED`) that are the
same for every row.
"""

from __future__ import annotations

import dataclasses
import json
import math
import resource
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import agents as agents_mod
from .. import envs, versions
from .arena import play_game, run_arena, teams_of
from .checkpoint import check_output_path, write_json_atomic
from .selfplay import TRAIN_SEED_LIMIT
from .stats import mean_interval

#: the fields every agent meets (``solver`` where the env has one)
FIELDS = ("random", "heuristic", "solver")
#: the fewest training seeds of a benchmark
MIN_SEEDS = 3
#: best-response run seeds start here (training seeds stay below it)
BR_SEED_OFFSET = 1_000_000
#: the arena seed of the held-out evaluation deals (the same for every row)
EVAL_SEED = 2_026
#: the seed of the rating games' held-out deals
RATING_SEED = 2_027
#: the seed of the exact yardstick's games
EXACT_SEED = 2_028


@dataclass(frozen=True)
class Protocol:
    """How much of each measure: games against each field, the best response's
    budget and games, the exact yardstick's games, the rating's deals per table."""

    games: int = 400
    br_steps: int = 20_000
    br_games: int = 400
    exact_games: int = 200
    rating_deals: int = 20
    br_overrides: tuple[str, ...] = ()
    """``key=value`` overrides of the best response's training config"""
    fields: tuple[str, ...] = ()
    """the fields and the rating's ladder; () = `FIELDS` that the env has"""
    executor: str = "local"
    """``ray``: the arena games (win shares, the best response's evaluation)"""

    def check(self) -> None:
        """ValueError (one line) for a count that is not a positive integer."""
        for f in ("games", "br_steps", "br_games", "exact_games", "rating_deals"):
            _positive(f.replace("_", "-"), getattr(self, f))


@dataclass(frozen=True)
class Recipe:
    """How a seed's agent is trained: the backend and the config (file or preset of
    the env, and ``key=value`` overrides, applied last)."""

    backend: str = "sb3"
    config: str | None = None
    preset: str | None = None
    overrides: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The recipe as JSON."""
        return {**dataclasses.asdict(self), "overrides": list(self.overrides)}


def _positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"--{name} must be a positive integer, got {value!r}")


def seed_plan(seed: int, seeds: int) -> dict[str, Any]:
    """The seeds of a benchmark: training runs, best responses, evaluation and
    rating deals (disjoint, see the module docstring)."""
    train = [seed + i for i in range(seeds)]
    return {
        "train": train,
        "best_response": [BR_SEED_OFFSET + s for s in train],
        "evaluation": EVAL_SEED,
        "rating": RATING_SEED,
        "exact": EXACT_SEED,
        "held_out_from": TRAIN_SEED_LIMIT,
    }


def fields_of(env: str, protocol: Protocol | None = None) -> list[str]:
    """The fields of ``env``: the protocol's, else `FIELDS` that it has."""
    if protocol is not None and protocol.fields:
        return list(protocol.fields)
    return [f for f in FIELDS if f in envs.record(env).extra_kinds or f != "solver"]


def has_exact(env: str) -> bool:
    """Whether the game's record has an exact yardstick."""
    return bool(envs.record(env).exact_yardstick)


class _Clock:
    """Wall and CPU seconds since it was made (this process and its children)."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), self._cpu()

    @staticmethod
    def _cpu() -> float:
        child = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + child.ru_utime + child.ru_stime

    def read(self) -> tuple[float, float]:
        """(wall, CPU) seconds so far."""
        return (
            round(time.perf_counter() - self.wall, 1),
            round(self._cpu() - self.cpu, 1),
        )


# --- the rating -----------------------------------------------------------------------
Game = tuple[list[str], list[list[int]], list[float]]
#: the rated agent's name among the ladder's (it may be a rung's spec too)
CANDIDATE = "candidate"


def rating_games(
    env: str,
    table: Sequence[tuple[str, str]],
    deals: int,
    options: Mapping[str, Any],
    agents: dict[str, Any] | None = None,
) -> list[Game]:
    """The games of one table (a ``(name, spec)`` per side) on the rating's held-out
    deals, each deal in every seating: (name per seat, sides' seats, returns), as
    `parlour.league.ratings.fit` takes them. ``agents`` keeps the built agents by
    name between tables."""
    from ..league.schedule import seating_sides

    agents = {} if agents is None else agents
    e = envs.make(env, **dict(options))
    teams = teams_of(e.unwrapped.game)
    for i, (name, spec) in enumerate(table):
        if name not in agents:
            agents[name] = agents_mod.make(
                spec, env, seed=RATING_SEED + i, env_options=dict(options)
            )
    seeds = np.random.SeedSequence(RATING_SEED).generate_state(deals, dtype=np.uint32)
    names = [name for name, _ in table]
    games = []
    for deal_seed in (int(s) | TRAIN_SEED_LIMIT for s in seeds):
        for seating in range(len(names)):
            seats = [""] * e.unwrapped.game.num_players
            for side, team in zip(seating_sides(names, seating), teams, strict=True):
                for s in team:
                    seats[s] = side
            players = [agents[name] for name in seats]
            for s, agent in enumerate(players):
                agent.reset(seed=deal_seed + 7919 * (s + 1))
            returns = play_game(e, players, seed=deal_seed)
            games.append((seats, teams, [float(r) for r in returns]))
    e.close()
    return games


def _sides(env: str, options: Mapping[str, Any]) -> int:
    return len(teams_of(envs.make(env, raw=True, **dict(options)).game))


def ladder_games(
    env: str, ladder: Sequence[str], deals: int, options: Mapping[str, Any]
) -> list[Game]:
    """The reference ladder's games among itself (the same for every row)."""
    from ..league.schedule import tables_for

    tables = tables_for(list(ladder), _sides(env, options)) if len(ladder) > 1 else []
    agents: dict[str, Any] = {}
    return [
        g
        for t in tables
        for g in rating_games(env, [(n, n) for n in t], deals, options, agents)
    ]


def rating(
    env: str,
    spec: str,
    ladder: Sequence[str],
    ladder_record: list[Game],
    deals: int,
    options: Mapping[str, Any],
) -> dict[str, Any]:
    """``spec``'s rating (μ, σ) after the ladder's games (``ladder_record``) and its
    own against each rung in turn (with more than two sides, the next rungs fill the
    other sides), fitted with the league's openskill model."""
    from ..league.ratings import fit

    sides = _sides(env, options)
    own: list[Game] = []
    agents: dict[str, Any] = {}
    for i in range(len(ladder)):
        others = [ladder[(i + j) % len(ladder)] for j in range(sides - 1)]
        table = [(CANDIDATE, spec), *((n, n) for n in others)]
        own += rating_games(env, table, deals, options, agents)
    fitted = fit(ladder_record + own)[CANDIDATE]
    return {
        "mu": fitted["mu"],
        "sigma": fitted["sigma"],
        "games": len(own),
        "ladder": list(ladder),
    }


# --- one agent's measures -------------------------------------------------------------
def exact_headline(data: Mapping[str, Any]) -> tuple[float, str]:
    """The exact yardstick's figure for the table: German Whist's tricks lost a deal
    in stage 2 (a match in Honeymoon; lower is better), with the share of optimal
    critical decisions; Fünfzehn – tot's loss in win share against optimal."""
    if "tricks_lost_per_game" in data:
        value = float(data["tricks_lost_per_game"])
        unit = "deal" if data["variant"] == "german" else "match"
        critical = data["critical_optimal_fraction"]
        return value, f"{value:.2f} tricks lost/{unit}, critical {critical:.0%} optimal"
    value = float(data["loss"]["estimate"])
    return value, f"{value:+.3f} loss vs optimal"


@dataclass
class Measures:
    """What `measure` does for every agent, the same way (and what it shares between
    agents: the ladder's games)."""

    env: str
    options: dict[str, Any]
    protocol: Protocol
    run_dir: Path
    progress: bool = True
    say: Callable[[str], None] = lambda line: None
    """prints a line of progress (above the bar)"""
    tick: Callable[[], None] = lambda: None
    """called after each part (a field, the best response, the yardstick, the
    rating)"""
    _ladder: list[Game] | None = field(default=None, repr=False)

    @property
    def fields(self) -> list[str]:
        """The fields (and rungs of the rating's ladder) of the env."""
        return fields_of(self.env, self.protocol)

    def ladder_record(self) -> list[Game]:
        """The ladder's games among itself, played once."""
        if self._ladder is None:
            self.say(f"rating: the ladder {', '.join(self.fields)} among itself")
            self._ladder = ladder_games(
                self.env, self.fields, self.protocol.rating_deals, self.options
            )
        return self._ladder

    def measure(self, spec: str, br_seed: int, label: str) -> dict[str, Any]:
        """Every measure of agent ``spec``: win shares against the fields, the learned
        best response (seed ``br_seed``, its run in ``run_dir/label/br``), the exact
        yardstick, the rating; with the wall and CPU seconds they took."""
        from .exploit import exploit
        from .yardsticks import of

        p, clock = self.protocol, _Clock()
        row: dict[str, Any] = {"agent": spec, "label": label, "win_share": {}}
        for f in self.fields:
            self.say(f"{label}: {spec} against {f}")
            arena = run_arena(
                self.env,
                [spec, f],
                games=p.games,
                duplicate=True,
                seed=EVAL_SEED,
                env_options=self.options,
                progress=self.progress,
                executor=p.executor,
                held_out=True,
            )
            row["win_share"][f] = arena.win_rate().as_dict()
            self.tick()
        self.say(f"{label}: best response to {spec}, {p.br_steps:,} steps")
        br = exploit(
            self.env,
            spec,
            p.br_steps,
            games=p.br_games,
            seed=br_seed,
            env_options=self.options,
            run_dir=self.run_dir / label / "br",
            overrides=p.br_overrides,
            progress=self.progress,
            executor=p.executor,
        )
        assert br.arena is not None  # Ctrl-C raises out of the benchmark
        row["best_response"] = {
            "win_rate": br.arena.win_rate().as_dict(),
            "steps": br.train.steps,
            "backend": br.backend,
            "seed": br_seed,
            "games": br.arena.games,
        }
        self.tick()
        if has_exact(self.env):
            self.say(f"{label}: exact yardstick of {spec}")
            _, data = of(self.env)(
                self.env, spec, p.exact_games, EXACT_SEED, dict(self.options)
            )
            value, text = exact_headline(data)
            row["exact"] = {"value": value, "text": text, "data": data}
            self.tick()
        ladder = self.ladder_record()
        self.say(f"{label}: rating of {spec} against the ladder")
        row["rating"] = rating(
            self.env, spec, self.fields, ladder, p.rating_deals, self.options
        )
        self.tick()
        row["measure_wall_s"], row["measure_cpu_s"] = clock.read()
        return row

    def parts(self) -> int:
        """The parts `measure` does for one agent (what ``tick`` counts)."""
        return len(self.fields) + 2 + has_exact(self.env)


# --- the benchmark --------------------------------------------------------------------
def numbers(row: Mapping[str, Any]) -> dict[str, float]:
    """A row's figures by column name (what the summary averages)."""
    out = {f"vs {f}": w["estimate"] for f, w in row["win_share"].items()}
    out["best response"] = row["best_response"]["win_rate"]["estimate"]
    if "exact" in row:
        out["exact"] = row["exact"]["value"]
    out["rating"] = row["rating"]["mu"]
    for key in ("wall", "cpu"):  # training (where there was one) and measuring
        out[key] = float(row.get(f"train_{key}_s", 0.0) + row[f"measure_{key}_s"])
    return out


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean and 95% Student t interval across rows of every figure (an interval
    needs two rows or more: with one, the bounds are infinite)."""
    columns: dict[str, list[float]] = {}
    for row in rows:
        for key, value in numbers(row).items():
            columns.setdefault(key, []).append(value)
    return {k: mean_interval(v).as_dict() for k, v in columns.items()}


def check_inputs(
    env: str,
    options: Mapping[str, Any],
    protocol: Protocol,
    out_dir: str | Path,
    append: str | Path | None,
    agents: Sequence[str] = (),
) -> dict[str, Any]:
    """Every check made before any work (one-line ValueErrors): the env and its
    options, the protocol's counts, each agent spec in that env, the output paths.
    Returns the env's options with its config's defaults."""
    from .config import load_config

    envs.game_options(env, dict(options))  # unknown env or option
    options = {**load_config(None, env=env).env_options, **dict(options)}
    envs.game_options(env, options)
    protocol.check()
    if protocol.executor not in ("local", "ray"):
        raise ValueError(f"executor must be local or ray, got {protocol.executor!r}")
    check_agents(env, [*agents, *protocol.fields], options)
    check_output_path(out_dir, directory=True, what="--out")
    out = Path(out_dir)
    if out.is_dir() and any(out.iterdir()):
        raise ValueError(f"--out {out} is not empty: choose another directory")
    if append is not None:
        check_output_path(append, what="--append")
    return options


def check_agents(env: str, specs: Sequence[str], options: Mapping[str, Any]) -> None:
    """ValueError (one line) for a spec that cannot sit in ``env`` with ``options``."""
    for spec in specs:
        try:
            agents_mod.make(spec, env, seed=0, env_options=dict(options))
        except (ValueError, FileNotFoundError) as err:
            raise ValueError(f"agent {spec!r}: {err}") from None


def train_config(
    env: str,
    options: Mapping[str, Any],
    recipe: Recipe,
    steps: int,
    seed: int,
) -> Any:
    """The training config of seed ``seed``: the recipe's config with the env's
    options, ``steps`` learner decisions and the seed (the recipe's overrides come
    last but may not change the env, the budget or the seed)."""
    from .config import apply_overrides, config_from_dict, load_config

    base = load_config(recipe.config, env=env, preset=recipe.preset)
    if base.env != env:
        raise ValueError(f"--config {recipe.config} trains {base.env}, not {env}")
    data = dataclasses.asdict(base)
    data["env_options"] = {**base.env_options, **dict(options)}
    apply_overrides(data, recipe.overrides)
    for key, fixed in (("env", env), ("total_timesteps", steps), ("seed", seed)):
        if data[key] != getattr(base, key):
            raise ValueError(f"-c {key}=...: the benchmark sets {key} itself")
        data[key] = fixed
    return config_from_dict(data)


@dataclass
class BenchResult:
    """A benchmark's rows (one per seed or agent) and their summary."""

    env: str
    options: dict[str, Any]
    protocol: Protocol
    recipe: Recipe | None
    """None: existing agents were measured (``--agent``)"""
    steps: int | None
    seeds: dict[str, Any]
    rows: list[dict[str, Any]]
    out_dir: Path

    def summary(self) -> dict[str, Any]:
        """Mean and 95% interval across the seeds (training runs only)."""
        return summarise(self.rows) if self.recipe is not None else {}

    def as_dict(self) -> dict[str, Any]:
        """Everything as JSON."""
        protocol = dataclasses.asdict(self.protocol)
        return {
            **versions(self.env),
            "options": self.options,
            "protocol": protocol,
            "recipe": None if self.recipe is None else self.recipe.as_dict(),
            "steps": self.steps,
            "seeds": self.seeds,
            "rows": self.rows,
            "summary": self.summary(),
        }

    def columns(self) -> list[str]:
        """The Markdown table's figure columns."""
        cols = [f"vs {f}" for f in fields_of(self.env, self.protocol)]
        cols += ["best response"] + (["exact"] if has_exact(self.env) else [])
        return [*cols, "rating", "wall s", "CPU s"]

    def markdown(self) -> str:
        """The rows and the summary as a Markdown table, with a line saying what
        produced them."""
        p = self.protocol
        opts = ", ".join(f"{k}={v}" for k, v in self.options.items()) or "defaults"
        what = (
            "existing agents"
            if self.recipe is None
            else f"{self.recipe.backend} training, {self.steps:,} steps, "
            f"seeds {self.seeds['train']}"
        )
        head = (
            f"**{self.env}** ({opts}): {what}; {p.games} held-out duplicate games per "
            f"field; best response {p.br_steps:,} steps, {p.br_games} games; "
            f"rating {p.rating_deals} deals a table"
        )
        cols = self.columns()
        lines = [
            head,
            "",
            "| agent | " + " | ".join(cols) + " |",
            "|---" * (len(cols) + 1) + "|",
        ]
        for row in self.rows:
            lines.append(f"| `{row['label']}` | " + " | ".join(_cells(row)) + " |")
        summary = self.summary()
        if summary:
            cells = [_interval(summary.get(c)) for c in self._keys()]
            lines.append("| **mean [95% CI]** | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def _keys(self) -> list[str]:
        keys = [f"vs {f}" for f in fields_of(self.env, self.protocol)]
        keys += ["best response"]
        keys += ["exact"] if has_exact(self.env) else []
        return [*keys, "rating", "wall", "cpu"]


def _interval(value: Mapping[str, float] | None) -> str:
    if value is None:
        return ""
    low, high = value["low"], value["high"]
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{value['estimate']:.3f}"
    return f"{value['estimate']:.3f} [{low:.3f}, {high:.3f}]"


def _cells(row: Mapping[str, Any]) -> list[str]:
    cells = [_interval(w) for w in row["win_share"].values()]
    br = row["best_response"]
    cells.append(f"{_interval(br['win_rate'])} ({br['backend']})")
    if "exact" in row:
        cells.append(exact_headline(row["exact"]["data"])[1])
    r = row["rating"]
    cells.append(f"{r['mu']:.1f} ± {1.96 * r['sigma']:.1f}")
    figures = numbers(row)
    return [*cells, f"{figures['wall']:.0f}", f"{figures['cpu']:.0f}"]


def write(result: BenchResult, append: str | Path | None = None) -> list[Path]:
    """Write ``bench.json`` and ``bench.md`` into the result's directory, and append
    to ``append``: the Markdown table to a ``.md`` file, else one JSON line."""
    out = result.out_dir
    out.mkdir(parents=True, exist_ok=True)
    data = result.as_dict()
    write_json_atomic(out / "bench.json", data)
    (out / "bench.md").write_text(result.markdown() + "\n")
    written = [out / "bench.json", out / "bench.md"]
    if append is not None:
        path = Path(append)
        with path.open("a") as f:
            if path.suffix == ".md":
                f.write(
                    ("\n" if path.stat().st_size else "") + result.markdown() + "\n"
                )
            else:
                f.write(json.dumps(data) + "\n")
        written.append(path)
    return written


def bench(
    env: str,
    steps: int | None = None,
    seeds: int = MIN_SEEDS,
    recipe: Recipe | None = None,
    agents: Sequence[str] = (),
    protocol: Protocol | None = None,
    env_options: Mapping[str, Any] | None = None,
    seed: int = 0,
    out_dir: str | Path | None = None,
    append: str | Path | None = None,
    progress: bool = True,
    min_seeds: int = MIN_SEEDS,
) -> BenchResult:
    """Train ``seeds`` runs of ``recipe`` for ``steps`` learner decisions each and
    measure each final agent (`Measures.measure`); or, with ``agents``, measure those
    agent specs without training. Everything is checked before any work; the result
    is written to ``out_dir`` (`write`)."""
    from . import backends

    protocol = protocol or Protocol()
    if bool(agents) == (recipe is not None):
        raise ValueError("give a training recipe or agents to measure, not both")
    if recipe is not None:
        _positive("steps", steps)
        _positive("seeds", seeds)
        if seeds < min_seeds:
            raise ValueError(f"--seeds must be at least {min_seeds}, got {seeds}")
        if not isinstance(seed, int) or not 0 <= seed < BR_SEED_OFFSET - seeds:
            raise ValueError(
                f"--seed must lie in 0..{BR_SEED_OFFSET - seeds - 1}, got {seed!r}"
            )
    if out_dir is None:
        what = "agents" if recipe is None else f"{recipe.backend}-{steps}"
        out_dir = Path("runs") / f"bench-{env}-{what}-seed{seed}"
    out = Path(out_dir)
    options = check_inputs(env, env_options or {}, protocol, out, append, agents)
    plan = seed_plan(seed, seeds if recipe is not None else 1)
    configs = []
    if recipe is not None:
        backends.check(recipe.backend)
        for s in plan["train"]:
            config = train_config(env, options, recipe, steps, s)
            backends.check_config(recipe.backend, config)
            configs.append(config)
        # the agents are measured in the env they were trained in (the recipe's
        # config may set options of its own)
        options = configs[0].env_options
        check_agents(env, fields_of(env, protocol), options)

    measures = Measures(env, options, protocol, out, progress)
    per_agent = measures.parts() + (1 if recipe is not None else 0)
    bar = None
    if progress:
        from ..progress import progress_bar

        bar = progress_bar(
            total=per_agent * (len(agents) or len(configs)),
            desc=f"bench {env}",
            unit="part",
        )
        measures.say, measures.tick = bar.write, lambda: bar.update(1)
    try:
        rows = _rows(measures, recipe, agents, configs, plan, steps, out)
    finally:
        if bar is not None:
            bar.close()
    result = BenchResult(
        env,
        options,
        protocol,
        recipe,
        steps if recipe is not None else None,
        plan,
        rows,
        out,
    )
    write(result, append)
    return result


def _rows(
    measures: Measures,
    recipe: Recipe | None,
    agents: Sequence[str],
    configs: Sequence[Any],
    plan: Mapping[str, Any],
    steps: int | None,
    out: Path,
) -> list[dict[str, Any]]:
    """Measure the agents, or train each config and measure its final agent."""
    from .train import train

    say, rows = measures.say, []
    if recipe is None:
        for spec in agents:
            rows.append(measures.measure(spec, plan["best_response"][0], _safe(spec)))
            rows[-1]["label"] = spec
    else:
        for config, br_seed in zip(configs, plan["best_response"], strict=True):
            label = f"seed {config.seed}"
            say(f"{label}: training ({recipe.backend}, {steps:,} steps)")
            clock = _Clock()
            run = train(
                config,
                run_dir=out / _safe(label) / "train",
                progress=measures.progress,
                backend=recipe.backend,
            )
            if run.interrupted:
                raise KeyboardInterrupt
            measures.tick()
            wall, cpu = clock.read()
            row = measures.measure(f"ckpt:{run.checkpoint}", br_seed, _safe(label))
            row.update(label=label, seed=config.seed, steps=run.steps)
            row.update(train_wall_s=wall, train_cpu_s=cpu, curve=curve(run))
            rows.append(row)
    return rows


#: the columns of a training run's evaluations that a row's ``curve`` keeps
CURVE_KEYS = ("step", "opponent", "games", "win_rate", "win_low", "win_high")


def curve(run: Any) -> list[dict[str, Any]]:
    """A training run's learning curve (its evaluations along the way: ``eval_every``
    and ``eval_games`` of the recipe), one point per step and opponent."""
    return [{k: r[k] for k in CURVE_KEYS} for r in run.evaluations]


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label)
