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
from dataclasses import dataclass
from statistics import NormalDist

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
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "n": self.n,
        }


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
