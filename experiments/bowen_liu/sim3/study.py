"""Bowen & Liu (2020) Simulation 3 (§4.3.1; spec 000 §4.3): the general location model (GLOM).

Data: w = (w1, w2, w3) with 2, 3, 4 levels (K = 24 cells); cell counts n ~ Multinomial(n, π);
within cell k, z ~ N_2(μ_k, Σ) with σ1² = σ2² = 1, ρ = 0.5, each coordinate clamped to the
cell's bounds μ_kj ± 4σ_j. π, μ_k1, μ_k2 are Supp. Table 3 (``conf/study/bowen_liu_sim3.yaml``).

Methods: MODIPS and MS with the Bayesian GLOM (``harness.models.GeneralLocationModel``),
NP-DIPS (``cell_histogram``: Laplace sanitizer on the 24 cells + 2-D perturbed histograms within
cells), Ori. Estimands: the 24 cell means of z1 and of z2, σ1², σ2², ρ and the six marginal
probabilities Π = (Pr(w1=1), Pr(w2=1), Pr(w2=2), Pr(w3=1), Pr(w3=2), Pr(w3=3)); per set the
paper's estimators (spec §4.3, §6 item 16) pooled with Eqs. 9–11.

Cell order (spec §6 item 14): convention B (w1 fastest, R's order; the default) or A (w3
fastest); it decides which cells form each marginal of w and so the true Π.
"""

from __future__ import annotations

import numpy as np

from harness.data import RecordBatch
from harness.engine.study import Study
from harness.errors import ConfigError, allowed
from harness.inference import COMBINING_RULES
from harness.inference.estimators import (
    correlation_from_covariance,
    glom_cell_means,
    marginal_proportions,
    pooled_within_cell_covariance,
)
from harness.models import GeneralLocationModel
from harness.models.glom import cells_from_counts, gather_cells
from harness.synthesizers import make_synthesizer

from ...common import as_number

CELL_ORDERS = ("A", "B")
MODEL_BASED = ("ms", "modips")
MARGINALS = ("Pi_w1_1", "Pi_w2_1", "Pi_w2_2", "Pi_w3_1", "Pi_w3_2", "Pi_w3_3")


def cell_levels(levels=(2, 3, 4), order: str = "B") -> np.ndarray:
    """(K, 3) levels (0-based) of (w1, w2, w3) in cell k = 0..K−1. Convention B: w1 varies
    fastest (R's expand.grid / table order); A: w3 fastest (spec §6 item 14)."""
    if order not in CELL_ORDERS:
        raise ValueError(f"cell order must be one of {CELL_ORDERS}, got {order!r}")
    sizes = list(levels) if order == "B" else list(levels)[::-1]
    grid = np.indices(sizes[::-1]).reshape(len(sizes), -1).T[:, ::-1]  # first coordinate fastest
    return grid if order == "B" else grid[:, ::-1]


def marginal_indicator(levels=(2, 3, 4), order: str = "B") -> np.ndarray:
    """(K, 6) indicator of the marginals of Π: w1 = 1; w2 = 1, 2; w3 = 1, 2, 3 (the last level
    of each variable is left out, as the six probabilities of the paper)."""
    lv = cell_levels(levels, order)
    cols = [lv[:, v] == a for v, size in enumerate(levels) for a in range(size - 1)]
    return np.stack(cols, axis=1).astype(float)


def mu_names(j: int, k: int) -> list[str]:
    return [f"mu{j}_{c + 1:02d}" for c in range(k)]


