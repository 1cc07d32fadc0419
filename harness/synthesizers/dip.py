"""Distribution-invariant privatization, DIP (Bi & Shen; spec 004 §1).

Univariate, known F (eq. (1), Thm 1): Z̃ = F⁻¹(G(F(Z) + e)), e ~ Laplace(0, b), b = 1/ε, with G
the CDF of U + e (:func:`.dip_transform.uniform_laplace_cdf`). F(Z) ∈ [0, 1] whatever Z is, so
its sensitivity is 1 and Laplace(1/ε) makes it ε-DP; G and F⁻¹ are post-processing. Discrete F
uses the randomized probability-integral transform u = F(z−) + Unif(0, 1]·P(Z = z) and the
generalized quantile F⁻ (equivalent to continualization (3) and the ceiling (4), spec §1.3).

Multivariate (eq. (2), §1.6): the probability chain rule, the forward conditional CDF taken at
the *original* earlier coordinates and the inverse at the *privatized* ones, with
e_il ~ Laplace(0, p/ε) for each of the p privatized columns (sequential composition, Algorithm
1: each coordinate is ε/p-DP). For a known N(μ, Σ) this is the Rosenblatt transform through the
Cholesky factor, and the output is exactly N(μ, Σ) for every ε (Thm 1).

Unknown F (Algorithm 1, Thm 2, App. S1.5–S1.6): the N records are split at random into a hold-out
of m = round(h·N) records and n = N − m records to privatize; the reference is the smoothed
ECDF Ĉ (eq. (7)) of the continualized hold-out, and for p > 1 its "cube" continualization: every
hold-out row spreads mass 1/m uniformly over its bottom-left cube, so the first coordinate
selects a hold-out row and each later coordinate is uniform in that row's cell (eq. (9), spec
§1.6; ``conditional="strict"`` is eq. (9) literally, ``"relaxed"`` keeps the row of the first
coordinate). Option (ii) of §1.5: a public sample from the same population as the reference
(``reference="public"``, the original data's part ``public_part``) and all N records privatized.
The release holds the n privatized records in their original order (so its n differs from the
original's); the hold-out is never released.

Privacy (ledger): one Laplace entry per privatized column, sensitivity 1 on the uniform scale,
ε/p each, scale p/ε, neighbour relation *substitution* (Def. 1: samples that differ in one
observation). The guarantee covers the to-be-privatized sample **given the hold-out** (or given
the known or public reference): the hold-out is fixed after the split and DP is not defined on
it (Lemma 3). Each released row depends only on its own record and the reference, so the
mechanism is also per-record (local).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..data import RecordBatch
from ..errors import ConfigError, allowed
from ..privacy import laplace_mechanism
from ..privacy.ledger import SUBSTITUTION
from ..validation import check_number
from .base import Synthesizer
from .dip_transform import (
    CHUNK,
    D0_RULES,
    ColumnKind,
    ceiling_back,
    check_on_support,
    column_kinds,
    continualize,
    ecdf_cdf,
    ecdf_cell,
    ecdf_knots,
    ecdf_ppf,
    noisy_cdf_level,
    noisy_level,
    take_last,
)
from .registry import register

REFERENCES = ("holdout", "public", "known")
ORDERS = ("given", "random")
CONDITIONALS = ("strict", "relaxed")

GIVEN_HOLDOUT = ("guarantee covers the to-be-privatized records given the hold-out (fixed after "
                 "the split, never released; Bi & Shen Thm 2, Lemma 3)")
GIVEN_REFERENCE = "guarantee covers the privatized records given the {} reference distribution"


# ----------------------------------------------------------------------------- helpers


def holdout_split(n_records: int, share: float, rng: np.random.Generator, replicates: int):
    """Random split per replicate (Algorithm 1): m = round(h·N) hold-out rows and the other
    n = N − m rows to privatize, in increasing row order. Returns (holdout_rows (R, m),
    kept_rows (R, n))."""
    m = int(round(share * n_records))
    if not 2 <= m <= n_records - 1:
        raise ConfigError(f"holdout_share: {share} of N = {n_records} records gives a hold-out of "
                          f"{m}; it needs 2..{n_records - 1} records")
    perm = np.argsort(rng.random((replicates, n_records)), axis=1)
    return np.sort(perm[:, :m], axis=1), np.sort(perm[:, m:], axis=1)


def _rows(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """values (R, N, p) at each replicate's rows (R, n): (R, n, p), by one flat index."""
    R, N, p = values.shape
    flat = np.ascontiguousarray(values).reshape(R * N, p)
    return flat[rows + (np.arange(R, dtype=np.int64) * N)[:, None]]


