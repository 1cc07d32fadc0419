"""Point estimators with their within-set variance estimates, vectorised over leading axes."""

from __future__ import annotations

import numpy as np


def cell_proportions(counts: np.ndarray, n) -> tuple[np.ndarray, np.ndarray]:
    """Sample proportions p̂_k = n_k/n of a K-cell table (last axis) and their binomial variance
    estimates p̂_k(1 − p̂_k)/n (Bowen & Liu §4.1: v_j = p̂_j(1 − p̂_j) n⁻¹)."""
    n = np.asarray(n, dtype=float)
    p = np.asarray(counts, dtype=float) / n[..., None] if n.ndim else np.asarray(counts) / n
    return p, p * (1.0 - p) / (n[..., None] if n.ndim else n)
