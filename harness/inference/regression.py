"""Downstream regressions of a released data set, vectorised over leading (replicate) axes:
ordinary least squares with an intercept, and unpenalised logistic regression by Newton–Raphson
(IRLS), reusing :func:`harness.models.logistic.posterior_mode` with a flat prior."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..models.logistic import posterior_mode
from .design import collapse_batch


def with_intercept(x) -> np.ndarray:
    """[1, x] along the last axis: x (..., n, p) → (..., n, p + 1)."""
    x = np.asarray(x, dtype=float)
    return np.concatenate([np.ones((*x.shape[:-1], 1)), x], axis=-1)


#: the normal equations are solved only when the Gram matrix's condition number is below this:
#: their solution then agrees with the pseudo-inverse's to about 1e-16 × this, relative
GRAM_CONDITION_LIMIT = 1e8


def _well_conditioned(gram) -> np.ndarray:
    """(...) True where the d × d Gram matrix's condition number is below the limit."""
    sv = np.linalg.svd(gram, compute_uv=False)  # (..., d): cheap, the Gram matrix is d × d
    return sv[..., -1] * GRAM_CONDITION_LIMIT > sv[..., 0]


def ols(x, y, intercept: bool = True) -> np.ndarray:
    """Least-squares coefficients (..., p + 1) (intercept first) of y (..., n) on x (..., n, p):
    the normal equations XᵀXβ = Xᵀy (one batched solve, several times faster than the SVD of
    every n × d design) for the fits whose Gram matrix is well conditioned
    (:data:`GRAM_CONDITION_LIMIT`); for the others, the same equations with every column
    scaled to unit length (DXᵀXD γ = DXᵀy, β = Dγ, D = diag(1/‖x_j‖)) when that scaled Gram
    matrix is well conditioned (columns of very different scales, e.g. an intercept beside
    noise of scale 10⁷: the solution agrees with the pseudo-inverse's to about 1e-16 × the
    limit, relative, at a fraction of its SVD of every n × d design), and the pseudo-inverse for
    the rest (the minimum-norm solution if a design is rank deficient). The intercept's
    column is never written out (:func:`_normal_equations`)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    gram, xty = _normal_equations(x, y, intercept)
    bad = ~_well_conditioned(gram)
    beta = np.linalg.solve(np.where(bad[..., None, None], np.eye(gram.shape[-1]), gram),
                           xty)[..., 0]
    if bad.any():
        g, b = gram[bad], xty[bad][..., 0]
        diag = np.diagonal(g, axis1=-2, axis2=-1)
        scale = 1.0 / np.sqrt(np.where(diag > 0, diag, 1.0))  # (k, d): 1/‖x_j‖
        scaled = g * scale[:, :, None] * scale[:, None, :]
        ok = (diag > 0).all(axis=-1) & _well_conditioned(scaled)
        fit = np.empty_like(b)
        if ok.any():
            fit[ok] = np.linalg.solve(scaled[ok], (b[ok] * scale[ok])[..., None])[..., 0] \
                * scale[ok]
        if not ok.all():
            rest = tuple(i[~ok] for i in np.nonzero(bad))
            design = with_intercept(x[rest]) if intercept else x[rest]
            fit[~ok] = (np.linalg.pinv(design) @ y[rest][..., None])[..., 0]
        beta[bad] = fit
    return beta


def _normal_equations(x, y, intercept: bool):
    """(DᵀD (..., d, d), Dᵀy (..., d, 1)) of the design D = [1, x] (or x) without writing D
    out (a copy of every record, the dominant cost on (replicate, set, record) batches): the
    intercept's entries are n, the column sums of x and the sum of y."""
    xt = np.swapaxes(x, -1, -2)
    if not intercept:
        return xt @ x, xt @ y[..., None]
    n, p = x.shape[-2:]
    lead = np.broadcast_shapes(x.shape[:-2], y.shape[:-1])
    gram = np.empty((*lead, p + 1, p + 1))
    gram[..., 0, 0] = n
    sums = x.sum(axis=-2)
    gram[..., 0, 1:] = sums
    gram[..., 1:, 0] = sums
    gram[..., 1:, 1:] = xt @ x
    xty = np.empty((*lead, p + 1, 1))
    xty[..., 0, 0] = y.sum(axis=-1)
    xty[..., 1:, :] = xt @ y[..., None]
    return gram, xty


def ols_fitted(x, y, intercept: bool = True) -> np.ndarray:
    """Fitted values (..., n) of :func:`ols`."""
    x = np.asarray(x, dtype=float)
    beta = ols(x, y, intercept)
    if not intercept:
        return (x @ beta[..., None])[..., 0]
    return (x @ beta[..., 1:, None])[..., 0] + beta[..., :1]


