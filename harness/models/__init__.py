"""Bayesian building blocks used by model-based synthesizers."""

from .conjugate import (
    BOUND_RULES,
    BetaBinomial,
    DirichletMultinomial,
    Statistic,
    dirichlet_draw,
    multinomial_counts,
)
from .normal import NormalInverseGamma, inverse_gamma_draw

__all__ = [
    "BOUND_RULES",
    "BetaBinomial",
    "DirichletMultinomial",
    "NormalInverseGamma",
    "Statistic",
    "dirichlet_draw",
    "inverse_gamma_draw",
    "multinomial_counts",
]
