"""Estimators with within-set variances and combining rules for m releases."""

from .combine import COMBINING_RULES, Pooled, combine, t_quantile
from .estimators import cell_proportions, sample_mean, sample_variance
from .results import PooledResults, pool

__all__ = [
    "COMBINING_RULES",
    "Pooled",
    "PooledResults",
    "cell_proportions",
    "combine",
    "pool",
    "sample_mean",
    "sample_variance",
    "t_quantile",
]
