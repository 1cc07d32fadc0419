"""Logistic regression fitted the way R's ``glm(family = binomial)`` fits it, so that analyses
replicating published R code behave as the paper's did, separation included.

What is mimicked (R's ``stats::glm.fit`` and the C routines of ``family.c``):

* IRLS from R's starting values: μ₀ = (y + ½)/2 for every 0/1 record, η₀ = logit μ₀;
  at most ``maxit`` = 25 iterations; convergence when |D − D_old|/(|D| + 0.1) < ``epsilon``
  (1e−8), D the binomial deviance.
* R's clamped logit link: μ = e/(1 + e) with e = DBL_EPSILON for η < −30 and 1/DBL_EPSILON for
  η > 30; dμ/dη = DBL_EPSILON outside [−30, 30]. Under (quasi-)separation the fitted
  probabilities reach 1e−16 or 1 − 1e−16, the weights of those records collapse, the
  coefficients grow at every iteration and the fit stops at ``maxit`` with huge coefficients and
  standard errors and ``converged = False`` — R's "algorithm did not converge" and "fitted
  probabilities numerically 0 or 1 occurred" warnings, reported in ``warnings``.
* Aliasing: R solves each weighted least-squares step by a Householder QR that walks the
  columns in order and sets aside a column whose norm, after removing the columns already
  kept, falls below tol = min(1e−7, epsilon/1000) times its own norm (LINPACK ``dqrdc2``).
  Such a column's coefficient (and standard error) is NA; here NaN, with ``aliased`` True.
  The same in-order rule is applied to the diagonal of the unpivoted QR of the weighted design.
* ``GlmControl(solver="normal")`` is a faster approximation: R's aliasing from the first step,
  then Cholesky steps on the normal equations (QR again whenever a column is nearly dependent
  on the others, as under separation). It agrees with the QR path to ~1e−8 on well-conditioned
  designs; ``qr`` is the default and the R mimic.
* ``GlmControl(solver="sparse")`` gives the ``qr`` path's answer from a sparse design's
  normal equations, much faster for sparse designs (e.g. categorical dummies and their
  interactions): every step decides R's in-order aliasing afresh, from the Gram's Cholesky
  pivots and, where those cannot resolve the QR's tolerance, from the column's residual on the
  rows (:mod:`harness.inference.glm_gram`); a step whose kept columns are too ill-conditioned
  for the normal equations (e.g. under separation) is taken by the QR, as ``qr`` takes it.
  ``x`` may be a scipy sparse matrix, or a :class:`~harness.inference.glm_gram.SparseDesign`
  (e.g. with the categorical Gram of :mod:`harness.inference.categorical_gram`).
* Standard errors: dispersion 1, the inverse of RᵀR from the QR of the last weighted
  least-squares step (``summary.glm``), Wald intervals β̂ ± z·SE (``confint.default``).

Records may be given collapsed: ``counts`` (a frequency weight per row) says how many identical
0/1 records a row stands for and ``y`` is their proportion of ones. The fit (starting values,
iterations, deviance and convergence test included) is then the fit of the expanded 0/1
records, which R would run on the records one by one; this is not R's binomial ``weights``
semantics (whose start and deviance differ), and it is much faster when records repeat (a
categorical design has at most one row per cell).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import linalg, sparse
from scipy.special import ndtri

from ..errors import ConfigError, allowed
from .design import row_groups
from .glm_gram import SparseDesign

DBL_EPSILON = float(np.finfo(float).eps)
#: ``qr``: every step by QR, as R; ``normal``: the aliasing of R's first step, then Cholesky
#: steps on the normal equations, falling back to QR when a column is nearly dependent;
#: ``sparse``: the ``qr`` answer from the normal equations of a sparse design (every step)
SOLVERS = ("qr", "normal", "sparse")
#: a Cholesky pivot U_jj² below this share of the column's weighted squared norm means that
#: the normal equations lose too many digits: that step is taken by QR instead
NORMAL_EQUATIONS_FLOOR = 1e-8
#: R's family.c: |η| beyond this gives μ = ε/(1 + ε) or 1/(1 + ε) and dμ/dη = DBL_EPSILON
ETA_THRESHOLD = 30.0


@dataclass(frozen=True)
class GlmControl:
    """R's ``glm.control()`` defaults."""

    epsilon: float = 1e-8
    maxit: int = 25
    solver: str = "qr"

    def __post_init__(self):
        if self.solver not in SOLVERS:
            raise allowed("solver", self.solver, SOLVERS)
        if self.maxit < 1 or not self.epsilon > 0:
            raise ConfigError(f"glm control: maxit {self.maxit} must be >= 1 and epsilon "
                              f"{self.epsilon} > 0")

    @property
    def qr_tol(self) -> float:
        """The QR's aliasing tolerance, ``min(1e-7, epsilon/1000)`` as in ``glm.fit``."""
        return min(1e-7, self.epsilon / 1000.0)


