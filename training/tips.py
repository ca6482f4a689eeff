"""Strategy tips, tested: duplicate A/B experiments on the seeds' tips.

``parlour tips GAME`` runs them.

The seeds make claims about how to play: German Whist's eight "Strategy tips" (seed
``004_d8444d2889c5bb38.txt``), Forty-Fives' three "Tipps für Einsteiger"
(``003_413a098292a99e2d.txt``) and the arithmetic of Fünfzehn – tot's "Sinn der Regeln"
(``002_f144b8153694976f.txt``). Each tip is a switch of the game's heuristic bot, and
each hypothesis is written down before it is run, in ``configs/tips/<env>.yaml``.

**The experiment.** For each tip, arm A is the full heuristic and arm B the same bot
with the tip off (``heuristic:-tip``). Both arms play the same deals (the same env
seeds) against the same opponents in the same seats, every deal once per seating (the
candidate's side rotating through the seats) and once per opponent of the pool
(``random`` and the full ``heuristic`` by default, a trained ``ckpt:PATH`` on request).
The unit of analysis is the deal: its paired difference is A's mean result minus B's
over all those games, for the win share (`arena.win_share`) and for the score (the
env's reward). Arm A is the same for every tip, so it is played once and shared.

**The statistics.** The mean paired difference is tested with a paired z-test: a
normal approximation, good with hundreds of deals a look, poor with a handful of deals
or when nearly every deal ties (``null_calibration`` measures it on each run's own
data, and the report warns above ``CALIBRATION_WARN``). A group-sequential design
controls the error rate over ``looks`` pre-planned looks at equal steps up to
``max_deals``: O'Brien–Fleming boundaries ``c_K * sqrt(K / k)`` at look ``k`` of ``K``
with a two-sided overall alpha of 0.05 (``OBF_CONSTANTS``, Jennison & Turnbull 2000,
table 2.3, checked by `crossing_probabilities`). A tip stops at the first look whose
statistic crosses the boundary. Its interval is the repeated confidence interval at that
look (estimate ± boundary × standard error), so a tip is "supported" exactly when the
interval excludes zero on the positive side, "refuted" on the negative side, and shows
"no detectable effect" otherwise; its p-value is the stagewise-ordering p-value of the
sequential design (below 0.05 exactly when a boundary was crossed). The minimum
detectable effect is the true difference the design finds with 80% power at the deals
run: ``(c_K + z_0.8) * sd / sqrt(n)``. `null_calibration` resamples a run's own centred
per-deal differences through the same procedure to measure its false-positive rate.

**Agent agreement** (German Whist): for a trained checkpoint, how often its decisions
agree with what a tip prescribes in the situations the tip speaks of (`tip_situations`),
next to the heuristic and random play for reference.

**Fünfzehn – tot** has no tips, only the rules' rationale: `dice_claims` checks the
arithmetic exactly, `round_seat_table` gives each seat's chance in a round with and
without each of the two rules (the solver's round-optimal play under the env's
``rule1``/``rule2`` options), and `game_seat_order` simulates whole games for the seat
order.

``run_tips`` does everything and writes ``<out>/<game>.md``, ``.png`` and ``.json``.
With ``workers`` > 1 the games run in worker processes started with ``spawn``, so a
script that calls it needs the usual ``if __name__ == "__main__":`` guard; every game's
seeds come from its deal, so the results do not depend on the number of workers.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .. import agents as agents_mod
from .. import envs
from ..agents.base import Agent, Turn
from .arena import play_game, seatings, teams_of, win_share
from .stats import wilson

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs" / "tips"
METRICS = ("win", "score")  # per game: the candidate's win share and mean reward
PREDICTIONS = ("positive", "negative", "none")
VERDICTS = ("supported", "refuted", "no detectable effect")
ALPHA = 0.05
POWER = 0.8
Z_POWER = 0.8416212335729143  # one-sided normal quantile of POWER
#: O'Brien–Fleming constants c_K for K equally spaced looks, two-sided alpha 0.05
#: (Jennison & Turnbull, "Group Sequential Methods", table 2.3); the boundary at look k
#: is c_K * sqrt(K / k). `crossing_probabilities` recomputes the crossing probability.
OBF_CONSTANTS = {1: 1.95996, 2: 1.97742, 3: 2.00435, 4: 2.02429, 5: 2.04033, 6: 2.05313}
CALIBRATION_WARN = 0.075  # a null false-positive rate above this gets a warning
MIN_LOOK = 10  # fewer deals than this per look and the design uses fewer looks
AGENT_SALT = (
    1_000_003  # arm-specific agent seeds (A/A calibration): deal seed + salt * k
)


# --- hypotheses -----------------------------------------------------------------------
@dataclass(frozen=True)
class Hypothesis:
    """One tip (or claim) as written down before the run, from ``configs/tips``."""

    name: str
    seed: str  # the seed's sentence, in its own language
    gloss: str | None  # an English gloss when the seed is not in English
    switch: str  # what switching it off changes in the bot (claims: what is checked)
    prediction: str  # positive / negative / none (claims: free text)
    why: str = ""


@dataclass(frozen=True)
class TipsConfig:
    """A game's tips file: env, design defaults, tips and (Fünfzehn – tot) claims."""

    env: str
    env_options: dict[str, Any]
    seed_file: str
    max_deals: int
    looks: int
    opponents: tuple[str, ...]
    primary: str
    seed: int
    tips: tuple[Hypothesis, ...]
    claims: tuple[Hypothesis, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def short(self) -> str:
        """The file stem of the reports: the env name without its version."""
        return self.env.removesuffix("_v0")

    def tip(self, name: str) -> Hypothesis:
        for t in self.tips:
            if t.name == name:
                return t
        raise ValueError(
            f"no hypothesis written for tip {name!r} of {self.env}; tips in "
            f"configs/tips/{self.env}.yaml: {', '.join(t.name for t in self.tips)}"
        )


def resolve_env(game: str) -> str:
    """The env name for ``game`` (``"german_whist"`` or ``"german_whist_v0"``) that has
    a tips file; ValueError listing the games that do."""
    known = sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))
    if not isinstance(game, str) or not game.strip():
        raise ValueError(f"give a game, one of: {', '.join(known)}")
    for name in (game.strip(), game.strip() + "_v0"):
        if name in known:
            return name
    raise ValueError(
        f"no strategy tips for {game!r}; games with a tips file: {', '.join(known)}"
    )


def _hypothesis(entry: Mapping[str, Any], where: str, claim: bool) -> Hypothesis:
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where}: each entry must be a mapping")
    need = ("name", "seed", "check" if claim else "switch", "prediction")
    missing = [k for k in need if not entry.get(k)]
    if missing:
        raise ValueError(f"{where}: entry {entry.get('name', '?')!r} lacks {missing}")
    prediction = str(entry["prediction"]).strip()
    if not claim and prediction not in PREDICTIONS:
        raise ValueError(
            f"{where}: prediction of {entry['name']!r} must be one of {PREDICTIONS}"
        )
    return Hypothesis(
        name=str(entry["name"]),
        seed=" ".join(str(entry["seed"]).split()),
        gloss=" ".join(str(entry["gloss"]).split()) if entry.get("gloss") else None,
        switch=" ".join(str(entry["check" if claim else "switch"]).split()),
        prediction=" ".join(prediction.split()),
        why=" ".join(str(entry.get("why", "")).split()),
    )


def load_config(game: str) -> TipsConfig:
    """Read ``configs/tips/<env>.yaml`` for ``game``."""
    env = resolve_env(game)
    path = CONFIG_DIR / f"{env}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, Mapping) or data.get("env") != env:
        raise ValueError(f"{path}: must be a mapping with env: {env}")
    design = dict(data.get("design") or {})
    tips = tuple(_hypothesis(e, str(path), False) for e in data.get("tips") or [])
    claims = tuple(_hypothesis(e, str(path), True) for e in data.get("claims") or [])
    primary = design.pop("primary", "win")
    if primary not in METRICS:
        raise ValueError(f"{path}: design.primary must be one of {METRICS}")
    return TipsConfig(
        env=env,
        env_options=dict(data.get("env_options") or {}),
        seed_file=str(data.get("seed_file", "")),
        max_deals=int(design.pop("max_deals", 1000)),
        looks=int(design.pop("looks", 4)),
        opponents=tuple(design.pop("opponents", ["random", "heuristic"])),
        primary=primary,
        seed=int(design.pop("seed", 0)),
        tips=tips,
        claims=claims,
        extra=design,
    )


# --- statistics -----------------------------------------------------------------------
_erfc = np.frompyfunc(math.erfc, 1, 1)


def normal_cdf(x: Any) -> np.ndarray:
    """The standard normal distribution function, elementwise."""
    x = np.asarray(x, dtype=float)
    return 0.5 * np.asarray(_erfc(-x / math.sqrt(2.0)), dtype=float)


