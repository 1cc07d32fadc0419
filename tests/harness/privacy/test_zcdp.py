"""zCDP accounting (harness/privacy/zcdp.py, ledger): the ρ → (ε, δ) conversion against
OpenDP's, ρ from (ε, δ), the Gaussian and exponential zCDP mechanisms' ledger entries, and
the composition of ρ entries in the ledger (nested sets, parallel groups, pure-ε ledgers
unchanged)."""

import math

import numpy as np
import pytest

from harness.privacy import (
    LedgerEntry,
    PrivacyLedger,
    exponential_zcdp,
    gaussian_zcdp,
    laplace_mechanism,
    zcdp_epsilon,
    zcdp_rho,
)

RHOS = [1e-4, 1e-3, 0.01, 0.05, 0.1, 0.5, 1.0, 3.0, 10.0]
DELTAS = [1e-9, 1e-6, 1e-5, 1e-3, 1e-2]


def test_conversion_matches_opendp_on_a_grid():
    """OpenDP's make_zCDP_to_approxDP (0.16) on a Gaussian of ρ = (1/scale)²/2, fixed at δ."""
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    for rho in RHOS:
        gauss = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False),
                                   dp.absolute_distance(T=float), 1.0 / math.sqrt(2 * rho))
        for delta in DELTAS:
            expected, _ = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gauss), delta).map(1.0)
            assert zcdp_epsilon(rho, delta) == pytest.approx(expected, rel=1e-9, abs=1e-12), \
                (rho, delta)


def test_conversion_is_below_the_classical_bound():
    """ε ≤ ρ + 2√(ρ log(1/δ)) (Bun & Steinke 2016, Prop. 1.3), and increases in ρ."""
    for delta in DELTAS:
        eps = [zcdp_epsilon(r, delta) for r in RHOS]
        assert all(a < b for a, b in zip(eps, eps[1:], strict=False))
        for r, e in zip(RHOS, eps, strict=True):
            assert e <= r + 2 * math.sqrt(r * math.log(1 / delta))


@pytest.mark.parametrize("epsilon", [0.1, 1.0, math.e, 10.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_rho_is_the_largest_within_epsilon(epsilon, delta):
    rho = zcdp_rho(epsilon, delta)
    assert zcdp_epsilon(rho, delta) <= epsilon
    assert zcdp_epsilon(rho, delta) == pytest.approx(epsilon, rel=1e-12)
    assert zcdp_epsilon(rho * (1 + 1e-9), delta) > epsilon


def test_gaussian_zcdp_records_rho_sigma_and_relation():
    ledger = PrivacyLedger(relation="substitution", zcdp_delta=1e-5)
    rng = np.random.default_rng(1)
    out = gaussian_zcdp(np.zeros((20_000, 3)), l2_sensitivity=math.sqrt(2), rho=0.25, rng=rng,
                        ledger=ledger, statistic="marginal")
    (entry,) = ledger.entries
    assert entry.mechanism == "gaussian_zcdp" and entry.rho == 0.25 and entry.epsilon == 0
    assert entry.scale == pytest.approx(math.sqrt(2) / math.sqrt(0.5))  # Δ₂/√(2ρ) = 2
    assert entry.sensitivity == pytest.approx(math.sqrt(2))
    assert entry.relation == "substitution"
    assert out.std() == pytest.approx(2.0, rel=0.02)
    assert ledger.total_rho() == 0.25
    assert ledger.total_epsilon() == pytest.approx(zcdp_epsilon(0.25, 1e-5), rel=1e-15)
    assert ledger.total_delta() == 1e-5


def test_exponential_zcdp_spends_eps_squared_over_eight():
    """ρ = ε²/8 and the draw is the exponential mechanism at ε = √(8ρ): P(k) ∝ exp(εu/(2Δ))."""
    ledger = PrivacyLedger(zcdp_delta=1e-5)
    rho = 0.5  # ε = 2
    scores = np.tile([0.0, 1.0, 2.0], (200_000, 1))
    pick = exponential_zcdp(scores, sensitivity=1.0, rho=rho, rng=np.random.default_rng(2),
                            ledger=ledger, statistic="select")
    (entry,) = ledger.entries
    assert entry.rho == rho and entry.mechanism == "exponential_zcdp"
    p = np.exp(np.array([0.0, 1.0, 2.0]))
    p /= p.sum()
    freq = np.bincount(pick, minlength=3) / pick.size
    assert np.allclose(freq, p, atol=4 * np.sqrt(p * (1 - p) / pick.size).max())


def test_rho_entries_compose_by_summation_per_set_and_group():
    ledger = PrivacyLedger(zcdp_delta=1e-5)
    rng = np.random.default_rng(3)
    gaussian_zcdp(np.zeros(2), l2_sensitivity=1.0, rho=0.1, rng=rng, ledger=ledger,
                  statistic="shared")
    for j in range(3):
        gaussian_zcdp(np.zeros(2), l2_sensitivity=1.0, rho=0.2, rng=rng,
                      ledger=ledger.for_set(j), statistic=f"set {j}")
    for g in (0.05, 0.07):
        gaussian_zcdp(np.zeros(2), l2_sensitivity=1.0, rho=g, rng=rng, ledger=ledger,
                      statistic="strata", parallel_group="strata")
    assert ledger.total_rho() == pytest.approx(0.1 + 0.6 + 0.07)
    first = ledger.first_sets(2)
    assert first.zcdp_delta == 1e-5
    assert first.total_rho() == pytest.approx(0.1 + 0.4 + 0.07)
    assert first.total_epsilon() == pytest.approx(zcdp_epsilon(0.57, 1e-5))


def test_pure_epsilon_ledgers_are_unchanged():
    """A ledger without ρ entries composes exactly as before (no δ, no conversion)."""
    ledger = PrivacyLedger()
    laplace_mechanism(np.zeros(2), sensitivity=1.0, epsilon=0.3, rng=np.random.default_rng(4),
                      ledger=ledger, statistic="a")
    ledger.record(LedgerEntry("b", "laplace", 0.2))
    assert ledger.total_epsilon() == 0.5 and ledger.total_delta() == 0.0
    assert not ledger.has_rho and ledger.total_rho() == 0.0
    ledger.check_total(0.5)


def test_mixed_ledger_adds_pure_epsilon_to_converted_rho():
    ledger = PrivacyLedger(zcdp_delta=1e-6)
    ledger.record(LedgerEntry("a", "laplace", 0.2))
    ledger.record(LedgerEntry("b", "gaussian_zcdp", 0.0, rho=0.1))
    assert ledger.total_epsilon() == pytest.approx(0.2 + zcdp_epsilon(0.1, 1e-6))


def test_rho_entries_need_a_conversion_delta_and_valid_values():
    ledger = PrivacyLedger()
    ledger.record(LedgerEntry("b", "gaussian_zcdp", 0.0, rho=0.1))
    with pytest.raises(ValueError, match="zcdp_delta"):
        ledger.total_epsilon()
    for bad in (LedgerEntry("c", "x", 0.0, rho=0.0), LedgerEntry("c", "x", 0.1, rho=0.1),
                LedgerEntry("c", "x", 0.0, rho=math.inf)):
        with pytest.raises(ValueError, match="ρ"):
            ledger.record(bad)
    with pytest.raises(ValueError, match="delta"):
        zcdp_epsilon(0.1, 0.0)