@dataclass(frozen=True)
class GlmFit:
    """An R-like logistic fit. ``coef``/``bse`` (p,) are NaN for aliased columns; ``cov``
    (p, p) has NaN rows and columns for them; ``fitted`` and ``eta`` are per row of the input."""

    coef: np.ndarray
    bse: np.ndarray
    cov: np.ndarray
    aliased: np.ndarray
    rank: int
    converged: bool
    iterations: int
    deviance: float
    fitted: np.ndarray
    eta: np.ndarray
    boundary: bool
    fitted_0_or_1: bool
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def conf_int(self, level: float = 0.95) -> np.ndarray:
        """Wald intervals (p, 2): β̂ ∓ z_{(1+level)/2}·SE (R's ``confint.default``)."""
        z = float(ndtri(0.5 + level / 2.0))
        return np.stack([self.coef - z * self.bse, self.coef + z * self.bse], axis=-1)


def _clipped_exp(eta: np.ndarray) -> np.ndarray:
    """exp(η) with η clipped to [−30, 30], which both link functions below start from."""
    return np.exp(np.clip(eta, -ETA_THRESHOLD, ETA_THRESHOLD))


def logit_linkinv(eta: np.ndarray, e: np.ndarray | None = None) -> np.ndarray:
    """R's clamped inverse logit (family.c ``logit_linkinv``); ``e``: :func:`_clipped_exp`
    of ``eta`` when already computed."""
    e = _clipped_exp(eta) if e is None else e
    e = np.where(eta < -ETA_THRESHOLD, DBL_EPSILON, np.where(eta > ETA_THRESHOLD,
                                                            1.0 / DBL_EPSILON, e))
    return e / (1.0 + e)


def logit_mu_eta(eta: np.ndarray, e: np.ndarray | None = None) -> np.ndarray:
    """R's dμ/dη (family.c ``logit_mu_eta``): DBL_EPSILON outside [−30, 30]; ``e`` as in
    :func:`logit_linkinv`."""
    e = _clipped_exp(eta) if e is None else e
    out = e / (1.0 + e) ** 2
    return np.where(np.abs(eta) > ETA_THRESHOLD, DBL_EPSILON, out)


def bernoulli_deviance(y: np.ndarray, mu: np.ndarray, counts: np.ndarray) -> float:
    """Deviance of the expanded 0/1 records: −2 Σ counts·(y log μ + (1 − y) log(1 − μ)); each
    logarithm only where its weight is not 0 (a row of identical records needs one of them)."""
    y, mu = np.asarray(y, dtype=float), np.asarray(mu, dtype=float)
    a, b = np.zeros(mu.shape), np.zeros(mu.shape)
    pos, neg = y > 0, y < 1
    with np.errstate(divide="ignore", invalid="ignore"):
        a[pos] = y[pos] * np.log(mu[pos])
        b[neg] = (1.0 - y[neg]) * np.log1p(-mu[neg])
    return float(-2.0 * np.sum(counts * (a + b)))


