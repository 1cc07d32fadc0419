import math

import numpy as np
import pytest

from harness.privacy import PrivacyLedger, laplace_mechanism
from harness.privacy.audit import (
    AuditResult,
    _clopper_pearson_lower,
    _clopper_pearson_upper,
    audit_mechanism,
)

N = 200_000  # outputs per data set (half select, half validate)


def laplace_count(eps, sensitivity=1.0):
    def sample(d, rng, size):
        return laplace_mechanism(
            np.full(size, float(d)), sensitivity=sensitivity, epsilon=eps, rng=rng,
            ledger=PrivacyLedger(), statistic="c",
        )

    return sample


def rounded_clamped_laplace(eps, n=20, scale_factor=1.0):
    def sample(d, rng, size):
        return np.round(np.clip(d + rng.laplace(0.0, scale_factor / eps, size), 0, n))

    return sample


def geometric_count(eps):
    p = -math.expm1(-eps)  # two-sided geometric: P(k) ∝ e^{-ε|k|}

    def sample(d, rng, size):
        return d + rng.geometric(p, size) - rng.geometric(p, size)

    return sample


def audit(sample, eps, seed, x=10, x_prime=11, n=N, **kw):
    return audit_mechanism(
        sample, x, x_prime, claimed_epsilon=eps, n_samples=n, rng=np.random.default_rng(seed), **kw
    )


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_correct_laplace_passes_with_power(eps):
    res = audit(laplace_count(eps), eps, seed=1)
    assert isinstance(res, AuditResult)
    assert res.passed, res.summary()
    assert res.epsilon_lower_bound <= eps
    # the audit has power: Laplace tail events realise the full ε, and the bound gets close
    assert res.epsilon_lower_bound > 0.8 * eps, res.summary()
    assert res.n_samples == N
    assert res.epsilon_point == pytest.approx(math.log(max(res.p_x, res.p_x_prime)
                                                       / min(res.p_x, res.p_x_prime)))


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_halved_sensitivity_fails(eps):
    # the data differ by 1 but the noise is calibrated to sensitivity 0.5: true loss is 2ε
    res = audit(laplace_count(eps, sensitivity=0.5), eps, seed=2)
    assert not res.passed, res.summary()
    assert res.epsilon_lower_bound > eps
    assert res.epsilon_lower_bound > 1.5 * eps
    assert res.epsilon_lower_bound <= 2 * eps + 0.05  # still a lower bound on the true 2ε
    assert "FAIL" in res.summary()


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_discrete_rounded_clamped_laplace_passes(eps):
    res = audit(rounded_clamped_laplace(eps), eps, seed=3)
    assert res.passed, res.summary()
    assert res.epsilon_lower_bound > 0.7 * eps, res.summary()


def test_discrete_geometric_mechanism_passes():
    res = audit(geometric_count(1.0), 1.0, seed=4)
    assert res.passed, res.summary()
    assert res.epsilon_lower_bound > 0.7


def test_discrete_mechanism_with_too_little_noise_fails():
    res = audit(rounded_clamped_laplace(1.0, scale_factor=0.5), 1.0, seed=5)
    assert not res.passed, res.summary()
    assert res.epsilon_lower_bound > 1.5


def test_discrete_singleton_events_are_candidates():
    # randomized response on a bit: the only informative events are {y = 0} / {y = 1}
    eps = 1.0
    keep = math.exp(eps) / (1 + math.exp(eps))

    def rr(d, rng, size):
        return np.where(rng.random(size) < keep, d, 1 - d)

    res = audit(rr, eps, seed=6, x=0, x_prime=1, n=100_000)
    assert res.passed
    assert res.epsilon_lower_bound > 0.9 * eps
    assert "== " in res.event or ">= 1" in res.event or "<= 0" in res.event


def test_non_private_identity_fails_badly():
    res = audit(lambda d, rng, size: np.full(size, float(d)), 1.0, seed=7, n=100_000)
    assert not res.passed
    # with 50k validation samples and no overlap the bound is log(n / log(2/α)) ≈ 9.5
    assert res.epsilon_lower_bound > 8.0
    assert math.isinf(res.epsilon_point)
    assert {res.p_x, res.p_x_prime} == {0.0, 1.0}


