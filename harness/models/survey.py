"""Two joint models of a survey outcome and its sampling weight, fitted as α-weighted pseudo
posteriors with exact conjugate draws (``harness.models.weighted_regression``), for the
risk-weighted synthesizers of ``harness.synthesizers.pseudo_posterior``.

Both read a design matrix X (n, K) of public categorical variables, ỹ = log y and the weights w.

* :class:`SampleModel` (a model of the observed *sample*): (ỹ_i, log w_i) ~ MVN₂(x_i B, Σ)
  (Hu, Savitsky & Williams Eq. 2). Record log likelihood: the bivariate normal density of the
  transformed pair, no Jacobian. Synthesis: (ỹ*, w̃*) ~ MVN₂(x B, Σ); synthesized weights
  exp(w̃*); **smoothed** weights exp(E[log w | ỹ*]) = exp(x β_w + Σ₁₂/Σ₁₁ (ỹ* − x β_y)),
  computed from the *synthetic* outcome.
* :class:`PopulationModel` (a model of the *population*, Eqs. 4–6): ỹ | x ~ N(xβ, σ_y²) and
  π | ỹ, x ~ LN(κ_y ỹ + xκ_x, σ_π²) in the population; the sample likelihood (Eq. 6) is

      p_s(ỹ_i, π_i | x_i) = N(log π_i | κ_y ỹ_i + x_iκ_x, σ_π²) N(ỹ_i | x_iβ, σ_y²)
                            / exp(x_iκ_x + σ_π²/2 + κ_y x_iβ + κ_y² σ_y²/2).

  With t = log π, c the solution of Xc = 1, γ = β + κ_y σ_y² c and δ = κ_x + σ_π² c, the
  identity log Eq. 6 = log N(t | κ_y ỹ + xδ, σ_π²) + log N(ỹ | xγ, σ_y²) − t makes the sample
  model a recursive Gaussian: an α-weighted fit is two α-weighted regressions (ỹ on X, then t on
  [ỹ, X]), mapped back to (β, κ_x). Synthesis draws ỹ* from the *population* model; smoothed
  weights ∝ exp(−κ_y ỹ*) (``smooth="kappa_y_only"``, the paper's) or exp(−κ_y ỹ* − xκ_x)
  (``"full_mean"``). π is 1/w (``pi_scale="actual"``) or w̄/w (``"mean1"``, weights normalised to
  mean 1); the record log likelihood is the literal log Eq. 6 (``loglik_measure="eq6_literal"``)
  or the density of (ỹ, log π) (``"log_pi"``: adds t_i).

Smoothed weights are rescaled so that they sum to a given total (the confidential weighted total
Σ w, treated as public). Log likelihoods are S × n matrices in closed form.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from .weighted_regression import linreg_draws, mvreg_draws, ones_coefficients

LOG_2PI = float(np.log(2.0 * np.pi))
PI_SCALES = ("mean1", "actual")
LOGLIK_MEASURES = ("eq6_literal", "log_pi")
SMOOTHING = ("kappa_y_only", "full_mean")


def _normal_logpdf(x, mean, var):
    return -0.5 * (LOG_2PI + np.log(var) + (x - mean) ** 2 / var)


def rescale_log_weights(log_w: np.ndarray, total: float) -> np.ndarray:
    """exp(log_w) rescaled to sum to ``total`` along the last axis (in log space)."""
    return np.exp(log_w - logsumexp(log_w, axis=-1, keepdims=True) + np.log(total))


@dataclass(frozen=True)
class SampleDraws:
    coef: np.ndarray  # (S, K, 2): columns β_y, β_w
    cov: np.ndarray  # (S, 2, 2)

    def take(self, index) -> SampleDraws:
        return SampleDraws(self.coef[index], self.cov[index])


@dataclass(frozen=True)
class SampleModel:
    """Bivariate normal model of (log y, log w) given X (see the module docstring)."""

    prior_df: float = 4.0
    prior_scale: float = 1e-3

    @staticmethod
    def response(log_y: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.stack([log_y, np.log(w)], axis=-1)

    def fit(self, x, response, alpha, draws: int, rng) -> SampleDraws:
        coef, cov = mvreg_draws(x, response, alpha, draws, rng, self.prior_df, self.prior_scale)
        return SampleDraws(coef, cov)

    def loglik(self, d: SampleDraws, x, response) -> np.ndarray:
        """log N₂(z_i | x_i B_s, Σ_s), shape (S, n)."""
        r = response[None] - np.matmul(x, d.coef)
        s11, s12, s22 = d.cov[:, 0, 0, None], d.cov[:, 0, 1, None], d.cov[:, 1, 1, None]
        det = s11 * s22 - s12 * s12
        r1, r2 = r[..., 0], r[..., 1]
        quad = (s22 * r1 * r1 - 2.0 * s12 * r1 * r2 + s11 * r2 * r2) / det
        return -LOG_2PI - 0.5 * np.log(det) - 0.5 * quad

    def synthesize(self, d: SampleDraws, x, total: float, rng):
        """One synthetic set per draw of ``d`` (leading axis S'): (y* (S', n), synthesized
        weights (S', n), smoothed weights (S', n) rescaled to ``total``)."""
        mean = np.matmul(x, d.coef)
        chol = np.linalg.cholesky(d.cov)
        z = mean + np.einsum("snd,sed->sne", rng.standard_normal(mean.shape), chol)
        slope = d.cov[:, 0, 1] / d.cov[:, 0, 0]
        smooth = mean[..., 1] + slope[:, None] * (z[..., 0] - mean[..., 0])
        return np.exp(z[..., 0]), np.exp(z[..., 1]), rescale_log_weights(smooth, total)


@dataclass(frozen=True)
class PopulationDraws:
    beta: np.ndarray  # (S, K)
    sigma_y2: np.ndarray  # (S,)
    kappa_y: np.ndarray  # (S,)
    kappa_x: np.ndarray  # (S, K)
    sigma_pi2: np.ndarray  # (S,)

    def take(self, index) -> PopulationDraws:
        return PopulationDraws(*(getattr(self, f)[index] for f in
                                 ("beta", "sigma_y2", "kappa_y", "kappa_x", "sigma_pi2")))


@dataclass(frozen=True)
class PopulationModel:
    """Population model with the exact sample likelihood Eq. 6 (see the module docstring)."""

    pi_scale: str = "mean1"
    loglik_measure: str = "eq6_literal"
    smooth: str = "kappa_y_only"

    def __post_init__(self):
        for name, value, allowed in (("pi_scale", self.pi_scale, PI_SCALES),
                                     ("loglik_measure", self.loglik_measure, LOGLIK_MEASURES),
                                     ("smooth", self.smooth, SMOOTHING)):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")

    def log_pi(self, w: np.ndarray) -> np.ndarray:
        """t = log π: −log w (actual inclusion probabilities) or log(w̄/w) (mean-1 weights)."""
        t = -np.log(w)
        return t + np.log(np.mean(w, axis=-1, keepdims=True)) if self.pi_scale == "mean1" else t

    def response(self, log_y: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.stack([log_y, self.log_pi(w)], axis=-1)

    def fit(self, x, response, alpha, draws: int, rng) -> PopulationDraws:
        """Two α-weighted regressions (ỹ on X; t on [ỹ, X]) mapped back to (β, κ_x)."""
        log_y, t = response[:, 0], response[:, 1]
        gamma, sigma_y2 = linreg_draws(x, log_y, alpha, draws, rng)
        coef, sigma_pi2 = linreg_draws(np.column_stack([log_y, x]), t, alpha, draws, rng)
        kappa_y, delta = coef[:, 0], coef[:, 1:]
        c = ones_coefficients(x)
        beta = gamma - (kappa_y * sigma_y2)[:, None] * c
        kappa_x = delta - sigma_pi2[:, None] * c
        return PopulationDraws(beta, sigma_y2, kappa_y, kappa_x, sigma_pi2)

    def loglik(self, d: PopulationDraws, x, response) -> np.ndarray:
        """The record log likelihood (S, n): literal log Eq. 6 (plus t_i for ``log_pi``)."""
        log_y, t = response[:, 0], response[:, 1]
        xb = d.beta @ x.T
        xk = d.kappa_x @ x.T
        ky, sy2, sp2 = d.kappa_y[:, None], d.sigma_y2[:, None], d.sigma_pi2[:, None]
        out = (_normal_logpdf(t, ky * log_y + xk, sp2) + _normal_logpdf(log_y, xb, sy2)
               - (xk + 0.5 * sp2 + ky * xb + 0.5 * ky * ky * sy2))
        return out + t if self.loglik_measure == "log_pi" else out

    def synthesize(self, d: PopulationDraws, x, total: float, rng, mean_weight: float = 1.0):
        """One synthetic set per draw of ``d``: (y* (S', n) from the population model,
        synthesized weights w̄/π* (mean-1 scale) or 1/π*, smoothed weights rescaled to
        ``total``). ``mean_weight`` is w̄ of the confidential weights (mean-1 scale only)."""
        xb = d.beta @ x.T
        xk = d.kappa_x @ x.T
        log_y = xb + np.sqrt(d.sigma_y2)[:, None] * rng.standard_normal(xb.shape)
        ky = d.kappa_y[:, None]
        log_pi = ky * log_y + xk + np.sqrt(d.sigma_pi2)[:, None] * rng.standard_normal(xb.shape)
        scale = mean_weight if self.pi_scale == "mean1" else 1.0
        smooth = -ky * log_y - (xk if self.smooth == "full_mean" else 0.0)
        return np.exp(log_y), scale * np.exp(-log_pi), rescale_log_weights(smooth, total)
