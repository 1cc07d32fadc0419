import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy import stats

from harness.privacy import (
    POSTPROCESS_RULES,
    PrivacyLedger,
    bounded_laplace_mechanism,
    dirichlet_prior_pseudocount,
    laplace_mechanism,
    mcclure_reiter_pseudocount,
)


def lap(values, *, sensitivity=1.0, epsilon=1.0, seed=0, ledger=None, **kw):
    return laplace_mechanism(
        values, sensitivity=sensitivity, epsilon=epsilon, rng=np.random.default_rng(seed),
        ledger=PrivacyLedger() if ledger is None else ledger, statistic="s", **kw,
    )


def bounded(values, *, rule, lower, upper, sensitivity=1.0, epsilon=1.0, seed=0, ledger=None):
    return bounded_laplace_mechanism(
        values, sensitivity=sensitivity, epsilon=epsilon, lower=lower, upper=upper, rule=rule,
        rng=np.random.default_rng(seed), ledger=PrivacyLedger() if ledger is None else ledger,
        statistic="s",
    )


# ---------------------------------------------------------------- Laplace mechanism


def test_laplace_output_shape_and_leading_axes():
    values = np.arange(24, dtype=float).reshape(2, 3, 4)
    out = lap(values)
    assert out.shape == (2, 3, 4)
    assert out.dtype == np.float64
    # every element gets its own noise draw
    noise = out - values
    assert np.unique(noise).size == noise.size


@pytest.mark.parametrize(("sensitivity", "epsilon"), [(1.0, 1.0), (2.0, 0.5), (0.5, 4.0)])
def test_laplace_noise_variance_is_two_scale_squared(sensitivity, epsilon):
    n = 200_000
    values = np.full(n, 7.0)
    noise = lap(values, sensitivity=sensitivity, epsilon=epsilon, seed=11) - values
    expected = 2 * (sensitivity / epsilon) ** 2
    # Laplace kurtosis is 6, so sd(sample variance) ≈ σ² √(5/n) ≈ 0.5 % of σ²; allow 5 sd
    tol = 5 * math.sqrt(5 / n)
    assert abs(noise.var() / expected - 1) < tol
    # the noise is centred: sd(mean) = σ/√n
    assert abs(noise.mean()) < 5 * math.sqrt(expected / n)
    # and a 2·scale variance would be off by a factor of 4 — far outside the tolerance
    assert abs(noise.var() / (2 * expected) - 1) > tol


def test_laplace_ledger_entry():
    ledger = PrivacyLedger()
    laplace_mechanism(
        np.zeros((5, 3)), sensitivity=2.0, epsilon=0.5, rng=np.random.default_rng(0),
        ledger=ledger, statistic="margins", parallel_group="g1",
    )
    assert len(ledger) == 1  # once per release, not per replicate
    (e,) = ledger.entries
    assert e.statistic == "margins"
    assert e.mechanism == "laplace"
    assert e.epsilon == 0.5
    assert e.sensitivity == 2.0
    assert e.scale == pytest.approx(4.0)
    assert e.parallel_group == "g1"
    assert ledger.total_epsilon() == 0.5


@pytest.mark.parametrize("epsilon", [0.0, -0.5, math.inf, math.nan])
def test_laplace_rejects_bad_epsilon(epsilon):
    ledger = PrivacyLedger()
    with pytest.raises(ValueError, match="epsilon"):
        lap(np.zeros(3), epsilon=epsilon, ledger=ledger)
    assert len(ledger) == 0


@pytest.mark.parametrize("sensitivity", [0.0, -1.0, math.inf])
def test_laplace_rejects_bad_sensitivity(sensitivity):
    with pytest.raises(ValueError, match="sensitivity"):
        lap(np.zeros(3), sensitivity=sensitivity)


def test_laplace_reproducible_for_same_seed():
    a = lap(np.zeros(100), seed=123)
    b = lap(np.zeros(100), seed=123)
    c = lap(np.zeros(100), seed=124)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# ---------------------------------------------------------------- bounded Laplace


def test_clamp_puts_laplace_tail_mass_exactly_on_the_bounds():
    n, value, lower, upper, eps = 200_000, 1.0, 0.0, 3.0, 1.0
    out = bounded(np.full(n, value), rule="clamp", lower=lower, upper=upper, epsilon=eps, seed=3)
    assert out.min() == lower and out.max() == upper
    lap_dist = stats.laplace(loc=0.0, scale=1.0 / eps)
    for bound, p in [
        (lower, lap_dist.cdf(lower - value)),  # P(Lap ≤ lower − value) = e^{-1}/2
        (upper, lap_dist.sf(upper - value)),  # P(Lap ≥ upper − value) = e^{-2}/2
    ]:
        hit = np.mean(out == bound)
        assert abs(hit - p) < 5 * math.sqrt(p * (1 - p) / n), (bound, hit, p)
    inside = out[(out > lower) & (out < upper)]
    assert inside.size == n - np.sum(out == lower) - np.sum(out == upper)


def test_clamp_records_an_ordinary_laplace_entry():
    ledger = PrivacyLedger()
    bounded(np.zeros(4), rule="clamp", lower=-1, upper=1, epsilon=0.7, ledger=ledger)
    (e,) = ledger.entries
    assert e.mechanism == "laplace" and e.epsilon == 0.7


