"""The exponential, geometric and analytic Gaussian mechanisms: their laws against exact
formulas, their ledger entries, and empirical audits on neighbouring data sets that pass for
the mechanism as written and fail for a planted bug that overspends."""

import math

import numpy as np
import pytest
from scipy import stats

from harness.privacy import (
    PrivacyLedger,
    analytic_gaussian_sigma,
    audit_delta,
    audit_mechanism,
    exponential_mechanism,
    gaussian_delta,
    gaussian_mechanism,
    geometric_mechanism,
)


def _chi2_pvalue(counts, probs):
    expected = probs * counts.sum()
    return stats.chisquare(counts, expected).pvalue


# --- exponential mechanism ----------------------------------------------------------------------
@pytest.mark.parametrize("monotone", [False, True])
def test_exponential_mechanism_draws_the_softmax_law(monotone):
    scores = np.array([0.0, 1.0, 2.5, -1.0, -np.inf])
    eps, du, size = 1.3, 0.5, 200_000
    ledger = PrivacyLedger()
    picks = exponential_mechanism(np.broadcast_to(scores, (size, 5)), sensitivity=du,
                                  epsilon=eps, rng=np.random.default_rng(1), ledger=ledger,
                                  statistic="pick", monotone=monotone)
    assert picks.shape == (size,) and not np.any(picks == 4)  # -inf is never chosen
    w = np.exp(eps * scores[:4] / (du if monotone else 2 * du))
    counts = np.bincount(picks, minlength=4)
    assert _chi2_pvalue(counts, w / w.sum()) > 1e-3
    (entry,) = ledger.entries
    assert entry.epsilon == eps and entry.sensitivity == du and entry.delta == 0.0
    assert entry.scale == pytest.approx((du if monotone else 2 * du) / eps)
    assert entry.mechanism == ("exponential_monotone" if monotone else "exponential")


def test_exponential_mechanism_rejects_bad_input():
    rng, ledger = np.random.default_rng(0), PrivacyLedger()
    for kwargs in ({"epsilon": 0.0, "sensitivity": 1.0}, {"epsilon": 1.0, "sensitivity": 0.0}):
        with pytest.raises(ValueError):
            exponential_mechanism([0.0, 1.0], rng=rng, ledger=ledger, statistic="s", **kwargs)
    with pytest.raises(ValueError, match="at least one candidate"):
        exponential_mechanism([[-np.inf, -np.inf]], sensitivity=1.0, epsilon=1.0, rng=rng,
                              ledger=ledger, statistic="s")
    with pytest.raises(ValueError, match="finite or -inf"):
        exponential_mechanism([np.nan, 1.0], sensitivity=1.0, epsilon=1.0, rng=rng,
                              ledger=ledger, statistic="s")
    assert len(ledger) == 0


# Neighbouring score vectors on which the exponential mechanism realises almost all of ε:
# candidate 0 gains Δu and the K − 1 others lose it (the normaliser moves too). Exact realised
# loss of "pick 0": log(e^{εΔ/D}(1 + (K−1)e^{εΔ/D}) / (e^{εΔ/D} + K − 1)) with D = 2Δ (as
# written): 0.979 at ε = 1, K = 50; with the planted bug D = Δ it is 1.95.
K, DU = 50, 1.0
U_X = np.r_[DU, np.zeros(K - 1)]
U_XP = np.r_[0.0, np.full(K - 1, DU)]


def _exact_loss(eps, denominator):
    a = math.exp(eps * DU / denominator)
    return math.log(a * (1 + (K - 1) * a) / (a + K - 1))


def _exponential_sampler(eps, bug=False):
    def sample(u, rng, size):
        scores = np.broadcast_to(u, (size, K))
        if bug:  # the planted bug: ε/Δu instead of ε/(2Δu) for a score that is not monotone
            return exponential_mechanism(scores, sensitivity=DU, epsilon=eps, rng=rng,
                                         ledger=PrivacyLedger(), statistic="s", monotone=True)
        return exponential_mechanism(scores, sensitivity=DU, epsilon=eps, rng=rng,
                                     ledger=PrivacyLedger(), statistic="s")

    return sample


