"""Survey-weighted domain estimators with Taylor-linearised variances for a one-stage stratified
design (each record its own PSU; Binder 1996; Hu, Savitsky & Williams §5), vectorised over
leading axes such as (replicates, released sets).

For a domain D with indicator d_i, analysis weights a_i and outcome v_i:

    N̂_D = Σ_i d_i a_i,            μ̂_D = Σ_i d_i a_i v_i / N̂_D,

with linearised variables z_i = d_i a_i (counts) and z_i = d_i a_i (v_i − μ̂_D)/N̂_D (means), and

    V̂ = Σ_h n_h/(n_h − 1) Σ_{i∈h} (z_i − z̄_h)²,   z̄_h = Σ_{i∈h} z_i / n_h,

where the sums run over *all* n_h records of stratum h (out-of-domain records contribute z_i = 0).
This is R survey's svydesign(ids=~1, strata=~h, weights=~a) with svytotal / svymean. With
``strata=None`` the design is treated as one stratum (the unstratified with-replacement form,
n/(n − 1) Σ (z_i − z̄)²), the variant the paper appears to use for FBP counts (spec A21).

Domains are unions of cells: records carry a cell label 0..C−1 and a 0/1 matrix (C, D) says which
cells form each domain (``two_way_domains``: interior cells and the row, column and grand
margins of a two-way table). All sums go through one ``group_sums`` over (stratum, cell), so the
cost is linear in the records whatever the number of domains.

A stratum with a single record has an undefined variance term (NaN) for the domains it touches.
The combining rule over m synthetic sets is ``harness.inference.combine`` (partial synthesis:
T = B/m + W with ν = (m − 1)(1 + mW/B)², m = 1 and B = 0 with the normal quantile).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import check_weights, group_sums
from ..errors import ConfigError

COUNT_VARIANCES = ("stratified", "unstratified")


def check_strata(key: str, strata, shape: tuple, n_strata: int) -> np.ndarray:
    """Integer stratum labels in 0..n_strata − 1 of the records' shape, or a one-line
    ConfigError naming ``key``."""
    s = np.asarray(strata)
    if s.shape != tuple(shape):
        raise ConfigError(f"{key}: strata of shape {s.shape}, records need {tuple(shape)}")
    if s.size and not (np.issubdtype(s.dtype, np.integer)
                       or (np.isfinite(s).all() and (s == np.round(s)).all())):
        raise ConfigError(f"{key}: stratum labels must be integers")
    s = s.astype(np.int64)
    if s.size and (s.min() < 0 or s.max() >= n_strata):
        bad = s[(s < 0) | (s >= n_strata)].flat[0]
        raise ConfigError(f"{key}: stratum label {int(bad)} is outside 0..{n_strata - 1}")
    return s


@dataclass(frozen=True)
class Domains:
    """Domains as unions of cells: ``matrix`` (C, D) 0/1, ``names`` (D,), ``levels`` (D,): the
    margin level of each domain (e.g. ``interior``, ``row``, ``column``, ``all``)."""

    matrix: np.ndarray
    names: tuple[str, ...]
    levels: tuple[str, ...]

    @property
    def n_cells(self) -> int:
        return self.matrix.shape[0]


def two_way_domains(row_labels, col_labels) -> Domains:
    """The domains of a two-way table with cell = row · n_cols + col, in the order: grand total,
    column margins, then for each row its margin followed by its interior cells. Names are
    ``"*|*"``, ``"*|c"``, ``"r|*"`` and ``"r|c"``."""
    rows, cols = [str(v) for v in row_labels], [str(v) for v in col_labels]
    nr, nc = len(rows), len(cols)
    columns, names, levels = [np.ones(nr * nc)], ["*|*"], ["all"]
    cell_row = np.repeat(np.arange(nr), nc)
    cell_col = np.tile(np.arange(nc), nr)
    for c in range(nc):
        columns.append((cell_col == c).astype(float))
        names.append(f"*|{cols[c]}")
        levels.append("column")
    for r in range(nr):
        columns.append((cell_row == r).astype(float))
        names.append(f"{rows[r]}|*")
        levels.append("row")
        for c in range(nc):
            columns.append(((cell_row == r) & (cell_col == c)).astype(float))
            names.append(f"{rows[r]}|{cols[c]}")
            levels.append("interior")
    return Domains(np.stack(columns, axis=1), tuple(names), tuple(levels))


def _stratum_cell_sums(cells, strata, n_strata, n_cells, columns):
    """Sums of ``columns`` (..., n, k) within (stratum, cell): (..., H, C, k), and n_h (..., H)."""
    labels = strata * n_cells + cells
    sums = group_sums(columns, labels, n_strata * n_cells)
    lead = cells.shape[:-1]
    n_h = group_sums(np.ones(strata.shape), strata, n_strata)
    return sums.reshape(*lead, n_strata, n_cells, columns.shape[-1]), n_h


def _prepare(cells, weights, strata, n_strata, domains):
    cells = np.asarray(cells)
    w = check_weights("weights", weights, cells.shape)
    if strata is None:
        strata, n_strata = np.zeros(cells.shape, dtype=np.int64), 1
    else:
        strata = check_strata("strata", strata, cells.shape, n_strata)
    c = np.asarray(cells).astype(np.int64)
    if c.size and (c.min() < 0 or c.max() >= domains.n_cells):
        raise ConfigError(f"cells: labels must lie in 0..{domains.n_cells - 1}")
    return c, w, strata, n_strata


def _stratified_sum(ss, n_h):
    """Σ_h n_h/(n_h − 1) ss_h over the stratum axis −2 of ss (..., H, D); NaN where a stratum
    with one record has a non-zero term, 0 where it has none."""
    n = n_h[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(n >= 2, n / (n - 1) * ss, np.where(ss == 0, 0.0, np.nan))
    return term.sum(axis=-2)


def domain_totals(cells, weights, domains: Domains, strata=None, n_strata: int = 1):
    """Estimated domain sizes N̂_D and their linearised variances, each (..., D)."""
    c, w, s, h = _prepare(cells, weights, strata, n_strata, domains)
    sums, n_h = _stratum_cell_sums(c, s, h, domains.n_cells, np.stack([w, w * w], axis=-1))
    by_dom = np.einsum("...hck,cd->...hdk", sums, domains.matrix)
    s1, s2 = by_dom[..., 0], by_dom[..., 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ss = s2 - s1 * s1 / n_h[..., None]
    return s1.sum(axis=-2), _stratified_sum(np.maximum(ss, 0.0), n_h)


def domain_means(cells, weights, values, domains: Domains, strata=None, n_strata: int = 1):
    """Weighted domain means μ̂_D and their linearised variances, each (..., D)."""
    c, w, s, h = _prepare(cells, weights, strata, n_strata, domains)
    v = np.asarray(values, dtype=float)
    if v.shape != c.shape:
        raise ConfigError(f"values: shape {v.shape}, records need {c.shape}")
    shift = np.nanmean(v, axis=-1, keepdims=True)  # centring only (z uses v − μ̂)
    v = v - shift
    cols = np.stack([w, w * v, w * w, w * w * v, w * w * v * v], axis=-1)
    sums, n_h = _stratum_cell_sums(c, s, h, domains.n_cells, cols)
    by_dom = np.einsum("...hck,cd->...hdk", sums, domains.matrix)
    total = by_dom[..., 0].sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = by_dom[..., 1].sum(axis=-2) / total  # centred
        m = mu[..., None, :]
        t1 = by_dom[..., 1] - m * by_dom[..., 0]  # Σ_{i∈h} d a (v − μ)
        t2 = by_dom[..., 4] - 2 * m * by_dom[..., 3] + m * m * by_dom[..., 2]  # Σ d a² (v−μ)²
        ss = (t2 - t1 * t1 / n_h[..., None]) / (total * total)[..., None, :]
    return mu + shift, _stratified_sum(np.maximum(ss, 0.0), n_h)


def cell_constant_weights(cells, weights, n_cells: int) -> np.ndarray:
    """a_i = N̂_c/n_c of record i's cell c (Σ of the weights in the cell over its number of
    records): the FBP margin weights of the paper (§5.1), which weigh the cells' unweighted means
    by their estimated sizes."""
    c = np.asarray(cells).astype(np.int64)
    w = check_weights("weights", weights, c.shape)
    totals = group_sums(w, c, n_cells)
    counts = group_sums(np.ones(c.shape), c, n_cells)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_cell = np.where(counts > 0, totals / counts, 0.0)
    return np.take_along_axis(per_cell, c, axis=-1)


@dataclass(frozen=True)
class SurveyTable:
    """Counts and means of a table's domains with their linearised variances, each (..., D)."""

    counts: np.ndarray
    count_variance: np.ndarray
    means: np.ndarray
    mean_variance: np.ndarray
    domains: Domains


