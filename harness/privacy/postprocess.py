"""Post-processing of sanitized values (Bowen & Liu 2020 §3.1.1 and §4.1; spec 000 §1.3).

Post-processing of a DP output costs no privacy. These are pure functions of their inputs and
vectorised over any leading axes.
"""

from __future__ import annotations

import numpy as np


def clamp(values: np.ndarray, lower, upper) -> np.ndarray:
    """Boundary-inflated truncation (BIT): values below ``lower`` are set to ``lower`` and values
    above ``upper`` to ``upper`` (Bowen & Liu §4.1; Liu 2016c)."""
    return np.clip(values, lower, upper)


def at_bound(values: np.ndarray, lower, upper) -> np.ndarray:
    """Elementwise: the value sits on a bound. For a continuous sanitized value this happens
    (with probability one) only when boundary-inflated truncation moved it there."""
    return (values <= lower) | (values >= upper)


def reviewer_bounds(prior_a: float, prior_b: float, n) -> tuple[float, np.ndarray]:
    """The reviewer's bounds [−α, β + n] for a sanitized binomial count, which keep both Beta
    posterior parameters α + n₁* and β + n − n₁* non-negative (Bowen & Liu §4.1)."""
    return -float(prior_a), float(prior_b) + np.asarray(n, dtype=float)


def floor_at_zero(values: np.ndarray) -> np.ndarray:
    """Replace negative sanitized counts with 0 (Barak et al. 2007)."""
    return np.maximum(values, 0.0)


def largest_remainder_round(weights: np.ndarray, total) -> np.ndarray:
    """Integer counts along the last axis that sum exactly to ``total`` and are proportional to
    the non-negative ``weights`` (Hamilton / largest-remainder apportionment).

    Each row gets ``floor(total · w_k / Σw)`` and the leftover units go to the cells with the
    largest fractional parts, ties to the lower index. Rows whose weights are all zero are
    apportioned uniformly. ``total`` may be a scalar or broadcast against the leading axes.
    """
    w = np.asarray(weights, dtype=float)
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("largest_remainder_round needs finite non-negative weights")
    k = w.shape[-1]
    total = np.broadcast_to(np.asarray(total, dtype=np.int64), w.shape[:-1])
    s = w.sum(axis=-1, keepdims=True)
    share = np.where(s > 0, w / np.where(s > 0, s, 1.0), 1.0 / k)
    exact = share * total[..., None]
    base = np.floor(exact).astype(np.int64)
    leftover = total - base.sum(axis=-1)
    frac = exact - base
    # rank of each cell by descending fractional part (stable: lower index wins ties)
    order = np.argsort(-frac, axis=-1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(k)[(None,) * (w.ndim - 1)], axis=-1)
    return base + (rank < leftover[..., None])
