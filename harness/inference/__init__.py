"""Estimators with within-set variances and combining rules for m releases."""

from .combine import COMBINING_RULES, Pooled, combine, t_quantile
from .design import dummy_design
from .estimators import (
    cell_proportions,
    sample_mean,
    sample_mean_and_variance,
    sample_variance,
)
from .firth import FirthControl, FirthResult, firth_baseline_category, firth_logistic
from .glm_logit import GlmControl, GlmFit, collapse_rows, glm_logit
from .multivariate import D2Result, PooledCovariance, d2_test, pool_covariance
from .results import PooledResults, pool

__all__ = [
    "COMBINING_RULES",
    "D2Result",
    "PooledCovariance",
    "d2_test",
    "pool_covariance",
    "FirthControl",
    "GlmControl",
    "GlmFit",
    "collapse_rows",
    "dummy_design",
    "glm_logit",
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
