"""Conjugate posteriors: beta-binomial and Dirichlet-multinomial."""

import numpy as np
import pytest

from harness.data import CountBatch
from harness.models import BetaBinomial, DirichletMultinomial, dirichlet_draw, multinomial_counts


def test_beta_binomial_statistics_and_bounds():
    data = CountBatch(np.array([[30, 10], [35, 5]]), 40)
    (s,) = BetaBinomial(1 / 3, 1 / 3).sufficient_statistics(data)
    assert s.name == "n1" and s.value.tolist() == [10, 5] and s.sensitivity == 1.0
    assert (s.lower, s.upper) == (0.0, 40.0)
    (r,) = BetaBinomial(1 / 3, 0.5, bounds="reviewer").sufficient_statistics(data)
    assert r.lower == pytest.approx(-1 / 3) and r.upper == pytest.approx(40.5)


def test_beta_binomial_posterior_moments():
    rng = np.random.default_rng(1)
    data = CountBatch(np.tile([[30, 10]], (200_000, 1)), 40)
    theta = BetaBinomial(1 / 3, 1 / 3).posterior_draw({"n1": data.counts[:, 1]}, data, rng)
    a, b = 1 / 3 + 10, 1 / 3 + 30
    mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    assert theta[:, 1].mean() == pytest.approx(mean, abs=4 * np.sqrt(var / 200_000))
    assert theta[:, 1].var() == pytest.approx(var, rel=0.02)
    assert np.allclose(theta.sum(axis=1), 1)


def test_reviewer_bound_admits_zero_parameter():
    rng = np.random.default_rng(2)
    data = CountBatch(np.array([[40, 0]]), 40)
    theta = BetaBinomial(1 / 3, 1 / 3).posterior_draw({"n1": np.array([-1 / 3])}, data, rng)
    assert theta[0, 1] == 0.0  # Beta(0, ...) is the point mass at 0


def test_dirichlet_multinomial_posterior_mean():
    rng = np.random.default_rng(3)
    alpha = (0.5, 0.5, 0.5, 0.5)
    counts = np.array([5, 10, 20, 65])
    data = CountBatch(np.tile(counts, (100_000, 1)), 100, levels=(0, 1, 2, 3))
    model = DirichletMultinomial(alpha)
    theta = model.posterior_draw({"counts": data.counts}, data, rng)
    expected = (counts + 0.5) / (100 + 2)
    assert np.allclose(theta.mean(axis=0), expected, atol=0.002)
    synth = model.predictive_draw(theta, data, rng)
    assert (synth.sum(axis=1) == 100).all()


def test_dirichlet_draw_underflow_fallback():
    rng = np.random.default_rng(4)
    out = dirichlet_draw(np.array([[1e-320, 1e-321]]), rng)
    assert out.tolist() == [[1.0, 0.0]]


def test_binary_multinomial_counts_is_binomial():
    rng = np.random.default_rng(5)
    c = multinomial_counts(50, np.tile([0.7, 0.3], (100_000, 1)), rng)
    assert (c.sum(axis=1) == 50).all()
    assert c[:, 1].mean() == pytest.approx(15, abs=4 * np.sqrt(50 * 0.21 / 100_000))


def test_invalid_prior():
    with pytest.raises(ValueError):
        BetaBinomial(0, 1)
    with pytest.raises(ValueError):
        BetaBinomial(1, 1, bounds="other")
