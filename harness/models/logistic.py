"""Posterior sampling for logistic and multinomial (baseline-category) logistic regression,
vectorised over replicates: the β-steps of sequential-logistic synthesizers such as those of
Bowen & Liu (2020) §4.3.2, Eqs. (12)–(14) (spec 000 §4.4, §6 items 20–21).

Model. Records (x_i, y_i), y_i ∈ {0, …, K−1} with level 0 the reference (the paper's W3 level 1,
π31 = 1/(1 + A + B)), P(y_i = k | x_i) ∝ exp(x_iᵀβ_k), β_0 = 0; K = 2 is the logistic model.
The log-likelihood is Σ_k β_kᵀ s_k − Σ_i log(1 + Σ_k exp(x_iᵀβ_k)) with s_k = Σ_{i: y_i=k} x_i
(the a_i, b_i sums of Eq. 14). Priors: flat (``prior_precision = 0``, non-DP MS, "f(β) ∝
constant"), or independent N(0, 1/λ) on every coefficient (``prior_precision = λ``; MODIPS-
Correct, λ = 0.5 on normalised predictors, §4.3.2 step 2). The paper writes the prior variance
as 1/λ; the L2-regularised ERM objective of Chaudhuri & Monteleoni (2009), (1/n)Σ loss +
(λ/2)‖β‖², corresponds to variance 1/(nλ) instead (spec §6 item 21) — a caller wanting that
passes ``prior_precision = n·λ``.

Sampler (spec §6 item 20: "any converged sampler is acceptable"). The paper runs random-walk
Metropolis (2 chains, 10,000 iterations) per replicate, but only 5 draws per replicate are
used (one per synthetic set). Here every draw is the end point of its own short independence
Metropolis–Hastings chain whose proposal is a multivariate t_ν centred at the posterior mode
with scale matrix the inverse negative Hessian there (a Laplace approximation with heavier
tails). The log-posterior of a logistic model falls off at least linearly in ‖β‖ (flat prior;
quadratically with the normal prior) while the t proposal has polynomial tails, so
sup π/q = M < ∞: the chain is uniformly ergodic, and the law of its state after t steps is
within (1 − 1/M)^t of the posterior in total variation (Mengersen & Tweedie 1996, Thm 2.1).
With n = 1000 records the posterior is close to its Laplace approximation, acceptance rates
are ≈ 0.9 and M is small. The chains start at a proposal draw; ``n_steps`` (default 25) steps
make the draws independent posterior draws up to a negligible error, which the tests check
against long random-walk Metropolis runs and numerical integration.
:func:`random_walk_metropolis` is the paper's sampler, kept as the reference.

Everything is vectorised over leading axes (replicates): Newton iterations for all modes at
once, then (replicates × chains) proposals per step. Draws do not depend on ε: a caller draws
once per replicate and reuses them across the ε grid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "LogisticPosterior",
    "log_posterior",
    "posterior_draws",
    "posterior_mode",
    "predictive_draw",
    "random_walk_metropolis",
]


# ----------------------------------------------------------------------------- the model


def _log1p_sum_exp(eta: np.ndarray) -> np.ndarray:
    """log(1 + Σ_k exp(η_k)) over axis −2 of η (..., K−1, n) (one row per level, so every
    operation runs on contiguous rows), stable for any η: (..., n)."""
    J = eta.shape[-2]
    if J == 1:
        e = eta[..., 0, :]
        return np.maximum(e, 0.0) + np.log1p(np.exp(-np.abs(e)))
    m = np.maximum(eta[..., 0, :], 0.0)
    for j in range(1, J):
        m = np.maximum(m, eta[..., j, :])
    total = np.exp(-m)
    for j in range(J):
        total += np.exp(eta[..., j, :] - m)
    return m + np.log(total)


def _probs(eta: np.ndarray) -> np.ndarray:
    """P(y = k), k = 1..K−1, from the linear predictors η (..., K−1) (reference level 0)."""
    m = np.maximum(eta.max(axis=-1, keepdims=True), 0.0)
    e = np.exp(eta - m)
    return e / (np.exp(-m) + e.sum(axis=-1, keepdims=True))


def _suff(x: np.ndarray, y: np.ndarray, n_categories: int, weights=None) -> np.ndarray:
    """s_k = Σ_{i: y_i = k} w_i x_i for k = 1..K−1: (..., K−1, p) (w_i = 1 without
    ``weights``)."""
    onehot = (y[..., None] == np.arange(1, n_categories)).astype(float)  # (..., n, K−1)
    if weights is not None:
        onehot *= weights[..., None]
    return np.swapaxes(onehot, -1, -2) @ x


class _Target:
    """Log posterior of one flat batch x (B, n, p), y (B, n), with its sufficient statistics
    s_k and the transposed design precomputed; ``__call__(beta)`` for β (B, C, K−1, p).
    ``weights`` (B, n): each row stands for that many identical records (None: one each)."""

    def __init__(self, x, y, n_categories, lam, weights=None):
        self.xt = np.ascontiguousarray(np.swapaxes(x, -1, -2))[:, None]  # (B, 1, p, n)
        self.s = _suff(x, y, n_categories, weights)[:, None]  # (B, 1, K−1, p)
        self.lam = lam
        self.w = None if weights is None else weights[:, None]  # (B, 1, n)

    def rows(self, r) -> _Target:
        """The same target restricted to the data sets ``r``."""
        out = object.__new__(_Target)
        out.xt, out.s, out.lam = self.xt[r], self.s[r], self.lam
        out.w = None if self.w is None else self.w[r]
        return out

    def __call__(self, beta):
        eta = beta @ self.xt  # (B, C, K−1, n)
        norm = _log1p_sum_exp(eta)
        if self.w is not None:
            norm = norm * self.w
        ll = np.sum(beta * self.s, axis=(-1, -2)) - norm.sum(axis=-1)
        return ll - 0.5 * np.sum(self.lam * beta * beta, axis=(-1, -2))


def log_posterior(beta, x, y, n_categories: int = 2, prior_precision=0.0) -> np.ndarray:
    """Unnormalised log posterior of β (..., K−1, p) (Eqs. 12–14 with the prior): the
    log-likelihood minus ½ Σ λ β². ``beta`` may carry extra axes between the leading axes of
    x (..., n, p) and its own (K−1, p), e.g. (..., C, K−1, p) for C chains."""
    beta = np.asarray(beta, dtype=float)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y)
    s = _suff(x, y, n_categories)
    extra = beta.ndim - 2 - (x.ndim - 2)
    xt = np.swapaxes(x, -1, -2)
    xt = xt.reshape(*xt.shape[:-2], *([1] * extra), *xt.shape[-2:])
    ss = s.reshape(*s.shape[:-2], *([1] * extra), *s.shape[-2:])
    eta = beta @ xt  # (..., C, K−1, n)
    ll = np.sum(beta * ss, axis=(-1, -2)) - _log1p_sum_exp(eta).sum(axis=-1)
    lam = np.asarray(prior_precision, dtype=float)
    return ll - 0.5 * np.sum(lam * beta * beta, axis=(-1, -2))


def predictive_draw(x, beta, rng: np.random.Generator, n_categories: int = 2) -> np.ndarray:
    """y ~ f(y | x, β): one categorical draw per record (codes 0..K−1, 0 = reference).
    ``x`` (..., n, p); ``beta`` (..., p) for the logistic model (K = 2), (..., K−1, p)
    otherwise; leading axes broadcast. Used to synthesize w̃ given a drawn (or sanitized) β
    and synthetic predictors (§4.3.2)."""
    x = np.asarray(x, dtype=float)
    beta = np.asarray(beta, dtype=float)
    if n_categories == 2:
        beta = beta[..., None, :]
    elif beta.shape[-2] != n_categories - 1:
        raise ValueError(f"beta needs shape (..., {n_categories - 1}, p), got {beta.shape}")
    pk = _probs(x @ np.swapaxes(beta, -1, -2))  # (..., n, K−1): levels 1..K−1
    # cumulative probabilities of levels 0..K−2; y = number of them at or below the uniform
    p0 = 1.0 - pk.sum(axis=-1, keepdims=True)
    cum = np.concatenate([p0, p0 + np.cumsum(pk[..., :-1], axis=-1)], axis=-1)
    u = rng.random(pk.shape[:-1])
    return np.sum(u[..., None] >= cum, axis=-1)


# ----------------------------------------------------------------------------- the mode


def _grad_hess(beta, x, s, lam, weights=None):
    """Gradient (B, d) and Hessian (B, d, d) of the log posterior, d = (K−1)p, β (B, K−1, p);
    ``weights`` (B, n) counts the records each row stands for (None: one each)."""
    B, J, p = beta.shape
    pr = _probs(x @ np.swapaxes(beta, -1, -2))  # (B, n, J)
    wpr = pr if weights is None else pr * weights[..., None]
    grad = (s - np.swapaxes(wpr, -1, -2) @ x - lam * beta).reshape(B, J * p)
    # −Σ_i (diag π_i − π_i π_iᵀ) ⊗ x_i x_iᵀ − λ I
    hess = np.empty((B, J, p, J, p))
    for j in range(J):
        for k in range(j, J):
            wjk = wpr[..., j] * ((j == k) - pr[..., k])  # (B, n)
            blk = -(np.swapaxes(x * wjk[..., None], -1, -2) @ x)
            hess[:, j, :, k, :] = blk
            hess[:, k, :, j, :] = np.swapaxes(blk, -1, -2)
    hess = hess.reshape(B, J * p, J * p)
    lam_flat = np.broadcast_to(lam, (B, J, p)).reshape(B, J * p)
    idx = np.arange(J * p)
    hess[:, idx, idx] -= lam_flat
    return grad, hess


def posterior_mode(x, y, n_categories: int = 2, prior_precision=0.0, *, maxit: int = 100,
                   tol: float = 1e-9, max_abs: float = 1e3, weights=None):
    """Posterior mode β̂ (B, K−1, p), negative Hessian there (B, d, d) and an ``ok`` flag per
    data set, by Newton–Raphson with step halving on flat batches x (B, n, p), y (B, n).
    ``ok`` is False when the iteration did not converge or the mode runs off to infinity
    (|β| > ``max_abs``): with a flat prior that is separation, where the posterior is
    improper. ``weights`` (B, n), optional: frequency weights, row i standing for w_i
    identical records (0 for padding), so that records collapsed into distinct rows
    (:func:`harness.inference.design.collapse_batch`) give the same fit up to rounding."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y)
    B, _, p = x.shape
    J = n_categories - 1
    w = None if weights is None else np.asarray(weights, dtype=float)
    s = _suff(x, y, n_categories, w)
    lam = np.broadcast_to(np.asarray(prior_precision, dtype=float), (J, p))
    beta = np.zeros((B, J, p))
    target = _Target(x, y, n_categories, lam, w)
    lp = target(beta[:, None])[:, 0]
    done = np.zeros(B, dtype=bool)
    bad = np.zeros(B, dtype=bool)
    for _ in range(maxit):
        act = np.flatnonzero(~done & ~bad)
        if act.size == 0:
            break
        if act.size == B:  # every data set active: no copies of the design
            g, h = _grad_hess(beta, x, s, lam, w)
            sub = target
        else:
            g, h = _grad_hess(beta[act], x[act], s[act], lam, None if w is None else w[act])
            sub = target.rows(act)
        try:
            step = np.linalg.solve(-h, g[..., None])[..., 0]
        except np.linalg.LinAlgError:
            step = np.stack([np.linalg.lstsq(-hi, gi, rcond=None)[0]
                             for hi, gi in zip(h, g, strict=True)])
        step = step.reshape(-1, J, p)
        t = np.ones(act.size)
        lp_a = lp[act]
        cand = beta[act] + step
        lp_c = sub(cand[:, None])[:, 0]
        for _h in range(30):
            worse = ~(lp_c >= lp_a - 1e-12 * (1 + np.abs(lp_a)))
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
            if _h == 29:
                break
            # only the data sets whose log posterior fell are evaluated again at their halved
            # steps (each data set's value is computed on its own: bit-identical)
            r = np.flatnonzero(worse)
            cand[r] = beta[act[r]] + t[r, None, None] * step[r]
            lp_c[r] = sub.rows(r)(cand[r][:, None])[:, 0]
        beta[act], lp[act] = cand, lp_c
        size = np.max(np.abs(t[:, None] * step.reshape(act.size, -1)), axis=-1)
        done[act] = size < tol
        bad[act] = ~np.isfinite(lp_c) | (np.max(np.abs(cand), axis=(-1, -2)) > max_abs)
    _, h = _grad_hess(beta, x, s, lam, w)
    return beta, -h, done & ~bad