def _wls_step(x, z, w, tol):
    """One weighted least-squares step as R's ``Cdqrls`` solves it: QR of [W^½X | W^½z],
    columns set aside in order when their remaining norm is below ``tol`` times their norm.
    Returns (coefficients with 0 for aliased, aliased mask, R factor of the kept columns)."""
    a = x * w[:, None]
    p = x.shape[1]
    r_aug = np.linalg.qr(np.column_stack([a, z * w]), mode="r")
    norms = np.linalg.norm(a, axis=0)
    diag = np.zeros(p)
    k = min(r_aug.shape[0], p)
    diag[:k] = np.abs(np.diag(r_aug)[:k])
    aliased = ~(diag >= tol * np.where(norms > 0, norms, 1.0)) | (norms == 0)
    aliased |= np.cumsum(~aliased) > x.shape[0]  # dqrdc2 keeps at most n (rows) columns
    keep = ~aliased
    rows = r_aug.shape[0]
    r_keep = r_aug[:min(rows, p), :p][:, keep]
    qty = r_aug[:min(rows, p), p]
    q_small, r_small = np.linalg.qr(r_keep)
    coef = np.zeros(p)
    if keep.any():
        coef[keep] = linalg.solve_triangular(r_small, q_small.T @ qty)
    return coef, aliased, r_small


def _wls_normal(x, z, w, aliased):
    """The same step on the normal equations of the kept columns (Cholesky), or None when a
    pivot falls below :data:`NORMAL_EQUATIONS_FLOOR` (the QR step is then taken)."""
    keep = ~aliased
    a = (x if keep.all() else x[:, keep]) * w[:, None]
    gram = a.T @ a
    try:
        factor = linalg.cholesky(gram, lower=False, check_finite=False)
    except linalg.LinAlgError:
        return None
    if np.any(np.diag(factor) ** 2 < NORMAL_EQUATIONS_FLOOR * np.diag(gram)):
        return None
    coef = np.zeros(x.shape[1])
    coef[keep] = linalg.cho_solve((factor, False), a.T @ (z * w), check_finite=False)
    return coef, aliased, factor


def _dense(x):
    return x.toarray() if sparse.issparse(x) else x


