"""The univariate normal model with the non-informative prior f(μ, σ²) ∝ σ⁻² on data with public
bounds [c₀, c₁], written as the model object MODIPS and non-DP multiple synthesis use
(Bowen & Liu 2020 §4.2; Liu 2016b; spec 000 §4.2):

* sufficient statistics s = (x̄, S²) with global sensitivities (c₁ − c₀)/n and (c₁ − c₀)²/n and
  public bounds [c₀, c₁] and [0, (c₁ − c₀)²/4 · n/(n − 1)] (Macleod & Henderson 1984), each
  receiving half of a set's budget (§4.2: "the ε/5 budget per synthesis was further split in
  half");
* posterior σ² | s ~ Inv-Gamma((n − 1)/2, (n − 1)S²/2) and μ | σ², s ~ N(x̄, σ²/n);
* predictive x̃_i ~ N(μ, σ²), i = 1..n, with out-of-bounds values set to the bounds (BIT, §4.2).

Everything is vectorised over the leading (replicate) axes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import RecordBatch
from .conjugate import Statistic


def inverse_gamma_draw(shape, scale, rng: np.random.Generator) -> np.ndarray:
    """Draws from Inv-Gamma(shape, scale) (density ∝ x^(−shape−1) e^(−scale/x)), elementwise for
    broadcast arrays of parameters: scale / Gamma(shape, 1) (spec 000 §6 item 10; the
    parameterisation of scipy.stats.invgamma(a=shape, scale=scale)). A scale of 0 gives 0."""
    shape = np.asarray(shape, dtype=float)
    scale = np.asarray(scale, dtype=float)
    if np.any(shape <= 0) or np.any(scale < 0):
        raise ValueError("Inv-Gamma needs shape > 0 and scale >= 0")
    a, b = np.broadcast_arrays(shape, scale)
    return b / rng.standard_gamma(a)


@dataclass(frozen=True)
class NormalInverseGamma:
    """N(μ, σ²) likelihood with prior f(μ, σ²) ∝ σ⁻² for one numeric variable with public bounds
    ``lower`` = c₀ < ``upper`` = c₁ (scalars or arrays broadcasting against the replicate axis).

    ``variance_floor`` (relative to (c₁ − c₀)²) replaces a sanitized S²* clamped to 0 in the
    posterior, so that Inv-Gamma((n − 1)/2, (n − 1)S²*/2) is proper (spec §6 item 13).
    ``clamp_synthetic``: set out-of-bounds synthetic values to the bounds (BIT), as the paper
    does for MODIPS and we do for MS (spec §4.2).
    """

    lower: float | np.ndarray
    upper: float | np.ndarray
    variance_floor: float = 1e-12
    clamp_synthetic: bool = True
    statistic_names = ("mean", "variance")

    def __post_init__(self):
        if not np.all(np.asarray(self.upper, dtype=float) > np.asarray(self.lower, dtype=float)):
            raise ValueError("NormalInverseGamma needs upper > lower")
        if not self.variance_floor > 0:
            raise ValueError(f"variance_floor must be > 0, got {self.variance_floor!r}")

    def _values(self, data: RecordBatch) -> np.ndarray:
        if data.n_columns != 1:
            raise ValueError(f"NormalInverseGamma models one variable, got {data.n_columns}")
        if data.n < 2:
            raise ValueError("NormalInverseGamma needs n >= 2 records")
        return data.values[..., 0]

    def width(self) -> np.ndarray:
        return np.asarray(self.upper, dtype=float) - np.asarray(self.lower, dtype=float)

    def variance_upper_bound(self, n: int) -> np.ndarray:
        """Largest sample variance of n values in [c₀, c₁]: (c₁ − c₀)²/4 · n/(n − 1)."""
        return self.width() ** 2 / 4.0 * n / (n - 1)

    def sufficient_statistics(self, data: RecordBatch) -> list[Statistic]:
        """x̄ and S² (divisor n − 1), shape (R,), with sensitivities, bounds and budget shares
        (Bowen & Liu §4.2)."""
        x = self._values(data)
        n = data.n
        width = self.width()
        mean = x.mean(axis=-1)
        var = x.var(axis=-1, ddof=1)
        return [
            Statistic("mean", mean, float(np.max(width)) / n, self.lower, self.upper, 0.5),
            Statistic("variance", var, float(np.max(width)) ** 2 / n, 0.0,
                      self.variance_upper_bound(n), 0.5),
        ]

    def posterior_draw(self, stats: dict[str, np.ndarray], data: RecordBatch, rng):
        """(μ, σ²) per replicate, shape (R, 2): σ² ~ Inv-Gamma((n−1)/2, (n−1)S²/2), then
        μ ~ N(x̄, σ²/n), from possibly sanitized statistics."""
        n = data.n
        floor = self.variance_floor * self.width() ** 2
        s2 = np.maximum(np.asarray(stats["variance"], dtype=float), floor)
        sigma2 = inverse_gamma_draw((n - 1) / 2.0, (n - 1) * s2 / 2.0, rng)
        mean = np.asarray(stats["mean"], dtype=float)
        mu = mean + np.sqrt(sigma2 / n) * rng.standard_normal(np.shape(sigma2))
        return np.stack([mu, sigma2], axis=-1)

    def predictive_draw(self, theta: np.ndarray, data: RecordBatch, rng) -> RecordBatch:
        """n records x̃ ~ N(μ, σ²) per replicate, clamped to [c₀, c₁]: a RecordBatch (R, n, 1)."""
        mu, sigma2 = theta[..., 0], theta[..., 1]
        x = rng.standard_normal((*mu.shape, data.n))
        x *= np.sqrt(sigma2)[..., None]
        x += mu[..., None]
        if self.clamp_synthetic:
            lo = np.asarray(self.lower, dtype=float)
            hi = np.asarray(self.upper, dtype=float)
            np.clip(x, lo[..., None] if lo.ndim else lo, hi[..., None] if hi.ndim else hi, out=x)
        return RecordBatch(x[..., None], columns=data.columns)
