"""Bayesian building blocks used by model-based synthesizers."""

from .conjugate import (
    BOUND_RULES,
    BetaBinomial,
    DirichletMultinomial,
    Statistic,
    dirichlet_draw,
    multinomial_counts,
)
from .diagnostics import effective_sample_size, split_rhat
from .glom import GeneralLocationModel
from .logistic import LogisticPosterior, posterior_draws, predictive_draw, random_walk_metropolis
from .normal import NormalInverseGamma, inverse_gamma_draw
from .wishart import inverse_wishart_draw

__all__ = [
    "BOUND_RULES",
    "BetaBinomial",
    "DirichletMultinomial",
    "GeneralLocationModel",
    "LogisticPosterior",
    "NormalInverseGamma",
    "Statistic",
    "dirichlet_draw",
    "effective_sample_size",
    "inverse_gamma_draw",
    "inverse_wishart_draw",
    "multinomial_counts",
    "posterior_draws",
    "predictive_draw",
    "random_walk_metropolis",
    "split_rhat",
]
