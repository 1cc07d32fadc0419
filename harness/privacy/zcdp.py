"""Zero-concentrated differential privacy (zCDP; Bun & Steinke 2016, "Concentrated
differential privacy: simplifications, extensions, and lower bounds", TCC): the Gaussian
mechanism and the exponential mechanism with their ρ, and the conversion of a composed ρ to
(ε, δ).

* Gaussian mechanism: N(0, σ²) noise on a statistic of l2 sensitivity Δ₂ is ρ-zCDP with
  ρ = Δ₂²/(2σ²) (Bun & Steinke 2016, Prop. 1.6); here σ = Δ₂/√(2ρ) for the ρ to spend.
* Exponential mechanism with parameter ε (sampling ∝ exp(ε·u/(2Δu))) is ε²/8-zCDP (Cesar &
  Rogers 2021, "Bounding, concentrating, and truncating: unifying privacy loss composition for
  data analytics", ALT, Lemma 3.2: bounded range); here ε = √(8ρ).
* ρ composes by summation (Bun & Steinke 2016, Lemma 2.3).
* Conversion (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for differential
  privacy", NeurIPS, Prop. 12 applied to the Rényi divergences αρ of ρ-zCDP): ρ-zCDP implies
  (ε, δ)-DP with

      ε(ρ, δ) = inf_{α > 1}  αρ + (log(1/δ) − log α)/(α − 1) + log(1 − 1/α),

  floored at 0. This is the conversion OpenDP 0.16 uses (``make_zCDP_to_approxDP``; the test
  checks it to 1e-9). The infimum is found by a bounded scalar search on log(α − 1).
"""

from __future__ import annotations

import math

import numpy as np

from .exponential import gumbel_argmax
from .ledger import LedgerEntry, PrivacyLedger


def gaussian_sigma_zcdp(rho: float, l2_sensitivity: float) -> float:
    """σ = Δ₂/√(2ρ): the Gaussian noise that spends ρ on a statistic of l2 sensitivity Δ₂."""
    if not (rho > 0 and math.isfinite(rho)):
        raise ValueError(f"rho must be finite and > 0, got {rho!r}")
    if not (l2_sensitivity > 0 and math.isfinite(l2_sensitivity)):
        raise ValueError(f"l2_sensitivity must be finite and > 0, got {l2_sensitivity!r}")
    return float(l2_sensitivity) / math.sqrt(2.0 * rho)


def gaussian_zcdp(
    values,
    *,
    l2_sensitivity: float,
    rho: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    statistic: str,
    parallel_group: str | None = None,
    note: str = "",
) -> np.ndarray:
    """``values`` + N(0, σ²) per element, σ = Δ₂/√(2ρ) for the l2 sensitivity Δ₂ of the whole
    vector (leading axes are independent replicates, one spend). The ledger records ρ, σ, Δ₂
    and the ledger's neighbour relation."""
    sigma = gaussian_sigma_zcdp(rho, l2_sensitivity)
    ledger.record(LedgerEntry(statistic, "gaussian_zcdp", 0.0, float(l2_sensitivity), sigma,
                              parallel_group, note, rho=float(rho)))
    v = np.asarray(values, dtype=float)
    return v + rng.standard_normal(v.shape) * sigma


def exponential_zcdp(
    scores,
    *,
    sensitivity: float,
    rho: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    statistic: str,
    parallel_group: str | None = None,
) -> np.ndarray:
    """The exponential mechanism over the last axis of ``scores`` (score sensitivity Δu) at
    ε = √(8ρ), i.e. probabilities ∝ exp(ε·u/(2Δu)), which spends ρ = ε²/8 (Cesar & Rogers
    2021, bounded range). Leading axes are independent replicates; −inf excludes a
    candidate. Returns the chosen indices."""
    if not (rho > 0 and math.isfinite(rho)):
        raise ValueError(f"rho must be finite and > 0, got {rho!r}")
    epsilon = math.sqrt(8.0 * rho)
    denominator = 2.0 * float(sensitivity)
    ledger.record(LedgerEntry(statistic, "exponential_zcdp", 0.0, float(sensitivity),
                              denominator / epsilon, parallel_group,
                              f"ε = √(8ρ) = {epsilon:.6g}", rho=float(rho)))
    return gumbel_argmax(scores, epsilon / denominator, rng)
