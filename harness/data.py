"""Batch containers: arrays with a leading replicate axis.

Two kinds: :class:`CountBatch` for categorical data held as cell counts, and
:class:`RecordBatch` for numeric (and mixed categorical × numeric) records, optionally with
per-record survey weights and strata and a :class:`harness.schema.Schema`. A study's data of one
block is an :class:`Original`: the ``train`` batch that methods release and other named parts
(``holdout``, ``test``) that evaluations, and methods that ask for them, may read.

A :class:`CountBatch` is a batch of categorical data sets summarised exactly by their K-cell
contingency tables. For categorical data and analyses that depend on the records only through
cell counts, the table is a sufficient representation: drawing the counts of n records
(multinomial) is equal in distribution to drawing the n records and tabulating them, which the
tests check against the record-level path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import ConfigError


def check_weights(key: str, weights, shape: tuple | None = None) -> np.ndarray:
    """Per-record weights as floats, or a one-line ConfigError naming ``key``: a weight that is
    missing (NaN), infinite or negative, or weights of the wrong shape."""
    w = np.asarray(weights, dtype=float)
    if shape is not None and w.shape != tuple(shape):
        raise ConfigError(f"{key}: weights of shape {w.shape}, records need {tuple(shape)}")
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        at = np.argwhere(bad)[0]
        value = w[tuple(at)]
        what = "missing" if np.isnan(value) else repr(float(value))
        raise ConfigError(f"{key}: weight of record {int(at[-1])} is {what} (weights must be "
                          f"finite and >= 0)")
    return w


@dataclass(frozen=True)
class CountBatch:
    """Cell counts of shape (..., K) (leading axes: replicates, then possibly released sets) of
    data sets with a public number of records ``n`` and cell labels ``levels``. ``n`` is one
    number, or an integer array of the batch shape when the released sets differ in size."""

    counts: np.ndarray
    n: int | np.ndarray
    levels: tuple = (0, 1)

    def __post_init__(self):
        if self.counts.shape[-1] != len(self.levels):
            raise ValueError(
                f"counts have {self.counts.shape[-1]} cells but {len(self.levels)} levels"
            )
        if np.ndim(self.n) and np.shape(self.n) != self.batch_shape:
            raise ValueError(f"n has shape {np.shape(self.n)}, the sets {self.batch_shape}")

    @property
    def n_cells(self) -> int:
        return self.counts.shape[-1]

    @property
    def n_replicates(self) -> int:
        return self.counts.shape[0]

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.counts.shape[:-1]

    def replicates(self, index: slice) -> CountBatch:
        """The batch of the replicates ``index`` (a slice of the leading axis)."""
        n = self.n[index] if np.ndim(self.n) else self.n
        return CountBatch(self.counts[index], n, self.levels)

    def first_sets(self, m: int) -> CountBatch:
        """The first ``m`` released sets of a batch with axes (R, m, K)."""
        n = self.n[:, :m] if np.ndim(self.n) else self.n
        return CountBatch(self.counts[:, :m], n, self.levels)

    def with_set_axis(self) -> CountBatch:
        """The batch as a release of one set per replicate (axes (R, 1, K))."""
        n = self.n[:, None] if np.ndim(self.n) else self.n
        return CountBatch(self.counts[:, None], n, self.levels)

    @classmethod
    def from_records(cls, records: Sequence | np.ndarray, levels: Sequence | None = None):
        """Tabulate one ordinary data set (1-D labels, a pandas Series, or a one-column frame)
        into a batch of one replicate. Unknown labels raise a ValueError naming them."""
        values = np.asarray(records).reshape(-1)
        if levels is None:
            levels = np.unique(values)
        levels = tuple(levels.tolist() if isinstance(levels, np.ndarray) else levels)
        index = {lv: k for k, lv in enumerate(levels)}
        unknown = set(values.tolist()) - set(index)
        if unknown:
            raise ValueError(f"records contain labels {sorted(unknown)!r} not in levels {levels}")
        codes = np.fromiter((index[v] for v in values.tolist()), dtype=np.int64)
        counts = np.bincount(codes, minlength=len(levels))[None, :]
        return cls(counts, int(values.size), levels)

    def to_records(self, index: tuple = (0,), rng: np.random.Generator | None = None):
        """Expand the table at ``index`` (e.g. (replicate,) or (replicate, set)) into records in
        random order (or cell order when ``rng`` is None)."""
        counts = self.counts[index]
        records = np.repeat(np.asarray(self.levels, dtype=object), counts)
        if rng is not None:
            records = records[rng.permutation(records.size)]
        try:
            return records.astype(np.asarray(self.levels).dtype)
        except (TypeError, ValueError):
            return records


@dataclass(frozen=True)
class RecordBatch:
    """Numeric records with leading batch axes (replicates, then possibly released sets).

    ``values`` has shape (..., n, p): n records of p numeric variables. Mixed data (e.g. the
    general location model: a categorical cell per record and numeric variables within cells)
    also carry ``cells``, shape (..., n), integer cell labels in 0..n_cells − 1. The number of
    records n is public. Released sets may differ in size: ``sizes`` (the batch
    shape) then gives each set's number of records, its first ``sizes[...]`` along the record
    axis, and the rest of the axis is padding: values NaN, weights 0, cells and strata −1. An
    analysis that ignores ``sizes`` therefore gets NaN for a padded set (which the combining
    rules drop, as they drop a failed fit) or, for labels, an error, never a plausible wrong
    number; :attr:`valid` is the mask of real records.
    """

    values: np.ndarray
    cells: np.ndarray | None = None
    n_cells: int = 1
    columns: tuple[str, ...] | None = None
    #: per-record weights (..., n), finite and >= 0 (survey or design weights), or None
    weights: np.ndarray | None = None
    #: per-record integer stratum labels (..., n), or None
    strata: np.ndarray | None = None
    #: the columns' types, levels and bounds (:class:`harness.schema.Schema`), or None
    schema: object = None
    #: records per data set (integer array of the batch shape) when the sets differ in size;
    #: None: every set holds all n records of the record axis
    sizes: np.ndarray | None = None

    def __post_init__(self):
        if self.values.ndim < 3:
            raise ValueError(f"values need shape (R, ..., n, p), got {self.values.shape}")
        if self.cells is not None and self.cells.shape != self.values.shape[:-1]:
            raise ValueError(
                f"cells have shape {self.cells.shape}, values {self.values.shape} need "
                f"{self.values.shape[:-1]}"
            )
        if self.columns is not None and len(self.columns) != self.values.shape[-1]:
            raise ValueError(
                f"{len(self.columns)} column names for {self.values.shape[-1]} columns"
            )
        if self.weights is not None:
            check_weights("weights", self.weights, self.values.shape[:-1])
        if self.strata is not None and self.strata.shape != self.values.shape[:-1]:
            raise ValueError(f"strata have shape {self.strata.shape}, records need "
                             f"{self.values.shape[:-1]}")
        if self.sizes is not None:
            self._check_padding()

    def _check_padding(self) -> None:
        sizes = np.asarray(self.sizes)
        if sizes.shape != self.batch_shape or not np.issubdtype(sizes.dtype, np.integer):
            raise ValueError(f"sizes must be integers of the batch shape {self.batch_shape}, got "
                             f"{sizes.dtype} {sizes.shape}")
        if sizes.size and (sizes.min() < 0 or sizes.max() > self.n):
            raise ValueError(f"sizes must lie in 0..{self.n} (the record axis)")
        pad = ~self.valid
        if not np.isnan(self.values[pad]).all():
            raise ValueError("padding records (beyond a set's size) must hold NaN values")
        for name, fill in (("weights", 0), ("cells", -1), ("strata", -1)):
            a = getattr(self, name)
            if a is not None and not (a[pad] == fill).all():
                raise ValueError(f"padding records must have {name} {fill}")

    def _map(self, take) -> RecordBatch:
        """The batch with ``take`` applied to every per-record array (values, cells, weights,
        strata)."""
        def opt(a):
            return None if a is None else take(a)

        return RecordBatch(take(self.values), opt(self.cells), self.n_cells, self.columns,
                           opt(self.weights), opt(self.strata), self.schema, opt(self.sizes))

    def replicates(self, index: slice) -> RecordBatch:
        """The batch of the replicates ``index`` (a slice of the leading axis)."""
        return self._map(lambda a: a[index])

    def first_sets(self, m: int) -> RecordBatch:
        """The first ``m`` released sets of a batch with axes (R, m, n, p)."""
        return self._map(lambda a: a[:, :m])

    @property
    def n(self) -> int:
        """The length of the record axis: every set's size, or the largest (see ``sizes``)."""
        return self.values.shape[-2]

    @property
    def set_sizes(self) -> np.ndarray:
        """Records per data set, an integer array of the batch shape."""
        if self.sizes is None:
            return np.full(self.batch_shape, self.n, dtype=np.int64)
        return np.asarray(self.sizes)

    @property
    def valid(self) -> np.ndarray:
        """Mask (..., n) of real records (all True unless the sets differ in size)."""
        return np.arange(self.n) < self.set_sizes[..., None]

    @property
    def n_columns(self) -> int:
        return self.values.shape[-1]

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.values.shape[:-2]

    @property
    def n_replicates(self) -> int:
        return self.values.shape[0]

    def cell_counts(self) -> np.ndarray:
        """Counts per cell, shape (..., n_cells); all n records when there are no cells."""
        if self.cells is None:
            return self.set_sizes[..., None].astype(np.int64)
        if self.sizes is None:
            return group_sums(np.ones(self.cells.shape), self.cells,
                              self.n_cells).astype(np.int64)
        valid = self.valid
        return group_sums(valid.astype(float), np.where(valid, self.cells, 0),
                          self.n_cells).astype(np.int64)

    def with_set_axis(self) -> RecordBatch:
        """The batch as a release of one set per replicate (axes (R, 1, ...))."""
        return self._map(lambda a: a[:, None])

    @classmethod
    def stack_sets(cls, parts: Sequence[RecordBatch]) -> RecordBatch:
        """Stack per-set releases (each with leading replicate axis) along a new set axis 1.
        Parts of different sizes are padded to the largest (see ``sizes``)."""
        first = parts[0]
        n = max(p.n for p in parts)
        ragged = any(p.n != n or p.sizes is not None for p in parts)

        def stacked(name, fill):
            if getattr(first, name) is None:
                return None
            arrays = [getattr(p, name) for p in parts]
            if ragged:
                arrays = [_pad_records(a, n, fill, name == "values") for a in arrays]
            return np.stack(arrays, axis=1)

        sizes = np.stack([p.set_sizes for p in parts], axis=1) if ragged else None
        return cls(stacked("values", np.nan), stacked("cells", -1), first.n_cells,
                   first.columns, stacked("weights", 0.0), stacked("strata", -1), first.schema,
                   sizes)

    @classmethod
    def from_records(cls, records, columns: Sequence[str] | None = None,
                     cell_column: str | None = None, n_cells: int | None = None) -> RecordBatch:
        """One ordinary data set (a 1-D or 2-D array or a DataFrame) as a batch of one replicate.
        ``cell_column`` names an integer column of cell labels 0..n_cells − 1 (mixed data)."""
        if hasattr(records, "columns"):
            frame = records
            names = [c for c in frame.columns if c != cell_column]
            values = frame[names].to_numpy(dtype=float)
            cells = None if cell_column is None else frame[cell_column].to_numpy()
            columns = tuple(str(c) for c in names) if columns is None else tuple(columns)
        else:
            values = np.asarray(records, dtype=float)
            values = values[:, None] if values.ndim == 1 else values
            cells = None
        if not np.all(np.isfinite(values)):
            raise ValueError("records contain missing or infinite values")
        if cells is not None:
            cells = np.asarray(cells)
            if not np.issubdtype(cells.dtype, np.integer):
                raise ValueError(f"cell column {cell_column!r} must hold integer labels")
            k = int(cells.max()) + 1 if n_cells is None else int(n_cells)
            if cells.min() < 0 or cells.max() >= k:
                raise ValueError(f"cell labels must lie in 0..{k - 1}")
            return cls(values[None], cells[None].astype(np.int64), k, columns)
        return cls(values[None], None, 1, None if columns is None else tuple(columns))

    def to_records(self, index: tuple = (0,), rng: np.random.Generator | None = None):
        """The data set at ``index`` (e.g. (replicate,) or (replicate, set)) as a DataFrame, rows
        in random order when ``rng`` is given (synthetic records are exchangeable)."""
        import pandas as pd

        size = int(self.set_sizes[index])
        values = self.values[index][:size]
        names = list(self.columns or [f"x{j + 1}" for j in range(values.shape[-1])])
        frame = pd.DataFrame(values, columns=names)
        if self.cells is not None:
            frame.insert(0, "cell", self.cells[index][:size])
        if rng is not None:
            frame = frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)
        return frame


