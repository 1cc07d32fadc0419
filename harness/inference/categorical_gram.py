"""XᵀWX of a categorical design with all main effects and (optionally) all two-way
interactions, from dense per-group blocks instead of the rows' non-zeros.

The identity. Every design column of :func:`harness.inference.design.dummy_design` (all
columns categorical, ``interactions`` True or False) is a product of at most D indicators
1[x_j = l] (D = 2 with interactions, 1 without). Split the attributes into a group set G and
the rest B. A column c then factorises as c = a·b: a a B-feature (a product of ≤ D − deg b
B-indicators) times a G-feature b, and every such pair with deg a + deg b ≤ D is a design
column, exactly once. Within one group g (one combination of the G attributes) each G-feature
is a constant v_g[b] ∈ {0, 1}, so with u_i the B-features of row i,

    (XᵀWX)[(a, b), (a', b')] = Σ_g v_g[b] v_g[b'] U_g[a, a'],   U_g = Σ_{i ∈ g} w_i u_i u_iᵀ.

The U_g cost (rows) × (number of B-features)² in dense products (79² with 12 binary
attributes in B and the attributes of 5, 14 and 6 levels in G, against 502² per row for the
dense Gram); the sum over groups is a sparse 0/1 matrix (the co-active G-feature pairs of each
group) times the U_g. The result equals the dense XᵀWX up to rounding (summation order).
G is chosen by a cost model among the sets of the attributes with the most levels.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .design import distinct_rows, dummy_design


def _features(codes, n_levels, degree):
    """0/1 features (n, f) of the codes: intercept, dummies, (degree 2) pairwise products,
    as dummy_design orders them, with each feature's label (a frozenset of (column, level))
    and degree."""
    p = len(n_levels)
    x, _ = dummy_design(codes, n_levels, interactions=degree == 2)
    labels = [frozenset()]
    labels += [frozenset({(j, lev)}) for j in range(p) for lev in range(1, n_levels[j])]
    if degree == 2:
        for a in range(p):
            for b in range(a + 1, p):
                labels += [frozenset({(a, la), (b, lb)}) for lb in range(1, n_levels[b])
                           for la in range(1, n_levels[a])]
    return x, labels, np.array([len(s) for s in labels])


def _row_products(left, right):
    """Sparse (n, f·h) matrix of the row-wise outer products of 0/1 matrices (n, f), (n, h):
    entry (i, b·h + c) is left[i, b]·right[i, c]."""
    n, h = left.shape[0], right.shape[1]
    rows_l, cols_l = np.nonzero(left)
    rows_r, cols_r = np.nonzero(right)
    count_r = np.bincount(rows_r, minlength=n)
    start_r = np.r_[0, np.cumsum(count_r)[:-1]]
    reps = count_r[rows_l]
    which_l = np.repeat(np.arange(rows_l.size), reps)
    within = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
    which_r = start_r[rows_l[which_l]] + within
    cols = cols_l[which_l] * h + cols_r[which_r]
    return sparse.csr_matrix((np.ones(cols.size), (rows_l[which_l], cols)),
                             shape=(n, left.shape[1] * h))


def _n_features(levels, degree):
    """How many features of degree ≤ ``degree`` (0, 1 or 2) the attributes have."""
    k = np.asarray(levels, dtype=float) - 1
    return 1 + (degree >= 1) * k.sum() + (degree == 2) * (k.sum() ** 2 - (k ** 2).sum()) / 2


def choose_groups(codes, n_levels, degree) -> tuple[int, ...]:
    """The group attributes G: among the sets of the j attributes with the most levels
    (j = 0..p), the one of least estimated cost (see :meth:`CategoricalGram.__call__`)."""
    order = np.argsort(-np.asarray(n_levels), kind="stable")
    n = codes.shape[0]
    best, best_cost = (), np.inf
    for j in range(len(n_levels) + 1):
        group = tuple(sorted(order[:j].tolist()))
        rest = [k for i, k in enumerate(n_levels) if i not in group]
        n_groups = min(n, np.prod([n_levels[i] for i in group]))
        n_patterns = min(n, np.prod(rest))
        n_b, n_low = _n_features(rest, degree), _n_features(rest, degree - 1)
        cost = n * n_b * n_low + n_patterns * n_b ** 2 + n_groups * 3e5
        if cost < best_cost:
            best, best_cost = group, cost
    return best


class CategoricalGram:
    """XᵀWX of ``dummy_design(codes, n_levels, interactions=degree == 2)`` for row weights w,
    by the group identity of the module docstring."""

    def __init__(self, codes, n_levels, *, interactions: bool = True, group=None):
        codes = np.asarray(codes, dtype=np.int64)
        n_levels = [int(k) for k in n_levels]
        degree = 2 if interactions else 1
        group = choose_groups(codes, n_levels, degree) if group is None else tuple(group)
        rest = [j for j in range(len(n_levels)) if j not in group]
        keys, self.group_of, _ = distinct_rows(codes[:, list(group)], [n_levels[j] for j in group])
        self.order = np.argsort(self.group_of, kind="stable")
        self.bounds = np.r_[0, np.cumsum(np.bincount(self.group_of, minlength=len(keys)))]
        patterns, self.pattern_of, _ = distinct_rows(codes[:, rest], [n_levels[j] for j in rest])
        self.u_pattern, u_labels, u_deg = _features(patterns, [n_levels[j] for j in rest],
                                                    degree)
        v, v_labels, v_deg = _features(keys, [n_levels[j] for j in group], degree)
        self.u = self.u_pattern[self.pattern_of[self.order]]
        self.n_low = int(np.sum(u_deg <= degree - 1))  # B-features of degree < D
        self.n_groups = len(keys)
        _, full_labels, _ = _features(np.zeros((1, len(n_levels)), np.int64), n_levels, degree)
        column = {label: c for c, label in enumerate(full_labels)}
        rest_label = [frozenset((rest[j], lev) for j, lev in s) for s in u_labels]
        group_label = [frozenset((group[j], lev) for j, lev in s) for s in v_labels]
        self.p = len(full_labels)
        # col[b, a]: the design column a·b (−1 where deg a + deg b > D)
        col = np.full((len(v_labels), len(u_labels)), -1)
        for b, gl in enumerate(group_label):
            for a in np.flatnonzero(u_deg <= degree - v_deg[b]):
                col[b, a] = column[rest_label[a] | gl]
        self.blocks = []  # (co-activity (b b', g) sparse, B-features a, a', flat targets)
        for d in range(degree + 1):
            for e in range(degree + 1):
                bs, cs = np.flatnonzero(v_deg == d), np.flatnonzero(v_deg == e)
                na, nc = int(np.sum(u_deg <= degree - d)), int(np.sum(u_deg <= degree - e))
                if not (bs.size and cs.size and na and nc):
                    continue
                coact = _row_products(v[:, bs], v[:, cs])
                target = (col[bs][:, None, :na, None] * self.p
                          + col[cs][None, :, None, :nc])  # [b, c, a, a']
                self.blocks.append((coact.T.tocsr(), na, nc, target.ravel()))
        self.group = group

    def __call__(self, w2) -> np.ndarray:
        """XᵀWX (p × p) for the row weights ``w2`` (the IRLS weights, squared roots).

        Only the block of the intercept G-feature with itself needs U[a, a'] with both a and
        a' of degree D, and it is Σ_g U_g (the intercept is active in every group): that is
        the B-design's Gram with the weights summed per B-pattern (patterns × B-features²).
        Every other block needs U_g[a, a'] with a' of degree < D only (rows × B-features ×
        low-degree B-features, in per-group dense products)."""
        w = np.asarray(w2, dtype=float)
        per_pattern = np.bincount(self.pattern_of, weights=w, minlength=len(self.u_pattern))
        low = self.n_low
        w_sorted = w[self.order]
        part = np.empty((self.n_groups, self.u.shape[1], low))
        for g in range(self.n_groups):
            lo, hi = self.bounds[g], self.bounds[g + 1]
            rows = self.u[lo:hi]
            part[g] = (rows * w_sorted[lo:hi, None]).T @ rows[:, :low]
        out = np.empty(self.p * self.p)
        for coact, na, nc, target in self.blocks:
            if na > low and nc > low:  # the intercept G-feature with itself
                out[target] = ((self.u_pattern * per_pattern[:, None]).T @ self.u_pattern).ravel()
                continue
            u_g = part[:, :na, :nc] if nc <= low else part[:, :nc, :na].transpose(0, 2, 1)
            out[target] = (coact @ u_g.reshape(self.n_groups, -1)).ravel()
        return out.reshape(self.p, self.p)