def glm_logit(x, y, counts=None, *, control: GlmControl | None = None) -> GlmFit:
    """Fit logit P(y = 1) = xβ as R's ``glm.fit(x, y, family = binomial())`` does (see the
    module docstring). ``x`` (n, p) is the full design (intercept column included, as
    ``model.matrix`` makes it); ``y`` (n,) holds 0/1 outcomes, or proportions of ones when
    ``counts`` (n,) gives how many identical records each row stands for. Rows with count 0
    take no part in the fit."""
    control = control or GlmControl()
    design = x if isinstance(x, SparseDesign) else None
    if design is not None:
        x = design.x
    x = sparse.csr_matrix(x, dtype=float) if sparse.issparse(x) else np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n, p = x.shape
    counts = np.ones(n) if counts is None else np.asarray(counts, dtype=float)
    if y.shape != (n,) or counts.shape != (n,):
        raise ValueError(f"glm_logit: y {y.shape} and counts {counts.shape} need shape ({n},)")
    if np.any((y < 0) | (y > 1)) or np.any(counts < 0):
        raise ValueError("glm_logit: y must lie in [0, 1] and counts must be >= 0")
    good = counts > 0
    xg, yg, cg = x[good], y[good], counts[good]
    xs = None
    if control.solver == "sparse":
        xs = SparseDesign(xg) if design is None else design if good.all() else design.rows(good)
    if sparse.issparse(xg) and control.solver != "sparse":
        xg = xg.toarray()
    # R's start for 0/1 records: μ₀ = (y + ½)/2, so η₀ = ±log 3 and the working response of a
    # record is ±(log 3 + 4/3) with weight 3/16; a row of identical records takes their mean
    z = (2.0 * yg - 1.0) * (np.log(3.0) + 4.0 / 3.0)
    w = np.sqrt(cg * 3.0 / 16.0)
    dev_old = float(2.0 * np.log(4.0 / 3.0) * cg.sum())
    coef = coef_old = None
    aliased = np.zeros(p, dtype=bool)
    converged = boundary = False
    warns: list[str] = []
    iterations = 0
    for iterations in range(1, control.maxit + 1):  # noqa: B007 (kept after the loop)
        step = None
        if control.solver == "normal" and iterations > 1:
            step = _wls_normal(xg, z, w, aliased)
        elif xs is not None:
            step = xs.step(z, w, control.qr_tol, NORMAL_EQUATIONS_FLOOR)
        if step is None:
            step = _wls_step(_dense(xg), z, w, control.qr_tol)
        if not np.all(np.isfinite(step[0])):  # keep the last finite coefficients, as R
            warns.append(f"non-finite coefficients at iteration {iterations}")
            break
        start, aliased, r_small = step
        eta = xg @ start
        e = _clipped_exp(eta)
        mu = logit_linkinv(eta, e)
        dev = bernoulli_deviance(yg, mu, cg)
        boundary = False
        if not np.isfinite(dev):  # cannot happen with the clamped link; kept as R has it
            if coef_old is None:
                raise FloatingPointError("glm_logit: no valid set of coefficients found")
            warns.append("step size truncated due to divergence")
            for _ in range(control.maxit):
                start = (start + coef_old) / 2.0
                eta = xg @ start
                e = _clipped_exp(eta)
                mu = logit_linkinv(eta, e)
                dev = bernoulli_deviance(yg, mu, cg)
                if np.isfinite(dev):
                    break
            boundary = True
        coef = start
        if abs(dev - dev_old) / (abs(dev) + 0.1) < control.epsilon:
            converged = True
            break
        dev_old = dev
        coef_old = start
        mu_eta = logit_mu_eta(eta, e)
        z = eta + (yg - mu) / mu_eta
        w = np.sqrt(cg * mu_eta**2 / (mu * (1.0 - mu)))
    if coef is None:  # non-finite at the first iteration
        coef = np.full(p, np.nan)
        r_small = np.full((p, p), np.nan)
    if not converged:
        warns.append("glm.fit: algorithm did not converge")
    if boundary:
        warns.append("glm.fit: algorithm stopped at boundary value")
    eta_all = x @ np.where(aliased, 0.0, coef)
    mu_all = logit_linkinv(eta_all)
    eps10 = 10 * DBL_EPSILON
    extreme = bool(np.any((mu_all[good] > 1 - eps10) | (mu_all[good] < eps10)))
    if extreme:
        warns.append("glm.fit: fitted probabilities numerically 0 or 1 occurred")
    keep = ~aliased
    cov = np.full((p, p), np.nan)
    if keep.any():
        r_inv = linalg.solve_triangular(r_small, np.eye(r_small.shape[0]))
        cov[np.ix_(keep, keep)] = r_inv @ r_inv.T
    beta = np.where(aliased, np.nan, coef)
    return GlmFit(
        coef=beta,
        bse=np.sqrt(np.diag(cov)),
        cov=cov,
        aliased=aliased,
        rank=int(keep.sum()),
        converged=converged,
        iterations=iterations,
        deviance=bernoulli_deviance(yg, mu_all[good], cg),
        fitted=mu_all,
        eta=eta_all,
        boundary=boundary,
        fitted_0_or_1=extreme,
        warnings=tuple(warns),
    )


def collapse_rows(x, y) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Identical design rows merged: (unique rows (G, p), proportion of ones (G,), counts (G,),
    index (n,) of each record's row), for :func:`glm_logit` with ``counts``; the rows in the
    order of ``np.unique(x, axis=0)`` (:func:`row_groups`, ~50x faster on a 45k x 32 design)."""
    x = np.asarray(x)
    first, index, counts = row_groups(x)
    ones = np.bincount(index, weights=np.asarray(y, dtype=float), minlength=first.shape[0])
    return x[first], ones / counts, counts.astype(float), index
