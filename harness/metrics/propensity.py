"""Propensity-score general utility of synthetic categorical data: SPECKS and pMSE.

Both stack the original (n₀ records) and one synthetic set (n₁ records), label the synthetic
records T = 1, fit a classifier of T on the attributes and compare the two groups through the
in-sample propensity scores e_i = P̂(T = 1 | x_i):

* SPECKS (Bowen, Liu & Su; spec 003 §5.3): the two-sample Kolmogorov–Smirnov distance
  sup_e |F̂₁(e) − F̂₀(e)| between the ECDFs of the scores in the two groups.
* pMSE (Snoke, Raab, Nowok, Dibben & Slavković 2018, Eq. 1): (1/N) Σ_i (e_i − c)², N = n₀ + n₁,
  c = n₁/N; with its expectation under the null that both groups come from one distribution,
  E₀[pMSE] = (k − 1)(1 − c)²c/N for a logistic model with k estimated parameters (ibid.,
  §3.1; k = the rank of the fitted design) and the ratio pMSE/E₀[pMSE].

The classifier is the logistic regression that R's ``glm`` fits (:mod:`harness.inference.
glm_logit`), on the treatment-coded dummies of the attributes (main effects) and, with
``interactions=True``, of all their pairwise products, as ``model.matrix(~ (a + b + ...)^2)``
builds them. Records with the same attribute codes are fitted once, as one row with their count
and their share of synthetic records (identical rows get identical scores): exactly the fit of
the records (:func:`harness.inference.glm_logit.glm_logit` with ``counts``).

The default fit (:data:`PROPENSITY_CONTROL`) is R's glm on the sparse design
(``GlmControl(solver="sparse")``): the same iterates, aliasing, iteration count and convergence
flag as the QR mimic ``solver="qr"``, with fitted scores equal to ~1e−14, at a fraction of the
cost (:mod:`harness.inference.glm_gram`, :mod:`harness.inference.categorical_gram`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..inference.categorical_gram import CategoricalGram
from ..inference.design import distinct_rows, dummy_design, sparse_dummy_design
from ..inference.glm_gram import SparseDesign
from ..inference.glm_logit import GlmControl, glm_logit

#: the propensity model's fit: R's glm (QR aliasing, start, convergence rule) on the sparse
#: design's normal equations
PROPENSITY_CONTROL = GlmControl(solver="sparse")


def ks_two_groups(scores, count_0, count_1) -> float:
    """Two-sample KS distance between groups 0 and 1 when every distinct row g has score
    ``scores[g]`` and ``count_0[g]``, ``count_1[g]`` records of each group: the ECDFs are
    compared just after every distinct score value (ties across groups handled exactly)."""
    s = np.asarray(scores, dtype=float)
    order = np.argsort(s, kind="stable")
    s = s[order]
    c0 = np.asarray(count_0, dtype=float)[order]
    c1 = np.asarray(count_1, dtype=float)[order]
    last = np.r_[s[1:] != s[:-1], True]  # last row of each run of equal scores
    f0 = np.cumsum(c0)[last] / c0.sum()
    f1 = np.cumsum(c1)[last] / c1.sum()
    return float(np.max(np.abs(f1 - f0), initial=0.0))


def pmse_null_expectation(k: int, c: float, total: int) -> float:
    """E₀[pMSE] = (k − 1)(1 − c)²c/N (Snoke et al. 2018) for k logistic parameters."""
    return (k - 1) * (1.0 - c) ** 2 * c / total


@dataclass(frozen=True)
class PropensityUtility:
    """Per synthetic set (arrays (m,)): SPECKS ``ks``, ``pmse``, ``pmse_null`` (its null
    expectation), ``pmse_ratio``, and the fit's ``rank``, ``converged`` and ``fitted_0_or_1``
    (separation) flags."""

    ks: np.ndarray
    pmse: np.ndarray
    pmse_null: np.ndarray
    pmse_ratio: np.ndarray
    rank: np.ndarray
    converged: np.ndarray
    fitted_0_or_1: np.ndarray


def _one_set(original, synthetic, n_levels, interactions, control):
    n0, n1 = original.shape[0], synthetic.shape[0]
    stacked = np.concatenate([original, synthetic]).astype(np.int64)
    label = np.r_[np.zeros(n0), np.ones(n1)]
    # one row per distinct code pattern: its number of records and share of synthetic ones
    cells, index, counts = distinct_rows(stacked, n_levels)
    n_syn = np.bincount(index, weights=label, minlength=cells.shape[0])
    control = control or PROPENSITY_CONTROL
    if control.solver == "sparse":
        x = SparseDesign(sparse_dummy_design(cells, n_levels, interactions=interactions),
                         CategoricalGram(cells, n_levels, interactions=bool(interactions))
                         if isinstance(interactions, bool) else None)
    else:
        x, _ = dummy_design(cells, n_levels, interactions=interactions)
    fit = glm_logit(x, n_syn / counts, counts.astype(float), control=control)
    e = fit.fitted
    ks = ks_two_groups(e, counts - n_syn, n_syn)
    total = n0 + n1
    c = n1 / total
    pmse = float(np.sum(counts * (e - c) ** 2) / total)
    null = pmse_null_expectation(fit.rank, c, total)
    return ks, pmse, null, fit


def propensity_utility(original, synthetic, n_levels, *, interactions: bool = True,
                       control: GlmControl | None = None) -> PropensityUtility:
    """SPECKS and pMSE of each synthetic set against the original: ``original`` (n₀, p) codes,
    ``synthetic`` (m, n₁, p) or (n₁, p) codes, ``n_levels`` the number of levels of each
    column; the logistic model has main effects and (``interactions=True``) all pairwise
    interactions, all columns categorical."""
    original = np.asarray(original)
    synthetic = np.asarray(synthetic)
    if synthetic.ndim == 2:
        synthetic = synthetic[None]
    if original.ndim != 2 or synthetic.shape[-1] != original.shape[-1]:
        raise ValueError(f"propensity_utility: original {original.shape} and synthetic "
                         f"{synthetic.shape} need (n, p) and (m, n_s, p) codes")
    out = [_one_set(original, s, n_levels, interactions, control) for s in synthetic]
    ks, pmse, null, fits = zip(*out, strict=True)
    pmse = np.array(pmse)
    null = np.array(null)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = pmse / null
    return PropensityUtility(
        ks=np.array(ks), pmse=pmse, pmse_null=null, pmse_ratio=ratio,
        rank=np.array([f.rank for f in fits]),
        converged=np.array([f.converged for f in fits]),
        fitted_0_or_1=np.array([f.fitted_0_or_1 for f in fits]))


def specks(original, synthetic, n_levels, *, interactions: bool = True,
           control: GlmControl | None = None) -> float:
    """SPECKS of m synthetic sets: the mean over the sets of their KS distances (spec 003 §5.3)."""
    return float(propensity_utility(original, synthetic, n_levels, interactions=interactions,
                                    control=control).ks.mean())


def propensity_metrics(original, synthetic, n_levels, *, interactions: bool = True,
                       control: GlmControl | None = None) -> dict[str, np.ndarray]:
    """Metric rows for a :class:`harness.evaluation.MetricEvaluation`: original codes (R, n, p)
    and synthetic sets (R, m, n_s, p) give (R, m) arrays ``specks`` (KS per set; their mean over
    the sets is SPECKS), ``pmse``, ``pmse_ratio`` and ``propensity_converged`` (1 when the
    propensity fit converged within maxit)."""
    original = np.asarray(original)
    synthetic = np.asarray(synthetic)
    r, m = synthetic.shape[:2]
    out = {k: np.empty((r, m)) for k in ("specks", "pmse", "pmse_ratio",
                                         "propensity_converged")}
    for i in range(r):
        res = propensity_utility(original[i], synthetic[i], n_levels,
                                 interactions=interactions, control=control)
        out["specks"][i], out["pmse"][i], out["pmse_ratio"][i] = res.ks, res.pmse, res.pmse_ratio
        out["propensity_converged"][i] = res.converged
    return out
