"""Exact posterior draws of α-weighted Gaussian linear regressions under vague conjugate priors.

A risk-weighted pseudo posterior raises record i's likelihood to a power α_i ∈ [0, 1]
(Savitsky et al. 2022; the pseudo likelihood Π_i p(z_i | x_i, θ)^{α_i}). For a Gaussian linear
model the weighted likelihood stays conjugate: with A = diag(α) and n_α = Σ_i α_i,

* multivariate (d outcomes, ``mvreg_draws``), prior Σ ~ IW(ν₀, S₀) and flat B:
  B̂ = (XᵀAX)⁻¹XᵀAZ, S_res = (Z − XB̂)ᵀA(Z − XB̂),
  Σ | Z ~ IW(n_α − K + ν₀, S_res + S₀),  vec(B) | Σ, Z ~ N(vec(B̂), Σ ⊗ (XᵀAX)⁻¹);
* univariate (``linreg_draws``), prior p(b, σ²) ∝ σ⁻²:
  σ² | y ~ SSR_α / χ²_{n_α − K},  b | σ², y ~ N(b̂, σ² (XᵀAX)⁻¹).

(Records with α_i = 0 drop out.) These are the fast engine of the survey pseudo-posterior
synthesizers (``harness.models.survey``); draws are i.i.d., so a fixed generator seed gives the
same draws for the same weights, and the chi-square variates are drawn by their inverse CDF
(``chisquare_by_quantile``), so the generator consumes the same numbers whatever the weights and
every draw is a continuous function of α (common random numbers while tuning α).
"""

from __future__ import annotations

import numpy as np

from .wishart import chisquare_by_quantile, inverse_wishart_draw

DESIGN_FORMS = ("additive", "interaction")


def design_matrix(codes: np.ndarray, n_levels, form: str = "additive") -> np.ndarray:
    """Design matrix (..., n, K) of categorical codes (..., n, q) with ``n_levels[j]`` levels.

    ``additive``: intercept, then a dummy for every level but the first of each variable
    (K = 1 + Σ_j (L_j − 1)); ``interaction``: one indicator per combination of levels
    (cell means, K = Π_j L_j, no separate intercept)."""
    if form not in DESIGN_FORMS:
        raise ValueError(f"design form must be one of {DESIGN_FORMS}, got {form!r}")
    codes = np.asarray(codes).astype(np.int64)
    n_levels = [int(v) for v in n_levels]
    if codes.shape[-1] != len(n_levels):
        raise ValueError(f"codes have {codes.shape[-1]} variables, n_levels {len(n_levels)}")
    if form == "interaction":
        cell = np.zeros(codes.shape[:-1], dtype=np.int64)
        for j, k in enumerate(n_levels):
            cell = cell * k + codes[..., j]
        return (cell[..., None] == np.arange(int(np.prod(n_levels)))).astype(float)
    cols = [np.ones(codes.shape[:-1])]
    for j, k in enumerate(n_levels):
        cols.extend((codes[..., j] == level).astype(float) for level in range(1, k))
    return np.stack(cols, axis=-1)


def ones_coefficients(x: np.ndarray) -> np.ndarray:
    """The vector c with X c = 1 (e_intercept for intercept coding, all ones for cell-means
    coding); a ValueError if the column space of X does not hold the constant."""
    c, *_ = np.linalg.lstsq(x, np.ones(x.shape[0]), rcond=None)
    if not np.allclose(x @ c, 1.0, atol=1e-8):
        raise ValueError("the design matrix must span the constant (an intercept or cell means)")
    return c


def weighted_least_squares(x: np.ndarray, z: np.ndarray, alpha: np.ndarray):
    """(B̂ (K, d), (XᵀAX)⁻¹ (K, K), S_res (d, d), n_α) of the α-weighted regression of z (n, d)
    on x (n, K)."""
    alpha = np.asarray(alpha, dtype=float)
    xa = x * alpha[:, None]
    xtax = xa.T @ x
    try:
        xtax_inv = np.linalg.inv(xtax)
    except np.linalg.LinAlgError:
        raise ValueError("the α-weighted design XᵀAX is singular (too few weighted records "
                         "in some level)") from None
    coef = xtax_inv @ (xa.T @ z)
    resid = z - x @ coef
    ssr = (resid * alpha[:, None]).T @ resid
    return coef, 0.5 * (xtax_inv + xtax_inv.T), 0.5 * (ssr + ssr.T), float(alpha.sum())


def mvreg_draws(x, z, alpha, draws: int, rng: np.random.Generator, prior_df: float = 4.0,
                prior_scale: float = 1e-3):
    """``draws`` i.i.d. draws (B (S, K, d), Σ (S, d, d)) of the α-weighted multivariate
    regression with prior Σ ~ IW(prior_df, prior_scale·I), flat B (see the module docstring)."""
    coef, xtax_inv, ssr, n_alpha = weighted_least_squares(x, z, alpha)
    k, d = coef.shape
    df = n_alpha - k + prior_df
    if not df > d - 1:
        raise ValueError(f"too little weighted data: n_α = {n_alpha:.3g} for K = {k}")
    scale = np.broadcast_to(ssr + prior_scale * np.eye(d), (draws, d, d))
    sigma = inverse_wishart_draw(df, scale, rng, smooth_in_df=True)
    lx = np.linalg.cholesky(xtax_inv)
    ls = np.linalg.cholesky(sigma)
    e = rng.standard_normal((draws, k, d))
    b = coef + np.einsum("kj,sjd,sed->ske", lx, e, ls)
    return b, sigma


def linreg_draws(x, y, alpha, draws: int, rng: np.random.Generator):
    """``draws`` i.i.d. draws (b (S, K), σ² (S,)) of the α-weighted regression of y (n,) on
    x (n, K) under p(b, σ²) ∝ σ⁻² (see the module docstring)."""
    coef, xtax_inv, ssr, n_alpha = weighted_least_squares(x, y[:, None], alpha)
    k = coef.shape[0]
    if not n_alpha - k > 0:
        raise ValueError(f"too little weighted data: n_α = {n_alpha:.3g} for K = {k}")
    sigma2 = ssr[0, 0] / chisquare_by_quantile(np.full(draws, n_alpha - k), rng)
    lx = np.linalg.cholesky(xtax_inv)
    b = coef[:, 0] + np.sqrt(sigma2)[:, None] * (rng.standard_normal((draws, k)) @ lx.T)
    return b, sigma2
