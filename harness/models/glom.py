"""The general location model (GLOM) as a model object for MODIPS and non-DP multiple synthesis
(Bowen & Liu 2020 §4.3.1; spec 000 §4.3, §6 items 10, 12, 13).

Data: records with a categorical cell k ∈ {1..K} (the full cross-tabulation of the categorical
variables) and p numeric variables z; within cell k, z ~ N_p(μ_k, Σ) with Σ common to all cells.

Model: π ~ Dirichlet(α) on the K cells, f(μ_1..μ_K, Σ) ∝ |Σ⁻¹|. Posterior (paper §4.3.1):
π | w ~ D(α + n), Σ | z, w ~ IW(n − K, SSP), μ_k | Σ ~ N_p(z̄_k, Σ/n_k), where SSP is the pooled
within-cell sum-of-squares matrix Σ_k Σ_i (z_ik − z̄_k)(z_ik − z̄_k)ᵀ. The paper writes the
scale as S = SSP/n; the scale must be the sum-of-squares matrix (spec §6 item 10; with S the
draws of Σ would shrink by 1/n). The paper's df n − K is kept.

Sufficient statistics (MODIPS, paper §4.3.1), each receiving an equal share of a set's budget
(1/6 each for p = 2):
* ``counts`` (K cell counts, parallel over cells): l1 sensitivity ``count_sensitivity`` (the
  paper's 1; bounds [0, n]);
* ``mean_j`` for each coordinate j (K cell means, parallel over cells): per-cell sensitivity
  (c1,kj − c0,kj)/n_k = 8σ_j/n_k, data-dependent (spec §6 item 12); bounds the cell's box;
* ``S_jl`` for j ≤ l (one per entry of the pooled covariance): sensitivity
  (c1,j − c0,j)(c1,l − c0,l)(n − 1)/(n(n − K)) (the paper's (c1 − c0)²(n − 1)/(n(n − K)) for
  every entry; for the covariance the product of the two widths). This is the sensitivity of the
  pooled covariance with divisor n − K, so we sanitize S = SSP/(n − K) and use (n − K)·S* as the
  inverse-Wishart scale ("sanitize SSP/(n − K)" reading of spec §4.3 [REVIEW]).

Post-processing (spec §6 item 13): counts BIT to [0, n] (i.e. floor at 0); cell means BIT to the
cell box; variances BIT to [``min_variance``, w_j²/4 · n/(n − K)] (the largest pooled variance
of data in boxes of width w_j); the covariance BIT to ±w_1 w_2/4 · n/(n − K), then clipped to
|S*_12| ≤ ``max_abs_correlation``·√(S*_11 S*_22) so S* is positive definite.

``sigma_source="marginal"`` (spec 000 §4.4 [REVIEW]) replaces the pooled within-cell SSP by
the marginal SSP of z about the grand mean (same sensitivity, bounds and df): the reading of
Bowen & Liu's §4.3.2 MODIPS-Wrong that reproduces their Supp. Table 8.

Sensitivities and μ* draws use the true n_k (the paper) or, with ``cell_counts="sanitized"``,
the sanitized n_k* floored at 1 (spec §6 item 12). Neither is strictly ε-DP: the global
sensitivity of a cell mean over all data sets is the full box width (n_k can be 1). Cells with
no original record have no z̄_k: the box centre is used with n_k := 1 (spec §6 item 13).

Predictive draw: w̃ ~ Multinomial(n, π*) gives the synthetic counts ñ_k, then each record of
cell k gets z̃ ~ N_p(μ_k*, Σ*) clamped to the cell's box, as the original data were.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data import RecordBatch, group_sums
from .conjugate import Statistic, dirichlet_draw, multinomial_counts
from .wishart import inverse_wishart_draw

CELL_COUNT_SOURCES = ("true", "sanitized")
#: what the common Σ's scale is built from (spec 000 §4.4 ``glom_sigma_source``): the pooled
#: within-cell SSP (as the paper writes it) or the marginal SSP of z about the grand mean (what
#: reproduces Bowen & Liu's Supp. Table 8 for their §4.3.2 MODIPS-Wrong)
SIGMA_SOURCES = ("within", "marginal")


def cells_from_counts(counts: np.ndarray) -> np.ndarray:
    """Cell labels (..., n) of records laid out cell by cell from counts (..., K) that sum to the
    same n in every row (one ``np.repeat`` over the flattened rows)."""
    counts = np.asarray(counts, dtype=np.int64)
    lead, k = counts.shape[:-1], counts.shape[-1]
    n = int(counts.reshape(-1, k)[0].sum()) if counts.size else 0
    rows = int(np.prod(lead, dtype=np.int64))
    labels = np.repeat(np.tile(np.arange(k, dtype=np.int64), rows), counts.reshape(-1))
    return labels.reshape(*lead, n)


def within_cell_moments(values: np.ndarray, cells: np.ndarray, n_cells: int):
    """Cell counts (..., K), cell sums (..., K, p) and the pooled within-cell sum-of-squares
    matrix (..., p, p) = Σ_i z_i z_iᵀ − Σ_k s_k s_kᵀ/n_k (empty cells contribute nothing)."""
    counts = group_sums(np.ones(cells.shape), cells, n_cells)
    sums = group_sums(values, cells, n_cells)
    cross = np.einsum("...ni,...nj->...ij", values, values)
    safe = np.where(counts > 0, counts, 1.0)[..., None]
    ssp = cross - np.einsum("...ki,...kj->...ij", sums / safe, sums)
    return counts, sums, 0.5 * (ssp + np.swapaxes(ssp, -1, -2))


def gather_cells(per_cell: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Per-record rows (..., n, p) of a per-cell array (..., K, p) (or broadcastable (K, p))."""
    per_cell = np.broadcast_to(per_cell, (*cells.shape[:-1], *np.shape(per_cell)[-2:]))
    return np.take_along_axis(per_cell, cells[..., None], axis=-2)


