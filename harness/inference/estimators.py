"""Point estimators with their within-set variance estimates, vectorised over leading axes."""

from __future__ import annotations

import numpy as np


def cell_proportions(counts: np.ndarray, n) -> tuple[np.ndarray, np.ndarray]:
    """Sample proportions p̂_k = n_k/n of a K-cell table (last axis) and their binomial variance
    estimates p̂_k(1 − p̂_k)/n (Bowen & Liu §4.1: v_j = p̂_j(1 − p̂_j) n⁻¹)."""
    n = np.asarray(n, dtype=float)
    p = np.asarray(counts, dtype=float) / n[..., None] if n.ndim else np.asarray(counts) / n
    return p, p * (1.0 - p) / (n[..., None] if n.ndim else n)


def sample_mean(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sample mean x̄ of the last axis (records) and its variance estimate s²/n, s² with divisor
    n − 1 (Bowen & Liu §4.2: x̄_j with within-set variance s_j²/n). Vectorised over leading axes
    such as (R, m)."""
    x = np.asarray(x, dtype=float)
    n = x.shape[-1]
    return x.mean(axis=-1), x.var(axis=-1, ddof=1) / n


def sample_variance(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sample variance s² (divisor n − 1) of the last axis and its variance estimate
    (s²)²(2/(n − 1) + κ/n), κ the moment excess kurtosis m₄/m₂² − 3 with central moments
    m_k = Σ(x_i − x̄)^k / n (Bowen & Liu §4.2; spec 000 §4.2 and §6 item 16). A set of identical
    values has s² = 0 and variance estimate 0. Vectorised over leading axes such as (R, m)."""
    x = np.asarray(x, dtype=float)
    n = x.shape[-1]
    d = x - x.mean(axis=-1, keepdims=True)
    d2 = d * d
    m2 = d2.mean(axis=-1)
    m4 = (d2 * d2).mean(axis=-1)
    s2 = m2 * n / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(m2 > 0, m4 / np.where(m2 > 0, m2 * m2, 1.0) - 3.0, 0.0)
    return s2, s2 * s2 * (2.0 / (n - 1) + kappa / n)
