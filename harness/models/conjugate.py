"""Conjugate Bayesian models for categorical data, written as the model objects that MODIPS
and non-DP multiple synthesis use (Liu 2016b; Bowen & Liu 2020 §3.2.2 and Fig. 1):

* ``sufficient_statistics(data)`` → the Bayesian sufficient statistics, each with its global
  sensitivity, its public bounds and its share of a set's budget;
* ``posterior_draw(stats, data, rng)`` → θ ~ f(θ | s);
* ``predictive_draw(theta, data, rng)`` → a synthetic data set ~ f(x | θ).

Draws are vectorised over any leading axes. Beta and Dirichlet draws use normalised Gamma
variates, which handle per-replicate parameters exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import CountBatch
from ..privacy.postprocess import reviewer_bounds

BOUND_RULES = ("natural", "reviewer")


@dataclass(frozen=True)
class Statistic:
    """A sufficient statistic to sanitize: value (..., d), l1 sensitivity, public bounds, and the
    fraction of the per-set budget it receives (fractions of a model sum to 1). The sensitivity
    may be an array (one per element of a parallel release) or a callable of the statistics
    sanitized before this one (see ``harness.synthesizers.modips``)."""

    name: str
    value: np.ndarray
    sensitivity: object
    lower: np.ndarray | float
    upper: np.ndarray | float
    budget_share: float = 1.0


def dirichlet_draw(alpha: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw from Dirichlet(α) along the last axis for arbitrary per-row α > 0."""
    g = rng.standard_gamma(alpha)
    s = g.sum(axis=-1, keepdims=True)
    # Tiny α can underflow every gamma variate to 0: fall back to the cell with the largest α,
    # the limit of the Dirichlet as its total mass vanishes.
    zero = s[..., 0] == 0
    if zero.any():
        g[zero] = 0.0
        np.put_along_axis(g, np.argmax(alpha, axis=-1)[..., None], 1.0, axis=-1)
        s = g.sum(axis=-1, keepdims=True)
    return g / s


def multinomial_counts(n: int, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Counts of n iid categorical records with cell probabilities p (last axis); the binomial
    draw is used when K = 2."""
    if p.shape[-1] == 2:
        ones = rng.binomial(n, np.clip(p[..., 1], 0.0, 1.0))
        return np.stack([n - ones, ones], axis=-1)
    return rng.multinomial(n, p)


@dataclass(frozen=True)
class BetaBinomial:
    """Binomial likelihood with a Beta(a, b) prior on π = Pr(x = 1) (Bowen & Liu §4.1).

    Sufficient statistic n₁ = #{x_i = 1}, global sensitivity 1, natural bounds [0, n]; the
    reviewer's alternative bounds are [−a, b + n]. Posterior Beta(a + n₁, b + n − n₁).
    """

    a: float
    b: float
    bounds: str = "natural"
    statistic_names = ("n1",)

    def __post_init__(self):
        if not (self.a > 0 and self.b > 0):
            raise ValueError(f"Beta prior parameters must be > 0, got a={self.a}, b={self.b}")
        if self.bounds not in BOUND_RULES:
            raise ValueError(f"bounds must be one of {BOUND_RULES}, got {self.bounds!r}")

    def sufficient_statistics(self, data: CountBatch) -> list[Statistic]:
        if data.n_cells != 2:
            raise ValueError(f"BetaBinomial needs binary data, got {data.n_cells} cells")
        lo, hi = (0.0, float(data.n))
        if self.bounds == "reviewer":
            lo, hi = reviewer_bounds(self.a, self.b, data.n)
        return [Statistic("n1", data.counts[..., 1].astype(float), 1.0, lo, float(hi))]

    def posterior_draw(self, stats: dict[str, np.ndarray], data: CountBatch, rng):
        n1 = stats["n1"]
        alpha = np.stack([self.b + data.n - n1, self.a + n1], axis=-1)
        return dirichlet_draw(np.maximum(alpha, 0.0) + 0.0, rng)

    def predictive_draw(self, theta: np.ndarray, data: CountBatch, rng) -> np.ndarray:
        return multinomial_counts(data.n, theta, rng)


@dataclass(frozen=True)
class DirichletMultinomial:
    """Multinomial likelihood over K cells with a Dirichlet(α) prior (saturated model).

    Sufficient statistic: the K cell counts, l1 sensitivity ``sensitivity`` (1 for add/remove
    neighbours, the seed papers' convention; 2 for substitution), bounds [0, n] per cell.
    Posterior Dirichlet(α + n) (Bowen & Liu §3.2.1, §5 case study).
    """

    alpha: tuple[float, ...]
    sensitivity: float = 1.0
    statistic_names = ("counts",)

    def sufficient_statistics(self, data: CountBatch) -> list[Statistic]:
        if data.n_cells != len(self.alpha):
            raise ValueError(f"prior has {len(self.alpha)} cells, data have {data.n_cells}")
        return [Statistic("counts", data.counts.astype(float), self.sensitivity, 0.0, data.n)]

    def posterior_draw(self, stats, data: CountBatch, rng):
        alpha = np.asarray(self.alpha) + np.maximum(stats["counts"], 0.0)
        return dirichlet_draw(alpha, rng)

    def predictive_draw(self, theta, data: CountBatch, rng):
        return multinomial_counts(data.n, theta, rng)