@dataclass(frozen=True)
class GeneralLocationModel:
    """GLOM over K cells and p numeric variables with public cell boxes ``lower``/``upper``
    (shape (K, p)). See the module docstring for the model, statistics and options."""

    lower: np.ndarray
    upper: np.ndarray
    alpha: float = 0.5
    count_sensitivity: float = 1.0
    cell_counts: str = "true"
    min_variance: float = 1e-6
    max_abs_correlation: float = 0.99
    sigma_source: str = "within"
    statistic_names: tuple[str, ...] = field(init=False)

    def __post_init__(self):
        lower = np.asarray(self.lower, dtype=float)
        upper = np.asarray(self.upper, dtype=float)
        if lower.ndim != 2 or lower.shape != upper.shape or not np.all(upper > lower):
            raise ValueError("lower and upper must be (K, p) boxes with upper > lower")
        if self.cell_counts not in CELL_COUNT_SOURCES:
            raise ValueError(f"cell_counts must be one of {CELL_COUNT_SOURCES}")
        if self.sigma_source not in SIGMA_SOURCES:
            raise ValueError(f"sigma_source must be one of {SIGMA_SOURCES}")
        if not self.alpha > 0:
            raise ValueError(f"the Dirichlet parameter must be > 0, got {self.alpha!r}")
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        p = lower.shape[1]
        names = ["counts", *(f"mean_{j + 1}" for j in range(p))]
        names += [f"S{j + 1}{l + 1}" for j, l in self._pairs()]
        object.__setattr__(self, "statistic_names", tuple(names))

    @property
    def n_cells(self) -> int:
        return self.lower.shape[0]

    @property
    def n_vars(self) -> int:
        return self.lower.shape[1]

    def _pairs(self):
        p = self.lower.shape[1]
        # variances first, then covariances (S11, S22, S12 for p = 2, the paper's order)
        return [(j, j) for j in range(p)] + [(j, l) for j in range(p) for l in range(j + 1, p)]

    @property
    def widths(self) -> np.ndarray:
        """Box width per coordinate (the paper's c1 − c0 = 8σ_j, the same for every cell)."""
        return (self.upper - self.lower).max(axis=0)

    def df(self, n: int) -> int:
        return int(n) - self.n_cells

    # --- MODIPS / MS interface -------------------------------------------------------------
    def summaries(self, data: RecordBatch) -> dict[str, np.ndarray]:
        """Exact counts (R, K), cell means (R, K, p) (box centre for empty cells) and the pooled
        covariance S = SSP/(n − K) (R, p, p)."""
        if data.cells is None or data.n_cells != self.n_cells:
            raise ValueError(f"GLOM needs records with {self.n_cells} cells")
        counts, sums, ssp = within_cell_moments(data.values, data.cells, self.n_cells)
        if self.sigma_source == "marginal":  # deviations from the grand mean (spec §4.4)
            total = sums.sum(axis=-2)
            ssp = ssp + np.einsum("...ki,...kj->...ij", sums / np.where(
                counts > 0, counts, 1)[..., None], sums) - np.einsum(
                "...i,...j->...ij", total, total) / data.n
        centre = 0.5 * (self.lower + self.upper)
        means = np.where(counts[..., None] > 0, sums / np.where(counts > 0, counts, 1)[..., None],
                         centre)
        return {"counts": counts, "means": means, "cov": ssp / self.df(data.n)}

    def _mean_sensitivity(self, n_k: np.ndarray) -> np.ndarray:
        """(c1,kj − c0,kj)/n_k per cell and coordinate, n_k floored at 1 (paper §4.3.1)."""
        return (self.upper - self.lower) / np.maximum(n_k, 1.0)[..., None]

    def sufficient_statistics(self, data: RecordBatch) -> list[Statistic]:
        s = self.summaries(data)
        n, p = data.n, self.n_vars
        share = 1.0 / len(self.statistic_names)
        stats = [Statistic("counts", s["counts"], self.count_sensitivity, 0.0, float(n), share)]
        if self.cell_counts == "true":
            sens = self._mean_sensitivity(s["counts"])
        for j in range(p):
            if self.cell_counts == "true":
                sens_j = sens[..., j]
            else:  # computed from the counts sanitized before (Modips sanitizes in order)
                sens_j = _SanitizedCountSensitivity(self, j)
            stats.append(Statistic(f"mean_{j + 1}", s["means"][..., j], sens_j,
                                   self.lower[:, j], self.upper[:, j], share))
        w = self.widths
        ratio = (n - 1) / (n * self.df(n))
        top = n / (4.0 * self.df(n))
        for j, l in self._pairs():
            value = s["cov"][..., j, l]
            bound = w[j] * w[l] * top
            lo = self.min_variance if j == l else -bound
            stats.append(Statistic(f"S{j + 1}{l + 1}", value, w[j] * w[l] * ratio, lo, bound,
                                   share))
        return stats

    def _n_for_mu(self, stats: dict, data: RecordBatch) -> np.ndarray:
        if self.cell_counts == "sanitized":
            return np.maximum(np.asarray(stats["counts"], dtype=float), 1.0)
        return np.maximum(data.cell_counts().astype(float), 1.0)

    def posterior_draw(self, stats: dict, data: RecordBatch, rng) -> dict[str, np.ndarray]:
        """θ = (π, μ, Σ) ~ f(θ | s) given exact (MS) or sanitized (MODIPS) statistics."""
        p = self.n_vars
        pi = dirichlet_draw(self.alpha + np.maximum(np.asarray(stats["counts"], float), 0.0), rng)
        cov = self._covariance(stats)
        sigma = inverse_wishart_draw(self.df(data.n), self.df(data.n) * cov, rng)
        means = np.stack([np.asarray(stats[f"mean_{j + 1}"], float) for j in range(p)], axis=-1)
        n_k = self._n_for_mu(stats, data)
        chol = np.linalg.cholesky(sigma)  # (R, p, p)
        e = rng.standard_normal(means.shape)  # (R, K, p)
        mu = means + np.einsum("...ij,...kj->...ki", chol, e) / np.sqrt(n_k)[..., None]
        return {"pi": pi, "mu": mu, "sigma": sigma}

    def _covariance(self, stats: dict) -> np.ndarray:
        """S* (R, p, p) from the (sanitized) entries, made positive definite by clipping each
        covariance to ±max_abs_correlation·√(S_jj S_ll) (spec §6 item 13)."""
        p = self.n_vars
        var = np.stack([np.maximum(np.asarray(stats[f"S{j + 1}{j + 1}"], float),
                                   self.min_variance) for j in range(p)], axis=-1)
        cov = np.zeros((*var.shape[:-1], p, p))
        for j in range(p):
            cov[..., j, j] = var[..., j]
        for j, l in self._pairs():
            if j == l:
                continue
            lim = self.max_abs_correlation * np.sqrt(var[..., j] * var[..., l])
            c = np.clip(np.asarray(stats[f"S{j + 1}{l + 1}"], float), -lim, lim)
            cov[..., j, l] = cov[..., l, j] = c
        if p > 2:  # pairwise clipping does not guarantee PD beyond two coordinates
            w, v = np.linalg.eigh(cov)
            floor = self.min_variance
            cov = np.einsum("...ij,...j,...kj->...ik", v, np.maximum(w, floor), v)
        return cov

    def predictive_draw(self, theta: dict, data: RecordBatch, rng) -> RecordBatch:
        """w̃ ~ Multinomial(n, π*), then z̃ ~ N_p(μ*_k, Σ*) per record, clamped to its box."""
        counts = multinomial_counts(data.n, theta["pi"], rng)
        cells = cells_from_counts(counts)
        mu = gather_cells(theta["mu"], cells)
        chol = np.linalg.cholesky(theta["sigma"])
        e = rng.standard_normal(mu.shape)
        z = mu + np.einsum("...ij,...nj->...ni", chol, e)
        z = np.clip(z, gather_cells(self.lower, cells), gather_cells(self.upper, cells))
        return RecordBatch(z, cells, self.n_cells, data.columns)


@dataclass(frozen=True)
class _SanitizedCountSensitivity:
    """Sensitivity of the cell means of coordinate j computed from the *sanitized* counts
    n_k* (floored at 1), which MODIPS sanitizes first (spec §6 item 12). Called by MODIPS with
    the statistics sanitized so far."""

    model: GeneralLocationModel
    j: int

    def __call__(self, sanitized: dict) -> np.ndarray:
        return self.model._mean_sensitivity(np.asarray(sanitized["counts"], float))[..., self.j]
