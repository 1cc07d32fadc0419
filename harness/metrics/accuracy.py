"""Per-replicate accuracy metrics of released data sets against the truth or the original
data (e.g. Bi & Shen, spec 004 §3–§4, §7.3), vectorised over leading axes. Each takes the
released quantity and the truth (or the original data's quantity) and returns one value per
data set; aggregation (mean, SD, MCSE over replicates) is
:mod:`.performance`'s."""

from __future__ import annotations

import numpy as np


def abs_mean_error(values, truth, valid=None) -> np.ndarray:
    """|mean(values) − truth| over the record axis (−1) (spec S1: "the difference between the
    true mean and the private mean", A21); ``valid`` masks padded records."""
    v = np.asarray(values, dtype=float)
    if valid is None:
        return np.abs(v.mean(axis=-1) - truth)
    w = np.asarray(valid, dtype=float)
    return np.abs((np.where(valid, v, 0.0)).sum(-1) / w.sum(-1) - truth)


def relative_mean_difference_pct(values, reference_mean) -> np.ndarray:
    """100·|mean(values) − m|/|m| over the record axis (spec R1, reference = full-data mean)."""
    return 100.0 * np.abs(np.asarray(values, dtype=float).mean(axis=-1) - reference_mean) / \
        np.abs(reference_mean)


def ks_distance(values, cdf, scale: float = 1.0) -> np.ndarray:
    """One-sample Kolmogorov–Smirnov distance sup_x |F̂_n(x) − F(x)| of the records on the last
    axis against a continuous CDF ``cdf`` (a callable, e.g. a frozen scipy distribution's
    ``cdf``), times ``scale`` (10³ for the paper's units, spec S2):
    max_i max(i/n − F(x_(i)), F(x_(i)) − (i − 1)/n)."""
    x = np.sort(np.asarray(values, dtype=float), axis=-1)
    n = x.shape[-1]
    f = np.asarray(cdf(x), dtype=float)
    i = np.arange(1, n + 1)
    d = np.maximum((i / n - f).max(axis=-1), (f - (i - 1) / n).max(axis=-1))
    return scale * d


def l2_error(estimate, truth) -> np.ndarray:
    """‖estimate − truth‖₂ over the last axis (spec S5: the intercept included, A19)."""
    return np.linalg.norm(np.asarray(estimate, dtype=float) - np.asarray(truth, dtype=float),
                          axis=-1)


def mean_bernoulli_kl(p, q) -> np.ndarray:
    """mean_i KL(Bernoulli(p_i) ‖ Bernoulli(q_i)) over the last axis (spec R2, A18: p from the
    original fit, q from the private one, averaged over the original rows); +inf when any
    q_i ∈ {0, 1} (a fitted probability of exactly 0 or 1, the paper's "Infinity")."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    degenerate = np.any((q <= 0) | (q >= 1), axis=-1)
    qc = np.clip(q, 1e-300, 1 - 1e-16)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, p * (np.log(p) - np.log(qc)), 0.0)
        b = np.where(p < 1, (1 - p) * (np.log1p(-p) - np.log1p(-qc)), 0.0)
    return np.where(degenerate, np.inf, (a + b).mean(axis=-1))


def rmse(prediction, truth) -> np.ndarray:
    """Root mean squared error over the last axis (spec R3: test RMSE)."""
    d = np.asarray(prediction, dtype=float) - np.asarray(truth, dtype=float)
    return np.sqrt(np.mean(d**2, axis=-1))


def improvement_pct(competitor, reference) -> np.ndarray:
    """100·(competitor − reference)/reference (spec §3: the paper's improvement of DIP)."""
    c = np.asarray(competitor, dtype=float)
    r = np.asarray(reference, dtype=float)
    return 100.0 * (c - r) / r
