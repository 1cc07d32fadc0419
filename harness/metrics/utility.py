"""Utility metrics of synthetic categorical data against the original (R-U maps; e.g. Park &
Ghosh §4.3; spec 001 §4, E2–E4), and the combining rules of fully synthetic data sets.

Data are integer codes: one column is an array (..., n) of codes 0..K−1; any leading axes
(replicates, sets) are kept, so every metric is vectorised over them. The original and the
synthetic data may have different numbers of records.

* :func:`marginal_distance`: Σ_v (p̂_s(v) − p̂_o(v))² over all K levels of a column, levels
  absent from either data set included.
* :func:`conditional_distance`: Σ_{x_j} Σ_{x_i} (p̂_s(x_i | x_j) − p̂_o(x_i | x_j))², with
  p̂(x_i | x_j) = count(x_i, x_j)/count(x_j); a conditioning level absent from a data set gives
  that data set the all-zero conditional vector (it is penalised), or is left out of the sum
  with ``skip_missing=True`` (levels absent from either data set).
* :func:`regression_distance`: Σ_k |β_s,k − β_o,k|/|β_o,k|, terms with |β_o,k| < 1e−8 skipped
  with a warning; the intercept optionally left out.
* :func:`mi_combine`: Raghunathan, Reiter & Rubin (2003) for K fully synthetic sets:
  q̄ = Σ q_k/K, b = Σ (q_k − q̄)²/(K−1), v̄ = Σ v_k/K, T_s = (1 + 1/K)·b − v̄ (may be negative;
  no fallback, unlike ``harness.inference.combine(rule="full")``).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

#: |β_o| below this makes a regression-distance term undefined (skipped with a warning)
BETA_FLOOR = 1e-8


def frequencies(codes: np.ndarray, n_levels: int) -> np.ndarray:
    """Counts (..., n_levels) of the codes (..., n) along the last axis: one ``bincount`` over
    offset codes for all leading axes together."""
    codes = np.asarray(codes, dtype=np.int64)
    lead, n = codes.shape[:-1], codes.shape[-1]
    sets = int(np.prod(lead, dtype=np.int64))
    flat = (codes.reshape(sets, n) + (np.arange(sets, dtype=np.int64) * n_levels)[:, None])
    counts = np.bincount(flat.ravel(), minlength=sets * n_levels)
    return counts.reshape(*lead, n_levels)


def shares(codes: np.ndarray, n_levels: int) -> np.ndarray:
    """Relative frequencies p̂(v) (..., n_levels) of the codes (..., n)."""
    return frequencies(codes, n_levels) / np.shape(codes)[-1]


def marginal_distance(original: np.ndarray, synthetic: np.ndarray, n_levels: int) -> np.ndarray:
    """Σ_v (p̂_s(v) − p̂_o(v))² over the ``n_levels`` levels of one column; ``original`` (..., n)
    and ``synthetic`` (..., n_s) codes with broadcastable leading axes. Returns (...)."""
    return marginal_distance_to(shares(original, n_levels), synthetic, n_levels)


def marginal_distance_to(original_shares: np.ndarray, synthetic: np.ndarray,
                         n_levels: int) -> np.ndarray:
    """:func:`marginal_distance` from the original's :func:`shares`, computed once for the
    releases of the same original data."""
    return ((shares(synthetic, n_levels) - original_shares) ** 2).sum(axis=-1)


def conditionals(target: np.ndarray, given: np.ndarray, n_target: int,
                 n_given: int) -> tuple[np.ndarray, np.ndarray]:
    """(p̂(x_i | x_j) (..., n_given, n_target), count(x_j) (..., n_given)); rows of absent
    conditioning levels are all zero."""
    joint = frequencies(np.asarray(given, np.int64) * n_target + np.asarray(target, np.int64),
                        n_given * n_target).reshape(*np.shape(target)[:-1], n_given, n_target)
    margin = joint.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cond = np.where(margin[..., None] > 0, joint / margin[..., None], 0.0)
    return cond, margin


def conditional_distance(original_target: np.ndarray, original_given: np.ndarray,
                         synthetic_target: np.ndarray, synthetic_given: np.ndarray,
                         n_target: int, n_given: int, *, skip_missing: bool = False) -> np.ndarray:
    """Σ_{x_j} Σ_{x_i} (p̂_s(x_i | x_j) − p̂_o(x_i | x_j))² of target column i given column j
    (codes (..., n) and (..., n_s)); see the module docstring for absent conditioning levels."""
    return conditional_distance_to(
        conditionals(original_target, original_given, n_target, n_given), synthetic_target,
        synthetic_given, n_target, n_given, skip_missing=skip_missing)


def conditional_distance_to(original_conditionals: tuple[np.ndarray, np.ndarray],
                            synthetic_target: np.ndarray, synthetic_given: np.ndarray,
                            n_target: int, n_given: int, *,
                            skip_missing: bool = False) -> np.ndarray:
    """:func:`conditional_distance` from the original's :func:`conditionals`, computed once for
    the releases of the same original data."""
    co, mo = original_conditionals
    cs, ms = conditionals(synthetic_target, synthetic_given, n_target, n_given)
    terms = ((cs - co) ** 2).sum(axis=-1)
    if skip_missing:
        terms = np.where((mo > 0) & (ms > 0), terms, 0.0)
    return terms.sum(axis=-1)


def regression_distance(beta_synthetic: np.ndarray, beta_original: np.ndarray, *,
                        include_intercept: bool = True, intercept_index: int = 0) -> np.ndarray:
    """Σ_k |β_s,k − β_o,k|/|β_o,k| over the coefficients (last axis; leading axes of
    ``beta_synthetic`` kept). Terms with |β_o,k| < 1e−8 are skipped with a warning;
    ``include_intercept=False`` leaves out coefficient ``intercept_index``."""
    bs = np.asarray(beta_synthetic, dtype=float)
    bo = np.asarray(beta_original, dtype=float)
    keep = np.ones(bo.shape[-1], dtype=bool)
    if not include_intercept:
        keep[intercept_index] = False
    small = np.abs(bo) < BETA_FLOOR
    if (small & keep).any():
        warnings.warn(f"regression_distance: {int((small & keep).sum())} original "
                      f"coefficient(s) with |beta| < {BETA_FLOOR:g} skipped", RuntimeWarning,
                      stacklevel=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.abs(bs - bo) / np.abs(bo)
    terms = np.where(keep & ~small, terms, 0.0)
    return terms.sum(axis=-1)


class MICombined(NamedTuple):
    qbar: np.ndarray
    b: np.ndarray
    vbar: np.ndarray
    t_s: np.ndarray


def mi_combine(q: np.ndarray, v: np.ndarray, axis: int = 0) -> MICombined:
    """Raghunathan et al. (2003) for K fully synthetic sets along ``axis`` of the estimates
    ``q`` and their variances ``v``: (q̄, b, v̄, T_s = (1 + 1/K)·b − v̄). K ≥ 2."""
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    k = q.shape[axis]
    if k < 2:
        raise ValueError(f"mi_combine needs K >= 2 synthetic sets, got {k}")
    qbar = q.mean(axis=axis)
    b = q.var(axis=axis, ddof=1)
    vbar = v.mean(axis=axis)
    return MICombined(qbar, b, vbar, (1.0 + 1.0 / k) * b - vbar)
