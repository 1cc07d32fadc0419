"""Elastic-net multinomial logistic regression on categorical predictors, by block coordinate
descent over the predictors' one-hot blocks, batched over problems (folds × data sets).

Objective, per problem, at each λ of a decreasing path (glmnet's, Friedman, Hastie & Tibshirani
2010, §4, with symmetric coefficients for all K classes and an unpenalised intercept):

    min_{c, B}  −(1/n) Σ_i log softmax(c + Σ_f B_f[x_if])[y_i]
                + λ Σ_f Σ_{u,k} w_fu (α |B_fuk| + (1 − α)/2 · w_fu B_fuk²)

x_if is the level of categorical predictor f in record i (so Σ_f B_f[x_if] is the full one-hot
coding times B), B_f has one row per level and one column per class, and w_fu = 1 (the
one-hot columns as they are) or the column's standard deviation (``standardize``: glmnet's
standardised penalty, which scales the penalty on the original coefficient).

Algorithm. The one-hot columns of one predictor cover disjoint records, so the whole block B_f
is updated at once: with P the current class probabilities, the gradient is
G_fu = (1/n) Σ_{i: x_if = u} (P_i − e_{y_i}) and the Hessian of the loss in the (u, ·) block is
(1/n) Σ_{i: x_if = u} (diag P_i − P_i P_iᵀ) ⪯ diag(H_fu), H_fu = (1/n) Σ_{i: x_if = u} P_i; so
B_fuk ← S(H_fuk B_fuk − G_fuk, λαw) / (H_fuk + λ(1 − α)w²) (S: soft thresholding) minimises
the penalised quadratic model with that diagonal bound (Böhning & Lindsay's bound in its
coordinate-wise form). The bound holds at the current probabilities only, so each change is
capped at ``MAX_STEP`` logits (a trust region). After a block update two moves that change no
logit take the L1-optimal point of their line: a per-class shift of the predictor's observed
levels against the intercept, and a shift of one level's coefficients common to all present
classes (the median, for the lasso). The intercept takes the bounded step without penalty. A
sweep visits the predictors in order, then the intercept; each λ is warm-started from the
previous one and stops when the largest H·ΔB² of a sweep is below ``thresh`` times the null
deviance per record (glmnet's ``thresh`` rule, default 1e-7 as there). A λ that does not
converge within ``max_sweeps`` sweeps gets NaN coefficients, and so does the rest of that
problem's path (as glmnet returns only the solutions it reached).

Batching. Problems that share the predictors' levels and the number of classes (all folds of
one feature over the data sets of a block) are solved together: every array carries a problem
axis, each problem has its own λ path and moves to its next λ as soon as it converges, and a
finished problem is dropped from the batch. Every row's arithmetic involves only its own
problem's values in a fixed order, so each problem's solution is bit-identical to solving it
alone (tested). Classes absent from a problem's records get probability 0 (logit −∞).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

#: the largest change of one coefficient in one update (logit units): diag(H) bounds the
#: Hessian only near the current point, so a level whose observed class has a tiny fitted
#: probability would otherwise take an unbounded step (a trust region, as in Newton-type
#: coordinate descent for logistic models)
MAX_STEP = 1.0


@dataclass(frozen=True)
class LogitProblem:
    """One fit along a λ path: predictor codes (n, q) with levels ``cards``, classes y (n,) in
    0..n_classes−1, the decreasing path ``lambdas``, and per-column penalty weights (one array
    of length cards[f] per predictor, or None for 1)."""

    codes: np.ndarray
    y: np.ndarray
    lambdas: np.ndarray
    weights: tuple[np.ndarray, ...] | None = None


@dataclass(frozen=True)
class LogitPath:
    """Solutions along a problem's path: ``coef`` (L, Σ cards, K) in one-hot column order and
    ``intercept`` (L, K); NaN from the first λ that did not converge; absent classes have
    intercept −inf. ``sweeps`` per λ (0 where not reached)."""

    coef: np.ndarray
    intercept: np.ndarray
    sweeps: np.ndarray

    @property
    def converged(self) -> np.ndarray:
        return ~np.isnan(self.coef).reshape(len(self.coef), -1).any(axis=1)


def softmax_rows(eta: np.ndarray) -> np.ndarray:
    """Row-wise softmax, shifted by each row's own maximum (so a row's value never depends on
    other rows); rows of −inf logits in absent classes give exact zeros.

    For fewer than 8 classes the row maxima and sums are taken column by column: numpy's
    reductions along a short last axis cost several times more per element (PMI's fits spent
    ~40 % of this function in them). The maximum is exact in any order, and numpy sums fewer
    than 8 entries left to right (its pairwise summation's base case), so the running column
    sum has numpy's bits; wider rows keep numpy's reductions."""
    k = eta.shape[1]
    if k >= PAIRWISE_BLOCK:
        e = np.exp(eta - eta.max(axis=1, keepdims=True))
        e /= e.sum(axis=1, keepdims=True)
        return e
    top = eta[:, 0].copy()
    for j in range(1, k):
        np.maximum(top, eta[:, j], out=top)
    e = np.exp(eta - top[:, None])
    total = e[:, 0].copy()
    for j in range(1, k):
        total += e[:, j]
    e /= total[:, None]
    return e


#: numpy's pairwise summation adds fewer than this many entries left to right
PAIRWISE_BLOCK = 8
#: a sweep recomputes only the rows that moved when they are at most this share of all rows
#: (gathering and scattering rows costs about as much as half of their softmax)
SPARSE_MOVE_SHARE = 0.5


def masked_median(values: np.ndarray, mask: np.ndarray, axis: int) -> np.ndarray:
    """The median along ``axis`` of the entries where ``mask`` (broadcast to ``values``) holds,
    0 where none does; the mean of the two middle entries for an even count, as
    ``np.nanmedian``."""
    mask = np.broadcast_to(mask, values.shape)
    ordered = np.sort(np.where(mask, values, np.inf), axis=axis)  # masked entries sort last
    count = mask.sum(axis=axis, keepdims=True)
    low = np.take_along_axis(ordered, np.maximum(count - 1, 0) // 2, axis=axis)
    high = np.take_along_axis(ordered, count // 2 - (count == 0), axis=axis)
    return np.squeeze(np.where(count > 0, (low + high) / 2, 0.0), axis=axis)


class _Batch:
    """The state of the problems still being solved (the rows of all problems stacked)."""

    def __init__(self, problems, cards, n_classes, l1_ratio, intercept):
        self.cards = cards
        self.l1 = l1_ratio
        self.n_classes = n_classes
        self.ids = np.arange(len(problems))
        self.n = np.array([p.y.size for p in problems], dtype=float)
        self.codes = np.concatenate([p.codes for p in problems]).astype(np.int64)
        self.y = np.concatenate([p.y for p in problems]).astype(np.int64)
        self.row_problem = np.repeat(self.ids, [p.y.size for p in problems])
        self.weights = [np.stack([_weights(p, f, c) for p in problems])
                        for f, c in enumerate(cards)]
        self.coef = [np.zeros((len(problems), c, n_classes)) for c in cards]
        self.intercept = intercept.copy()
        self.eta = intercept[self.row_problem].copy()
        self.p = softmax_rows(self.eta)
        self._index()

    def _index(self):
        """Group sums over (problem, level) and over problems, for the current rows."""
        n_rows, n_t = self.y.size, len(self.ids)
        cols = np.arange(n_rows)
        ones = np.ones(n_rows)
        self.groups, self.sums = [], []
        for f, c in enumerate(self.cards):
            g = self.row_problem * c + self.codes[:, f]
            self.groups.append(g)
            self.sums.append(sp.csr_matrix((ones, (g, cols)), shape=(n_t * c, n_rows)))
        self.problem_sum = sp.csr_matrix((ones, (self.row_problem, cols)), shape=(n_t, n_rows))
        onehot_y = np.zeros((n_rows, self.n_classes))
        onehot_y[cols, self.y] = 1.0
        self.level_class = [(s @ onehot_y).reshape(n_t, c, self.n_classes)
                            for s, c in zip(self.sums, self.cards, strict=True)]
        self.class_mean = (self.problem_sum @ onehot_y) / self.n[:, None]
        self.present = self.class_mean > 0
        self.level_seen = [lc.sum(axis=2) > 0 for lc in self.level_class]

    def keep(self, mask):
        """Drop the problems not in ``mask``; the others keep their state (rows sliced, never
        recomputed, so their arithmetic is unchanged)."""
        rows = mask[self.row_problem]
        renumber = np.cumsum(mask) - 1
        self.ids, self.n = self.ids[mask], self.n[mask]
        self.codes, self.y = self.codes[rows], self.y[rows]
        self.row_problem = renumber[self.row_problem[rows]]
        self.weights = [w[mask] for w in self.weights]
        self.coef = [b[mask] for b in self.coef]
        self.intercept = self.intercept[mask]
        self.eta, self.p = self.eta[rows], self.p[rows]
        self._index()

    def _recentre(self, b, f):
        """Moves along directions where the loss is flat: shifting a predictor's observed levels
        by t_k in class k while the intercept takes −t_k, and shifting one level's
        coefficients by the same s in every present class, change no logit (each record has
        exactly one level per predictor; softmax ignores a common shift). Only the L1 penalty
        changes, and the median minimises it (``l1_ratio`` 1)."""
        if self.l1 != 1.0:
            return b
        seen = self.level_seen[f][:, :, None]  # (T, C_f, 1)
        present = self.present[:, None, :]  # (T, 1, K)
        t = np.where(self.present, masked_median(b, seen, axis=1), 0.0)  # (T, K)
        b = np.where(seen & present, b - t[:, None, :], b)
        self.intercept += t
        shift = masked_median(b, present, axis=2)  # (T, C_f)
        return np.where(present, b - shift[:, :, None], b)

    def _move(self, step, groups):
        """η += the step of each row's (problem, level) group, and π = softmax(η) again, for
        the rows that moved only: a row whose group's step is 0 in every class keeps its η
        and π (softmax is row by row), and late in a path most groups do not move. When most
        rows move, all rows are recomputed (cheaper than gathering them)."""
        moved = step.any(axis=1)[groups]
        if np.count_nonzero(moved) > SPARSE_MOVE_SHARE * moved.size:
            self.eta += step[groups]
            self.p = softmax_rows(self.eta)
            return
        rows = np.flatnonzero(moved)
        eta = self.eta[rows] + step[groups[rows]]
        self.eta[rows] = eta
        self.p[rows] = softmax_rows(eta)

    def sweep(self, lam):
        """One sweep at per-problem λ (T,): every predictor block, then the intercept.
        Returns the largest H·ΔB² per problem."""
        n_t = len(self.ids)
        change = np.zeros(n_t)
        per_n = self.n[:, None, None]
        for f, c in enumerate(self.cards):
            h = (self.sums[f] @ self.p).reshape(n_t, c, -1) / per_n
            grad = h - self.level_class[f] / per_n
            b = self.coef[f]
            w = self.weights[f][:, :, None]
            z = h * b - grad
            shrink = (lam[:, None, None] * self.l1) * w
            denom = h + (lam[:, None, None] * (1.0 - self.l1)) * w * w
            with np.errstate(invalid="ignore", divide="ignore"):
                new = np.where(denom > 0, np.sign(z) * np.maximum(np.abs(z) - shrink, 0.0)
                               / denom, 0.0)
            step = np.clip(new - b, -MAX_STEP, MAX_STEP)
            new = b + step
            if not step.any():
                continue
            change = np.maximum(change, (h * step * step).reshape(n_t, -1).max(axis=1))
            self._move(step.reshape(-1, self.n_classes), self.groups[f])
            self.coef[f] = self._recentre(new, f)
        h = (self.problem_sum @ self.p) / self.n[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            step = np.where(self.present, np.clip((self.class_mean - h) / h, -MAX_STEP,
                                                  MAX_STEP), 0.0)
        change = np.maximum(change, np.where(self.present, h * step * step, 0.0).max(axis=1))
        self.intercept += step
        self.eta += step[self.row_problem]
        self.p = softmax_rows(self.eta)
        return change


def _weights(problem: LogitProblem, f: int, c: int) -> np.ndarray:
    if problem.weights is None:
        return np.ones(c)
    return np.asarray(problem.weights[f], dtype=float)


def null_deviance(y: np.ndarray, n_classes: int) -> float:
    """−2 Σ_k ȳ_k log ȳ_k: the intercept-only deviance per record."""
    share = np.bincount(y, minlength=n_classes) / y.size
    share = share[share > 0]
    return float(-2.0 * np.sum(share * np.log(share)))


def fit_logit_paths(problems: list[LogitProblem], cards, n_classes: int, *,
                    l1_ratio: float = 1.0, thresh: float = 1e-7,
                    max_sweeps: int = 10_000) -> list[LogitPath]:
    """Solve every problem along its λ path (module docstring). The problems share the
    predictors' ``cards`` and ``n_classes``; each starts at its intercept-only solution (the
    exact optimum for λ ≥ λ_max)."""
    cards = tuple(int(c) for c in cards)
    n_t = len(problems)
    n_lam = np.array([len(p.lambdas) for p in problems], dtype=np.int64)
    width = int(n_lam.max(initial=0))
    lambdas = np.zeros((n_t, width))
    intercept = np.zeros((n_t, n_classes))
    tol = np.empty(n_t)
    for t, prob in enumerate(problems):
        lambdas[t, :n_lam[t]] = prob.lambdas
        share = np.bincount(prob.y, minlength=n_classes) / prob.y.size
        with np.errstate(divide="ignore"):
            logit = np.log(share)
        intercept[t] = logit - logit[share > 0].mean()
        tol[t] = thresh * null_deviance(prob.y, n_classes)
    coef = np.full((n_t, width, sum(cards), n_classes), np.nan)
    icept = np.full((n_t, width, n_classes), np.nan)
    sweeps = np.zeros((n_t, width), dtype=np.int64)
    position = np.zeros(n_t, dtype=np.int64)  # the λ being solved
    used = np.zeros(n_t, dtype=np.int64)  # sweeps spent at it
    batch = _Batch(problems, cards, n_classes, l1_ratio, intercept)
    batch.keep(n_lam > 0)
    while batch.ids.size:
        ids = batch.ids
        change = batch.sweep(lambdas[ids, position[ids]])
        used[ids] += 1
        done = change < tol[ids]
        for k in np.flatnonzero(done):
            t = ids[k]
            coef[t, position[t]] = np.concatenate([b[k] for b in batch.coef])
            icept[t, position[t]] = batch.intercept[k]
            sweeps[t, position[t]] = used[t]
            position[t] += 1
            used[t] = 0
        stalled = ~done & (used[ids] >= max_sweeps)  # the rest of its path stays NaN
        sweeps[ids[stalled], position[ids[stalled]]] = used[ids[stalled]]
        finished = stalled | (position[ids] >= n_lam[ids])
        if finished.any():
            batch.keep(~finished)
    return [LogitPath(coef[t, :n_lam[t]], icept[t, :n_lam[t]], sweeps[t, :n_lam[t]])
            for t in range(n_t)]
