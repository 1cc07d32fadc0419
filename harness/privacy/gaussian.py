"""The Gaussian mechanism with the analytic calibration of Balle & Wang (2018, "Improving the
Gaussian mechanism for differential privacy: analytical calibration and optimal denoising",
ICML, Thm 8 and Alg. 1): the smallest σ with Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) ≤ δ, for
Δ the l2 sensitivity. It is (ε, δ)-DP for every ε; the classical σ = Δ√(2 ln(1.25/δ))/ε holds
only for ε < 1 and is larger. The ledger records ε and δ."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from .ledger import LedgerEntry, PrivacyLedger
from .mechanisms import _check
from .relation import resolve


def gaussian_delta(sigma: float, epsilon: float, l2_sensitivity: float) -> float:
    """The δ for which N(0, σ²) noise on a statistic of l2 sensitivity Δ is (ε, δ)-DP, exactly
    (Balle & Wang 2018, Thm 8): Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)."""
    a, b = l2_sensitivity / (2 * sigma), epsilon * sigma / l2_sensitivity
    first = math.exp(float(log_ndtr(a - b)))
    second = math.exp(epsilon + float(log_ndtr(-a - b)))
    return max(first - second, 0.0)


def analytic_gaussian_sigma(epsilon: float, delta: float, l2_sensitivity: float) -> float:
    """The smallest σ for which the Gaussian mechanism is (ε, δ)-DP (Balle & Wang 2018,
    Alg. 1), by a root search on log σ of the exact privacy profile :func:`gaussian_delta`,
    which decreases in σ."""
    from scipy.optimize import brentq  # at call time (import cost)

    _check(epsilon, l2_sensitivity)
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")

    def excess(log_sigma: float) -> float:
        return gaussian_delta(math.exp(log_sigma), epsilon, l2_sensitivity) - delta

    lo = hi = math.log(l2_sensitivity)
    while excess(lo) <= 0:
        lo -= 2.0
    while excess(hi) > 0:
        hi += 2.0
    return math.exp(brentq(excess, lo, hi, xtol=1e-14, rtol=1e-14, maxiter=500))


def gaussian_mechanism(
    values,
    *,
    l2_sensitivity: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    statistic: str,
    parallel_group: str | None = None,
) -> np.ndarray:
    """``values`` + N(0, σ²) per element with the analytic σ of :func:`analytic_gaussian_sigma`
    for the l2 sensitivity of the whole vector (a :class:`~harness.privacy.relation.Sensitivity`
    is resolved under the ledger's relation); the ledger records (ε, δ)."""
    l2_sensitivity = resolve(l2_sensitivity, ledger)
    sigma = analytic_gaussian_sigma(epsilon, delta, l2_sensitivity)
    ledger.record(LedgerEntry(statistic, "gaussian_analytic", epsilon, float(l2_sensitivity),
                              sigma, parallel_group, delta=float(delta)))
    v = np.asarray(values, dtype=float)
    return v + rng.standard_normal(v.shape) * sigma