class Simulation3(Study):
    grid_rules = {"n": {"integer": True, "minimum": 2}}
    extra_keys = ("cells", "levels", "cell_order", "sigma", "rho", "bound_sd", "glom")

    # --- configuration ----------------------------------------------------------------------
    def validate(self) -> None:
        c = self.config
        cells = c["cells"]
        k = int(np.prod(c["levels"]))
        for key in ("mu1", "mu2", "pi"):
            if len(cells[key]) != k:
                raise ConfigError(f"study.cells.{key}: needs {k} values, got {len(cells[key])}")
        pi = np.asarray(cells["pi"], dtype=float)
        if np.any(pi <= 0) or not np.isclose(pi.sum(), 1.0, atol=1e-6):
            raise ConfigError(f"study.cells.pi: must be > 0 and sum to 1, got sum {pi.sum():g}")
        if c.get("cell_order", "B") not in CELL_ORDERS:
            raise allowed("study.cell_order", c.get("cell_order"), CELL_ORDERS)
        if not -1 < float(c["rho"]) < 1:
            raise ConfigError(f"study.rho: must lie in (-1, 1), got {c['rho']}")
        if not all(float(s) > 0 for s in c["sigma"]):
            raise ConfigError("study.sigma: must be > 0")
        if c.get("combining_rule", "partial") not in COMBINING_RULES:
            raise allowed("study.combining_rule", c.get("combining_rule"), COMBINING_RULES)
        g = c.get("glom", {})
        if g.get("cell_counts", "true") not in ("true", "sanitized", True):
            raise allowed("study.glom.cell_counts", g.get("cell_counts"), ["true", "sanitized"])
        if not as_number("study.glom.alpha", g.get("alpha", 0.5)) > 0:
            raise ConfigError("study.glom.alpha: must be > 0")

    @property
    def n_cells(self) -> int:
        return int(np.prod(self.config["levels"]))

    def mu(self) -> np.ndarray:
        """(K, 2) true cell means (Supp. Table 3)."""
        c = self.config["cells"]
        return np.stack([np.asarray(c["mu1"], float), np.asarray(c["mu2"], float)], axis=1)

    def pi(self) -> np.ndarray:
        p = np.asarray(self.config["cells"]["pi"], dtype=float)
        return p / p.sum()  # Table 3 sums to 1.000 at three decimals

    def sigma(self) -> np.ndarray:
        s = np.asarray(self.config["sigma"], dtype=float)
        rho = float(self.config["rho"])
        return np.array([[s[0] ** 2, rho * s[0] * s[1]], [rho * s[0] * s[1], s[1] ** 2]])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Cell-specific public boxes μ_kj ± bound_sd·σ_j, (K, 2) each."""
        half = float(self.config["bound_sd"]) * np.asarray(self.config["sigma"], dtype=float)
        return self.mu() - half, self.mu() + half

    def indicator(self) -> np.ndarray:
        return marginal_indicator(tuple(self.config["levels"]), self.config.get("cell_order", "B"))

    # --- the study proper ---------------------------------------------------------------------
    def generate(self, scenario, rng, n_replicates):
        """R data sets: counts ~ Multinomial(n, π), z ~ N_2(μ_k, Σ) clamped to the cell box."""
        n = int(scenario["n"])
        counts = rng.multinomial(n, self.pi(), size=n_replicates)
        cells = cells_from_counts(counts)
        chol = np.linalg.cholesky(self.sigma())
        e = rng.standard_normal((n_replicates, n, 2))
        z = gather_cells(self.mu(), cells) + e @ chol.T
        lower, upper = self.bounds()
        z = np.clip(z, gather_cells(lower, cells), gather_cells(upper, cells))
        return RecordBatch(z, cells, self.n_cells, ("z1", "z2"))

    def estimands(self, scenario):
        k = self.n_cells
        mu = self.mu()
        s = np.asarray(self.config["sigma"], dtype=float)
        truth = dict(zip(mu_names(1, k), mu[:, 0], strict=True))
        truth.update(zip(mu_names(2, k), mu[:, 1], strict=True))
        truth.update({"sigma1_sq": s[0] ** 2, "sigma2_sq": s[1] ** 2,
                      "rho": float(self.config["rho"])})
        truth.update(zip(MARGINALS, self.pi() @ self.indicator(), strict=True))
        return {key: float(v) for key, v in truth.items()}

    def analyse(self, sets: RecordBatch, scenario):
        """Per set (spec §4.3, §6 item 16): cell means with S²_j/ñ_k (cells with ñ_k < 2 dropped
        for the set), pooled within-cell variances (divisor n − K) with
        (S²_j)²(2/(n−1) + κ_j/n), r with (1 − r²)/(n − 2), marginal P̂ with P̂(1 − P̂)/n."""
        n = sets.n
        cov, var_s2, counts, means = pooled_within_cell_covariance(
            sets.values, sets.cells, sets.n_cells
        )
        s2 = np.diagonal(cov, axis1=-2, axis2=-1)
        mu, mu_var = glom_cell_means(means, counts, s2)
        r, r_var = correlation_from_covariance(cov, n)
        p, p_var = marginal_proportions(counts, self.indicator(), n)
        est = np.concatenate([mu[..., 0], mu[..., 1], s2, r[..., None], p], axis=-1)
        var = np.concatenate([mu_var[..., 0], mu_var[..., 1], var_s2, r_var[..., None], p_var],
                             axis=-1)
        return est, var

    def model(self) -> GeneralLocationModel:
        g = self.config.get("glom", {})
        lower, upper = self.bounds()
        source = g.get("cell_counts", "true")
        return GeneralLocationModel(
            lower, upper, alpha=as_number("study.glom.alpha", g.get("alpha", 0.5)),
            count_sensitivity=float(g.get("count_sensitivity", 1.0)),
            cell_counts="true" if source is True else str(source),
        )

    def tabular_schema(self, scenario):
        """z1, z2 on the union of the cells' public boxes, for the benchmark's data interface."""
        from harness.schema import Numeric, Schema

        lower, upper = self.bounds()
        return Schema(tuple(Numeric(f"z{j + 1}", float(lower[:, j].min()),
                                    float(upper[:, j].max())) for j in range(2)))

    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        if name in MODEL_BASED:
            params["model"] = self.model()
        if name == "cell_histogram":
            lower, upper = self.bounds()
            params.update(lower=lower, upper=upper)
            if params.get("scott_n") is True:
                params["scott_n"] = "true"
            if isinstance(params.get("budget_weights"), dict):
                params["budget_weights"] = dict(params["budget_weights"])
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


STUDY_CLASS = Simulation3
