"""Importance of attributes for STEPS (spec 003 §2.2): the AIC of univariate log-linear models
(Lemma 1) and the two-cluster split utility of the grouped variant (§2.2(c)).

AIC_j = −2 log 𝓛_j + 2K_j for the saturated univariate (multinomial) model of attribute j, with
the FULL multinomial log-likelihood (including log n! − Σ log n_k!) and K_j fixed at the
attribute's a-priori number of levels. Only then is |ΔAIC_j| ≤ 2 between add/remove neighbours
(the sensitivity δ_u = 2 of Eqn 5); the entropy kernel alone is unbounded (it grows like 2 ln n),
and K over the non-empty levels reaches 4 (tests/harness/privacy/test_steps_privacy.py).
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import gammaln, xlogy

from ..errors import ConfigError


def aic_univariate(counts: np.ndarray, n_levels: int | None = None) -> np.ndarray:
    """AIC of the saturated univariate log-linear model of each count vector (..., K) (spec §2.2):
    −2[log n! − Σ_k log n_k! + Σ_k n_k log(n_k/n)] + 2K, with K = ``n_levels`` (the a-priori
    number of levels; default: the length of the last axis, empty levels included)."""
    c = np.asarray(counts, dtype=float)
    n = c.sum(axis=-1)
    loglik = (gammaln(n + 1) - gammaln(c + 1).sum(axis=-1)
              + xlogy(c, c).sum(axis=-1) - xlogy(n, n))
    k = c.shape[-1] if n_levels is None else n_levels
    return -2.0 * loglik + 2.0 * k


def two_cluster_splits(p: int) -> np.ndarray:
    """Boolean (2^(p−1) − 1, p): every split of p attributes into two non-empty clusters, once
    (True marks cluster 1; the last attribute is always in cluster 2)."""
    if p < 2:
        raise ConfigError(f"ranking: a two-cluster split needs at least 2 attributes, got {p}")
    rows = list(itertools.product((False, True), repeat=p - 1))[1:]
    return np.array([(*row, False) for row in rows], dtype=bool)


def split_utility(aic: np.ndarray, splits: np.ndarray) -> np.ndarray:
    """u = |mean AIC of cluster 1 − mean AIC of cluster 2| for every split (spec §2.2(c); the
    paper's §2.2.3 after Eqn (5): "the l_1 difference between the two clusters on the average
    importance measures across the variables in each cluster"): ``aic`` (..., p), ``splits``
    (S, p) → (..., S)."""
    s = splits.astype(float)
    mean1 = aic @ s.T / s.sum(axis=1)
    mean2 = aic @ (1 - s).T / (1 - s).sum(axis=1)
    return np.abs(mean1 - mean2)


def marginal_counts(codes: np.ndarray, cards: tuple[int, ...]) -> list[np.ndarray]:
    """Per attribute, its level counts (R, K_j) of integer codes (R, n, p)."""
    r = codes.shape[0]
    out = []
    for j, k in enumerate(cards):
        idx = codes[..., j] + k * np.arange(r)[:, None]
        out.append(np.bincount(idx.ravel(), minlength=r * k).reshape(r, k).astype(float))
    return out
