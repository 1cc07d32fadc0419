"""Multivariate combining: the pooled covariance (its diagonal is the scalar rule's T) and the
D2 pooled χ² test against the spec's test vector (spec 003 §5.4)."""

import numpy as np
import pytest
from scipy import stats

from harness.inference import combine, d2_test, pool, pool_covariance


def test_d2_reproduces_the_spec_test_vector():
    res = d2_test([2.25, 3.95, 6.24, 5.27, 2.81], k=4)
    print(f"r2 {res.r2:.5f}, D2 {res.statistic:.5f}, nu2 {res.df_den:.3f}, p {res.pvalue:.5f}")
    assert res.r2 == pytest.approx(0.20700, abs=5e-6)
    assert res.statistic == pytest.approx(0.59280, abs=5e-6)
    assert res.df_den == pytest.approx(59.199, abs=5e-4)
    assert res.pvalue == pytest.approx(0.66919, abs=5e-6)


def test_d2_edge_cases_and_vectorisation():
    same = d2_test([3.0, 3.0, 3.0], k=2)  # r2 = 0: the χ²_k limit
    assert same.r2 < 1e-20
    assert same.pvalue == pytest.approx(stats.chi2.sf(3.0, 2), rel=1e-9)
    assert d2_test([0.0, 9.0, 0.0, 9.0], k=5).pvalue == 1.0  # D2 < 0
    batch = d2_test(np.array([[2.25, 3.95, 6.24, 5.27, 2.81]] * 3), k=4)
    assert batch.pvalue.shape == (3,) and np.allclose(batch.pvalue, 0.66919, atol=5e-6)
    with pytest.raises(ValueError):
        d2_test([1.0], k=1)
    with pytest.raises(ValueError):
        d2_test([1.0, -1.0], k=1)


def test_pooled_covariance_diagonal_is_the_scalar_rule():
    rng = np.random.default_rng(3)
    m, k = 5, 3
    q = rng.normal(size=(m, k))
    a = rng.normal(size=(m, k, k))
    u = a @ np.swapaxes(a, -1, -2) + np.eye(k)
    for rule in ("partial", "full"):
        pooled = pool_covariance(q, u, rule=rule)
        scalar = combine(q[None], np.diagonal(u, axis1=-2, axis2=-1)[None], rule=rule)
        np.testing.assert_allclose(pooled.estimate, scalar.estimate[0])
        np.testing.assert_allclose(np.diagonal(pooled.between), scalar.between[0])
        if rule == "partial":
            np.testing.assert_allclose(np.diagonal(pooled.total), scalar.variance[0])
        np.testing.assert_allclose(pooled.total, pooled.total.T)
    expected = u.mean(axis=0) + np.cov(q.T, ddof=1) / m
    np.testing.assert_allclose(pool_covariance(q, u).total, expected)


def test_pool_results_expose_cov_params():
    rng = np.random.default_rng(4)
    m, k = 4, 2
    q = rng.normal(size=(m, k))
    u = np.stack([np.array([[1.0, 0.3], [0.3, 2.0]])] * m)
    res = pool(q, u, names=["a", "b"])
    cov = res.cov_params()
    assert list(cov.index) == ["a", "b"] and cov.loc["a", "b"] == pytest.approx(
        0.3 + np.cov(q.T, ddof=1)[0, 1] / m)
    np.testing.assert_allclose(np.sqrt(np.diag(cov)), res.bse.to_numpy())
    with pytest.raises(ValueError, match="covariance"):
        pool(q, np.diagonal(u, axis1=-2, axis2=-1)).cov_params()