MEAN_WEIGHTS = ("weighted", "cell_constant")


def survey_table(cells, weights, values, domains: Domains, strata=None, n_strata: int = 1, *,
                 count_variance: str = "stratified",
                 mean_weights: str = "weighted") -> SurveyTable:
    """Counts (weights a = ``weights``) and means of ``values`` of every domain, with their
    linearised variances. ``count_variance``: ``stratified`` (the design's strata) or
    ``unstratified`` (one stratum; spec A21, FBP counts in the paper's reproduction).
    ``mean_weights``: ``weighted`` (a = weights: the sample and FBS) or ``cell_constant``
    (a = N̂_c/n_c: unweighted interior means and size-weighted margins, FBP §5.1)."""
    if count_variance not in COUNT_VARIANCES:
        raise ConfigError(f"count_variance: {count_variance!r} is not allowed (allowed: "
                          f"{', '.join(COUNT_VARIANCES)})")
    if mean_weights not in MEAN_WEIGHTS:
        raise ConfigError(f"mean_weights: {mean_weights!r} is not allowed (allowed: "
                          f"{', '.join(MEAN_WEIGHTS)})")
    count_strata = strata if count_variance == "stratified" else None
    counts, count_var = domain_totals(cells, weights, domains, count_strata, n_strata)
    a = weights if mean_weights == "weighted" else cell_constant_weights(cells, weights,
                                                                         domains.n_cells)
    means, mean_var = domain_means(cells, a, values, domains, strata, n_strata)
    return SurveyTable(counts, count_var, means, mean_var, domains)


