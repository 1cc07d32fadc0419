"""Inverse-Wishart draws, vectorised over any leading axes.

Parameterisation as ``scipy.stats.invwishart(df, scale)``: Σ ~ IW(ν, Ψ) has density
∝ |Σ|^{−(ν+d+1)/2} exp(−tr(Ψ Σ⁻¹)/2) and mean Ψ/(ν − d − 1). Used by the general location
model (Bowen & Liu 2020 §4.3.1: Σ | z, w ~ IW(n − K, SSP), with the within-cell sum-of-squares
matrix as the scale, spec 000 §6 item 10).

Method (Bartlett decomposition): if A is lower triangular with A_ii = √χ²(ν − i) (i = 0..d−1)
and A_ij ~ N(0, 1) for i > j, then W = A Aᵀ ~ Wishart(ν, I). With Ψ = C Cᵀ (Cholesky),
Σ = C W⁻¹ Cᵀ = B Bᵀ with B = C A⁻ᵀ satisfies Σ⁻¹ = C⁻ᵀ W C⁻¹ ~ Wishart(ν, Ψ⁻¹), i.e.
Σ ~ IW(ν, Ψ).
"""

from __future__ import annotations

import numpy as np
from scipy import special


def chisquare_by_quantile(df, rng: np.random.Generator) -> np.ndarray:
    """χ²_df draws (shape of ``df``) by the inverse CDF of uniforms: the generator consumes the
    same numbers whatever df, and each draw is a continuous, increasing function of df for a
    fixed seed (common random numbers across fits whose degrees of freedom differ)."""
    df = np.asarray(df, dtype=float)
    return 2.0 * special.gammaincinv(df / 2.0, rng.random(df.shape))


def inverse_wishart_draw(df, scale, rng: np.random.Generator,
                         smooth_in_df: bool = False) -> np.ndarray:
    """One draw Σ ~ IW(df, scale) per leading index.

    ``scale`` has shape (..., d, d) (symmetric positive definite); ``df`` is a scalar or an array
    broadcasting against the leading axes ``...``, with df > d − 1. Returns (..., d, d).
    ``smooth_in_df``: draw the Bartlett chi-squares by ``chisquare_by_quantile``, so that for a
    fixed seed the draw is a continuous function of (df, scale).
    """
    scale = np.asarray(scale, dtype=float)
    if scale.ndim < 2 or scale.shape[-1] != scale.shape[-2]:
        raise ValueError(f"scale must have shape (..., d, d), got {scale.shape}")
    d = scale.shape[-1]
    lead = scale.shape[:-2]
    df = np.broadcast_to(np.asarray(df, dtype=float), lead)
    if np.any(~(df > d - 1)):
        raise ValueError(f"inverse-Wishart degrees of freedom must exceed d - 1 = {d - 1}")
    c = np.linalg.cholesky(scale)
    # Bartlett factor A: chi-square diagonal with df, df − 1, ..., df − d + 1 degrees of freedom
    dfs = df[..., None] - np.arange(d)
    diag = np.sqrt(chisquare_by_quantile(dfs, rng) if smooth_in_df else rng.chisquare(dfs))
    if d == 2:
        # closed form of B = C A⁻ᵀ for A = [[a, 0], [b, e]]: A⁻ᵀ = [[1/a, −b/(a e)], [0, 1/e]]
        a, e = diag[..., 0], diag[..., 1]
        b = rng.standard_normal(lead)
        c11, c21, c22 = c[..., 0, 0], c[..., 1, 0], c[..., 1, 1]
        b11 = c11 / a
        b12 = -c11 * b / (a * e)
        b21 = c21 / a
        b22 = -c21 * b / (a * e) + c22 / e
        out = np.empty((*lead, 2, 2))
        out[..., 0, 0] = b11 * b11 + b12 * b12
        out[..., 1, 1] = b21 * b21 + b22 * b22
        out[..., 0, 1] = out[..., 1, 0] = b11 * b21 + b12 * b22
        return out
    a = np.zeros((*lead, d, d))
    idx = np.arange(d)
    a[..., idx, idx] = diag
    low = np.tril_indices(d, -1)
    a[..., low[0], low[1]] = rng.standard_normal((*lead, low[0].size))
    b = c @ np.swapaxes(np.linalg.inv(a), -1, -2)
    out = b @ np.swapaxes(b, -1, -2)
    return 0.5 * (out + np.swapaxes(out, -1, -2))
