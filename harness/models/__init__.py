"""Bayesian building blocks used by model-based synthesizers."""

from .conjugate import (
    BOUND_RULES,
    BetaBinomial,
    DirichletMultinomial,
    Statistic,
    dirichlet_draw,
    multinomial_counts,
)
from .glom import GeneralLocationModel
from .normal import NormalInverseGamma, inverse_gamma_draw
from .wishart import inverse_wishart_draw

__all__ = [
    "BOUND_RULES",
    "BetaBinomial",
    "DirichletMultinomial",
    "GeneralLocationModel",
    "NormalInverseGamma",
    "Statistic",
    "dirichlet_draw",
    "inverse_gamma_draw",
    "inverse_wishart_draw",
    "multinomial_counts",
]
