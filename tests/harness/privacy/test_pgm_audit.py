"""Empirical audit of MST (harness/synthesizers/pgm.py) on a tiny domain: two binary columns,
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
thousand releases can resolve). 4 000 releases per data set (one vectorised call each).
"""

import numpy as np
import pytest

from harness.privacy import PrivacyLedger, audit_delta, zcdp_rho
from harness.synthesizers import pgm
from harness.synthesizers.pgm_model import Estimation

pytest.importorskip("mbi")

EPSILON, DELTA = 0.5, 1e-5
CARDS = np.array([2, 2])
X = np.array([[0, 0]] * 8 + [[0, 1]] * 4 + [[1, 0]] * 4 + [[1, 1]] * 4)
X_PRIME = np.vstack([X, [[1, 1]]])
SAMPLES = 4_000
THRESHOLDS = [5.0, 6.0, 7.0, 8.0]


def cell_estimate(data, rng, size):
    """``size`` MST releases of ``data``: each model's estimated count of cell (1, 1)."""
    batch = np.repeat(data[None], size, axis=0)
    ledger = PrivacyLedger(zcdp_delta=DELTA)
    fit = pgm.mst(batch, CARDS, zcdp_rho(EPSILON, DELTA), "add/remove", rng, ledger,
                  settings=Estimation(max_iters=500, tol=1e-6))
    assert ledger.total_epsilon() == pytest.approx(EPSILON, rel=1e-9)
    return fit.joint[:, 1, 1]


def events():
    return [lambda y, t=t: y >= t for t in THRESHOLDS]


def audit(seed):
    return audit_delta(cell_estimate, X_PRIME, X, events(), claimed_epsilon=EPSILON,
                       claimed_delta=DELTA, n_samples=SAMPLES, rng=np.random.default_rng(seed))


@pytest.mark.slow
def test_mst_release_passes_and_a_planted_overspend_fails(monkeypatch):
    ok = audit(41)
    real = pgm.gaussian_zcdp

    def overspent(values, **kwargs):  # σ/10: ρ × 100 spent, the ledger still records ρ
        out = real(values, **kwargs)
        return values + 0.1 * (out - values)

    monkeypatch.setattr(pgm, "gaussian_zcdp", overspent)
    bad = audit(42)
    print(f"\nMST: {ok.summary()}\nplanted overspend (σ/10): {bad.summary()}")
    assert ok.passed
    assert not bad.passed and bad.delta_lower_bound > 100 * DELTA
