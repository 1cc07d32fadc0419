"""One IRLS weighted least-squares step of :mod:`harness.inference.glm_logit` solved on the
normal equations of a *sparse* design, with R's QR aliasing decided exactly.

Why it is fast. The weighted Gram matrix is a sum over rows, XᵀWX = Σ_i w_i x_i x_iᵀ, and only
the non-zero entries of each row enter: with nnz_i non-zeros in row i it costs Σ_i nnz_i²
instead of n·p² operations. A categorical design with two-way interactions is very sparse (a
row with k non-reference attribute levels has 1 + k + k(k−1)/2 non-zeros), e.g. about 30 of
502 columns for 15 attributes of 2 (×12), 5, 14 and 6 levels, so the Gram costs ~1/300 of the
dense product. XᵀWz and Xβ are sparse products too.

Why it is the QR's answer. R's ``Cdqrls`` (LINPACK ``dqrdc2``) walks the columns in order and
sets aside column j when ‖a_j − P_K a_j‖ < tol·‖a_j‖, a_j = W^½x_j and P_K the projection on
the columns K kept before it. In exact arithmetic that residual is the Cholesky pivot of the
Gram: U_jj² = ‖a_j − P_K a_j‖² (in-order Cholesky of the kept columns). In floating point the
Gram resolves the ratio U_jj²/‖a_j‖² only down to ~1e−16·κ, not tol² = 1e−14, so:

* a pivot with U_jj²/‖a_j‖² ≥ :data:`~harness.inference.glm_logit.NORMAL_EQUATIONS_FLOOR`
  (1e−8, a ratio ≥ 1e−4 ≫ tol) is kept, as the QR keeps it;
* a column of zero weighted norm is aliased, as in the QR;
* any other pivot is decided on the rows: the residual a_j − A_K c with c the least-squares
  coefficients of a_j on the kept columns (seminormal equations plus one refinement step
  from the row residual, accurate like the QR's), aliased when its norm is below tol·‖a_j‖ —
  the dqrdc2 rule itself. An exactly dependent column (an empty cell of a two-way table) has
  a residual of ~1e−15·‖a_j‖ this way.

An exact dependence (ratio < :data:`EXACT_DEPENDENCE`) X_K c = x_j holds for any positive
weights, and the QR, columnwise backward stable, finds it again at every step (its R_jj is
rounding, ~1e−16·‖a_j‖): later steps set such a column aside without the row check as long as
the kept columns before it are the same (otherwise the step decides afresh).

If a column is kept by that rule but its pivot is below the floor, the normal equations lose
digits. When its row-residual ratio is still ≥ 1e−5 (:data:`REFINED_FLOOR` on the squared
ratio) the step stays on the normal equations and refines the coefficients from the row
residual until the correction stops shrinking (corrected seminormal equations with iterative
refinement, which converge at a rate ~κ²·1e−16 per step to the rounding level ~κ·1e−16 that
bounds the QR's own forward error; at the CPS model's separated fits two or three steps, to
~1e−9 of the coefficients), and leaves the step to the QR if that level is above
:data:`REFINED_TOLERANCE`; the Cholesky
pivots after it then err by ~1e−16/ratio ≤ 1e−11 of their norm², far inside the floor's
margin, and the covariance factor of that column by ~1e−16/ratio² ≤ 1e−6 relative. Below
1e−5, or if the refinement does not converge, the step returns None and the caller takes the QR
step instead. Otherwise the coefficients are refined once (corrected seminormal equations), so
they match the QR's to ~κ·1e−16.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg, sparse
from scipy.linalg import lapack

#: a row-residual ratio below this is an exact linear dependence (rounding only), which
#: holds for every positive weighting of the rows
EXACT_DEPENDENCE = 1e-12
#: a kept column whose squared row-residual ratio is at least this (ratio ≥ 1e−5) but whose
#: Cholesky pivot is below the normal-equations floor is solved with iterative refinement
REFINED_FLOOR = 1e-10
#: refinement steps allowed for such a step, and the relative size of the last correction
#: (the rounding level it settles at, ~κ·1e−16) above which the step is left to the QR
MAX_REFINEMENTS = 10
REFINED_TOLERANCE = 1e-8


def _factor(gram_kk):
    """Upper Cholesky factor of the kept block and the number of leading pivots that LAPACK
    could form (all of them unless a pivot was not positive)."""
    u, info = lapack.dpotrf(gram_kk, lower=0, clean=1, overwrite_a=0)
    good = gram_kk.shape[0] if info == 0 else info - 1
    return u, good


class SparseDesign:
    """A design held as CSR for :meth:`step`, with its transpose and each stored entry's row
    kept, so that a step forms W·X by scaling the stored entries. ``gram`` optionally computes
    XᵀWX from the squared weights faster than the sparse product (e.g.
    :class:`harness.inference.categorical_gram.CategoricalGram` of the same design)."""

    def __init__(self, x, gram=None):
        self.x = sparse.csr_matrix(x, dtype=float)
        self.xt = self.x.T.tocsr()
        self.row = np.repeat(np.arange(self.x.shape[0]), np.diff(self.x.indptr))
        self._gram = gram
        self._pairs = None  # the RowPairGram of x, made at the first gram without ``gram``
        self.shape = self.x.shape
        #: columns found exactly dependent on the kept columns before them (those columns)
        self.dependent: dict[int, bytes] = {}

    def rows(self, keep):
        """The design of the rows ``keep`` (a given ``gram`` is dropped)."""
        return SparseDesign(self.x[keep])

    def gram(self, w2):
        """XᵀWX = Σ_i w_i x_i x_iᵀ over the non-zeros of each row (dense p × p)."""
        if self._gram is not None:
            return self._gram(w2)
        if self._pairs is None:
            self._pairs = RowPairGram(self.x) if self.x.has_canonical_format else False
        if self._pairs:
            return self._pairs(w2)
        xw = self.x.copy()
        xw.data *= w2[self.row]
        return (self.xt @ xw).toarray()

    def step(self, z, w, tol, floor):
        """The weighted least-squares step min ‖W^½(z − Xβ)‖ with R's in-order aliasing (see
        the module docstring). Returns (coefficients with 0 for aliased columns, aliased mask,
        upper Cholesky factor of the kept columns' Gram, which is the QR's R up to row signs),
        or None when the normal equations are too ill-conditioned for a kept column."""
        x = self.x
        n, p = x.shape
        w2 = w * w
        gram = self.gram(w2)
        norms2 = np.diag(gram).copy()
        keep = norms2 > 0
        assumed = [j for j in self.dependent if keep[j]]
        keep[assumed] = False
        ill: set[int] = set()  # kept columns with a low pivot, solved with refinement
        while True:  # refactor after each column set aside
            kept = np.flatnonzero(keep)[:n]  # dqrdc2 keeps at most n columns
            u, good = _factor(gram[np.ix_(kept, kept)])
            low = np.flatnonzero(np.diag(u)[:good] ** 2 < floor * norms2[kept[:good]])
            low = [i for i in low if int(kept[i]) not in ill]
            k = low[0] if low else good
            if k == kept.size:
                break
            j = kept[k]
            if int(j) in ill:  # its pivot could not be formed at all
                return None
            ratio = _row_residual_ratio(self, w, j, kept[:k], u[:k, :k])
            if ratio >= tol:
                if ratio * ratio < REFINED_FLOOR:
                    return None  # kept by the QR; the normal equations lose too many digits
                ill.add(int(j))
                continue
            keep[j] = False
            if ratio < EXACT_DEPENDENCE:
                self.dependent[j] = kept[:k].tobytes()
        if any(kept[kept < j].tobytes() != self.dependent[j] for j in assumed):
            self.dependent.clear()  # a column before an assumed one changed: decide afresh
            return self.step(z, w, tol, floor)
        keep[:] = False
        keep[kept] = True
        coef = np.zeros(p)  # seminormal equations, then one correction from the row residual
        coef[kept] = linalg.cho_solve((u, False), (self.xt @ (w2 * z))[kept], check_finite=False)
        size = previous = np.inf
        for _ in range(MAX_REFINEMENTS if ill else 1):
            rhs = (self.xt @ (w2 * (z - x @ coef)))[kept]
            delta = linalg.cho_solve((u, False), rhs, check_finite=False)
            coef[kept] += delta
            size = np.linalg.norm(delta) / max(np.linalg.norm(coef), np.finfo(float).tiny)
            if size <= 1e-14 or size >= previous / 2:  # converged, or at the rounding level
                break
            previous = size
        if ill and size > REFINED_TOLERANCE:
            return None  # the refinement did not settle: the QR takes this step
        return coef, ~keep, u


class RowPairGram:
    """XᵀWX of a CSR design with sorted column indices and no duplicates, as the sparse
    product ``(Xᵀ @ (W·X)).toarray()`` computes it, bit for bit, in about a third of its time
    (DID model of the CPS study: 32 columns, ~41,000 rows).

    scipy's product (``csr_matmat``) forms entry (i, k) as the sum over the rows r in
    increasing order of x_ri·(x_rk·w_r), left to right from 0. The same sum is a weighted
    ``np.bincount`` (which adds its weights one after another, in the order given) over a list
    of every row's pairs of non-zeros (i, k), i <= k, in row order: the list depends on the
    design only and is made once, so each Gram costs one pass of it. A pair of two columns
    whose stored values are all 1 adds w_r itself (1·(1·w_r) = w_r exactly); the pairs with
    another column are a second list with their two factors. Where both columns hold other
    values, the lower entry (k, i), a sum of x_rk·(x_ri·w_r), is listed on its own; every other
    lower entry equals its upper mirror exactly (one factor is 1). An entry's pairs are all in
    one list, so adding the lists' counts adds zeros only."""

    def __init__(self, x):
        n, p = x.shape
        indptr, indices, data = x.indptr, x.indices.astype(np.int64), x.data
        ones = np.ones(p, dtype=bool)  # columns whose stored values are all 1
        ones[indices[data != 1.0]] = False
        entry_row = np.repeat(np.arange(n), np.diff(indptr))
        entry_one = ones[indices]
        self.p = p
        # the pairs of two unit entries: each row's unit entries paired with themselves and
        # the later ones, row by row
        unit_cols = indices[entry_one]
        count = np.bincount(entry_row[entry_one], minlength=n)
        reps = np.repeat(np.cumsum(count), count) - np.arange(unit_cols.size)  # later + itself
        later = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps - (
            np.arange(unit_cols.size)), reps)
        self.lists = [(np.repeat(unit_cols * p, reps) + unit_cols[later], count * (count + 1) // 2,
                       None, None)]  # (codes, pairs per row, left factors, right factors)
        other = np.flatnonzero(~entry_one)
        if other.size:
            # each other entry t with every entry s of its row except the other entries
            # before it (those pairs were listed from s): the pair's upper entry (i, k) is
            # (column t, column s) for s >= t and (column s, column t) for s < t
            row = entry_row[other]
            span = indptr[row + 1] - indptr[row]
            t = np.repeat(other, span)
            mate = np.repeat(indptr[row], span) + (np.arange(span.sum()) - np.repeat(
                np.cumsum(span) - span, span))
            keep = (mate >= t) | entry_one[mate]
            t, mate = t[keep], mate[keep]
            lo, hi = np.minimum(t, mate), np.maximum(t, mate)
            pair_rows = entry_row[t]
            self.lists.append((indices[lo] * p + indices[hi], np.bincount(pair_rows, minlength=n),
                               data[lo], data[hi]))
            both = (mate > t) & ~entry_one[mate]  # the lower entry (k, i) of two other columns
            if both.any():
                self.lists.append((indices[mate[both]] * p + indices[t[both]],
                                   np.bincount(pair_rows[both], minlength=n),
                                   data[mate[both]], data[t[both]]))
        low_i, low_k = np.tril_indices(p, -1)
        mirror = ones[low_i] | ones[low_k]
        self.mirror = (low_i[mirror], low_k[mirror])

    def __call__(self, w2) -> np.ndarray:
        w2 = np.asarray(w2, dtype=float)
        out = np.zeros(self.p * self.p)
        for code, per_row, left, right in self.lists:  # entries of different lists differ
            weights = np.repeat(w2, per_row)  # each pair's row weight, in row order
            if left is not None:
                weights = left * (right * weights)
            out += np.bincount(code, weights=weights, minlength=out.size)
        out = out.reshape(self.p, self.p)
        out[self.mirror] = out[self.mirror[1], self.mirror[0]]
        return out


def _row_residual_ratio(design, w, j, kept, u_kept):
    """‖a_j − A_K c‖/‖a_j‖ with c the least-squares coefficients of a_j = W^½x_j on the kept
    columns A_K (Cholesky factor ``u_kept``), refined once from the residual on the rows."""
    a_j = w * design.xt[j].toarray().ravel()
    norm = np.linalg.norm(a_j)
    if kept.size == 0:
        return 1.0 if norm > 0 else 0.0
    resid = a_j
    coef = np.zeros(design.shape[1])
    for _ in range(2):
        rhs = (design.xt @ (w * resid))[kept]
        coef[kept] += linalg.cho_solve((u_kept, False), rhs, check_finite=False)
        resid = a_j - w * (design.x @ coef)
    return float(np.linalg.norm(resid) / norm)
