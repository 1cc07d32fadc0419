"""Empirical audits of MST and AIM (harness/synthesizers/pgm.py) on tiny domains.

MST on two binary columns,
x with n = 20 records and x′ = x plus one record in cell (1, 1) (add/remove neighbours).

The audited output is the release's fitted model, read as its estimate of cell (1, 1) (one
number per release, from MST's one-way measurements, its selection and its two-way
measurement, then the estimate step): the synthetic records are drawn from this model, so
they are a function of it, and a violation of the (ε, δ) claim by the records would be one
by the model; auditing the model gives the audit its power (the records' sampling noise
would hide any loss). The events are fixed in advance, {estimate ≥ t} for t on a grid of
counts above x's cell, and (ε, δ)-DP requires P(S | x′) ≤ e^ε P(S | x) + δ for each
(``audit_delta``, Bonferroni over the events).

Claimed (ε, δ) = (0.5, 1e-5): ρ = zcdp_rho(0.5, 1e-5) ≈ 0.005, σ ≈ 17 on the pair's counts.
The planted overspend divides σ of every Gaussian measurement by 10 (ρ × 100 really spent)
with the ledger unchanged, and must fail; the correct release must pass. σ/2 would not do
for a black-box audit: the (ε, δ) conversion of ρ is loose, so the Gaussian's real privacy
profile at ρ × 4 still nearly meets the claim (its excess δ at ε is ~1e-4, beyond what a few
thousand releases can resolve). 1 000 releases per data set (one vectorised call each): what the
planted overspend needs. Under it P(S | x) ≈ 0.50 and P(S | x′) ≈ 0.16 at the best event
(measured with 4 000), a point excess of 0.50 − e^0.5 · 0.16 ≈ 0.23; at 1 000 the
Clopper–Pearson margins (level 0.05 / 8) take ≈ 0.09 off it, so its lower bound is expected
at ≈ 0.14 with a sampling SD ≈ 0.025: above the asserted 100 δ = 1e-3 by more than 5 SD.
(4 000 releases, as before, only raised that bound to ≈ 0.19.)

AIM on two binary columns (workload the one pair, candidates the two columns and the pair,
T = 4 rounds: the one-way step, then two or three rounds as the significance rule doubles
or not, so the budget update is exercised), x with n = 100 strongly dependent records
(cells 40, 10, 10, 40: the pair is selected in most releases) and x′ = x plus one record in
cell (1, 1); audited output again the model's estimate of cell (1, 1), events
{estimate ≥ t} for t ∈ {40.6, 40.8}, claimed (ε, δ) = (2, 1e-5). AIM runs one replicate at a
time (its rounds depend on the data), ~40 ms a release here, so the audit draws 100 releases
per data set: it resolves only gross violations (δ lower bounds above ~0.3 at ε = 2), so the
planted overspend is the same σ/10 (ρ × 100) as MST's, which takes the estimate's spread
from ~2.5 to ~0.27 counts (δ lower bound ~0.3 expected); the correct release must pass.
The estimate step runs at most 300 steps: privacy does not depend on it (every
data-dependent step of AIM, selections included, is a ledgered mechanism; the model is
post-processing of their outputs).
"""

import numpy as np
import pytest
from noise_helpers import scaled_noise

from harness.privacy import PrivacyLedger, audit_delta, zcdp_rho
from harness.synthesizers import pgm
from harness.synthesizers.pgm_model import Estimation

pytest.importorskip("mbi")

EPSILON, DELTA = 0.5, 1e-5
CARDS = np.array([2, 2])
X = np.array([[0, 0]] * 8 + [[0, 1]] * 4 + [[1, 0]] * 4 + [[1, 1]] * 4)
X_PRIME = np.vstack([X, [[1, 1]]])
SAMPLES = 1_000
THRESHOLDS = [5.0, 6.0, 7.0, 8.0]


def cell_estimate(data, rng, size):
    """``size`` MST releases of ``data``: each model's estimated count of cell (1, 1)."""
    batch = np.repeat(data[None], size, axis=0)
    ledger = PrivacyLedger(zcdp_delta=DELTA)
    fit = pgm.mst(batch, CARDS, zcdp_rho(EPSILON, DELTA), "add/remove", rng, ledger,
                  settings=Estimation(max_iters=500, tol=1e-6))
    assert ledger.total_epsilon() == pytest.approx(EPSILON, rel=1e-9)
    return fit.joint[:, 1, 1]


def events(thresholds=THRESHOLDS):
    return [lambda y, t=t: y >= t for t in thresholds]


def audit(seed):
    return audit_delta(cell_estimate, X_PRIME, X, events(), claimed_epsilon=EPSILON,
                       claimed_delta=DELTA, n_samples=SAMPLES, rng=np.random.default_rng(seed))


def overspent(real):
    """``real`` (gaussian_zcdp) with σ/10: ρ × 100 spent, the ledger still records ρ."""
    return scaled_noise(real, 0.1)


@pytest.mark.slow
def test_mst_release_passes_and_a_planted_overspend_fails(monkeypatch):
    ok = audit(41)
    monkeypatch.setattr(pgm, "gaussian_zcdp", overspent(pgm.gaussian_zcdp))
    bad = audit(42)
    print(f"\nMST: {ok.summary()}\nplanted overspend (σ/10): {bad.summary()}")
    assert ok.passed
    assert not bad.passed and bad.delta_lower_bound > 100 * DELTA


AIM_EPSILON = 2.0
AIM_X = np.array([[0, 0]] * 40 + [[0, 1]] * 10 + [[1, 0]] * 10 + [[1, 1]] * 40)
AIM_X_PRIME = np.vstack([AIM_X, [[1, 1]]])
AIM_SAMPLES = 100
AIM_THRESHOLDS = [40.6, 40.8]


def aim_cell_estimate(data, rng, size):
    """``size`` AIM releases of ``data`` (one at a time): each model's count of cell (1, 1)."""
    rho = zcdp_rho(AIM_EPSILON, DELTA)
    out = np.empty(size)
    for i in range(size):
        ledger = PrivacyLedger(zcdp_delta=DELTA)
        fit, _ = pgm.aim_one(data[None], CARDS, rho, "add/remove", rng, ledger, degree=2,
                             rounds=4, settings=Estimation(max_iters=300, tol=1e-6,
                                                           patience=1))
        assert ledger.total_rho() == pytest.approx(rho, rel=1e-9)
        out[i] = fit.joint[0, 1, 1]
    return out


def aim_audit(seed):
    return audit_delta(aim_cell_estimate, AIM_X_PRIME, AIM_X, events(AIM_THRESHOLDS),
                       claimed_epsilon=AIM_EPSILON, claimed_delta=DELTA,
                       n_samples=AIM_SAMPLES, rng=np.random.default_rng(seed))


@pytest.mark.slow
def test_aim_release_passes_and_a_planted_overspend_fails(monkeypatch):
    ok = aim_audit(43)
    monkeypatch.setattr(pgm, "gaussian_zcdp", overspent(pgm.gaussian_zcdp))
    bad = aim_audit(44)
    print(f"\nAIM: {ok.summary()}\nplanted overspend (σ/10): {bad.summary()}")
    assert ok.passed
    assert not bad.passed and bad.delta_lower_bound > 0.1