def test_redraw_matches_truncated_laplace():
    n, value, lower, upper, eps, sens = 20_000, 1.0, 0.0, 3.0, 0.8, 1.5
    out = bounded(
        np.full(n, value), rule="redraw", lower=lower, upper=upper, epsilon=eps,
        sensitivity=sens, seed=5,
    )
    assert np.all((out >= lower) & (out <= upper))
    # no atoms at the bounds (a continuous distribution never hits them exactly)
    assert not np.any(out == lower) and not np.any(out == upper)
    lap_dist = stats.laplace(loc=value, scale=sens / eps)
    f_lo, f_hi = lap_dist.cdf(lower), lap_dist.cdf(upper)

    def truncated_cdf(y):
        return (lap_dist.cdf(y) - f_lo) / (f_hi - f_lo)

    assert stats.kstest(out, truncated_cdf).pvalue > 0.001
    # the KS test has power here: the plain (untruncated) Laplace CDF is rejected
    assert stats.kstest(out, lap_dist.cdf).pvalue < 1e-6


def test_redraw_with_array_bounds_and_scalar_input():
    values = np.array([[0.0, 5.0], [1.0, 4.5]])
    lower = np.array([-1.0, 4.0])
    upper = np.array([0.5, 6.0])
    out = bounded(values, rule="redraw", lower=lower, upper=upper, seed=1)
    assert out.shape == values.shape
    assert np.all((out >= lower) & (out <= upper))
    scalar = bounded(5.0, rule="redraw", lower=4.9, upper=5.1, epsilon=0.01, seed=2)
    assert 4.9 <= float(scalar) <= 5.1


def test_redraw_ledger_note_mentions_2_epsilon():
    ledger = PrivacyLedger()
    bounded(np.zeros(3), rule="redraw", lower=-1, upper=1, epsilon=0.5, ledger=ledger)
    (e,) = ledger.entries
    assert e.mechanism == "laplace_truncated_by_redraw"
    assert e.epsilon == 0.5 and e.scale == pytest.approx(2.0)
    assert "2" in e.note and "epsilon" in e.note
    assert "2·epsilon" in e.note


def test_bad_rule_raises_listing_allowed_rules():
    assert set(POSTPROCESS_RULES) == {"clamp", "redraw"}
    with pytest.raises(ValueError) as err:
        bounded(np.zeros(2), rule="reflect", lower=0, upper=1)
    msg = str(err.value)
    assert "clamp" in msg and "redraw" in msg and "reflect" in msg


@pytest.mark.parametrize("rule", POSTPROCESS_RULES)
def test_bounds_must_be_ordered(rule):
    with pytest.raises(ValueError, match="lower <= upper"):
        bounded(np.zeros(2), rule=rule, lower=1.0, upper=0.0)


# ---------------------------------------------------------------- privacy-calibrated priors


def _exact_inv_expm1(x: float) -> float:
    """1 / (e^x − 1) computed in 50-digit decimal arithmetic."""
    getcontext().prec = 50
    d = Decimal(x)
    return float(1 / (d.exp() - 1))


@pytest.mark.parametrize("eps", [1e-12, 1e-6, 0.1, 1.0, 5.0])
def test_dirichlet_prior_pseudocount(eps):
    n = np.array([10.0, 250.0, 1e4])
    ledger = PrivacyLedger()
    alpha = dirichlet_prior_pseudocount(n, epsilon=eps, ledger=ledger)
    expected = n * _exact_inv_expm1(eps)
    np.testing.assert_allclose(alpha, expected, rtol=1e-13)
    (e,) = ledger.entries
    assert e.mechanism == "multinomial_dirichlet_prior" and e.epsilon == eps


def test_dirichlet_tiny_epsilon_needs_expm1():
    eps, n = 1e-12, 100.0
    alpha = dirichlet_prior_pseudocount(n, epsilon=eps, ledger=PrivacyLedger())
    naive = n / (np.exp(eps) - 1)
    exact = n * _exact_inv_expm1(eps)
    assert abs(naive / exact - 1) > 1e-6  # the naive formula loses ~4 significant digits
    assert abs(alpha / exact - 1) < 1e-13


@pytest.mark.parametrize(("eps", "n"), [(1.0, 1.0), (0.5, 100.0), (1e-6, 1e4), (2.0, 37.0)])
def test_mcclure_reiter_pseudocount(eps, n):
    ledger = PrivacyLedger()
    alpha = float(mcclure_reiter_pseudocount(n, epsilon=eps, ledger=ledger, statistic="ones"))
    np.testing.assert_allclose(alpha, _exact_inv_expm1(eps / n), rtol=1e-13)
    # defining property: the neighbour likelihood ratio bound (1 + 1/α*)^n equals e^ε
    assert n * math.log1p(1 / alpha) == pytest.approx(eps, rel=1e-12)
    (e,) = ledger.entries
    assert e.mechanism == "mcclure_reiter_prior" and e.epsilon == eps and e.statistic == "ones"


def test_mcclure_reiter_vectorised_over_n():
    n = np.array([10.0, 100.0, 1000.0])
    alpha = mcclure_reiter_pseudocount(n, epsilon=1.0, ledger=PrivacyLedger())
    assert alpha.shape == (3,)
    assert np.all(np.diff(alpha) > 0)  # more records ⇒ smaller per-record ε ⇒ stronger prior
    np.testing.assert_allclose(n * np.log1p(1 / alpha), 1.0, rtol=1e-12)


@pytest.mark.parametrize("fn", [dirichlet_prior_pseudocount, mcclure_reiter_pseudocount])
@pytest.mark.parametrize("eps", [0.0, -1.0, math.inf])
def test_pseudocounts_reject_bad_epsilon(fn, eps):
    ledger = PrivacyLedger()
    with pytest.raises(ValueError):
        fn(10.0, epsilon=eps, ledger=ledger)
    assert len(ledger) == 0