def test_exponential_mechanism_audit_passes_and_the_planted_bug_fails():
    eps, n = 1.0, 200_000  # P(pick 0 | x') = 1.2%: 1 200 validation hits, log-ratio SE ≈ 0.03
    ok = audit_mechanism(_exponential_sampler(eps), U_X, U_XP, claimed_epsilon=eps,
                         n_samples=n, rng=np.random.default_rng(11))
    bad = audit_mechanism(_exponential_sampler(eps, bug=True), U_X, U_XP, claimed_epsilon=eps,
                          n_samples=n, rng=np.random.default_rng(12))
    print(f"exponential, ε = 1: exact {_exact_loss(eps, 2 * DU):.3f}, {ok.summary()}")
    print(f"planted bug: exact {_exact_loss(eps, DU):.3f}, {bad.summary()}")
    assert ok.passed and ok.epsilon_lower_bound > 0.8 * eps
    assert not bad.passed and bad.epsilon_lower_bound > 1.5 * eps
    assert bad.epsilon_lower_bound <= _exact_loss(eps, DU) + 0.05


# --- geometric mechanism ------------------------------------------------------------------------
def test_geometric_noise_has_the_two_sided_geometric_law():
    eps, delta_l1, size = 0.7, 2, 400_000
    ledger = PrivacyLedger()
    out = geometric_mechanism(np.full(size, 10), sensitivity=delta_l1, epsilon=eps,
                              rng=np.random.default_rng(3), ledger=ledger, statistic="count")
    assert out.dtype == np.int64
    z = out - 10
    a = math.exp(-eps / delta_l1)
    support = np.arange(-12, 13)
    pmf = (1 - a) / (1 + a) * a ** np.abs(support)
    counts = np.array([(z == k).sum() for k in support])
    probs = np.r_[pmf, 1 - pmf.sum()]
    assert _chi2_pvalue(np.r_[counts, size - counts.sum()], probs) > 1e-3
    assert z.mean() == pytest.approx(0.0, abs=4 * math.sqrt(2 * a / (1 - a) ** 2 / size))
    assert z.var() == pytest.approx(2 * a / (1 - a) ** 2, rel=0.02)
    (entry,) = ledger.entries
    assert (entry.mechanism, entry.epsilon, entry.sensitivity) == ("geometric", eps, 2.0)


def test_geometric_mechanism_rejects_bad_input():
    rng, ledger = np.random.default_rng(0), PrivacyLedger()
    with pytest.raises(ValueError, match="integer"):
        geometric_mechanism([1], sensitivity=1.5, epsilon=1.0, rng=rng, ledger=ledger,
                            statistic="s")
    with pytest.raises(ValueError, match="integer values"):
        geometric_mechanism([1.5], sensitivity=1, epsilon=1.0, rng=rng, ledger=ledger,
                            statistic="s")
    with pytest.raises(ValueError):
        geometric_mechanism([1], sensitivity=1, epsilon=-1.0, rng=rng, ledger=ledger,
                            statistic="s")
    assert len(ledger) == 0


def test_geometric_audit_passes_and_too_little_noise_fails():
    eps = 1.0

    def count(sensitivity):
        def sample(c, rng, size):
            return geometric_mechanism(np.full(size, c), sensitivity=sensitivity, epsilon=eps,
                                       rng=rng, ledger=PrivacyLedger(), statistic="count")
        return sample

    ok = audit_mechanism(count(1), 10, 11, claimed_epsilon=eps, n_samples=200_000,
                         rng=np.random.default_rng(21))
    # planted bug: noise for Δ = 1 on a count whose neighbours differ by 2 (true loss 2ε)
    bad = audit_mechanism(count(1), 10, 12, claimed_epsilon=eps, n_samples=200_000,
                          rng=np.random.default_rng(22))
    print(f"geometric: {ok.summary()}\nplanted bug: {bad.summary()}")
    assert ok.passed and ok.epsilon_lower_bound > 0.8 * eps
    assert not bad.passed and bad.epsilon_lower_bound > 1.5 * eps


