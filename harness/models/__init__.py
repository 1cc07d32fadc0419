"""Bayesian building blocks used by model-based synthesizers."""

from .conjugate import (
    BOUND_RULES,
    BetaBinomial,
    DirichletMultinomial,
    Statistic,
    dirichlet_draw,
    multinomial_counts,
)

__all__ = [
    "BOUND_RULES",
    "BetaBinomial",
    "DirichletMultinomial",
    "Statistic",
    "dirichlet_draw",
    "multinomial_counts",
]
