"""Utility metrics of released data (spec 004 §3–§4, §7.3) against independent computations."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import rel_entr

from harness.metrics.accuracy import (
    abs_mean_error,
    improvement_pct,
    ks_distance,
    l2_error,
    mean_bernoulli_kl,
    relative_mean_difference_pct,
    rmse,
)


def test_ks_distance_matches_scipy():
    rng = np.random.default_rng(1)
    x = rng.exponential(size=(3, 500))
    d = ks_distance(x, stats.expon.cdf, scale=1e3)
    for r in range(3):
        assert d[r] == pytest.approx(1e3 * stats.kstest(x[r], "expon").statistic)


def test_mean_bernoulli_kl_matches_rel_entr_and_is_infinite_at_0_or_1():
    rng = np.random.default_rng(2)
    p, q = rng.random((2, 100)), rng.random((2, 100))
    ref = (rel_entr(p, q) + rel_entr(1 - p, 1 - q)).mean(axis=-1)
    assert np.allclose(mean_bernoulli_kl(p, q), ref)
    assert mean_bernoulli_kl(np.array([0.0, 1.0]), np.array([0.2, 0.7])) == pytest.approx(
        (np.log(1 / 0.8) + np.log(1 / 0.7)) / 2)
    q[1, 5] = 1.0
    out = mean_bernoulli_kl(p, q)
    assert np.isfinite(out[0]) and out[1] == np.inf


def test_simple_metrics():
    x = np.array([[1.0, 2.0, 6.0], [0.0, 0.0, 3.0]])
    assert np.allclose(abs_mean_error(x, 2.0), [1.0, 1.0])
    assert np.allclose(abs_mean_error(x, 2.0, valid=np.array([[True, True, False]] * 2)),
                       [0.5, 2.0])
    assert np.allclose(relative_mean_difference_pct(x, 2.0), [50.0, 50.0])
    # the intercept is part of the L2 error (spec A19)
    assert l2_error(np.array([0.3, 1.0, 1.4]), np.array([0.0, 1.0, 1.0])) == pytest.approx(0.5)
    assert rmse(np.array([1.0, 3.0]), np.array([2.0, 2.0])) == pytest.approx(1.0)
    assert improvement_pct(13.08, 0.40) == pytest.approx(3170.0)  # the paper's Table 3 value
