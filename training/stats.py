"""Confidence intervals for arena and experiment results.

Win rates use the Wilson score interval (good coverage near 0 and 1, unlike the normal
approximation). Mean scores, and the per-deal differences of duplicate play, use the
Student t interval on the mean (the normal one overstates the confidence of a mean of
a handful of values: with 5 values the 95% quantile is 2.78, not 1.96); for duplicate
play that is the paired interval, which removes the luck of the deal from the
comparison. The t quantile is computed here (`t_quantile`), so scipy is not needed at
run time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import numpy as np

Z95 = 1.959963984540054  # two-sided 95% normal quantile


@dataclass(frozen=True)
class Interval:
    """An estimate with a 95% confidence interval."""

    estimate: float
    low: float
    high: float
    n: int

    def __str__(self) -> str:
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def wilson(successes: float, n: int, z: float = Z95) -> Interval:
    """Wilson score interval for a proportion (a draw may count as half a success)."""
    if n <= 0:
        raise ValueError("a proportion needs at least one trial")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in 0..{n}, got {successes}")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half), n)


def t_two_sided(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` degrees of freedom (integer ``df``):
    the closed forms of Abramowitz & Stegun 26.7.3 and 26.7.4."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    theta = math.atan(abs(t) / math.sqrt(df))
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for k in range(2, df, 2):  # (1·3···(k-1)) / (2·4···k) cos^k
            term *= c2 * (k - 1) / k
            total += term
        return s * total
    if df == 1:
        return 2 * theta / math.pi
    term, total = 1.0, 1.0
    for k in range(3, df, 2):  # (2·4···(k-1)) / (1·3···k) cos^(k-1), after cos θ
        term *= c2 * (k - 1) / k
        total += term
    return 2 / math.pi * (theta + s * math.sqrt(c2) * total)


# Above this many degrees of freedom the Cornish-Fisher series (to 1/df^3) agrees with
# the exact quantile to better than 1e-9, and the sums above would be long.
_T_SERIES_DF = 200


def t_quantile(df: int, confidence: float = 0.95) -> float:
    """The two-sided ``confidence`` quantile of Student's t with ``df`` degrees of
    freedom (1.96 as ``df`` grows; 12.71 for one degree of freedom at 95%)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    if df > _T_SERIES_DF:
        z = NormalDist().inv_cdf(0.5 + confidence / 2)
        g1 = (z**3 + z) / 4
        g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
        g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
        return z + g1 / df + g2 / df**2 + g3 / df**3
    # bisection on the angle atan(t / sqrt(df)), where the probability is monotone
    lo, hi = 0.0, math.pi / 2
    for _ in range(100):
        mid = (lo + hi) / 2
        if t_two_sided(math.sqrt(df) * math.tan(mid), df) < confidence:
            lo = mid
        else:
            hi = mid
    return math.sqrt(df) * math.tan((lo + hi) / 2)


def mean_interval(values: Sequence[float], z: float | None = None) -> Interval:
    """Mean with a 95% Student t interval (sample standard deviation; ``z`` replaces
    the t quantile when given)."""
    n = len(values)
    if n == 0:
        raise ValueError("a mean needs at least one value")
    mean = math.fsum(values) / n
    if n == 1:
        return Interval(mean, -math.inf, math.inf, 1)
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    q = t_quantile(n - 1) if z is None else z
    half = q * math.sqrt(var / n)
    return Interval(mean, mean - half, mean + half, n)


# --- group-sequential tests ----------------------------------------------------------
# A paired z-test of per-deal differences, looked at up to K times at equal steps, with
# O'Brien–Fleming boundaries c_K * sqrt(K / k) at look k of K: a two-sided overall
# alpha of 0.05. The interval at the stopping look is the repeated confidence interval
# (estimate ± boundary × standard error); the p-value is the stagewise-ordering p-value
# of the design (below 0.05 exactly when a boundary was crossed). The strategy-tips
# harness (`parlour.training.tips`) is its user; tests/test_sequential.py checks the
# boundaries against scipy's multivariate normal.
ALPHA = 0.05
POWER = 0.8
Z_POWER = 0.8416212335729143  # one-sided normal quantile of POWER
#: O'Brien–Fleming constants c_K for K equally spaced looks, two-sided alpha 0.05
#: (Jennison & Turnbull, "Group Sequential Methods", table 2.3); the boundary at look k
#: is c_K * sqrt(K / k). `crossing_probabilities` recomputes the crossing probability.
OBF_CONSTANTS = {1: 1.95996, 2: 1.97742, 3: 2.00435, 4: 2.02429, 5: 2.04033, 6: 2.05313}
MIN_LOOK = 10  # fewer deals than this per look and the design uses fewer looks

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