# ----------------------------------------------------------------------------- the samplers


@dataclass(frozen=True)
class LogisticPosterior:
    """Posterior draws for a batch: ``draws`` (..., n_draws, p) for K = 2, (..., n_draws, K−1,
    p) otherwise; ``mode`` and ``mode_cov`` (Laplace approximation); ``acceptance`` the mean
    acceptance rate of the chains (...); ``ok`` False where the mode was not found (draws NaN);
    ``trace`` (..., n_draws, n_steps + 1, d) when requested (chain histories, d = (K−1)p)."""

    draws: np.ndarray
    mode: np.ndarray
    mode_cov: np.ndarray
    acceptance: np.ndarray
    ok: np.ndarray
    trace: np.ndarray | None = None


def _flatten(x, y):
    x = np.asarray(x, dtype=float)
    y = np.asarray(y)
    lead = np.broadcast_shapes(x.shape[:-2], y.shape[:-1])
    n, p = x.shape[-2:]
    B = int(np.prod(lead, dtype=np.int64))
    return (lead, np.broadcast_to(x, (*lead, n, p)).reshape(B, n, p),
            np.broadcast_to(y, (*lead, n)).reshape(B, n))


def _check_y(y, n_categories):
    if n_categories < 2:
        raise ValueError(f"n_categories must be >= 2, got {n_categories}")
    y = np.asarray(y)
    if not np.issubdtype(y.dtype, np.number) or np.any((y < 0) | (y >= n_categories)) or np.any(
            y != np.round(y)):
        raise ValueError(f"y must hold integer codes 0..{n_categories - 1}")


