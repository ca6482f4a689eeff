"""The group-sequential statistics of `parlour.training.stats`, checked against scipy.

The boundaries and crossing probabilities are computed here by numerical integration
(`crossing_probabilities`); scipy's multivariate normal distribution function, an
independent method (Genz's quasi-Monte Carlo integration over the joint law of the
looks' z-statistics), must give the same numbers. scipy is a test-only dependency.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from parlour.training import stats

scipy_stats = pytest.importorskip("scipy.stats")


def _look_covariance(fractions: list[float]) -> np.ndarray:
    """Covariance of the z-statistics at information fractions t_i: a Brownian motion
    standardised at each look, so corr(Z_i, Z_j) = sqrt(t_i / t_j) for t_i <= t_j."""
    t = np.asarray(fractions, dtype=float)
    return np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))


def _scipy_crossed_by(fractions: list[float], bounds: list[float]) -> float:
    """P(|Z_k| >= bounds[k] at some look), from scipy's multivariate normal."""
    k = len(fractions)
    if k == 1:
        return float(2 * scipy_stats.norm.sf(bounds[0]))
    # scipy's integration error is about 1e-5 (its abseps), a seed makes it repeatable;
    # the comparisons below allow 2e-5.
    mvn = scipy_stats.multivariate_normal(
        mean=np.zeros(k), cov=_look_covariance(fractions), seed=7
    )
    b = np.asarray(bounds, dtype=float)
    stay = mvn.cdf(b, lower_limit=-b)
    return 1.0 - float(stay)


def test_normal_cdf_and_power_quantile_match_scipy():
    x = np.linspace(-6, 6, 49)
    np.testing.assert_allclose(
        stats.normal_cdf(x), scipy_stats.norm.cdf(x), rtol=0, atol=1e-14
    )
    assert stats.Z_POWER == pytest.approx(scipy_stats.norm.ppf(stats.POWER), abs=1e-12)
    assert stats.OBF_CONSTANTS[1] == pytest.approx(
        scipy_stats.norm.isf(stats.ALPHA / 2), abs=1e-5
    )


@pytest.mark.parametrize("k", sorted(stats.OBF_CONSTANTS))
def test_obf_boundaries_spend_alpha_by_scipy(k):
    """The tabled O'Brien–Fleming constants spend a two-sided 0.05 over k equal looks,
    by scipy's independent integration, and each look's crossing probability from the
    recursion matches scipy's."""
    fractions = [(i + 1) / k for i in range(k)]
    bounds = list(stats.obf_boundaries(k))
    assert bounds[-1] == pytest.approx(stats.OBF_CONSTANTS[k])
    assert bounds[0] == pytest.approx(stats.OBF_CONSTANTS[k] * math.sqrt(k))
    ours = stats.crossing_probabilities(fractions, bounds)
    assert _scipy_crossed_by(fractions, bounds) == pytest.approx(0.05, abs=2e-4)
    for j in range(1, k + 1):
        by_scipy = _scipy_crossed_by(fractions[:j], bounds[:j])
        assert sum(ours[:j]) == pytest.approx(by_scipy, abs=2e-5)


def test_crossing_probabilities_unequal_looks_and_p_value_threshold():
    """Unequal information fractions, and the ``last`` threshold that the stagewise
    p-value uses, against scipy."""
    fractions = [0.2, 0.55, 1.0]
    bounds = [3.1, 2.4, 2.05]
    ours = stats.crossing_probabilities(fractions, bounds, last=1.7)
    by_scipy = _scipy_crossed_by(fractions, [3.1, 2.4, 1.7])
    assert sum(ours) == pytest.approx(by_scipy, abs=2e-5)


def test_sequential_p_value_is_the_scipy_crossing_probability():
    """A test stopped at the last look without crossing: its p-value is P(crossing an
    earlier boundary, or |Z_K| >= |z| at the last), here by scipy."""
    rng = np.random.default_rng(11)
    values = rng.normal(0.05, 1.0, size=300)
    schedule = stats.look_schedule(300, 3)
    test = stats.sequential_test(values, schedule)
    assert not test.crossed and test.look == 3
    bounds = list(stats.obf_boundaries(3))
    by_scipy = _scipy_crossed_by([1 / 3, 2 / 3, 1.0], bounds[:2] + [abs(test.z)])
    assert test.p == pytest.approx(by_scipy, abs=2e-5)
