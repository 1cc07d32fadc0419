"""Specific utility of synthetic categorical data through tests of association: Pearson χ²
tests of independence on every two-way table, pooled over m synthetic sets by D2, and how often
their significance agrees with the original data's (Bowen, Liu & Su; spec 003 §5.4).

* :func:`pairwise_chi2`: for codes (..., n, p), the Pearson statistic and its degrees of
  freedom for each of the C(p, 2) pairs of columns (pairs (a, b), a < b, in lexicographic
  order), vectorised over the leading axes (replicates, sets). All-zero rows and columns of a
  table are dropped first (R's ``chisq.test`` would return NaN on them), so df =
  (rows − 1)(columns − 1) of the non-empty table; a table with a single non-empty row or column
  has statistic 0 and df 0. A table that is 2 × 2 after the drop gets Yates' continuity
  correction, |O − E| − min(½, |O − E|), as R's ``chisq.test`` and scipy's ``chi2_contingency``
  apply by default.
* :func:`chi2_pvalues`: p = P(χ²_df > statistic); df = 0 gives p = 1 (no association can be
  seen in such a table).
* :func:`pooled_pvalues`: D2 (Li, Meng, Raghunathan & Rubin 1991;
  :func:`harness.inference.d2_test`) over the sets axis with the df k of the original data's
  table, so that the m statistics are pooled on a common df (spec 003 §5.4, [R]); k = 0 gives
  p = 1; m = 1 gives the single set's p-value on k df.
* :func:`consistency_rate`: the share of tests whose decision at level α (p ≤ α) is the same on
  the original and on the synthetic data, for each α of a list.
* :func:`pvalue_crosstab`: the cross-tabulation of the p-value categories (≤ c₁, (c₁, c₂], ...,
  > c_last) of the original (rows) against the synthetic (columns); its diagonal sum is the
  consistency count of the appendix tables.
* :func:`chi2_consistency`: all of the above for an original data set and its m synthetic sets
  (vectorised over leading replicate axes).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ..inference.multivariate import d2_test
from .utility import frequencies


def column_pairs(p: int) -> list[tuple[int, int]]:
    """The C(p, 2) pairs of column indices (a, b), a < b, in the order the tests are reported."""
    return list(combinations(range(p), 2))


def chi2_statistic(tables) -> tuple[np.ndarray, np.ndarray]:
    """Pearson χ² (with the rules of the module docstring) of contingency tables (..., r, c):
    (statistic (...), df (...))."""
    o = np.asarray(tables, dtype=float)
    rows = o.sum(axis=-1)
    cols = o.sum(axis=-2)
    total = rows.sum(axis=-1)
    live_r = (rows > 0).sum(axis=-1)
    live_c = (cols > 0).sum(axis=-1)
    df = np.maximum(live_r - 1, 0) * np.maximum(live_c - 1, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = rows[..., :, None] * cols[..., None, :] / total[..., None, None]
        dev = np.abs(o - e)
        yates = (live_r == 2) & (live_c == 2)
        dev = dev - np.where(yates[..., None, None], np.minimum(0.5, dev), 0.0)
        terms = np.where(e > 0, dev**2 / e, 0.0)
    stat = np.where(df > 0, terms.sum(axis=(-1, -2)), 0.0)
    return stat, df


def pairwise_chi2(codes, n_levels) -> tuple[np.ndarray, np.ndarray]:
    """χ² statistics and dfs (..., P) of every pair of columns of codes (..., n, p), P = C(p, 2);
    ``n_levels`` gives each column's number of levels."""
    codes = np.asarray(codes, dtype=np.int64)
    p = codes.shape[-1]
    if len(n_levels) != p:
        raise ValueError(f"pairwise_chi2: {p} columns but {len(n_levels)} level counts")
    # one copy with a contiguous row per column: each pair reads two of them, not two strided
    # columns of the whole array (the counts are the same integers)
    columns = np.ascontiguousarray(np.moveaxis(codes, -1, 0))
    stats_, dfs = [], []
    for a, b in column_pairs(p):
        ka, kb = n_levels[a], n_levels[b]
        joint = frequencies(columns[a] * kb + columns[b], ka * kb)
        s, d = chi2_statistic(joint.reshape(*joint.shape[:-1], ka, kb))
        stats_.append(s)
        dfs.append(d)
    return np.stack(stats_, axis=-1), np.stack(dfs, axis=-1)


