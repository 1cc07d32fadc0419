"""The normal / inverse-gamma model (Bowen & Liu §4.2), inverse-gamma draws, the mean and
variance estimators with their within-set variances, the scaled-width metric and the λ of
Eq. 7 (spec 000 §2.3)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from experiments.bowen_liu.paper_numbers import SMOOTH_LAMBDA, SMOOTH_LAMBDA_LOG_EPSILON
from harness.data import RecordBatch
from harness.inference import sample_mean, sample_mean_and_variance, sample_variance
from harness.metrics import performance_metrics
from harness.models import NormalInverseGamma, inverse_gamma_draw
from harness.privacy import PrivacyLedger, smoothed_histogram_weight


# --- inverse-gamma draws ------------------------------------------------------------------------
@pytest.mark.parametrize("shape,scale", [(19.5, 39.0), (3.0, 0.5), (499.5, 2000.0)])
def test_inverse_gamma_moments_and_ks(shape, scale):
    rng = np.random.default_rng(1)
    x = inverse_gamma_draw(np.full(100_000, shape), scale, rng)
    ref = stats.invgamma(a=shape, scale=scale)
    assert x.mean() == pytest.approx(ref.mean(), abs=5 * ref.std() / math.sqrt(x.size))
    if shape > 4:  # finite fourth moment: SE of the variance is well defined
        assert x.var() == pytest.approx(ref.var(), rel=0.05)
    assert stats.kstest(x[:20_000], ref.cdf).pvalue > 1e-3


def test_inverse_gamma_broadcasts_per_element_parameters():
    rng = np.random.default_rng(2)
    scale = np.array([[1.0], [100.0]])
    x = inverse_gamma_draw(10.0, np.repeat(scale, 50_000, axis=1), rng)
    assert x.shape == (2, 50_000)
    assert x.mean(axis=1) == pytest.approx(scale[:, 0] / 9.0, rel=0.02)
    assert np.all(inverse_gamma_draw(5.0, np.zeros(3), rng) == 0)
    with pytest.raises(ValueError):
        inverse_gamma_draw(0.0, 1.0, rng)


# --- the model object ---------------------------------------------------------------------------
def _batch(x):
    return RecordBatch(np.asarray(x, dtype=float)[..., None])


def test_sufficient_statistics_sensitivities_bounds_and_budget():
    x = np.array([[-1.0, 0.0, 2.0, 3.0], [0.5, 0.5, 0.5, 1.5]])
    model = NormalInverseGamma(-3.0, 4.0)
    mean, var = model.sufficient_statistics(_batch(x))
    assert mean.name == "mean" and var.name == "variance"
    assert np.allclose(mean.value, x.mean(axis=1)) and np.allclose(var.value, x.var(1, ddof=1))
    n, w = 4, 7.0
    assert mean.sensitivity == pytest.approx(w / n) and var.sensitivity == pytest.approx(w**2 / n)
    assert (mean.lower, mean.upper) == (-3.0, 4.0)
    assert var.lower == 0.0 and var.upper == pytest.approx(w**2 / 4 * n / (n - 1))
    assert mean.budget_share + var.budget_share == pytest.approx(1.0)
    # the variance bound is attained by half the records at each bound
    extreme = np.array([[-3.0, -3.0, 4.0, 4.0]])
    assert extreme.var(ddof=1) == pytest.approx(var.upper)


def test_posterior_matches_the_analytic_posterior():
    """σ² | x ~ Inv-Gamma((n−1)/2, (n−1)S²/2) and, integrating σ² out, (μ − x̄)/(S/√n) ~ t_{n−1}
    (Bowen & Liu §4.2 with prior ∝ σ⁻²)."""
    rng = np.random.default_rng(3)
    n, xbar, s2, reps = 20, 0.7, 2.5, 40_000
    model = NormalInverseGamma(-10.0, 10.0)
    data = RecordBatch(np.zeros((reps, n, 1)))
    theta = model.posterior_draw({"mean": np.full(reps, xbar), "variance": np.full(reps, s2)},
                                 data, rng)
    sigma2 = stats.invgamma(a=(n - 1) / 2, scale=(n - 1) * s2 / 2)
    assert stats.kstest(theta[:, 1], sigma2.cdf).pvalue > 1e-3
    t = (theta[:, 0] - xbar) / math.sqrt(s2 / n)
    assert stats.kstest(t, stats.t(df=n - 1).cdf).pvalue > 1e-3
    # a sanitized S²* clamped to 0 is floored, so the posterior stays proper and positive
    zero = model.posterior_draw({"mean": np.zeros(3), "variance": np.zeros(3)},
                                RecordBatch(np.zeros((3, n, 1))), rng)
    assert np.all(zero[:, 1] > 0) and np.all(np.isfinite(zero))


def test_predictive_draw_is_clamped_normal():
    rng = np.random.default_rng(4)
    model = NormalInverseGamma(-3.0, 4.0)
    theta = np.array([[0.0, 1.0], [3.5, 4.0]])
    out = model.predictive_draw(theta, RecordBatch(np.zeros((2, 50_000, 1))), rng)
    assert isinstance(out, RecordBatch) and out.values.shape == (2, 50_000, 1)
    x = out.values[..., 0]
    assert x.min() >= -3.0 and x.max() <= 4.0
    assert np.mean(x[0] == -3.0) == pytest.approx(stats.norm.cdf(-3), abs=0.001)
    assert np.mean(x[1] == 4.0) == pytest.approx(stats.norm.sf(0.25), abs=0.01)
    unclamped = NormalInverseGamma(-3.0, 4.0, clamp_synthetic=False).predictive_draw(
        theta, RecordBatch(np.zeros((2, 50_000, 1))), rng)
    assert unclamped.values.max() > 4.0


# --- estimators ---------------------------------------------------------------------------------
def test_mean_and_variance_estimators_match_numpy_and_scipy():
    rng = np.random.default_rng(5)
    x = rng.gamma(2.0, size=(7, 5, 60))  # (R, m, n), skewed so κ ≠ 0
    n = x.shape[-1]
    mean, v_mean = sample_mean(x)
    assert np.allclose(mean, x.mean(-1)) and np.allclose(v_mean, x.var(-1, ddof=1) / n)
    s2, v_s2 = sample_variance(x)
    kappa = stats.kurtosis(x, axis=-1, fisher=True, bias=True)  # m4/m2² − 3
    assert np.allclose(s2, x.var(-1, ddof=1))
    assert np.allclose(v_s2, s2**2 * (2 / (n - 1) + kappa / n))
    # a constant set: s² = 0 and a zero within variance, not NaN
    s2c, vc = sample_variance(np.ones((2, 10)))
    assert np.all(s2c == 0) and np.all(vc == 0)


def test_variance_estimator_is_close_to_the_true_sampling_variance():
    """For normal data Var(s²) = 2σ⁴/(n − 1); the estimate averages to about that."""
    rng = np.random.default_rng(6)
    n = 100
    x = rng.normal(0, 2.0, size=(20_000, n))
    s2, v = sample_variance(x)
    assert s2.var() == pytest.approx(2 * 16 / (n - 1), rel=0.05)
    assert v.mean() == pytest.approx(2 * 16 / (n - 1), rel=0.05)


# --- scaled CI width ----------------------------------------------------------------------------
def test_scaled_width_and_its_mcse():
    rows = pd.DataFrame({
        "scenario": "s", "method": "A", "epsilon": 1.0, "estimand": "sigma2", "log_epsilon": 0.0,
        "truth": 4.0, "estimate": [3.0, 5.0, 4.5, 4.0], "variance": 1.0,
        "ci_low": [1.0, 2.0, 3.0, 2.5], "ci_high": [5.0, 8.0, 6.0, 6.5], "usable": True,
    })
    out = performance_metrics(rows).set_index("metric")
    widths = np.array([4.0, 6.0, 3.0, 4.0])
    assert out.loc["width", "value"] == pytest.approx(widths.mean())
    assert out.loc["scaled_width", "value"] == pytest.approx(widths.mean() / 4.0)
    assert out.loc["scaled_width", "mcse"] == pytest.approx(widths.std(ddof=1) / 2 / 4.0)


# --- the smoothed histogram's λ (Eq. 7) ------------------------------------------------------
def test_lambda_table_matches_spec_to_four_decimals():
    for (n, k), values in SMOOTH_LAMBDA.items():
        for log_eps, expected in zip(SMOOTH_LAMBDA_LOG_EPSILON, values, strict=True):
            ledger = PrivacyLedger()
            lam = smoothed_histogram_weight(n, k, epsilon=math.exp(log_eps), ledger=ledger)
            print(f"n={n} K={k} ln ε={log_eps:+d}: λ = {float(lam):.4f} (spec {expected:.4f})")
            assert round(float(lam), 4) == pytest.approx(expected, abs=1e-12)
            assert ledger.total_epsilon() == pytest.approx(math.exp(log_eps))
            assert ledger.entries[0].mechanism == "smoothed_histogram_weight"


def test_lambda_limits_and_privacy_bound():
    """λ → 1 as ε → 0, λ → 0 as ε → ∞, λ → K/(K + ε) as n → ∞ (§4.2, point 2); and with λ of
    Eq. 7 the per-record density ratio (1 + K(1 − λ)/(nλ))^n equals e^ε."""
    led = PrivacyLedger()
    assert smoothed_histogram_weight(40, 7, epsilon=1e-6, ledger=led) == pytest.approx(1, abs=1e-5)
    assert smoothed_histogram_weight(40, 7, epsilon=1e3, ledger=led) < 1e-6
    assert smoothed_histogram_weight(1e8, 21, epsilon=2.0, ledger=led) == pytest.approx(
        21 / 23, rel=1e-6)
    for n, k, eps in [(40, 7, 0.5), (1000, 21, 3.0)]:
        lam = float(smoothed_histogram_weight(n, k, epsilon=eps, ledger=led))
        assert n * math.log1p(k * (1 - lam) / (n * lam)) == pytest.approx(eps, rel=1e-9)
    lam = smoothed_histogram_weight(np.array([40, 100]), np.array([[7, 10], [8, 11]]),
                                    epsilon=1.0, ledger=led)
    assert lam.shape == (2, 2)


def test_one_pass_estimator_equals_the_two_estimators():
    x = np.random.default_rng(7).standard_t(5, size=(4, 3, 50))
    mean, v_mean, s2, v_s2 = sample_mean_and_variance(x)
    for got, want in zip((mean, v_mean, s2, v_s2), (*sample_mean(x), *sample_variance(x)),
                         strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