def _independence_chains(x, y, n_categories, lam, mode, chol, n_chains, n_steps, df, rng,
                         keep_trace):
    """Independence MH chains with t_df(mode, L Lᵀ) proposals: (B, C) chains of n_steps."""
    B, J, p = mode.shape
    d = J * p
    target = _Target(x, y, n_categories, lam)

    def propose():
        z = rng.standard_normal((B, n_chains, d))
        g = rng.chisquare(df, size=(B, n_chains))
        u = z * np.sqrt(df / g)[..., None]
        theta = mode[:, None] + (chol[:, None] @ u[..., None])[..., 0].reshape(B, n_chains, J, p)
        logq = -0.5 * (df + d) * np.log1p(np.sum(u * u, axis=-1) / df)
        return theta, logq

    theta, logq = propose()
    lw = target(theta) - logq
    trace = [theta.reshape(B, n_chains, d)] if keep_trace else None
    accepted = np.zeros((B, n_chains))
    for _ in range(n_steps):
        cand, logq_c = propose()
        lw_c = target(cand) - logq_c
        acc = np.log(rng.random((B, n_chains))) < lw_c - lw
        theta = np.where(acc[..., None, None], cand, theta)
        lw = np.where(acc, lw_c, lw)
        accepted += acc
        if keep_trace:
            trace.append(theta.reshape(B, n_chains, d))
    tr = np.stack(trace, axis=-2) if keep_trace else None
    return theta, accepted.mean(axis=-1) / max(n_steps, 1), tr


