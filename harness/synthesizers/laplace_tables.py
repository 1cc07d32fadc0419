"""The Laplace-mechanism baseline for survey tables (Hu, Savitsky & Williams §2.4, Supplement B):
noisy weighted counts and means of the domains of a two-way table (interior cells, row margins,
column margins, grand total), and noisy variances from Preston (2009) random half-sample
replicates, each replicate estimate with its own noise.

Sensitivities are the paper's *local* ones (Eqs. 8–9), for a domain D with members S_D:

    Δ^c_D = max_{S_D} w − min_{S_D} w,
    Δ^a_D = (max_{S_D} w y − min_{S_D} w y) / (Σ_{S_D} w − (max_{S_D} w − min_{S_D} w)),

maxed within each margin level (one Δ for the interior cells, one for the row margins, one for
the column margins, the grand total its own). The guarantee is therefore local to the observed
ranges, not a worst-case ε-DP one (recorded in every ledger entry).

Budget (``laplace_table_budget``): every record is in 4 domains (one per level) × 2 tables
(counts, means) × (point, variance); ε is split equally over the 8 (table, level) pairs and,
within a pair, equally between the point (ε/16) and the variance (ε/16, spread over the R
replicates: ε/(16R) each): ε = 8 ε_point + 8 R ε_replicate. The release is of kind
``statistics`` with one set (m = 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import RecordBatch
from ..errors import ConfigError, allowed
from ..inference.survey import (
    Domains,
    check_strata,
    domain_means,
    domain_totals,
    half_sample_weights,
    two_way_domains,
)
from ..privacy.ledger import SUBSTITUTION
from ..privacy.mechanisms import laplace_mechanism
from ..validation import check_number
from .base import Synthesizer
from .registry import register

TABLES = ("counts", "means")


def laplace_table_budget(epsilon: float, replicates: int = 10, n_levels: int = 4,
                         n_tables: int = 2) -> dict[str, float]:
    """The paper's split of ε: ``point`` = ε/(2·L·T) per (table, level) point release,
    ``variance`` the same per (table, level) variance release, ``replicate`` = variance/R per
    replicate estimate (ε = 8 → 0.5, 0.5, 0.05 for L = 4 levels, T = 2 tables, R = 10)."""
    pair = float(epsilon) / (n_levels * n_tables)
    return {"point": pair / 2.0, "variance": pair / 2.0, "replicate": pair / 2.0 / replicates}


def domain_sensitivities(cells, weights, values, domains: Domains):
    """Local sensitivities (Δ^c_D, Δ^a_D) of every domain's weighted count and mean, each
    (..., D) (Eqs. 8–9). A domain without records has Δ = 0."""
    cells = np.asarray(cells).astype(np.int64)
    w = np.asarray(weights, dtype=float)
    wy = w * np.asarray(values, dtype=float)
    lead = cells.shape[:-1]
    flat = cells.reshape(-1, cells.shape[-1])
    k = domains.n_cells
    stats = {}
    for name, x in (("w", w), ("wy", wy)):
        x = x.reshape(flat.shape)
        hi = np.full((flat.shape[0], k), -np.inf)
        lo = np.full((flat.shape[0], k), np.inf)
        rows = np.repeat(np.arange(flat.shape[0]), flat.shape[1])
        np.maximum.at(hi, (rows, flat.ravel()), x.ravel())
        np.minimum.at(lo, (rows, flat.ravel()), x.ravel())
        stats[name] = (hi, lo)
    total = np.zeros((flat.shape[0], k))
    np.add.at(total, (np.repeat(np.arange(flat.shape[0]), flat.shape[1]), flat.ravel()),
              w.reshape(flat.shape).ravel())
    members = domains.matrix.T.astype(bool)  # (D, C)

    def over(a, fn, empty):
        return np.stack([fn(np.where(m, a, empty), axis=-1) for m in members], axis=-1)

    w_hi, w_lo = over(stats["w"][0], np.max, -np.inf), over(stats["w"][1], np.min, np.inf)
    wy_hi, wy_lo = over(stats["wy"][0], np.max, -np.inf), over(stats["wy"][1], np.min, np.inf)
    w_sum = total @ domains.matrix
    occupied = np.isfinite(w_hi)
    with np.errstate(invalid="ignore", divide="ignore"):
        d_count = np.where(occupied, w_hi - w_lo, 0.0)
        d_mean = np.where(occupied, (wy_hi - wy_lo) / (w_sum - d_count), 0.0)
    return d_count.reshape(*lead, -1), d_mean.reshape(*lead, -1)


def level_maxima(sensitivity: np.ndarray, domains: Domains) -> np.ndarray:
    """Every domain's sensitivity replaced by the maximum within its margin level (..., D)."""
    out = np.empty_like(sensitivity)
    levels = np.asarray(domains.levels)
    for level in dict.fromkeys(domains.levels):
        idx = levels == level
        out[..., idx] = sensitivity[..., idx].max(axis=-1, keepdims=True)
    return out


