"""Combining rules for inference from m synthetic data sets (Bowen & Liu 2020 Eqs. 9–11).

All functions are vectorised: inputs have shape (..., m, E) — any leading axes (replicates),
then the m released sets, then the estimands — and results have shape (..., E).

* ``partial`` (default; Reiter 2003, proved for MODIPS by Liu 2016b, used by every seed paper):
  q̄ = mean_j q̂_j, B = Σ_j (q̂_j − q̄)²/(m − 1), W = mean_j u_j, T = B/m + W,
  ν = (m − 1)(1 + mW/B)², CI = q̄ ± t_{ν,1−α/2} √T.
* ``full`` (Raghunathan, Reiter & Rubin 2003): T_f = (1 + 1/m)B − W,
  ν_f = (m − 1)(1 − mW/((m + 1)B))²; when T_f ≤ 0 the Reiter (2002) fallback T = W (n_syn = n)
  with ν = ∞ is used. Bowen & Liu reject this rule (it under-covers); it is an ablation only.

Edge cases are explicit, never silent:
* m = 1: T = u (the single set's within variance), ν = ∞ (Wald z interval), B = NaN.
* B = 0 with W > 0: ν = ∞ (normal quantile).
* T = 0 or non-finite: the CI is undefined (NaN) and the replicate is flagged unusable
  (Bowen & Liu supplement, Table 1: a release with a single level of a binary variable).
* A NaN estimate marks a set *dropped* for that estimand (e.g. a GLOM cell mean when the set
  has fewer than 2 records in the cell, spec 000 §6 item 16). The rule is then applied to the
  m_e ≤ m sets that remain for that (replicate, estimand): q̄, B and W over those sets,
  T = B/m_e + W and ν = (m_e − 1)(1 + m_e W/B)²; m_e = 1 gives the m = 1 rule (T = W, z
  interval) and m_e = 0 an unusable replicate. Arrays without NaN take the plain path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

COMBINING_RULES = ("partial", "full")


@dataclass(frozen=True)
class Pooled:
    """Pooled inference per replicate and estimand (arrays of shape (..., E))."""

    estimate: np.ndarray
    between: np.ndarray
    within: np.ndarray
    variance: np.ndarray
    df: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    usable: np.ndarray
    m: int


def t_quantile(df: np.ndarray, prob: float) -> np.ndarray:
    """Student-t quantile for an array of degrees of freedom; df = ∞ gives the normal quantile."""
    df = np.asarray(df, dtype=float)
    out = np.full(df.shape, special.ndtri(prob))
    finite = np.isfinite(df) & (df > 0)
    if finite.any():
        out[finite] = special.stdtrit(df[finite], prob)
    out[~np.isfinite(df) & ~np.isinf(df)] = np.nan
    return out


def combine(
    estimates: np.ndarray,
    variances: np.ndarray,
    *,
    rule: str = "partial",
    level: float = 0.95,
) -> Pooled:
    """Pool m per-set estimates and within-set variances (axis −2) into one inference."""
    if rule not in COMBINING_RULES:
        raise ValueError(f"combining rule must be one of {COMBINING_RULES}, got {rule!r}")
    q = np.asarray(estimates, dtype=float)
    u = np.asarray(variances, dtype=float)
    if q.shape != u.shape or q.ndim < 2:
        raise ValueError(f"estimates {q.shape} and variances {u.shape} must match as (..., m, E)")
    m = q.shape[-2]
    if np.isnan(q).any():
        return _combine_dropped_sets(q, u, rule, level)
    qbar = q.mean(axis=-2)
    w = u.mean(axis=-2)
    if m == 1:
        b = np.full(qbar.shape, np.nan)
        t = w.copy()
        df = np.full(qbar.shape, np.inf)
    else:
        b = q.var(axis=-2, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            if rule == "partial":
                t = b / m + w
                df = np.where(b > 0, (m - 1) * (1.0 + m * w / b) ** 2, np.inf)
            else:
                t = (1.0 + 1.0 / m) * b - w
                df = np.where(b > 0, (m - 1) * (1.0 - m * w / ((m + 1) * b)) ** 2, np.inf)
                fallback = ~(t > 0)
                t = np.where(fallback, w, t)
                df = np.where(fallback, np.inf, df)
    usable = np.isfinite(t) & (t > 0) & np.isfinite(qbar)
    half = t_quantile(df, 0.5 + level / 2.0) * np.sqrt(np.where(usable, t, np.nan))
    return Pooled(qbar, b, w, t, df, qbar - half, qbar + half, usable, m)


def _combine_dropped_sets(q: np.ndarray, u: np.ndarray, rule: str, level: float) -> Pooled:
    """The combining rule with a per-(replicate, estimand) number of sets m_e: sets whose
    estimate is NaN are dropped (see the module docstring)."""
    keep = ~np.isnan(q)
    m_e = keep.sum(axis=-2)
    m_safe = np.maximum(m_e, 1)
    qz = np.where(keep, q, 0.0)
    qbar = qz.sum(axis=-2) / m_safe
    w = np.where(keep, u, 0.0).sum(axis=-2) / m_safe
    dev = np.where(keep, q - qbar[..., None, :], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        b = (dev * dev).sum(axis=-2) / (m_e - 1)
        b = np.where(m_e >= 2, b, np.nan)
        if rule == "partial":
            t = np.where(m_e >= 2, b / m_safe + w, w)
            df = np.where(b > 0, (m_e - 1) * (1.0 + m_e * w / b) ** 2, np.inf)
        else:
            t = np.where(m_e >= 2, (1.0 + 1.0 / m_safe) * b - w, w)
            df = np.where(b > 0, (m_e - 1) * (1.0 - m_e * w / ((m_e + 1) * b)) ** 2, np.inf)
            fallback = ~(t > 0)
            t = np.where(fallback, w, t)
            df = np.where(fallback, np.inf, df)
    qbar = np.where(m_e > 0, qbar, np.nan)
    t = np.where(m_e > 0, t, np.nan)
    df = np.where(m_e >= 2, df, np.inf)
    usable = np.isfinite(t) & (t > 0) & np.isfinite(qbar)
    half = t_quantile(df, 0.5 + level / 2.0) * np.sqrt(np.where(usable, t, np.nan))
    return Pooled(qbar, b, w, t, df, qbar - half, qbar + half, usable, q.shape[-2])
