"""Estimators with within-set variances and combining rules for m releases."""

from .combine import COMBINING_RULES, Pooled, combine, t_quantile
from .estimators import (
    cell_proportions,
    sample_mean,
    sample_mean_and_variance,
    sample_variance,
)
from .firth import FirthControl, FirthResult, firth_baseline_category, firth_logistic
from .multivariate import D2Result, PooledCovariance, d2_test, pool_covariance
from .results import PooledResults, pool

__all__ = [
    "COMBINING_RULES",
    "D2Result",
    "PooledCovariance",
    "d2_test",
    "pool_covariance",
    "FirthControl",
    "FirthResult",
    "Pooled",
    "PooledResults",
    "cell_proportions",
    "combine",
    "firth_baseline_category",
    "firth_logistic",
    "pool",
    "sample_mean",
    "sample_mean_and_variance",
    "sample_variance",
    "t_quantile",
]
