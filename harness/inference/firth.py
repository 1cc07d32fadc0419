"""Firth bias-reduced logistic regression, vectorised over a batch of data sets.

Bowen & Liu (2020) §4.3.2 analyse every synthetic set of their logistic-regression simulation
with "the logistf function with the Firth's bias reduction method in the R package logistf along
with the corresponding estimated variance estimates" (spec 000 §4.4, §6 item 22). This module
is that analysis.

Model and estimator (Firth 1993; Heinze & Schemper 2002). For records (x_i, y_i), y_i ∈ {0, 1},
frequency weights ω_i ≥ 0, π_i = expit(x_iᵀβ) and W = diag(ω_i π_i (1 − π_i)), the penalised
log-likelihood is

    l*(β) = Σ_i ω_i [y_i log π_i + (1 − y_i) log(1 − π_i)] + ½ log det(XᵀWX),

i.e. the log-likelihood plus the log of the Jeffreys prior. Its score is the modified score

    U*(β) = Σ_i x_i [ω_i (y_i − π_i) + h_i (½ − π_i)],

h_i the diagonal of the hat matrix W^{1/2} X (XᵀWX)⁻¹ Xᵀ W^{1/2}. The estimate solves U* = 0; it
is finite even under complete or quasi-complete separation, where maximum likelihood diverges.
Its variance estimate is the inverse Fisher information (XᵀWX)⁻¹ at the estimate, as logistf's
``var`` (and ``vcov``) reports.

Algorithm = logistf's Newton–Raphson (``logistf.fit``, ``src/logistf.c`` of logistf ≥ 1.24,
control defaults of ``logistf.control()``): start at β = 0; each iteration takes the step
δ = (XᵀWX)⁻¹ U*, shrunk so that max|δ_j| ≤ ``maxstep``; if l* decreases, the step is halved up
to ``maxhs`` times; iteration stops after ``maxit`` iterations or when simultaneously
max|δ_j| ≤ ``xconv``, max|U*_j| < ``gconv`` and the change of l* is < ``lconv``. The
covariance and the reported score are evaluated at the final β. One deliberate difference:
logistf leaves β at the last *unevaluated* halving after ``maxhs`` failed halvings; here the
last evaluated point is kept, so that l* always belongs to the returned β. A fit that stops
on ``maxit`` is returned with ``converged = False`` (logistf only warns); a design whose
information matrix is singular at β = 0 (e.g. a predictor that is constant zero on the
records, or collinear columns; logistf stops with an error) gets ``singular = True`` and NaN
estimates. Nothing raises for a single bad data set of a batch.

Vectorisation: all data sets of a batch (any leading axes, e.g. (R, m)) are
iterated together; a data set leaves the working arrays as soon as it has converged, so the
cost follows the slowest data sets only for those data sets. The batch is processed in chunks
of ``chunk_size`` data sets to bound memory. Records with weight 0 do not contribute at all,
which is how subsets of different sizes (e.g. the baseline-category fits of W3) share one
rectangular array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "FirthControl",
    "FirthResult",
    "firth_baseline_category",
    "firth_logistic",
    "penalised_loglik",
    "penalised_score",
]


@dataclass(frozen=True)
class FirthControl:
    """Newton–Raphson controls, defaults as ``logistf.control()`` (logistf 1.24–1.26)."""

    maxit: int = 25
    maxhs: int = 5
    maxstep: float = 5.0
    lconv: float = 1e-5
    gconv: float = 1e-5
    xconv: float = 1e-5
    #: relative eigenvalue threshold below which XᵀWX at β = 0 is declared singular
    singular_tol: float = 1e-10


@dataclass(frozen=True)
class FirthResult:
    """Firth fits of a batch. ``coef`` (..., p); ``cov`` (..., p, p) = (XᵀWX)⁻¹ at ``coef``;
    ``converged`` / ``singular`` (...) flags; ``iterations`` (...); ``loglik`` the penalised
    log-likelihood l* at ``coef``; ``score`` the penalised score U* at ``coef``. Singular
    designs have NaN ``coef``, ``cov``, ``loglik`` and ``score``."""

    coef: np.ndarray
    cov: np.ndarray
    converged: np.ndarray
    singular: np.ndarray
    iterations: np.ndarray
    loglik: np.ndarray
    score: np.ndarray

    @property
    def variance(self) -> np.ndarray:
        """Variance estimates of the coefficients, the diagonal of ``cov`` (..., p)."""
        return np.diagonal(self.cov, axis1=-2, axis2=-1)

    @property
    def bse(self) -> np.ndarray:
        """Standard errors √diag(cov) (..., p)."""
        return np.sqrt(self.variance)

    @property
    def ok(self) -> np.ndarray:
        """Fits usable for inference: converged and not singular."""
        return self.converged & ~self.singular


# ----------------------------------------------------------------------------- kernels


def _probabilities(eta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """π = expit(η), π(1 − π) and softplus(η) = log(1 + e^η), all from one exp, stable for
    any η (softplus(η) = max(η, 0) + log1p(e^{−|η|})). In place where possible: the same
    operations in the same order as the expressions in the comments, so the same bits, with
    fewer temporaries (this function is most of a Firth fit's time)."""
    t = np.abs(eta)
    np.negative(t, out=t)
    np.exp(t, out=t)  # t = exp(−|η|)
    inv = t + 1.0
    np.divide(1.0, inv, out=inv)  # inv = 1 / (1 + t)
    v = t * inv
    v *= inv  # π(1 − π) = t · inv · inv
    # π = inv where η ≥ 0, else t · inv: max(t, 1{η ≥ 0}) is 1 or t (t ≤ 1), times inv, so the
    # same bits as that selection, without a masked copy (several times slower, branching)
    pi = np.maximum(t, np.greater_equal(eta, 0.0), dtype=float)
    pi *= inv
    soft = np.log1p(t, out=t)
    soft += np.maximum(eta, 0.0)
    return pi, v, soft


class _Batch:
    """Flat batch (B, n, p) with its pairwise column products xx (B, n, q), q = p(p + 1)/2,
    which turn XᵀWX and the hat diagonal into matrix–vector products."""

    def __init__(self, x, y, w):
        p = x.shape[-1]
        self.p = p
        self.iu = np.triu_indices(p)
        # h_i = pw_i Σ_{a,b} A_ab x_ia x_ib = pw_i Σ_q c_q A_q xx_iq with c_q = 2 off the diagonal
        self.twice = np.where(self.iu[0] == self.iu[1], 1.0, 2.0)
        self.x, self.y, self.w = x, y, w
        # (B, n, q) stored q-major, the layout x[..., iu0] * x[..., iu1] gives (the products'
        # matmuls take numpy's path for that layout: the same bits as before this was written
        # column by column, without the two gathered (B, n, q) temporaries)
        self.xx = np.moveaxis(np.empty((self.iu[0].size, *x.shape[:-1])), 0, -1)
        for k, (a, b) in enumerate(zip(*self.iu, strict=True)):
            np.multiply(x[..., a], x[..., b], out=self.xx[..., k])

    def take(self, keep: np.ndarray) -> None:
        """Keep only the data sets ``keep`` (boolean mask) in the working arrays."""
        self.x, self.y, self.w, self.xx = (self.x[keep], self.y[keep], self.w[keep],
                                           self.xx[keep])

    def rows(self, r):
        """(x, y, w, xx) of the data sets ``r`` (None = all)."""
        if r is None:
            return self.x, self.y, self.w, self.xx
        return self.x[r], self.y[r], self.w[r], self.xx[r]

    def evaluate(self, beta: np.ndarray, r=None):
        """π, pw = ω π(1 − π), the Cholesky factor of XᵀWX, its PD mask and l*(β) for the data
        sets ``r`` (l* = −inf where XᵀWX is not positive definite)."""
        x, y, w, xx = self.rows(r)
        eta = np.matmul(x, beta[:, :, None])[:, :, 0]
        pi, v, soft = _probabilities(eta)
        pw = w * v
        terms = y * eta
        terms -= soft
        terms *= w
        loglik = np.sum(terms, axis=-1)  # Σ ω (y η − softplus(η))
        flat = np.matmul(pw[:, None, :], xx)[:, 0, :]
        info = np.empty((flat.shape[0], self.p, self.p))
        info[:, self.iu[0], self.iu[1]] = flat
        info[:, self.iu[1], self.iu[0]] = flat
        chol, good = _cholesky(info)
        logdet = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
        return pi, pw, info, chol, good, np.where(good, loglik + 0.5 * logdet, -np.inf)

    def modified_score(self, pi, pw, cov, r=None) -> np.ndarray:
        """U* = Xᵀ[ω(y − π) + h(½ − π)], h_i = pw_i x_iᵀ cov x_i, for the data sets ``r``."""
        x, y, w, xx = self.rows(r)
        a = cov[:, self.iu[0], self.iu[1]] * self.twice
        h = pw * np.matmul(xx, a[:, :, None])[:, :, 0]
        res = y - pi
        res *= w
        h *= 0.5 - pi
        res += h  # ω(y − π) + h(½ − π)
        return np.matmul(res[:, None, :], x)[:, 0, :]


def _cholesky(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Batched Cholesky factors of (b, p, p) matrices, with a mask of the positive-definite
    ones (the others get the identity factor). numpy's batched cholesky raises for the whole
    batch if one matrix fails, so failures are located and replaced first."""
    try:
        return np.linalg.cholesky(a), np.ones(a.shape[0], dtype=bool)
    except np.linalg.LinAlgError:
        pass
    good = np.ones(a.shape[0], dtype=bool)
    out = np.empty_like(a)
    eye = np.eye(a.shape[-1])
    for i in range(a.shape[0]):  # rare path: only batches holding a non-PD matrix
        try:
            out[i] = np.linalg.cholesky(a[i])
        except np.linalg.LinAlgError:
            good[i] = False
            out[i] = eye
    return out, good


def _chol_inverse(chol: np.ndarray) -> np.ndarray:
    """(L Lᵀ)⁻¹ from batched Cholesky factors L."""
    eye = np.broadcast_to(np.eye(chol.shape[-1]), chol.shape)
    linv = np.linalg.solve(chol, eye)
    return np.matmul(np.swapaxes(linv, -1, -2), linv)


# ----------------------------------------------------------------------------- the fit


def _fit_flat(x, y, w, init, control: FirthControl):
    """Firth fits of a flat batch x (B, n, p), y (B, n), w (B, n) from starting values
    init (B, p); see the module docstring."""
    B, _, p = x.shape
    coef = np.full((B, p), np.nan)
    cov = np.full((B, p, p), np.nan)
    score = np.full((B, p), np.nan)
    loglik = np.full(B, np.nan)
    converged = np.zeros(B, dtype=bool)
    iterations = np.zeros(B, dtype=np.int64)

    batch = _Batch(x, y, w)
    ids = np.arange(B)
    beta = init.copy()
    pi, pw, info, chol, good, pl = batch.evaluate(beta)
    # singular design: rank deficiency of the weighted design itself, checked at π = ½
    ev = np.linalg.eigvalsh(info if not beta.any() else batch.evaluate(np.zeros((B, p)))[2])
    singular = ~good | (ev[:, 0] <= control.singular_tol * np.maximum(ev[:, -1], 1e-300))
    singular_out = singular.copy()
    # maxit = 0: only evaluate at the starting values (logistf's col.fit = 0 / maxit = 0 use)
    stop = singular | (control.maxit <= 0)
    done_conv = np.zeros(B, dtype=bool)
    it = np.zeros(B, dtype=np.int64)

    while True:
        if stop.any():
            # data sets that stopped at the end of the previous iteration get logistf's final
            # pass: covariance and score evaluated at their final β
            fin = np.flatnonzero(stop & ~singular)
            if fin.size:
                cv = _chol_inverse(chol[fin])
                j = ids[fin]
                coef[j], cov[j], loglik[j] = beta[fin], cv, pl[fin]
                converged[j], iterations[j] = done_conv[fin], it[fin]
                score[j] = batch.modified_score(pi[fin], pw[fin], cv, fin)
            keep = ~stop
            if not keep.any():
                break
            batch.take(keep)
            ids, beta, pi, pw, info, chol, pl = (ids[keep], beta[keep], pi[keep], pw[keep],
                                                 info[keep], chol[keep], pl[keep])
            singular, it = singular[keep], it[keep]

        cv = _chol_inverse(chol)
        u = batch.modified_score(pi, pw, cv)
        delta = np.matmul(cv, u[:, :, None])[:, :, 0]
        mx = np.max(np.abs(delta), axis=-1) / control.maxstep
        delta /= np.maximum(mx, 1.0)[:, None]

        it += 1
        pl_old = pl
        new = beta + delta
        state = list(batch.evaluate(new))
        # step halving: while l* decreased, halve the step (at most maxhs times)
        # (a decrease within rounding error, |Δl*| ≤ 1e-12·(1 + |l*|), does not count)
        tol = 1e-12 * (1.0 + np.abs(pl_old))
        for halfs in range(1, control.maxhs + 1):
            worse = np.flatnonzero(~(state[5] >= pl_old - tol))
            if worse.size == 0:
                break
            new[worse] = beta[worse] + delta[worse] * 0.5**halfs
            for arr, val in zip(state, batch.evaluate(new[worse], worse), strict=True):
                arr[worse] = val
        pi_n, pw_n, info_n, chol_n, good_n, pl_n = state
        # a step that still lands where XᵀWX is not PD is refused: keep β, stop unconverged
        bad = ~good_n
        if bad.any():
            new[bad], pl_n[bad] = beta[bad], pl_old[bad]
            pi_n[bad], pw_n[bad], info_n[bad], chol_n[bad] = pi[bad], pw[bad], info[bad], chol[bad]
        beta, pi, pw, info, chol, pl = new, pi_n, pw_n, info_n, chol_n, pl_n

        crit = ((np.max(np.abs(delta), axis=-1) <= control.xconv)
                & (np.max(np.abs(u), axis=-1) < control.gconv)
                & (pl - pl_old < control.lconv))
        done_conv = crit & ~bad
        stop = crit | bad | (it >= control.maxit)

    return coef, cov, converged, singular_out, iterations, loglik, score


def firth_logistic(
    x,
    y,
    weights=None,
    *,
    init=None,
    control: FirthControl | None = None,
    chunk_size: int = 64,
) -> FirthResult:
    """Firth bias-reduced logistic regression of y on x for every data set of a batch.

    ``x`` (..., n, p) is the design matrix (include a column of ones for the intercept);
    ``y`` (..., n) holds 0/1 responses; ``weights`` (..., n) optional frequency weights
    (0/1 weights select a subset). Leading axes of x, y and weights broadcast. ``init``
    (..., p) optional starting values (logistf's ``init``; default 0): a warm start, e.g. at
    the estimate from the original data, saves iterations and leads to the same solution
    within the convergence tolerances. Returns a :class:`FirthResult` with leading axes
    ``...``. See the module docstring for the algorithm (logistf's Newton–Raphson with its
    default controls). ``chunk_size`` data sets are iterated together (memory ≈
    chunk_size · n · p(p + 3)/2 · 8 bytes).
    """
    control = control or FirthControl()
    chunk_size = max(int(chunk_size), 1)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., n, p), got {x.shape}")
    n, p = x.shape[-2:]
    w = np.ones(y.shape, dtype=float) if weights is None else np.asarray(weights, dtype=float)
    lead = np.broadcast_shapes(x.shape[:-2], y.shape[:-1], w.shape[:-1])
    if y.shape[-1] != n or w.shape[-1] != n:
        raise ValueError(f"y and weights need n = {n} records on their last axis")
    if np.any((y != 0) & (y != 1)):
        raise ValueError("y must hold 0/1 responses")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite and >= 0")
    B = int(np.prod(lead, dtype=np.int64))
    xf = np.broadcast_to(x, (*lead, n, p)).reshape(B, n, p)
    yf = np.broadcast_to(y, (*lead, n)).reshape(B, n)
    wf = np.broadcast_to(w, (*lead, n)).reshape(B, n)
    b0 = np.zeros(p) if init is None else np.asarray(init, dtype=float)
    b0 = np.broadcast_to(b0, (*lead, p)).reshape(B, p)

    parts = [
        _fit_flat(xf[s:s + chunk_size].copy(), yf[s:s + chunk_size].copy(),
                  wf[s:s + chunk_size].copy(), b0[s:s + chunk_size].copy(), control)
        for s in range(0, B, chunk_size)
    ]
    if not parts:
        raise ValueError("firth_logistic needs at least one data set")
    coef, cov, conv, sing, iters, ll, sc = (np.concatenate(a) for a in zip(*parts, strict=True))
    return FirthResult(
        coef=coef.reshape(*lead, p), cov=cov.reshape(*lead, p, p),
        converged=conv.reshape(lead), singular=sing.reshape(lead),
        iterations=iters.reshape(lead), loglik=ll.reshape(lead), score=sc.reshape(*lead, p),
    )


def penalised_loglik(beta, x, y, weights=None) -> np.ndarray:
    """l*(β) = weighted log-likelihood + ½ log det(XᵀWX) (..., ), for checks and tests."""
    beta, x, y = (np.asarray(a, dtype=float) for a in (beta, x, y))
    w = np.ones(y.shape) if weights is None else np.asarray(weights, dtype=float)
    eta = np.einsum("...np,...p->...n", x, beta)
    _, v, soft = _probabilities(eta)
    info = np.einsum("...n,...np,...nq->...pq", w * v, x, x)
    sign, logdet = np.linalg.slogdet(info)
    out = np.sum(w * (y * eta - soft), axis=-1) + 0.5 * logdet
    return np.where(sign > 0, out, -np.inf)


def penalised_score(beta, x, y, weights=None) -> np.ndarray:
    """The modified score U*(β) (..., p) of Firth (1993), Heinze & Schemper (2002) Eq. (2)."""
    beta, x, y = (np.asarray(a, dtype=float) for a in (beta, x, y))
    w = np.ones(y.shape) if weights is None else np.asarray(weights, dtype=float)
    eta = np.einsum("...np,...p->...n", x, beta)
    pi, v, _ = _probabilities(eta)
    pw = w * v
    info = np.einsum("...n,...np,...nq->...pq", pw, x, x)
    cov = np.linalg.inv(info)
    h = pw * np.einsum("...np,...pq,...nq->...n", x, cov, x)
    return np.einsum("...n,...np->...p", w * (y - pi) + h * (0.5 - pi), x)


def firth_baseline_category(
    x,
    y,
    n_categories: int,
    weights=None,
    *,
    reference: int = 0,
    init=None,
    control: FirthControl | None = None,
    chunk_size: int = 64,
) -> FirthResult:
    """Baseline-category analysis of a K-level response with binary Firth fits (spec 000
    §6 item 22, the choice made for the W3 coefficients β3, β4 of Bowen & Liu §4.3.2).

    For every level k ≠ ``reference`` (levels coded 0..K−1 in ``y`` (..., n)), fits a Firth
    logistic regression of I(y = k) on ``x`` over the records with y ∈ {reference, k}. The
    multinomial logit model P(y = k | x) ∝ exp(xᵀβ_k), β_ref = 0, implies exactly
    P(y = k | y ∈ {ref, k}, x) = expit(xᵀβ_k), so each binary fit estimates β_k consistently
    with its own (conditional) variance estimate; it is R ``logistf`` applied per contrast,
    which is what a binary-only package allows (the joint multinomial fit is slightly more
    efficient; the binary fits ignore the covariance between β_k and β_l). Returns a
    :class:`FirthResult` whose leading axes are (..., K − 1), the non-reference levels in
    increasing order; ``init`` (..., K − 1, p) optional starting values.
    """
    y = np.asarray(y)
    x = np.asarray(x, dtype=float)
    levels = [k for k in range(n_categories) if k != reference]
    w = np.ones(y.shape) if weights is None else np.asarray(weights, dtype=float)
    yk = np.stack([(y == k) for k in levels], axis=-2).astype(float)  # (..., K−1, n)
    wk = np.stack([w * ((y == k) | (y == reference)) for k in levels], axis=-2)
    return firth_logistic(x[..., None, :, :], yk, wk, init=init, control=control,
                          chunk_size=chunk_size)
