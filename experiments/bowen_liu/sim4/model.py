"""The SLOMAG model (sequential logistic regression with a marginal Gaussian) of Bowen & Liu
(2020) §4.3.2, Eqs. (12)–(14) (spec 000 §2.8, §4.4, §6 items 20–23), as a model object for
non-DP multiple synthesis (``MultipleSynthesis``) and the pieces of MODIPS-Correct
(``experiments.bowen_liu.sim4.synthesizer``).

Records: z = (z1, z2) numeric, w = (w1, w2, w3) with 2, 2, 3 levels, held as a
:class:`RecordBatch` with ``values`` (z1, z2) and ``cells`` the 12 w-cells,
cell = w1 + 2·w2 + 4·w3 (w1 fastest, R's order; codes 0-based, w3 = 0 is the paper's level 1,
the reference category).

Model: z ~ N_2(μ, Σ) clamped to the public box; W1 | z ~ Bern(expit((1, z1, z2)β1));
W2 | z, W1 ~ Bern(expit((1, z1, z2, W1)β2)); W3 | z, W1, W2 multinomial logit on
(1, z1, z2, W1, W2) with coefficients β3 (level 2) and β4 (level 3), level 1 the reference.

Posterior (§4.3.2): Σ | z ~ IW(n, n·S), S = n⁻¹ Σ (z_i − z̄)(z_i − z̄)ᵀ (the scale is the
sum-of-squares matrix n·S, spec §6 item 10; the paper's df n is kept); μ | Σ, z ~ N(z̄, Σ/n);
the β's from their posteriors (flat priors for MS; N(0, 1/λ) on predictors divided by their
public maximum norm for MODIPS-Correct, spec §6 item 21) with
``harness.models.logistic.posterior_draws`` (any converged sampler, spec §6 item 20).
Synthesis: z̃ ~ N(μ, Σ) clamped to the box (spec §6 item 23), then w̃1, w̃2, w̃3 sequentially.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.data import RecordBatch
from harness.models.conjugate import Statistic
from harness.models.logistic import posterior_draws, predictive_draw
from harness.models.wishart import inverse_wishart_draw

W_LEVELS = (2, 2, 3)
N_CELLS = 12
#: the regressions of the sequence: (name, number of predictors incl. intercept, categories)
REGRESSIONS = (("beta1", 3, 2), ("beta2", 4, 2), ("beta34", 5, 3))


def encode_cells(w1, w2, w3) -> np.ndarray:
    """w-cell label 0..11 of 0-based codes (w1 fastest)."""
    return np.asarray(w1, np.int64) + 2 * np.asarray(w2, np.int64) + 4 * np.asarray(w3, np.int64)


def decode_cells(cells) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """0-based (w1, w2, w3) of w-cell labels."""
    c = np.asarray(cells, np.int64)
    return c % 2, (c // 2) % 2, c // 4


def designs(z: np.ndarray, w1, w2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Design matrices (…, n, p) of the three regressions: (1, z1, z2), (1, z1, z2, w1),
    (1, z1, z2, w1, w2); W1, W2 coded 0/1 (spec §4.4)."""
    one = np.ones(z.shape[:-1] + (1,))
    x1 = np.concatenate([one, z], axis=-1)
    x2 = np.concatenate([x1, np.asarray(w1, float)[..., None]], axis=-1)
    x3 = np.concatenate([x2, np.asarray(w2, float)[..., None]], axis=-1)
    return x1, x2, x3


