"""Linear least-squares inference vectorised over leading (replicate, set) axes: OLS with its
classical variances, and ridge regression with the penalty chosen by generalised
cross-validation (GCV; Golub, Heath & Wahba 1979) and the sandwich variance of the ridge
estimator.

Both work on a design (..., n, d) and a response (..., n) and return coefficients and their
variances (..., d), so one call fits every synthetic set of every replicate.

Ridge (no intercept, no standardisation):
    β̂(λ) = (XᵀX + λI)⁻¹Xᵀy,  H(λ) = X(XᵀX + λI)⁻¹Xᵀ,
    GCV(λ) = n·RSS(λ) / (n − tr H(λ))²,
    Cov β̂ = σ̂²(XᵀX + λI)⁻¹XᵀX(XᵀX + λI)⁻¹ with σ̂² = RSS/(n − tr H).
Every λ of the grid is evaluated at once through the eigendecomposition XᵀX = VΛVᵀ:
with c = VᵀXᵀy, β̂(λ) = V c/(Λ + λ), tr H = Σ Λ/(Λ + λ) and
RSS = yᵀy − 2 Σ c²/(Λ + λ) + Σ Λc²/(Λ + λ)².
"""

from __future__ import annotations

import numpy as np


def ols_inference(design, y) -> tuple[np.ndarray, np.ndarray]:
    """OLS coefficients and their classical variances σ̂²[(XᵀX)⁻¹]_kk with σ̂² = RSS/(n − d),
    each (..., d). A design without full column rank gives NaN for every coefficient of that
    fit (an aliased coefficient is not estimable; the combining rule then drops the set)."""
    x = np.asarray(design, dtype=float)
    y = np.asarray(y, dtype=float)
    n, d = x.shape[-2:]
    xtx = np.swapaxes(x, -1, -2) @ x
    xty = (np.swapaxes(x, -1, -2) @ y[..., None])[..., 0]
    rank = np.linalg.matrix_rank(xtx)
    safe = np.where((rank == d)[..., None, None], xtx, np.eye(d))
    inv = np.linalg.inv(safe)
    beta = (inv @ xty[..., None])[..., 0]
    resid = y - (x @ beta[..., None])[..., 0]
    sigma2 = (resid ** 2).sum(-1) / max(n - d, 1)
    var = sigma2[..., None] * np.diagonal(inv, axis1=-2, axis2=-1)
    bad = (rank < d)[..., None]
    return np.where(bad, np.nan, beta), np.where(bad, np.nan, var)


def ridge_gcv(design, y, lambdas) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ridge coefficients, their sandwich variances (each (..., d)) and the GCV-chosen λ (...),
    over the grid ``lambdas`` (a fixed λ is a one-value grid)."""
    x = np.asarray(design, dtype=float)
    y = np.asarray(y, dtype=float)
    xtx = np.swapaxes(x, -1, -2) @ x
    xty = (np.swapaxes(x, -1, -2) @ y[..., None])[..., 0]
    return ridge_gcv_moments(xtx, xty, (y ** 2).sum(-1), x.shape[-2], lambdas)


def ridge_gcv_moments(xtx, xty, yty, n: int, lambdas) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray]:
    """:func:`ridge_gcv` from the fit's sufficient statistics XᵀX (..., d, d), Xᵀy (..., d), yᵀy
    (...) and the number of records n: the same numbers without the (n, d) design. A diagonal
    XᵀX (a cell-indicator design: the cell counts) may be given as its diagonal (..., d); its
    eigendecomposition is then the identity, with no eigensolver call."""
    xtx = np.asarray(xtx, dtype=float)
    xty = np.asarray(xty, dtype=float)
    lam = np.asarray(lambdas, dtype=float).ravel()
    if lam.size == 0 or (lam <= 0).any():
        raise ValueError("ridge_gcv: lambdas must be > 0")
    if xtx.ndim == xty.ndim:  # the diagonal of a diagonal XᵀX
        evals, vecs = xtx, np.broadcast_to(np.eye(xtx.shape[-1]), xtx.shape + xtx.shape[-1:])
        c = xty
    else:
        evals, vecs = np.linalg.eigh(xtx)
        c = (np.swapaxes(vecs, -1, -2) @ xty[..., None])[..., 0]
    evals = np.clip(evals, 0.0, None)
    shrink = 1.0 / (evals[..., None, :] + lam[:, None])  # (..., L, d)
    c2 = c[..., None, :] ** 2
    rss = (np.asarray(yty, dtype=float)[..., None] - 2 * (c2 * shrink).sum(-1)
           + (evals[..., None, :] * c2 * shrink ** 2).sum(-1))
    rss = np.clip(rss, 0.0, None)
    trace = (evals[..., None, :] * shrink).sum(-1)
    gcv = n * rss / (n - trace) ** 2
    best = np.argmin(gcv, axis=-1)
    pick = lambda a: np.take_along_axis(a, best[..., None], -1)[..., 0]  # noqa: E731
    s = np.take_along_axis(shrink, best[..., None, None], -2)[..., 0, :]
    if xtx.ndim == xty.ndim:
        beta, cov_diag = c * s, evals * s ** 2
    else:
        beta = (vecs @ (c * s)[..., None])[..., 0]
        cov_diag = ((vecs ** 2) @ (evals * s ** 2)[..., None])[..., 0]
    sigma2 = pick(rss) / (n - pick(trace))
    return beta, sigma2[..., None] * cov_diag, lam[best]