# --- analytic Gaussian mechanism ----------------------------------------------------------------
@pytest.mark.parametrize("eps, delta", [(0.1, 1e-5), (1.0, 1e-5), (1.0, 1e-2), (8.0, 1e-6)])
def test_analytic_sigma_is_the_smallest_that_meets_delta(eps, delta):
    sigma = analytic_gaussian_sigma(eps, delta, 2.0)
    assert gaussian_delta(sigma, eps, 2.0) == pytest.approx(delta, rel=1e-8)
    assert gaussian_delta(0.99 * sigma, eps, 2.0) > delta  # any smaller σ fails
    if eps < 1:  # the classical calibration (valid for ε < 1) is never tighter
        assert sigma <= 2.0 * math.sqrt(2 * math.log(1.25 / delta)) / eps
    # σ scales with the sensitivity
    assert analytic_gaussian_sigma(eps, delta, 1.0) == pytest.approx(sigma / 2, rel=1e-9)


def test_analytic_sigma_at_a_published_point():
    # Balle & Wang (2018): at ε = 1, δ = 1e-5, Δ = 1 the analytic σ ≈ 3.73, against 4.84 for
    # the classical formula
    assert analytic_gaussian_sigma(1.0, 1e-5, 1.0) == pytest.approx(3.7306, abs=1e-3)


def test_gaussian_mechanism_ledger_and_law():
    ledger = PrivacyLedger()
    out = gaussian_mechanism(np.zeros(100_000), l2_sensitivity=1.0, epsilon=1.0, delta=1e-5,
                             rng=np.random.default_rng(5), ledger=ledger, statistic="mean")
    (entry,) = ledger.entries
    assert (entry.epsilon, entry.delta) == (1.0, 1e-5)
    assert ledger.total_epsilon() == 1.0 and ledger.total_delta() == 1e-5
    assert out.std() == pytest.approx(entry.scale, rel=0.01)
    with pytest.raises(ValueError):
        gaussian_mechanism([0.0], l2_sensitivity=1.0, epsilon=1.0, delta=1.5,
                           rng=np.random.default_rng(0), ledger=ledger, statistic="s")


def test_gaussian_audit_on_the_event_that_realises_delta():
    """For N(0, s²) noise on x = 0 vs x' = Δ the privacy loss exceeds ε exactly on the half-line
    y < Δ/2 − εs²/Δ, which realises the profile δ(ε) (Balle & Wang, Thm 8). The audit fixes in
    advance the half-lines of s = σ, 3σ/4, σ/2 and σ/4 (σ the claimed calibration), so that too
    little noise is caught too; δ = 0.05 and 400 000 samples make the test sharp."""
    eps, delta, du, n = 1.0, 0.05, 1.0, 400_000
    sigma = analytic_gaussian_sigma(eps, delta, du)
    cuts = [du / 2 - eps * (f * sigma) ** 2 / du for f in (1.0, 0.75, 0.5, 0.25)]
    events = [lambda y, c=c: y < c for c in cuts]

    def mechanism(factor):
        def sample(x, rng, size):
            out = gaussian_mechanism(np.full(size, float(x)), l2_sensitivity=du, epsilon=eps,
                                     delta=delta, rng=rng, ledger=PrivacyLedger(), statistic="m")
            return x + (out - x) * factor  # factor 0.5: the planted bug, half the noise
        return sample

    ok = audit_delta(mechanism(1.0), 0.0, du, events, claimed_epsilon=eps,
                     claimed_delta=delta, n_samples=n, rng=np.random.default_rng(31))
    bad = audit_delta(mechanism(0.5), 0.0, du, events, claimed_epsilon=eps,
                      claimed_delta=delta, n_samples=n, rng=np.random.default_rng(32))
    print(f"Gaussian: {ok.summary()}\nplanted bug (σ halved): {bad.summary()}")
    assert ok.passed and ok.delta_lower_bound > delta - 0.01  # sharp: near the claimed δ
    assert not bad.passed and bad.delta_lower_bound > 2 * delta
