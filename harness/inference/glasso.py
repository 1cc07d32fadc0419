"""Graphical lasso with the diagonal penalised, as R's ``glasso`` (``penalize.diagonal = TRUE``,
its default), and its k-fold cross-validation (spec 004 §3 S3/S4, §6 A24).

Objective (Friedman, Hastie & Tibshirani 2008, with the diagonal in the penalty):

    Θ̂(ρ) = argmin_{Θ ≻ 0}  −log det Θ + tr(SΘ) + ρ Σ_{j,k} |Θ_jk|.

scikit-learn's ``GraphicalLasso`` penalises only the off-diagonal entries; because Θ_jj > 0,
ρ|Θ_jj| = ρΘ_jj, and the objective above equals sklearn's with S replaced by S + ρI (spec A24).
The objective is strictly convex, so its minimiser is unique and every exact solver returns it
(R's block coordinate descent only to its tolerance ``thr = 1e-4``).

Solver here: ADMM on the split Θ = Z (Boyd et al. 2011, §6.5), batched over problems (folds ×
penalties): the Θ-step is closed form through an eigendecomposition of μ(Z − U) − S, the Z-step
soft-thresholds *every* entry (diagonal included) at ρ/μ, and μ is adapted by residual
balancing (:data:`BALANCE_RATIO`); the scaled dual starts at the optimum's diagonal dual, or on
a warm start at the previous estimate's dual clipped to the new penalty (``dual_start``). The
estimate is Z (exact zeros); a problem that stops at ``max_iter`` is flagged.

Scale: the objective is equivariant, Θ̂(cS, cρ) = Θ̂(S, ρ)/c (−log det(Θ/c) = −log det Θ + p log c
and the other two terms are unchanged), so each problem is solved on (S/c, ρ/c) with
c = tr(S)/p + ρ, the mean diagonal of W = Θ̂⁻¹ at the optimum (W_jj = S_jj + ρ), and its
solution is divided by c. The stopping rule (Boyd et al. 2011 §3.3.1 with ε_abs = ε_rel = ``tol``)
is thus relative to the problem's scale, and the estimate is the same at any scale. Without the
normalisation its absolute part ``tol·p`` exceeded every entry of Θ̂ ≈ S⁻¹ once S ≈ 10⁸ (data
with SDs of 10⁴, as NOPM's releases) or ρ ≈ 10⁷, and ADMM stopped at Θ̂ = 0 flagged as converged.
The optimum has a positive diagonal (Θ̂ ≻ 0), so an estimate that is not positive definite is
never reported as converged.

Exact screening (``screen``, on by default): the minimiser is block diagonal along the
connected components of the graph |S_jk| > ρ (Witten, Friedman & Simon 2011; Mazumder & Hastie
2012; with the diagonal penalised an isolated node has Θ̂_jj = 1/(S_jj + ρ)), so each component
is solved as its own problem (:func:`screening_blocks`). At large penalties of a CV grid most
nodes are isolated and cost nothing; a problem whose graph is connected is solved exactly as
before, bit for bit. The stopping rule applies per block, so a split problem's ADMM estimate
moves within the tolerance.

Newton polish (``polish_tol``, for p <= POLISH_MAX_P): the ADMM converges linearly, and most of
its iterations only refine digits of a support it has already found. With ``polish_tol`` it
stops at that looser tolerance, and each problem is finished by Newton's method on the smooth
problem the iterate's support and signs define (the primal Θ on the support, or for a dense
support its dual, the maximum-determinant completion W off it); the result is accepted only if
it meets the KKT conditions of the whole objective to 1e-9 (scale-normalised), i.e. it is the
unique minimiser to rounding; otherwise the support is corrected (active-set steps) or the ADMM
resumes from its own state. On S3's cross-validations (p = 5, 15) this halves the CPU and lands
closer to the optimum than the ADMM at 1e-7 (entropy losses within ~1e-9 of an ADMM at 1e-11,
where the ADMM at 1e-7 was up to ~3e-5 off).

Tests check the KKT conditions of the objective (W = Θ̂⁻¹: W_jj = S_jj + ρ, |W_jk − S_jk| ≤ ρ with
equality and matching sign where Θ̂_jk ≠ 0) and the sklearn-on-(S + ρI) reference.

Cross-validation: the records are split at random into k folds; for each fold and penalty Θ̂ is
fitted on the other folds' covariance (divisor n, the MLE, as ``glasso`` takes ``s``) and scored
by the Gaussian negative log-likelihood −log det Θ̂ + tr(S_test Θ̂) of the held-out fold; the
penalty with the smallest mean score is chosen (ties: the larger penalty), and Θ̂ is refitted on
all records with it. The data sets of a call (e.g. every replicate of a task, with folds drawn
beforehand from each replicate's stream, ``fold``) are solved together: every ADMM iteration is
one batched eigendecomposition of all their folds × penalties, so the per-iteration Python
overhead is shared (on S3, p ≤ 15, it was about 40 % of the cost of one set at a time).

Grouped folds (``groups``): records with the same group label always fall in the same fold (the
groups, not the records, are dealt to the folds at random). Records that are copies or near
copies of one another (a release that resamples a small reference sample) otherwise sit in both
the training and the held-out folds, the held-out likelihood rewards fitting them exactly, and
the smallest penalty of the grid wins whatever the truth. :func:`near_duplicate_groups` labels
such records from the data alone. With every record its own group the folds are exactly the
ungrouped ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial.distance import pdist

DEFAULT_GRID = tuple(np.geomspace(0.01, 1.0, 10))


def covariance(x) -> np.ndarray:
    """Sample covariance with divisor n of records x (..., n, p)."""
    x = np.asarray(x, dtype=float)
    c = x - x.mean(axis=-2, keepdims=True)
    return np.swapaxes(c, -1, -2) @ c / x.shape[-2]


def _soft(a, t):
    return np.sign(a) * np.maximum(np.abs(a) - t, 0.0)


def graphical_lasso(s, rho, *, tol: float = 1e-7, max_iter: int = 5000, init=None,
                    dual_start: bool = True, polish_tol: float | None = None,
                    screen: bool = True, balance_ratio: float | None = None):
    """Θ̂ of the diagonal-penalised objective for covariances ``s`` (..., p, p) and penalties
    ``rho`` broadcasting to the leading axes. Returns (Θ̂ (..., p, p), converged (...)).

    ``init``: a starting Θ (e.g. the estimate at a nearby penalty), else (S + ρI)⁻¹.
    ``dual_start``: start the scaled dual U at (Z₀⁻¹ − S)/μ clipped to the penalty's box
    [−ρ/μ, ρ/μ] (the optimality condition Θ̂⁻¹ − S = μU*, Boyd et al. 2011 §6.5), not at 0;
    with the default Z₀ = (S + ρI)⁻¹ this is ρI/μ, the dual the diagonal has at the optimum.
    It changes neither the objective nor the stopping rule, only the start of the iterations
    (``dual_start=False``: U₀ = 0, the former start; the estimates agree within the tolerance,
    tests/harness/inference/test_glasso.py). On S3's and S4's cross-validations it saves up to
    a quarter of the iterations on a warm path; over-relaxation (Boyd et al. 2011 §3.4.3,
    α = 1.6) was measured slower on both and is not offered.

    ``polish_tol``: run the ADMM only to this looser tolerance, then solve the objective exactly
    on the support and signs of its Z by Newton's method (:func:`_support_newton`); a problem
    whose Newton solution meets the KKT conditions of the whole objective is the minimiser (to
    rounding) and is done, every other one continues its ADMM from where it stopped to ``tol``
    (so the answer is never less accurate than the ADMM's alone). ``None``, or p above
    POLISH_MAX_P: ADMM only.

    ``screen``: split each problem exactly into the connected components of its graph
    |S_jk| > ρ (:func:`screening_blocks`) and solve the blocks as separate problems (batched
    with the other problems' blocks of the same size), an isolated node in closed form
    Θ̂_jj = 1/(S_jj + ρ). The minimiser is the same; the stopping rule (hence the ADMM's
    estimate, within ``tol``) and the polish's size limit apply per block. ``False``: every
    problem solved whole (the former solver, bit for bit).

    ``balance_ratio``: the residual ratio of μ's balancing (default :data:`BALANCE_RATIO`;
    10, Boyd et al.'s example and the former solver's, with ``screen=False`` gives the former
    solver bit for bit, which ``harness report``'s S4 solver bench times beside this one)."""
    s = np.asarray(s, dtype=float)
    p = s.shape[-1]
    lead = np.broadcast_shapes(s.shape[:-2], np.shape(rho))
    s = np.broadcast_to(s, (*lead, p, p)).reshape(-1, p, p)
    rho = np.broadcast_to(np.asarray(rho, dtype=float), lead).reshape(-1)
    if init is not None:
        init = np.broadcast_to(np.asarray(init, dtype=float), (*lead, p, p)).reshape(-1, p, p)
    ratio = BALANCE_RATIO if balance_ratio is None else float(balance_ratio)
    if not ratio > 1:
        raise ValueError(f"balance_ratio: must be > 1, got {balance_ratio!r}")
    options = {"tol": tol, "max_iter": max_iter, "dual_start": dual_start,
               "polish_tol": polish_tol, "balance_ratio": ratio}
    solve = _screened if screen else _solve
    z, converged = solve(s, rho, init, options)
    return z.reshape(*lead, p, p), converged.reshape(lead)


def screening_blocks(s, rho) -> np.ndarray:
    """Labels (B, p) of the connected components of the graphs |S_jk| > ρ (j ≠ k) of problems
    s (B, p, p), rho (B,), numbered 0, 1, … in order of each component's first node.

    Exact screening (Witten, Friedman & Simon 2011, Theorem 1; Mazumder & Hastie 2012): with
    the diagonal penalised the KKT conditions are W_jj = S_jj + ρ, W_jk − S_jk = ρ·sign Θ̂_jk
    where Θ̂_jk ≠ 0 and |W_jk − S_jk| <= ρ where Θ̂_jk = 0 (W = Θ̂⁻¹). If every |S_jk| <= ρ
    between two node sets, the block-diagonal Θ̂ made of each block's own minimiser has
    W_jk = 0 there, so it meets the conditions of the whole problem: the minimiser (unique) is
    block diagonal along these components. The diagonal's penalty only shifts W_jj; a node
    alone has W_jj = S_jj + ρ, Θ̂_jj = 1/(S_jj + ρ)."""
    b, p = s.shape[0], s.shape[-1]
    edges = np.abs(s) > rho[:, None, None]
    edges[:, np.arange(p), np.arange(p)] = False
    # one graph of the b·p nodes of all problems (no edge joins two problems): one scipy call
    # instead of one per problem (whose overhead was 60 % of S3's ci sweep at p <= 15). scipy
    # numbers components in order of their first node, so problem k's components are numbered
    # on from the label of its node 0: subtracting that label gives each problem's own numbering
    k, i, j = np.nonzero(edges)
    graph = csr_matrix((np.ones(k.size, dtype=bool), (k * p + i, k * p + j)), shape=(b * p,) * 2)
    labels = connected_components(graph, directed=False)[1].reshape(b, p).astype(np.int64)
    return labels - labels[:, :1]


def _screened(s, rho, init, options):
    """:func:`_solve` on the blocks of :func:`screening_blocks`: the blocks of every problem
    grouped by size, each group one batch (a block's arithmetic, hence its bits, does not
    depend on the other blocks of its batch), isolated nodes in closed form. A problem with a
    non-finite entry is solved whole (its graph is not defined)."""
    b = s.shape[0]
    finite = np.isfinite(s).all(axis=(1, 2))
    z = np.zeros_like(s)
    converged = np.ones(b, dtype=bool)
    whole = np.flatnonzero(~finite)
    if whole.size:
        z[whole], converged[whole] = _solve(s[whole], rho[whole],
                                            None if init is None else init[whole], options)
    problems = np.flatnonzero(finite)
    if problems.size == 0:
        return z, converged
    p = s.shape[-1]
    # the blocks of every problem, problem by problem, each problem's by label: one stable
    # sort of (problem, label) over all nodes (each block's nodes in increasing order)
    block = (np.arange(problems.size)[:, None] * p + screening_blocks(s[finite],
                                                                      rho[finite])).ravel()
    order = np.argsort(block, kind="stable")
    start = np.flatnonzero(np.r_[True, block[order][1:] != block[order][:-1]])
    sizes = np.diff(np.r_[start, order.size])
    owner = problems[block[order][start] // p]
    # the sizes in order of their first block (the batches' order)
    _, first = np.unique(sizes, return_index=True)
    for size in sizes[np.sort(first)]:
        size = int(size)
        of_size = np.flatnonzero(sizes == size)
        k = owner[of_size]
        nodes = order[start[of_size][:, None] + np.arange(size)] % p  # (G, size)
        rows, cols = nodes[:, :, None], nodes[:, None, :]
        if size == 1:
            diag = s[k, nodes[:, 0], nodes[:, 0]] + rho[k]
            value = 1.0 / diag
            z[k, nodes[:, 0], nodes[:, 0]] = value
            np.logical_and.at(converged, k, value > 0)
            continue
        sub_init = None if init is None else init[k[:, None, None], rows, cols]
        theta, ok = _solve(s[k[:, None, None], rows, cols], rho[k], sub_init, options)
        z[k[:, None, None], rows, cols] = theta
        np.logical_and.at(converged, k, ok)
    return z, converged


def _solve(s, rho, init, options):
    """:func:`graphical_lasso` of flat problems s (B, p, p), rho (B,), init (B, p, p) or None,
    each solved whole (no screening). Returns (Θ̂ (B, p, p), converged (B,))."""
    tol, max_iter = options["tol"], options["max_iter"]
    dual_start, polish_tol = options["dual_start"], options["polish_tol"]
    ratio = options["balance_ratio"]
    p = s.shape[-1]
    B = s.shape[0]
    # the problem's scale, tr(Θ̂⁻¹)/p (W_jj = S_jj + ρ at the optimum): solve (S/c, ρ/c), return Θ̂/c
    c = np.trace(s, axis1=1, axis2=2) / p + rho
    c = np.where(np.isfinite(c) & (c > 0), c, 1.0)
    s, rho = s / c[:, None, None], rho / c
    if init is None:
        w = s + rho[:, None, None] * np.eye(p)
        z = np.linalg.inv(w)
        z = 0.5 * (z + np.swapaxes(z, 1, 2))
    else:
        z = init * c[:, None, None]
        w = _inverse_or_nan(z) if dual_start else None
    mu = np.ones(B)
    if dual_start:
        box = rho[:, None, None]
        u = np.clip(np.nan_to_num(w - s), -box, box)
        u = 0.5 * (u + np.swapaxes(u, 1, 2)) / mu[:, None, None]
    else:
        u = np.zeros_like(z)
    left = np.full(B, max_iter)
    # Newton's Hessian has (p(p+1)/2)² entries: no polish beyond POLISH_MAX_P
    stage = polish_tol if p <= POLISH_MAX_P else None
    settled = np.zeros(B, dtype=bool)  # met ``tol`` at a loose stop, or solved by Newton
    while stage is not None and stage > tol:
        loose, tight = _admm(s, rho, z, u, mu, ~settled, stage, left, ratio, tol)
        settled |= tight  # met ``tol`` too: where the ADMM alone stops
        loose &= ~settled
        polished, exact = _support_newton(s[loose], rho[loose], z[loose])
        done = np.flatnonzero(loose)[exact]
        z[done] = polished[exact]
        settled[done] = True
        stage *= POLISH_STEP
    converged = _admm(s, rho, z, u, mu, ~settled, tol, left, ratio)[0] | settled
    z = 0.5 * (z + np.swapaxes(z, 1, 2))
    converged &= _positive_definite(z)
    return z / c[:, None, None], converged


def _admm(s, rho, z, u, mu, active, tol, left, ratio, final=None):
    """ADMM iterations on the (scale-normalised) problems ``active`` (B,) of (s, rho) from the
    state (z, u, mu), updated in place, until each meets the stopping rule at ``tol`` or has used
    up its iterations ``left`` (B,) (counted down in place); μ balanced at the residual
    ``ratio``. Returns (converged (B,), met (B,)):
    met where the stopping iterate also met the rule at the tighter ``final`` tolerance (so the
    ADMM run to ``final`` stops there too); the problems not ``active`` on entry are left alone
    and reported neither."""
    p = s.shape[-1]
    converged = np.zeros(s.shape[0], dtype=bool)
    met = np.zeros(s.shape[0], dtype=bool)
    final = tol if final is None else final
    while True:
        active &= left > 0
        idx = np.flatnonzero(active)
        if idx.size == 0:
            return converged, met
        left[idx] -= 1
        m = mu[idx][:, None, None]
        evals, evecs = np.linalg.eigh(m * (z[idx] - u[idx]) - s[idx])
        theta_ev = (evals + np.sqrt(evals**2 + 4.0 * mu[idx][:, None])) / (2.0 * mu[idx][:, None])
        theta = (evecs * theta_ev[:, None, :]) @ np.swapaxes(evecs, 1, 2)
        z_old = z[idx]
        z_new = _soft(theta + u[idx], rho[idx][:, None, None] / m)
        u_new = u[idx] + theta - z_new
        r = np.linalg.norm(theta - z_new, axis=(1, 2))
        d = mu[idx] * np.linalg.norm(z_new - z_old, axis=(1, 2))
        scale = np.maximum(np.linalg.norm(theta, axis=(1, 2)), np.linalg.norm(z_new, axis=(1, 2)))
        base_p, base_d = p + scale, p + mu[idx] * np.linalg.norm(u_new, axis=(1, 2))
        eps_p, eps_d = tol * base_p, tol * base_d
        z[idx], u[idx] = z_new, u_new
        done = (r <= eps_p) & (d <= eps_d)
        converged[idx[done]] = True
        met[idx[done & (r <= final * base_p) & (d <= final * base_d)]] = True
        active[idx[done]] = False
        grow, shrink = r > ratio * d, d > ratio * r
        factor = np.where(grow, 2.0, np.where(shrink, 0.5, 1.0))
        mu[idx] *= factor
        u[idx] /= factor[:, None, None]


#: residual balancing (Boyd et al. 2011 §3.4.1): μ is doubled when the primal residual exceeds
#: this multiple of the dual one, halved in the opposite case. Boyd et al.'s example ratio, 10,
#: lets μ lag the residuals: on S4's cross-validations (N = 200 < p = 250, the warm path, tol
#: 1e-4) a ratio of 2 needs ~1.8 times fewer ADMM iterations (chain DIP_15: 622 → 335 over one
#: fold's path, exp_decay DIP_35: 398 → 232, chain NP ~290 → 198), 1.5 a few per cent fewer
#: still. The stopping rule is unchanged
BALANCE_RATIO = 2.0
#: the largest p polished (Newton's Hessian: up to (p(p+1)/2)² entries per problem); beyond,
#: ``polish_tol`` is ignored and the ADMM runs alone
POLISH_MAX_P = 40
#: the ADMM tolerance of the next Newton polish of the problems the last one left (× this)
POLISH_STEP = 0.01
#: Newton on a support: stop at a Newton decrement λ² below this (f − f* ≈ λ²/2 on the
#: scale-normalised problem, whose objective is of order p), or fail after NEWTON_STEPS
NEWTON_DECREMENT = 1e-20
NEWTON_STEPS = 30
#: the Hessian is factorised again at the next step while λ² is above this (a start far from
#: the optimum); below, the chord steps gain digits at a rate of the order of λ
HESSIAN_KEPT_BELOW = 1e-2
#: slack of the KKT check of a Newton solution (scale-normalised units: W_jj ≈ 1)
KKT_SLACK = 1e-9
#: guesses of the support per problem (the ADMM's, then active-set corrections)
SUPPORT_ROUNDS = 4
#: Newton's coordinates are padded to a multiple of this (groups of one size per batch)
PAD = 8


def _support_coordinates(support, p, size):
    """The coordinates (i, j), i <= j, of each problem's support (B, n) over the upper triangle,
    packed first and padded to ``size``: (i (B, size), j (B, size), used (B, size))."""
    iu, ju = np.triu_indices(p)
    order = np.argsort(~support, axis=1, kind="stable")[:, :size]
    used = np.take_along_axis(support, order, axis=1)
    return iu[order], ju[order], used


def _support_newton(s, rho, z):
    """The minimiser of the objective on scale-normalised problems (s, rho) (B, p, p), (B,) by
    Newton's method on a guessed support, from the ADMM's estimate ``z`` near the optimum.

    The support A and signs σ of ``z`` (the diagonal always in, σ_jj = +1) give a smooth
    problem: the minimiser of −log det Θ + tr(TΘ), T = S + ρσ, over symmetric Θ with Θ_jk = 0
    off A, equivalently (its dual, the maximum-determinant completion; Dempster 1972) the W ≻ 0
    of largest log det W with W = T on A, and Θ = W⁻¹. Each problem is solved in the smaller of
    the two coordinate sets (:func:`_newton_free`): Θ on A (the upper triangle's entries of A),
    or W off A (a dense support leaves few). The solution is checked against the KKT conditions
    of the whole objective (Friedman et al. 2008 with the diagonal penalised, W = Θ⁻¹):
    σ_jk Θ_jk > 0 on A, |W_jk − S_jk| <= ρ off A, W − S = ρσ on A. A problem that fails the
    check has its guess corrected (an active-set step: entries whose sign flipped leave A,
    entries with |W_jk − S_jk| > ρ join it with σ_jk = sign(W_jk − S_jk)) and is solved again,
    up to SUPPORT_ROUNDS guesses. Returns (Θ (B, p, p), exact (B,)): exact where Θ met the
    check, hence is the unique minimiser (to rounding)."""
    b, p = z.shape[0], z.shape[-1]
    eye = np.eye(p, dtype=bool)
    theta = 0.5 * (z + np.swapaxes(z, 1, 2))
    sigma = np.where(eye, 1.0, np.sign(theta))
    exact = np.zeros(b, dtype=bool)
    todo = np.arange(b)
    for _ in range(SUPPORT_ROUNDS):
        if todo.size == 0:
            break
        sig = sigma[todo]
        found, solved = _newton_on_support(s[todo], rho[todo], sig, theta[todo])
        theta[todo] = found
        with np.errstate(all="ignore"):
            w = _inverse_or_nan(found)
            gap = w - s[todo]
            box = rho[todo][:, None, None]
            off_bad = (sig == 0) & ~(np.abs(gap) <= box + KKT_SLACK)
            flipped = (sig != 0) & ~(sig * found > 0)
            stationary = np.abs(np.where(sig != 0, gap - box * sig, 0.0)) <= KKT_SLACK
        good = solved & ~(off_bad | flipped).any(axis=(1, 2)) & stationary.all(axis=(1, 2))
        exact[todo[good]] = True
        retry = solved & ~good & np.isfinite(w).all(axis=(1, 2))
        sig = np.where(flipped, 0.0, np.where(off_bad, np.sign(gap), sig))
        sigma[todo] = sig
        todo = todo[retry]
    return theta, exact


def _newton_on_support(s, rho, sigma, theta):
    """Θ (B, p, p) of the smooth problem of support σ ≠ 0 and signs σ (:func:`_support_newton`)
    from ``theta`` near it, each problem in its primal (Θ on the support) or dual (W off it)
    coordinates, whichever are fewer. Returns (Θ, converged (B,)); Θ is exactly 0 off the
    support."""
    b, p = theta.shape[0], theta.shape[-1]
    support = sigma != 0
    target = s + rho[:, None, None] * sigma
    out = np.where(support, theta, 0.0)
    converged = np.zeros(b, dtype=bool)
    pairs_in = (support.sum(axis=(1, 2)) - p) // 2
    dual = p * (p - 1) // 2 - pairs_in < p + pairs_in
    iu, ju = np.triu_indices(p)
    if (~dual).any():
        k = np.flatnonzero(~dual)
        v, ok = _newton_free(out[k], target[k], support[k][:, iu, ju])
        out[k], converged[k] = v, ok
    if dual.any():
        k = np.flatnonzero(dual)
        with np.errstate(all="ignore"):
            w = _inverse_or_nan(out[k])
        w = np.where(support[k], target[k], w)
        off = ~support[k][:, iu, ju]
        w, ok = _newton_free(w, np.zeros_like(w), off)
        with np.errstate(all="ignore"):
            t = _inverse_or_nan(w)
        t = np.where(support[k], 0.5 * (t + np.swapaxes(t, 1, 2)), 0.0)
        out[k], converged[k] = t, ok & _cholesky_ok(t)
    return out, converged


def _newton_free(v, target, free):
    """Newton's method for the minimiser of −log det V + tr(target·V) over symmetric V ≻ 0
    whose entries are those of ``v`` (B, p, p) except the free ones, ``free`` (B, n) over the
    upper triangle (i <= j): the primal problem of a support (V = Θ, target T, free on the
    support) or its dual (V = W, target 0, free off the support). Coordinates x_a = V_{i_a j_a}
    (Hessian of −log det V: V⁻¹ ⊗ V⁻¹ restricted to them; Boyd & Vandenberghe 2004 §9.5). The
    Hessian is kept once the Newton decrement λ² is below HESSIAN_KEPT_BELOW (the chord method:
    linear convergence at a rate of the order of λ), refactorised at every step above. Returns
    (V, converged (B,)): converged where λ² fell to NEWTON_DECREMENT within NEWTON_STEPS steps
    and V ≻ 0.

    The problems are solved in groups of the same padded size (the number of free coordinates
    rounded up to a multiple of PAD), so a problem's arithmetic, hence its bits, does not depend
    on the other problems of the batch."""
    v = v.copy()
    ok = np.zeros(v.shape[0], dtype=bool)
    count = free.sum(axis=1)
    padded = np.minimum(-(-count // PAD) * PAD, free.shape[1])
    for size in np.unique(padded):
        k = np.flatnonzero(padded == size)
        v[k], ok[k] = _newton_padded(v[k], target[k], free[k], int(size))
    return v, ok


def _newton_padded(v, target, free, size):
    """:func:`_newton_free` on problems whose free coordinates, padded, number ``size``."""
    b, p = v.shape[0], v.shape[-1]
    ok = _cholesky_ok(v)
    if size == 0:  # nothing free: v is the solution
        return v, ok
    ci, cj, used = _support_coordinates(free, p, size)
    mult = np.where(ci == cj, 1.0, 2.0) * used  # (B, M); 0 on the padding
    h_inv = np.empty((b, ci.shape[1], ci.shape[1]))
    running = ok.copy()
    refresh = ok.copy()  # factorise the Hessian at the next step
    for _ in range(NEWTON_STEPS):
        idx = np.flatnonzero(running)
        if idx.size == 0:
            break
        at = np.arange(idx.size)[:, None]
        inv = _inverse_or_nan(v[idx])
        new = np.flatnonzero(refresh[idx])
        if new.size:
            h_inv[idx[new]] = _hessian_inverse(inv[new], ci[idx[new]], cj[idx[new]],
                                               used[idx[new]], mult[idx[new]])
        g = mult[idx] * (target[idx] - inv)[at, ci[idx], cj[idx]]
        x = -(h_inv[idx] @ g[:, :, None])[:, :, 0]
        lam2 = -np.sum(g * x, axis=1)
        bad = ~np.isfinite(lam2) | (lam2 < 0)
        x[bad] = 0.0
        # the damped step 1/(1 + λ) far from the optimum keeps V ≻ 0 (self-concordance, Boyd &
        # Vandenberghe 2004 §9.6.4); the Hessian is kept while λ² <= HESSIAN_KEPT_BELOW
        step = np.where(lam2 > 1.0 / 16, 1.0 / (1.0 + np.sqrt(np.abs(lam2))), 1.0)
        delta = np.zeros((idx.size, p, p))
        delta[at, ci[idx], cj[idx]] = x * step[:, None]
        delta[at, cj[idx], ci[idx]] = x * step[:, None]
        v[idx] += delta
        refresh[idx] = lam2 > HESSIAN_KEPT_BELOW
        ok[idx[bad]] = False
        running[idx[(lam2 <= NEWTON_DECREMENT) | bad]] = False
    ok &= ~running
    return v, ok & _cholesky_ok(v)


def _hessian_inverse(w, ci, cj, used, mult):
    """H⁻¹ (B, M, M) of −log det Θ in the support coordinates (i, j) = (ci, cj) (B, M) at
    W = Θ⁻¹ (B, p, p): H_ab = (W_ik W_jl + W_il W_jk) m_a m_b / 2 for a = (i, j), b = (k, l),
    m = 2 off the diagonal and 1 on it (``mult``, 0 on the padding, which gets an identity row);
    NaN where H is singular or not finite."""
    b, p = w.shape[0], w.shape[-1]
    rows = np.arange(b)[:, None] * p * p
    flat = w.ravel()
    row_i, row_j = (rows + ci * p)[:, :, None], (rows + cj * p)[:, :, None]
    col_i, col_j = ci[:, None, :], cj[:, None, :]
    h = flat.take(row_i + col_i) * flat.take(row_j + col_j)
    h += flat.take(row_i + col_j) * flat.take(row_j + col_i)
    h *= mult[:, :, None] * mult[:, None, :] / 2.0
    size = ci.shape[1]
    h[:, np.arange(size), np.arange(size)] += ~used
    return _inverse_or_nan(h)


def _inverse_or_nan(a) -> np.ndarray:
    """a⁻¹ of each matrix of a (B, p, p), NaN where a matrix is singular or not finite."""
    try:
        with np.errstate(all="ignore"):
            return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        out = np.full_like(a, np.nan)
        for i in range(a.shape[0]):
            try:
                out[i] = np.linalg.inv(a[i])
            except np.linalg.LinAlgError:
                pass
        return out


def _cholesky_ok(a) -> np.ndarray:
    """Whether each symmetric matrix of a (B, p, p) has a Cholesky factor (finite, positive
    definite to rounding): the cheap check inside Newton's method."""
    finite = np.isfinite(a).all(axis=(1, 2))
    out = np.zeros(a.shape[0], dtype=bool)
    idx = np.flatnonzero(finite)
    try:
        np.linalg.cholesky(a[idx])
        out[idx] = True
    except np.linalg.LinAlgError:
        for i in idx:
            try:
                np.linalg.cholesky(a[i])
                out[i] = True
            except np.linalg.LinAlgError:
                pass
    return out


def _positive_definite(a) -> np.ndarray:
    """Whether each symmetric matrix of a (B, p, p) is positive definite (finite, smallest
    eigenvalue > 0)."""
    finite = np.isfinite(a).all(axis=(1, 2))
    out = np.zeros(a.shape[0], dtype=bool)
    if finite.any():
        out[finite] = np.linalg.eigvalsh(a[finite])[:, 0] > 0
    return out


def gaussian_nll(theta, s) -> np.ndarray:
    """−log det Θ + tr(SΘ) (the Gaussian negative log-likelihood per record, up to constants);
    +inf where Θ is not positive definite."""
    sign, logdet = np.linalg.slogdet(theta)
    tr = np.einsum("...ij,...ji->...", s, theta)
    return np.where(sign > 0, -logdet + tr, np.inf)


@dataclass(frozen=True)
class GlassoCV:
    """``precision`` (..., p, p) refitted at the chosen ``penalty`` (...); ``cv_loss`` (..., L)
    the mean held-out negative log-likelihood per penalty of ``grid``; ``converged`` (...)."""

    precision: np.ndarray
    penalty: np.ndarray
    cv_loss: np.ndarray
    grid: np.ndarray
    converged: np.ndarray


def near_duplicate_groups(x, share: float) -> np.ndarray:
    """Group labels (..., n) of records x (..., n, p): the clusters of single linkage cut at
    ``share`` × the median pairwise Euclidean distance of the data set, i.e. records joined by a
    chain of neighbours each closer than that share of a typical distance. Labels are 0, 1, …
    in order of each cluster's first record, so data without near copies get 0..n−1."""
    if not 0 < share < 1:
        raise ValueError(f"share must lie in (0, 1), got {share!r}")
    x = np.asarray(x, dtype=float)
    lead, (n, p) = x.shape[:-2], x.shape[-2:]
    flat = x.reshape(-1, n, p)
    out = np.empty(flat.shape[:2], dtype=np.int64)
    for i, data in enumerate(flat):
        d = pdist(data)
        cut = share * np.median(d)
        raw = fcluster(linkage(d, "single"), cut, "distance") if cut > 0 else np.ones(n, int)
        _, first, inverse = np.unique(raw, return_index=True, return_inverse=True)
        out[i] = np.argsort(np.argsort(first))[inverse]
    return out.reshape(*lead, n)


def fold_labels(rng: np.random.Generator, n: int, folds: int, groups=None) -> np.ndarray:
    """The fold (0..folds−1) of each of n records: a random permutation dealt round-robin over
    the records, or over the group labels ``groups`` (n,) (0..G−1) when given."""
    if groups is None:
        return rng.permutation(n) % folds
    groups = np.asarray(groups)
    size = int(groups.max()) + 1
    if size < folds:
        raise ValueError(f"{size} groups of records cannot fill {folds} folds")
    return (rng.permutation(size) % folds)[groups]


def cv_folds(shape, rng: np.random.Generator, folds: int, groups=None) -> np.ndarray:
    """The folds (..., n) of data sets of records of ``shape`` (..., n, p), one
    :func:`fold_labels` draw per data set in turn from ``rng`` (row-major order of the leading
    axes); ``groups`` (..., n) as there."""
    lead, n = tuple(shape[:-2]), int(shape[-2])
    count = int(np.prod(lead, dtype=int))
    labels = None if groups is None else np.broadcast_to(groups, (*lead, n)).reshape(-1, n)
    out = np.empty((count, n), dtype=np.int64)
    for i in range(count):
        out[i] = fold_labels(rng, n, folds, None if labels is None else labels[i])
    return out.reshape(*lead, n)


#: floats of the problems solved at once (sets × folds × penalties × p², or × folds × p² on a
#: warm path): the data sets are cut into chunks of about this size (memory; the problems are
#: independent, so the chunks do not change the estimates)
CHUNK_FLOATS = 2**22


def _path(train, grid, solver, warm_start):
    """Θ̂ (K, L, p, p) and converged (K, L) of K training covariances at every penalty: one
    batch of K × L cold-started problems, or (``warm_start``) the penalties from the largest
    down, the K problems batched, each started from the previous penalty's estimate (the path
    strategy of Friedman, Hastie & Tibshirani 2008, §2). Both stop by the same rule; at p = 100
    the warm path needs ~2.6 times fewer ADMM iterations and lands no farther from the optimum.
    ``solver``: the keywords of :func:`graphical_lasso` (tol, max_iter, polish_tol, screen,
    balance_ratio)."""
    if not warm_start:
        return graphical_lasso(train[:, None], grid[None, :], **solver)
    k, p = train.shape[0], train.shape[-1]
    theta = np.empty((k, grid.size, p, p))
    conv = np.empty((k, grid.size), dtype=bool)
    previous = None
    for j in range(grid.size - 1, -1, -1):
        theta[:, j], conv[:, j] = graphical_lasso(train, grid[j], init=previous, **solver)
        previous = theta[:, j]
    return theta, conv


def _fold_covariances(data, fold, folds):
    """(train, test) covariances (D, k, p, p) of data sets (D, n, p) with folds (D, n)."""
    pairs = list(zip(data, fold, strict=True))
    train = np.stack([[covariance(x[f != j]) for j in range(folds)] for x, f in pairs])
    test = np.stack([[covariance(x[f == j]) for j in range(folds)] for x, f in pairs])
    return train, test


def _cv_chunk(data, fold, grid, folds, solver, warm_start):
    """(precision (D, p, p), chosen (D,), losses (D, L), ok (D,)) of a chunk of D data sets."""
    d, p = data.shape[0], data.shape[-1]
    train, test = _fold_covariances(data, fold, folds)
    theta, conv = _path(train.reshape(-1, p, p), grid, solver, warm_start)
    theta = theta.reshape(d, folds, grid.size, p, p)
    loss = gaussian_nll(theta, test[:, :, None]).mean(axis=1)  # (D, L)
    best = np.full(d, grid.size - 1)
    finite = np.isfinite(loss).any(axis=1)
    # the smallest mean loss, ties to the larger penalty: the last minimum along the grid
    flipped = np.argmin(loss[:, ::-1], axis=1)
    best[finite] = grid.size - 1 - flipped[finite]
    prec, final_conv = graphical_lasso(covariance(data), grid[best], **solver)
    ok = final_conv & conv.reshape(d, -1).all(axis=1)
    return prec, grid[best], loss, ok


def glasso_cv(x, rng: np.random.Generator | None = None, *, grid=DEFAULT_GRID, folds: int = 5,
              tol: float = 1e-7, max_iter: int = 5000, groups=None,
              warm_start: bool = False, fold=None, polish_tol: float | None = None,
              screen: bool = True, balance_ratio: float | None = None) -> GlassoCV:
    """k-fold cross-validated graphical lasso (diagonal penalised) of records x (..., n, p), one
    data set per leading index. The folds are ``fold`` (..., n) when given, else drawn from
    ``rng`` (:func:`cv_folds`; ``groups`` (..., n): labels 0..G−1 of records that must share a
    fold). Every problem of the data sets (sets × folds × penalties, then the refits) is solved
    in one batch per chunk of sets (:data:`CHUNK_FLOATS`); ``warm_start``: solve the penalties as
    a warm-started path (:func:`_path`); ``polish_tol``: ADMM to this tolerance, then Newton on
    its support; ``screen``, ``balance_ratio``: as :func:`graphical_lasso`."""
    x = np.asarray(x, dtype=float)
    lead, (n, p) = x.shape[:-2], x.shape[-2:]
    grid = np.sort(np.asarray(grid, dtype=float))
    if grid.size == 0 or np.any(grid <= 0):
        raise ValueError("grid: penalties must be > 0")
    if not 2 <= folds <= n // 2:
        raise ValueError(f"folds must lie in 2..{n // 2} (two records per fold at least)")
    if fold is None:
        if rng is None:
            raise ValueError("glasso_cv: give rng or fold")
        fold = cv_folds(x.shape, rng, folds, groups)
    flat = x.reshape(-1, n, p)
    fold = np.broadcast_to(fold, (*lead, n)).reshape(-1, n)
    per_set = folds * (1 if warm_start else grid.size) * p * p
    size = max(1, CHUNK_FLOATS // per_set)
    solver = {"tol": tol, "max_iter": max_iter, "polish_tol": polish_tol, "screen": screen,
              "balance_ratio": balance_ratio}
    parts = [_cv_chunk(flat[i:i + size], fold[i:i + size], grid, folds, solver, warm_start)
             for i in range(0, flat.shape[0], size)]
    prec, chosen, losses, ok = (np.concatenate(a) for a in zip(*parts, strict=True))
    return GlassoCV(prec.reshape(*lead, p, p), chosen.reshape(lead),
                    losses.reshape(*lead, grid.size), grid, ok.reshape(lead))


def entropy_loss(omega, omega_hat):
    """Entropy loss EL(Ω, Ω̂) = tr(Ω⁻¹Ω̂) − log|Ω⁻¹Ω̂| − p (Lin & Perlman 1985; spec §3 S3), with
    the log-determinant from ``slogdet``; returns (loss (...), naive_det_underflow (...)), the
    flag True where det(Ω⁻¹Ω̂) computed directly is 0 or not finite (the paper's "infinite"
    losses, spec §6 A25). A non-positive-definite Ω̂ gives +inf."""
    omega = np.asarray(omega, dtype=float)
    omega_hat = np.asarray(omega_hat, dtype=float)
    p = omega.shape[-1]
    m = np.linalg.solve(omega, omega_hat)
    sign, logdet = np.linalg.slogdet(m)
    tr = np.trace(m, axis1=-2, axis2=-1)
    with np.errstate(over="ignore", under="ignore"):
        naive = np.linalg.det(m)
    symmetric = 0.5 * (omega_hat + np.swapaxes(omega_hat, -1, -2))
    pd = (sign > 0) & (np.linalg.eigvalsh(symmetric)[..., 0] > 0)
    loss = np.where(pd, tr - logdet - p, np.inf)
    return loss, ~np.isfinite(naive) | (naive == 0)
