"""Combining rules (Bowen & Liu Eqs. 9-11) and the pooled results object."""

import numpy as np
import pytest
from scipy import stats

from harness.inference import cell_proportions, combine, pool, t_quantile


def _by_hand(q, u, m):
    qbar = sum(q) / m
    b = sum((x - qbar) ** 2 for x in q) / (m - 1)
    w = sum(u) / m
    t = b / m + w
    nu = (m - 1) * (1 + m * w / b) ** 2
    half = stats.t.ppf(0.975, nu) * t**0.5
    return qbar, b, w, t, nu, qbar - half, qbar + half


def test_partial_rule_matches_hand_computation():
    q = [0.20, 0.25, 0.15, 0.30, 0.22]
    u = [0.004, 0.005, 0.003, 0.006, 0.0045]
    p = combine(np.array(q)[None, :, None], np.array(u)[None, :, None])
    expected = _by_hand(q, u, 5)
    got = (p.estimate, p.between, p.within, p.variance, p.df, p.ci_low, p.ci_high)
    for g, e in zip(got, expected, strict=True):
        assert g.item() == pytest.approx(e, rel=1e-12)
    assert p.usable.item()


def test_full_synthesis_rule_and_its_fallback():
    q = np.array([0.1, 0.5, 0.9])[None, :, None]
    u = np.full_like(q, 0.01)
    p = combine(q, u, rule="full")
    b = np.var([0.1, 0.5, 0.9], ddof=1)
    assert p.variance.item() == pytest.approx((1 + 1 / 3) * b - 0.01)
    # B tiny relative to W: T_f <= 0 falls back to W with a normal quantile
    q2 = np.array([0.5, 0.5001, 0.4999])[None, :, None]
    p2 = combine(q2, np.full_like(q2, 0.01), rule="full")
    assert p2.variance.item() == pytest.approx(0.01)
    assert np.isinf(p2.df.item())


def test_edge_cases_b_zero_t_zero_and_single_set():
    q = np.array([[[0.3], [0.3], [0.3]]])
    p = combine(q, np.full_like(q, 0.002))
    assert np.isinf(p.df.item()) and p.usable.item()  # B = 0, W > 0: normal quantile
    half = stats.norm.ppf(0.975) * np.sqrt(0.002)
    assert p.ci_high.item() == pytest.approx(0.3 + half)
    z = np.zeros((1, 5, 1))
    p0 = combine(z, z)  # T = 0: CI undefined, unusable
    assert not p0.usable.item() and np.isnan(p0.ci_low.item())
    p1 = combine(np.array([[[0.4]]]), np.array([[[0.0025]]]))  # m = 1: Wald z
    assert np.isnan(p1.between.item()) and p1.variance.item() == 0.0025
    assert p1.ci_low.item() == pytest.approx(0.4 - stats.norm.ppf(0.975) * 0.05)


def test_vectorised_equals_per_replicate():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(50, 5, 2))
    u = rng.uniform(0.01, 0.1, size=(50, 5, 2))
    p = combine(q, u)
    for r in range(50):
        for e in range(2):
            exp = _by_hand(list(q[r, :, e]), list(u[r, :, e]), 5)
            assert p.ci_low[r, e] == pytest.approx(exp[5], rel=1e-10)


def test_t_quantile_inf_and_finite():
    out = t_quantile(np.array([np.inf, 4.0, 1e9]), 0.975)
    assert out[0] == pytest.approx(stats.norm.ppf(0.975))
    assert out[1] == pytest.approx(stats.t.ppf(0.975, 4))
    assert out[2] == pytest.approx(stats.norm.ppf(0.975), rel=1e-6)


def test_bad_rule_and_shapes():
    with pytest.raises(ValueError, match="partial, full|allowed|must be one of"):
        combine(np.zeros((1, 2, 1)), np.zeros((1, 2, 1)), rule="rubin")
    with pytest.raises(ValueError):
        combine(np.zeros((1, 2, 1)), np.zeros((1, 3, 1)))


def test_partial_rule_covers_under_its_model():
    # Under the partial-synthesis model q_j = Q + e_j (between-set noise) the rule is calibrated.
    rng = np.random.default_rng(7)
    r, m, n, pi = 20000, 5, 400, 0.3
    phat = rng.binomial(n, pi, size=r) / n  # the "original" estimate
    sets = rng.binomial(n, phat[:, None], size=(r, m)) / n  # MS-like synthetic sets
    p = combine(sets[..., None], (sets * (1 - sets) / n)[..., None])
    cover = np.mean((p.ci_low[:, 0] <= pi) & (pi <= p.ci_high[:, 0]))
    assert abs(cover - 0.95) < 4 * np.sqrt(0.95 * 0.05 / r) + 0.01


def test_pool_results_object():
    res = pool([[1.0, 2.0], [1.2, 2.1], [0.9, 2.3]], [[0.1, 0.2]] * 3, names=["a", "b"])
    assert list(res.params.index) == ["a", "b"]
    assert res.params["a"] == pytest.approx(31 / 30)
    ci = res.conf_int()
    assert (ci[0] < res.params).all() and (res.params < ci[1]).all()
    assert res.tvalues["b"] == pytest.approx(res.params["b"] / res.bse["b"])
    assert {"coef", "std err", "df", "B", "W"} <= set(res.summary().columns)


def test_cell_proportions():
    p, v = cell_proportions(np.array([[10, 30]]), 40)
    assert p.tolist() == [[0.25, 0.75]]
    assert v[0, 0] == pytest.approx(0.25 * 0.75 / 40)
