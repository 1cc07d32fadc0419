"""A statsmodels-like face for pooled inference over m synthetic data sets."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .combine import combine, t_quantile
from .multivariate import pool_covariance


class PooledResults:
    """Pooled results of fitting one analysis to each of m synthetic sets.

    Mirrors the parts of a statsmodels results object a user reaches for: ``params``, ``bse``,
    ``tvalues``, ``df``, ``conf_int(alpha)``, ``cov_params()`` and ``summary()``. Build it with
    :func:`pool`; ``cov_params()`` needs the within-set covariance matrices.
    """

    def __init__(self, names, estimates, variances, rule: str, covariances=None):
        q = np.asarray(estimates, dtype=float)[None]
        u = np.asarray(variances, dtype=float)[None]
        self._pooled = combine(q, u, rule=rule)
        self._covariance = (None if covariances is None
                            else pool_covariance(q[0], covariances, rule=rule))
        self.rule = rule
        self.m = q.shape[1]
        idx = pd.Index(list(names), name="term")
        p = self._pooled
        self.params = pd.Series(p.estimate[0], index=idx, name="coef")
        self.bse = pd.Series(np.sqrt(p.variance[0]), index=idx, name="std err")
        self.between = pd.Series(p.between[0], index=idx, name="B")
        self.within = pd.Series(p.within[0], index=idx, name="W")
        self.df = pd.Series(p.df[0], index=idx, name="df")

    def cov_params(self) -> pd.DataFrame:
        """The pooled total covariance T of the terms (Ū + B/m for the partial rule)."""
        if self._covariance is None:
            raise ValueError("cov_params() needs the within-set covariance matrices: "
                             "pool(estimates, covariances) with covariances of shape (m, k, k)")
        idx = self.params.index
        return pd.DataFrame(self._covariance.total, index=idx, columns=idx)

    @property
    def tvalues(self) -> pd.Series:
        return (self.params / self.bse).rename("t")

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        q = t_quantile(self.df.to_numpy(), 1 - alpha / 2)
        half = q * self.bse.to_numpy()
        lo, hi = self.params - half, self.params + half
        return pd.DataFrame({0: lo, 1: hi}, index=self.params.index)

    def summary(self, alpha: float = 0.05) -> pd.DataFrame:
        ci = self.conf_int(alpha)
        return pd.DataFrame(
            {
                "coef": self.params,
                "std err": self.bse,
                "df": self.df,
                "B": self.between,
                "W": self.within,
                f"[{alpha / 2:.3f}": ci[0],
                f"{1 - alpha / 2:.3f}]": ci[1],
            }
        )


def pool(
    estimates: Sequence[Sequence[float]] | np.ndarray,
    variances: Sequence[Sequence[float]] | np.ndarray,
    names: Sequence[str] | None = None,
    rule: str = "partial",
) -> PooledResults:
    """Pool m fits: ``estimates[j][k]`` and ``variances[j][k]`` are the estimate of term k in set
    j and its within-set variance (e.g. ``fit.params`` and ``fit.bse**2`` of m statsmodels fits),
    or its within-set covariance matrix ``variances[j]`` of shape (k, k) (``fit.cov_params()``),
    which also gives the pooled ``cov_params()``.
    """
    q = np.asarray(estimates, dtype=float)
    if q.ndim == 1:
        q = q[:, None]
    v = np.asarray(variances, dtype=float)
    covariances = None
    if v.ndim == 3:
        covariances = v
        v = np.diagonal(v, axis1=-2, axis2=-1)
    u = v.reshape(q.shape)
    if names is None:
        names = getattr(estimates[0], "index", None) if len(q) else None
        names = list(names) if names is not None else [f"x{k}" for k in range(q.shape[1])]
    return PooledResults(names, q, u, rule, covariances)