def logistic_mle(x, y, intercept: bool = True, maxit: int = 100, *, tol: float = 1e-9,
                 max_abs: float = 1e3, collapse: bool = False):
    """Unpenalised logistic regression of binary y (..., n) on x (..., n, p): coefficients
    (..., p + 1) (intercept first) and an ``ok`` flag (...) that is False when Newton–Raphson
    did not converge or the estimate runs off to infinity (separation). Newton with step
    halving, flat prior (:func:`harness.models.logistic.posterior_mode`; ``maxit``, ``tol``
    and ``max_abs`` are its). ``collapse``: when the records (x, y) are integer-valued and
    repeat, fit each data set's distinct records weighted by their counts
    (:func:`harness.inference.design.collapse_batch`), the same fit up to the order of its
    sums and several times faster; otherwise (or when they do not repeat) the records."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y)
    lead = np.broadcast_shapes(x.shape[:-2], y.shape[:-1])
    n, p = x.shape[-2:]
    flat_x = np.broadcast_to(x, (*lead, n, p)).reshape(-1, n, p)
    flat_y = np.broadcast_to(y, (*lead, n)).reshape(-1, n)
    if not np.all((flat_y == 0) | (flat_y == 1)):
        raise ValueError("logistic_mle: y must hold 0/1 values")
    grouped = collapse_batch(flat_x, flat_y[..., None]) if collapse else None
    weights = None
    if grouped is not None:
        rows, weights = grouped
        flat_x, flat_y = rows[..., :p], rows[..., p]
    design = with_intercept(flat_x) if intercept else flat_x
    beta, _, ok = posterior_mode(design, flat_y.astype(np.int64), 2, 0.0, maxit=maxit, tol=tol,
                                 max_abs=max_abs, weights=weights)
    return beta[:, 0, :].reshape(*lead, design.shape[-1]), ok.reshape(lead)


def logistic_probabilities(x, beta, intercept: bool = True) -> np.ndarray:
    """P(y = 1 | x) (..., n) for coefficients (..., p + 1)."""
    design = with_intercept(x) if intercept else np.asarray(x, dtype=float)
    eta = (design @ np.asarray(beta, dtype=float)[..., None])[..., 0]
    return expit(eta)


def glm_logistic(x, y, *, maxit: int = 25, epsilon: float = 1e-8):
    """R ``glm(y ~ x, family = binomial)`` fits of a batch of data sets, y (..., n) 0/1 on
    x (..., n, p) with an intercept: (coefficients (..., p + 1), converged (...), separated
    (...)), ``converged`` R's flag and ``separated`` True where the data have no finite MLE
    (Newton–Raphson from 0 does not converge in ``maxit`` steps). An aliased column (R's NA
    coefficient) gets 0, as ``predict`` then treats it.

    Where Newton–Raphson from 0 (:func:`logistic_mle`, distinct records with counts when they
    repeat) converges within ``maxit`` steps, the MLE exists and is what R's IRLS converges to:
    that estimate is kept (R's own stopping point is within its deviance rule, ``epsilon``, of
    it). The other data sets, where the data separate and R's answer is wherever its iterations
    stop, are fitted by :func:`harness.inference.glm_logit.glm_logit` itself (R's start, step,
    clamped link, deviance rule and ``maxit``) on their distinct records with counts."""
    from .glm_logit import GlmControl, glm_logit

    x = np.asarray(x, dtype=float)
    y = np.asarray(y)
    lead = np.broadcast_shapes(x.shape[:-2], y.shape[:-1])
    n, p = x.shape[-2:]
    beta, ok = logistic_mle(x, y, maxit=maxit, tol=epsilon, max_abs=np.inf, collapse=True)
    beta, ok = beta.reshape(-1, p + 1), ok.reshape(-1)
    separated = ~ok
    redo = np.flatnonzero(separated)
    if redo.size:
        flat_x = np.broadcast_to(x, (*lead, n, p)).reshape(-1, n, p)[redo]
        flat_y = np.broadcast_to(y, (*lead, n)).reshape(-1, n)[redo]
        grouped = collapse_batch(flat_x, flat_y[..., None], max_share=1.0)
        control = GlmControl(epsilon=epsilon, maxit=maxit)
        for j, i in enumerate(redo):
            if grouped is None:
                rows, yj, counts = flat_x[j], flat_y[j], None
            else:
                keep = grouped[1][j] > 0
                rows, yj, counts = grouped[0][j, keep, :p], grouped[0][j, keep, p], \
                    grouped[1][j, keep]
            fit = glm_logit(with_intercept(rows), yj, counts, control=control)
            beta[i] = np.nan_to_num(fit.coef, nan=0.0)
            ok[i] = fit.converged
    return beta.reshape(*lead, p + 1), ok.reshape(lead), separated.reshape(lead)