def posterior_draws(
    x,
    y,
    n_draws: int,
    rng: np.random.Generator,
    *,
    n_categories: int = 2,
    prior_precision=0.0,
    n_steps: int = 25,
    df: float = 10.0,
    chunk_size: int = 256,
    keep_trace: bool = False,
) -> LogisticPosterior:
    """``n_draws`` independent posterior draws of β per data set (spec 000 §6 item 20).

    ``x`` (..., n, p) predictors (with the intercept column; normalised by the caller where
    the method says so); ``y`` (..., n) integer codes 0..K−1 (0 = reference);
    ``prior_precision`` λ ≥ 0, a scalar or an array broadcasting to (K−1, p) (0 = flat).
    Each draw is the final state of an independence Metropolis–Hastings chain of ``n_steps``
    steps with a t_``df`` Laplace proposal (module docstring). Returns a
    :class:`LogisticPosterior`; draws have shape (..., n_draws, p) when K = 2 and
    (..., n_draws, K−1, p) otherwise. Designed to be called once per replicate and reused
    across the ε grid.
    """
    _check_y(y, n_categories)
    lead, xf, yf = _flatten(x, y)
    B, n, p = xf.shape
    J = n_categories - 1
    lam = np.broadcast_to(np.asarray(prior_precision, dtype=float), (J, p))
    if np.any(lam < 0):
        raise ValueError("prior_precision must be >= 0")
    draws = np.full((B, n_draws, J, p), np.nan)
    modes = np.full((B, J, p), np.nan)
    covs = np.full((B, J * p, J * p), np.nan)
    acc = np.full(B, np.nan)
    ok = np.zeros(B, dtype=bool)
    traces = np.full((B, n_draws, n_steps + 1, J * p), np.nan) if keep_trace else None
    for s0 in range(0, B, chunk_size):
        idx = np.arange(s0, min(s0 + chunk_size, B))
        mode, neg_h, good = posterior_mode(xf[idx], yf[idx], n_categories, lam)
        modes[idx], ok[idx] = mode, good
        gi = np.flatnonzero(good)
        if gi.size == 0:
            continue
        cov = np.linalg.inv(neg_h[gi])
        cov = 0.5 * (cov + np.swapaxes(cov, -1, -2))
        covs[idx[gi]] = cov
        th, a, tr = _independence_chains(
            xf[idx[gi]], yf[idx[gi]], n_categories, lam, mode[gi], np.linalg.cholesky(cov),
            n_draws, n_steps, df, rng, keep_trace,
        )
        draws[idx[gi]], acc[idx[gi]] = th, a
        if keep_trace:
            traces[idx[gi]] = tr
    if J == 1:
        out_draws = draws[..., 0, :].reshape(*lead, n_draws, p)
        out_mode = modes[..., 0, :].reshape(*lead, p)
    else:
        out_draws = draws.reshape(*lead, n_draws, J, p)
        out_mode = modes.reshape(*lead, J, p)
    return LogisticPosterior(
        draws=out_draws, mode=out_mode, mode_cov=covs.reshape(*lead, J * p, J * p),
        acceptance=acc.reshape(lead), ok=ok.reshape(lead),
        trace=None if traces is None else traces.reshape(*lead, n_draws, n_steps + 1, J * p),
    )