@dataclass(frozen=True)
class NoisyTables:
    """A released table: noisy counts and means of every domain and their noisy replicate
    variances, each (R, m, D) (m = 1 for this mechanism)."""

    counts: np.ndarray
    count_variance: np.ndarray
    means: np.ndarray
    mean_variance: np.ndarray
    domains: Domains

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.counts.shape[:2]

    def first_sets(self, m: int) -> NoisyTables:
        return NoisyTables(self.counts[:, :m], self.count_variance[:, :m], self.means[:, :m],
                           self.mean_variance[:, :m], self.domains)


@register
class LaplaceTables(Synthesizer):
    """Laplace noise on the weighted counts and means of a two-way table (rows × cols of the
    schema's categorical columns ``rows`` and ``cols``; default: the first two), variances from
    ``replicates`` random half-samples within the batch's strata.

    The privacy parameter is the total ε. With ``match_sets = m`` it is instead the Lipschitz
    bound Δ of a study whose privacy axis is ``lipschitz_bound``, and the table is released at
    the ε of m pseudo-posterior sets, 2·Δ·m (the paper runs the baseline at the synthesizers'
    ε = 2 × 1.8 × 3 = 10.8)."""

    name = "laplace_tables"
    release_kind = "statistics"
    neighbour_relation = SUBSTITUTION
    input_kind = "survey"

    def __init__(self, replicates: int = 10, outcome: str = "y", rows: str | None = None,
                 cols: str | None = None, match_sets: int | None = None):
        super().__init__(1)
        self.replicates = int(check_number("replicates", replicates, integer=True, minimum=2))
        self.outcome, self.rows, self.cols = str(outcome), rows, cols
        self.match_sets = None if match_sets is None else int(
            check_number("match_sets", match_sets, integer=True, minimum=1))
        if self.match_sets is not None:
            self.privacy_parameter = "lipschitz_bound"

    def claimed_epsilon(self, privacy, data=None) -> float:
        if self.match_sets is None:
            return float(privacy)
        return 2.0 * float(privacy) * self.match_sets

    def _layout(self, data: RecordBatch):
        schema = data.schema
        if schema is None:
            raise ConfigError("schema: laplace_tables needs a batch with a schema")
        cat = [c.name for c in schema.categorical]
        rows = self.rows or (cat[0] if cat else None)
        cols = self.cols or (cat[1] if len(cat) > 1 else None)
        for key, name in (("rows", rows), ("cols", cols)):
            if name not in cat:
                raise allowed(key, name, cat)
        if self.outcome not in schema.names:
            raise allowed("outcome", self.outcome, schema.names)
        if data.weights is None or data.strata is None:
            raise ConfigError("weights: laplace_tables needs survey weights and strata")
        domains = two_way_domains(schema.column(rows).levels, schema.column(cols).levels)
        nc = len(schema.column(cols).levels)
        cells = (data.values[..., schema.names.index(rows)].astype(np.int64) * nc
                 + data.values[..., schema.names.index(cols)].astype(np.int64))
        return domains, cells, data.values[..., schema.names.index(self.outcome)]

    def _release(self, data: RecordBatch, epsilon, ledger, rng):
        domains, cells, y = self._layout(data)
        w = data.weights
        n_strata = int(data.strata.max()) + 1
        strata = check_strata("strata", data.strata, cells.shape, n_strata)
        budget = laplace_table_budget(self.claimed_epsilon(epsilon), self.replicates)
        point = {"counts": domain_totals(cells, w, domains)[0],
                 "means": domain_means(cells, w, y, domains)[0]}
        rep_w = half_sample_weights(w, strata, n_strata, self.replicates, rng)  # (R, K, n)
        rep_cells = np.broadcast_to(cells[:, None], rep_w.shape)
        rep_y = np.broadcast_to(y[:, None], rep_w.shape)
        rep = {"counts": domain_totals(rep_cells, rep_w, domains)[0],
               "means": domain_means(rep_cells, rep_w, rep_y, domains)[0]}
        sens = dict(zip(TABLES, domain_sensitivities(cells, w, y, domains), strict=True))
        levels = np.asarray(domains.levels)
        noisy, variance = {}, {}
        note = "local sensitivity (Eqs. 8-9), maxed within the margin level"
        for table in TABLES:
            noisy[table] = np.empty_like(point[table])
            noisy_rep = np.empty_like(rep[table])
            for level in dict.fromkeys(domains.levels):
                idx = levels == level
                s = sens[table][:, idx].max(axis=-1, keepdims=True)
                if not (s > 0).all():
                    raise ConfigError(f"weights: the {level} {table} have a local sensitivity "
                                      f"of 0 (equal weights and values within the domains)")
                noisy[table][:, idx] = laplace_mechanism(
                    point[table][:, idx], sensitivity=s, epsilon=budget["point"], rng=rng,
                    ledger=ledger, statistic=f"{table}, {level} domains: point", note=note)
                for k in range(self.replicates):
                    noisy_rep[:, k, idx] = laplace_mechanism(
                        rep[table][:, k, idx], sensitivity=s, epsilon=budget["replicate"],
                        rng=rng, ledger=ledger,
                        statistic=f"{table}, {level} domains: half-sample {k + 1}", note=note)
            variance[table] = ((noisy_rep - noisy[table][:, None]) ** 2).mean(axis=1)
        sets = NoisyTables(noisy["counts"][:, None], variance["counts"][:, None],
                           noisy["means"][:, None], variance["means"][:, None], domains)
        return sets, {}