def chi2_pvalues(statistic, df) -> np.ndarray:
    """P(χ²_df > statistic), 1 where df = 0."""
    from scipy import stats  # at call time: importing scipy.stats costs every process ~1 s

    df = np.asarray(df)
    return np.where(df > 0, stats.chi2.sf(statistic, np.maximum(df, 1)), 1.0)


def pooled_pvalues(statistics, k) -> np.ndarray:
    """D2-pooled p-values (..., P) of the χ² statistics (..., m, P) of m synthetic sets, each
    test on its common df k (P,) (or (..., P)); see the module docstring."""
    d = np.asarray(statistics, dtype=float)
    k = np.broadcast_to(np.asarray(k), d.shape[:-2] + d.shape[-1:])
    if d.shape[-2] == 1:
        return chi2_pvalues(d[..., 0, :], k)
    pooled = d2_test(np.moveaxis(d, -2, -1), np.maximum(k, 1)).pvalue
    return np.where(k > 0, pooled, 1.0)


def consistency_rate(p_original, p_synthetic, alphas) -> np.ndarray:
    """Share of tests (last axis) with 1[p_orig ≤ α] = 1[p_syn ≤ α], for each α: (..., A)."""
    a = np.asarray(alphas, dtype=float)
    po = np.asarray(p_original, dtype=float)[..., None, :] <= a[:, None]
    ps = np.asarray(p_synthetic, dtype=float)[..., None, :] <= a[:, None]
    return (po == ps).mean(axis=-1)


def pvalue_crosstab(p_original, p_synthetic, cuts=(0.01, 0.05, 0.10)) -> np.ndarray:
    """Counts (..., C, C), C = len(cuts) + 1, of tests by the original's p-value category (rows)
    and the synthetic's (columns); category i is (cuts[i−1], cuts[i]], the first ≤ cuts[0]."""
    cuts = np.asarray(cuts, dtype=float)
    co = np.searchsorted(cuts, np.asarray(p_original, dtype=float), side="left")
    cs = np.searchsorted(cuts, np.asarray(p_synthetic, dtype=float), side="left")
    co, cs = np.broadcast_arrays(co, cs)
    c = cuts.size + 1
    return frequencies(co * c + cs, c * c).reshape(*co.shape[:-1], c, c)


@dataclass(frozen=True)
class Chi2Consistency:
    """χ² agreement of m synthetic sets with the original: ``p_original`` (..., P),
    ``p_synthetic`` (..., P) (D2-pooled over the sets), ``rates`` (..., A) for the α levels,
    ``crosstab`` (..., C, C) of the p-value categories, and the original's ``df`` (..., P)."""

    p_original: np.ndarray
    p_synthetic: np.ndarray
    rates: np.ndarray
    crosstab: np.ndarray
    df: np.ndarray


def chi2_consistency(original, synthetic, n_levels, alphas,
                     cuts=(0.01, 0.05, 0.10)) -> Chi2Consistency:
    """All pairwise χ² tests on the original codes (..., n, p) and on m synthetic sets (..., m,
    n_s, p), pooled over the sets by D2 on the original's df, and their agreement at each α
    of ``alphas`` (spec 003 §5.4)."""
    original = np.asarray(original)
    synthetic = np.asarray(synthetic)
    if synthetic.ndim != original.ndim + 1:
        raise ValueError(f"chi2_consistency: original {original.shape} needs synthetic sets "
                         f"(..., m, n_s, p), got {synthetic.shape}")
    s_o, k = pairwise_chi2(original, n_levels)
    s_s, _ = pairwise_chi2(synthetic, n_levels)
    p_o = chi2_pvalues(s_o, k)
    p_s = pooled_pvalues(s_s, k)
    return Chi2Consistency(p_o, p_s, consistency_rate(p_o, p_s, alphas),
                           pvalue_crosstab(p_o, p_s, cuts), k)