def _pad_records(a: np.ndarray, n: int, fill, has_columns: bool) -> np.ndarray:
    """``a`` (records on axis −2 if ``has_columns``, else −1) padded with ``fill`` to n records."""
    axis = a.ndim - 2 if has_columns else a.ndim - 1
    width = [(0, 0)] * a.ndim
    width[axis] = (0, n - a.shape[axis])
    return np.pad(a.astype(float) if fill is np.nan else a, width, constant_values=fill)


def group_sums(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Sums of ``values`` within groups along the record axis, vectorised over leading axes.

    ``groups`` has shape (..., n) with labels 0..n_groups − 1; ``values`` has shape (..., n) or
    (..., n, p). Returns (..., n_groups) or (..., n_groups, p). One ``bincount`` over offset
    labels, so the cost is linear in the number of records whatever the number of groups.
    """
    lead = groups.shape[:-1]
    n = groups.shape[-1]
    if groups.size and groups.min() < 0:  # e.g. the padding of sets of different sizes
        raise ValueError("group labels must be >= 0 (records beyond a set's size are padding: "
                         "mask them with RecordBatch.valid)")
    n_sets = int(np.prod(lead, dtype=np.int64))
    offsets = (np.arange(n_sets, dtype=np.int64) * n_groups)[:, None]
    flat = (groups.reshape(n_sets, n).astype(np.int64) + offsets).ravel()
    if values.shape == groups.shape:
        out = np.bincount(flat, weights=values.reshape(-1), minlength=n_sets * n_groups)
        return out.reshape(*lead, n_groups)
    p = values.shape[-1]
    cols = [
        np.bincount(flat, weights=values[..., j].reshape(-1), minlength=n_sets * n_groups)
        for j in range(p)
    ]
    return np.stack(cols, axis=-1).reshape(*lead, n_groups, p)


def stack_sets(data, parts: Sequence) -> CountBatch | RecordBatch:
    """Stack per-set releases along a new set axis 1: cell-count arrays (R, K) of a categorical
    ``data`` batch, or :class:`RecordBatch` parts."""
    if isinstance(parts[0], RecordBatch):
        return RecordBatch.stack_sets(parts)
    return CountBatch(np.stack(parts, axis=1), data.n, data.levels)


@dataclass(frozen=True)
class Original:
    """The original data of one block: ``train``, the batch every method releases,
    and named ``parts`` the release does not contain (e.g. ``holdout``, ``test``), which
    evaluations read and methods that declare ``needs_parts`` receive. A study's ``generate``
    returns an Original, or a plain batch (its ``train``, with no other parts)."""

    train: CountBatch | RecordBatch
    parts: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def of(cls, data) -> Original:
        return data if isinstance(data, Original) else cls(data)

    def part(self, name: str):
        """Part ``name`` (``train`` or one of ``parts``); a missing one is a one-line error."""
        if name == "train":
            return self.train
        if name not in self.parts:
            raise ConfigError(f"parts: the original data have no part {name!r} (allowed: "
                              f"{', '.join(['train', *self.parts])})")
        return self.parts[name]