@dataclass(frozen=True)
class SlomagModel:
    """SLOMAG on records in the public box [``lower``, ``upper``]² (the paper's [−4, 4]).

    ``prior_precision`` 0 gives flat priors on the β's on the raw predictors (MS, the paper);
    λ > 0 gives N(0, 1/λ) priors on predictors divided by their public maximum norm
    (MODIPS-Correct, spec §6 item 21). ``n_steps`` is the length of each independence
    Metropolis–Hastings chain of ``posterior_draws``.
    """

    lower: float = -4.0
    upper: float = 4.0
    prior_precision: float = 0.0
    n_steps: int = 25
    min_variance: float = 1e-6
    max_abs_correlation: float = 0.99

    # --- the Gaussian part ------------------------------------------------------------------
    @property
    def width(self) -> float:
        return float(self.upper - self.lower)

    @property
    def statistic_names(self) -> tuple[str, ...]:
        return ("mean_1", "mean_2", "S11", "S22", "S12")

    def sufficient_statistics(self, data: RecordBatch, share: float = 1.0 / 8) -> list[Statistic]:
        """z̄1, z̄2 (sensitivity (c1 − c0)/n = 8/n) and S11, S22, S12 of S = SSP/n (sensitivity
        (c1 − c0)²/n = 64/n) with public bounds (§4.3.2; spec §4.4, §6 item 13); each gets
        ``share`` of a set's budget (1/8 in MODIPS-Correct)."""
        z = data.values
        n = data.n
        mean = z.mean(axis=-2)
        d = z - mean[..., None, :]
        s = np.einsum("...ni,...nj->...ij", d, d) / n
        w = self.width
        top = w * w / 4.0  # largest variance (divisor n) of data in an interval of width w
        return [
            Statistic("mean_1", mean[..., 0], w / n, self.lower, self.upper, share),
            Statistic("mean_2", mean[..., 1], w / n, self.lower, self.upper, share),
            Statistic("S11", s[..., 0, 0], w * w / n, self.min_variance, top, share),
            Statistic("S22", s[..., 1, 1], w * w / n, self.min_variance, top, share),
            Statistic("S12", s[..., 0, 1], w * w / n, -top, top, share),
        ]

    def covariance(self, stats: dict) -> np.ndarray:
        """S* (…, 2, 2) from (sanitized) entries, variances floored, S12 clipped to
        ±max_abs_correlation·√(S11 S22) so S* is positive definite (spec §6 item 13)."""
        v1 = np.maximum(np.asarray(stats["S11"], float), self.min_variance)
        v2 = np.maximum(np.asarray(stats["S22"], float), self.min_variance)
        lim = self.max_abs_correlation * np.sqrt(v1 * v2)
        c = np.clip(np.asarray(stats["S12"], float), -lim, lim)
        return np.stack([np.stack([v1, c], -1), np.stack([c, v2], -1)], -2)

    def draw_normal(self, stats: dict, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
        """Σ ~ IW(n, n·S), μ ~ N(z̄, Σ/n) (§4.3.2; spec §6 item 10)."""
        sigma = inverse_wishart_draw(n, n * self.covariance(stats), rng)
        mean = np.stack([np.asarray(stats["mean_1"], float), np.asarray(stats["mean_2"], float)],
                        axis=-1)
        chol = np.linalg.cholesky(sigma)
        e = rng.standard_normal(mean.shape)
        mu = mean + np.einsum("...ij,...j->...i", chol, e) / np.sqrt(n)
        return mu, sigma

    def draw_z(self, mu, sigma, n: int, rng) -> np.ndarray:
        """z̃_i ~ N(μ, Σ), clamped to the public box (spec §6 item 23): (…, n, 2)."""
        chol = np.linalg.cholesky(sigma)
        e = rng.standard_normal((*mu.shape[:-1], n, 2))
        z = mu[..., None, :] + np.einsum("...ij,...nj->...ni", chol, e)
        return np.clip(z, self.lower, self.upper)

    # --- the logistic part ------------------------------------------------------------------
    def norms(self) -> tuple[float, float, float]:
        """Public maximum norms of the predictor vectors of the three regressions:
        √(1 + 2c²), √(2 + 2c²), √(3 + 2c²), c = max(|lower|, |upper|) (spec §6 item 21)."""
        c2 = max(abs(self.lower), abs(self.upper)) ** 2
        return (np.sqrt(1 + 2 * c2), np.sqrt(2 + 2 * c2), np.sqrt(3 + 2 * c2))

    def scaled_designs(self, z, w1, w2):
        """The three designs, divided by their public maximum norms when the prior is the
        MODIPS-Correct one (λ > 0), raw otherwise."""
        xs = designs(z, w1, w2)
        if self.prior_precision > 0:
            xs = tuple(x / c for x, c in zip(xs, self.norms(), strict=True))
        return xs

    def beta_draws(self, data: RecordBatch, n_draws: int, rng) -> dict:
        """``n_draws`` posterior draws per replicate of β1 (…, n_draws, 3), β2 (…, 4) and
        (β3, β4) (…, n_draws, 2, 5), plus ``ok`` (…) (False where a posterior mode was not
        found: flat prior under separation) and the acceptance rates."""
        w1, w2, w3 = decode_cells(data.cells)
        xs = self.scaled_designs(data.values, w1, w2)
        out, ok, acc = {}, None, {}
        for (name, _, k), x, y in zip(REGRESSIONS, xs, (w1, w2, w3), strict=True):
            post = posterior_draws(x, y, n_draws, rng, n_categories=k,
                                   prior_precision=self.prior_precision, n_steps=self.n_steps)
            out[name] = post.draws
            acc[name] = post.acceptance
            ok = post.ok if ok is None else ok & post.ok
        out["ok"] = ok
        out["acceptance"] = acc
        return out

    def draw_w(self, z, betas: dict, rng) -> np.ndarray:
        """w̃1, w̃2, w̃3 sequentially from β's (…, p) / (…, 2, 5) and synthetic z̃ (…, n, 2)
        (normalised designs for λ > 0): the w-cell labels (…, n)."""
        c = self.norms() if self.prior_precision > 0 else (1.0, 1.0, 1.0)
        one = np.ones(z.shape[:-1] + (1,))
        x1 = np.concatenate([one, z], axis=-1)
        w1 = predictive_draw(x1 / c[0], betas["beta1"], rng)
        x2 = np.concatenate([x1, w1[..., None].astype(float)], axis=-1)
        w2 = predictive_draw(x2 / c[1], betas["beta2"], rng)
        x3 = np.concatenate([x2, w2[..., None].astype(float)], axis=-1)
        w3 = predictive_draw(x3 / c[2], betas["beta34"], rng, n_categories=3)
        return encode_cells(w1, w2, w3)

    # --- MS interface (MultipleSynthesis) ---------------------------------------------------
    def posterior_draw(self, stats: dict, data: RecordBatch, rng) -> dict:
        """θ = (μ, Σ, β1, β2, (β3, β4)) ~ f(θ | data) (one draw per replicate)."""
        mu, sigma = self.draw_normal(stats, data.n, rng)
        b = self.beta_draws(data, 1, rng)
        return {"mu": mu, "sigma": sigma, **{k: b[k][..., 0, :] if k != "beta34" else
                                             b[k][..., 0, :, :] for k in ("beta1", "beta2",
                                                                          "beta34")}}

    def predictive_draw(self, theta: dict, data: RecordBatch, rng) -> RecordBatch:
        z = self.draw_z(theta["mu"], theta["sigma"], data.n, rng)
        cells = self.draw_w(z, theta, rng)
        return RecordBatch(z, cells, N_CELLS, data.columns)