def look_schedule(max_deals: int, looks: int) -> tuple[int, ...]:
    """Cumulative deal counts of the looks: equal steps up to ``max_deals``, with fewer
    looks when a step would have fewer than ``MIN_LOOK`` deals."""
    if isinstance(max_deals, bool) or not isinstance(max_deals, int) or max_deals < 2:
        raise ValueError(
            f"the number of deals must be an integer >= 2, got {max_deals!r}"
        )
    if looks not in OBF_CONSTANTS:
        raise ValueError(f"looks must be 1..{max(OBF_CONSTANTS)}, got {looks!r}")
    k = max(1, min(looks, max_deals // MIN_LOOK))
    return tuple(round(max_deals * (i + 1) / k) for i in range(k))


def obf_boundaries(k: int) -> tuple[float, ...]:
    """Two-sided O'Brien–Fleming critical values of |z| for ``k`` equal looks."""
    c = OBF_CONSTANTS[k]
    return tuple(c * math.sqrt(k / (i + 1)) for i in range(k))


def _simpson(grid: np.ndarray) -> np.ndarray:
    m = len(grid)
    w = np.full(m, 2.0)
    w[1::2] = 4.0
    w[0] = w[-1] = 1.0
    return w * (grid[1] - grid[0]) / 3.0


def crossing_probabilities(
    fractions: Sequence[float],
    bounds: Sequence[float],
    last: float | None = None,
    points: int = 401,
) -> list[float]:
    """P(the statistic first crosses |z| >= bounds[k] at look k), under no effect.

    ``fractions`` are the information fractions of the looks (deals / max deals). The
    z-statistics of the looks are a Brownian motion observed at those times; the
    density of the path that has not stopped is integrated forward on a grid
    (Armitage, McPherson and Rowe's recursion, Simpson's rule; ``points`` odd). With
    ``last``, the last look's threshold is ``last`` instead of its bound (for p-values).
    """
    t = tuple(float(f) for f in fractions)
    b = tuple(float(x) for x in bounds[: len(t)])
    final = b[-1] if last is None else float(last)
    if len(t) == 1:
        return [float(2.0 * (1.0 - normal_cdf(final)))]
    exits, grid, density = _continuation(t[:-1], b[:-1], points)
    step = t[-1] - t[-2]
    a = final * math.sqrt(t[-1])  # the bound on the summed process
    mass = density * _simpson(grid)
    sd = math.sqrt(step)
    cross = normal_cdf((-a - grid) / sd) + 1.0 - normal_cdf((a - grid) / sd)
    return [*exits, float(mass @ cross)]


@lru_cache(maxsize=256)
def _continuation(
    t: tuple[float, ...], b: tuple[float, ...], points: int
) -> tuple[list[float], np.ndarray, np.ndarray]:
    """Crossing probabilities of the looks ``t`` and the density of the paths that did
    not cross, on a grid over the last look's continuation region (cached: p-values
    of one design share it)."""
    a = b[-1] * math.sqrt(t[-1])
    grid = np.linspace(-a, a, points)
    if len(t) == 1:
        density = np.exp(-(grid**2) / (2 * t[0])) / math.sqrt(2 * math.pi * t[0])
        return [float(2.0 * (1.0 - normal_cdf(b[0])))], grid, density
    exits, old, before = _continuation(t[:-1], b[:-1], points)
    step = t[-1] - t[-2]
    mass = before * _simpson(old)
    sd = math.sqrt(step)
    cross = normal_cdf((-a - old) / sd) + 1.0 - normal_cdf((a - old) / sd)
    kernel = np.exp(-((grid[:, None] - old[None, :]) ** 2) / (2 * step))
    density = kernel / math.sqrt(2 * math.pi * step) @ mass
    return [*exits, float(mass @ cross)], grid, density


@dataclass(frozen=True)
class SequentialTest:
    """The sequential paired test of one endpoint, at the look where it stopped."""

    estimate: float  # mean paired difference A − B per deal
    low: float  # repeated confidence interval at the stopping look
    high: float
    se: float
    sd: float
    z: float
    p: float  # stagewise-ordering p-value of the sequential design
    n: int  # deals analysed
    look: int  # 1-based look at which it stopped (or the last)
    looks: int
    boundary: float  # |z| critical value at that look
    crossed: bool
    mde: float  # minimum detectable effect at POWER for n deals

    def as_dict(self) -> dict[str, Any]:
        return {k: _plain(v) for k, v in self.__dict__.items()}


def _plain(v: Any) -> Any:
    if isinstance(v, float | np.floating):
        v = float(v)
        return v if math.isfinite(v) else str(v)
    if isinstance(v, np.integer | np.bool_):
        return v.item()
    return v


def _moments(values: np.ndarray) -> tuple[float, float, float, float]:
    """(mean, sd, se, z) of paired differences; a zero spread gives z = 0 for a zero
    mean and ±inf otherwise."""
    n = len(values)
    mean = float(np.mean(values))
    sd = float(np.std(values, ddof=1)) if n > 1 else math.inf
    se = sd / math.sqrt(n)
    if se > 0:
        z = mean / se
    else:
        z = 0.0 if mean == 0 else math.copysign(math.inf, mean)
    return mean, sd, se, z


def sequential_test(
    values: np.ndarray, schedule: Sequence[int], look: int | None = None
) -> SequentialTest:
    """Test the per-deal differences ``values`` at the looks of ``schedule``.

    Without ``look``: stop at the first look (within ``len(values)`` deals) whose |z|
    crosses its boundary, else at the last look reached. With ``look`` (1-based): the
    analysis at that look (for a second endpoint of a tip that stopped there).
    """
    values = np.asarray(values, dtype=float)
    k_all = len(schedule)
    bounds = obf_boundaries(k_all)
    reached = [i for i, n in enumerate(schedule) if n <= len(values)]
    if not reached:
        raise ValueError(
            f"{len(values)} deals do not reach the first look ({schedule[0]})"
        )
    stop, crossed = reached[-1], False
    if look is None:
        for i in reached:
            z = _moments(values[: schedule[i]])[3]
            if abs(z) >= bounds[i]:
                stop, crossed = i, True
                break
    else:
        stop = look - 1
    n = schedule[stop]
    mean, sd, se, z = _moments(values[:n])
    crossed = crossed or abs(z) >= bounds[stop]
    fractions = [m / schedule[-1] for m in schedule[: stop + 1]]
    if math.isinf(z):
        p = sum(crossing_probabilities(fractions[:-1], bounds)) if stop else 0.0
    elif se == 0:
        p = 1.0
    else:
        p = sum(crossing_probabilities(fractions, bounds, last=abs(z)))
    half = bounds[stop] * se
    mde = (bounds[-1] + Z_POWER) * sd / math.sqrt(n)
    return SequentialTest(
        estimate=mean,
        low=mean - half,
        high=mean + half,
        se=se,
        sd=sd,
        z=z,
        p=min(1.0, max(0.0, p)),
        n=n,
        look=stop + 1,
        looks=k_all,
        boundary=bounds[stop],
        crossed=crossed,
        mde=mde,
    )


def sign_test(values: np.ndarray) -> tuple[int, int, float]:
    """Exact two-sided sign test of paired differences: (deals A did better, deals B
    did better, p). Ties carry no sign; with no untied deal p is 1."""
    values = np.asarray(values, dtype=float)
    pos, neg = int((values > 0).sum()), int((values < 0).sum())
    n = pos + neg
    if n == 0:
        return pos, neg, 1.0
    tail = sum(math.comb(n, k) for k in range(min(pos, neg) + 1))
    return pos, neg, min(1.0, float(Fraction(2 * tail, 2**n)))


def verdict(test: SequentialTest) -> str:
    """supported / refuted / no detectable effect: the sign of a crossed boundary."""
    if test.crossed and test.low > 0:
        return "supported"
    if test.crossed and test.high < 0:
        return "refuted"
    return "no detectable effect"


def prediction_matched(prediction: str, outcome: str) -> bool:
    """Whether the result is what the hypothesis predicted."""
    expected = {
        "positive": "supported",
        "negative": "refuted",
        "none": "no detectable effect",
    }[prediction]
    return expected == outcome


def null_calibration(
    values: np.ndarray,
    schedule: Sequence[int],
    experiments: int = 2000,
    seed: int = 0,
) -> float:
    """The false-positive rate of the sequential test under no effect, measured on data
    shaped like ``values``: each simulated experiment resamples the centred differences
    with replacement up to ``schedule[-1]`` deals and runs the same looks."""
    values = np.asarray(values, dtype=float)
    centred = values - values.mean()
    if not np.any(centred):
        return 0.0
    rng = np.random.default_rng(seed)
    bounds = obf_boundaries(len(schedule))
    n_max = schedule[-1]
    rejected = np.zeros(experiments, dtype=bool)
    chunk = max(1, 4_000_000 // n_max)
    for start in range(0, experiments, chunk):
        size = min(chunk, experiments - start)
        draws = centred[rng.integers(len(centred), size=(size, n_max))]
        total = np.cumsum(draws, axis=1)
        square = np.cumsum(draws**2, axis=1)
        hit = np.zeros(size, dtype=bool)
        for n, b in zip(schedule, bounds, strict=True):
            mean = total[:, n - 1] / n
            var = (square[:, n - 1] - n * mean**2) / (n - 1)
            se = np.sqrt(np.maximum(var, 0) / n)
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(se > 0, mean / se, 0.0)
            hit |= np.abs(z) >= b
        rejected[start : start + size] = hit
    return float(rejected.mean())


# --- playing the arms -----------------------------------------------------------------
@dataclass(frozen=True)
class Block:
    """Games for one arm: ``candidate`` against each opponent, deal and seating.

    ``salt`` shifts the candidate's agent seeds (0 for the A/B arms, which share their
    random numbers; A/A calibration gives its two arms different salts).
    """

    env: str
    env_options: tuple[tuple[str, Any], ...]
    candidate: str
    opponents: tuple[str, ...]
    deal_seeds: tuple[int, ...]
    salt: int = 0


_WORKER_CACHE: dict[Any, Any] = {}


def _cached(key: Any, build: Callable[[], Any]) -> Any:
    if key not in _WORKER_CACHE:
        if len(_WORKER_CACHE) > 64:
            _WORKER_CACHE.clear()
        _WORKER_CACHE[key] = build()
    return _WORKER_CACHE[key]


def play_block(block: Block) -> np.ndarray:
    """Play a block; returns ``[deal, opponent, seating, metric]`` (metrics: win share,
    score), the candidate's result in each game."""
    options = dict(block.env_options)
    context = {"env_options": options}
    env = _cached(
        ("env", block.env, block.env_options), lambda: envs.make(block.env, **options)
    )
    game = env.unwrapped.game
    n = game.num_players
    teams = teams_of(game)
    rotations = seatings(n, teams)

    def agent(spec: str, role: Any) -> Agent:
        key = ("agent", block.env, block.env_options, spec, role)
        return _cached(key, lambda: agents_mod.make(spec, block.env, seed=0, **context))

    candidate = agent(block.candidate, "candidate")
    fields = [[agent(o, ("field", s)) for s in range(n)] for o in block.opponents]
    out = np.zeros((len(block.deal_seeds), len(block.opponents), len(rotations), 2))
    for d, deal_seed in enumerate(block.deal_seeds):
        for o, field_agents in enumerate(fields):
            for r, mine in enumerate(rotations):
                candidate.reset(seed=deal_seed + AGENT_SALT * block.salt)
                for s, a in enumerate(field_agents):
                    a.reset(seed=deal_seed + 7919 * (s + 1))
                players = [
                    candidate if m else field_agents[s] for s, m in enumerate(mine)
                ]
                scores = play_game(env, players, seed=deal_seed)
                own = [scores[s] for s in range(n) if mine[s]]
                out[d, o, r, 0] = win_share(scores, teams, mine)
                out[d, o, r, 1] = float(np.mean(own))
    return out


def games_per_deal(env: str, env_options: Mapping[str, Any], opponents: int) -> int:
    """Games one arm plays per deal: one per seating and opponent."""
    game = envs.make(env, raw=True, **dict(env_options)).game
    return len(teams_of(game)) * opponents


class Runner:
    """Runs blocks in this process or in worker processes (same results either way:
    every game's seeds come from its deal)."""

    def __init__(self, workers: int = 1):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def map(
        self,
        fn: Callable[[Any], Any],
        jobs: Sequence[Any],
        done: Callable[[int], None] | None = None,
    ) -> list[Any]:
        """``[fn(job) for job in jobs]``; ``done(i)`` is called as each job finishes."""
        if self.workers == 1 or len(jobs) <= 1:
            results = []
            for i, job in enumerate(jobs):
                results.append(fn(job))
                if done is not None:
                    done(i)
            return results
        if self._pool is None:
            import multiprocessing

            # spawn: the workers start clean (no inherited torch or BLAS threads).
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn")
            )
        futures = [self._pool.submit(fn, job) for job in jobs]
        index = {f: i for i, f in enumerate(futures)}
        from concurrent.futures import as_completed

        for f in as_completed(futures):
            if done is not None:
                done(index[f])
        return [f.result() for f in futures]


def _chunks(seq: Sequence[int], size: int) -> list[tuple[int, ...]]:
    return [tuple(seq[i : i + size]) for i in range(0, len(seq), size)]


# --- the A/B experiments --------------------------------------------------------------
@dataclass
class TipResult:
    """One tip's experiment: data, tests and verdict."""

    hypothesis: Hypothesis
    arm_a: str
    arm_b: str
    opponents: tuple[str, ...]
    schedule: tuple[int, ...]
    primary: str
    a: np.ndarray  # [deal, opponent, seating, metric] of arm A, deals analysed
    b: np.ndarray
    tests: dict[str, SequentialTest] = field(default_factory=dict)
    per_opponent: dict[str, dict[str, SequentialTest]] = field(default_factory=dict)
    false_positive_rate: float | None = None

    @property
    def name(self) -> str:
        return self.hypothesis.name

    @property
    def deals(self) -> int:
        return self.tests[self.primary].n

    @property
    def verdict(self) -> str:
        return verdict(self.tests[self.primary])

    @property
    def matched(self) -> bool:
        return prediction_matched(self.hypothesis.prediction, self.verdict)

    @property
    def shaky(self) -> bool:
        """The z-test's null calibration on this tip's data is above
        ``CALIBRATION_WARN``: few deals differ between the arms."""
        rate = self.false_positive_rate
        return rate is not None and rate > CALIBRATION_WARN

    def sign_test(self, metric: str | None = None) -> tuple[int, int, float]:
        """`sign_test` of the per-deal differences analysed (to the stopping look)."""
        return sign_test(self.differences(metric or self.primary))

    def differences(
        self, metric: str = "win", opponent: int | None = None
    ) -> np.ndarray:
        """Per-deal paired differences A − B, averaged over seatings (and opponents)."""
        m = METRICS.index(metric)
        diff = self.a[..., m] - self.b[..., m]
        if opponent is not None:
            return diff[:, opponent, :].mean(axis=1)
        return diff.mean(axis=(1, 2))

    def rates(self, arm: str, opponent: int, metric: str = "win") -> float:
        data = self.a if arm == "A" else self.b
        return float(data[:, opponent, :, METRICS.index(metric)].mean())

    def as_dict(self) -> dict[str, Any]:
        return {
            "tip": self.name,
            "arm_a": self.arm_a,
            "arm_b": self.arm_b,
            "prediction": self.hypothesis.prediction,
            "verdict": self.verdict,
            "prediction_matched": self.matched,
            "deals": self.deals,
            "primary": self.primary,
            "tests": {m: t.as_dict() for m, t in self.tests.items()},
            "per_opponent": {
                o: {
                    "A_win_rate": self.rates("A", i),
                    "B_win_rate": self.rates("B", i),
                    "A_score": self.rates("A", i, "score"),
                    "B_score": self.rates("B", i, "score"),
                    **{m: t.as_dict() for m, t in self.per_opponent[o].items()},
                }
                for i, o in enumerate(self.opponents)
            },
            "false_positive_rate": self.false_positive_rate,
            "sign_test": dict(
                zip(("A_better", "B_better", "p"), self.sign_test(), strict=True)
            ),
        }


def check_tip_switch(env: str, tip: str, env_options: Mapping[str, Any]) -> None:
    """ValueError unless ``heuristic:-tip`` builds and the full bot has the tip on."""
    agents_mod.make(f"heuristic:-{tip}", env, seed=0, env_options=dict(env_options))
    full = agents_mod.make("heuristic", env, seed=0, env_options=dict(env_options))
    options = getattr(full, "options", None)
    on = options.get(tip) if isinstance(options, Mapping) else getattr(full, tip, None)
    if on is False:
        raise ValueError(
            f"tip {tip!r} is off in the full {env} heuristic: nothing to test"
        )


def run_experiments(
    env: str,
    tips: Sequence[Hypothesis],
    *,
    env_options: Mapping[str, Any] | None = None,
    opponents: Sequence[str] = ("random", "heuristic"),
    max_deals: int = 1000,
    looks: int = 4,
    seed: int = 0,
    primary: str = "win",
    arm_a: str = "heuristic",
    arm_b: Callable[[str], str] | None = None,
    salts: tuple[int, int] = (0, 0),
    runner: Runner | None = None,
    progress: bool = False,
    calibrate: int = 0,
) -> list[TipResult]:
    """Run one duplicate A/B experiment per tip with sequential stopping.

    ``arm_b(name)`` gives arm B's spec (default ``heuristic:-name``). ``salts`` shift
    the arms' agent seeds (an A/A experiment uses the same spec with different salts).
    ``calibrate`` > 0 adds each tip's `null_calibration` with that many experiments.
    """
    if primary not in METRICS:
        raise ValueError(f"primary must be one of {METRICS}, got {primary!r}")
    if not tips:
        raise ValueError("no tips to test")
    if not opponents:
        raise ValueError("give at least one opponent")
    env_options = dict(env_options or {})
    schedule = look_schedule(max_deals, looks)
    arm_b = arm_b or (lambda name: f"heuristic:-{name}")
    specs_b = {t.name: arm_b(t.name) for t in tips}
    seeds = np.random.SeedSequence(seed).generate_state(max_deals, dtype=np.uint32)
    deal_seeds = [int(s) for s in seeds]
    options_key = tuple(sorted(env_options.items()))
    per_deal = games_per_deal(env, env_options, len(opponents))
    own_runner = runner is None
    runner = runner or Runner(1)
    bar = None
    if progress:
        from tqdm import tqdm

        total = max_deals * per_deal * (len(tips) + 1)
        bar = tqdm(total=total, desc=f"{env} tips", unit="game")
    a_data = np.zeros((0, len(opponents), per_deal // len(opponents), 2))
    b_data = {t.name: a_data.copy() for t in tips}
    active = [t.name for t in tips]
    stopped: dict[str, SequentialTest] = {}
    try:
        start = 0
        for k, n in enumerate(schedule):
            new = deal_seeds[start:n]
            size = max(1, math.ceil(len(new) / (4 * runner.workers)))
            size = min(size, 25)
            arms = [("A", arm_a, salts[0])] + [
                (t, specs_b[t], salts[1]) for t in active
            ]
            jobs, owners = [], []
            for arm, spec, salt in arms:
                for chunk in _chunks(new, size):
                    jobs.append(
                        Block(env, options_key, spec, tuple(opponents), chunk, salt)
                    )
                    owners.append(arm)

            def done(i: int, jobs: list[Block] = jobs) -> None:
                if bar is not None:
                    bar.update(len(jobs[i].deal_seeds) * per_deal)

            results = runner.map(play_block, jobs, done)
            for arm in dict.fromkeys(owners):
                got = np.concatenate(
                    [r for r, o in zip(results, owners, strict=True) if o == arm]
                )
                if arm == "A":
                    a_data = np.concatenate([a_data, got])
                else:
                    b_data[arm] = np.concatenate([b_data[arm], got])
            for name in list(active):
                diff = (
                    a_data[:n, ..., METRICS.index(primary)]
                    - b_data[name][..., METRICS.index(primary)]
                ).mean(axis=(1, 2))
                test = sequential_test(diff, schedule)
                if test.crossed or k == len(schedule) - 1:
                    stopped[name] = test
                    active.remove(name)
                    if bar is not None and k < len(schedule) - 1:
                        bar.total -= (max_deals - n) * per_deal
                        bar.refresh()
            if not active:
                if bar is not None and k < len(schedule) - 1:
                    bar.total -= (max_deals - n) * per_deal
                    bar.refresh()
                break
            start = n
    finally:
        if bar is not None:
            bar.close()
        if own_runner:
            runner.close()
    results_out = []
    for t in tips:
        test = stopped[t.name]
        n = test.n
        res = TipResult(
            t,
            arm_a,
            specs_b[t.name],
            tuple(opponents),
            schedule,
            primary,
            a_data[:n].copy(),
            b_data[t.name][:n].copy(),
        )
        for metric in METRICS:
            res.tests[metric] = sequential_test(
                res.differences(metric), schedule, look=test.look
            )
        for i, o in enumerate(opponents):
            res.per_opponent[o] = {
                metric: sequential_test(
                    res.differences(metric, i), schedule, look=test.look
                )
                for metric in METRICS
            }
        if calibrate:
            res.false_positive_rate = null_calibration(
                res.differences(primary), schedule, calibrate, seed=seed
            )
        results_out.append(res)
    return results_out


def aa_experiment(
    env: str,
    spec: str,
    *,
    env_options: Mapping[str, Any] | None = None,
    opponents: Sequence[str] = ("random",),
    max_deals: int = 40,
    looks: int = 2,
    seed: int = 0,
    primary: str = "win",
    runner: Runner | None = None,
) -> TipResult:
    """An A/A experiment: both arms play ``spec`` (with different agent seeds), so any
    effect the harness reports is a false positive."""
    hyp = Hypothesis("A/A", "(control)", None, "both arms identical", "none")
    (result,) = run_experiments(
        env,
        [hyp],
        env_options=env_options,
        opponents=opponents,
        max_deals=max_deals,
        looks=looks,
        seed=seed,
        primary=primary,
        arm_a=spec,
        arm_b=lambda _: spec,
        salts=(1, 2),
        runner=runner,
    )
    return result


# --- agent agreement (German Whist) ---------------------------------------------------
#: Tips whose prescription is checked decision by decision, and the descriptive ones.
AGREEMENT_TIPS = (
    "win_cheaply",
    "duck_duds",
    "save_trumps",
    "long_suit",
    "open_hands",
    "count_to_seven",
)
CONTEST_TIPS = ("value_prizes", "fight_late")
#: a prize "dud": a plain (non-trump) card below the Jack
DUD_RANK = 4  # deck.rank: A=0 K=1 Q=2 J=3 10=4 …
#: stage-2 positions up to this many cards in hand are scored with the exact solver
SOLVER_CARDS = 9


class _Order:
    """Trick-taking order of a German Whist deal: strength, groups, who beats whom."""

    def __init__(self, game: Any, trump_mask: int):
        deck = game.deck
        self.deck = deck
        self.trumps = trump_mask
        strength = [13 - r for r in deck.rank]
        if game.honeymoon:  # "The High Joker beats the Low Joker, which beats the Ace"
            strength[deck.card("JKH")] = 15
            strength[deck.card("JKL")] = 14
        self.strength = strength
        self.group = [
            trump_mask if (1 << c) & trump_mask else deck.suit_mask[deck.suit[c]]
            for c in range(deck.size)
        ]

    def is_trump(self, card: int) -> bool:
        return bool(self.trumps >> card & 1)

    def beats(self, lead: int, card: int) -> bool:
        """True if ``card`` played to ``lead`` wins the trick."""
        if self.group[card] == self.group[lead]:
            return self.strength[card] > self.strength[lead]
        return self.is_trump(card)

    def equivalent(self, a: int, b: int, known: int) -> bool:
        """Cards ``a`` and ``b`` do the same job: same group, and every card ranked
        between them is in ``known`` (the player's hand, played, or on the table)."""
        if a == b:
            return True
        if self.group[a] != self.group[b]:
            return False
        lo, hi = sorted((self.strength[a], self.strength[b]))
        between = [
            c
            for c in range(self.deck.size)
            if self.group[c] == self.group[a] and lo < self.strength[c] < hi
        ]
        return all(known >> c & 1 for c in between)


def tip_situations(game: Any, state: Any, seat: int, card: int) -> dict[str, Any]:
    """What the German Whist tips say about ``seat`` playing ``card`` in ``state``.

    Returns, for each tip that speaks of this situation, whether the card agrees with
    its prescription (`AGREEMENT_TIPS`), or for the contest tips the situation's class
    and whether the player contested the trick (`CONTEST_TIPS`). Forced moves say
    nothing.

    * win_cheaply: a stage-1 follower whose card wins, with two or more winning cards:
      "Take it with the lowest card that still wins" (equivalent cards count as equal).
    * duck_duds: a stage-1 follower holding two or more cards of the led suit who could
      win the trick, the prize a dud (a plain card below the Jack): "If it's a dud,
      throw your lowest card of the led suit".
    * save_trumps: a stage-1 decision with both trumps and plain cards legal: "Trumps
      are stage-2 cards", so a plain card.
    * long_suit: a stage-1 follower void in the led suit who discards a plain card while
      holding plain suits of different lengths: "Build one long suit", so not from the
      longest.
    * open_hands: a stage-2 decision with at most ``SOLVER_CARDS`` cards in hand and a
      real choice: the card keeps the most tricks (towards 7) that exact play can take.
    * count_to_seven: the same positions when they are won: the card keeps the win.
    * value_prizes / fight_late: a stage-1 follower who can win the trick: whether he
      did, with the prize's class (trump, honour A–J, dud) and the trick's third of
      stage 1 (early, middle, late).
    """
    legal = game.legal_actions(state)
    out: dict[str, Any] = {}
    if len(legal) < 2:
        return out
    order = _Order(game, state.trump_mask)
    hand = state.hands[seat]
    if state.stage == 2:
        if hand.bit_count() <= SOLVER_CARDS:
            scored = _score_stage2(game, state, card)
            if scored is not None:
                choice, optimal, won, lost = scored
                if choice:
                    out["open_hands"] = lost == 0
                    if won:
                        out["count_to_seven"] = optimal
        return out
    plain = [c for c in legal if not order.is_trump(c)]
    if plain and len(plain) < len(legal):
        out["save_trumps"] = not order.is_trump(card)
    lead = state.lead
    if lead < 0:
        return out
    known = hand | state.played | (1 << lead)
    winners = [c for c in legal if order.beats(lead, c)]
    if card in winners and len(winners) >= 2:
        cheapest = min(winners, key=lambda c: (order.is_trump(c), order.strength[c]))
        out["win_cheaply"] = order.equivalent(card, cheapest, known)
    prize = state.face_up
    led = [c for c in legal if order.group[c] == order.group[lead]]
    dud = not order.is_trump(prize) and order.deck.rank[prize] >= DUD_RANK
    if dud and winners and len(led) >= 2:
        lowest = min(led, key=lambda c: order.strength[c])
        out["duck_duds"] = order.equivalent(card, lowest, known)
    if not hand & order.group[lead] and not order.is_trump(card):
        lengths: dict[int, int] = {}
        for c in range(order.deck.size):
            if hand >> c & 1 and not order.is_trump(c):
                lengths[order.group[c]] = lengths.get(order.group[c], 0) + 1
        if len(set(lengths.values())) > 1:
            out["long_suit"] = lengths[order.group[card]] < max(lengths.values())
    if winners:
        if order.is_trump(prize):
            kind = "trump"
        elif order.deck.rank[prize] < DUD_RANK:
            kind = "honour"
        else:
            kind = "dud"
        third = min(2, 3 * state.stock_pos // game.stock_size)
        contested = card in winners
        out["value_prizes"] = (kind, contested)
        out["fight_late"] = (("early", "middle", "late")[third], contested)
    return out


def _score_stage2(
    game: Any, state: Any, card: int
) -> tuple[bool, bool, bool, int] | None:
    """The exact solver's verdict on a stage-2 card, ``(choice, optimal, won, tricks
    lost)`` (see `parlour.agents.solver.german_whist.score_decision`), or None when the
    solver is not installed."""
    try:
        from ..agents.solver.german_whist import score_decision
    except ImportError:  # the solver is optional for this analysis
        return None
    score = score_decision(game, state, card)
    if isinstance(score, tuple):  # the solver's first API returned a plain tuple
        choice, optimal, won, lost = score
        return bool(choice), bool(optimal), bool(won), int(lost)
    return bool(score.choice), bool(score.optimal), bool(score.won), score.tricks_lost


@dataclass
class Agreement:
    """How often one agent's decisions agree with each tip's prescription."""

    agent: str
    games: int
    counts: dict[str, list[int]] = field(default_factory=dict)  # tip -> [agree, n]
    contests: dict[str, dict[str, list[int]]] = field(default_factory=dict)

    def rate(self, tip: str) -> Any:
        agree, n = self.counts.get(tip, [0, 0])
        return wilson(agree, n) if n else None

    def contest_rate(self, tip: str, kind: str) -> Any:
        won, n = self.contests.get(tip, {}).get(kind, [0, 0])
        return wilson(won, n) if n else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "games": self.games,
            "agreement": {
                t: {"agree": a, "situations": n} for t, (a, n) in self.counts.items()
            },
            "contest": self.contests,
        }


def agreement(
    agent: str | Agent,
    *,
    env: str = "german_whist_v0",
    env_options: Mapping[str, Any] | None = None,
    opponent: str = "heuristic",
    deals: int = 100,
    seed: int = 0,
) -> Agreement:
    """Play ``deals`` duplicate deals (both seats) of ``agent`` against ``opponent`` and
    count, at each of the agent's decisions, what `tip_situations` finds."""
    if env != "german_whist_v0":
        raise ValueError(
            f"agent agreement is implemented for german_whist_v0, not {env}"
        )
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be a positive integer, got {deals!r}")
    env_options = dict(env_options or {})
    wrapped = envs.make(env, **env_options)
    raw = wrapped.unwrapped
    game = raw.game
    context = {"env_options": env_options}
    me = (
        agent
        if isinstance(agent, Agent)
        else agents_mod.make(agent, env, seed=seed, **context)
    )
    other = agents_mod.make(opponent, env, seed=seed + 1, **context)
    result = Agreement(agent if isinstance(agent, str) else agent.spec, 0)
    for tip in AGREEMENT_TIPS:
        result.counts[tip] = [0, 0]
    for tip in CONTEST_TIPS:
        result.contests[tip] = {}
    seeds = np.random.SeedSequence(seed).generate_state(deals, dtype=np.uint32).tolist()
    for deal_seed in seeds:
        for seat in (0, 1):
            me.reset(seed=deal_seed)
            other.reset(seed=deal_seed + 7919)
            wrapped.reset(seed=deal_seed)
            for name in wrapped.agent_iter():
                p = raw.agent_name_mapping[name]
                obs, _, terminated, truncated, _ = wrapped.last()
                if terminated or truncated:
                    wrapped.step(None)
                    continue
                turn = Turn(game, raw.state, p, obs["observation"], obs["action_mask"])
                action = (me if p == seat else other).act(turn)
                if p == seat:
                    for tip, what in tip_situations(game, raw.state, p, action).items():
                        if tip in CONTEST_TIPS:
                            kind, contested = what
                            cell = result.contests[tip].setdefault(kind, [0, 0])
                            cell[0] += contested
                            cell[1] += 1
                        else:
                            result.counts[tip][0] += bool(what)
                            result.counts[tip][1] += 1
                wrapped.step(action)
            result.games += 1
    wrapped.close()
    return result


def run_agreement(
    specs: Sequence[str],
    *,
    env_options: Mapping[str, Any] | None = None,
    deals: int = 100,
    seed: int = 0,
) -> list[Agreement]:
    """`agreement` for each agent spec, on the same deals."""
    return [
        agreement(spec, env_options=env_options, deals=deals, seed=seed)
        for spec in specs
    ]


# --- Fünfzehn – tot: the rules' rationale ---------------------------------------------
RULE_SETS = {
    "both rules": (True, True),
    "rule 1 only": (True, False),
    "rule 2 only": (False, True),
    "neither": (False, False),
}


def variant_turn_options(
    total: int, rolls: int, rule1: bool = True, rule2: bool = True
) -> tuple[bool, bool]:
    """``(may_roll, may_stand)`` with either rule switched off: the engine's
    `turn_options` (the env's ``rule1``/``rule2`` options)."""
    from ..envs.fuenfzehn_tot.rules import turn_options

    return turn_options(total, rolls, rule1, rule2)


@dataclass(frozen=True)
class RoundSeats:
    """One round of ``players`` round-optimal players: each seat's chance (in turn
    order, seat 0 sets the first total)."""

    half: int
    players: int
    rules: str
    chance: tuple[Fraction, ...]  # half 1: P(takes the match); half 2: P(wins)
    bust: tuple[Fraction, ...]  # P(the seat's turn goes over 15)


def round_seats(
    half: int,
    players: int,
    rule1: bool = True,
    rule2: bool = True,
    **solver_options: Any,
) -> RoundSeats:
    """Exact seat chances of one round, every player playing the solver's round-optimal
    policy (backward induction, `solve_turn` with ``after``) under the given rules.

    First half: the round ends at once with a bust, whose player takes the match;
    otherwise the lowest total takes it, an equal total rolled later being lower.
    Second half (``half2_bust="out"``): a 15 wins at once; a bust only ends that turn;
    the highest total wins, an earlier total beating an equal later one; when everybody
    busts the round is replayed in the same order.
    """
    if half not in (1, 2):
        raise ValueError(f"half must be 1 or 2, got {half!r}")
    if (
        isinstance(players, bool)
        or not isinstance(players, int)
        or not 2 <= players <= 10
    ):
        raise ValueError(f"players must be 2..10, got {players!r}")
    from ..agents import fuenfzehn_tot_solver as solver

    rules = {"rule1": rule1, "rule2": rule2}
    # (lowest or highest total standing, its seat) -> probability
    dist: dict[tuple[int | None, int | None], Fraction] = {(None, None): Fraction(1)}
    chance = [Fraction(0)] * players
    bust = [Fraction(0)] * players
    for i in range(players):
        after = players - 1 - i
        new: dict[tuple[int | None, int | None], Fraction] = {}
        for (t, holder), p in dist.items():
            sol = solver.solve_turn(
                half,
                [] if t is None else [t],
                after,
                exact=True,
                **rules,
                **solver_options,
            )
            bust[i] += p * sol.bust
            if half == 1:
                chance[i] += p * sol.bust  # "tot": he takes the match at once
            else:
                chance[i] += p * sol.fifteen  # a 15 wins the round at once
                if sol.bust:
                    key = (t, holder)
                    new[key] = new.get(key, Fraction(0)) + p * sol.bust
            for u in range(1, 16):
                q = sol.stand_at[u]
                if not q:
                    continue
                if half == 1:
                    better = t is None or u <= t  # a later equal total is lower
                else:
                    better = t is None or u > t  # an earlier equal total is higher
                key = (u, i) if better else (t, holder)
                new[key] = new.get(key, Fraction(0)) + p * q
        dist = new
    replay = Fraction(0)
    for (_, holder), p in dist.items():
        if holder is None:
            replay += p
        else:
            chance[holder] += p
    if half == 2 and replay:
        chance = [c / (1 - replay) for c in chance]
    name = next(k for k, v in RULE_SETS.items() if v == (rule1, rule2))
    return RoundSeats(half, players, name, tuple(chance), tuple(bust))


def round_seat_table(players: Sequence[int] = (2, 3, 4)) -> list[RoundSeats]:
    """`round_seats` for each half, number of players and rule set."""
    return [
        round_seats(half, n, *rules)
        for half in (1, 2)
        for n in players
        for rules in RULE_SETS.values()
    ]


@dataclass(frozen=True)
class Claim:
    """One of the seed's claims, checked exactly."""

    name: str
    verdict: str  # supported / refuted (exact, no interval needed)
    finding: str  # the numbers, in a sentence or two
    numbers: dict[str, Any]


def _roll_risk(total: int, rolls: int, rule1: bool, rule2: bool) -> Fraction:
    """P(bust) of rolling on from ``total`` after ``rolls`` dice and then standing as
    soon as the rules allow (the least risky way to take one more roll)."""

    def risk(t: int, k: int) -> Fraction:
        if t > 15:
            return Fraction(1)
        may_roll, may_stand = variant_turn_options(t, k, rule1, rule2)
        if may_stand:
            return Fraction(0)
        return sum((risk(t + f, k + 1) for f in range(1, 7)), Fraction(0)) / 6

    return sum((risk(total + f, rolls + 1) for f in range(1, 7)), Fraction(0)) / 6


def dice_claims() -> list[Claim]:
    """The seed's "Sinn der Regeln", number by number."""
    from ..agents.fuenfzehn_tot_solver import rule_arithmetic

    out = []
    one = {
        t: Fraction(sum(1 for f in range(1, 7) if t + f > 15), 6) for t in range(9, 16)
    }
    fifteen_from_9 = Fraction(1, 6)
    forced = _roll_risk(9, 2, rule1=False, rule2=True)
    from ..agents import fuenfzehn_tot_solver as solver

    # situations: half, lowest/highest total standing, 0-3 players after
    situations = 0
    rolls_on = {2: 0, 4: 0}  # after two rolls / after four or more
    for half in (1, 2):
        for target in [None, *range(1, 15)]:
            for after in (0, 1, 2, 3):
                if half == 1 and target is None and after == 0:
                    continue
                sol = solver.solve_turn(
                    half,
                    [] if target is None else [target],
                    after,
                    exact=True,
                    rule1=False,
                )
                situations += 1
                for k in rolls_on:
                    rolls_on[k] += sol.choice[9][k] == "roll"
    out.append(
        Claim(
            "nine_is_safe",
            "supported" if one[9] == 0 and fifteen_from_9 > 0 else "refuted",
            f"One roll from 9 goes over 15 with probability {one[9]} and reaches 15 "
            f"with {fifteen_from_9}: the improvement the first rule forbids is free of "
            f"risk for one roll. The caveat: 9 is reached after two rolls at the "
            f"earliest, and then one more roll is the third, which the second rule "
            f"turns into two; that pair goes over 15 with probability {forced} "
            f"({float(forced):.3f}). Without rule 1 "
            f"(rule 2 kept), optimal play would roll on from 9 in {rolls_on[4]} of "
            f"{situations} situations after four or more rolls (one roll, no risk) and "
            f"in {rolls_on[2]} of {situations} after two (half, total standing, 0 to 3 "
            f"players after).",
            {
                "p_bust_one_roll_from_9": str(one[9]),
                "p_15_from_9": str(fifteen_from_9),
                "p_bust_third_and_fourth_from_9": str(forced),
                "situations": situations,
                "rolls_on_from_9_without_rule1_after_4": rolls_on[4],
                "rolls_on_from_9_without_rule1_after_2": rolls_on[2],
            },
        )
    )
    out.append(
        Claim(
            "ten_is_risky",
            "supported" if one[10] == Fraction(1, 6) else "refuted",
            "One roll goes over 15 with probability "
            + ", ".join(f"{one[t]} from {t}" for t in range(10, 16))
            + ": from 10 only a six kills, as the seed says.",
            {f"p_bust_one_roll_from_{t}": str(one[t]) for t in range(9, 16)},
        )
    )
    rows = {r["rolls"]: r for r in rule_arithmetic(5)}
    three, four = rows[3], rows[4]
    out.append(
        Claim(
            "three_rolls",
            "supported" if three["mean"] == Fraction(21, 2) else "refuted",
            f"Three dice average {three['mean']} = {float(three['mean'])} and go over "
            f"15 with probability {three['bust']} ({float(three['bust']):.3f}): well "
            f"away from the danger threshold.",
            {"mean": str(three["mean"]), "p_over_15": str(three["bust"])},
        )
    )
    ratio = four["bust"] / three["bust"]
    busts = {}
    for name, (r1, r2) in (
        ("with rule 2", (True, True)),
        ("without rule 2", (True, False)),
    ):
        seats = round_seats(1, 4, r1, r2)
        busts[name] = sum(seats.bust, Fraction(0)) / 4
    out.append(
        Claim(
            "four_rolls",
            "supported" if four["mean"] == 14 and ratio > 2 else "refuted",
            f"Four dice average {four['mean']} and go over 15 with probability "
            f"{four['bust']} ({float(four['bust']):.3f}), {float(ratio):.1f} times the "
            f"three-dice risk. In a first-half round of four optimal players a turn "
            f"busts with probability {float(busts['with rule 2']):.3f} with rule 2 and "
            f"{float(busts['without rule 2']):.3f} without it.",
            {
                "mean": str(four["mean"]),
                "p_over_15": str(four["bust"]),
                "ratio_to_three": float(ratio),
                "p_bust_per_turn_4p_half1": {k: float(v) for k, v in busts.items()},
            },
        )
    )
    return out


def game_seat_order(
    games: int,
    *,
    players: int = 4,
    spec: str = "heuristic",
    seed: int = 0,
    runner: Runner | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Whole Fünfzehn – tot games of ``players`` copies of ``spec``, seat 0 starting the
    first round (the ``starter`` reset option): each seat's loss count."""
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive integer, got {games!r}")
    seeds = np.random.SeedSequence(seed).generate_state(games, dtype=np.uint32).tolist()
    jobs = [(players, spec, tuple(c)) for c in _chunks(seeds, 50)]
    runner = runner or Runner(1)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=games, desc="fuenfzehn_tot seat order", unit="game")

    def done(i: int) -> None:
        if bar is not None:
            bar.update(len(jobs[i][2]))

    try:
        losses = sum(np.asarray(r) for r in runner.map(_seat_block, jobs, done))
    finally:
        if bar is not None:
            bar.close()
    return {
        "games": games,
        "players": players,
        "spec": spec,
        "losses": [int(x) for x in losses],
    }


def _seat_block(job: tuple[int, str, tuple[int, ...]]) -> list[int]:
    players, spec, seeds = job
    env = _cached(
        ("env", "fuenfzehn_tot_v0", players),
        lambda: envs.make("fuenfzehn_tot_v0", players=players),
    )
    bots = [agents_mod.make(spec, "fuenfzehn_tot_v0", seed=s) for s in range(players)]
    losses = [0] * players
    for game_seed in seeds:
        for s, bot in enumerate(bots):
            bot.reset(seed=game_seed + 7919 * (s + 1))
        scores = play_game(env, bots, seed=game_seed, options={"starter": 0})
        losses[int(np.argmin(scores))] += 1
    return losses


# --- the whole run --------------------------------------------------------------------
@dataclass
class TipsRun:
    """Everything ``parlour tips`` computed for one game."""

    config: TipsConfig
    command: str
    max_deals: int
    seed: int
    opponents: tuple[str, ...]
    results: list[TipResult]
    agreement: list[Agreement] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    rounds: list[RoundSeats] = field(default_factory=list)
    seat_order: dict[str, Any] | None = None
    paths: dict[str, Path] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "env": self.config.env,
            "env_options": self.config.env_options,
            "command": self.command,
            "seed": self.seed,
            "max_deals": self.max_deals,
            "opponents": list(self.opponents),
            "looks": list(self.results[0].schedule) if self.results else [],
            "boundaries": list(obf_boundaries(len(self.results[0].schedule)))
            if self.results
            else [],
            "tips": [r.as_dict() for r in self.results],
            "agreement": [a.as_dict() for a in self.agreement],
            "claims": [
                {
                    "name": c.name,
                    "verdict": c.verdict,
                    "finding": c.finding,
                    "numbers": c.numbers,
                }
                for c in self.claims
            ],
            "rounds": [
                {
                    "half": r.half,
                    "players": r.players,
                    "rules": r.rules,
                    "chance": [float(x) for x in r.chance],
                    "chance_exact": [str(x) for x in r.chance],
                    "bust": [float(x) for x in r.bust],
                }
                for r in self.rounds
            ],
            "seat_order": self.seat_order,
        }

    def summary(self) -> str:
        """A short plain-text table for the terminal."""
        lines = [
            f"{self.config.env}: {len(self.results)} tip(s), at most "
            f"{self.max_deals} deals each, seed {self.seed}"
        ]
        for r in self.results:
            t = r.tests[r.primary]
            lines.append(
                f"  {r.name:<16} {r.verdict + ('†' if r.shaky else ''):<21} "
                f"Δ{r.primary} {t.estimate:+.3f} "
                f"[{t.low:+.3f}, {t.high:+.3f}]  p={t.p:.3g}  n={t.n}  "
                f"MDE={t.mde:.3f}  predicted {r.hypothesis.prediction}"
            )
        shaky = [r for r in self.results if r.shaky]
        if shaky:
            # the same caution as the Markdown report's † (see _method_notes)
            worst = max(r.false_positive_rate or 0.0 for r in shaky)
            lines.append(
                "  † not yet reliable: too few deals differ between the arms, so the "
                f"z-test would report an effect that is not there up to {worst:.0%} "
                f"of the time (nominal 5%); run more deals (--games) or read the "
                "exact sign test in the report"
            )
        for c in self.claims:
            lines.append(f"  claim {c.name:<20} {c.verdict}")
        return "\n".join(lines)


def run_tips(
    game: str,
    *,
    tips: Sequence[str] | None = None,
    games: int | None = None,
    opponents: Sequence[str] | None = None,
    checkpoint: str | None = None,
    out: str | Path | None = None,
    seed: int | None = None,
    workers: int | None = 1,
    progress: bool = False,
    agreement_deals: int | None = None,
    calibrate: int = 2000,
    command: str | None = None,
) -> TipsRun:
    """Run a game's tip experiments (and Fünfzehn – tot's claims) and write the report.

    ``games`` caps the deals per tip (default: the config's ``max_deals``); for
    Fünfzehn – tot it is also the number of whole games of the seat-order simulation.
    ``opponents`` replaces the config's pool; ``checkpoint`` adds ``ckpt:PATH`` to it
    and, for German Whist, measures the checkpoint's agreement with the tips. ``out``
    is the directory for ``<game>.md``, ``.png`` and ``.json`` (None: nothing written).
    """
    config = load_config(game)
    env = config.env
    workers = default_workers() if workers is None else workers
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"--workers must be a positive integer, got {workers!r}")
    names = list(dict.fromkeys(tips)) if tips else [t.name for t in config.tips]
    chosen = [config.tip(n) for n in names]
    max_deals = config.max_deals if games is None else games
    if isinstance(max_deals, bool) or not isinstance(max_deals, int) or max_deals < 2:
        raise ValueError(f"--games must be an integer >= 2, got {max_deals!r}")
    seed = config.seed if seed is None else seed
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {seed!r}")
    pool = list(opponents) if opponents else list(config.opponents)
    if checkpoint:
        from .checkpoint import resolve

        pool.append(f"ckpt:{resolve(checkpoint)}")
    pool = list(dict.fromkeys(pool))
    context = {"env_options": config.env_options}
    for spec in pool:  # fail fast, with the agent's own message, before any game
        agents_mod.make(spec, env, seed=0, **context)
    for t in chosen:
        check_tip_switch(env, t.name, config.env_options)
    if command is None:
        command = f"parlour tips {env}" + "".join(f" --tip {n}" for n in (tips or []))
        command += f" --games {max_deals} --seed {seed}"
        if opponents:
            command += " --opponents " + " ".join(opponents)
        if checkpoint:
            command += f" --checkpoint {checkpoint}"
        if out is not None:
            command += f" --out {out}"
    run = TipsRun(config, command, max_deals, seed, tuple(pool), [])
    with Runner(workers) as runner:
        if env == "fuenfzehn_tot_v0":
            run.claims = dice_claims()
            run.rounds = round_seat_table(
                tuple(config.extra.get("round_players", [2, 3, 4]))
            )
            seat_games = (
                games
                if games is not None
                else int(config.extra.get("seat_games", 2000))
            )
            run.seat_order = game_seat_order(
                seat_games,
                players=int(config.env_options.get("players", 4)),
                seed=seed,
                runner=runner,
                progress=progress,
            )
        run.results = run_experiments(
            env,
            chosen,
            env_options=config.env_options,
            opponents=pool,
            max_deals=max_deals,
            looks=config.looks,
            seed=seed,
            primary=config.primary,
            runner=runner,
            progress=progress,
            calibrate=calibrate,
        )
    if env == "german_whist_v0":
        # The heuristic and random play are the reference columns of the agreement
        # table; a checkpoint, when given, is the subject.
        run.agreement = run_agreement(
            ([pool[-1]] if checkpoint else []) + ["heuristic", "random"],
            env_options=config.env_options,
            deals=agreement_deals or max(10, min(200, max_deals // 10)),
            seed=seed,
        )
    if out is not None:
        write_outputs(run, Path(out))
    return run


# --- report ---------------------------------------------------------------------------
def _pct(x: float, signed: bool = True) -> str:
    return f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}"


def _num(x: float, d: int) -> str:
    """``x`` with sign and ``d`` decimals, without a negative zero."""
    return f"{x if round(x, d) else 0.0:+.{d}f}"


def _interval(t: SequentialTest, scale: float = 1.0) -> str:
    """``+1.2 [+0.3, +2.1]``: one decimal for points of win rate, three for scores;
    more when a bound that is not zero would round to zero (its side of zero shows)."""
    d = 1 if scale == 100 else 3
    lo, hi = t.low * scale, t.high * scale
    while d < 4 and any(x and not round(x, d) for x in (lo, hi)):
        d += 1
    return f"{_num(t.estimate * scale, d)} [{_num(lo, d)}, {_num(hi, d)}]"


def _p_is(p: float) -> str:
    """``p = 0.012`` or ``p < 0.0001``."""
    return "p < 0.0001" if p < 1e-4 else f"p = {_p(p)}"


def _p(p: float) -> str:
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}" if p < 0.01 else f"{p:.3f}"


def _seed_quote(h: Hypothesis) -> list[str]:
    lines = [f"> {h.seed}"]
    if h.gloss:
        lines += [">", f"> *English:* {h.gloss}"]
    return lines


def render_report(run: TipsRun, chart: str | None = None) -> str:
    """The Markdown report of a run."""
    cfg = run.config
    title = {
        "german_whist_v0": "German Whist",
        "forty_fives_v0": "Forty-Fives",
        "fuenfzehn_tot_v0": "Fünfzehn – tot",
    }.get(cfg.env, cfg.env)
    lines = [
        f"# Strategy tips, tested: {title}",
        "",
        f"Generated by `{run.command}`; regenerate with the same command (same seed, "
        f"same numbers). Do not edit by hand. The hypotheses were written before the "
        f"runs, in `configs/tips/{cfg.env}.yaml`; the seed is "
        f"`shared/seeds/{cfg.seed_file}`.",
        "",
    ]
    if run.claims:
        lines += _claims_section(run)
    if run.results:
        lines += _experiments_section(run, chart)
    if run.agreement:
        lines += _agreement_section(run)
    return "\n".join(lines).rstrip() + "\n"


def _experiments_section(run: TipsRun, chart: str | None) -> list[str]:
    cfg = run.config
    res = run.results
    schedule = res[0].schedule
    primary = res[0].primary
    per_deal = games_per_deal(cfg.env, cfg.env_options, len(run.opponents))
    unit = "win rate" if primary == "win" else "score"
    opts = ", ".join(f"{k}={v}" for k, v in cfg.env_options.items())
    scale, suffix = (100, " pts") if primary == "win" else (1, "")
    lines = [
        "## Duplicate A/B experiments" if run.claims else "## Results",
        "",
        f"Env `{cfg.env}` ({opts}). Arm A is the full heuristic bot, arm B the same "
        f"bot with one tip switched off (`heuristic:-TIP`). Both arms play the same "
        f"deals (env seeds drawn from seed {run.seed}) against each opponent of the "
        f"pool ({', '.join(f'`{o}`' for o in run.opponents)}), every deal once with "
        f"the candidate in each seat (side), so each arm plays {per_deal} games per "
        f"deal. The unit of analysis is the deal: A's mean result minus B's over "
        f"those games. Up to {run.max_deals:,} deals per tip, looked at after "
        f"{', '.join(f'{n:,}' for n in schedule)} deals." + _episode_note(cfg),
        "",
        "| tip | predicted | verdict | deals | Δ "
        + unit
        + " A − B [95% CI]"
        + (" (points)" if primary == "win" else "")
        + " | p | MDE (80% power) |",
        "|---|---|---|---:|---|---:|---:|",
    ]
    for r in res:
        t = r.tests[primary]
        lines.append(
            f"| `{r.name}` | {r.hypothesis.prediction} | **{r.verdict}**"
            f"{'†' if r.shaky else ''} {'✓' if r.matched else '✗'} | {t.n:,} | "
            f"{_interval(t, scale)} | "
            f"{_p(t.p)} | {t.mde * scale:.{1 if scale == 100 else 3}f}{suffix} |"
        )
    lines += [
        "",
        "✓/✗: the verdict is / is not what the hypothesis predicted. Δ is in points of "
        "win rate (percentage points)."
        if primary == "win"
        else "✓/✗: the verdict is / is not what the hypothesis predicted. Δ is in "
        "reward units per game (Fünfzehn – tot: the loser −1, every other player "
        "+1/3, so a Δ of +0.1 is 7.5 points less loss rate with four players).",
        "",
    ]
    if any(r.shaky for r in res):
        lines += [
            "† Few deals differ between the arms here, so the z-test's normal "
            "approximation is off: on this tip's own data without an effect it would "
            "report one more often than 5% of the time (see *Calibration*). The "
            "tip's section gives the exact sign test, which does not rely on it.",
            "",
        ]
    if chart:
        lines += [f"![effect of each tip with its 95% interval]({chart})", ""]
    lines += _method_notes(res)
    lines += ["## Each tip", ""]
    for r in res:
        lines += _tip_section(r, primary, scale, suffix)
    return lines


def _episode_note(cfg: TipsConfig) -> str:
    """Say so when one env seed is more than one deal (a whole match or game)."""
    game = envs.make(cfg.env, raw=True, **cfg.env_options).game
    if getattr(game, "episode", None) == "match":
        return (
            ' Here an episode is a whole match, so a "deal" (one env seed) is a '
            "whole game of several deals, played to the end."
        )
    if cfg.env == "fuenfzehn_tot_v0":
        return ' Here a "deal" is one env seed: the dice of a whole game.'
    return ""


def _method_notes(res: list[TipResult]) -> list[str]:
    schedule = res[0].schedule
    bounds = obf_boundaries(len(schedule))
    rates = [r.false_positive_rate for r in res if r.false_positive_rate is not None]
    lines = [
        "### How to read this",
        "",
        "* **Paired, duplicate deals.** Both arms hold the same cards (dice) against "
        "the same opponents in the same seats, and both get the same random numbers, "
        "so the per-deal difference removes the luck of the deal.",
        f"* **Sequential test.** A paired z-test on the per-deal differences of the "
        f"primary endpoint at {len(schedule)} pre-planned looks, with O'Brien–Fleming "
        f"boundaries |z| ≥ {', '.join(f'{b:.3f}' for b in bounds)} (two-sided alpha "
        f"0.05 overall). A tip stops at the first look that crosses; the others run to "
        f"the last look.",
        "* **Intervals** are repeated 95% confidence intervals (estimate ± boundary × "
        "standard error at the stopping look), valid however the test stopped. "
        "**supported**: the interval lies above zero (the tip helps); **refuted**: "
        "below zero (the tip hurts); **no detectable effect**: it includes zero.",
        "* **p** is the stagewise-ordering p-value of the sequential design; it is "
        "below 0.05 exactly when a boundary was crossed.",
        "* **MDE**: the smallest true difference this design detects with 80% power at "
        "the deals run, (c_K + 0.842) × sd / √n. An effect smaller than that may exist "
        "where the verdict is *no detectable effect*.",
        "* **Arm A is shared**: it is the same bot for every tip, so it is played once "
        "and compared with each arm B; the tips' results are therefore correlated, but "
        "each one's test is valid on its own.",
    ]
    if rates:
        lines.append(
            "* **Calibration.** Resampling each tip's own centred per-deal "
            "differences (no effect by construction) through the same looks and "
            "boundaries gave "
            + (
                f"false-positive rates of {min(rates):.3f} to {max(rates):.3f}"
                if len(rates) > 1
                else f"a false-positive rate of {rates[0]:.3f}"
            )
            + " (nominal 0.05)."
        )
        lines.append(
            "  `tests/test_tips.py` also runs A/A experiments (both arms the same "
            "agent) on real games and on simulated data and checks that the harness "
            "reports an effect at no more than its nominal rate."
        )
        if max(rates) > CALIBRATION_WARN:
            lines.append(
                f"  **Warning:** a rate above {CALIBRATION_WARN} (tips marked †) means "
                "that with this few deals, or this few deals that differ between the "
                "arms, the normal approximation is poor: read those verdicts with the "
                "sign test, or run more deals."
            )
        lines.append(
            "* **Sign test.** Each tip's section also gives the exact two-sided sign "
            "test of the per-deal differences at the stopping look (deals where A did "
            "better against deals where B did; not adjusted for the looks), a check "
            "that needs no normal approximation."
        )
    lines.append("")
    return lines


def _tip_section(r: TipResult, primary: str, scale: float, suffix: str) -> list[str]:
    h = r.hypothesis
    t = r.tests[primary]
    how = (
        f"stopped at look {t.look} of {t.looks}"
        if t.crossed and t.look < t.looks
        else f"all {t.looks} looks"
    )
    effect = {
        "supported": "the full bot does better than the bot without the tip",
        "refuted": "the bot without the tip does better than the full bot",
        "no detectable effect": "no difference could be told from chance",
    }[r.verdict]
    level = "win rate" if primary == "win" else "mean score"
    lines = [
        f"### `{h.name}`",
        "",
        *_seed_quote(h),
        "",
        f"**Switch.** {h.switch}",
        "",
        f"**Predicted:** {h.prediction}. {h.why}",
        "",
        f"**Result: {r.verdict}** "
        f"({'as predicted' if r.matched else 'not as predicted'}): {effect}. "
        f"{t.n:,} deals ({how}); Δ {primary} = "
        f"{_interval(t, scale)}{suffix}, {_p_is(t.p)}; the minimum detectable effect "
        f"was {t.mde * scale:.{1 if scale == 100 else 3}f}{suffix}.",
        "",
        f"| opponent | A {level} | B {level} | Δ win rate [95% CI] (points) | "
        "Δ score [95% CI] |",
        "|---|---:|---:|---|---|",
    ]
    for i, o in enumerate(r.opponents):
        w = r.per_opponent[o]["win"]
        s = r.per_opponent[o]["score"]
        if primary == "win":
            a, b = (
                f"{_pct(r.rates('A', i), False)}%",
                f"{_pct(r.rates('B', i), False)}%",
            )
        else:
            a, b = (
                _num(r.rates("A", i, "score"), 3),
                _num(r.rates("B", i, "score"), 3),
            )
        lines.append(f"| `{o}` | {a} | {b} | {_interval(w, 100)} | {_interval(s)} |")
    w, s = r.tests["win"], r.tests["score"]
    lines += [
        f"| all | | | {_interval(w, 100)} | {_interval(s)} |",
        "",
        "Per-opponent rows are descriptive (the verdict is on the pooled row); the win "
        "rate of a side is its share of the games' top scores"
        + (
            "."
            if primary == "win"
            else " (with four players, three share the top score in a game with one "
            "loser, so it is a third of the rate of not losing)."
        ),
    ]
    pos, neg, p_sign = r.sign_test()
    lines.append(
        f"Sign test: A did better on {pos:,} deals, B on {neg:,} (the other "
        f"{t.n - pos - neg:,} tied), exact two-sided {_p_is(p_sign)}."
    )
    if r.false_positive_rate is not None:
        lines.append(
            f"Null calibration of this tip's test: {r.false_positive_rate:.3f} "
            f"false-positive rate (nominal 0.05)"
            + (
                f"; above {CALIBRATION_WARN}, so the z-test's p-value and interval "
                "are optimistic here and the sign test is the better guide."
                if r.shaky
                else "."
            )
        )
    lines.append("")
    return lines


def _agreement_section(run: TipsRun) -> list[str]:
    lines = [
        "## Agent agreement",
        "",
        *(
            []
            if any(a.agent.startswith("ckpt:") for a in run.agreement)
            else [
                "No checkpoint was given, so the table shows the reference agents "
                "only; `--checkpoint PATH` adds a trained agent as the first column "
                "(and to the opponent pool).",
                "",
            ]
        ),
        "How often each agent's decisions agree with what a tip prescribes, in the "
        "situations the tip speaks of (`training/tips.py: tip_situations`), over "
        f"{run.agreement[0].games} games against the heuristic (both seats). Rates "
        "with 95% Wilson intervals; n = situations met.",
        "",
        "| tip | situation → prescription | "
        + " | ".join(f"`{a.agent}`" for a in run.agreement)
        + " |",
        "|---|---|" + "---|" * len(run.agreement),
    ]
    what = {
        "win_cheaply": "wins a stage-1 trick as follower → with its lowest winner",
        "duck_duds": "could win a stage-1 trick for a dud (plain card below J) → "
        "lowest card of the led suit",
        "save_trumps": "stage 1, trumps and plain cards legal → a plain card",
        "long_suit": "stage-1 discard (void in the led suit) → not from its longest "
        "plain suit",
        "open_hands": f"stage 2, ≤ {SOLVER_CARDS} cards, a real choice → a card that "
        "keeps the most tricks exact play can take (towards 7)",
        "count_to_seven": f"stage 2, ≤ {SOLVER_CARDS} cards, a won position → a card "
        "that keeps the win",
    }
    for tip in AGREEMENT_TIPS:
        cells = []
        for a in run.agreement:
            iv = a.rate(tip)
            cells.append(
                "–"
                if iv is None
                else f"{_pct(iv.estimate, False)}% [{_pct(iv.low, False)}, "
                f"{_pct(iv.high, False)}] n={iv.n}"
            )
        lines.append(f"| `{tip}` | {what[tip]} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Contest rates: when the agent could win a stage-1 trick as follower, how "
        "often it did, by the prize (`value_prizes`: prizes worth more should be "
        "contested more) and by the third of stage 1 (`fight_late`: late prizes more).",
        "",
        "| tip | class | " + " | ".join(f"`{a.agent}`" for a in run.agreement) + " |",
        "|---|---|" + "---|" * len(run.agreement),
    ]
    classes = {
        "value_prizes": ("trump", "honour", "dud"),
        "fight_late": ("early", "middle", "late"),
    }
    for tip in CONTEST_TIPS:
        for kind in classes[tip]:
            cells = []
            for a in run.agreement:
                iv = a.contest_rate(tip, kind)
                cells.append(
                    "–" if iv is None else f"{_pct(iv.estimate, False)}% n={iv.n}"
                )
            lines.append(f"| `{tip}` | {kind} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def _claims_section(run: TipsRun) -> list[str]:
    cfg = run.config
    hyps = {c.name: c for c in cfg.claims}
    lines = [
        "## The seed's arithmetic, checked exactly",
        "",
        "Exact fractions from the dice distributions and the turn solver "
        "(`agents/fuenfzehn_tot_solver.py`); no sampling, so no intervals.",
        "",
        "| claim | verdict | finding |",
        "|---|---|---|",
    ]
    for c in run.claims:
        lines.append(f"| `{c.name}` | **{c.verdict}** | {c.finding} |")
    lines.append("")
    for c in run.claims:
        h = hyps.get(c.name)
        if h is None:
            continue
        lines += [
            f"### `{c.name}`",
            "",
            *_seed_quote(h),
            "",
            f"**Checked:** {h.switch}",
            "",
            f"**Predicted:** {h.prediction}",
            "",
            f"**Found:** {c.finding}",
            "",
        ]
    lines += _rounds_section(run)
    if run.seat_order:
        lines += _seat_order_section(run)
    return lines


def _rounds_section(run: TipsRun) -> list[str]:
    h = next((c for c in run.config.claims if c.name == "rule_value_by_seat"), None)
    lines = ["## Seat order and the value of each rule, per round", ""]
    if h is not None:
        lines += [
            *_seed_quote(h),
            "",
            f"**Checked:** {h.switch}",
            "",
            f"**Predicted:** {h.prediction}",
            "",
        ]
    lines += [
        "Every player plays the solver's round-optimal policy for the rules in force "
        "(the solver and the env take `rule1`/`rule2` options to switch a rule off). "
        "Seat 1 sets the first total. First half: P(taking the "
        "match); second half: P(winning the round and giving a match back). A fair "
        "share is 1/n.",
        "",
    ]
    by = {(r.half, r.players, r.rules): r for r in run.rounds}
    sizes = sorted({r.players for r in run.rounds})
    lines += [
        "**How unequal the seats are**: the spread between the best and the worst "
        "seat's chance (points), and the worst seat (first half: the most likely to "
        "take the match; second half: the least likely to win).",
        "",
        "| half | players | " + " | ".join(RULE_SETS) + " |",
        "|---|---:|" + "---|" * len(RULE_SETS),
    ]
    for half in (1, 2):
        for n in sizes:
            cells = []
            for rules in RULE_SETS:
                chance = [float(x) for x in by[(half, n, rules)].chance]
                worst = (max if half == 1 else min)(range(n), key=chance.__getitem__)
                spread = 100 * (max(chance) - min(chance))
                cells.append(f"{spread:.1f} (seat {worst + 1})")
            lines.append(f"| {half} | {n} | " + " | ".join(cells) + " |")
    lines.append("")
    n = 4 if 4 in sizes else sizes[-1]
    for half in (1, 2):
        what = "P(taking the match)" if half == 1 else "P(winning the round)"
        lines += [
            f"**{'First' if half == 1 else 'Second'} half, {n} players: {what} by "
            f"seat** (every size is in the JSON file)",
            "",
            "| rules | "
            + " | ".join(f"seat {i + 1}" for i in range(n))
            + " | P(bust) per turn |",
            "|---|" + "---:|" * (n + 1),
        ]
        for rules in RULE_SETS:
            r = by[(half, n, rules)]
            lines.append(
                f"| {rules} | "
                + " | ".join(f"{float(x):.3f}" for x in r.chance)
                + f" | {float(sum(r.bust) / n):.3f} |"
            )
        lines.append("")
    lines += _rule_value_lines(run, by)
    lines += _round_findings(by, sizes)
    return lines


def _round_findings(by: Mapping[tuple, RoundSeats], sizes: Sequence[int]) -> list[str]:
    """What the round tables say about the prediction, in numbers."""
    out = []
    for n in sizes:
        if (1, n, "both rules") not in by:
            continue
        spreads = {}
        for rules in RULE_SETS:
            chance = [float(x) for x in by[(1, n, rules)].chance]
            spreads[rules] = 100 * (max(chance) - min(chance))
        fairest = min(spreads, key=spreads.__getitem__)
        both = [float(x) for x in by[(1, n, "both rules")].chance]
        neither = [float(x) for x in by[(1, n, "neither")].chance]
        gain = [100 * (o - w) for w, o in zip(both, neither, strict=True)]
        best = max(range(n), key=gain.__getitem__)
        first = (
            ", who sets the first total"
            if best == 0
            else f"; to seat 1, who sets the first total, {gain[0]:+.1f}"
        )
        out.append(
            f"{n} players, first half: the seats are most equal with {fairest} "
            f"(spread {spreads[fairest]:.1f} points; both rules "
            f"{spreads['both rules']:.1f}, neither {spreads['neither']:.1f}); the two "
            f"rules together are worth most to seat {best + 1} "
            f"({gain[best]:+.1f} points of not taking the match){first}."
        )
    if not out:
        return []
    return ["**Found:**", "", *(f"* {line}" for line in out), ""]


def _rule_value_lines(run: TipsRun, by: Mapping[tuple, RoundSeats]) -> list[str]:
    """A rule's value to each seat: how much better that seat does with it."""
    lines = [
        "**The value of each rule to each seat** (four players; points of the seat's "
        "chance, positive = the rule helps that seat; a single rule is valued with the "
        "other one in force, the pair against neither):",
        "",
        "| half | rule | seat 1 | seat 2 | seat 3 | seat 4 |",
        "|---|---|---:|---:|---:|---:|",
    ]
    n = 4
    if (1, n, "both rules") not in by:
        return []
    for half in (1, 2):
        sign = -1 if half == 1 else 1  # half 1: less chance of the match is better
        both = by[(half, n, "both rules")].chance
        for rule, without in (
            ("rule 1", "rule 2 only"),
            ("rule 2", "rule 1 only"),
            ("both rules", "neither"),
        ):
            other = by[(half, n, without)].chance
            values = [sign * float(b - o) for b, o in zip(both, other, strict=True)]
            lines.append(
                f"| {half} | {rule} | "
                + " | ".join(f"{100 * v:+.1f}" for v in values)
                + " |"
            )
    lines.append("")
    return lines


def _seat_order_section(run: TipsRun) -> list[str]:
    so = run.seat_order
    assert so is not None
    h = next((c for c in run.config.claims if c.name == "seat_order"), None)
    lines = ["## Seat order in the whole game", ""]
    if h is not None:
        lines += [
            *_seed_quote(h),
            "",
            f"**Checked:** {h.switch}",
            "",
            f"**Predicted:** {h.prediction}",
            "",
        ]
    n, games = so["players"], so["games"]
    lines += [
        f"{games:,} whole games of {n} `{so['spec']}` players (both rules), seat 1 "
        f"starting the first round (`starter` reset option). P(losing the game) with "
        f"its 95% Wilson interval; a fair share is {1 / n:.3f}.",
        "",
        "| seat | P(losing the game) [95% CI] |",
        "|---|---|",
    ]
    intervals = [wilson(k, games) for k in so["losses"]]
    for i, iv in enumerate(intervals):
        lines.append(f"| {i + 1} | {iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}] |")
    fair = 1 / n
    unfair = [i + 1 for i, iv in enumerate(intervals) if not iv.low <= fair <= iv.high]
    worst = max(range(n), key=lambda i: intervals[i].estimate)
    lines += [
        "",
        f"**Found:** seat {worst + 1} loses most often "
        f"({intervals[worst].estimate:.3f}); the largest distance from a fair "
        f"{fair:.3f} is {max(abs(iv.estimate - fair) for iv in intervals):.3f}. "
        + (
            f"Seat(s) {', '.join(map(str, unfair))}: the 95% interval excludes a fair "
            f"share."
            if unfair
            else "Every seat's 95% interval includes a fair share."
        ),
        "",
    ]
    return lines


def plot_chart(run: TipsRun, path: Path) -> None:
    """Effect ± 95% interval per tip (pooled and per opponent); for Fünfzehn – tot also
    the round's seat chances under each rule set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = run.results
    panels = 2 if run.rounds else 1
    height = max(4.0 if panels > 1 else 2.5, 0.6 * len(res) + 1.5)
    fig, axes = plt.subplots(1, panels, figsize=(7.5 * panels, height))
    axes = np.atleast_1d(axes)
    ax = axes[0]
    primary = res[0].primary if res else "win"
    scale = 100 if primary == "win" else 1
    markers = ["s", "^", "v", "D", "P"]
    for row, r in enumerate(res):
        y = len(res) - 1 - row
        t = r.tests[primary]
        color = {"supported": "tab:green", "refuted": "tab:red"}.get(
            r.verdict, "tab:gray"
        )
        ax.errorbar(
            t.estimate * scale,
            y,
            xerr=[[(t.estimate - t.low) * scale], [(t.high - t.estimate) * scale]],
            fmt="o",
            color=color,
            capsize=4,
            lw=2,
            label="all opponents" if row == 0 else None,
        )
        for i, o in enumerate(r.opponents):
            po = r.per_opponent[o][primary]
            ax.plot(
                po.estimate * scale,
                y - 0.15 * (i + 1),
                markers[i % len(markers)],
                color="black",
                alpha=0.5,
                ms=5,
                label=o if row == 0 else None,
            )
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(res)), [r.name for r in reversed(res)])
    ax.set_ylim(-0.2 - 0.15 * len(res[0].opponents) if res else -0.5, len(res) - 0.5)
    ax.set_xlabel(
        "Δ win rate A − B (points)"
        if primary == "win"
        else "Δ score A − B (reward per game)"
    )
    ax.set_title(f"{run.config.env}: tip on (A) vs off (B), 95% CI")
    ax.grid(axis="x", alpha=0.3)
    if res:
        ax.legend(fontsize=8, loc="best")
    if run.rounds:
        ax = axes[1]
        n = 4 if any(r.players == 4 for r in run.rounds) else run.rounds[0].players
        width = 0.2
        for j, rules in enumerate(RULE_SETS):
            r = next(
                x for x in run.rounds if (x.half, x.players, x.rules) == (1, n, rules)
            )
            ax.bar(
                np.arange(n) + (j - 1.5) * width,
                [float(c) for c in r.chance],
                width,
                label=rules,
            )
        ax.axhline(1 / n, color="black", lw=0.8, ls="--")
        ax.set_xticks(range(n), [f"seat {i + 1}" for i in range(n)])
        ax.set_ylabel("P(taking the match)")
        ax.set_title(f"First-half round, {n} optimal players")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_outputs(run: TipsRun, out: Path) -> dict[str, Path]:
    """Write ``<game>.md``, ``<game>.png`` and ``<game>.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    stem = run.config.short
    paths = {
        "report": out / f"{stem}.md",
        "chart": out / f"{stem}.png",
        "json": out / f"{stem}.json",
    }
    plot_chart(run, paths["chart"])
    paths["report"].write_text(
        render_report(run, paths["chart"].name), encoding="utf-8"
    )
    paths["json"].write_text(
        json.dumps(run.as_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    run.paths = paths
    return paths


def default_workers() -> int:
    """Worker processes for ``parlour tips``: the machine's CPUs."""
    return max(1, os.cpu_count() or 1)


__all__ = [
    "CONFIG_DIR",
    "OBF_CONSTANTS",
    "Agreement",
    "Block",
    "Claim",
    "Hypothesis",
    "RoundSeats",
    "Runner",
    "SequentialTest",
    "TipResult",
    "TipsConfig",
    "TipsRun",
    "aa_experiment",
    "agreement",
    "crossing_probabilities",
    "dice_claims",
    "game_seat_order",
    "load_config",
    "look_schedule",
    "null_calibration",
    "obf_boundaries",
    "play_block",
    "render_report",
    "resolve_env",
    "round_seat_table",
    "round_seats",
    "run_experiments",
    "run_tips",
    "sequential_test",
    "tip_situations",
    "variant_turn_options",
    "verdict",
    "write_outputs",
]