def column_orders(order: str, p: int, replicates: int, rng) -> np.ndarray:
    """(R, p) variable orders π: the column order, or one random permutation per replicate
    (spec §6 A9, used for all records of the replicate)."""
    if order == "given":
        return np.tile(np.arange(p), (replicates, 1))
    return np.argsort(rng.random((replicates, p)), axis=1)


def _permute(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """values (R, n, p) with its columns in each replicate's order (R, p)."""
    return np.take_along_axis(values, order[:, None, :], axis=-1)


def _unpermute(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    return np.take_along_axis(values, np.argsort(order, axis=1)[:, None, :], axis=-1)


def _noise(u, p, epsilon, rng, ledger, l, note):
    """u + Laplace(0, p/ε): the ε/p-DP step of chain coordinate l (sensitivity 1: u ∈ [0, 1])."""
    return laplace_mechanism(u, sensitivity=1.0, epsilon=epsilon / p, rng=rng, ledger=ledger,
                             statistic=f"chain coordinate {l + 1} of {p}: PIT value u in [0, 1]",
                             note=note)


def _is_mvn(dist) -> bool:
    return np.ndim(getattr(dist, "cov", None)) == 2 and np.ndim(getattr(dist, "mean", None)) == 1


def _inverse(dist, g, s):
    """F⁻¹ at G: the quantile below 1/2 and the inverse survival above (spec §1.2 numerics).
    Each is computed only where it is used (both are elementwise, so the values are those of
    computing both everywhere and selecting; a discrete ppf is a root search per element),
    unless the distribution has array parameters that broadcast against ``g``."""
    low = np.asarray(g <= 0.5)
    params = (*getattr(dist, "args", ()), *getattr(dist, "kwds", {}).values())
    if any(np.ndim(a) for a in params):
        return np.where(low, dist.ppf(g), dist.isf(s))
    out = np.empty(low.shape)
    out[low] = dist.ppf(g[low])
    high = ~low
    out[high] = dist.isf(s[high])
    return out


def _forward_univariate(dist, z, rng):
    """u = F(z) (continuous) or the randomized PIT F(z−) + Unif(0, 1]·P(z) (discrete, §1.3)."""
    from scipy import stats  # at call time: importing scipy.stats costs every process ~1 s

    if isinstance(getattr(dist, "dist", None), stats.rv_discrete):
        mass = dist.pmf(z)
        return dist.cdf(z) - rng.random(z.shape) * mass
    return dist.cdf(z)


# ----------------------------------------------------------------------------- known F


def privatize_known(values, distribution, epsilon, rng, ledger, order, note="") -> np.ndarray:
    """DIP with a known reference (eq. (1)–(2), Thm 1) on records ``values`` (R, n, p).

    ``distribution``: a frozen scipy distribution (every column, independent), a list of p of
    them (independent columns), or a frozen ``scipy.stats.multivariate_normal`` (the oracle of
    spec §1.6, chain rule through the Cholesky factor in each replicate's ``order`` (R, p))."""
    from scipy import stats  # at call time: importing scipy.stats costs every process ~1 s

    values = np.asarray(values, dtype=float)
    R, n, p = values.shape
    note = note or GIVEN_REFERENCE.format("known")
    if _is_mvn(distribution):
        mean = np.asarray(distribution.mean, dtype=float)
        cov = np.asarray(distribution.cov, dtype=float)
        if mean.shape != (p,):
            raise ConfigError(f"distribution: a multivariate normal of dimension {mean.size} for "
                              f"{p} columns")
        z = _permute(values, order) - np.take_along_axis(np.tile(mean, (R, 1)), order, 1)[:, None]
        cov_o = cov[order[:, :, None], order[:, None, :]]  # (R, p, p)
        chol = np.linalg.cholesky(cov_o)
        w = np.linalg.solve(chol, np.swapaxes(z, 1, 2))  # (R, p, n): standardized chain
        u = stats.norm.cdf(w)
        wt = np.empty_like(u)
        for l in range(p):
            g, s = noisy_level(_noise(u[:, l], p, epsilon, rng, ledger, l, note), p / epsilon)
            wt[:, l] = _inverse(stats.norm, g, s)
        out = np.swapaxes(chol @ wt, 1, 2) + np.take_along_axis(
            np.tile(mean, (R, 1)), order, 1)[:, None]
        return _unpermute(out, order)
    dists = list(distribution) if isinstance(distribution, Sequence) else [distribution] * p
    if len(dists) != p:
        raise ConfigError(f"distribution: {len(dists)} distributions for {p} columns")
    out = np.empty_like(values)
    # independent columns: the conditional CDFs are the marginals, any order gives the same law
    for l in range(p):
        out[..., l] = known_stages(dists[l], values[..., l], epsilon, rng, ledger, p, l,
                                   note).released
    return out


@dataclass(frozen=True)
class KnownStages:
    """The steps of known-F DIP on one column (eq. (1), the paper's Figure 1): ``u`` = F(Z)
    (uniform; for a discrete F the randomized PIT, i.e. F_V of the continualized V, eq. (3)),
    ``noisy`` = u + e with e ~ Laplace(0, p/ε) (its law has CDF G) and ``released`` =
    F⁻¹(G(u + e)), which has law F."""

    u: np.ndarray
    noisy: np.ndarray
    released: np.ndarray


def known_stages(dist, z, epsilon, rng, ledger, p=1, l=0, note="") -> KnownStages:
    """DIP of column ``l`` (of ``p``, ε/p each) with the known frozen scipy ``dist``, every
    stage kept (:class:`KnownStages`); :func:`privatize_known` releases its ``released``."""
    note = note or GIVEN_REFERENCE.format("known")
    u = _forward_univariate(dist, z, rng)
    noisy = _noise(u, p, epsilon, rng, ledger, l, note)
    g, s = noisy_level(noisy, p / epsilon)
    return KnownStages(u, noisy, _inverse(dist, g, s))


# ----------------------------------------------------------------------------- hold-out cube


def _check_ties(v_star: np.ndarray, kinds) -> None:
    """``v_star`` (R, p, m): the continualized hold-out, one row of values per column."""
    for l, kind in enumerate(kinds):
        if kind.kind != "continuous":
            continue
        d = np.sort(v_star[:, l], axis=-1)
        if np.any(np.diff(d, axis=-1) == 0):
            raise ConfigError(f"columns[{l}]: the hold-out has tied values of a continuous "
                              f"column (allowed: a discrete or mixed column kind, or tie_jitter)")


def _by_column(a: np.ndarray) -> np.ndarray:
    """(R, n, p) → (R, p, n), contiguous: each column's values adjacent in memory."""
    return np.ascontiguousarray(np.swapaxes(a, 1, 2))


@dataclass(frozen=True)
class ReferenceStage:
    """The ε-free stage of :func:`privatize_holdout`: the continualized records ``v`` and
    hold-out ``vs`` (R, p, ·) and the knots of Ĉ (R, p, m + 1), in the column order of the
    data, and the first coordinate's (column ``order[:, 0]``) cells and Ĉ values (R, n)."""

    v: np.ndarray
    vs: np.ndarray
    knots: np.ndarray
    cell: np.ndarray
    u: np.ndarray


def reference_stage(values, holdout, kinds: Sequence[ColumnKind], rng, order,
                    d0="mean_spacing", tie_jitter=None) -> ReferenceStage:
    """The first steps of :func:`privatize_holdout`, before any noise: checks, continualization
    (its uniform draws come from ``rng``), tie jitter, the column order, the knots of Ĉ and the
    first coordinate's Ĉ(x). Without draws (every column continuous, no jitter) and with a
    fixed order it is the same at every ε: :class:`DistributionInvariant` then computes it once
    per task."""
    values = _by_column(np.asarray(values, dtype=float))
    holdout = _by_column(np.asarray(holdout, dtype=float))
    R, p, n = values.shape
    m = holdout.shape[2]
    for l, kind in enumerate(kinds):
        check_on_support(f"columns[{l}]", kind, values[:, l])
        check_on_support(f"columns[{l}]", kind, holdout[:, l])
    v, vs = np.empty_like(values), np.empty_like(holdout)
    for l, k in enumerate(kinds):
        v[:, l] = continualize(values[:, l], k, rng)
    for l, k in enumerate(kinds):
        vs[:, l] = continualize(holdout[:, l], k, rng)
    if tie_jitter is not None:
        cont = np.array([k.kind == "continuous" for k in kinds])[:, None]
        v = v + cont * (_by_column(rng.random((R, n, p))) - 0.5) * tie_jitter
        vs = vs + cont * (_by_column(rng.random((R, m, p))) - 0.5) * tie_jitter
    _check_ties(vs, kinds)
    knots = ecdf_knots(vs, d0)  # (R, p, m + 1)
    # the chain's first coordinate: each replicate's column order[:, 0] (whole rows gathered)
    first_knots, first = knots[np.arange(R), order[:, 0]], v[np.arange(R), order[:, 0]]
    cell = ecdf_cell(first_knots, first)
    return ReferenceStage(v, vs, knots, cell, ecdf_cdf(first_knots, first, cell))


def draws_free(kinds: Sequence[ColumnKind], tie_jitter) -> bool:
    """True when :func:`reference_stage` draws no random numbers."""
    return tie_jitter is None and all(k.kind == "continuous" for k in kinds)


def privatize_holdout(values, holdout, kinds: Sequence[ColumnKind], epsilon, rng, ledger,
                      order, conditional="strict", d0="mean_spacing", note=GIVEN_HOLDOUT,
                      tie_jitter=None, stage: ReferenceStage | None = None):
    """DIP with the hold-out (or public) reference (Algorithm 1; eq. (7)–(10); spec §1.5–§1.7):
    ``values`` (R, n, p) to privatize, ``holdout`` (R, m, p). Returns (released (R, n, p),
    diagnostics dict of per-replicate arrays). Internally every array is held column by column,
    (R, p, n), so that the chain's per-column steps read contiguous memory, and chain
    coordinate l of replicate r is column order[r, l] (looked up, never permuted). ``stage``: the
    :func:`reference_stage` of these arguments when the caller has it (draws-free, fixed
    order), else it is computed here."""
    if stage is None:
        stage = reference_stage(values, holdout, kinds, rng, order, d0, tie_jitter)
    v, vs, knots, cell, u = stage.v, stage.vs, stage.knots, stage.cell, stage.u
    R, p, n = v.shape
    m = vs.shape[2]
    b = p / epsilon
    reps = np.arange(R)
    g = noisy_cdf_level(_noise(u, p, epsilon, rng, ledger, 0, note), b)
    out = np.empty_like(v)
    out[reps, order[:, 0]] = ecdf_ppf(knots[reps, order[:, 0]], g)
    valid = (cell >= 1) & (cell <= m)
    first_outside = ~valid
    if p > 1:  # the later coordinates: uniform in the cell of a hold-out row (eq. (9))
        row_of_rank = np.argsort(vs, axis=2)  # (R, p, m): hold-out row of rank k + 1 in col c
        rank = np.argsort(row_of_rank, axis=2) + 1  # (R, p, m): rank 1..m of row q in column c
        # the cell (d_{k−1}, d_k] of every hold-out row q in every column c, k = rank[q, c]:
        # cube[r, c, q] = (lower, upper), looked up below by one flat index per record
        cube = np.stack([take_last(knots, rank - 1), take_last(knots, rank)], -1).reshape(-1, 2)
        k_priv = np.clip(np.ceil(g * m).astype(np.int64), 1, m)
        first_rows = row_of_rank[reps, order[:, 0]]
        q_priv = take_last(first_rows, k_priv - 1)
        q_orig = take_last(first_rows, np.clip(cell, 1, m) - 1)
        base = (np.arange(R) * (p * m))[:, None]  # flat index of cube[r, 0, 0]
        at_orig, at_priv = base + q_orig, base + q_priv
    # the later coordinates' steps run on blocks of replicates that fit in the CPU cache (the
    # same numbers: each step is per record); the noise of a coordinate is one draw for all
    blocks = [slice(i, i + max(1, CHUNK // n)) for i in range(0, R, max(1, CHUNK // n))]
    u = np.empty((R, n))
    for l in range(1, p):
        col = order[:, l]  # chain coordinate l is column col[r] of replicate r
        at_col = (col * m)[:, None]
        for r in blocks:
            bounds = cube[at_orig[r] + at_col[r]]  # the cell of the original's hold-out row
            lo, hi = bounds[..., 0], bounds[..., 1]
            xl = v[reps[r], col[r]]
            ur = np.clip((xl - lo) / np.where(hi > lo, hi - lo, 1.0), 0.0, 1.0)
            if conditional == "strict":
                ur = np.where(valid[r], ur, 0.0)  # eq. (9): no hold-out cube holds x_1..x_{l-1}
            u[r] = ur
            valid[r] &= (xl > lo) & (xl <= hi)
        noisy = _noise(u, p, epsilon, rng, ledger, l, note)
        for r in blocks:
            g = noisy_cdf_level(noisy[r], b)
            bounds_p = cube[at_priv[r] + at_col[r]]  # the cell of the privatized hold-out row
            lo_p, hi_p = bounds_p[..., 0], bounds_p[..., 1]
            out[reps[r], col[r]] = lo_p + g * (hi_p - lo_p)
    released = np.empty((R, n, p))
    for l, k in enumerate(kinds):
        released[..., l] = ceiling_back(out[:, l], k)
    diagnostics = {
        "first_coordinate_outside_holdout_range": first_outside.mean(axis=1),
        "records_outside_their_holdout_cube": (~valid).mean(axis=1) if p > 1 else
        first_outside.mean(axis=1),
    }
    return released, diagnostics


# ----------------------------------------------------------------------------- the synthesizer


class RecordsInput:
    """Mixin: ``synthesize`` on one ordinary numeric data set (array or DataFrame) builds a
    :class:`RecordBatch` of one replicate (the synthesizers of this family read records)."""

    input_kind = "records"

    def synthesize(self, records, epsilon: float | None = None, *, seed=None, levels=None):
        data = records if isinstance(records, RecordBatch) else RecordBatch.from_records(records)
        rel = self.release(data, epsilon, np.random.default_rng(seed))
        return [rel.sets.to_records((0, j)) for j in range(rel.m)]


def check_records(key: str, data) -> RecordBatch:
    if not isinstance(data, RecordBatch) or data.values.ndim != 3:
        raise ConfigError(f"{key}: needs a RecordBatch of records (R, n, p)")
    if data.sizes is not None:
        raise ConfigError(f"{key}: needs data sets of equal size (no padded sets)")
    return data


@dataclass(frozen=True)
class PreparedSplit:
    """The ε-free stage of a hold-out DIP (``DistributionInvariant.prepare``): the split's
    hold-out and kept rows (R, m), (R, n) in increasing row order, their records (R, m, p),
    (R, n, p), and the :func:`reference_stage` when it draws nothing and the column order is
    fixed (else None: each release computes it)."""

    holdout_rows: np.ndarray
    kept_rows: np.ndarray
    holdout: np.ndarray
    values: np.ndarray
    stage: ReferenceStage | None


@register
class DistributionInvariant(RecordsInput, Synthesizer):
    """DIP (spec 004 §1; see the module docstring). Parameters: ``reference`` ("holdout": split
    off ``holdout_share`` of the records; "public": the original data's part ``public_part``;
    "known": ``distribution``), ``columns`` (column kinds, :func:`.dip_transform.column_kind`),
    ``order`` ("given" or "random", one permutation per replicate), ``conditional`` ("strict",
    eq. (9) literal, or "relaxed"), ``d0`` (the knot below the smallest hold-out value) and
    ``tie_jitter`` (uniform jitter of this width on continuous columns, spec §1.5 pitfall)."""

    name = "dip"
    neighbour_relation = SUBSTITUTION

    def __init__(self, reference: str = "holdout", holdout_share: float = 0.25,
                 distribution=None, columns=None, order: str = "given",
                 conditional: str = "strict", d0: str = "mean_spacing",
                 public_part: str = "holdout", tie_jitter: float | None = None):
        super().__init__(1)
        for key, value, choices in (("reference", reference, REFERENCES),
                                    ("order", order, ORDERS),
                                    ("conditional", conditional, CONDITIONALS),
                                    ("d0", d0, D0_RULES)):
            if value not in choices:
                raise allowed(key, value, choices)
        self.reference, self.order, self.conditional, self.d0 = reference, order, conditional, d0
        self.holdout_share = float(check_number("holdout_share", holdout_share,
                                                open_interval=(0, 1)))
        if reference == "known" and distribution is None:
            raise ConfigError("distribution: reference='known' needs a distribution (a frozen "
                              "scipy distribution, a list of them, or a multivariate normal)")
        self.distribution = distribution
        self.columns = columns
        self.public_part = str(public_part)
        self.needs_parts = (self.public_part,) if reference == "public" else ()
        self.tie_jitter = None if tie_jitter is None else float(
            check_number("tie_jitter", tie_jitter, minimum=0))

    #: the hold-out split is ε-free: drawn once per task (``prepare``) so that every ε of a
    #: sweep privatizes the same records against the same hold-out
    uses_prepare = True

    def prepare(self, data, rng, parts=None):
        """The ε-free stage, shared by every ε of a task: the random split of Algorithm 1
        (:class:`PreparedSplit`), or None when the reference is not a hold-out of the data."""
        if self.reference != "holdout":
            return None
        data = check_records("data", data)
        R, N, p = data.values.shape
        hold_rows, kept = holdout_split(N, self.holdout_share, rng, R)
        holdout, values = _rows(data.values, hold_rows), _rows(data.values, kept)
        kinds = column_kinds("columns", self.columns, p)
        stage = None
        if draws_free(kinds, self.tie_jitter) and (p == 1 or self.order == "given"):
            # no draws and the order fixed: the reference stage is the same at every ε
            stage = reference_stage(values, holdout, kinds, None,
                                    column_orders("given", p, R, None), self.d0)
        return PreparedSplit(hold_rows, kept, holdout, values, stage)

    def _release(self, data, epsilon, ledger, rng, prepared=None, parts=None):
        data = check_records("data", data)
        values = data.values
        R, N, p = values.shape
        order = column_orders(self.order, p, R, rng)
        diagnostics = {}
        if self.reference == "known":
            out = privatize_known(values, self.distribution, epsilon, rng, ledger, order)
        else:
            kinds = column_kinds("columns", self.columns, p)
            stage = None
            if self.reference == "holdout":
                holdout, values, stage = prepared.holdout, prepared.values, prepared.stage
                note = GIVEN_HOLDOUT
            else:
                public = check_records(f"parts.{self.public_part}", parts[self.public_part])
                holdout = public.values
                if holdout.shape[0] != R or holdout.shape[2] != p:
                    raise ConfigError(f"parts.{self.public_part}: needs (R, m, {p}) records "
                                      f"for R = {R}, got {holdout.shape}")
                note = GIVEN_REFERENCE.format(f"public (part {self.public_part!r})")
            out, diagnostics = privatize_holdout(
                values, holdout, kinds, epsilon, rng, ledger, order, self.conditional, self.d0,
                note, self.tie_jitter, stage)
            diagnostics["holdout_size"] = np.full(R, float(holdout.shape[1]))
        sets = RecordBatch(out[:, None], columns=data.columns, schema=data.schema)
        return sets, diagnostics
