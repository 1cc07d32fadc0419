"""Multivariate combining over m synthetic sets: pooled covariance matrices, and the D2 pooled
χ² test of Li, Meng, Raghunathan & Rubin (1991) that STEPS uses for its 105 tests of association
(spec 003 §5.4). Vectorised over leading (replicate) axes.

Pooled covariance, for estimates q_j (k-vectors) and within-set covariances U_j, j = 1..m:
q̄ = mean_j q_j, Ū = mean_j U_j, B = Σ_j (q_j − q̄)(q_j − q̄)ᵀ/(m − 1), and the total covariance
T = Ū + B/m (``partial``: partially synthetic data, Reiter 2003 — the rule of the seed papers)
or T = (1 + 1/m)B − Ū (``full``: fully synthetic data, Raghunathan, Reiter & Rubin 2003; it
may fail to be positive definite, which the caller must check). The diagonal of T is the T of
the scalar rules in :mod:`.combine`.

D2 (Li et al. 1991), from the m χ² statistics d_j of one test with k degrees of freedom:
r₂ = (1 + 1/m)·Var(√d_j) (sample variance, denominator m − 1),
D2 = (d̄/k − ((m + 1)/(m − 1))·r₂)/(1 + r₂), ν₂ = k^(−3/m)·(m − 1)·(1 + 1/r₂)², and
p = P(F_{k,ν₂} > D2). D2 < 0 gives p = 1; r₂ = 0 gives the χ²_k limit p = P(χ²_k > d̄).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .combine import COMBINING_RULES


@dataclass(frozen=True)
class PooledCovariance:
    """q̄ (..., k), Ū, B and T (..., k, k) over ``m`` sets."""

    estimate: np.ndarray
    within: np.ndarray
    between: np.ndarray
    total: np.ndarray
    m: int


def pool_covariance(estimates, covariances, rule: str = "partial") -> PooledCovariance:
    """Pool m estimate vectors (..., m, k) and their within-set covariances (..., m, k, k)."""
    if rule not in COMBINING_RULES:
        raise ValueError(f"rule must be one of {COMBINING_RULES}, got {rule!r}")
    q = np.asarray(estimates, dtype=float)
    u = np.asarray(covariances, dtype=float)
    if q.ndim < 2 or u.shape != (*q.shape, q.shape[-1]):
        raise ValueError(f"need estimates (..., m, k) and covariances (..., m, k, k); got "
                         f"{q.shape} and {u.shape}")
    m = q.shape[-2]
    if m < 2:
        raise ValueError("pooling a covariance needs m >= 2 sets")
    qbar = q.mean(axis=-2)
    d = q - qbar[..., None, :]
    between = np.einsum("...ji,...jl->...il", d, d) / (m - 1)
    within = u.mean(axis=-3)
    total = within + between / m if rule == "partial" else (1 + 1 / m) * between - within
    return PooledCovariance(qbar, within, between, total, m)


@dataclass(frozen=True)
class D2Result:
    statistic: np.ndarray  # D2
    df_num: int | np.ndarray  # k
    df_den: np.ndarray  # ν₂ (inf where r₂ = 0)
    r2: np.ndarray
    pvalue: np.ndarray


def d2_test(chi2, k) -> D2Result:
    """Pool the χ² statistics (..., m) of one test with ``k`` degrees of freedom by D2; ``k``
    may be an integer array broadcasting against the leading axes (one df per test)."""
    from scipy import stats  # at call time: importing scipy.stats costs every process ~1 s

    d = np.asarray(chi2, dtype=float)
    m = d.shape[-1]
    if m < 2 or np.any(np.asarray(k) < 1):
        raise ValueError(f"D2 needs m >= 2 statistics and k >= 1, got m = {m}, k = {k}")
    if np.any(d < 0):
        raise ValueError("χ² statistics must be >= 0")
    r2 = (1 + 1 / m) * np.var(np.sqrt(d), axis=-1, ddof=1)
    dbar = d.mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = (dbar / k - (m + 1) / (m - 1) * r2) / (1 + r2)
        nu = np.where(r2 > 0, k ** (-3 / m) * (m - 1) * (1 + 1 / r2) ** 2, np.inf)  # ν₂
        p = np.where(r2 > 0, stats.f.sf(stat, k, nu), stats.chi2.sf(dbar, k))
    p = np.where(stat < 0, 1.0, p)
    return D2Result(stat, int(k) if np.ndim(k) == 0 else np.asarray(k), nu, r2, p)