def half_sample_weights(weights, strata, n_strata: int, replicates: int,
                        rng: np.random.Generator) -> np.ndarray:
    """Random half-sample replicate weights (Preston 2009), shape (..., replicates, n): in every
    stratum h, ⌊n_h/2⌋ records chosen at random keep their weight times n_h/⌊n_h/2⌋ (2 for even
    n_h), the others get 0, so each stratum's weight total is kept in expectation. Every stratum
    needs at least 2 records (a one-line ConfigError otherwise)."""
    w = check_weights("weights", weights)
    s = check_strata("strata", strata, w.shape, n_strata)
    n_h = group_sums(np.ones(s.shape), s, n_strata)
    present = n_h > 0
    if (present & (n_h < 2)).any():
        h = int(np.argwhere(present & (n_h < 2))[0][-1])
        raise ConfigError(f"strata: stratum {h} has a single record (half-samples need >= 2)")
    half = np.floor(n_h / 2.0)
    lead = w.shape[:-1]
    key = s[..., None, :] + rng.random((*lead, replicates, w.shape[-1]))
    order = np.argsort(key, axis=-1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(w.shape[-1]), order.shape), -1)
    start = np.cumsum(n_h, axis=-1) - n_h  # first rank of each stratum
    pos = rank - np.take_along_axis(start, s, axis=-1)[..., None, :]
    keep = pos < np.take_along_axis(half, s, axis=-1)[..., None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(half > 0, n_h / half, 0.0)
    return np.where(keep, w[..., None, :] * np.take_along_axis(factor, s, axis=-1)[..., None, :],
                    0.0)
