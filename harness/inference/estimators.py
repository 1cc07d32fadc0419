"""Point estimators with their within-set variance estimates, vectorised over leading axes."""

from __future__ import annotations

import numpy as np


def cell_proportions(counts: np.ndarray, n) -> tuple[np.ndarray, np.ndarray]:
    """Sample proportions p̂_k = n_k/n of a K-cell table (last axis) and their binomial variance
    estimates p̂_k(1 − p̂_k)/n (Bowen & Liu §4.1: v_j = p̂_j(1 − p̂_j) n⁻¹)."""
    n = np.asarray(n, dtype=float)
    p = np.asarray(counts, dtype=float) / n[..., None] if n.ndim else np.asarray(counts) / n
    return p, p * (1.0 - p) / (n[..., None] if n.ndim else n)


def sample_mean(x: np.ndarray, valid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sample mean x̄ of the last axis (records) and its variance estimate s²/n, s² with divisor
    n − 1 (Bowen & Liu §4.2: x̄_j with within-set variance s_j²/n). Vectorised over leading axes
    such as (R, m). ``valid`` (same shape) masks the real records of sets of different sizes
    (:attr:`harness.data.RecordBatch.valid`); each set then has its own n."""
    x = np.asarray(x, dtype=float)
    if valid is None:
        n = x.shape[-1]
        return x.mean(axis=-1), x.var(axis=-1, ddof=1) / n
    n = valid.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(valid, x, 0.0).sum(axis=-1) / n
        d = np.where(valid, x - mean[..., None], 0.0)
        s2 = (d * d).sum(axis=-1) / (n - 1)
        return mean, np.where(n >= 2, s2 / n, np.nan)


def sample_variance(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sample variance s² (divisor n − 1) of the last axis and its variance estimate
    (s²)²(2/(n − 1) + κ/n), κ the moment excess kurtosis m₄/m₂² − 3 with central moments
    m_k = Σ(x_i − x̄)^k / n (Bowen & Liu §4.2; spec 000 §4.2 and §6 item 16). A set of identical
    values has s² = 0 and variance estimate 0. Vectorised over leading axes such as (R, m)."""
    x = np.asarray(x, dtype=float)
    n = x.shape[-1]
    d = x - x.mean(axis=-1, keepdims=True)
    d2 = d * d
    m2 = d2.mean(axis=-1)
    m4 = (d2 * d2).mean(axis=-1)
    s2 = m2 * n / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(m2 > 0, m4 / np.where(m2 > 0, m2 * m2, 1.0) - 3.0, 0.0)
    return s2, s2 * s2 * (2.0 / (n - 1) + kappa / n)


def sample_mean_and_variance(x: np.ndarray):
    """``sample_mean`` and ``sample_variance`` of the last axis in one pass over the records:
    returns (x̄, s²/n, s², (s²)²(2/(n − 1) + κ/n)) (Bowen & Liu §4.2)."""
    x = np.asarray(x, dtype=float)
    n = x.shape[-1]
    mean = x.mean(axis=-1)
    d = x - mean[..., None]
    d *= d
    m2 = d.mean(axis=-1)
    d *= d
    m4 = d.mean(axis=-1)
    s2 = m2 * n / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(m2 > 0, m4 / np.where(m2 > 0, m2 * m2, 1.0) - 3.0, 0.0)
    return mean, s2 / n, s2, s2 * s2 * (2.0 / (n - 1) + kappa / n)


# --- general location model (Bowen & Liu §4.3.1; spec 000 §4.3 and §6 item 16) ----------------


def marginal_proportions(cell_counts: np.ndarray, indicator: np.ndarray, n):
    """Marginal proportions of categorical variables from full-table cell counts (..., K):
    ``indicator`` (K, M) is 1 where cell k belongs to marginal level m, so the marginal counts
    are ``cell_counts @ indicator``; variance estimates P̂(1 − P̂)/n (Bowen & Liu §4.3.1)."""
    marginal = np.asarray(cell_counts, dtype=float) @ np.asarray(indicator, dtype=float)
    return cell_proportions(marginal, n)


def pooled_within_cell_covariance(values: np.ndarray, cells: np.ndarray, n_cells: int):
    """Pooled within-cell covariance of records ``values`` (..., n, p) in cells (..., n).

    Returns ``(cov, var_of_variances, counts, means)``: cov (..., p, p) = SSP/(n − K) with SSP
    the pooled within-cell sum of squares and K the number of occupied cells (the degrees of
    freedom of the residuals; K = 24 when every cell is occupied, the divisor n − K of spec
    §6 item 16); the variance estimate of each diagonal entry (..., p),
    (S²_j)²(2/(n − 1) + κ_j/n), with κ_j the moment excess kurtosis m₄/m₂² − 3 of the pooled
    within-cell residuals z_ij − z̄_kj; the cell counts (..., K) and cell means (..., K, p)
    (NaN for empty cells). Per-cell sums use one ``group_sums`` each."""
    from ..models.glom import gather_cells, within_cell_moments

    values = np.asarray(values, dtype=float)
    n = values.shape[-2]
    counts, sums, ssp = within_cell_moments(values, cells, n_cells)
    occupied = (counts > 0).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        means = sums / counts[..., None]
        cov = ssp / (n - occupied)[..., None, None]
    resid = values - gather_cells(np.nan_to_num(means), cells)
    r2 = resid * resid
    m2 = r2.mean(axis=-2)
    m4 = (r2 * r2).mean(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(m2 > 0, m4 / np.where(m2 > 0, m2 * m2, 1.0) - 3.0, 0.0)
    s2 = np.diagonal(cov, axis1=-2, axis2=-1)
    return cov, s2 * s2 * (2.0 / (n - 1) + kappa / n), counts, means


def glom_cell_means(means: np.ndarray, counts: np.ndarray, pooled_variances: np.ndarray,
                    min_count: int = 2):
    """Cell means (..., K, p) with variance estimates S²_j/ñ_k (spec §4.3: the paper's
    S²_{j,l} **n**⁻¹ with the bold n the per-cell counts; S²_j the pooled within-cell variance of
    the set, ``pooled_variances`` (..., p)). Cells with ñ_k < ``min_count`` are dropped for that
    set: estimate and variance NaN, which the combining rule treats as a missing set
    (``harness.inference.combine``)."""
    counts = np.asarray(counts, dtype=float)
    keep = (counts >= min_count)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        var = pooled_variances[..., None, :] / counts[..., None]
    return np.where(keep, means, np.nan), np.where(keep, var, np.nan)


def correlation_from_covariance(cov: np.ndarray, n, i: int = 0, j: int = 1):
    """Correlation r = S_ij/√(S_ii S_jj) of a covariance (..., p, p) and its variance estimate
    (1 − r²)/(n − 2), the paper's choice (Bowen & Liu §4.3.1; spec §6 item 16)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = cov[..., i, j] / np.sqrt(cov[..., i, i] * cov[..., j, j])
    return r, (1.0 - r * r) / (np.asarray(n, dtype=float) - 2.0)


def stratified_proportions(labels: np.ndarray, weights: np.ndarray, strata: np.ndarray,
                           n_strata: int, n_levels: int) -> tuple[np.ndarray, np.ndarray]:
    """Weighted (Hájek) population shares of the levels of a categorical variable from a
    stratified sample, with the variance of a stratified design drawn with replacement within
    strata (Cochran 1977, §5.2 and §5A.3): p̂_k = Σ_h Ŵ_h p̂_hk with Ŵ_h = Σ_{i∈h} w_i / Σ_i w_i,
    p̂_hk = Σ_{i∈h} w_i 1(y_i = k) / Σ_{i∈h} w_i, and
    v(p̂_k) = Σ_h Ŵ_h² p̂_hk (1 − p̂_hk) / (n_h − 1), treating the stratum weights as known.

    ``labels`` (..., n) holds level codes 0..n_levels − 1, ``weights`` and ``strata`` (..., n);
    vectorised over leading axes. Returns (estimates, variances) of shape (..., n_levels). A
    stratum with fewer than 2 records gives a NaN variance (an unusable interval)."""
    from ..data import group_sums

    lead = labels.shape[:-1]
    cell = strata.astype(np.int64) * n_levels + labels.astype(np.int64)
    wk = group_sums(weights, cell, n_strata * n_levels).reshape(*lead, n_strata, n_levels)
    nh = group_sums(np.ones(strata.shape), strata.astype(np.int64), n_strata)
    wh = wk.sum(axis=-1)
    total = wh.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = wh / total  # Ŵ_h
        p_hk = wk / wh[..., None]
        p_hk = np.where(wh[..., None] > 0, p_hk, 0.0)
        v_hk = p_hk * (1 - p_hk) / (nh[..., None] - 1)
        v_hk = np.where(nh[..., None] >= 2, v_hk, np.where(nh[..., None] > 0, np.nan, 0.0))
    estimate = (share[..., None] * p_hk).sum(axis=-2)
    variance = (share[..., None] ** 2 * v_hk).sum(axis=-2)
    return estimate, variance
