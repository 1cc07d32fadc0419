"""NP-DIPS for mixed data: the Laplace sanitizer on K cells × a perturbed d-D histogram of the
numeric variables within every cell (Bowen & Liu 2020 §4.3.1, "NP-DIPS"; spec 000 §2.1, §2.2,
§4.3, §6 items 11, 17).

Per released set (budget ε/m, split between the two queries by ``budget_weights``, the paper's
1:1 by default; the two queries overlap in individuals, so they compose sequentially):

1. cell counts: n_k* = n_k + Lap(0, Δ_c/ε_c) for the K cells (one vector query over disjoint
   cells), BIT to [0, n]; the synthetic counts ñ_k are the largest-remainder apportionment of
   n·n_k*/Σ n_k* (spec §2.1, §6 item 17);
2. bin counts: within each cell a d-D histogram with equal-width bins over the cell's public box,
   K_j bins per coordinate by Scott's rule h_j = 3.5·S_j·n_k^(−1/(2+d)) (2-D: n_k^(−1/4));
   every bin of every cell gets Lap(0, Δ_b/ε_b) (one vector query: all bins of all cells
   partition the records, so by parallel composition each bin gets the whole ε_b); negative
   counts → 0, an all-zero cell → uniform over its bins (``histogram_probabilities``);
3. each of the ñ_k synthetic records of cell k draws a bin of cell k with probability
   p̂*_kb and a point uniform within it (paper Eq. 5).

One-table mode (``cell_counts="bins"``, Bowen & Liu §4.3.2; spec §4.4, §6 item 18): no
separate count query; ONE Laplace query per set on the (cells × bins) table with the whole
ε/m, and the synthetic cell sizes are the largest-remainder apportionment to n of the cell
totals of the zero-floored sanitized bins. ``scott_sd="marginal"``: the SD of each coordinate
over all n records (what reproduces Supp. Table 7); cells with n_k < 2 get one bin.

Scott's SD (``scott_sd``): ``pooled`` within-cell SD (the default, reproduces most medians of
Supp. Table 5, spec §2.2/§8), ``cell`` (each cell's own SD) or ``public`` (``public_sd``). The n in
Scott's rule (``scott_n``) is the true cell count n_k (the paper) or this set's sanitized
count ñ_k (``sanitized``).

Privacy. With ``scott_sd: public`` and ``scott_n: sanitized`` the bins are a function of public
values and of the already-sanitized counts, and the release is ε-DP by sequential composition
for neighbours at l1 distance Δ_c (counts) and Δ_b (bins). The paper's configuration (data SDs,
true n_k) chooses the bins from the data without spending budget: not strictly DP (spec §6
item 11). Δ: the paper uses 1 for both tables (add/remove neighbours) while treating n as public;
with n public, neighbours differ by one changed record, which moves a unit between two cells
and between two bins, so Δ = 2 is needed for substitution neighbours (README, "Finding, table
sensitivity"). Both Δ are configurable (``count_sensitivity``, ``bin_sensitivity``).
"""

from __future__ import annotations

import math

import numpy as np

from ..data import RecordBatch, group_sums
from ..errors import ConfigError, allowed
from ..histograms import BinGrid, histogram_probabilities, scott_bins
from ..inference.estimators import pooled_within_cell_covariance
from ..models.glom import cells_from_counts, gather_cells
from ..privacy import (
    Sensitivity,
    at_bound,
    bounded_laplace_mechanism,
    laplace_mechanism,
    largest_remainder_round,
)
from ..privacy.ledger import ADD_REMOVE
from ..validation import check_number
from .base import AT_BOUND, SetwiseSynthesizer
from .registry import register

SCOTT_SD = ("pooled", "cell", "public", "marginal")
#: where the synthetic cell sizes come from: a separate sanitized cell-count query (§4.3.1) or the
#: cell totals of the sanitized bins of the one (cells × bins) table (§4.3.2, spec §4.4)
CELL_COUNT_SOURCES = ("query", "bins")
SCOTT_N = ("true", "sanitized")
QUERIES = ("counts", "bins")


def bins_diagnostic(k: int) -> str:
    """Diagnostic name of the number of histogram bins of cell k (0-based): ``bins_cell_01``…"""
    return f"bins_cell_{k + 1:02d}"


def count_diagnostic(k: int) -> str:
    """Diagnostic name of the original count of cell k (0-based): ``n_cell_01``…"""
    return f"n_cell_{k + 1:02d}"


