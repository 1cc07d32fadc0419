"""Histograms over public bounds, vectorised over replicates and groups (Bowen & Liu 2020
§3.1.2, Eqs. 5–7; spec 000 §2.2–§2.3, §6 items 11 and 17).

* :func:`scott_bins`: Scott's rule for the number of bins over a *public* box,
  K_j = ceil((c_j1 − c_j0) / h_j) with h_j = 3.5 · S_j · n^(−1/(2+d)) (d = 1: n^(−1/3), the
  rule that reproduces Supp. Table 2; d = 2: n^(−1/4), Scott's multivariate rule per GLOM cell).
* :class:`BinGrid`: equal-width bins on a box per group (e.g. per GLOM cell); bin counts of
  records and sampling "pick a bin, then a point uniform within it". Equal widths follow the
  paper's Eq. 5, f̂_K(x) = Σ_k K p̂_k I(x ∈ B_k) on the unit cube, so that "uniform over the box"
  equals "uniform over the bins" (used by the smoothed histogram, Eq. 6).
* :func:`histogram_probabilities`: post-processing of sanitized bin counts (negative counts to
  0, Barak et al. 2007; an all-zero histogram becomes uniform over its bins, spec §6.17).

Groups with different numbers of bins share one padded layout: group g owns ``size`` slots,
of which the first ``total[g]`` are its bins (row-major over coordinates) and the rest are
invalid (always zero). Records are located and drawn with flat offset indices, so the cost is
linear in the number of records whatever the number of groups and bins.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .data import group_sums

#: Scott's constant in h = 3.5 · S · n^(−1/(2+d)) (Scott 1979; Bowen & Liu §4.2)
SCOTT_CONSTANT = 3.5


def scott_bins(sd, n, lower, upper, *, max_bins: int | None = None) -> np.ndarray:
    """Number of bins per coordinate, shape (..., d), by Scott's rule over public bounds.

    ``sd`` (..., d) are the standard deviations, ``n`` (...) the record counts and ``lower``,
    ``upper`` (..., d) the public box; all broadcast. A group with n < 2 or a non-positive or
    undefined SD gets one bin (spec §6 item 18). ``max_bins`` caps each coordinate.
    """
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    sd = np.asarray(sd, dtype=float)
    n = np.asarray(n, dtype=float)
    d = np.broadcast_shapes(lower.shape, upper.shape, sd.shape)[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        h = SCOTT_CONSTANT * sd * np.maximum(n, 1.0)[..., None] ** (-1.0 / (2 + d))
        k = np.ceil((upper - lower) / h)
    ok = np.isfinite(k) & (k >= 1) & (sd > 0) & (n[..., None] >= 2)
    k = np.where(ok, k, 1.0)
    if max_bins is not None:
        k = np.minimum(k, max_bins)
    return k.astype(np.int64)


@dataclass(frozen=True)
class BinGrid:
    """Equal-width bins on the box [lower, upper] of each group.

    ``lower``, ``upper`` and ``bins`` broadcast to a common shape (..., G, d): leading axes
    (e.g. replicates), G groups, d coordinates; ``bins`` ≥ 1 per coordinate.
    """

    lower: np.ndarray
    upper: np.ndarray
    bins: np.ndarray

    def __post_init__(self):
        lower, upper, bins = np.broadcast_arrays(
            np.asarray(self.lower, dtype=float),
            np.asarray(self.upper, dtype=float),
            np.asarray(self.bins, dtype=np.int64),
        )
        if lower.ndim < 2:
            raise ValueError(f"a bin grid needs arrays of shape (..., G, d), got {lower.shape}")
        if np.any(bins < 1):
            raise ValueError("every coordinate needs at least one bin")
        if not np.all(upper > lower):
            raise ValueError("every box needs upper > lower")
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        object.__setattr__(self, "bins", bins)

    @property
    def n_groups(self) -> int:
        return self.bins.shape[-2]

    @property
    def total(self) -> np.ndarray:
        """Bins per group, shape (..., G)."""
        return np.prod(self.bins, axis=-1)

    @property
    def size(self) -> int:
        """Slots per group in the padded layout: the largest number of bins of any group."""
        return int(self.total.max())

    def valid(self) -> np.ndarray:
        """Boolean (..., G, size): the slot is one of the group's bins."""
        return np.arange(self.size) < self.total[..., None]

    def _per_record(self, groups: np.ndarray, lead: tuple[int, ...]):
        """The lower bound, upper bound and bins of each record's group: (..., n, d) each."""
        shape = (*lead, self.n_groups, self.bins.shape[-1])
        if self.n_groups == 1:  # one group: read-only broadcast views, no per-record gather
            full = (*groups.shape, self.bins.shape[-1])
            return tuple(
                np.broadcast_to(np.broadcast_to(a, shape), full)
                for a in (self.lower, self.upper, self.bins)
            )
        idx = groups[..., None]
        return tuple(
            np.take_along_axis(np.broadcast_to(a, shape), idx, axis=-2)
            for a in (self.lower, self.upper, self.bins)
        )

    def _groups(self, x: np.ndarray, groups) -> np.ndarray:
        if groups is None:
            return np.zeros(x.shape[:-1], dtype=np.int64)
        groups = np.asarray(groups, dtype=np.int64)
        if groups.shape != x.shape[:-1]:
            raise ValueError(f"groups have shape {groups.shape}, records need {x.shape[:-1]}")
        return groups

    def counts(self, x: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
        """Bin counts (..., G, size) of records ``x`` (..., n, d) in groups ``groups`` (..., n)
        (None: every record in group 0). Records outside their box fall in the edge bins."""
        groups = self._groups(x, groups)
        lead = x.shape[:-2]
        cell, k = self._locate(x, groups, lead)
        flat = np.zeros(groups.shape, dtype=np.int64)
        for j in range(x.shape[-1]):  # row-major flat index over the d coordinates
            flat = flat * k[..., j] + cell[..., j]
        labels = groups * self.size + flat
        out = group_sums(np.ones(labels.shape), labels, self.n_groups * self.size)
        return out.reshape(*lead, self.n_groups, self.size)

    def _locate(self, x: np.ndarray, groups: np.ndarray, lead: tuple[int, ...]):
        """Each record's bin per coordinate (..., n, d) (records outside their box in the edge
        bins) and the bins of its group (..., n, d)."""
        lo, hi, k = self._per_record(groups, lead)
        cell = np.floor((x - lo) / (hi - lo) * k).astype(np.int64)
        return np.clip(cell, 0, k - 1), k

    def locate(self, x: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
        """The bin of each record per coordinate, (..., n, d) integers in 0..bins − 1, of
        records ``x`` (..., n, d) in groups ``groups`` (None: group 0); records outside their box
        fall in the edge bins (the public discretisation of a numeric column)."""
        groups = self._groups(x, groups)
        return self._locate(x, groups, x.shape[:-2])[0]

    def uniform_within(self, cell: np.ndarray, groups: np.ndarray | None,
                       rng: np.random.Generator) -> np.ndarray:
        """Points (..., n, d) uniform within the bins ``cell`` (..., n, d) (per coordinate, as
        :meth:`locate` gives them) of groups ``groups`` (None: group 0): the decoding of a
        discretised record (Bowen & Liu §3.1.2, "a point uniform within its bin")."""
        groups = self._groups(cell, groups)
        lo, hi, k = self._per_record(groups, cell.shape[:-2])
        return _uniform_in_bins(cell, lo, hi, k, rng)

    def sample(self, probs: np.ndarray, groups: np.ndarray | None, rng: np.random.Generator,
               n: int | None = None, *, exchangeable: bool = False) -> np.ndarray:
        """Records (..., n, d): each record draws a bin of its group with probabilities
        ``probs`` (..., G, size) (zero on invalid slots; each group's row sums to 1), then a
        point uniform within that bin (Bowen & Liu §3.1.2). ``groups`` (..., n) gives each
        record's group; with ``groups=None`` all n records belong to group 0.

        ``exchangeable=True`` (only with ``groups=None``) draws the bin counts of each data set
        as one multinomial and returns the records ordered by bin: the same multiset of records
        in distribution, i.e. equal in distribution up to the order of the records, for
        callers whose analyses do not depend on record order (tested)."""
        probs = np.asarray(probs, dtype=float)
        lead = probs.shape[:-2]
        if groups is None and exchangeable and self.n_groups == 1:
            if n is None:
                raise ValueError("sample needs the number of records n when groups is None")
            return self._sample_by_counts(probs[..., 0, :], int(n), rng)
        if groups is None:
            if n is None:
                raise ValueError("sample needs the number of records n when groups is None")
            groups = np.zeros((*lead, n), dtype=np.int64)
        groups = np.asarray(groups, dtype=np.int64)
        n_rows = int(np.prod(lead, dtype=np.int64)) * self.n_groups
        row_of_record = (
            np.arange(n_rows // self.n_groups, dtype=np.int64).reshape(*lead, 1) * self.n_groups
            + groups
        )
        flat = draw_from_rows(probs.reshape(n_rows, self.size), row_of_record, rng)
        lo, hi, k = self._per_record(groups, lead)
        d = k.shape[-1]
        cell = np.empty(k.shape, dtype=np.int64)
        for j in range(d - 1, -1, -1):  # undo the row-major flat index
            cell[..., j] = flat % k[..., j]
            flat = flat // k[..., j]
        return _uniform_in_bins(cell, lo, hi, k, rng)


    def _sample_by_counts(self, probs: np.ndarray, n: int, rng) -> np.ndarray:
        """One group: bin counts ~ Multinomial(n, probs) per data set, records ordered by bin,
        each uniform within its bin. ``probs`` (..., size)."""
        lead = probs.shape[:-1]
        rows = int(np.prod(lead, dtype=np.int64))
        p = probs.reshape(rows, self.size)
        p = p / p.sum(axis=-1, keepdims=True)
        counts = rng.multinomial(n, p)
        flat = np.repeat(np.tile(np.arange(self.size), rows), counts.ravel()).reshape(*lead, n)
        shape = (*lead, 1, self.bins.shape[-1])  # per data set, broadcast over its records
        lo, hi, k = (np.broadcast_to(a, shape) for a in (self.lower, self.upper, self.bins))
        d = k.shape[-1]
        if d == 1:
            cell = flat[..., None].astype(float)
        else:
            cell = np.empty((*lead, n, d))
            for j in range(d - 1, -1, -1):  # undo the row-major flat index
                cell[..., j] = flat % k[..., j]
                flat = flat // k[..., j]
        cell += rng.random(cell.shape)
        cell *= (hi - lo) / k
        cell += lo
        return cell


def _uniform_in_bins(cell, lo, hi, k, rng) -> np.ndarray:
    """lo + (cell + U) · (hi − lo)/k with U ~ U[0, 1) per coordinate: a point uniform within
    each bin."""
    u = rng.random(k.shape)
    return lo + (cell + u) * (hi - lo) / k


def draw_from_rows(probs: np.ndarray, row_of_record: np.ndarray,
                   rng: np.random.Generator) -> np.ndarray:
    """One column per record by inverse CDF: record i draws from row ``row_of_record[i]`` of
    ``probs`` (rows, C) (non-negative; each row is normalised here; callers give no all-zero
    row). Returns column indices of the shape of ``row_of_record``.

    One searchsorted for every record: row r's cumulative probabilities are shifted to
    (r, r + 1], and a record of row r looks up r + u with u ~ U[0, 1) (one uniform per
    record, drawn as ``rng.random(row_of_record.shape)``)."""
    n_rows, size = probs.shape
    cum = np.cumsum(probs, axis=-1)
    cum /= np.where(cum[:, -1:] > 0, cum[:, -1:], 1.0)
    keys = row_of_record + rng.random(row_of_record.shape)
    shifted = (cum + np.arange(n_rows, dtype=float)[:, None]).ravel()
    flat = np.searchsorted(shifted, keys.ravel(), side="right").reshape(row_of_record.shape)
    return np.clip(flat - row_of_record * size, 0, size - 1)


def histogram_probabilities(noisy_counts: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Bin probabilities from sanitized counts (..., G, size): negative counts become 0 and
    invalid slots 0, then each group is normalised; a group whose counts are all zero becomes
    uniform over its valid bins (spec 000 §2.2 and §6 item 17). Pure post-processing."""
    valid = np.asarray(valid, dtype=bool)
    w = np.where(valid, np.maximum(np.asarray(noisy_counts, dtype=float), 0.0), 0.0)
    s = w.sum(axis=-1, keepdims=True)
    uniform = valid / valid.sum(axis=-1, keepdims=True)
    return np.where(s > 0, w / np.where(s > 0, s, 1.0), uniform)