def random_walk_metropolis(
    x,
    y,
    n_iter: int,
    rng: np.random.Generator,
    *,
    n_chains: int = 2,
    n_categories: int = 2,
    prior_precision=0.0,
    scale: float | None = None,
    start=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Random-walk Metropolis, the sampler of Bowen & Liu §4.3.2 ("the Metropolis algorithm",
    2 chains), kept as the reference for :func:`posterior_draws`. Gaussian proposals with
    covariance scale²·Σ̂, Σ̂ the Laplace covariance at the mode, scale = 2.38/√d by default
    (Roberts, Gelman & Gilks 1997). Chains start at ``start`` (..., n_chains, d) or at
    overdispersed draws mode + 2·L z. ``x`` (..., n, p), ``y`` (..., n). Returns the chains
    (..., n_chains, n_iter, d), d = (K−1)p (flattened β), and acceptance rates (..., n_chains).
    """
    _check_y(y, n_categories)
    lead, xf, yf = _flatten(x, y)
    B, n, p = xf.shape
    J = n_categories - 1
    d = J * p
    lam = np.broadcast_to(np.asarray(prior_precision, dtype=float), (J, p))
    mode, neg_h, good = posterior_mode(xf, yf, n_categories, lam)
    if not good.all():
        raise ValueError("random_walk_metropolis: no posterior mode for some data set")
    chol = np.linalg.cholesky(np.linalg.inv(neg_h))
    step = (2.38 / np.sqrt(d)) if scale is None else scale
    if start is None:
        z = rng.standard_normal((B, n_chains, d))
        theta = mode.reshape(B, 1, d) + 2.0 * (chol[:, None] @ z[..., None])[..., 0]
    else:
        theta = np.broadcast_to(np.asarray(start, dtype=float), (*lead, n_chains, d)).reshape(
            B, n_chains, d).copy()

    target = _Target(xf, yf, n_categories, lam)

    def lp(t):
        return target(t.reshape(B, n_chains, J, p))

    cur = lp(theta)
    out = np.empty((B, n_chains, n_iter, d))
    acc = np.zeros((B, n_chains))
    for t in range(n_iter):
        z = rng.standard_normal((B, n_chains, d))
        cand = theta + step * (chol[:, None] @ z[..., None])[..., 0]
        new = lp(cand)
        a = np.log(rng.random((B, n_chains))) < new - cur
        theta = np.where(a[..., None], cand, theta)
        cur = np.where(a, new, cur)
        acc += a
        out[:, :, t] = theta
    return out.reshape(*lead, n_chains, n_iter, d), (acc / n_iter).reshape(*lead, n_chains)