@register
class CellHistogram(SetwiseSynthesizer):
    """Laplace sanitizer on K cells + perturbed histograms within cells (see module docstring).

    ``lower``/``upper``: the public box of every cell, shape (K, d) (or (d,) for all cells).
    """

    name = "cell_histogram"
    input_kind = "numeric"

    def sensitivities(self) -> list[Sensitivity]:
        return [self.count_sensitivity, self.bin_sensitivity]

    def __init__(self, lower, upper, m: int = 5, count_sensitivity: float = 1.0,
                 bin_sensitivity: float = 1.0, budget_weights=None, scott_sd: str = "pooled",
                 public_sd=None, scott_n: str = "true", max_bins: int | None = None,
                 cell_counts: str = "query"):
        super().__init__(m)
        try:
            self.lower = np.atleast_2d(np.asarray(lower, dtype=float))
            self.upper = np.atleast_2d(np.asarray(upper, dtype=float))
        except (TypeError, ValueError):
            raise ConfigError("lower: cell boxes must be numbers of shape (K, d)") from None
        if self.lower.shape != self.upper.shape or not np.all(self.upper > self.lower):
            raise ConfigError("upper: cell boxes need upper > lower and matching shapes")
        for key, v in (("count_sensitivity", count_sensitivity),
                       ("bin_sensitivity", bin_sensitivity)):
            check_number(key, v, open_interval=(0, np.inf))
        # declared under add/remove (Sensitivity.declared: 2Δ under substitution)
        self.count_sensitivity = Sensitivity.declared(float(count_sensitivity), ADD_REMOVE)
        self.bin_sensitivity = Sensitivity.declared(float(bin_sensitivity), ADD_REMOVE)
        if cell_counts not in CELL_COUNT_SOURCES:
            raise allowed("cell_counts", cell_counts, CELL_COUNT_SOURCES)
        self.cell_counts = cell_counts
        if cell_counts == "bins":
            if budget_weights is not None and dict(budget_weights) != {"bins": 1.0}:
                raise ConfigError("budget_weights: cell_counts=bins spends the whole set budget "
                                  "on the one bin query; leave budget_weights unset")
            if scott_n != "true":
                raise ConfigError("scott_n: cell_counts=bins has no sanitized count before "
                                  "the bins; only scott_n=true")
            budget_weights = {"bins": 1.0}
        weights = {"counts": 0.5, "bins": 0.5} if budget_weights is None else dict(budget_weights)
        queries = ("bins",) if cell_counts == "bins" else QUERIES
        if set(weights) != set(queries):
            raise ConfigError(f"budget_weights: keys must be {', '.join(queries)}, got "
                              f"{sorted(weights)}")
        if not all(v > 0 for v in weights.values()):
            raise ConfigError("budget_weights: every weight must be > 0")
        if not math.isclose(sum(weights.values()), 1.0, rel_tol=1e-9):
            raise ConfigError(f"budget_weights: must sum to 1, got {sum(weights.values()):g}")
        self.budget_weights = weights
        if scott_sd not in SCOTT_SD:
            raise allowed("scott_sd", scott_sd, SCOTT_SD)
        if scott_n not in SCOTT_N:
            raise allowed("scott_n", scott_n, SCOTT_N)
        self.scott_sd = scott_sd
        self.scott_n = scott_n
        self.public_sd = None
        if scott_sd == "public":
            if public_sd is None:
                raise ConfigError("public_sd: scott_sd=public needs public_sd")
            self.public_sd = np.asarray(public_sd, dtype=float)
            if not np.all(self.public_sd > 0):
                raise ConfigError(f"public_sd: must be > 0, got {public_sd!r}")
        if max_bins is not None:
            check_number("max_bins", max_bins, integer=True, minimum=1)
        self.max_bins = max_bins

    # --- pieces -----------------------------------------------------------------------------
    def _check(self, data) -> RecordBatch:
        """The data as records with cells; records without cells form one cell (the method is
        then the perturbed histogram with a public total)."""
        if not isinstance(data, RecordBatch):
            raise ConfigError(f"data: {self.name} synthesizes numeric records (a RecordBatch)")
        if data.cells is None:
            data = RecordBatch(data.values, np.zeros(data.values.shape[:-1], dtype=np.int64), 1,
                               data.columns)
        k = self.lower.shape[0]
        if k > 1 and k != data.n_cells:
            raise ConfigError(f"lower: boxes for {k} cells, the data have {data.n_cells}")
        return data

    def scott_sd_of(self, data: RecordBatch) -> np.ndarray:
        """SD per (replicate, cell, coordinate) (R, K, d) for Scott's rule."""
        shape = (*data.batch_shape, data.n_cells, data.n_columns)
        if self.scott_sd == "public":
            return np.broadcast_to(self.public_sd, shape)
        if self.scott_sd == "marginal":  # SD of each coordinate over all n records (spec §6.18)
            sd = data.values.std(axis=-2, ddof=1)[..., None, :]
            return np.broadcast_to(sd, shape)
        cov, _, counts, means = pooled_within_cell_covariance(
            data.values, data.cells, data.n_cells
        )
        if self.scott_sd == "pooled":
            sd = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1))[..., None, :]
            return np.broadcast_to(sd, shape)
        dev = data.values - gather_cells(np.nan_to_num(means), data.cells)  # cell-specific SDs
        sq = group_sums(dev * dev, data.cells, data.n_cells)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.sqrt(sq / (counts[..., None] - 1.0))

    def bin_grid(self, data: RecordBatch, n_cell: np.ndarray, sd: np.ndarray) -> BinGrid:
        """Scott's bins over each cell's public box (Bowen & Liu §4.3.1; spec §2.2)."""
        shape = (*data.batch_shape, data.n_cells, data.n_columns)
        lower = np.broadcast_to(self.lower, shape)
        upper = np.broadcast_to(self.upper, shape)
        bins = scott_bins(sd, n_cell, lower, upper, max_bins=self.max_bins)
        return BinGrid(lower, upper, bins)

    def sanitize(self, data: RecordBatch, eps_set: float, ledger, rng, j: int = 0,
                 sd: np.ndarray | None = None) -> dict:
        """The DP part of one set: sanitized cell counts (BIT to [0, n]) and sanitized bin counts
        of every cell; everything after this is post-processing. Returns noisy ``counts``
        (R, K), the apportioned ``n_tilde`` (R, K), the ``grid`` and noisy ``bins``
        (R, K, size)."""
        data = self._check(data)
        counts = data.cell_counts().astype(float)
        if self.cell_counts == "bins":
            return self._sanitize_table(data, counts, eps_set, ledger, rng, j, sd)
        noisy = bounded_laplace_mechanism(
            counts, sensitivity=self.count_sensitivity,
            epsilon=eps_set * self.budget_weights["counts"], lower=0.0, upper=float(data.n),
            rule="clamp", rng=rng, ledger=ledger, statistic=f"set {j + 1}: cell counts",
        )
        n_tilde = largest_remainder_round(noisy, data.n)
        n_cell = counts if self.scott_n == "true" else n_tilde
        sd = self.scott_sd_of(data) if sd is None else sd
        grid = self.bin_grid(data, n_cell, sd)
        noisy_bins = laplace_mechanism(
            grid.counts(data.values, data.cells), sensitivity=self.bin_sensitivity,
            epsilon=eps_set * self.budget_weights["bins"], rng=rng, ledger=ledger,
            statistic=f"set {j + 1}: bin counts of all cells",
        )
        return {"counts": noisy, "n_tilde": n_tilde, "grid": grid, "bins": noisy_bins}

    def _sanitize_table(self, data, counts, eps_set, ledger, rng, j, sd) -> dict:
        """``cell_counts="bins"`` (Bowen & Liu §4.3.2 NP-DIPS; spec §4.4): ONE Laplace query on
        the (cells × bins) table at the whole set budget; the synthetic cell sizes are the
        largest-remainder apportionment to n of the cell totals of the zero-floored sanitized
        bins (spec §2.1)."""
        sd = self.scott_sd_of(data) if sd is None else sd
        grid = self.bin_grid(data, counts, sd)
        noisy_bins = laplace_mechanism(
            grid.counts(data.values, data.cells), sensitivity=self.bin_sensitivity,
            epsilon=eps_set, rng=rng, ledger=ledger,
            statistic=f"set {j + 1}: (cells x bins) table",
        )
        floored = np.where(grid.valid(), np.maximum(noisy_bins, 0.0), 0.0)
        totals = floored.sum(axis=-1)
        n_tilde = largest_remainder_round(totals, data.n)
        return {"counts": totals, "n_tilde": n_tilde, "grid": grid, "bins": noisy_bins}

    def _release(self, data, epsilon, ledger, rng):
        no_cells = isinstance(data, RecordBatch) and data.cells is None
        data = self._check(data)
        self._sd = self.scott_sd_of(data)  # data-dependent, the same for every set
        try:
            sets, diagnostics = super()._release(data, epsilon, ledger, rng)
        finally:
            del self._sd
        if no_cells:
            sets = RecordBatch(sets.values, None, 1, sets.columns)
        return sets, diagnostics

    def _one_set(self, data, eps_set, ledger, rng, j):
        s = self.sanitize(data, eps_set, ledger, rng, j, sd=getattr(self, "_sd", None))
        probs = histogram_probabilities(s["bins"], s["grid"].valid())
        cells = cells_from_counts(s["n_tilde"])
        z = s["grid"].sample(probs, cells, rng)
        out = RecordBatch(z, cells, data.n_cells, data.columns)
        total = s["grid"].total
        original = data.cell_counts()
        diagnostics = {AT_BOUND: at_bound(s["counts"], 0.0, data.n).any(axis=-1)}
        for k in range(data.n_cells):
            diagnostics[bins_diagnostic(k)] = total[..., k].astype(float)
            diagnostics[count_diagnostic(k)] = original[..., k].astype(float)
        return out, diagnostics