def test_vector_output_audits_the_sum_of_coordinates():
    # both coordinates use ε's noise for a count that moves by 1 in each coordinate: the l1
    # sensitivity of the vector is 2, so the true loss is 2ε. Each coordinate alone shows ε;
    # their sum reveals the violation.
    eps = 1.0

    def two_counts(d, rng, size):
        return d + rng.laplace(0.0, 1.0 / eps, (size, 2))

    res = audit(two_counts, eps, seed=8)
    assert not res.passed, res.summary()
    assert res.event.startswith("sum of coordinates")
    assert res.epsilon_lower_bound > 1.2 * eps

    def two_counts_ok(d, rng, size):
        return d + rng.laplace(0.0, 2.0 / eps, (size, 2))

    assert audit(two_counts_ok, eps, seed=8).passed


def test_false_alarm_rate_is_at_most_alpha():
    # randomized response realises exactly ε on {y = x}; over many independent small audits
    # the (1 − α) lower bound must exceed the true ε in at most ≈ α of them.
    eps, alpha, reps = 1.0, 0.1, 200
    keep = math.exp(eps) / (1 + math.exp(eps))

    def rr(d, rng, size):
        return np.where(rng.random(size) < keep, d, 1 - d)

    rng = np.random.default_rng(9)
    fails = sum(
        not audit_mechanism(rr, 0, 1, claimed_epsilon=eps, n_samples=2000, rng=rng,
                            alpha=alpha).passed
        for _ in range(reps)
    )
    # Binomial(200, 0.1): P(X > 32) < 0.01; an anti-conservative bound would fail ~half the time
    assert fails <= 32


def test_clopper_pearson_closed_forms():
    n, level = 50, 0.025
    assert _clopper_pearson_lower(n, n, level) == pytest.approx(level ** (1 / n))
    assert _clopper_pearson_upper(0, n, level) == pytest.approx(1 - level ** (1 / n))
    assert _clopper_pearson_lower(0, n, level) == 0.0
    assert _clopper_pearson_upper(n, n, level) == 1.0
    lo, hi = _clopper_pearson_lower(20, n, level), _clopper_pearson_upper(20, n, level)
    assert lo < 20 / n < hi


def test_result_fields_and_summary():
    res = audit(laplace_count(1.0), 1.0, seed=10, n=20_000)
    assert res.claimed_epsilon == 1.0
    assert 0.0 <= res.p_x <= 1.0 and 0.0 <= res.p_x_prime <= 1.0
    assert "x over x'" in res.event or "x' over x" in res.event
    assert res.event.startswith("output ")
    s = res.summary()
    assert "PASS" in s and "1" in s and res.event in s
    with pytest.raises(AttributeError):
        res.passed = False  # frozen


def test_reproducible_for_same_seed():
    a = audit(laplace_count(1.0), 1.0, seed=11, n=20_000)
    b = audit(laplace_count(1.0), 1.0, seed=11, n=20_000)
    assert a == b


def test_input_validation():
    ok = laplace_count(1.0)
    with pytest.raises(ValueError, match="shape"):
        audit(lambda d, rng, size: np.zeros((size, 2, 2)), 1.0, seed=0, n=100)
    with pytest.raises(ValueError, match="shape"):
        audit(lambda d, rng, size: np.zeros(size + 1), 1.0, seed=0, n=100)
    with pytest.raises(ValueError, match="non-finite"):
        audit(lambda d, rng, size: np.full(size, np.nan), 1.0, seed=0, n=100)
    with pytest.raises(ValueError, match="alpha"):
        audit(ok, 1.0, seed=0, n=100, alpha=1.5)
    with pytest.raises(ValueError, match="claimed_epsilon"):
        audit(ok, -1.0, seed=0, n=100)
    with pytest.raises(ValueError, match="n_samples"):
        audit(ok, 1.0, seed=0, n=2)


def test_tiny_sample_still_returns_a_valid_result():
    res = audit(laplace_count(1.0), 1.0, seed=12, n=10)
    assert res.passed
    assert res.epsilon_lower_bound >= 0.0
