"""The conversion of a composed zCDP ρ to (ε, δ)-DP and back (Canonne, Kamath & Steinke 2020,
"The discrete Gaussian for differential privacy", NeurIPS, Prop. 12; the conversion OpenDP 0.16
uses). A module of its own, without mechanisms, so that the ledger can convert its total
without importing them; the mechanisms are in :mod:`harness.privacy.zcdp`."""

from __future__ import annotations

import math

import numpy as np


def _check_delta(delta: float) -> None:
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The ε of the (ε, δ)-DP guarantee of a ρ-zCDP mechanism (see the module docstring)."""
    from scipy.optimize import minimize_scalar  # at call time (import cost)

    _check_delta(delta)
    if not (rho >= 0 and math.isfinite(rho)):
        raise ValueError(f"rho must be finite and >= 0, got {rho!r}")
    if rho == 0:
        return 0.0
    log_inv_delta = -math.log(delta)

    def eps(t: float) -> float:  # t = log(α − 1)
        alpha = 1.0 + math.exp(t)
        return (alpha * rho + (log_inv_delta - math.log(alpha)) / (alpha - 1.0)
                + math.log1p(-1.0 / alpha))

    # the minimiser α* ≈ 1 + √(log(1/δ)/ρ) lies well inside these bounds for any ρ, δ of use
    best = minimize_scalar(eps, bounds=(-40.0, 40.0), method="bounded",
                           options={"xatol": 1e-12})
    return max(float(best.fun), 0.0)


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest ρ whose conversion :func:`zcdp_epsilon` at δ does not exceed ε (the ρ a
    zCDP method spends for a user's (ε, δ))."""
    from scipy.optimize import brentq  # at call time (import cost)

    _check_delta(delta)
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")

    def excess(log_rho: float) -> float:
        return zcdp_epsilon(math.exp(log_rho), delta) - epsilon

    lo, hi = math.log(epsilon) - 10.0, math.log(epsilon) + 2.0
    while excess(lo) >= 0:
        lo -= 10.0
    while excess(hi) < 0:
        hi += 2.0
    rho = math.exp(brentq(excess, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500))
    while zcdp_epsilon(rho, delta) > epsilon:  # the largest ρ at or below the target
        rho = float(np.nextafter(rho, 0.0))
    return rho
